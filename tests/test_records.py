"""The typed records the report reads are decoded from what the store keeps, losslessly: a
set-up's definition (model.Setup), a search's record (model.PeakRecord), the overrides of a
run (plan.Overrides), on every store the tests keep."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from iolab.errors import JSONShapeError
from iolab.model import JSONObject, PeakRecord, Setup, codec

STORES = sorted((Path(__file__).parent / "golden").glob("*.db")) + sorted(
    (Path(__file__).parent / "fixtures" / "store").glob("*.db")
)


def _definitions(path: Path, tmp_path: Path) -> list[JSONObject]:
    copy = tmp_path / "copy.db"
    shutil.copy(path, copy)  # read a copy: the kept store stays as it is
    with sqlite3.connect(copy) as db:
        return [json.loads(text) for (text,) in db.execute("SELECT definition FROM setups")]


@pytest.mark.parametrize("store", STORES, ids=[p.name for p in STORES])
def test_a_stored_definition_decodes_to_the_setup_that_wrote_it(
    store: Path, tmp_path: Path
) -> None:
    definitions = _definitions(store, tmp_path)
    assert definitions
    for definition in definitions:
        assert Setup.from_definition(definition).definition() == definition


@pytest.mark.parametrize(
    "definition",
    [
        {},
        {"kind": "devices", "devices": "sda"},
        {"kind": "devices", "raid": 5, "queue": []},
        {"name": ["x"], "cache_bytes": "big", "controller": "c0"},
    ],
    ids=["empty", "devices-a-string", "odd-types", "odd-names"],
)
def test_a_foreign_definition_decodes_to_defaults_not_an_error(definition: JSONObject) -> None:
    setup = Setup.from_definition(definition)
    assert setup.name == "" or isinstance(setup.name, str)
    assert setup.cache_bytes == 0 and setup.controller is None
    if setup.layout is not None:
        assert setup.layout.devices == () and setup.layout.raid == "none"


def test_a_damaged_search_record_is_a_shape_error_naming_the_field() -> None:
    with pytest.raises(JSONShapeError, match="metric is missing, expected one of"):
        codec.from_json(PeakRecord, {"method": "peak"}, "run 1's search")
    with pytest.raises(JSONShapeError, match="the value is a text, expected an object"):
        codec.from_json(PeakRecord, "peak")
