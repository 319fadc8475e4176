"""fio's JSON read once into one typed document (fio.document), on output fio really printed
(tests/fixtures): it reads what the parser reads, every case of a run is decoded once (a failed
one and one that lost a host too), and the runner and the importer build what the checks know
in one place (analysis.reading.context)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import HERE_SETUP
from fakes import FIO_INFO, FakeExecutor, Seen
from iolab.analysis import check_context, reading
from iolab.exchange import run_builder
from iolab.exchange.importer import read
from iolab.fio import parse
from iolab.fio.document import FioDocument
from iolab.fio.outcome import Outcome, failure
from iolab.fio.parse import Status
from iolab.model import JSON, Case, FioValue, Result, Setup
from iolab.plan.load import parse_plan
from iolab.runner.campaign import plan_campaign
from iolab.runner.executing import execute
from iolab.store import Store
from iolab.targets import process

FIXTURES = Path(__file__).parent / "fixtures"
DOCUMENTS = sorted(  # one JSON document each (a --status-interval stream holds several)
    path
    for path in [*FIXTURES.glob("fio/*/*.json"), *FIXTURES.glob("import/*/*.json")]
    if '"jobs"' in path.read_text() and path.stem != "status-interval"
)
PLAN = (
    HERE_SETUP
    + """
[[workload]]
rw = ["randread", "randwrite"]
"""
)


def test_the_fixtures_hold_documents_of_every_shape() -> None:
    names = {path.stem for path in DOCUMENTS}
    assert {"randread-jsonplus", "numjobs2-nogroup", "failed-enospc", "old-2.21-json"} <= names


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: path.stem)
def test_the_document_reads_what_the_parser_reads(path: Path) -> None:
    text = path.read_text()
    data = parse.load_json(text)
    document = FioDocument.read(text)
    assert document.metrics == parse.metrics(data)
    assert document.by_host == parse.by_host(data)
    assert document.steady == parse.steady_state(data)
    assert document.histograms == parse.histogram_bins(data)
    assert document.error == parse.metrics(data).error
    assert document.timestamp_ms == data.get("timestamp_ms")
    assert "jobs" not in document.header and document.header["fio version"]


def test_a_document_without_jobs_is_no_document() -> None:
    text = (FIXTURES / "fio" / "randread-json" / "randread-json.json").read_text()
    emptied = json.dumps({**json.loads(text), "jobs": []})
    with pytest.raises(parse.ParseError, match="lists no jobs"):
        FioDocument.read(emptied)
    with pytest.raises(parse.ParseError, match="cut short"):
        FioDocument.read(text[: len(text) // 2])
    outcome = Outcome(returncode=0, json_text=emptied, stderr="", log_files=())
    assert outcome.document is None
    assert failure(outcome) == "fio exited with code 0", "no result is no success"


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every decoding of fio's JSON text from here on, listed."""
    calls: list[str] = []
    real = parse.load_json

    def load(text: str, listing: str = "jobs") -> dict[str, JSON]:
        calls.append(listing)
        return real(text, listing)

    monkeypatch.setattr(parse, "load_json", load)
    return calls


def run(tmp_path: Path, executor: object) -> list[Result]:
    the_plan = parse_plan(PLAN.format(path=tmp_path), "plan.toml")
    built = plan_campaign(the_plan, FIO_INFO, executor=executor)  # type: ignore[arg-type]
    store = Store(tmp_path / "results.db")
    run_id = store.create_run(built.plan, {}, "test", {}, process.me())
    return execute(built, store, run_id, Seen())


def test_each_case_decodes_fios_json_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = counting(monkeypatch)
    results = run(tmp_path, FakeExecutor(["ok", "enospc"]))
    assert [r.status for r in results] == ["ok", "failed"]
    assert (results[1].error or "").startswith("ENOSPC: No space left on device")
    assert results[0].metrics is not None and results[0].metrics.total_iops > 0
    assert calls == ["jobs", "jobs"], "one decoding per case, failed or not"


class LostOne(FakeExecutor):
    """Two fio servers ran the case; the second sent no result (what fio's client printed for
    the first, as the executor hands it on: its entries named by host)."""

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: Callable[[Status], None] | None,
        timeout_s: float | None,
    ) -> Outcome:
        text = (FIXTURES / "import" / "client-server" / "client-server.json").read_text()
        data = json.loads(text[text.index("{") :])
        kept = [e for e in data["client_stats"] if e["hostname"] == "127.0.0.1"]
        combined = json.dumps({"fio version": data["fio version"], "jobs": kept})
        return Outcome(1, combined, "", (), lost=(("127.0.0.2", "no result came back"),))


def test_a_case_that_lost_a_host_decodes_the_others_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executor = LostOne()
    calls = counting(monkeypatch)
    results = run(tmp_path, executor)
    assert calls == ["jobs"] * len(results) and results
    first = results[0]
    assert first.status == "failed" and "the results of 127.0.0.1 are kept" in (first.error or "")
    assert [w.host for w in first.windows] == ["127.0.0.1"]


def test_the_runner_and_the_importer_know_a_case_through_one_builder() -> None:
    options: dict[str, FioValue] = {"rw": "randread", "bs": "4k", "iodepth": 32}
    facts = (("device_count", 4.0), ("rated_read_iops", 1000.0), ("rated_iops_block", 8192.0))
    setup = Setup("raid", "/mnt", cache_bytes=0, facts=facts)
    known = reading.Known(cpus=8, repeat=3, target_state="fresh", card_cache=1 << 30)
    context = reading.context(options, setup, known)
    assert (context.devices, context.rated_iops, context.rated_block) == (4, (1000.0, 0.0), 8192)
    assert context.cache_bytes == 1 << 30, "the card's cache, where the plan declares none"
    assert (context.cpus, context.repeat, context.target_state) == (8, 3, "fresh")
    assert context.metrics == reading.NOTHING_YET and context.rated_random
    declared = reading.context(options, Setup("raid", "/mnt", cache_bytes=1 << 20), known)
    assert declared.cache_bytes == 1 << 20 and declared.devices == 0
    with pytest.raises(TypeError):
        check_context.Context(options, reading.NOTHING_YET)  # type: ignore[call-arg]


def test_the_same_fio_output_reads_alike_run_here_or_imported(tmp_path: Path) -> None:
    """What the fake executor replays as a case, and the same file through `iolab import`'s
    reader: one reading, the same figures and windows."""
    ran = run(tmp_path, FakeExecutor())[0]
    batch = read([str(FIXTURES / "fio" / "randread-jsonplus")], "here", {})
    (job,) = batch.jobs
    imported = run_builder.result(job, Case(ran.case.setup, ran.case.workload, 1))
    assert ran.status == imported.status == "ok"
    assert ran.metrics == imported.metrics and ran.windows == imported.windows
    assert ran.raw_json == imported.raw_json, "the document kept as fio printed it"
