"""Plan loading and validation: every fault is one line naming file, line, key and choices."""

from __future__ import annotations

from pathlib import Path

import pytest

from iolab.errors import PlanError
from iolab.plan.common import Overrides
from iolab.plan.load import load_file, load_preset, parse_plan, preset_names

GOOD = """
name = "two"
repeat = 2

[defaults]
runtime = 1
size = "16m"

[[setup]]
name = "a"
path = "/var/tmp"

[[workload]]
name = "rand"
rw = ["randread", "randwrite"]
bs = ["4k", "64k"]
iodepth = 8
"""


BS = 'bs = ["4k", "64k"]'


def test_sweeps_expand_to_named_points_and_cases() -> None:
    p = parse_plan(GOOD, "good.toml")
    names = [w.name for w in p.workloads]
    assert names == [
        "rand rw=randread bs=4k",
        "rand rw=randread bs=64k",
        "rand rw=randwrite bs=4k",
        "rand rw=randwrite bs=64k",
    ]
    assert len(p.cases()) == 4 * 2
    first = p.workloads[0].options
    assert first["direct"] == 1 and first["time_based"] == 1 and first["runtime"] == 1
    assert first["ioengine"] == "auto" and first["group_reporting"] == 1


def test_overrides_shrink_any_preset() -> None:
    small = Overrides(target="/var/tmp", size="32m", runtime=1, repeat=3)
    p = load_preset("ssd-raid-card-2012", small)
    assert [s.path for s in p.setups] == ["/var/tmp"]
    assert {w.options["size"] for w in p.workloads} == {"32m"}
    assert {w.options["runtime"] for w in p.workloads} == {1}
    assert p.repeat == 3


def test_case_keys_are_stable_and_distinct() -> None:
    keys = [c.key for c in parse_plan(GOOD, "x").cases()]
    again = [c.key for c in parse_plan(GOOD, "y").cases()]
    assert keys == again
    assert len(set(keys)) == len(keys)


def _error(text: str) -> str:
    with pytest.raises(PlanError) as caught:
        parse_plan(text, "plan.toml")
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ((BS, 'bs = "4q"'), "plan.toml:16: bs = '4q' is not a size (examples: 512, 4k"),
        (
            ('rw = ["randread", "randwrite"]', 'rw = "randred"'),
            "plan.toml:15: rw = 'randred' is not allowed; choose one of read, write",
        ),
        (("repeat = 2", "repeat = 0"), "plan.toml:3: repeat = 0 must be a whole number"),
        (
            ('path = "/var/tmp"', 'path = "/var/tmp"\ncolour = 1'),
            "plan.toml:12: unknown key 'colour' in [[setup]] 1; allowed keys: name, path",
        ),
        (("[defaults]", "[default]"), "plan.toml:5: unknown key 'default' in the plan"),
        (("iodepth = 8", "iodepth = 0"), "plan.toml:17: iodepth = 0 must be a whole number"),
        (("runtime = 1", 'runtime = "soon"'), "plan.toml:6: runtime = 'soon' is not a duration"),
        (("iodepth = 8", "rwmixread = 70"), "plan.toml:17: rwmixread only applies to mixed rw"),
        (
            (BS, 'bs = "1000"'),
            "plan.toml:16: bs = '1000' with direct = 1: O_DIRECT needs a multiple of 512",
        ),
        (
            ("iodepth = 8", 'iodepth = 8\nioengine = "psync"'),
            "iodepth = 8 has no effect with ioengine = 'psync'",
        ),
        (('size = "16m"', 'size = "1k"'), "is smaller than bs"),
        ((BS, "bs = []"), "plan.toml:16: bs = [] is an empty sweep"),
        (("[[setup]]", "[[setups]]"), "unknown key 'setups' in the plan"),
        (("iodepth = 8", "iodepth = 8\nrate = [1, {a = 1}]"), "plan.toml:18: rate = {'a': 1}: fio"),
        (("repeat = 2", "repeat = 2 x"), "plan.toml: not valid TOML"),
    ],
)
def test_faults_name_file_line_and_remedy(change: tuple[str, str], expected: str) -> None:
    assert expected in _error(GOOD.replace(*change))


def test_empty_and_missing() -> None:
    assert "no [[setup]]" in _error('[[workload]]\nrw = "read"\n')
    assert "no [[workload]]" in _error('[[setup]]\npath = "."\n')
    with pytest.raises(PlanError, match="no such plan file"):
        load_file(Path("/nonexistent/plan.toml"))
    with pytest.raises(PlanError, match="no preset named 'nope': choose one of"):
        load_preset("nope")


def test_bad_overrides_are_named_as_flags() -> None:
    with pytest.raises(PlanError, match=r"^--size: size = '4q' is not a size"):
        load_preset("quick", Overrides(size="4q"))


def test_baseline_must_be_a_setup() -> None:
    assert "baseline 'b' is not a set-up; set-ups: a" in _error(
        GOOD + '\n[report]\nbaseline = "b"\n'
    )


def test_every_preset_is_valid_and_has_an_origin() -> None:
    for name in preset_names():
        p = load_preset(name)
        assert p.origin and p.description and p.cases(), name


def test_study_a_matches_the_published_method() -> None:
    p = load_preset("ssd-raid-card-2012")
    by_name = {w.name: dict(w.options) for w in p.workloads}
    for rw in ("read", "write", "randread", "randwrite"):
        o = by_name[f"4k rw={rw}"]
        assert (o["bs"], o["numjobs"], o["size"], o["runtime"], o["direct"]) == (
            "4k",
            64,
            "5g",
            10,
            1,
        )
        assert o["group_reporting"] == 1
    for rw in ("read", "write"):
        o = by_name[f"32m rw={rw}"]
        assert (o["bs"], o["numjobs"], o["size"], o["runtime"]) == ("32m", 16, "5g", 10)
    assert len(p.workloads) == 6
