"""`iolab check --junit FILE`: the gate's verdicts as JUnit XML, the format GitHub, GitLab and
Jenkins show without plugins (one <testsuite> in <testsuites>; tests/fixtures/junit.xsd is the
schema the tests hold it to). A test case per series (classname: set-up · workload; name: the
metric): a regression is a <failure> with the change, the bound and the runs judged against;
a series not judged is <skipped> with the reason; a pass is an empty test case."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from iolab.analysis.gate_verdicts import Checked, SeriesVerdict
from iolab.names import one_line, runs_said
from iolab.report.text.history_text import verdict


def junit(checked: Checked, summary: str) -> bytes:
    """The XML document, UTF-8, with its declaration."""
    verdicts = checked.verdicts
    name = f"iolab check: plan {one_line(checked.plan_name)!r}, run {checked.run}"
    counts = {
        "tests": str(len(verdicts)),
        "failures": str(sum(v.regression for v in verdicts)),
        "errors": "0",
        "skipped": str(sum(not v.judged for v in verdicts)),
    }
    top = ET.Element("testsuites", {"name": "iolab check", **counts})
    suite = ET.SubElement(top, "testsuite", {"name": name, **counts})
    properties = ET.SubElement(suite, "properties")
    for key, value in (
        ("run", str(checked.run)),
        ("plan", one_line(checked.plan_name)),
        ("outcome", checked.outcome),
        ("window", str(checked.how.window)),
        ("beside other load", checked.beside),
    ):
        if value:
            ET.SubElement(properties, "property", {"name": key, "value": value})
    for v in verdicts:
        _case(suite, v)
    ET.SubElement(suite, "system-out").text = summary
    ET.indent(top)
    document: bytes = ET.tostring(top, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def _case(suite: ET.Element, v: SeriesVerdict) -> None:
    s = v.series
    case = ET.SubElement(
        suite,
        "testcase",
        {"classname": f"{one_line(s.setup)} · {one_line(s.workload)}", "name": s.metric},
    )
    line = verdict(v)
    if v.regression:
        failure = ET.SubElement(case, "failure", {"message": line, "type": "regression"})
        failure.text = _details(v)
    elif not v.judged:
        ET.SubElement(case, "skipped", {"message": line})


def _details(v: SeriesVerdict) -> str:
    """A failure's body: the change, the bound, the history judged against."""
    unit = v.series.unit
    lines = [
        f"change: {v.change_pct:+.1f}% (allowed {v.allowed_pct:g}% worse)",
        f"level judged against: {v.level:.6g} {unit}",
    ]
    if v.latest is not None:
        lines.append(f"this run: {v.latest.mean:.6g} {unit} (n={len(v.latest.values)})")
    if v.bound is not None:
        lines.append(f"bound: {v.bound:.6g} {unit}")
    if v.detectable_pct is not None:
        lines.append(f"detectable: {v.worse_word} beyond {v.detectable_pct:.1f}%")
    if v.against:
        lines.append(f"history: {runs_said(v.against)}")
    return "\n".join(lines)
