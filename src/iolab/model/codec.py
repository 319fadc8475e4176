"""One way between a dataclass and the JSON iolab keeps, driven by the fields and their type
hints: `to_json(obj)` writes it (`to_object(obj)`: a dataclass, as a JSON object),
`from_json(cls, data, where)` reads it back and checks it.

What it reads and writes: None, bool, int, float (a whole number read as a float), str,
Literal and StrEnum values (as their text), `X | None`, `tuple[X, ...]` and fixed tuples,
`frozenset[X]` (a sorted list), NamedTuples (an object of their fields), a Mapping (or dict)
of str to any of these, JSON kept as JSON (`model.JSON`, `model.JSONObject`), and nested
dataclasses. Keys are written in field order.

Where a class's JSON is not exactly its fields, a field says how in its metadata
(`field(metadata=spec(...))`): `key` (its name in the JSON), `omit` ("none", "empty" or
"default": the key is left out when the value is so), `empty_none` ({} read as None),
`none_as` (what None is written as: {} for some), `rest` (a mapping of the object's other
keys, spread into it), `spread` (a dataclass whose keys sit in this object), `missing` or
`missing_from` (the value where older JSON lacks the key: a constant, or one made from the
object read), and `tolerant` (absent or damaged, the field takes its missing value, its
default, or None; in a tuple or a mapping, each damaged item is left out, the others kept).
A class marked `@tolerant` reads every field so: a fact it lacks, or cannot read, is None
(or its declared missing value).

Reading checks: a missing required key, a value of another type, a text that is not one of a
Literal's or an enum's, or nesting deeper than MAX_DEPTH raise errors.JSONShapeError naming
where, the field's path, what was expected and what was found (its kind, never its text);
keys the class does not know are ignored (a later version's).

Hand-written JSON remains where the format is not the fields: a set-up's definition
(`Setup`, `Layout`, `CardPolicy`: a computed "kind", the layout's keys spread beside the
set-up's, an import's facts and the hosts as keys of their own, read back by a reader that
leaves anything foreign at its default, key by key, by design: older stores' hashes rest on
it), `plan.Overrides.from_json` (a run's overrides as the store kept them: any value read as
a text, runtime a number or a text), `Controller.to_json` (each drive carries `differs`,
computed from the card) and `CardsFound.to_json` (the cards so written, beside the problems).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, TypeVar, cast

from iolab.errors import JSONShapeError
from iolab.model.common import JSON

T = TypeVar("T")
MAX_DEPTH = 64  # objects and lists inside each other
Omit = Literal["none", "empty", "default"]
METADATA = "json"


class _Nothing:
    """No value declared (a field's `missing`)."""


NOTHING = _Nothing()
_DEFAULT = _Nothing()  # the field's own default is used


@dataclass(frozen=True)
class Spec:
    """How one field stands in the JSON (see the module's docstring)."""

    key: str | None = None
    omit: Omit | None = None
    empty_none: bool = False
    none_as: JSON = None
    rest: bool = False
    spread: bool = False
    missing: object = NOTHING
    missing_from: Callable[[Mapping[str, object]], object] | None = None
    tolerant: bool = False


def spec(
    key: str | None = None,
    *,
    omit: Omit | None = None,
    empty_none: bool = False,
    none_as: JSON = None,
    rest: bool = False,
    spread: bool = False,
    missing: object = NOTHING,
    missing_from: Callable[[Mapping[str, object]], object] | None = None,
    tolerant: bool = False,
) -> dict[str, Spec]:
    """A field's metadata: `field(default=None, metadata=spec(omit="none"))`."""
    return {
        METADATA: Spec(
            key, omit, empty_none, none_as, rest, spread, missing, missing_from, tolerant
        )
    }


def tolerant(cls: type[T]) -> type[T]:
    """Mark a dataclass whose every field is read tolerantly (`spec(tolerant=True)`)."""
    setattr(cls, _TOLERANT, True)
    return cls


_TOLERANT = "__json_tolerant__"


def _spec(f: dataclasses.Field[object], cls: type | None = None) -> Spec:
    found = f.metadata.get(METADATA)
    own = found if isinstance(found, Spec) else Spec()
    if cls is not None and vars(cls).get(_TOLERANT):
        return dataclasses.replace(own, tolerant=True)
    return own


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    # JSON names itself inside (list["JSON"]): a module that only imports JSONObject lacks it
    return typing.get_type_hints(cls, localns={**vars(cls), "JSON": JSON})


def _fields(cls: type) -> tuple[dataclasses.Field[object], ...]:
    return tuple(f for f in dataclasses.fields(cls) if f.init)


@functools.cache
def _plan(cls: type) -> tuple[tuple[dataclasses.Field[object], Spec, Any], ...]:
    """Each field of a dataclass with its spec (its class's tolerance in it) and its hint."""
    notes = _hints(cls)
    return tuple((f, _spec(f, cls), notes[f.name]) for f in _fields(cls))


# -- writing ----------------------------------------------------------------------------------


def to_json(obj: object) -> JSON:
    """`obj` as JSON: a dataclass as an object of its fields, as their specs say."""
    return _write(obj, None)


def to_object(obj: object) -> dict[str, JSON]:
    """A dataclass as a JSON object (what `to_json` writes for it)."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise TypeError(f"the JSON codec writes dataclasses as objects, not {type(obj).__name__}")
    return _object(obj)


def _write(value: object, hint: object) -> JSON:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _object(value)
    if _is_named_tuple(hint) and isinstance(value, tuple):
        names, notes = _names(cast(type, hint)), _hints(cast(type, hint))
        return {n: _write(v, notes[n]) for n, v in zip(names, value, strict=True)}
    if isinstance(value, Enum):
        return _write(value.value, None)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): _write(v, _item(hint, 1)) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_write(v, _item(hint, i)) for i, v in enumerate(value)]
    if isinstance(value, frozenset | set):
        return sorted((_write(v, _item(hint, 0)) for v in value), key=json.dumps)
    raise TypeError(f"the JSON codec cannot write a {type(value).__name__}")


def _item(hint: object, index: int) -> object:
    """The hint of an item of a tuple (by position), a set, or a mapping's values (1)."""
    hint = _optional(hint)
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin is tuple and args:
        return (
            args[0] if len(args) == 2 and args[1] is Ellipsis else args[min(index, len(args) - 1)]
        )
    if origin in (frozenset, set, list) and args:
        return args[0]
    if _is_mapping(origin) and len(args) == 2:
        return args[1]
    return None


def _optional(hint: object) -> object:
    """`X | None` as X; any other hint as it is."""
    if _is_union(hint):
        arms = [a for a in typing.get_args(hint) if a is not type(None)]
        return arms[0] if len(arms) == 1 else None
    return hint


def _object(obj: object) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    kind: type = type(obj)
    for f, s, hint in _plan(kind):
        value = getattr(obj, f.name)
        if _left_out(f, s, value):
            continue
        if value is None:
            out[s.key or f.name] = _write(s.none_as, None)
            continue
        written = _write(value, hint)
        if s.rest or s.spread:
            out.update(cast(dict[str, JSON], written))
        else:
            out[s.key or f.name] = written
    return out


def _left_out(f: dataclasses.Field[object], s: Spec, value: object) -> bool:
    if s.omit == "none":
        return value is None
    if s.omit == "empty":
        return value is None or (isinstance(value, tuple | list | Mapping | str) and not value)
    if s.omit == "default":
        return value == _default(f)
    return False


def _default(f: dataclasses.Field[object]) -> object:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return NOTHING


# -- reading ----------------------------------------------------------------------------------


def from_json(cls: type[T], data: object, where: str = "") -> T:
    """`data` read as a `cls` (a dataclass), checked field by field against its hints;
    JSONShapeError (`where` names what was read) when it is not one."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"the JSON codec reads dataclasses, not {cls.__name__}")
    return cast(T, _Reader(where).read(cls, data, "", 0))


def _kind(data: object) -> str:
    kinds: tuple[tuple[type, str], ...] = (
        (bool, "a boolean"),
        (int, "a whole number"),
        (float, "a number"),
        (str, "a text"),
        (list, "a list"),
        (Mapping, "an object"),
    )
    if data is None:
        return "null"
    return next((said for kind, said in kinds if isinstance(data, kind)), type(data).__name__)


def _is_union(hint: object) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _is_mapping(origin: object) -> bool:
    return origin in (dict, Mapping)


def _is_named_tuple(hint: object) -> bool:
    return isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields")


def _names(cls: type) -> tuple[str, ...]:
    """A NamedTuple's field names."""
    return tuple(getattr(cls, "_fields", ()))


@functools.cache
def _is_json(hint: object) -> bool:
    """`model.JSON` (as get_type_hints spells it out), or its name inside itself."""
    if isinstance(hint, typing.ForwardRef | str):
        return True
    args = typing.get_args(hint) if _is_union(hint) else ()
    lists = any(typing.get_origin(a) is list for a in args)
    return lists and {type(None), bool, int, float, str} <= set(args)


def _expected(hint: object) -> str:
    if _is_union(hint):
        return " or ".join(_expected(a) for a in typing.get_args(hint))
    if typing.get_origin(hint) is Literal:
        return "one of " + ", ".join(json.dumps(a) for a in typing.get_args(hint))
    if isinstance(hint, type) and issubclass(hint, Enum):
        return "one of " + ", ".join(json.dumps(m.value) for m in hint)
    words: dict[object, str] = {
        type(None): "null",
        bool: "a boolean",
        int: "a whole number",
        float: "a number",
        str: "a text",
    }
    if hint in words:
        return words[hint]
    return "a list" if typing.get_origin(hint) in (tuple, list, frozenset) else "an object"


@dataclass(frozen=True)
class _Reader:
    where: str

    def fail(self, path: str, expected: str, found: str) -> JSONShapeError:
        return JSONShapeError(self.where, path, expected, found)

    def read(self, hint: object, data: object, path: str, depth: int, drop: bool = False) -> object:
        """`data` as `hint` says; `drop`: a damaged item of a tuple or mapping is left out."""
        if depth > MAX_DEPTH:
            raise self.fail(path, f"at most {MAX_DEPTH} levels of nesting", "more")
        if _is_json(hint):
            return self.json(data, path, depth)
        if _is_union(hint):
            return self.union(hint, data, path, depth, drop)
        if typing.get_origin(hint) is Literal:
            if any(data == a and type(data) is type(a) for a in typing.get_args(hint)):
                return data
            raise self.fail(path, _expected(hint), _kind(data))
        if dataclasses.is_dataclass(hint) or _is_named_tuple(hint):
            return self.record(cast(type, hint), data, path, depth)
        if isinstance(hint, type) and issubclass(hint, Enum):
            return self.enum(hint, data, path)
        if hint in (type(None), bool, int, float, str):
            return self.scalar(cast(type, hint), data, path)
        return self.container(hint, data, path, depth, drop)

    def scalar(self, hint: type, data: object, path: str) -> object:
        whole = isinstance(data, int) and not isinstance(data, bool)
        if hint is float and (whole or isinstance(data, float)):
            try:
                return float(cast(float, data))
            except OverflowError:  # a whole number of 400 digits
                raise self.fail(path, _expected(hint), "a number too large for one") from None
        fits = (
            whole
            if hint is int
            else (data is None if hint is type(None) else isinstance(data, hint))
        )
        if hint is not float and fits:
            return data
        raise self.fail(path, _expected(hint), _kind(data))

    def enum(self, hint: type[Enum], data: object, path: str) -> object:
        if isinstance(data, str | int) and not isinstance(data, bool):
            try:
                return hint(data)
            except ValueError:
                pass
        raise self.fail(path, _expected(hint), _kind(data))

    def union(self, hint: object, data: object, path: str, depth: int, drop: bool) -> object:
        arms = [a for a in typing.get_args(hint) if a is not type(None)]
        if data is None and len(arms) < len(typing.get_args(hint)):
            return None
        for arm in arms:
            try:
                return self.read(arm, data, path, depth, drop)
            except JSONShapeError as error:
                if len(arms) == 1 and error.field != path:
                    raise  # deeper inside the one kind it may be: that field is named
        raise self.fail(path, _expected(hint), _kind(data))

    def json(self, data: object, path: str, depth: int) -> JSON:
        """JSON kept as JSON: checked to be JSON, all the way down."""
        if depth > MAX_DEPTH:
            raise self.fail(path, f"at most {MAX_DEPTH} levels of nesting", "more")
        if data is None or isinstance(data, bool | int | float | str):
            return data
        if isinstance(data, list | tuple):
            return [self.json(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(data)]
        if isinstance(data, Mapping):
            return {
                self.key(k, path): self.json(v, _at(path, k), depth + 1) for k, v in data.items()
            }
        raise self.fail(path, "JSON", _kind(data))

    def key(self, key: object, path: str) -> str:
        if not isinstance(key, str):
            raise self.fail(path, "an object whose keys are texts", f"a key {_kind(key)}")
        return key

    def container(self, hint: object, data: object, path: str, depth: int, drop: bool) -> object:
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if _is_mapping(origin) and len(args) == 2:
            if not isinstance(data, Mapping):
                raise self.fail(path, "an object", _kind(data))
            pairs = [(self.key(k, path), v) for k, v in data.items()]
            return dict(self.items(args[1], pairs, path, depth, drop))
        if origin in (tuple, frozenset, list) and args:
            if not isinstance(data, list | tuple):
                raise self.fail(path, "a list", _kind(data))
            return self.sequence(origin, args, list(data), path, depth, drop)
        raise TypeError(f"the JSON codec cannot read {hint}")

    def sequence(
        self,
        origin: object,
        args: tuple[object, ...],
        data: list[object],
        path: str,
        depth: int,
        drop: bool,
    ) -> object:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(data) != len(args):
                raise self.fail(path, f"a list of {len(args)}", f"a list of {len(data)}")
            return tuple(
                self.read(a, v, f"{path}[{i}]", depth + 1)
                for i, (a, v) in enumerate(zip(args, data, strict=True))
            )
        items = self.items(args[0], list(enumerate(data)), path, depth, drop)
        values = [v for _, v in items]
        return (
            tuple(values)
            if origin is tuple
            else frozenset(values)
            if origin is frozenset
            else values
        )

    def items(
        self, hint: object, pairs: list[tuple[T, object]], path: str, depth: int, drop: bool
    ) -> list[tuple[T, object]]:
        kept: list[tuple[T, object]] = []
        for k, v in pairs:
            where = f"{path}[{k}]" if isinstance(k, int) else _at(path, str(k))
            try:
                kept.append((k, self.read(hint, v, where, depth + 1)))
            except JSONShapeError:
                if not drop:
                    raise
        return kept

    def record(
        self, cls: type, data: object, path: str, depth: int, outer: frozenset[str] = frozenset()
    ) -> object:
        """A dataclass or NamedTuple; `outer`: the keys a class it is spread in claims."""
        if not isinstance(data, Mapping):
            raise self.fail(path, "an object", _kind(data))
        if _is_named_tuple(cls):
            notes = _hints(cls)
            return cls(*(self.value(n, notes[n], data, path, depth) for n in _names(cls)))
        values: dict[str, object] = {}
        claimed: set[str] = set()
        rest: str | None = None
        for f, s, hint in _plan(cls):
            if s.rest:
                rest = f.name
            elif s.spread:
                part = cast(type, _optional(hint))
                values[f.name] = self.record(part, data, path, depth + 1, outer | _keys(cls))
                claimed |= _keys(part)
            else:
                claimed.add(s.key or f.name)
                if (got := self.field(f, s, hint, data, path, depth)) is not _DEFAULT:
                    values[f.name] = got
        if rest is not None:
            values[rest] = {
                self.key(k, path): self.json(v, _at(path, k), depth + 1)
                for k, v in data.items()
                if k not in claimed and k not in outer
            }
        return cls(**values)

    def value(
        self, name: str, hint: object, data: Mapping[str, object], path: str, depth: int
    ) -> object:
        if name not in data:
            raise self.fail(_at(path, name), _expected(hint), "missing")
        return self.read(hint, data[name], _at(path, name), depth + 1)

    def field(
        self,
        f: dataclasses.Field[object],
        s: Spec,
        hint: object,
        data: Mapping[str, object],
        path: str,
        depth: int,
    ) -> object:
        key = s.key or f.name
        found = data.get(key, NOTHING)
        if s.empty_none and (found is None or (isinstance(found, Mapping) and not found)):
            return None
        if found is not NOTHING:
            try:
                return self.read(hint, found, _at(path, key), depth + 1, drop=s.tolerant)
            except JSONShapeError:
                if not s.tolerant:
                    raise
        absent = _absent(f, s, hint, data)
        if absent is NOTHING:
            raise self.fail(_at(path, key), _expected(hint), "missing")
        return absent


def _absent(
    f: dataclasses.Field[object], s: Spec, hint: object, data: Mapping[str, object]
) -> object:
    """What a field is where the JSON lacks it (or, tolerant, has it damaged)."""
    if s.missing_from is not None:
        return s.missing_from(data)
    if s.missing is not NOTHING:
        return s.missing
    if _default(f) is not NOTHING:
        return _DEFAULT
    if s.tolerant and _is_union(hint) and type(None) in typing.get_args(hint):
        return None
    return NOTHING


@functools.cache
def _keys(cls: type) -> frozenset[str]:
    """The keys a dataclass's JSON may hold (its spread parts' too)."""
    keys: frozenset[str] = frozenset()
    for f in _fields(cls):
        s = _spec(f)
        keys |= _keys(cast(type, _optional(_hints(cls)[f.name]))) if s.spread else {s.key or f.name}
    return keys


def _at(path: str, key: str) -> str:
    """A key in a field's path: a name as it is, anything else quoted; both cut short."""
    shown = key[:40] if key.isidentifier() else repr(key[:40])
    return f"{path}.{shown}" if path else shown
