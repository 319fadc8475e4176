"""A plan's history and the `iolab check` gate (analysis.history): on pure series, and on a
real regression made on this machine: the same plan on a loop device, then with the device
throttled (the blkio controller's read IOPS limit, cgroup v1, or io.max on cgroup v2), then
free again."""

from __future__ import annotations

import csv
import os
import random
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import IOLAB, needs_root, run_iolab
from iolab.analysis import gate_verdicts, history
from iolab.analysis.history import RunPoint, RunSeries
from iolab.analysis.stats import PredictionBounds, predict_ratio
from iolab.choices import HISTORY_LEAST
from iolab.cli import EXIT_NOT_JUDGED, EXIT_REGRESSION, main
from iolab.errors import PlanError
from iolab.plan import gate
from iolab.plan.load import load_file, parse_plan
from iolab.report import history as report_history
from iolab.store import CaseRow, Store
from iolab.store.figures import CaseFigures, of_row
from loopdevs import LoopDevs, loops_fixture

_ = loops_fixture
BLKIO = Path("/sys/fs/cgroup/blkio")
UNIFIED = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


def one(points: list[tuple[int, tuple[float, ...]]], metric: history.Metric = "iops") -> RunSeries:
    found = tuple(RunPoint(run, float(run), values) for run, values in points)
    return RunSeries("here", "4k", metric, found, ())


RULES = gate_verdicts.Gate({"iops": 5.0, "p99": 10.0})


def test_the_gate_by_the_rule_fails_only_beyond_the_rule_and_the_noise() -> None:
    """With too little history before a baseline named, the rule judges against it alone;
    without one named, the run is not judged."""
    steady = one([(1, (100.0, 101.0, 99.0)), (2, (60.0, 61.0, 59.0))])
    (verdict,) = gate_verdicts.gate([steady], 2, 1, RULES)
    assert verdict.regression and "beyond the rule and the noise" in verdict.words
    noisy = one([(1, (100.0, 140.0, 60.0)), (2, (90.0, 130.0, 50.0))])
    (verdict,) = gate_verdicts.gate([noisy], 2, 1, RULES)
    assert not verdict.regression and "within the noise" in verdict.words
    better = one([(1, (100.0, 101.0)), (2, (150.0, 151.0))])
    assert not gate_verdicts.gate([better], 2, 1, RULES)[0].regression
    slower = one([(1, (100.0, 101.0)), (2, (150.0, 151.0))], "p99")
    assert gate_verdicts.gate([slower], 2, 1, RULES)[0].regression, "latency: higher is worse"
    (unnamed,) = gate_verdicts.gate([steady], 2, None, RULES)
    assert (unnamed.how, unnamed.regression) == ("short", False)
    assert gate_verdicts.outcome([unnamed]) == "not judged"


def test_a_step_is_marked_when_it_matters_and_is_beyond_the_noise() -> None:
    points = [
        RunPoint(1, 1.0, (58_496.0, 58_600.0, 58_400.0)),
        RunPoint(2, 2.0, (60_179.0, 60_300.0, 60_100.0)),
        RunPoint(3, 3.0, (59_560.0, 59_600.0, 59_500.0)),
        RunPoint(4, 4.0, (58_900.0, 59_000.0, 58_800.0)),
        RunPoint(5, 5.0, (60_900.0, 61_000.0, 60_800.0)),  # +3.4%: beyond? too small
        RunPoint(6, 6.0, (301.0, 300.0, 302.0)),  # the step
        RunPoint(7, 7.0, (320.0, 200.0, 410.0)),
    ]  # +2.8% ± a lot: noise
    judged = history.standings(points, ())
    steps = history.steps_of(judged, "iops", {6: {"kernel": "6.1"}, 5: {"kernel": "6.0"}})
    assert [s.run_id for s in steps] == [6]
    assert steps[0].facts == ("kernel 6.0 -> 6.1",) and steps[0].significant


@pytest.fixture
def throttle() -> Iterator[tuple[Path, str]]:
    """A cgroup whose processes' reads from a device can be limited: (its procs file, the
    file that limits them, in the version's own syntax)."""
    if BLKIO.is_dir():
        group = BLKIO / f"iolab-test-{os.getpid()}"
        group.mkdir()
        yield group, "v1"
        group.rmdir()
        return
    root = next((p for p in UNIFIED if (p / "cgroup.controllers").exists()), None)
    if root is None or "io" not in (root / "cgroup.controllers").read_text().split():
        pytest.fail("no blkio (cgroup v1) and no io controller (cgroup v2) to throttle with")
    (root / "cgroup.subtree_control").write_text("+io")
    group = root / f"iolab-test-{os.getpid()}"
    group.mkdir()
    yield group, "v2"
    group.rmdir()


V1_FILES = {"riops": "blkio.throttle.read_iops_device", "wbps": "blkio.throttle.write_bps_device"}


def throttle_device(group: tuple[Path, str], device: str, what: str, value: int | None) -> None:
    """The cgroup's reads (riops: I/Os a second) or writes (wbps: bytes a second) on `device`
    held to `value` (None: free), in the cgroup version's own syntax."""
    path, version = group
    rdev = os.stat(device).st_rdev
    where = f"{os.major(rdev)}:{os.minor(rdev)}"
    if version == "v1":
        (path / V1_FILES[what]).write_text(f"{where} {value or 0}\n")
    else:
        (path / "io.max").write_text(f"{where} {what}={value or 'max'}\n")


def limit(group: tuple[Path, str], device: str, iops: int | None) -> None:
    throttle_device(group, device, "riops", iops)


def run_in(group: tuple[Path, str], workdir: Path, dev: str) -> None:
    """`iolab run` with its processes (fio's too) in the cgroup."""
    procs = group[0] / "cgroup.procs"
    command = f'echo $$ > {procs} && exec "$@"'
    args = ["sh", "-c", command, "sh", *IOLAB, "run", "plan.toml", "--new", "--yes-destroy", dev]
    done = subprocess.run(args, cwd=workdir, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


PLAN = """
name = "nightly"
repeat = 3
[[setup]]
name = "disk"
devices = ["{dev}"]
[[workload]]
name = "4k randread QD1"
rw = "randread"
bs = "4k"
iodepth = 1
size = "32m"
runtime = 1
time_based = 1
randrepeat = 0
"""


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_real_regression_is_found_at_its_run(
    workdir: Path, loops: LoopDevs, throttle: tuple[Path, str]
) -> None:
    dev = loops.make(64)
    (workdir / "plan.toml").write_text(PLAN.format(dev=dev))
    for throttled in (False, False, False, True, True, False):
        limit(throttle, dev, 300 if throttled else None)
        run_in(throttle, workdir, dev)
    limit(throttle, dev, None)
    codes = {}
    for run in range(2, 5):  # three runs before the throttle: the rule alone, --baseline
        done = run_iolab("check", str(run), "--baseline", str(run - 1), cwd=workdir)
        codes[run] = done.returncode
        assert "Traceback" not in done.stderr and done.stderr == "", done.stderr
    loaded = _loaded(workdir)  # other load on a shared host: judged, its noise may pass 5%
    assert codes[4] == EXIT_REGRESSION, codes
    assert all(codes[r] == 0 or (r in loaded and codes[r] == 4) for r in (2, 3)), codes
    failing = run_iolab("check", "4", "--baseline", "3", cwd=workdir).stdout
    assert "REGRESSION: disk · 4k randread QD1 · " in failing  # IOPS or p99, on a loaded host
    assert run_iolab("check", "4", cwd=workdir).returncode == EXIT_NOT_JUDGED  # 3 runs before
    shown = run_iolab("history", cwd=workdir, check=True).stdout
    block = shown.split("disk · 4k randread QD1 · iops")[1].split("\n\n")[0]
    assert "<-" not in block, block  # three runs before the step do not know the noise
    with sqlite3.connect(workdir / "iolab.db") as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (6,)


@pytest.mark.slow
def test_bad_check_input_is_one_line(tmp_path: Path) -> None:
    for args, said in (
        (["check", "--rule", "bogus=3"], "'bogus=3' is not METRIC=PCT"),
        (["check", "--rule", "iops=-1"], "PCT from 0 to 1000"),
        (["history", "--db", "none.db"], "none.db"),
    ):
        done = run_iolab(*args, cwd=tmp_path)
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert said in done.stderr and "Traceback" not in done.stderr


GOLDEN = Path(__file__).parent / "golden" / "store.db"


def _loaded(workdir: Path) -> set[int]:
    """The runs whose cases carried foreign-load (other work on the host)."""
    with sqlite3.connect(workdir / "iolab.db") as con:
        rows = con.execute("SELECT run_id, warnings FROM cases").fetchall()
    return {run for run, said in rows if "foreign-load" in said}


def test_the_plans_check_table_sets_the_rules_and_the_command_line_wins(tmp_path: Path) -> None:
    """Run 2 of the golden store lost 22.3% ± 14.7% of its seq bandwidth on 'two' (means 891
    -> 692 MB/s): beyond the default 5%, by the rule alone (--baseline 1: one run before
    it); a plan whose [check] allows 30% passes it; --rule bw=5 fails it again."""
    store = tmp_path / "store.db"
    store.write_bytes(GOLDEN.read_bytes())
    invoke = CliRunner().invoke
    args = ["check", "2", "--db", str(store), "--baseline", "1"]  # two runs: the rule alone
    assert invoke(main, args).exit_code == EXIT_REGRESSION
    with sqlite3.connect(store) as db:
        (text,) = db.execute("SELECT plan_text FROM runs WHERE id = 2").fetchone()
        db.execute(
            "UPDATE runs SET plan_text = ? WHERE id = 2", (text + '\n[check]\nbw = "30%"\n',)
        )
    loose = invoke(main, args)
    assert loose.exit_code == 0, loose.output
    assert "12 series, 12 judged, 0 not judged, 0 regressions beyond rule and noise: PASS" in (
        loose.output
    )
    strict = invoke(main, [*args, "--rule", "bw=5"])
    assert strict.exit_code == EXIT_REGRESSION
    assert (
        "two · seq · bw: mean 891 -> 692 MB/s (-22.3% ± 14.7%; allowed 5% worse)" in strict.output
    )


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('iops = "5%"\nlatency = "3%"', "plan.toml:7: unknown key 'latency' in [check]"),
        ('p99 = "ten%"', "plan.toml:6: p99 = 'ten%' must be a percentage from 0 to 1000"),
        ("bw = -1", "plan.toml:6: bw = -1 must be a percentage"),
    ],
)
def test_a_bad_check_table_is_refused_at_its_line(tmp_path: Path, table: str, said: str) -> None:
    text = f'[[setup]]\npath = "."\n[[workload]]\nrw = "read"\n[check]\n{table}\n'
    (tmp_path / "plan.toml").write_text(text)
    with pytest.raises(PlanError, match=re.escape(said)):
        load_file(tmp_path / "plan.toml")


def test_the_check_table_is_read_back_from_a_runs_plan_text() -> None:
    found = gate.recorded_rules('[check]\niops = 2\np99 = "12.5%"\n')
    assert found == {"iops": 2.0, "p99": 12.5}
    assert gate.recorded_rules("[global]\nrw=read\n") == {}  # a job file: no rules
    # an imported export's plan text nesting arrays far deeper than Python's stack
    assert gate.recorded_rules("x = " + "[" * 100_000 + "]" * 100_000 + "\n") == {}
    text = '[[setup]]\npath = "."\n[[workload]]\nrw = "read"\n[check]\nbw = 7\n'
    loaded = parse_plan(text, "plan.toml")
    assert loaded.check == (("bw", 7.0),)


def _fio_json(workdir: Path, name: str, rw: str, bs: str) -> Path:
    out = workdir / f"{name}-{rw}.json"
    subprocess.run(
        [
            "fio",
            f"--name={name}",
            f"--rw={rw}",
            f"--bs={bs}",
            "--size=8m",
            "--runtime=1",
            "--time_based",
            f"--filename={workdir / 'data'}",
            "--output-format=json",
            f"--output={out}",
        ],
        check=True,
        capture_output=True,
    )
    return out


@pytest.mark.fio
def test_an_imported_run_whose_cases_are_the_plans_joins_its_history(workdir: Path) -> None:
    """fio's JSON from elsewhere, its job named as the plan's workload and imported as its
    set-up, joins the plan's history; one whose job does something else does not."""
    store = workdir / "store.db"
    store.write_bytes(GOLDEN.read_bytes())
    matching = _fio_json(workdir, "seq", "read", "128k")
    other = _fio_json(workdir, "seq", "write", "128k")  # the same name, another workload
    for found in (matching, other):
        run_iolab(
            "import", str(found), "--setup", "one", "--db", str(store), cwd=workdir, check=True
        )
    shown = run_iolab("history", "golden", "--db", str(store), cwd=workdir, check=True).stdout
    assert shown.startswith("plan 'golden': 3 runs, 12 series (imported runs joined: 3)"), shown
    block = shown.split("one · seq · bw (MB/s)")[1].split("\n\n")[0]
    assert [line.split()[1] for line in block.splitlines()[1:]] == ["1", "2", "3"], block
    assert block.splitlines()[3].split("(n=1)")[1].startswith(" imported"), block
    assert "run    4" not in shown


def test_a_case_joins_by_its_names_and_what_makes_its_workload() -> None:
    def row(setup: str, workload: str, **options: str | int) -> CaseFigures:
        return of_row(CaseRow(setup, workload, 0, 1, options, "ok", None, {}, ()))

    plan_cases = [row("one", "seq", rw="read", bs="128k", ioengine="auto", numjobs=1)]
    assert history.joins(plan_cases, [row("one", "seq", rw="read", bs="128k", ioengine="libaio")])
    assert history.joins(plan_cases, [row("one", "seq", rw="read", numjobs="1")])
    assert not history.joins(plan_cases, [row("one", "seq", rw="write")])
    assert not history.joins(plan_cases, [row("two", "seq", rw="read")])
    assert not history.joins(plan_cases, [])


def test_the_history_document_draws_each_series_that_moved_with_its_change_point() -> None:
    points = tuple(
        RunPoint(run, float(run), (100.0 if run < 7 else 80.0,) * 3) for run in range(1, 13)
    )
    change = history.RunChange(7, 0.005, 100.0, 80.0, -20.0, 1.0, ("kernel 6.1 -> 6.8",))
    moved = RunSeries("disk", "4k", "iops", points, (), (change,))
    calm = RunSeries("disk", "1m", "bw", points[:3], ())
    found = report_history.document("nightly", [], [moved, calm])
    assert [s.title for s in found.sections] == ["Series", "disk · 4k · iops"]
    (chart,) = found.charts()
    assert [r.label for r in chart.regions] == ["change point at run 7"]
    # points one step apart in time order (run 7 is the 7th, at 6), labelled by run id
    assert (chart.regions[0].start, chart.regions[0].end) == (5.0, 6.0)
    assert chart.x.ticks[6] == (6.0, "7") and chart.y.start_at_zero
    level = next(s for s in chart.series if s.name == "level between change points")
    assert level.y == (100.0,) * 6 + (80.0,) * 6
    assert chart.caption == (
        "Change points (the shaded runs): run 7: -20.0% ± 1.0% (kernel 6.1 -> 6.8)."
    )
    (table,) = found.tables()
    assert [r.cells[3].text for r in table.rows] == ["run 7", "none"]


@pytest.mark.slow  # draws charts
def test_history_as_markdown_and_html(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    store.write_bytes(GOLDEN.read_bytes())
    invoke = CliRunner().invoke
    done = invoke(
        main, ["history", "--db", str(store), "--format", "markdown", "-o", str(tmp_path / "h.md")]
    )
    assert done.exit_code == 0, done.output
    text = (tmp_path / "h.md").read_text()
    # two runs do not know the run-to-run noise: no step, no chart, every series in the table
    assert not re.findall(r"\]\((h_files/history-[^)]+\.png)\)", text), text
    assert "| seq | two | bw | 891.2 | 692.0 | 2 | none |" in text
    page = tmp_path / "h.html"
    assert (
        invoke(main, ["history", "--db", str(store), "--format", "html", "-o", str(page)]).exit_code
        == 0
    )
    assert "891.2" in page.read_text()
    refused = invoke(main, ["history", "--db", str(store), "-o", str(tmp_path / "h.txt")])
    assert refused.exit_code != 0 and "-o goes with --format markdown or html" in refused.output


DOCS = Path(__file__).parent.parent / "docs" / "history.md"


@pytest.mark.fio
def test_the_ci_example_in_the_docs_works_as_written(workdir: Path) -> None:
    """docs/history.md's CI job, its database moved into a scratch folder, on a small plan
    with the docs' own [check] table: night one has nothing to judge yet, night two too little
    history: both not judged, exit 5, never an error, the summary the last line."""
    text = DOCS.read_text()
    job = text.split("A CI job:\n\n```sh\n", 1)[1].split("```", 1)[0]
    rules = text.split("```toml\n[check]\n", 1)[1].split("```", 1)[0]
    (workdir / "nightly.toml").write_text(
        f'name = "nightly"\nrepeat = 2\n[[setup]]\npath = "{workdir}"\n[[workload]]\n'
        'rw = "randread"\nbs = "4k"\nsize = "16m"\nruntime = 1\n[check]\n' + rules
    )
    lines = [line.split("#")[0].split() for line in job.strip().splitlines()]
    assert [words[:2] for words in lines] == [
        ["iolab", "run"],
        ["iolab", "check"],
        ["iolab", "check"],
    ]
    commands = [[w.replace("/srv/iolab/", f"{workdir}/") for w in words[1:]] for words in lines]
    for night in (1, 2):
        for words in commands:
            done = run_iolab(*words, cwd=workdir)
            assert "Traceback" not in done.stderr, done.stderr
            if words[0] == "run":
                assert done.returncode == 0, done.stderr
            else:
                assert done.returncode == EXIT_NOT_JUDGED and done.stderr == "", done.stderr
                last = done.stdout.splitlines()[-1]
                assert last.startswith(f"check: run {night}") and ": 2 series, " in last, last
                assert last.endswith("NOT JUDGED (exit 5)"), last
                if night == 1:
                    assert "is the first run of plan 'nightly': nothing to judge yet" in (
                        done.stdout
                    )
    db = workdir / "nightly.db"  # the runs kept nothing derived from them
    with sqlite3.connect(db) as con:
        names = {str(r[0]) for r in con.execute("SELECT name FROM sqlite_master")}
    con.close()
    assert "derived" not in names and "revision" not in names
    shown = run_iolab("history", "--db", str(db), cwd=workdir, check=True).stdout
    assert shown.startswith("plan 'nightly': 2 runs, 2 series"), shown


def test_history_of_the_runs_named_and_as_csv(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    store.write_bytes(GOLDEN.read_bytes())
    invoke = CliRunner().invoke
    named = invoke(main, ["history", "2", "1", "--db", str(store)])
    assert named.output.startswith("plan 'golden': 2 runs, 12 series"), named.output
    table = invoke(main, ["history", "--db", str(store), "--format", "csv"]).output
    rows = list(csv.DictReader(table.splitlines()))
    assert len(rows) == 24 and rows[0]["setup"] == "one" and rows[0]["run"] == "1"
    step = next(
        r
        for r in rows
        if r["workload"] == "seq"
        and r["setup"] == "two"
        and r["metric"] == "bw"
        and r["run"] == "2"
    )
    assert step["step_pct"] == "", step  # two runs: no step, the noise is not known
    assert step["mean"].startswith("692") and step["started"].endswith(" UTC"), step
    assert float(step["ci95_low"]) < float(step["median"]) < float(step["ci95_high"])
    mixed = invoke(main, ["history", "1", "golden", "--db", str(store)])
    assert mixed.exit_code != 0 and "give one plan's name, or run numbers" in mixed.output


def test_a_long_history_reads_its_runs_together_and_only_the_p99(tmp_path: Path) -> None:
    """Store.cases_of_runs: every run's cases as Store.cases reads them, two queries for all;
    with percentiles=("99",), each direction's p99 alone (SQLite's json_extract)."""
    db = tmp_path / "store.db"
    db.write_bytes(GOLDEN.read_bytes())
    with Store(db) as store:
        together = store.cases_of_runs([1, 2], percentiles=("99",))
        for run_id in (1, 2):
            one_by_one = store.cases(run_id)
            assert [c.workload for c in together[run_id]] == [c.workload for c in one_by_one]
            for light, full in zip(together[run_id], one_by_one, strict=True):
                for direction, metrics in full.metrics.items():
                    assert light.metrics[direction].iops == metrics.iops
                    assert light.metrics[direction].percentiles_ns == {
                        "99": metrics.percentiles_ns["99"]
                    }
        with pytest.raises(ValueError, match="not a percentile key"):
            store.cases_of_runs([1], percentiles=("99'); DROP TABLE runs; --",))


def _walked_back(
    points: list[RunPoint], changes: tuple[history.RunChange, ...], window: int
) -> list[history.Standing]:
    """Standings as defined: for each point, its level found afresh and its window walked back
    from it (what history.standings keeps as it goes instead)."""
    starts = [i for i, p in enumerate(points) if p.run_id in {c.run_id for c in changes}]
    out: list[history.Standing] = []
    for i, point in enumerate(points):
        level = max((s for s in starts if s < i and i - s >= HISTORY_LEAST), default=0)
        earlier: list[int] = []
        for k in range(i - 1, level - 1, -1):
            if out[k].beyond == 0 or out[k].level != level:
                earlier.append(k)
        earlier = earlier[: window or None][::-1]
        ran = tuple(points[k].run_id for k in earlier)
        if len(earlier) < HISTORY_LEAST:
            out.append(history.Standing(point, None, ran, 0, level))
            continue
        noise = predict_ratio([points[k].mean for k in earlier])
        side = -1 if point.mean < noise.low else 1 if point.mean > noise.high else 0
        out.append(
            history.Standing(point, PredictionBounds(noise.low, noise.high), ran, side, level)
        )
    return out


@pytest.mark.parametrize("window", [4, 10, 0])
def test_standings_kept_as_they_go_are_the_ones_walked_back(window: int) -> None:
    rng = random.Random(window)
    points = []
    for run in range(1, 400):
        level = 1000.0 if run < 150 else 800.0 if run < 300 else 950.0
        if run % 37 == 0:
            level *= 1.3  # a lone outlier
        values = tuple(rng.gauss(level, 10) for _ in range(3))
        load = frozenset({history.FOREIGN}) if rng.random() < 0.05 else frozenset()
        points.append(RunPoint(run, float(run), values, load))
    changes = history.run_changes(points, {})
    assert len(changes) >= 2
    judged = history.standings(points, changes, window)
    assert judged == _walked_back(points, changes, window)
    assert {s.beyond for s in judged} == {-1, 0, 1}
