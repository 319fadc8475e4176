"""A history's cases read as one row of figures each, summed in SQL (store.figures): the
same figures as the cases read whole, to the last bit, on every stored database the tests
keep (real fio: random reads, a 70/30 random mix, sequential reads and writes, several hosts
none); a direction iolab does not know is a damaged store, as when the cases are read whole."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from iolab.errors import StoreError
from iolab.store import Store
from iolab.store.figures import of_row

HERE = Path(__file__).parent
STORES = [HERE / "golden" / n for n in ("store.db", "devices.db", "cdm.db")]
STORES.append(HERE / "fixtures" / "store" / "v1.db")


@pytest.mark.parametrize("stored", STORES, ids=lambda p: p.name)
def test_the_figures_are_the_cases_read_whole(stored: Path, tmp_path: Path) -> None:
    db = tmp_path / stored.name
    shutil.copy(stored, db)  # opening an older schema upgrades it
    with Store(db) as store:
        ids = [r.id for r in store.runs()]
        read = store.case_figures(ids)
        whole = {i: [of_row(c) for c in store.cases(i)] for i in ids}
    assert read == whole
    cases = [c for i in ids for c in read[i]]
    assert all(c.iops is not None and c.iops > 0 for c in cases if c.status == "ok")
    mixed = [c for c in cases if c.options.get("rw") == "randrw"]
    assert not stored.name.startswith("devices") or mixed  # two directions added up


def test_an_unknown_direction_is_a_damaged_store(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    shutil.copy(HERE / "golden" / "store.db", db)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE metrics SET direction = 'sideways' WHERE case_id = 1")
    con.close()
    with Store(db) as store, pytest.raises(StoreError, match="unknown direction 'sideways'"):
        store.case_figures([1])
