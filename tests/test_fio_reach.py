"""How far fio's I/O reaches, from one model (iolab.fio.reach), checked against fio itself
(issue 29, findings 1 and 2).

First the model against real fio: each row's options run on a 4 MiB file of random bytes
(four I/Os, a read-only workload); fio changes the file (grows it, rewrites it, truncates it)
exactly when the model says the job reaches past its end, and grows it to the size the model
says. Then the same rows as plans on a user's own file, through a plan, a job file and
--target: each refused in one line, exit 1, no traceback, the file's bytes unchanged, or (for
a region inside the file) run with the file unchanged. Then a small filesystem that a folder
target's offset would fill.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import Outcome, file_sha256, problems_with_output, run_iolab
from iolab.fio import jobfile, reach
from iolab.model import FioValue
from iolab.targets import evidence
from loopdevs import LoopDevs, loops_fixture, sh

_ = loops_fixture  # the `loops` fixture
MIB = 1024**2
FILE_SIZE = 4 * MIB

# (id, options, whether fio changes a 4 MiB file, the size the model says it reaches)
ROWS: list[tuple[str, dict[str, FioValue], bool, int]] = [
    ("size-equal", {"size": "4m"}, False, FILE_SIZE),
    ("size-smaller", {"size": "1m", "offset": "3m"}, False, FILE_SIZE),
    ("offset-past-size", {"size": "4m", "offset": "2m"}, True, 6 * MIB),
    ("offset-alone", {"offset": "2m"}, False, FILE_SIZE),
    ("offset-percent", {"offset": "75%"}, False, FILE_SIZE),
    ("offset-percent-size", {"size": "4m", "offset": "75%"}, True, 7 * MIB),
    ("offset-hex", {"offset": "0x300000", "size": "2m"}, True, 5 * MIB),
    ("offset-hex-inside", {"offset": "0x100000", "size": "2m"}, False, FILE_SIZE),
    ("increment", {"offset_increment": "4m", "numjobs": 2, "size": "2m"}, True, 6 * MIB),
    ("increment-inside", {"offset_increment": "1m", "numjobs": 4, "size": "1m"}, False, FILE_SIZE),
    ("increment-8-jobs", {"offset_increment": "1m", "numjobs": 8, "size": "1m"}, True, 8 * MIB),
    ("increment-percent", {"offset_increment": "50%", "numjobs": 3, "size": "1m"}, True, 5 * MIB),
    ("align", {"offset": "1%", "offset_align": "4m", "size": "1m"}, True, 5 * MIB),
    ("align-inside", {"offset": "25%", "offset_align": "1m", "size": "3m"}, False, FILE_SIZE),
    ("size-percent", {"size": "50%"}, False, FILE_SIZE),
    ("size-percent-offset", {"size": "90%", "offset": "2m"}, False, FILE_SIZE),
    ("size-whole-offset", {"size": "100%", "offset": "50%"}, False, FILE_SIZE),
    ("filesize", {"filesize": "6m"}, True, 6 * MIB),
    ("io-size-past", {"size": "1m", "io_size": "64m"}, False, FILE_SIZE),
    ("offset-near-end", {"offset": "99%", "size": "1m"}, True, 1014 * 4096 + MIB),
    ("mib-spelling", {"size": "1mb", "offset": "3MiB"}, False, FILE_SIZE),
    # filesize is a range [low, high] to fio (issue 40, finding 6): a file inside it is used as
    # it is, any other laid out to a size in it; "KiB" is 1000 bytes under fio's kb_base 1024
    ("filesize-range", {"filesize": "5m-6m"}, True, 6 * MIB),
    ("filesize-colon", {"filesize": "5m:6m"}, True, 6 * MIB),
    ("filesize-range-inside", {"filesize": "1m-8m"}, False, FILE_SIZE),
    ("filesize-comma-inside", {"filesize": "1m,4m"}, False, FILE_SIZE),
    ("filesize-kib-inside", {"filesize": "4096kib-8m"}, False, FILE_SIZE),
    ("filesize-kb-base", {"kb_base": 1000, "filesize": "4200k"}, True, 4_200_000),
    ("filesize-below", {"filesize": "1m"}, False, FILE_SIZE),
]
# fio changes the file, and the model refuses to bound the job at all
UNBOUNDED: list[tuple[str, dict[str, FioValue]]] = [
    ("size-over-100-percent", {"size": "101%"}),
    ("size-200-percent", {"size": "200%"}),
]


def _user_file(folder: Path, name: str = "userfile.bin") -> Path:
    path = folder / name
    path.write_bytes(os.urandom(FILE_SIZE))
    return path


def _fio(path: Path, options: dict[str, FioValue]) -> None:
    argv = ["fio", "--name=j", f"--filename={path}", "--rw=randread", "--bs=4k"]
    argv += ["--number_ios=4", "--output=/dev/null"]
    argv += [f"--{key}={value}" for key, value in options.items()]
    subprocess.run(argv, capture_output=True, check=False, timeout=60)


@pytest.mark.fio
@pytest.mark.parametrize(
    ("options", "changes", "size"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_the_model_says_what_fio_does_to_a_file(
    workdir: Path, options: dict[str, FioValue], changes: bool, size: int
) -> None:
    path = _user_file(workdir)
    before = file_sha256(path)
    predicted = reach.reach({"bs": "4k", **options}, FILE_SIZE)
    _fio(path, options)
    changed = file_sha256(path) != before or path.stat().st_size != FILE_SIZE
    assert reach.grows({"bs": "4k", **options}, FILE_SIZE) == changes
    assert changed == changes, f"fio {'changed' if changed else 'left'} the file"
    assert predicted == size
    if changes:  # the model is an upper bound of what fio lays out
        assert FILE_SIZE < path.stat().st_size <= predicted


@pytest.mark.fio
@pytest.mark.parametrize("options", [r[1] for r in UNBOUNDED], ids=[r[0] for r in UNBOUNDED])
def test_what_fio_truncates_the_model_refuses(workdir: Path, options: dict[str, FioValue]) -> None:
    path = _user_file(workdir)
    _fio(path, options)
    assert path.stat().st_size == 0  # fio truncated the user's file to nothing
    with pytest.raises(reach.Unreadable, match="over 100%"):
        reach.reach(options, FILE_SIZE)


@pytest.mark.parametrize(
    "value",
    ["$mb_memory", "${HOME}", "1.5m", "(2*1m)", "1e6", "0x1p", "-1", " ", "0x", "9" * 30, "1e"],
)
def test_a_value_the_model_cannot_bound_is_unreadable(value: str) -> None:
    with pytest.raises(reach.Unreadable):
        reach.regions({"offset": value, "size": "1m"}, FILE_SIZE)


def test_every_job_of_numjobs_has_its_region() -> None:
    regions = reach.regions(
        {"offset": "1m", "offset_increment": "2m", "numjobs": 3, "size": "1m"}, 0
    )
    assert [(r.start, r.end) for r in regions] == [
        (MIB, 2 * MIB),
        (3 * MIB, 4 * MIB),
        (5 * MIB, 6 * MIB),
    ]


# ---- what fio reads as unbounded, on a small filesystem (issue 40, findings 6 and 8) ----------

# (id, options): fio lays out a file of exabytes (until the filesystem is full), truncates the
# file, or dies of SIGFPE; the model refuses each, saying why
WRAPPING: list[tuple[str, dict[str, FioValue], str]] = [
    ("filesize-high-low", {"filesize": "40m-1m"}, "high to low"),
    ("filesize-high-low-colon", {"filesize": "40m:1m"}, "high to low"),
    ("filesize-high-low-spaces", {"filesize": "40m - 1m"}, "without spaces"),
    ("filesize-kb-above-kib", {"filesize": "1000kb-1000kib"}, "high to low"),
    ("filesize-no-e-unit", {"filesize": "2k-1e"}, "not a range"),
    ("filesize-percent", {"filesize": "50%"}, "percentage"),
    ("offset-align-zero", {"offset": "33%", "offset_align": "0"}, "SIGFPE"),
    ("offset-align-4g", {"offset": "33%", "offset_align": "4g"}, "32 bits"),
    ("offset-align-percent", {"offset": "33%", "offset_align": "50%", "size": "1m"}, "percent"),
]


def _small_filesystem(loops: LoopDevs, workdir: Path, mib: int = 40) -> Path:
    dev = loops.make(mib)
    sh("mkfs.ext4", "-q", dev)
    mnt = workdir / "small"
    loops.mount(dev, mnt)
    return mnt


@pytest.mark.root
@pytest.mark.fio
@pytest.mark.parametrize(
    ("options", "why"), [r[1:] for r in WRAPPING], ids=[r[0] for r in WRAPPING]
)
def test_what_fio_reads_unbounded_the_model_refuses(
    workdir: Path, loops: LoopDevs, options: dict[str, FioValue], why: str
) -> None:
    path = _user_file(_small_filesystem(loops, workdir))
    before = file_sha256(path)
    argv = ["fio", "--name=j", f"--filename={path}", "--rw=randread", "--bs=4k"]
    argv += ["--number_ios=4", "--output=/dev/null"]
    argv += [f"--{key}={value}" for key, value in options.items()]
    done = subprocess.run(argv, capture_output=True, check=False, timeout=120)
    harmed = done.returncode == -signal.SIGFPE or file_sha256(path) != before
    assert harmed, f"fio left the file as it was: {done.stderr[-500:]!r}"
    with pytest.raises(reach.Unreadable, match=why):
        reach.reach({"bs": "4k", **options}, FILE_SIZE)


@pytest.mark.root
@pytest.mark.fio
@pytest.mark.parametrize("way", ["plan", "jobfile"])
@pytest.mark.parametrize(
    ("options", "why"), [r[1:] for r in WRAPPING], ids=[r[0] for r in WRAPPING]
)
def test_a_range_fio_cannot_bound_on_a_users_file_is_refused_before_fio(
    workdir: Path, loops: LoopDevs, way: str, options: dict[str, FioValue], why: str
) -> None:
    small = _small_filesystem(loops, workdir)
    path = small / "mine.bin"
    path.write_bytes(os.urandom(16 * MIB))
    args = Way(way).args(small, path, options, "randread")
    before, free = file_sha256(path), os.statvfs(small).f_bfree
    done = run_iolab(*args, cwd=small)
    assert not problems_with_output(_outcome(done), [next(iter(options)), why]), done.stderr
    assert file_sha256(path) == before and path.stat().st_size == 16 * MIB
    assert os.statvfs(small).f_bfree == free
    assert not list(small.glob("iolab.testfile*"))


@pytest.mark.root
@pytest.mark.fio
@pytest.mark.parametrize(
    "value", ["40m-1m", "40m:1m", "40m - 1m", "50%"], ids=["dash", "colon", "spaces", "percent"]
)
def test_a_filesize_fio_cannot_bound_in_a_folder_is_refused_before_fio(
    workdir: Path, loops: LoopDevs, value: str
) -> None:
    small = _small_filesystem(loops, workdir, mib=96)  # past iolab's least free space
    keep = _user_file(small, "keep.bin")
    before, free = file_sha256(keep), os.statvfs(small).f_bfree
    lines = ['name = "f"', "[[setup]]", 'name = "small"', f'path = "{small}"', "[[workload]]"]
    lines += ['name = "w"', 'rw = "write"', 'bs = "1m"', f'filesize = "{value}"']
    (workdir / "plan.toml").write_text("\n".join(lines) + "\n")
    done = run_iolab("run", "plan.toml", cwd=workdir)
    assert not problems_with_output(_outcome(done), ["filesize", value]), done.stderr
    assert os.statvfs(small).f_bfree == free and file_sha256(keep) == before
    assert not (small / "iolab.testfile").exists()


# ---- the same options as iolab plans on a user's own file --------------------------------------


@dataclass(frozen=True)
class Way:
    """How a user hands iolab their file and the region options."""

    name: str

    def args(self, folder: Path, path: Path, options: dict[str, FioValue], rw: str) -> list[str]:
        if self.name == "plan":
            lines = ['name = "r"', "[[setup]]", 'name = "u"', f'path = "{path.name}"']
            lines += ["[[workload]]", 'name = "w"', f'rw = "{rw}"', 'bs = "4k"', "runtime = 1"]
            lines += ["time_based = 1"]
            lines += [f"{k} = {v!r}".replace("'", '"') for k, v in options.items()]
            (folder / "plan.toml").write_text("\n".join(lines) + "\n")
            return ["run", "plan.toml"]
        body = "".join(f"{k}={v}\n" for k, v in options.items())
        (folder / "job.fio").write_text(
            f"[global]\nruntime=1\ntime_based=1\n[w]\nfilename={path.name}\nrw={rw}\n{body}"
        )
        return ["run", "job.fio"]


WAYS = [Way("plan"), Way("jobfile")]
REFUSED = [r for r in ROWS if r[2]] + [(n, o, True, 0) for n, o in UNBOUNDED]
REFUSED += [
    ("keyword-offset", {"offset": "$mb_memory", "size": "1m"}, True, 0),
    ("keyword-increment", {"offset_increment": "$ncpus", "numjobs": 2, "size": "1m"}, True, 0),
    ("terabyte-hex", {"offset": "0x10000000000", "size": "1m"}, True, 0),
    ("fraction", {"offset": "1.5m", "size": "1m"}, True, 0),
]


def _bounded(options: dict[str, FioValue]) -> bool:
    """Whether the model bounds these options (then a refusal says how far they reach)."""
    try:
        reach.reach(options, FILE_SIZE)
    except reach.Unreadable:
        return False
    return True


def _outcome(done: subprocess.CompletedProcess[str]) -> Outcome:
    return Outcome(done.returncode, done.stdout, done.stderr, 0.0)


@pytest.mark.fio
@pytest.mark.parametrize("way", WAYS, ids=[w.name for w in WAYS])
@pytest.mark.parametrize("options", [r[1] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_a_region_past_a_users_file_is_refused(
    workdir: Path, way: Way, options: dict[str, FioValue]
) -> None:
    path = _user_file(workdir)
    before = file_sha256(path)
    done = run_iolab(*way.args(workdir, path, options, "randread"), cwd=workdir)
    assert not problems_with_output(_outcome(done), [])
    assert ("would reach" in done.stderr) == _bounded(options), done.stderr
    assert file_sha256(path) == before and path.stat().st_size == FILE_SIZE
    assert not list(workdir.glob("iolab.testfile*"))


@pytest.mark.fio
def test_a_writer_confirmed_with_yes_destroy_still_never_grows_the_file(workdir: Path) -> None:
    path = _user_file(workdir)
    before = file_sha256(path)
    args = Way("plan").args(workdir, path, {"size": "4m", "offset": "2m"}, "randwrite")
    done = run_iolab(*args, "--yes-destroy", str(path), cwd=workdir)
    assert not problems_with_output(_outcome(done), ["would reach 6.0 MiB", str(path)])
    assert file_sha256(path) == before


@pytest.mark.fio
def test_target_flag_with_an_offset_override_is_refused(workdir: Path) -> None:
    path = _user_file(workdir)
    before = file_sha256(path)
    (workdir / "plan.toml").write_text(
        'name = "r"\n[[setup]]\nname = "u"\npath = "."\n[[workload]]\nname = "w"\n'
        'rw = "read"\nbs = "4k"\nruntime = 1\ntime_based = 1\nsize = "4m"\noffset = "1m"\n'
    )
    done = run_iolab("run", "plan.toml", "--target", str(path), cwd=workdir)
    assert not problems_with_output(_outcome(done), ["would reach 5.0 MiB"])
    assert file_sha256(path) == before


REGIONS: dict[str, dict[str, FioValue]] = {
    "offset": {"offset": "2m"},
    "offset-auto": {"offset": "2m", "size": "auto"},
    "offset-percent": {"offset": "75%"},
    "increment": {"offset_increment": "1m", "numjobs": 2, "size": "1m"},
    "hex": {"offset": "0x100000", "size": "2m"},
}
# size = "auto" is iolab's, not fio's: a job file cannot say it, so that region is a plan's
REGION_WAYS = [
    pytest.param(way, options, id=f"{name}-{way.name}")
    for name, options in REGIONS.items()
    for way in WAYS
    if not (way.name == "jobfile" and options.get("size") == "auto")
]


@pytest.mark.fio
@pytest.mark.parametrize(("way", "options"), REGION_WAYS)
def test_a_region_inside_a_users_file_reads_it_unchanged(
    workdir: Path, way: Way, options: dict[str, FioValue]
) -> None:
    path = _user_file(workdir)
    before = file_sha256(path)
    done = run_iolab(*way.args(workdir, path, options, "randread"), cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert file_sha256(path) == before and path.stat().st_size == FILE_SIZE


# ---- a folder on a small filesystem -------------------------------------------------------------


@pytest.mark.root
@pytest.mark.parametrize(
    "options",
    [
        {"offset": "0x4000000", "size": "1m"},
        {"offset_increment": "64m", "numjobs": 2, "size": "1m"},
        {"offset": "0x10000000000", "size": "1m"},
        {"offset": "32m", "size": "16m"},
    ],
    ids=["hex-64m", "increment-64m", "hex-terabyte", "offset-plus-size"],
)
def test_an_offset_that_would_fill_a_small_filesystem_is_refused(
    loops: LoopDevs, workdir: Path, options: dict[str, FioValue]
) -> None:
    dev = loops.make(40)
    sh("mkfs.ext4", "-q", dev)
    mnt = workdir / "small"
    mnt.mkdir()
    loops.mount(dev, mnt)
    free = os.statvfs(mnt).f_bfree
    lines = ['name = "f"', "[[setup]]", 'name = "small"', f'path = "{mnt}"', "[[workload]]"]
    lines += ['name = "w"', 'rw = "write"', 'bs = "1m"']
    lines += [f"{k} = {v!r}".replace("'", '"') for k, v in options.items()]
    (workdir / "plan.toml").write_text("\n".join(lines) + "\n")
    done = run_iolab("run", "plan.toml", cwd=workdir)
    assert not problems_with_output(_outcome(done), ["the test file would reach", "usable at"])
    assert os.statvfs(mnt).f_bfree == free
    assert not (mnt / "iolab.testfile").exists()


def test_a_job_file_gives_kb_base_before_every_size() -> None:
    """fio reads a suffix under the kb_base given before it; iolab's job files give it first,
    so fio reads every size of the job in the base the model reads them in."""
    job = jobfile.Job("j", {"filesize": "4200k", "kb_base": 1000, "filename": "f"})
    assert jobfile.render([job]).splitlines()[1:] == [
        "kb_base=1000",
        "filesize=4200k",
        "filename=f",
    ]


def test_a_laid_out_file_repeats_no_sector_within_a_pool() -> None:
    """iolab lays its test file out from a pool of random bytes, turned by an odd stride per
    block (issue 47): within one pool's blocks no 512-byte sector's bytes occur twice, so a
    device that deduplicates or compresses finds nothing to save, as in fio's own layout."""
    pool = os.urandom(evidence.LAYOUT_BLOCK)
    seen: set[bytes] = set()
    for index in range(0, evidence.LAYOUT_POOL_BLOCKS, 7):  # every 7th: the test stays quick
        block = evidence.layout_block(index, pool)
        assert len(block) == evidence.LAYOUT_BLOCK
        sectors = {block[at : at + 512] for at in range(0, len(block), 16 * 512)}
        assert not sectors & seen, f"block {index} repeats a sector of an earlier block"
        seen |= sectors
