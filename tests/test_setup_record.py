"""One typed record per set-up (model.setup_record): the runner updates it as the set-up
goes and the store saves and loads it whole; databases written before it was typed read the
same. The runner here is driven by the fake executor (output fio really printed)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from fakes import FIO_INFO, FakeExecutor, Seen
from iolab.errors import JSONShapeError, StoreError
from iolab.model import JSON, PeakRecord, SteadyRecord, codec
from iolab.model.drive import CacheSetting
from iolab.model.facts import SetupFacts
from iolab.model.setup_record import Fill, SetupRecord
from iolab.plan.load import parse_plan
from iolab.runner.campaign import plan_campaign
from iolab.runner.executing import execute
from iolab.store import Store
from iolab.targets import drive_health, process

TESTS = Path(__file__).parent
STORES = [TESTS / "fixtures" / "store" / "v1.db", *sorted((TESTS / "golden").glob("*.db"))]
PLAN = """
[defaults]
runtime = 1
size = "8m"

[[setup]]
name = "here"
precondition = "both"
path = "{path}"

[[workload]]
rw = ["randread", "randwrite"]

[steady]
track = "4k randwrite"
window = 2
rounds = 3
"""


@pytest.mark.usefixtures("no_drives")  # the host's drives would add theirs
def test_the_runner_saves_one_record_per_set_up_whole(tmp_path: Path) -> None:
    the_plan = parse_plan(PLAN.format(path=tmp_path), "plan.toml")
    built = plan_campaign(the_plan, FIO_INFO, executor=FakeExecutor())
    store = Store(tmp_path / "results.db")
    run_id = store.create_run(built.plan, {}, "test", {}, process.me())
    execute(built, store, run_id, Seen())
    record = store.setup_records(run_id)["here"]
    assert record.facts.target is not None
    assert record.facts.target.path == str(tmp_path / "iolab.testfile")
    assert [fill.job for fill in record.precondition] == [
        "precondition-sequential",
        "precondition-random",
    ]
    assert all(fill.written_bytes > 0 and fill.seconds > 0 for fill in record.precondition)
    assert record.steady is not None and record.steady.track == "4k randwrite"
    assert record.controller is None and not record.searches
    ((_, _, stored),) = store.setups(run_id)
    assert codec.to_object(record) == stored, "saved whole, as the JSON it always was"
    read = ["drives"] if drive_health.installed() else []  # the disk under tmp_path
    assert list(stored) == ["target", "precondition", "steady_rounds", *read]


@pytest.mark.parametrize("path", STORES, ids=lambda path: path.name)
def test_a_database_written_before_the_record_reads_the_same(path: Path, tmp_path: Path) -> None:
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    store = Store(copy)
    runs = store.runs()
    assert runs
    for run in runs:
        records = store.setup_records(run.id)
        for name, _, stored in store.setups(run.id):
            record = records[name]
            assert record.facts == codec.from_json(SetupFacts, stored)
            steady = stored.get("steady_rounds")
            assert record.steady == (steady and codec.from_json(SteadyRecord, steady))
            assert record.facts.target is not None, f"{path.name}: {name} has its target"


def test_every_part_comes_back_as_it_was_saved() -> None:
    steady = SteadyRecord(
        "randwrite", "iops", (9.0, 10.0, 10.0), (2, 3), 10.0, 0.05, 0.2, 0.0, 0.1, True, 3
    )
    search = {
        "method": "peak",
        "metric": "iops",
        "bounds": {"numjobs": [1, 4], "iodepth": [1, 32]},
        "grid": 12,
        "margin": 0.05,
        "steps": ["qd1"],
        "points": [{"numjobs": 1, "iodepth": 1, "workload": "4k randread qd1", "value": 1000.0}],
        "winner": None,
    }
    peak = codec.from_json(PeakRecord, search)
    record = SetupRecord(
        SetupFacts(),
        {"tool": "storcli", "vd": "/c0/v0", "write_cache": "WB"},
        (Fill("precondition-sequential", 16 << 20, 0.5, 32e6),),
        steady,
        {"4k randread": peak},
        drive_cache=(
            CacheSetting(
                "/dev/nvme0n1",
                "nvme-cli feature 06h (volatile write cache) of /dev/nvme0n1",
                "write back",
                "write-through",
                "write through",
            ),
        ),
    )
    text = json.dumps(codec.to_object(record))
    assert codec.from_json(SetupRecord, json.loads(text)) == record
    assert json.loads(text)["peak_search"]["4k randread"] == search
    assert json.loads(text)["drive_cache"][0]["read_back"] == "write through"


def test_a_damaged_part_is_left_out_and_the_rest_kept() -> None:
    stored: dict[str, JSON] = {
        "target": {"path": "/mnt/x/iolab.testfile"},
        "precondition": [
            {"job": "fill"},
            {"job": "ok", "written_bytes": 1, "seconds": 1, "bw_bytes": 1},
        ],
        "steady_rounds": {"track": 3},
        "peak_search": {"a": "damaged"},
        "controller": ["not", "a", "card"],
    }
    record = codec.from_json(SetupRecord, stored)
    assert record.facts.target is not None and record.facts.target.path.endswith("testfile")
    assert [fill.job for fill in record.precondition] == ["ok"]
    assert record.steady is None and not record.searches and record.controller is None


def test_a_record_that_is_not_an_object_is_a_typed_error_naming_the_set_up(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "hostile.db"
    shutil.copy(STORES[0], copy)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE setups SET environment = '[1, 2]'")
    store = Store(copy)
    with pytest.raises(JSONShapeError, match=r"the record of set-up '.*': the value is a list"):
        store.setup_records(store.runs()[0].id)


def test_a_record_nested_too_deep_is_one_line_naming_the_file(tmp_path: Path) -> None:
    copy = tmp_path / "deep.db"
    shutil.copy(STORES[0], copy)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE setups SET environment = ?", ("[" * 100_000 + "]" * 100_000,))
    store = Store(copy)
    with pytest.raises(StoreError, match=r"deep.db is damaged \(a stored value is nested too deep"):
        store.setup_records(store.runs()[0].id)
