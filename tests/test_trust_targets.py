"""What a target really is (issue 21, findings 1, 3 and 5), provoked for real.

- loop-cache: set-ups iolab builds on loop devices (xfs on one, btrfs RAID0 over two) are
  flagged when any member loop does buffered I/O, followed down the device stack; a member
  switched to direct I/O (losetup --direct-io=on) is not named, and all-direct is silent.
- ram-target: a target on tmpfs, ramfs, /dev/shm, zram or brd, or on a loop over a file on
  tmpfs, measures memory; the warning names it with the figures, in the terminal and every
  report format and export. A written file on the real disk with direct=1 stays silent.
- mixed-versions: one import holding fio 3.1 and fio 3.33 results says so in its report, as
  does a report over two runs of different fio versions.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from _pytest.mark import ParameterSet

from conftest import run_iolab
from iolab.analysis import check_context, checks, comparison
from iolab.model import CaseMetrics, DirectionMetrics
from iolab.model.facts import Layer
from iolab.targets import caches
from iolab.targets.lab import Done, Kernel
from loopdevs import MIB, LoopDevs, is_mounted, loops_fixture, sh

__all__ = ["loops_fixture"]

FIXTURES = Path(__file__).parent / "fixtures"
FIO_3_33 = FIXTURES / "fio" / "randread-json" / "randread-json.json"
FIO_3_33_B = FIXTURES / "fio" / "seq-1m-read" / "seq-1m-read.json"
FIO_3_1 = FIXTURES / "import" / "old-3.1-jsonplus" / "old-3.1-jsonplus.json"
TRUST_CODES = ("loop-cache", "ram-target", "mixed-versions")

WORKLOADS = """
[defaults]
runtime = 1
size = "16m"
iodepth = 4
direct = {direct}

[[workload]]
rw = ["randread", "randwrite"]
bs = "4k"
"""


def stored(db: Path) -> list[tuple[str, str, dict[str, str]]]:
    """(set-up, workload, {code: message}) of every stored case."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT setup, workload, warnings FROM cases ORDER BY id").fetchall()
    return [(s, w, {x["code"]: x["message"] for x in json.loads(found)}) for s, w, found in rows]


def plan(setups: str, direct: int = 1) -> str:
    return f'name = "trust"\n{WORKLOADS.format(direct=direct)}\n{setups}'


def device_setup(name: str, devices: Sequence[str], extra: str) -> str:
    listed = ", ".join(f'"{d}"' for d in devices)
    return f'[[setup]]\nname = "{name}"\ndevices = [{listed}]\n{extra}\n'


def confirm(devices: Sequence[str]) -> list[str]:
    return [arg for d in devices for arg in ("--yes-destroy", d)]


def set_direct_io(dev: str, on: bool) -> None:
    sh("losetup", f"--direct-io={'on' if on else 'off'}", dev)
    dio = Path(f"/sys/block/{Path(dev).name}/loop/dio").read_text().strip()
    assert dio == ("1" if on else "0"), f"{dev}: direct I/O did not switch"


def loop_dio(dev: str) -> str:
    return Path(f"/sys/block/{Path(dev).name}/loop/dio").read_text().strip()


# ---------------------------------------------------------------- loop-cache, built set-ups


@dataclass(frozen=True)
class Built:
    """A plan of set-ups iolab builds on loop devices, and which loops are buffered."""

    id: str
    setups: tuple[tuple[str, tuple[int, ...], str], ...]  # name, loop indexes, plan keys
    direct: tuple[bool, ...]  # per loop: switched to direct I/O before the run
    expect: dict[str, tuple[int, ...]]  # set-up -> the loops its loop-cache names (none: silent)


XFS = 'filesystem = "xfs"'
BTRFS0 = 'raid = "btrfs"\nlevel = "raid0"'
BUILT = [
    Built(
        "xfs-and-btrfs-raid0-all-buffered",
        (("xfs on one", (0,), XFS), ("btrfs raid0 of 2", (1, 2), BTRFS0)),
        (False, False, False),
        {"xfs on one": (0,), "btrfs raid0 of 2": (1, 2)},
    ),
    Built("xfs-on-a-direct-io-loop", (("xfs on one", (0,), XFS),), (True,), {"xfs on one": ()}),
    Built(
        "btrfs-raid0-one-member-buffered",
        (("btrfs raid0 of 2", (0, 1), BTRFS0),),
        (True, False),
        {"btrfs raid0 of 2": (1,)},
    ),
    Built(
        "btrfs-raid0-all-direct",
        (("btrfs raid0 of 2", (0, 1), BTRFS0),),
        (True, True),
        {"btrfs raid0 of 2": ()},
    ),
    Built(
        "ext4-on-one",
        (("ext4 on one", (0,), 'filesystem = "ext4"'),),
        (False,),
        {"ext4 on one": (0,)},
    ),
    Built("raw-device", (("raw", (0,), 'filesystem = "none"'),), (False,), {"raw": (0,)}),
]


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.parametrize("scene", BUILT, ids=[b.id for b in BUILT])
def test_set_ups_built_on_loop_devices_follow_each_member_loop(
    scene: Built, loops: LoopDevs, workdir: Path
) -> None:
    devs = [loops.make(320) for _ in scene.direct]
    for dev, direct in zip(devs, scene.direct, strict=True):
        set_direct_io(dev, direct)
    setups = "".join(device_setup(n, [devs[i] for i in idx], k) for n, idx, k in scene.setups)
    (workdir / "plan.toml").write_text(plan(setups))
    done = run_iolab("run", "plan.toml", *confirm(devs), cwd=workdir, check=True)
    cases = stored(workdir / "iolab.db")
    assert len(cases) == 2 * len(scene.setups)
    for setup, workload, found in cases:
        named = scene.expect[setup]
        if not named:
            assert "loop-cache" not in found, (setup, workload, found)
            continue
        message = found.get("loop-cache", "")
        assert message, f"{setup} / {workload}: not flagged ({found})"
        for index, dev in enumerate(devs):
            wanted = index in named
            assert (Path(dev).name in message.split()) == wanted, (dev, message)
            if wanted:
                assert str(loops.image(dev)) in message, "the backing file is named"
    for _, _, found in cases:  # the terminal line after each case carries its warning
        assert "loop-cache" not in found or found["loop-cache"] in done.stdout
    assert [loop_dio(d) for d in devs] == [str(int(d)) for d in scene.direct], "left as found"


def test_loop_cache_sees_every_buffered_loop_in_a_stack() -> None:
    loop_a = Layer("loop", "loop7", details={"backing_file": "/var/tmp/a.img", "dio": "0"})
    loop_b = Layer("loop", "loop8", details={"backing_file": "/var/tmp/b.img", "dio": "1"})
    fs = Layer(
        "filesystem", details={"fstype": "btrfs", "mountpoint": "/m"}, below=(loop_a, loop_b)
    )
    said = caches.loop_cache_of(Layer("file", path="/m/f", below=(fs,)))
    assert "loop7 over /var/tmp/a.img" in said and "loop8" not in said


# ---------------------------------------------------------------- ram-target


@pytest.fixture
def scratch_mounts(workdir: Path) -> Iterator[list[Path]]:
    """Mount points a test makes under its scratch directory, unmounted afterwards."""
    made: list[Path] = []
    yield made
    for point in reversed(made):
        if is_mounted(point):
            sh("umount", str(point), check=False)


def mount_ram(kind: str, point: Path, made: list[Path]) -> None:
    point.mkdir()
    options = ["-o", "size=96m"] if kind == "tmpfs" else []
    sh("mount", "-t", kind, *options, kind, str(point))
    made.append(point)


@dataclass(frozen=True)
class InRam:
    kind: str  # tmpfs or ramfs
    direct: int  # ramfs has no O_DIRECT
    own_file: bool = False  # the set-up names a file of the user's, not a directory


IN_RAM = [InRam("tmpfs", 1), InRam("tmpfs", 0), InRam("tmpfs", 1, True), InRam("ramfs", 0, True)]


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.parametrize(
    "scene", IN_RAM, ids=[f"{s.kind}-direct{s.direct}{'-file' * s.own_file}" for s in IN_RAM]
)
def test_a_target_in_memory_is_flagged_everywhere(
    scene: InRam, workdir: Path, scratch_mounts: list[Path]
) -> None:
    ram = workdir / "ram"
    mount_ram(scene.kind, ram, scratch_mounts)
    target, yes = ram, []
    if scene.own_file:  # ramfs reports no free space: the user's own file, written first
        target = ram / "mine.img"
        target.write_bytes(os.urandom(16 * MIB))
        yes = ["--yes-destroy", str(target)]
    setup = f'[[setup]]\nname = "in ram"\npath = "{target}"\n'
    (workdir / "plan.toml").write_text(plan(setup, scene.direct))
    done = run_iolab("run", "plan.toml", *yes, cwd=workdir, check=True)
    cases = stored(workdir / "iolab.db")
    assert len(cases) == 2
    for _, workload, found in cases:
        message = found.get("ram-target", "")
        assert scene.kind in message and str(ram) in message, (workload, found)
        assert "IOPS" in message and "MB/s" in message, "the figures are named"
    for _, _, found in cases:  # the terminal line after each case carries its warning
        assert found["ram-target"] in done.stdout
    said = f"the target is on {scene.kind} (mounted at"
    markdown = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    assert said in markdown and "memory's figures, not storage's" in markdown
    run_iolab("report", "--format", "html", "-o", "r.html", cwd=workdir, check=True)
    assert said in (workdir / "r.html").read_text()
    run_iolab("export", "--format", "csv", "-o", "cases.csv", cwd=workdir, check=True)
    assert "ram-target" in (workdir / "cases.csv").read_text(), "the export lists the code"
    exported = run_iolab("export", "--format", "json", "-o", "-", cwd=workdir, check=True)
    assert '"ram-target"' in exported.stdout
    left = [p.name for p in ram.iterdir()]
    assert left == (["mine.img"] if scene.own_file else []), "iolab's test file is removed"


@pytest.mark.fio
@pytest.mark.root
def test_dev_shm_as_the_target_is_flagged(workdir: Path) -> None:
    shm = Path("/dev/shm")
    if not is_mounted(shm):
        pytest.fail("NOT CHECKED: /dev/shm is not a mount here", pytrace=False)
    before = set(shm.iterdir())
    (workdir / "plan.toml").write_text(plan("", 1).replace('name = "trust"', 'name = "shm"'))
    done = run_iolab("run", "plan.toml", "--target", str(shm), cwd=workdir)
    if done.returncode != 0 and "direct" in done.stderr:  # O_DIRECT refused: say so, buffered
        (workdir / "plan.toml").write_text(plan("", 0))
        done = run_iolab("run", "plan.toml", "--target", str(shm), cwd=workdir)
    assert done.returncode == 0, done.stderr
    for _, workload, found in stored(workdir / "iolab.db"):
        assert "tmpfs" in found.get("ram-target", ""), (workload, found)
    assert set(shm.iterdir()) == before, "nothing left in /dev/shm"


Shell = Callable[[str], Done]


def host_shell(command: str) -> Done:
    done = sh("sh", "-c", command, check=False)
    return Done(done.returncode, done.stdout + done.stderr)


@dataclass(frozen=True)
class RamDisk:
    """A zram or brd RAM disk, made in this host's kernel where it can make one, else in the
    session's lab kernel (conftest.lab_kernel), whose modules hold both: a kernel without the
    module runs the test elsewhere, never skips it."""

    kind: str

    def on_host(self) -> bool:
        if self.kind == "zram" and Path("/sys/class/zram-control").exists():
            return True
        return sh("modprobe", "--dry-run", self.kind, check=False).returncode == 0

    def param(self) -> ParameterSet:
        marks = [] if self.on_host() else [pytest.mark.kernel]  # ram_shell boots the lab
        return pytest.param(self, marks=marks, id=self.kind)

    def make(self, shell: Shell, modprobe: str) -> str:
        if self.kind == "zram":
            done = shell(
                f"[ -e /sys/class/zram-control ] || {modprobe} zram num_devices=0; "
                "n=$(cat /sys/class/zram-control/hot_add) && "
                f'echo {96 * MIB} > /sys/block/zram$n/disksize && echo "/dev/zram$n"'
            )
        else:
            done = shell(f"{modprobe} brd rd_nr=1 rd_size=98304 && ls /dev/ram0")
        assert done.returncode == 0, f"no {self.kind} RAM disk: {done.output}"
        return done.output.strip().splitlines()[-1]

    def remove(self, shell: Shell, modprobe: str, dev: str) -> None:
        if self.kind == "zram":
            name = Path(dev).name
            shell(
                f"echo 1 > /sys/block/{name}/reset; "
                f"echo {name.removeprefix('zram')} > /sys/class/zram-control/hot_remove"
            )
        else:
            shell(f"{modprobe} -r brd")


@pytest.fixture
def ram_shell(request: pytest.FixtureRequest) -> tuple[Shell, str]:
    """Where the RAM disk is made and iolab runs: this host, or the lab kernel (its own
    modules folder for modprobe), for the test's RamDisk."""
    disk: RamDisk = request.node.callspec.params["disk"]
    if disk.on_host():
        return host_shell, "modprobe"
    kernel: Kernel = request.getfixturevalue("lab_kernel")
    return kernel.run, f"modprobe -d {kernel.folder / 'modules'}"


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.parametrize("disk", [RamDisk("zram").param(), RamDisk("brd").param()])
@pytest.mark.parametrize("filesystem", ["none", "ext4"])
def test_a_ram_disk_is_flagged(
    disk: RamDisk, filesystem: str, workdir: Path, ram_shell: tuple[Shell, str]
) -> None:
    shell, modprobe = ram_shell
    dev = disk.make(shell, modprobe)
    try:
        setup = device_setup("ram disk", [dev], f'filesystem = "{filesystem}"')
        (workdir / "plan.toml").write_text(plan(setup))
        args = " ".join(["run", "plan.toml", *confirm([dev])])
        done = shell(f"cd {workdir} && {sys.executable} -m iolab {args}")
        assert done.returncode == 0, done.output
        cases = stored(workdir / "iolab.db")
        assert len(cases) == 2
        for _, workload, found in cases:
            assert Path(dev).name in found.get("ram-target", ""), (workload, found)
    finally:
        disk.remove(shell, modprobe, dev)


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.parametrize("direct_io", [False, True], ids=["buffered-loop", "direct-io-loop"])
def test_a_loop_over_a_file_in_tmpfs_is_flagged(
    direct_io: bool, workdir: Path, scratch_mounts: list[Path]
) -> None:
    ram = workdir / "ram"
    mount_ram("tmpfs", ram, scratch_mounts)
    image = ram / "disk.img"
    with image.open("wb") as handle:
        handle.truncate(64 * MIB)
    dev = sh("losetup", "--find", "--show", str(image)).stdout.strip()
    try:  # detached here, before the tmpfs under it is unmounted
        set_direct_io(dev, direct_io)
        setup = device_setup("loop in ram", [dev], 'filesystem = "none"')
        (workdir / "plan.toml").write_text(plan(setup))
        run_iolab("run", "plan.toml", *confirm([dev]), cwd=workdir, check=True)
        cases = stored(workdir / "iolab.db")
    finally:
        sh("losetup", "--detach", dev, check=False)
    assert len(cases) == 2
    for _, _, found in cases:
        message = found.get("ram-target", "")
        assert f"{Path(dev).name} over {image}" in message and "tmpfs" in message, found
        assert ("loop-cache" in found) != direct_io, found


def _metrics() -> CaseMetrics:
    read = DirectionMetrics(
        "read", 199_827.0, 2.136e9, 2_136_000_000, 1000, 1.0e4, 9.0e5, {"99": 177_000.0}
    )
    return CaseMetrics((read,), 10.0, 50.0, 1000, 0)


RAM_TREES = [
    (
        "tmpfs",
        Layer(
            "file",
            path="/r/f",
            below=(Layer("filesystem", details={"fstype": "tmpfs", "mountpoint": "/r"}),),
        ),
        "tmpfs",
    ),
    (
        "ramfs",
        Layer(
            "file",
            path="/r/f",
            below=(Layer("filesystem", details={"fstype": "ramfs", "mountpoint": "/r"}),),
        ),
        "ramfs",
    ),
    ("zram", Layer("disk", "zram3"), "zram3"),
    ("brd", Layer("disk", "ram0"), "ram0"),
    ("brd-partition", Layer("part", "ram0p1", below=(Layer("disk", "ram0"),)), "ram0"),
    (
        "ext4-on-zram",
        Layer(
            "file",
            path="/m/f",
            below=(
                Layer(
                    "filesystem",
                    details={"fstype": "ext4", "mountpoint": "/m"},
                    below=(Layer("disk", "zram1"),),
                ),
            ),
        ),
        "zram1",
    ),
    (
        "loop-over-tmpfs",
        Layer(
            "loop",
            "loop4",
            details={"backing_file": "/r/a.img"},
            below=(
                Layer(
                    "file",
                    path="/r/a.img",
                    below=(Layer("filesystem", details={"fstype": "tmpfs", "mountpoint": "/r"}),),
                ),
            ),
        ),
        "loop4 over /r/a.img",
    ),
    (
        "ext4-on-disk",
        Layer(
            "file",
            path="/m/f",
            below=(
                Layer(
                    "filesystem",
                    details={"fstype": "ext4", "mountpoint": "/m"},
                    below=(Layer("disk", "vda"),),
                ),
            ),
        ),
        None,
    ),
    ("ramble-is-no-ram", Layer("disk", "ramble"), None),
    (
        "xfs-on-loop-on-ext4",
        Layer(
            "loop",
            "loop1",
            details={"backing_file": "/v/a.img"},
            below=(
                Layer(
                    "file",
                    path="/v/a.img",
                    below=(
                        Layer(
                            "filesystem",
                            details={"fstype": "ext4", "mountpoint": "/"},
                            below=(Layer("disk", "vda"),),
                        ),
                    ),
                ),
            ),
        ),
        None,
    ),
]


@pytest.mark.parametrize(
    ("tree", "named"), [t[1:] for t in RAM_TREES], ids=[t[0] for t in RAM_TREES]
)
def test_ram_under_names_the_memory_a_stack_ends_in(tree: Layer, named: str | None) -> None:
    said = caches.ram_of(tree)
    if named is None:
        assert said == ""
        return
    assert named in said
    context = check_context.Context(
        options={"rw": "randread", "bs": "4k"}, metrics=_metrics(), ram_target=said
    )
    found = {w.code: w for w in checks.case_warnings(context)}
    message = found["ram-target"].message
    assert named in message and "199,827 IOPS" in message and "2,136 MB/s" in message
    assert "p99 177 µs" in message
    assert "device under test" in found["ram-target"].advice


# ---------------------------------------------------------------- a clean plan stays silent


@pytest.mark.fio
def test_a_written_file_on_the_disk_with_direct_io_raises_none_of_these(workdir: Path) -> None:
    mine = workdir / "written.img"
    mine.write_bytes(os.urandom(16 * MIB))
    setup = f'[[setup]]\nname = "disk"\npath = "{mine}"\n'
    text = plan(setup).replace('rw = ["randread", "randwrite"]', 'rw = ["randread", "read"]')
    (workdir / "plan.toml").write_text(text)
    done = run_iolab("run", "plan.toml", cwd=workdir, check=True)
    cases = stored(workdir / "iolab.db")
    assert len(cases) == 2
    for _, workload, found in cases:
        assert not set(found) & set(TRUST_CODES), (workload, found)
    report = run_iolab("report", "--format", "markdown", cwd=workdir, check=True).stdout
    for code in TRUST_CODES:
        assert code not in done.stdout and code not in report


# ---------------------------------------------------------------- mixed-versions


@dataclass(frozen=True)
class Imported:
    id: str
    files: tuple[Path, ...]
    mixed: bool


IMPORTS = [
    Imported("fio-3.1-and-3.33", (FIO_3_1, FIO_3_33), True),
    Imported("fio-3.33-and-3.1", (FIO_3_33, FIO_3_1), True),
    Imported("fio-3.33-twice", (FIO_3_33, FIO_3_33_B), False),
]


def _version(path: Path) -> str:
    text = path.read_text()
    return str(json.loads(text[text.index("{") :])["fio version"])


@pytest.mark.slow
@pytest.mark.parametrize("scene", IMPORTS, ids=[i.id for i in IMPORTS])
@pytest.mark.parametrize("form", ["table", "markdown", "html"])
def test_one_import_of_two_fio_versions_says_so(scene: Imported, form: str, tmp_path: Path) -> None:
    done = run_iolab("import", *map(str, scene.files), cwd=tmp_path, check=True)
    assert done.stdout.startswith("run 1:"), "one import, one run"
    shown = run_iolab("report", "--format", form, "-o", "-", cwd=tmp_path, check=True).stdout
    versions = sorted({_version(f) for f in scene.files})
    assert ("mixed-versions" in shown) == scene.mixed, shown[-2000:]
    if scene.mixed:
        line = next(x for x in shown.splitlines() if "mixed-versions" in x)
        assert all(v in line for v in versions), line


@pytest.mark.slow
def test_a_report_over_runs_of_two_fio_versions_says_so(tmp_path: Path) -> None:
    for path in (FIO_3_1, FIO_3_33):
        run_iolab("import", str(path), cwd=tmp_path, check=True)
    shown = run_iolab("report", "1", "2", "--format", "markdown", cwd=tmp_path, check=True).stdout
    assert "mixed-versions" in shown and "fio-3.1" in shown and "fio-3.33" in shown


MIXED = [
    ("one-run-two-fio", [(1, {"fio_version": "fio-3.1, fio-3.33"})], "run 1: fio-3.1 and fio-3.33"),
    ("one-run-one-fio", [(1, {"fio_version": "fio-3.33"})], None),
    (
        "two-runs-one-mixed",
        [(1, {"fio_version": "fio-3.33"}), (2, {"fio_version": "fio-3.1, fio-3.33"})],
        "run 2: fio-3.1 and fio-3.33",
    ),
    (
        "kernel-unknown-in-one",
        [(1, {"fio_version": "fio-3.33", "kernel": "6.1"}), (2, {"fio_version": "fio-3.33"})],
        None,
    ),
    ("kernel-differs", [(1, {"kernel": "6.1"}), (2, {"kernel": "6.18"})], "run 2: 6.18"),
]


@pytest.mark.parametrize(("runs", "said"), [m[1:] for m in MIXED], ids=[m[0] for m in MIXED])
def test_mixed_versions_within_and_across_runs(
    runs: list[tuple[int, dict[str, str]]], said: str | None
) -> None:
    found = comparison.mixed_versions(runs)
    assert (found is None) == (said is None), found
    if found is not None and said is not None:
        assert found.code == "mixed-versions" and said in found.message
