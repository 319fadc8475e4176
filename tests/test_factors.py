"""Factors (issue 32, finding 6): set-ups carry named factors (a plan's `factors`, its set-up
axes, a published table's columns, `iolab import --factor`), reports pivot by them
(`--pivot ROWS:COLUMNS`), and a factor whose levels differ the same way on every pairing of
the other factors is a finding. The published tables are study C's, as its authors printed
them (tests/fixtures/import/published); the runs are real fio."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import FIXTURES, iolab_here, run_iolab
from iolab.errors import PlanError
from iolab.model import Setup
from iolab.plan.load import parse_plan
from iolab.store import Store

PUBLISHED = FIXTURES / "import" / "published"
DD = PUBLISHED / "C_x25e_raid_cards_dd.csv"
BONNIE = PUBLISHED / "C_x25e_raid_cards_bonnie.csv"
VERTEX = PUBLISHED / "A_vertex3_raid_card_vs_none.csv"


def _plan(body: str) -> str:
    return textwrap.dedent(body)


def _rows(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


@pytest.fixture(scope="module")
def _imported_dd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Study C's dd table imported once for the module (the tests that read it get a copy)."""
    folder = tmp_path_factory.mktemp("study-c-dd")
    iolab_here("import", str(DD), "--db", "c.db", cwd=folder, check=True)
    return folder / "c.db"


@pytest.fixture
def dd_store(_imported_dd: Path, tmp_path: Path) -> Path:
    """c.db in tmp_path: study C's dd table, imported (`iolab import C_x25e_raid_cards_dd.csv`)."""
    shutil.copyfile(_imported_dd, tmp_path / "c.db")
    return tmp_path / "c.db"


# ---------------------------------------------------------------- set-ups carry factors


def test_a_plans_factors_are_the_set_ups_and_its_axes_add_theirs() -> None:
    plan = parse_plan(
        _plan("""
        [[setup]]
        name = "p420i"
        path = "."
        factors = { card = "P420i", level = "raid5", disks = 4 }
        [[setup]]
        name = "disk"
        devices = ["/dev/sdx", "/dev/sdy"]
        raid = "mdadm"
        level = 0
        device_count = [1, 2]
        [[workload]]
        rw = "read"
        bs = "4k"
        """),
        "plan.toml",
    )
    first, one, two = plan.setups
    assert first.factors == (("card", "P420i"), ("level", "raid5"), ("disks", "4"))
    assert one.factor("device_count") == "1" and two.factor("device_count") == "2"
    assert first.definition()["factors"] == {"card": "P420i", "level": "raid5", "disks": "4"}
    assert Setup.from_definition(json.loads(json.dumps(first.definition()))) == first


def test_a_set_up_without_factors_keeps_its_definition_and_so_the_plans_hash() -> None:
    setup = Setup("here", ".")
    assert setup.definition() == {"name": "here", "kind": "path", "path": "."}
    assert Setup.from_definition(json.loads(json.dumps(setup.definition()))).factors == ()


@pytest.mark.parametrize(
    ("factors", "said"),
    [
        ('{ "ca:rd" = "P420i" }', "holds one of , : =, which part factors"),
        ('{ card = "a,b" }', "holds one of , : =, which part factors"),
        ('{ card = "\\u202e" }', "U+202E"),
        ("{ card = true }", "give its value as text or a number"),
        ('"card"', "factors is a table"),
    ],
)
def test_a_factor_that_breaks_the_rule_of_names_is_refused_at_its_line(
    factors: str, said: str
) -> None:
    text = f'[[setup]]\npath = "."\nfactors = {factors}\n[[workload]]\nrw = "read"\n'
    with pytest.raises(PlanError, match=r"plan\.toml:") as raised:
        parse_plan(text, "plan.toml")
    assert said in str(raised.value)


# ---------------------------------------------------------------- imports carry factors


def test_a_published_tables_set_up_columns_are_its_factors_and_pivot_it(
    tmp_path: Path, dd_store: Path
) -> None:
    store = Store(dd_store, create=False)
    stored = {name: Setup.from_definition(d).factors for name, d, _ in store.setups(1)}
    assert stored["Areca 1680i RAID5 of 4"] == (
        ("card", "Areca 1680i"),
        ("raid_level", "5"),
        ("drives", "4"),
    )
    done = iolab_here(
        "report",
        "--db",
        "c.db",
        "--pivot",
        "card:raid_level",
        "--format",
        "markdown",
        cwd=tmp_path,
        check=True,
    )
    page = done.stdout
    assert "## By factor: card by raid_level" in page
    assert "| card | 1 | 0 | 5 |" in page
    for row in _rows(DD):  # every figure the study printed, in its card's row, level's column
        cells = next(
            line
            for line in page.split("### dd 100M rw=write")[1].splitlines()
            if line.startswith(f"| {row['card']} |")
        )
        assert f"{int(row['write_MB/s']):,}" in cells or f"{row['write_MB/s']}.0" in cells
    assert "| Areca 1680i | — |" in page  # no RAID1 on the Areca: none, not a zero


def test_a_factor_that_differs_the_same_way_on_every_card_is_a_finding(tmp_path: Path) -> None:
    iolab_here("import", str(DD), str(BONNIE), "--db", "c.db", cwd=tmp_path, check=True)
    done = iolab_here("report", "--db", "c.db", "--format", "json", cwd=tmp_path, check=True)
    said = [f for f in json.loads(done.stdout)["findings"] if f["kind"] == "factor"]
    write = [f["sentence"] for f in said if f["sentence"].startswith("raid_level=5 ")]
    # study C: RAID0 writes faster than RAID5 on all three cards (821/369, 515/397, 638/325)
    assert write == [
        "raid_level=5 slows dd 100M rw=write to about 0.56x of raid_level=0's on every card "
        "and drives (0.45x-0.77x; 3 pairs; but 6 of these 6 figures carry warnings "
        "(published, cache-size))."
    ]
    # and the cards rank as the study ranked them: Adaptec > Areca > 3ware
    cards = [f["sentence"] for f in said if f["sentence"].startswith("card=")]
    assert any(
        s.startswith("card=Areca 1680i slows") and "of card=Adaptec 5805's" in s for s in cards
    )
    assert any(
        s.startswith("card=3ware 9690SA-4I slows") and "of card=Areca 1680i's" in s for s in cards
    )
    assert not any(" helps " in s for s in cards)


def test_import_factor_flags_name_every_set_up_or_one(tmp_path: Path) -> None:
    iolab_here(
        "import",
        str(VERTEX),
        "--db",
        "v.db",
        "--factor",
        "drives=OCZ Vertex 3",
        "--factor",
        "PERC H710P ARA+WB=policy=ARA+WB",
        "--factor",
        "PERC H710P NRA+WT=policy=NRA+WT",
        "--factor",
        "no RAID card=policy=none",
        cwd=tmp_path,
        check=True,
    )
    store = Store(tmp_path / "v.db", create=False)
    stored = {name: dict(Setup.from_definition(d).factors) for name, d, _ in store.setups(1)}
    assert stored["PERC H710P NRA+WT"] == {"drives": "OCZ Vertex 3", "policy": "NRA+WT"}
    done = iolab_here(
        "report", "--db", "v.db", "--pivot", "drives:policy", cwd=tmp_path, check=True
    )
    assert "4k rw=read (IOPS): drives by policy" in done.stdout and "ARA+WB" in done.stdout


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("card", "--factor 'card': give NAME=VALUE, or SETUP=NAME=VALUE"),
        ("ca,rd=x", "holds one of , : ="),
        ("nowhere=card=x", "--factor names set-up 'nowhere', which this import does not have"),
    ],
)
def test_a_bad_factor_flag_is_one_line_and_imports_nothing(
    tmp_path: Path, flag: str, said: str
) -> None:
    done = run_iolab("import", str(VERTEX), "--db", "v.db", "--factor", flag, cwd=tmp_path)
    assert done.returncode != 0 and said in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "v.db").exists()


def test_factors_travel_with_an_export(tmp_path: Path, dd_store: Path) -> None:
    iolab_here("export", "--db", "c.db", "-o", "c.json", cwd=tmp_path, check=True)
    iolab_here("import", "c.json", "--db", "again.db", cwd=tmp_path, check=True)
    store = Store(tmp_path / "again.db", create=False)
    stored = {name: dict(Setup.from_definition(d).factors) for name, d, _ in store.setups(1)}
    assert stored["3ware 9690SA-4I RAID0 of 4"]["card"] == "3ware 9690SA-4I"


# ---------------------------------------------------------------- pivots refused plainly


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
@pytest.mark.parametrize(
    ("pivot", "said"),
    [
        ("card", "--pivot 'card': give ROWS:COLUMNS"),
        ("card:card", "name each factor once"),
        ("card:policy", "has no factor 'policy' (its factors: card, raid_level, drives)"),
        ("drives:raid_level", "share drives=4, raid_level=0 and ran the same workloads"),
    ],
)
def test_a_pivot_that_cannot_be_laid_out_is_one_line(
    tmp_path: Path, dd_store: Path, pivot: str, said: str
) -> None:
    done = run_iolab("report", "--db", "c.db", "--pivot", pivot, cwd=tmp_path)
    assert done.returncode != 0 and said in done.stderr and "Traceback" not in done.stderr


# ---------------------------------------------------------------- a plan run, pivoted


PLAN = """\
name = "factors"
[defaults]
size = "8m"
runtime = 1
{setups}
[[workload]]
name = "4k random read"
rw = "randread"
bs = "4k"
"""


def _factorial_plan(folder: Path) -> Path:
    setups = ""
    for card in ("P420i", "H|710<b>"):  # a name Markdown and HTML must escape
        for level in ("raid0", "raid5"):
            for policy in ("write-back", "write-through"):
                setups += (
                    f'[[setup]]\nname = "{card} {level} {policy}"\npath = "."\n'
                    f'factors = {{ card = "{card}", level = "{level}", '
                    f'policy = "{policy}" }}\n'
                )
    path = folder / "factors.toml"
    path.write_text(PLAN.format(setups=setups))
    return path


@pytest.mark.fio
def test_a_card_by_level_by_policy_plan_pivots_everywhere_and_claims_nothing_on_a_busy_host(
    workdir: Path,
) -> None:
    plan = _factorial_plan(workdir)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # a neighbour on a CPU
    try:
        run_iolab("run", str(plan), cwd=workdir, check=True)
    finally:
        busy.kill()
        busy.wait()
    pivot = ("--pivot", "card,level:policy")
    terminal = run_iolab("report", *pivot, cwd=workdir, check=True).stdout
    assert "4k random read (IOPS): card, level by policy" in terminal
    markdown = run_iolab("report", *pivot, "--format", "markdown", cwd=workdir, check=True).stdout
    assert "| card | level | write-back | write-through |" in markdown
    assert "| H\\|710&lt;b&gt; | raid5 |" in markdown or "| H\\|710\\<b\\> | raid5 |" in markdown
    html = run_iolab("report", *pivot, "--format", "html", cwd=workdir, check=True).stdout
    assert "H|710&lt;b&gt;" in html and "H|710<b>" not in html
    document = json.loads(
        run_iolab("report", *pivot, "--format", "json", cwd=workdir, check=True).stdout
    )
    # every set-up read the same file: no factor makes a difference on every pairing, busy
    # host or not; a finding here would be noise called an effect
    assert not [f for f in document["findings"] if f["kind"] == "factor"]
    exported = workdir / "tables"
    run_iolab("report", *pivot, "--export", str(exported), cwd=workdir, check=True)
    with (exported / "pivot-1.csv").open() as handle:
        lines = list(csv.reader(handle))
    assert lines[0][:3] == ["card", "level", "policy"] and len(lines) == 9
    assert all(float(line[3]) > 0 for line in lines[1:])
