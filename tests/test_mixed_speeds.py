"""A figure that mixes two speeds is said so, not called settled (issue 30, finding 4).

Pure: the rule of analysis.levels on series a shared host makes (its false-alarm figures,
from seeded synthetic level series) and on the shapes it must and must not call a step;
the warning's words; the time chart's caption and marks. Real: a loop device written by
fio at one speed and throttled to a tenth of it by the block cgroup 5 s into the case (the
test sets the limit while the case runs) is warned on its cell in every format with both
speeds, the time and what was written by then, and its time chart names the step and shades
no settling; fio's own JSON and logs of such a case, imported, are warned alike; the same
case at one speed throughout is not warned.
"""

from __future__ import annotations

import csv
import functools
import html
import json
import math
import random
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import IOLAB, needs_root, results_of, run_iolab
from iolab.analysis import levels
from iolab.model import Sample
from iolab.report import data
from iolab.report.views import time_figures
from iolab.report.views.time_figures import _Stepped, _time_chart, _TimeNotes
from iolab.store import Store
from loopdevs import LoopDevs, loops_fixture
from test_history import throttle, throttle_device

_ = (loops_fixture, throttle)
MIB = 1024 * 1024
WARNED = "⚑"


# ------------------------------------------------------------------ the rule, on series


def noisy(rng: random.Random, n: int, scatter: float, rho: float, dips: float) -> list[float]:
    """A level series of `n` seconds at 1,000 with a shared host's noise: a scatter of
    `scatter` (relative), correlated `rho` from one second to the next, and a dip to 40-70%
    of the speed for 1 to 3 s starting in a share `dips` of the seconds."""
    out, drift, left, depth = [], 0.0, 0, 1.0
    for _ in range(n):
        drift = rho * drift + math.sqrt(1 - rho * rho) * rng.gauss(0, scatter)
        if left == 0 and rng.random() < dips:
            left, depth = rng.randint(1, 3), rng.uniform(0.4, 0.7)
        out.append(max(0.0, 1000 * (depth if left else 1.0) * (1 + drift)))
        left = max(0, left - 1)
    return out


SERIES = 600


@pytest.mark.parametrize(
    ("scatter", "rho", "dips", "most_false", "least_found"),
    [
        (0.10, 0.3, 0.02, 1, 575),  # a quiet host
        (0.15, 0.5, 0.03, 2, 565),  # a host with other work
        (0.15, 0.7, 0.05, 4, 560),
        (0.25, 0.5, 0.05, 9, 545),  # a busy one
    ],
)
def test_level_series_with_a_shared_hosts_noise_rarely_fire_and_cliffs_are_found(
    scatter: float, rho: float, dips: float, most_false: int, least_found: int
) -> None:
    """The false-alarm and detection figures that analysis.levels states, out of 600 level
    series of 8 to 120 s each (seeded: the same every time)."""
    rng = random.Random(7)
    fired = [
        len(values)
        for values in (noisy(rng, rng.randint(8, 120), scatter, rho, dips) for _ in range(SERIES))
        if levels.shift(values, 3) is not None
    ]
    rng = random.Random(9)
    found = 0
    for _ in range(SERIES):
        values = noisy(rng, rng.randint(8, 120), scatter, rho, 0.0)
        cut = rng.randint(3, len(values) - 3)
        cliff = values[:cut] + [v / 10 for v in values[cut:]]  # an SLC cache ran out
        step = levels.shift(cliff, 3)
        found += step is not None
        assert step is None or step.before > 3 * step.after, (cut, step)  # the fall found
    assert len(fired) <= most_false, fired
    assert found >= least_found


LEVEL = [1000.0, 1040.0, 980.0, 1010.0, 995.0, 1025.0, 990.0, 1005.0, 1015.0, 985.0] * 2


@pytest.mark.parametrize(
    ("values", "index"),
    [
        (LEVEL, None),  # level
        ([2000.0, 1800.0, *LEVEL], None),  # a 2 s warm-up is settling, not a level
        ([*LEVEL, 500.0, 480.0], None),  # 2 s at the end: not lasting
        ([*LEVEL[:10], 400.0, 410.0, *LEVEL[:10]], None),  # a dip that came back
        ([1900.0, 1950.0, 1880.0, *[20.0 + i % 3 for i in range(20)]], 3),  # a cliff after 3 s
        ([*LEVEL[:7], *[v / 2 for v in LEVEL[:13]]], 7),  # half the speed after 7 s
        ([*LEVEL[:12], *[v * 1.6 for v in LEVEL[:8]]], 12),  # a rise that lasted
        ([*LEVEL[:15], *[v * 0.75 for v in LEVEL[:5]]], None),  # 25% slower: not material
        ([*LEVEL, *LEVEL, *LEVEL, 600.0, 590.0, 610.0], None),  # 3 s of 63: mean moved 2%
        ([1000.0, 1000.0, 1000.0, 10.0, 10.0], None),  # under 6 intervals: no change
        ([1000.0, 1000.0, 1000.0, 10.0, 10.0, 10.0], 3),
        ([0.0] * 10, None),  # idle: no level to compare
        ([1000.0, 300.0, 1000.0, 300.0, 1000.0, *[1000.0, 300.0] * 6], None),  # see-saw
    ],
)
def test_what_is_a_step(values: list[float], index: int | None) -> None:
    found = levels.shift(values, 3)
    assert (found.index if found else None) == index, found


def samples(fast: float, slow: float, cut: int, total: int, bs: int = MIB) -> list[Sample]:
    """fio's per-second writes: `fast` bytes/s up to `cut` s, then `slow` to `total` s."""
    out = []
    for second in range(1, total + 1):
        value = fast if second <= cut else slow
        out.append(Sample("bw", "write", second * 1000, value))
        out.append(Sample("iops", "write", second * 1000, value / bs))
    return out


def test_the_warning_says_which_speed_is_which() -> None:
    found = levels.step(samples(1900e6, 20e6, 7, 30))
    assert found is not None
    (warned,) = levels.warnings(samples(1900e6, 20e6, 7, 30))
    assert warned.code == "mixed-speeds"
    assert warned.message.startswith(
        "458.7 MB/s mixes two speeds: 1,900 MB/s (1,812 IOPS) for the first 7 s (13.3 GB "
        "written), then 20.0 MB/s (19 IOPS) for the 23 s after; the speed fell 99% at 7 s"
    ), warned.message
    assert "Run longer" in warned.advice
    reads = [Sample("bw", "read", s.time_ms, s.value) for s in samples(100e6, 300e6, 8, 20)]
    (rose,) = levels.warnings(reads)
    assert "100.0 MB/s for the first 8 s (800 MB read), then 300.0 MB/s" in rose.message
    assert "rose 200% at 8 s" in rose.message and "IOPS" not in rose.message


def test_a_start_from_a_standstill_is_a_rise() -> None:
    (warned,) = levels.warnings(samples(0.0, 50e6, 4, 20))
    assert "0.00 MB/s (0 IOPS) for the first 4 s (0 B written), then 50.0 MB/s" in warned.message
    assert "the speed rose from a standstill at 4 s" in warned.message


@pytest.mark.parametrize(
    "series",
    [
        [],  # no log
        [Sample("bw", "write", 1000, 5e6)],  # one interval
        samples(100e6, 100e6, 5, 20),  # one speed
        [Sample("iops", "write", t * 1000, 10.0 if t < 9 else 1.0) for t in range(1, 20)],
        [Sample("bw", "write", 500, 5e6)] * 12,  # one time, twelve jobs' lines
    ],
)
def test_no_step_where_the_log_cannot_show_one(series: list[Sample]) -> None:
    assert levels.warnings(series) == ()


def test_half_second_logs_need_six_intervals_a_side() -> None:
    fast = [Sample("bw", "write", t * 500, 200e6) for t in range(1, 5)]
    slow = [Sample("bw", "write", t * 500, 20e6) for t in range(5, 30)]
    assert levels.step(fast + slow) is None, "2 s is not lasting"
    fast += [Sample("bw", "write", t * 500, 200e6) for t in (5, 6)]
    found = levels.step(fast + slow[2:])
    assert found is not None and found.before.seconds == 3.0 and found.at_s == 3.0


# ------------------------------------------------------------------ the time chart

STEADY_THEN_FAST = [(float(t), 1000.0 if t > 3 else 3000.0) for t in range(1, 21)]


def _chart(runs: dict[str, list[list[tuple[float, float]]]], steps: tuple[_Stepped, ...]) -> Any:
    notes = _TimeNotes({"log_avg_msec": 1000}, "", 0, steps)
    return _time_chart("1m seq write", "bw", runs, notes, {}, set())


def test_a_step_is_named_not_shaded_as_settling() -> None:
    cliff = samples(1900e6, 20e6, 7, 30)
    step = levels.step(cliff)
    assert step is not None
    points = [(s.time_ms / 1000, s.value) for s in cliff if s.metric == "bw"]
    chart = _chart({"ssd": [points], "hdd": [STEADY_THEN_FAST]}, (_Stepped("ssd", step, 1, 1),))
    assert [r.label for r in chart.regions] == ["step: ssd"]
    assert (chart.regions[0].start, chart.regions[0].end) == (7.0, 8.0)
    assert "A step, not settling: ssd fell from 1,900 to 20.0 MB/s at 7 s (13.3 GB written" in (
        chart.caption
    )
    assert "The other lines settled by 4 s" in chart.caption
    assert "Shaded from 0" not in chart.caption
    plain = _chart({"hdd": [STEADY_THEN_FAST]}, ())
    assert [r.label for r in plain.regions] == ["settling"], "settling is still shaded alone"


# ------------------------------------------------------------------ a real device slowed

FAST, SLOW = 40_000_000, 4_000_000  # bytes/s the block cgroup lets fio write (fio gets
# about half of each here, and the slow one is coarse at a few I/Os a second: the levels are
# checked against each other and against what the device counted, not against these)
STARTED = 4 * MIB  # written to the device: fio's case has begun
SWITCH_AFTER_S = 5.0  # then the test slows the device after this long
PLAN = """
name = "cliff"
[[setup]]
name = "disk"
devices = ["{dev}"]
[[workload]]
name = "1m seq write"
rw = "write"
bs = "1m"
iodepth = 4
size = "128m"
runtime = 14
time_based = 1
"""
LEVELS = re.compile(
    r"([\d,.]+) MB/s mixes two speeds: ([\d,.]+) MB/s \([\d,]+ IOPS\) for the first ([\d.]+) s "
    r"\(([\d.]+) MB written\), then ([\d,.]+) MB/s \([\d,]+ IOPS\) for the ([\d.]+) s after; "
    r"the speed fell \d+% at ([\d.]+) s"
)


def limit_writes(group: tuple[Path, str], device: str, bps: int | None) -> None:
    """The cgroup's writes to `device` held to `bps` bytes/s (None: free)."""
    throttle_device(group, device, "wbps", bps)


def written(device: str) -> int:
    """Bytes written to the device since it was set up (/sys/block/X/stat, sectors)."""
    stat = Path(f"/sys/block/{Path(device).name}/stat").read_text().split()
    return int(stat[6]) * 512


def run_in(
    group: tuple[Path, str], cwd: Path, argv: list[str], dev: str, when: Callable[[], None]
) -> int:
    """`argv` with its processes (fio's too) in the cgroup; `when` is called SWITCH_AFTER_S
    after fio's writes to `dev` began, while the case runs. The bytes the device had been
    written by then, since `argv` began."""
    args = ["sh", "-c", f'echo $$ > {group[0] / "cgroup.procs"} && exec "$@"', "sh", *argv]
    start = written(dev)
    child = subprocess.Popen(
        args, cwd=cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while child.poll() is None and written(dev) - start < STARTED:
        assert time.monotonic() < deadline, "fio wrote nothing"
        time.sleep(0.02)
    time.sleep(SWITCH_AFTER_S)
    when()
    moved = written(dev) - start
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, out + err
    return moved


def slowed(workdir: Path, loops: LoopDevs, throttle: tuple[Path, str]) -> tuple[int, int]:
    """Run 1: the case at one speed throughout. Run 2: at that speed for 5 s, then at a tenth
    of it to its end. Then the same as run 2 by fio itself, its JSON and logs left in
    workdir/fio for `iolab import`. The bytes written before the device slowed in run 2 and
    in fio's."""
    dev = loops.make(256)
    (workdir / "plan.toml").write_text(PLAN.format(dev=dev))
    run = [*IOLAB, "run", "plan.toml", "--new", "--yes-destroy", dev]
    (workdir / "fio").mkdir()
    fio = [
        "fio",
        "--name=seqw",
        f"--filename={dev}",
        "--rw=write",
        "--bs=1m",
        "--iodepth=4",
        "--ioengine=io_uring",
        "--direct=1",
        "--time_based",
        "--runtime=14",
        "--log_avg_msec=1000",
        "--write_bw_log=seqw",
        "--write_iops_log=seqw",
        "--output-format=json",
        "--output=seqw.json",
    ]
    try:
        limit_writes(throttle, dev, FAST)
        run_in(throttle, workdir, run, dev, lambda: None)
        slower = functools.partial(limit_writes, throttle, dev, SLOW)
        moved = run_in(throttle, workdir, run, dev, slower)
        limit_writes(throttle, dev, FAST)
        return moved, run_in(throttle, workdir / "fio", fio, dev, slower)
    finally:
        limit_writes(throttle, dev, None)


def report(workdir: Path, run: int, *args: str) -> str:
    return run_iolab("report", str(run), *args, cwd=workdir, check=True).stdout


def said_levels(text: str) -> tuple[float, ...]:
    """The warning's figures: the case's, the first speed, its seconds, MB written by
    then, the second speed, its seconds, when it changed."""
    found = LEVELS.search(text)
    assert found, text
    return tuple(float(g.replace(",", "")) for g in found.groups())


def check_levels(text: str, moved: int) -> None:
    """Both speeds (the second about a tenth of the first), the figure between them, when
    it changed (about 5 s in) and how much was written by then (what the device counted,
    give or take an interval at the first speed)."""
    figure, fast, first, said, slow, after, at = said_levels(text)
    assert 4 <= fast / slow <= 20 and slow < figure < fast, (fast, slow, figure)
    # 14 s asked; fio's logs may hold a partial interval at each end, two on a loaded host
    assert 4 <= first <= 9 and 4 <= after <= 12 and first + after <= 16, (first, after)
    assert abs(at - first) <= 1 and abs(said - moved / 1e6) <= 1.5 * fast, (said, moved, fast)


def cells(document: Any) -> Iterator[dict[str, Any]]:
    """Every table cell of a JSON report."""
    if isinstance(document, dict):
        if "warnings" in document and "value" in document:
            yield document
        for value in document.values():
            yield from cells(value)
    elif isinstance(document, list):
        for value in document:
            yield from cells(value)


@pytest.mark.fio
@pytest.mark.root
@needs_root()
def test_a_device_slowed_mid_case_is_said_in_every_format(
    workdir: Path, loops: LoopDevs, throttle: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # the terminal table's cell on one line, all its codes
    moved, by_fio = slowed(workdir, loops, throttle)
    check_slowed(workdir, moved)
    check_steady(workdir)
    check_imported(workdir, by_fio)


def check_slowed(slowed: Path, moved: int) -> None:
    """Run 2's cell is warned in every format, and its chart names the step."""
    terminal = report(slowed, 2)
    row = next(line for line in results_of(terminal).splitlines() if "1m seq write" in line)
    assert WARNED in row and "mixed-speeds" in row, row
    check_levels(" ".join(terminal.split()), moved)  # the warning under the table, unwrapped
    markdown = report(slowed, 2, "--format", "markdown")
    row = next(line for line in results_of(markdown).splitlines() if "1m seq write" in line)
    assert "mixed-speeds" in row, row
    check_levels(markdown, moved)
    page = slowed / "r.html"
    report(slowed, 2, "--format", "html", "-o", str(page))
    titles = re.findall(r'<td class="[^"]*warned[^"]*" title="([^"]*)"', page.read_text())
    (title,) = [html.unescape(t) for t in titles if "mixed-speeds" in html.unescape(t)]
    check_levels(title, moved)
    assert "A step, not settling: disk fell from" in html.unescape(page.read_text())
    rows = list(csv.DictReader(report(slowed, 2, "--format", "csv").splitlines()))
    assert ["mixed-speeds" in r["flags"].split(";") for r in rows] == [True], rows
    (cell,) = [
        c
        for c in cells(json.loads(report(slowed, 2, "--format", "json")))
        if any(w["code"] == "mixed-speeds" for w in c["warnings"])
    ]
    message = next(w["message"] for w in cell["warnings"] if w["code"] == "mixed-speeds")
    check_levels(message, moved)
    with Store(slowed / "iolab.db") as store:
        charts = time_figures.time_series(data.load(store, [2]))
    assert charts
    for chart in charts:
        assert [r.label for r in chart.regions] == ["step: disk"], chart.regions
        assert "A step, not settling: disk fell from" in chart.caption
        assert "Shaded from 0" not in chart.caption


def check_imported(slowed: Path, moved: int) -> None:
    """fio's own JSON and logs of the same case, imported, are warned alike."""
    done = run_iolab("import", "fio", "--db", "imported.db", "--setup", "disk", cwd=slowed)
    assert done.returncode == 0, done.stderr
    text = report(slowed, 1, "--db", "imported.db", "--format", "json")
    (cell,) = [
        c
        for c in cells(json.loads(text))
        if any(w["code"] == "mixed-speeds" for w in c["warnings"])
    ]
    message = next(w["message"] for w in cell["warnings"] if w["code"] == "mixed-speeds")
    check_levels(message, moved)


def check_steady(slowed: Path) -> None:
    """Run 1, the same case at one speed, is not warned and its chart names no step."""
    for fmt in ("table", "markdown", "csv", "json"):
        assert "mixed-speeds" not in report(slowed, 1, "--format", fmt), fmt
    with Store(slowed / "iolab.db") as store:
        charts = time_figures.time_series(data.load(store, [1]))
    assert charts and all("step" not in c.caption for c in charts)


def test_the_code_is_documented_with_the_checks() -> None:
    """The checks' table (docs/methods.md) names the code, as tests/test_docs.py asks of the
    checks that read one case's figures; the time chart's doc says a step is not settling."""
    docs = Path(__file__).parent.parent / "docs"
    methods = (docs / "methods.md").read_text()
    assert f"- `{levels.CODE}`:" in methods[methods.index("## Methodology checks") :]
    assert f"(warning `{levels.CODE}`)" in (docs / "reports.md").read_text()
