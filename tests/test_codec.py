"""The one codec between dataclasses and stored JSON (model.codec): what it writes reads back
the same, the per-field specs do what they say, and hostile JSON (wrong types, missing keys,
extra keys, deep nesting) is a JSONShapeError naming the field, never a bare KeyError."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, NamedTuple

import pytest

from iolab.errors import JSONShapeError, StoreError
from iolab.model import JSON, JSONObject, PeakRecord, SteadyRecord, codec
from iolab.model.codec import spec
from iolab.model.facts import DeviceFacts, Layer, TargetFacts
from iolab.targets.controllers.model import UNREPORTED, Controller, Write


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


class Span(NamedTuple):
    low: int
    high: int


@dataclass(frozen=True)
class Inner:
    name: str
    share: float | None = None


@dataclass(frozen=True)
class Shape:
    text: str
    whole: int
    number: float
    flag: bool
    nothing: None
    maybe: int | None
    pair: tuple[int, str]
    many: tuple[float, ...]
    tags: frozenset[str]
    by_name: Mapping[str, Inner]
    kind: Literal["a", "b"]
    colour: Colour
    span: Span
    kept: JSONObject
    inner: Inner | None = None


SHAPE = Shape(
    "x",
    3,
    2.5,
    True,
    None,
    None,
    (1, "one"),
    (1.0, 2.0),
    frozenset({"b", "a"}),
    {"sda": Inner("sda", 0.5)},
    "b",
    Colour.BLUE,
    Span(1, 4),
    {"any": [1, {"deep": None}]},
    Inner("in"),
)


def test_a_dataclass_round_trips_through_json_text() -> None:
    written = codec.to_json(SHAPE)
    assert isinstance(written, dict)
    assert list(written) == list(Shape.__dataclass_fields__)
    assert written["tags"] == ["a", "b"] and written["span"] == {"low": 1, "high": 4}
    assert written["colour"] == "blue" and written["pair"] == [1, "one"]
    again = codec.from_json(Shape, json.loads(json.dumps(written)))
    assert again == SHAPE
    assert isinstance(again.colour, Colour) and isinstance(again.span, Span)


def test_a_whole_number_reads_as_a_float_and_a_boolean_is_no_number() -> None:
    data = json.loads(json.dumps(codec.to_json(SHAPE)))
    data["number"] = 7
    number = codec.from_json(Shape, data).number
    assert number == 7.0 and type(number) is float
    data["number"] = json.loads("1" + "0" * 400)  # a whole number no float holds
    with pytest.raises(JSONShapeError, match="number is a number too large for one"):
        codec.from_json(Shape, data)
    data["number"] = 7
    data["whole"] = True
    with pytest.raises(JSONShapeError, match="whole is a boolean, expected a whole number"):
        codec.from_json(Shape, data)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("text", 5, "text is a whole number, expected a text"),
        ("maybe", "5", "maybe is a text, expected a whole number or null"),
        ("pair", [1], "pair is a list of 1, expected a list of 2"),
        ("pair", [1, 2], r"pair\[1\] is a whole number, expected a text"),
        ("many", [1.0, "x"], r"many\[1\] is a text, expected a number"),
        ("by_name", {"sda": {"share": 1}}, "by_name.sda.name is missing, expected a text"),
        ("by_name", [], "by_name is a list, expected an object"),
        ("kind", "c", 'kind is a text, expected one of "a", "b"'),
        ("colour", "green", 'colour is a text, expected one of "red", "blue"'),
        ("span", {"low": 1}, "span.high is missing"),
        ("kept", {"x": {1, 2}}, "kept.x is set, expected JSON"),
        ("tags", "ab", "tags is a text, expected a list"),
    ],
)
def test_a_wrong_type_names_the_field_and_what_was_found(
    key: str, value: object, message: str
) -> None:
    data = {**json.loads(json.dumps(codec.to_json(SHAPE))), key: value}
    with pytest.raises(JSONShapeError, match=message) as raised:
        codec.from_json(Shape, data, "run 3's set-up")
    assert str(raised.value).startswith("run 3's set-up: ")
    assert isinstance(raised.value, StoreError), "the cli says it in one line"


def test_a_missing_required_key_is_an_error_and_a_missing_default_is_the_default() -> None:
    data = json.loads(json.dumps(codec.to_json(SHAPE)))
    del data["inner"]
    assert codec.from_json(Shape, data).inner is None
    del data["whole"]
    with pytest.raises(JSONShapeError) as raised:
        codec.from_json(Shape, data)
    assert (raised.value.field, raised.value.found) == ("whole", "missing")


def test_extra_keys_are_ignored() -> None:
    data = {**json.loads(json.dumps(codec.to_json(SHAPE))), "later": {"a": 1}}
    assert codec.from_json(Shape, data) == SHAPE


def test_what_is_not_an_object_is_an_error() -> None:
    data: object
    for data in (None, [], "x", 3.0):
        with pytest.raises(JSONShapeError, match=r"the value is .*, expected an object"):
            codec.from_json(Inner, data)


def test_a_hostile_key_is_quoted_and_cut_short_in_the_message_and_no_value_is_shown() -> None:
    key = "\x1b[31m" + "k" * 100
    hostile = {key: {"name": "SECRET\x1b[0m" * 3, "share": "SECRET"}}
    data = {**json.loads(json.dumps(codec.to_json(SHAPE))), "by_name": hostile}
    with pytest.raises(JSONShapeError) as raised:
        codec.from_json(Shape, data)
    said = str(raised.value)
    assert "\x1b" not in said and "SECRET" not in said and "k" * 50 not in said
    assert "'\\x1b[31m" in said


@dataclass(frozen=True)
class Node:
    label: str
    below: tuple[Node, ...] = ()


def _deep(levels: int) -> JSON:
    node: JSON = {"label": "leaf"}
    for _ in range(levels):
        node = {"label": "n", "below": [node]}
    return node


def test_huge_nesting_is_a_shape_error_not_a_recursion_error() -> None:
    assert codec.from_json(Node, _deep(20)).below[0].label == "n"
    with pytest.raises(JSONShapeError, match="levels of nesting"):
        codec.from_json(Node, _deep(10_000))
    deep: JSON = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(JSONShapeError, match="levels of nesting"):
        codec.from_json(
            Shape, {**json.loads(json.dumps(codec.to_json(SHAPE))), "kept": {"x": deep}}
        )


@dataclass(frozen=True)
class Specs:
    kind: str = field(metadata=spec("type"))
    note: str | None = field(default=None, metadata=spec(omit="none"))
    members: tuple[str, ...] = field(default=(), metadata=spec(omit="empty"))
    level: int = field(default=0, metadata=spec(omit="default"))
    mount: Inner | None = field(default=None, metadata=spec(empty_none=True, none_as={}))
    size: int | None = field(default=None, metadata=spec(missing_from=len))
    count: int = field(default=1, metadata=spec(missing=9))
    items: tuple[Inner, ...] = field(default=(), metadata=spec(tolerant=True))
    age: int | None = field(default=None, metadata=spec(tolerant=True))
    details: JSONObject = field(default_factory=dict, metadata=spec(rest=True))


def test_the_specs_rename_omit_and_spread() -> None:
    written = codec.to_object(Specs("raid", details={"chunk": "64k"}))
    assert written == {
        "type": "raid",
        "mount": {},
        "size": None,
        "count": 1,
        "items": [],
        "age": None,
        "chunk": "64k",
    }
    full = Specs("raid", "n", ("a",), 2, Inner("m"), 3, 4, (Inner("i"),), 5, {"x": [1]})
    assert codec.from_json(Specs, json.loads(json.dumps(codec.to_json(full)))) == full


def test_the_specs_read_older_and_damaged_json() -> None:
    read = codec.from_json(Specs, {"type": "raid", "mount": {}, "level": 5})
    assert (read.mount, read.size, read.count, read.level) == (None, 3, 9, 5)
    damaged = {"type": "x", "items": [{"name": 1}, {"name": "ok"}, "no"], "age": "old"}
    read = codec.from_json(Specs, damaged)
    assert read.items == (Inner("ok"),) and read.age is None, "damaged items left out"
    assert read.details == {}, "keys the fields claim are not the rest"
    with pytest.raises(JSONShapeError, match="type is missing"):
        codec.from_json(Specs, {"kind": "raid"})


@dataclass(frozen=True)
class Whole:
    name: str
    facts: Specs = field(metadata=spec(spread=True))
    extra: int = 0


def test_a_spread_part_shares_its_parent_object() -> None:
    whole = Whole("w", Specs("raid", note="n"), 2)
    written = codec.to_object(whole)
    assert list(written)[:3] == ["name", "type", "note"] and written["extra"] == 2
    assert codec.from_json(Whole, written) == whole


def test_writing_what_is_not_json_is_a_programming_error() -> None:
    @dataclass(frozen=True)
    class Odd:
        thing: object

    with pytest.raises(TypeError, match="cannot write a complex"):
        codec.to_json(Odd(1j))
    with pytest.raises(TypeError, match="reads dataclasses"):
        codec.from_json(int, 3)


def test_the_method_records_keep_their_stored_json() -> None:
    steady = SteadyRecord(
        "4k randwrite", "iops", (9.0, 10.0), (1, 2), 9.5, 0.05, 0.2, 0.0, 0.1, True, 3
    )
    written = codec.to_json(steady)
    assert isinstance(written, dict) and written["window_rounds"] == [1, 2]
    assert codec.from_json(SteadyRecord, json.loads(json.dumps(written))) == steady
    search: dict[str, JSON] = {
        "method": "curve",
        "metric": "iops",
        "bounds": {"numjobs": [1, 4], "iodepth": [1, 32]},
        "grid": 12,
        "margin": 0.05,
        "steps": ["qd1"],
        "points": [],
        "winner": None,
    }
    record = codec.from_json(PeakRecord, search)
    assert record.bounds.iodepth == (1, 32) and codec.to_json(record) == search


def test_a_tolerant_class_reads_what_it_cannot_read_as_none() -> None:
    device = codec.from_json(DeviceFacts, {"name": "sda", "model": 5, "partitions": ["a", 1]})
    assert (device.name, device.model, device.partitions, device.read_only) == (
        "sda",
        None,
        ("a",),
        False,
    )
    stack: JSON = {"layer": "disk"}
    for _ in range(5_000):
        stack = {"layer": "md", "below": [stack]}
    target = codec.from_json(TargetFacts, {"path": "/x", "stack": stack, "raid": {}})
    assert target.raid is None and target.filesystem is None
    assert 0 < len(list(target.stack.walk())) <= codec.MAX_DEPTH, "the deep part left out"
    assert codec.from_json(TargetFacts, {"path": "/x"}).stack == Layer("file", path="/x")


def test_a_card_keeps_what_it_can_read_and_one_without_its_tool_is_none() -> None:
    stored: dict[str, JSON] = {
        "tool": "storcli",
        "index": "0",
        "battery": "gone",
        "cache_ratio": {"read": 25},
        "drives": [
            {"id": "/c0/v0", "configured": {"write": "write-back", "read": "sideways"}},
            {"raid_level": "RAID5"},
        ],
    }
    card = codec.from_json(Controller, stored)
    assert (card.index, card.battery, card.cache_ratio) == (0, UNREPORTED, None)
    (drive,) = card.drives
    assert drive.configured is not None and drive.configured.parts() == (Write.BACK, None, None)
    assert codec.from_json(Controller, card.to_json()) == card
    with pytest.raises(JSONShapeError, match="tool is missing"):
        codec.from_json(Controller, {"index": 0})
