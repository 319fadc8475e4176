"""Hostile values, round 3 (issue 29, findings 8, 9 and 11).

The table: each row is one invocation iolab must refuse, asserted as every adversarial table
asserts it (test_bad_input's helpers): exit 1, exactly one line on stderr starting
"iolab: error: " and holding the row's words, no traceback, nothing created, changed or left
in the scratch folder (names, sizes and sha256 of every file, the databases included) or in
the temporary folder, and the value of SECRET_TOKEN, set in iolab's environment, nowhere in
what it printed. The rows:

- numbers in every spelling a person may type by mistake or on purpose (underscores, which
  Python's int() and float() read, "5_0" as 50; other scripts' digits and fullwidth ones,
  which int() and the regular expressions' \\d read too; superscripts; exponents; inf, nan;
  hex), in flags, plan fields, job files and `iolab check`'s rules: one strict parser
  (iolab.units.whole and number) reads them all;
- latency targets outside what a storage stack can mean (below 1 µs, above an hour);
- '$' in a value of every class of fio option, in a plan, its [defaults], a sweep, a job file
  and a job file a plan names: fio would replace ${NAME} with an environment variable (then
  stored with the results and exported) and $pagesize, $mb_memory, $ncpus with the host's;
- a run judged against itself (`iolab check 2 --baseline 2`), and compared with itself;
- an iolab export whose figures disagree with one another (IOPS 1000 times what its bytes
  over its runtime give), refused on import.

Then the tests that need more than one invocation: a real fio run with SECRET_TOKEN set, whose
database, exports (JSON, CSV, the fio-plot tree) and report hold no byte of it. (Standard
streams closed: test_shell.py; concurrent reports into one folder: test_outputs.py.)
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import (
    IOLAB,
    Outcome,
    Word,
    invoke,
    iolab_here,
    listing,
    problems_with_output,
    run_iolab,
)
from iolab import units
from iolab.analysis import objective
from iolab.cli import main
from iolab.errors import FioError
from iolab.fio.hosts import Cluster
from test_bad_input import (
    BS,
    DEFAULTS,
    RUNTIME,
    SIZE,
    TAIL,
    TOP,
    WORKLOAD,
    FileSpec,
    Spec,
    at,
    fill,
    leftovers,
    make_file,
    plan,
)

GOLDEN = Path(__file__).parent / "golden" / "store.db"  # two runs of one plan, 18 cases each
SECRET = "hunter2-SECRET-VALUE"  # SECRET_TOKEN's value while the rows and runs go
DOLLAR = "'$', which fio expands"
WHOLE = "not a whole number"
NUMBER = "not a number"
SLO_BOUNDS = "from 1 µs to 1 hour"
NOT_SIZE = "not a size"

# ---------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    args: tuple[str, ...]
    words: tuple[Word, ...]
    files: tuple[tuple[str, FileSpec], ...]


def row(
    case_id: str,
    args: str | Sequence[str],
    words: Sequence[Word],
    files: Mapping[str, FileSpec] | None = None,
) -> Any:
    made = Row(
        args=tuple(args.split()) if isinstance(args, str) else tuple(args),
        words=tuple(words),
        files=tuple((files or {}).items()),
    )
    return pytest.param(made, id=case_id)


STORE = Spec("golden")  # a copy of tests/golden/store.db


def tampered(change: str) -> Spec:
    """An export of the golden store's run 2 (`iolab export`), its first window changed."""
    return Spec("tampered", change)


def in_plan(case_id: str, words: Sequence[Word], command: str = "show", **slots: str) -> Any:
    """`iolab show plan.toml` (or run) with test_bad_input's template, slots filled."""
    return row(case_id, f"{command} plan.toml", words, {"plan.toml": plan(**slots)})


def in_job(case_id: str, words: Sequence[Word], text: str) -> Any:
    """`iolab show job.fio`: the job file as a plan."""
    return row(case_id, "show job.fio", ["job.fio", *words], {"job.fio": text})


def in_named_job(case_id: str, words: Sequence[Word], text: str) -> Any:
    """A plan whose second [[workload]] names mine.fio, holding `text`."""
    files = {"plan.toml": plan(tail='[[workload]]\njobfile = "mine.fio"\n'), "mine.fio": text}
    return row(case_id, "show plan.toml", ["mine.fio", *words], files)


def flag(case_id: str, args: str | Sequence[str], words: Sequence[Word]) -> Any:
    return row(case_id, args, words, {"g.db": STORE})


FIGURES = {"read-iops": "1000", "write-iops": "500", "read-mbps": "100", "write-mbps": "100"}


def figure(name: str, value: str) -> Any:
    """`iolab advise` with one device's four figures, `name` given `value` instead."""
    args = [p for key, text in {**FIGURES, name: value}.items() for p in (f"--{key}", text)]
    return flag(f"advise-{name}-{value}", ["advise", *args], [f"--{name}", "positive figure"])


PLAN_NUMBERS = [
    in_plan("plan-size-arabic-indic", [at(SIZE), NOT_SIZE], size='"٥m"'),
    in_plan("plan-size-fullwidth", [at(SIZE), NOT_SIZE], size='"５m"'),
    in_plan("plan-bs-fullwidth", [at(BS), NOT_SIZE], bs='"４k"'),
    in_plan("plan-bs-underscore", [at(BS), NOT_SIZE], bs='"4_096"'),
    in_plan("plan-runtime-devanagari", [at(RUNTIME), "runtime"], runtime='"५"'),
    in_plan("plan-runtime-superscript", [at(RUNTIME), "runtime"], runtime='"²"'),
    in_plan("plan-ramp-exponent", [at(WORKLOAD), "ramp_time"], workload='ramp_time = "1e1"'),
    in_plan(
        "plan-check-underscore", [at(TAIL + 1), "iops", "percentage"], tail='[check]\niops = "5_0"'
    ),
    in_plan(
        "plan-check-arabic-indic", [at(TAIL + 1), "bw", "percentage"], tail='[check]\nbw = "٥%"'
    ),
    in_plan(
        "plan-check-exponent", [at(TAIL + 1), "p99", "percentage"], tail='[check]\np99 = "1e2"'
    ),
    in_plan(
        "plan-check-fullwidth-percent",
        [at(TAIL + 1), "iops", "percentage"],
        tail='[check]\niops = "1_0%"',
    ),
    in_plan(
        "plan-peak-margin-underscore",
        [at(WORKLOAD + 1), "peak_margin"],
        workload='method = "peak"\npeak_margin = "3_0%"',
    ),
    in_plan(
        "plan-slo-exponent",
        [at(WORKLOAD + 1), "slo", SLO_BOUNDS],
        workload='method = "curve"\nslo = "p99<=1e-300s"',
    ),
    in_plan(
        "plan-slo-below-a-microsecond",
        [at(WORKLOAD + 1), "slo", SLO_BOUNDS],
        workload='method = "curve"\nslo = "p99<=500ns"',
    ),
    in_plan(
        "plan-slo-above-an-hour",
        [at(WORKLOAD + 1), "slo", SLO_BOUNDS],
        workload='method = "curve"\nslo = "p99.9<=3601s"',
    ),
    in_plan(
        "plan-slo-fullwidth",
        [at(WORKLOAD + 1), "slo", SLO_BOUNDS],
        workload='method = "curve"\nslo = "p99<=２ms"',
    ),
    in_plan(
        "plan-repeat-target-arabic-indic",
        ["repeat_target", "share"],
        top='repeat = "auto"\nrepeat_target = "٢%"',
    ),
    in_plan(
        "plan-steady-underscore",
        ["data_excursion", "share"],
        tail='[steady]\ndata_excursion = "2_0%"',
    ),
    in_plan("plan-hosts-port-fullwidth", [at(TOP), "port"], top='hosts = ["127.0.0.1:８７６５"]'),
    in_job("job-iodepth-superscript", [":3:", "iodepth"], "[a]\nrw=read\niodepth=²\n"),
    in_job("job-size-arabic-indic", [":3:", "size", NOT_SIZE], "[a]\nrw=read\nsize=٥m\n"),
    in_job("job-bs-fullwidth", [":3:", "bs", NOT_SIZE], "[a]\nrw=read\nbs=４k\n"),
    in_job("job-numjobs-thai", [":3:", "numjobs"], "[a]\nrw=read\nnumjobs=๔\n"),
]

# '$' in a value of every class of fio option iolab passes on (fio.options): shape, timing,
# buffers, randomness, placement, reporting, an engine's; and in every place a value comes.
EXPANSIONS = [
    in_plan(
        "dollar-reporting-description",
        [at(WORKLOAD), "description", DOLLAR],
        workload='description = "${SECRET_TOKEN}"',
    ),
    in_plan(
        "dollar-reporting-description-run",
        [at(WORKLOAD), "description", DOLLAR],
        command="run",
        workload='description = "${SECRET_TOKEN}"',
    ),
    in_plan(
        "dollar-shape-offset", [at(WORKLOAD), "offset", DOLLAR], workload='offset = "$mb_memory"'
    ),
    in_plan("dollar-shape-size", [at(SIZE), "size", DOLLAR], size='"$mb_memory"'),
    in_plan("dollar-shape-bs", [at(BS), "bs", DOLLAR], bs='"$pagesize"'),
    in_plan(
        "dollar-shape-iodepth", [at(WORKLOAD), "iodepth", DOLLAR], workload='iodepth = "$ncpus"'
    ),
    in_plan(
        "dollar-timing-thinktime",
        [at(WORKLOAD), "thinktime", DOLLAR],
        workload='thinktime = "${SECRET_TOKEN}"',
    ),
    in_plan(
        "dollar-buffers-pattern",
        [at(WORKLOAD), "buffer_pattern", DOLLAR],
        workload='buffer_pattern = "${SECRET_TOKEN}"',
    ),
    in_plan(
        "dollar-random-seed", [at(WORKLOAD), "randseed", DOLLAR], workload='randseed = "$ncpus"'
    ),
    in_plan(
        "dollar-placement-cpus",
        [at(WORKLOAD), "cpus_allowed", DOLLAR],
        workload='cpus_allowed = "0-$ncpus"',
    ),
    in_plan(
        "dollar-engine-option",
        [at(WORKLOAD + 1), "sqthread_poll_cpu", DOLLAR],
        workload='ioengine = "io_uring"\nsqthread_poll_cpu = "$ncpus"',
    ),
    in_plan(
        "dollar-in-a-sweep",
        [at(WORKLOAD), "rate_iops", DOLLAR],
        workload='rate_iops = [100, "${SECRET_TOKEN}"]',
    ),
    in_plan(
        "dollar-in-defaults",
        [at(DEFAULTS), "description", DOLLAR],
        defaults='description = "${SECRET_TOKEN}"',
    ),
    in_job(
        "job-dollar-description",
        [":3:", "description", DOLLAR],
        "[a]\nrw=read\ndescription=${SECRET_TOKEN}\n",
    ),
    in_job("job-dollar-global", [":2:", "offset", DOLLAR], "[global]\noffset=$mb_memory\n[a]\n"),
    in_job(
        "job-dollar-filename",
        [":3:", "filename", DOLLAR],
        "[a]\nrw=read\nfilename=/tmp/${SECRET_TOKEN}\n",
    ),
    in_job("job-dollar-directory", [":2:", "directory", DOLLAR], "[a]\ndirectory=/tmp/$ncpus\n"),
    in_named_job(
        "named-job-dollar", [":2:", "description", DOLLAR], "[a]\ndescription=${SECRET_TOKEN}\n"
    ),
]

FLAGS = [
    flag("run-repeat-underscore", "run --preset quick --repeat 1_0", ["--repeat", WHOLE]),
    flag("run-repeat-fullwidth", "run --preset quick --repeat ３", ["--repeat", WHOLE]),
    flag("run-max-cases-arabic-indic", "run --preset quick --max-cases ٥", ["--max-cases", WHOLE]),
    flag("run-runtime-arabic-indic", "run --preset quick --runtime ٣", ["--runtime"]),
    flag("run-runtime-exponent", "run --preset quick --runtime 1e1", ["--runtime"]),
    flag("run-size-fullwidth", "run --preset quick --size ５m", ["--size", NOT_SIZE]),
    flag("run-resume-underscore", "run --resume 1_0 --db g.db", ["--resume", WHOLE]),
    flag("show-runtime-superscript", "show --preset quick --runtime ²", ["--runtime"]),
    flag("peak-numjobs-underscore", "peak --numjobs 1_0-1_0", ["--numjobs", "LOW-HIGH"]),
    flag("peak-iodepth-devanagari", "peak --iodepth १-४", ["--iodepth", "LOW-HIGH"]),
    flag("peak-runtime-superscript", "peak --runtime ²", ["--runtime"]),
    flag("peak-slo-exponent", ["peak", "--slo", "p99<=1e-300s"], ["--slo", SLO_BOUNDS]),
    flag("peak-slo-below-a-microsecond", ["peak", "--slo", "p50<=0.5us"], ["--slo", SLO_BOUNDS]),
    flag("peak-slo-above-an-hour", ["peak", "--slo", "p99<=3601s"], ["--slo", SLO_BOUNDS]),
    flag("peak-slo-underscore", ["peak", "--slo", "p99<=1_0ms"], ["--slo", SLO_BOUNDS]),
    figure("read-iops", "1_000"),
    figure("write-iops", "٥٠٠"),
    figure("read-mbps", "1e2"),
    figure("write-mbps", "0x10"),
    flag(
        "advise-devices-fullwidth",
        ["advise", "--devices", "４", *(p for k, v in FIGURES.items() for p in (f"--{k}", v))],
        ["--devices", WHOLE],
    ),
    flag(
        "advise-workload-underscore",
        [
            "advise",
            "--workload",
            "randrw:4k:3_2:7_0",
            *(p for k, v in FIGURES.items() for p in (f"--{k}", v)),
        ],
        ["--workload", WHOLE],
    ),
    flag("advise-run-underscore", "advise 1_0 --db g.db", ["RUN", WHOLE]),
    flag("import-devices-underscore", "import x.json --devices 1_6 --db new.db", ["--devices"]),
    flag(
        "import-rated-iops-arabic-indic",
        "import x.json --rated-iops ٥٠٠٠ --db new.db",
        ["--rated-iops"],
    ),
    flag(
        "import-rated-mbps-exponent",
        "import x.json --rated-mbps 5e2,4e2 --db new.db",
        ["--rated-mbps"],
    ),
    flag("import-cache-fullwidth", "import x.json --cache ５１２M --db new.db", ["--cache"]),
    flag("check-rule-underscore", "check --rule iops=5_0 --db g.db", ["--rule", "iops=5_0"]),
    flag("check-rule-arabic-indic", "check --rule iops=٥ --db g.db", ["--rule"]),
    flag("check-rule-fullwidth", "check --rule bw=５% --db g.db", ["--rule"]),
    flag("check-rule-underscore-percent", "check --rule p99=1_0% --db g.db", ["--rule"]),
    flag("check-rule-exponent", "check --rule p99=1e2 --db g.db", ["--rule"]),
    flag("check-rule-inf", "check --rule iops=inf --db g.db", ["--rule"]),
    flag("check-rule-hex", "check --rule iops=0x5 --db g.db", ["--rule"]),
    flag("check-window-underscore", "check --window 1_0 --db g.db", ["--window", WHOLE]),
    flag("check-window-fullwidth", "check --window ８ --db g.db", ["--window", WHOLE]),
    flag("check-baseline-fullwidth", "check --baseline ２ --db g.db", ["--baseline", WHOLE]),
    flag("check-run-superscript", "check ² --db g.db", ["RUN", WHOLE]),
    flag("report-run-arabic-indic", "report ١ --db g.db", ["RUN", WHOLE]),
    flag("compare-run-underscore", "compare 1 0_2 --db g.db", ["RUN", WHOLE]),
    flag("export-run-plus", "export +1 --db g.db", ["RUN", WHOLE]),
]

ITSELF = "itself"
SELF = [
    flag("check-run-against-itself", "check 2 --baseline 2 --db g.db", ["run 2", ITSELF]),
    flag("check-latest-against-itself", "check --baseline 2 --db g.db", ["run 2", ITSELF]),
    flag("check-first-against-itself", "check 1 --baseline 1 --db g.db", ["run 1", ITSELF]),
    flag("compare-run-with-itself", "compare 2 2 --db g.db", ["run 2", "twice"]),
]

APART = "times apart"
IMPORTS = [
    row(
        "import-iops-1000x",
        "import e.json --db new.db",
        ["e.json", "iops", APART],
        {"e.json": tampered("iops")},
    ),
    row(
        "import-bw-and-iops-1000x",
        "import e.json --db new.db",
        ["io_bytes", APART],
        {"e.json": tampered("bw")},
    ),
    row(
        "import-io-bytes-shrunk",
        "import e.json --db new.db",
        ["io_bytes", APART],
        {"e.json": tampered("io_bytes")},
    ),
    row(
        "import-runtime-1000x",
        "import e.json --db new.db",
        ["runtime_ms", APART],
        {"e.json": tampered("runtime")},
    ),
]

ROWS = [*PLAN_NUMBERS, *EXPANSIONS, *FLAGS, *SELF, *IMPORTS]


def test_the_table_is_big_and_its_ids_are_unique() -> None:
    ids = [param.id for param in ROWS]
    assert len(ids) >= 40
    assert len(set(ids)) == len(ids), [i for i in ids if ids.count(i) > 1]


# ---------------------------------------------------------------- the table's test

TAMPER: dict[str, Callable[[dict[str, Any]], None]] = {
    "iops": lambda m: m.update(iops=m["iops"] * 1000),
    "bw": lambda m: m.update(iops=m["iops"] * 1000, bw_bytes=m["bw_bytes"] * 1000),
    "io_bytes": lambda m: m.update(io_bytes=m["io_bytes"] // 1000),
    "runtime": lambda m: m.update(runtime_ms=m["runtime_ms"] * 1000),
}


@pytest.fixture(scope="module")
def export_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The golden store's run 2 as `iolab export` writes it."""
    folder = tmp_path_factory.mktemp("export")
    shutil.copyfile(GOLDEN, folder / "g.db")
    done = iolab_here("export", "2", "--db", "g.db", "-o", "e.json", cwd=folder, check=True)
    assert done.returncode == 0
    return (folder / "e.json").read_text()


def make(
    path: Path,
    spec: FileSpec,
    values: Mapping[str, str],
    export: str | None,
    migrated: Callable[[Path, Path], None],
) -> None:
    if spec == STORE:
        migrated(GOLDEN, path)  # brought to this iolab's schema, as any command would first
    elif isinstance(spec, Spec) and spec.kind == "tampered":
        assert export is not None
        doc = json.loads(export)
        window = next(m for m in doc["metrics"] if m["iops"] > 0 and m["runtime_ms"] > 0)
        TAMPER[str(spec.arg)](window)
        path.write_text(json.dumps(doc))
    else:
        make_file(path, spec, values, None)


@pytest.mark.parametrize("bad", ROWS)
def test_hostile_values_are_one_line_exit_1_and_change_nothing(
    bad: Row,
    request: pytest.FixtureRequest,
    workdir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    migrated: Callable[[Path, Path], None],
) -> None:
    values = {"@DIR@": str(workdir)}
    tampers = any(isinstance(s, Spec) and s.kind == "tampered" for _, s in bad.files)
    export = request.getfixturevalue("export_text") if tampers else None
    for name, spec in bad.files:
        make(workdir / name, spec, values, export, migrated)
    args = [fill(arg, values) for arg in bad.args]
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    before = listing(workdir)
    case_dirs_before = set(map(str, Path("/tmp").glob("iolab-case-*")))
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("SECRET_TOKEN", SECRET)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    outcome = invoke(args, limit_s=60)
    problems = problems_with_output(outcome, bad.words)
    if SECRET in outcome.stdout + outcome.stderr:
        problems.append("it printed SECRET_TOKEN's value")
    problems += leftovers(workdir, before, tmp, case_dirs_before)
    assert not problems, "\n".join([f"iolab {' '.join(args)[:300]}", *problems])


# ---------------------------------------------------------------- what is not refused


@pytest.mark.parametrize(
    ("text", "whole", "number"),
    [("12", 12, 12.0), (" 7 ", 7, 7.0), ("0", 0, 0.0), ("2.5", None, 2.5), (".5", None, 0.5)],
)
def test_plain_ascii_numbers_still_read(text: str, whole: int | None, number: float) -> None:
    if whole is None:
        with pytest.raises(ValueError, match=WHOLE):
            units.whole(text)
    else:
        assert units.whole(text) == whole
    assert units.number(text) == number


def test_a_latency_target_at_its_bounds_is_one() -> None:
    assert objective.slo("p99<=1us") == ("p99", 1e3)
    assert objective.slo("p99.9<=3600s") == ("p99.9", 3600e9)
    assert objective.slo("p50 <= 2.5 ms") == ("p50", 2.5e6)


# ---------------------------------------------------------------- no environment in results

SECRET_PLAN = """name = "secret ${{SECRET_TOKEN}}"
description = "the plan's own words, which fio never reads: ${{SECRET_TOKEN}}"
[defaults]
runtime = 1
size = "4m"
[[setup]]
name = "here ${{SECRET_TOKEN}}"
path = "{target}"
[[workload]]
name = "rr ${{SECRET_TOKEN}} $ncpus"
rw = "randread"
bs = "4k"
{extra}
"""
# One option of every class iolab passes on to fio, each given an expansion.
EVERY_CLASS = {
    "reporting": 'description = "${SECRET_TOKEN}"',
    "shape": 'offset = "${SECRET_TOKEN}"',
    "timing": 'thinktime = "${SECRET_TOKEN}"',
    "buffers": 'verify_pattern = "${SECRET_TOKEN}"',
    "random": 'randseed = "${SECRET_TOKEN}"',
    "placement": 'cpus_allowed = "${SECRET_TOKEN}"',
    "engine": 'ioengine = "io_uring"\nnowait = "${SECRET_TOKEN}"',
    "keyword": 'offset_increment = "$mb_memory"',
}
SECRET_JOB = "[global]\ndescription=${SECRET_TOKEN}\n[rr]\nrw=randread\nsize=4m\nruntime=1\n"


def _holds_secret(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


@pytest.mark.fio
@pytest.mark.slow
def test_no_environment_variable_reaches_the_database_or_its_exports(workdir: Path) -> None:
    """SECRET_TOKEN set in iolab's environment; a plan that names it in every place a name
    or value goes runs for real (names are iolab's: fio never expands them), and a plan or
    job file that hands fio '${SECRET_TOKEN}' in any option class is refused before fio
    runs. Then no byte of its value is in the database, its exports or a report."""
    env = {**os.environ, "SECRET_TOKEN": SECRET}
    target = workdir / "target"
    target.mkdir()
    out = workdir / "out"
    out.mkdir()

    def iolab(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*IOLAB, *args],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    (workdir / "plan.toml").write_text(SECRET_PLAN.format(target=target, extra=""))
    done = iolab("run", "plan.toml", "--db", "s.db")
    assert done.returncode == 0, done.stderr
    for label, extra in EVERY_CLASS.items():
        (workdir / f"{label}.toml").write_text(SECRET_PLAN.format(target=target, extra=extra))
        refused = iolab("run", f"{label}.toml", "--db", "s.db")
        assert refused.returncode == 1, (label, refused.stderr)
        assert refused.stderr.startswith("iolab: error: ") and DOLLAR in refused.stderr, label
    (workdir / "job.fio").write_text(SECRET_JOB)
    refused = iolab("run", "job.fio", "--target", str(target), "--db", "s.db")
    assert refused.returncode == 1 and DOLLAR in refused.stderr, refused.stderr
    for args in (
        ("export", "-o", "out/run.json"),
        ("export", "--format", "csv", "-o", "out/run.csv"),
        ("export", "--format", "fio-plot", "-o", "out/tree"),
        ("report", "--format", "markdown", "-o", "out/report.md"),
    ):
        written = iolab(*args, "--db", "s.db")
        assert written.returncode == 0, written.stderr
    assert len(list((out / "tree").rglob("*.json"))) == 1
    with sqlite3.connect(workdir / "s.db") as con:
        (runs,) = con.execute("SELECT count(*) FROM runs").fetchone()
        raw = "".join(r[0] or "" for r in con.execute("SELECT raw_json FROM cases"))
    con.close()
    assert runs == 1, "the refused plans stored nothing"
    assert raw.count('"jobname"') == 1, "fio's own JSON is kept"
    assert "${SECRET_TOKEN}" in (out / "run.json").read_text(), "names kept as given"
    assert _holds_secret(workdir) == [], "SECRET_TOKEN's value reached a file"


@pytest.fixture
def golden_copy(workdir: Path, migrated: Callable[[Path, Path], None]) -> Path:
    make(workdir / "g.db", STORE, {}, None, migrated)
    return workdir / "g.db"


def test_an_export_whose_figures_agree_imports(export_text: str, workdir: Path) -> None:
    """The consistency check passes what iolab exported, untouched."""
    (workdir / "e.json").write_text(export_text)
    done = iolab_here("import", "e.json", "--db", "new.db", cwd=workdir)
    assert done.returncode == 0, done.stderr


def test_a_run_is_still_judged_against_an_earlier_one(golden_copy: Path) -> None:
    """The refusal is of a run against itself only: run 2 against run 1 is judged."""
    result = CliRunner().invoke(main, ["check", "2", "--baseline", "1", "--db", str(golden_copy)])
    assert result.exit_code in (0, 4), result.output
    assert "check: run 2" in result.stdout and ITSELF not in result.output


@pytest.mark.parametrize("own", ["/data/${SECRET_TOKEN}/iolab.testfile", "/data/$ncpus/f"])
def test_a_hosts_own_path_that_fio_would_expand_never_reaches_its_job(own: str) -> None:
    """A set-up's path on one host replaces the file in that host's job text after the job
    file was written and checked: it is checked for '$' there too, before fio gets it."""
    cluster = Cluster("fio", ("10.0.0.2",), 5.0, (("/data/iolab.testfile", "10.0.0.2", own),))
    job = "[a]\nfilename=/data/iolab.testfile\nrw=read\n"
    with pytest.raises(FioError, match=r"host 10\.0\.0\.2: .*'\$', which fio expands"):
        cluster.job_for(f"\n{job}", "10.0.0.2")
    assert cluster.job_for(f"\n{job}", "10.0.0.3") == f"\n{job}", "other hosts: as written"


@pytest.mark.fio
def test_a_target_path_fio_would_expand_is_refused_before_anything_is_made(
    workdir: Path,
) -> None:
    """`--target` names the folder whose test file goes into the job file as `filename`: a
    '$' in it (here a real folder named so) would have fio write elsewhere; it is refused
    where the job file is written, before the database or the test file is made."""
    folder = workdir / "data$ncpus"
    folder.mkdir()
    before = listing(workdir)
    done = run_iolab(
        "run",
        "--preset",
        "quick",
        "--target",
        str(folder),
        "--runtime",
        "1",
        "--size",
        "4m",
        "--db",
        "t.db",
        cwd=workdir,
    )
    assert problems_with_output(_outcome(done), ["filename", DOLLAR]) == []
    assert listing(workdir) == before


def _outcome(done: subprocess.CompletedProcess[str]) -> Outcome:
    return Outcome(done.returncode, done.stdout, done.stderr, 0.0)
