"""Free-text options handed to the tools that build a set-up pass only from an allow-list
(issue 29, finding 4).

Finding 4: `mkfs_options = "/dev/loop9"` on a btrfs set-up over /dev/loop8, confirmed with
`--yes-destroy /dev/loop8` only, ran `mkfs.btrfs -f /dev/loop9 /dev/loop8`: loop9, which held
data, was formatted, and the run said nothing. Now every word of `mkfs_options` and
`mount_options` (and an md layout's name, and a queue setting's value) is checked where the
plan is loaded, against the tables of targets/tool_options.py, and again where the argv is
built.

Every refusal row writes a plan whose set-up is built on a clean loop device, with a second
one holding data beside it, and asserts for both `iolab show` and `iolab run --yes-destroy`:
exit code 1, exactly one line on stderr ("iolab: error: plan.toml:LINE: ..." naming the key
and the option), no traceback, nothing changed in the scratch directory, and every loop
device's checksum unchanged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import require_root, run_iolab
from iolab.errors import PlanError, TargetError, ToolOptionError
from iolab.model import Layout
from iolab.plan.load import parse_plan
from iolab.targets import provision, recipe, tool_options, tool_options_doc
from loopdevs import MIB, LoopDevs, device_sha256, loops_fixture, sh
from test_bad_input import SETUP, at, devices_plan, fill, invoke, listing, problems_with_output

DOCS = Path(__file__).parent.parent / "docs" / "setups.md"
XFS_MIB = 1024  # sparse; mkfs.xfs wants 300 MiB, and room for a 64 MiB log over a stripe unit


def _toml(text: str) -> str:
    """A TOML basic string holding `text` (JSON's escapes are TOML's)."""
    return json.dumps(text)


def mkfs(fs: str, options: str) -> str:
    return f'filesystem = "{fs}"\nmkfs_options = {_toml(options)}'


def mount(fs: str, options: str) -> str:
    return f'filesystem = "{fs}"\nmount_options = {_toml(options)}'


def _write_data(dev: str, size: int = 4 * MIB) -> None:
    """Fill the start of a device with random bytes: data a wrong mkfs would destroy."""
    with open(dev, "r+b", buffering=0) as handle:
        handle.write(os.urandom(size))
    sh("blockdev", "--flushbufs", dev)


# ---------------------------------------------------------------- finding 4, for real


def test_mkfs_options_naming_an_unconfirmed_device_leave_it_untouched(
    loops: LoopDevs, workdir: Path
) -> None:
    first, second = loops.make(256), loops.make(256)
    _write_data(second)
    sums = {first: device_sha256(first), second: device_sha256(second)}
    text = devices_plan([first], setup=mkfs("btrfs", second))
    (workdir / "plan.toml").write_text(text)
    expected = (
        f"iolab: error: plan.toml:{SETUP + 1}: mkfs_options: mkfs.btrfs {second!r} names a path "
        "or a device; iolab names the set-up's devices itself, so leave it out\n"
    )
    for args in (["show"], ["run", "--yes-destroy", first, "--db", "finding.db"]):
        done = run_iolab(args[0], "plan.toml", *args[1:], cwd=workdir)
        assert (done.returncode, done.stderr) == (1, expected), done.stdout + done.stderr
        assert "mkfs.btrfs" not in done.stdout
    assert {dev: device_sha256(dev) for dev in sums} == sums
    assert sorted(p.name for p in workdir.iterdir()) == ["plan.toml"]
    assert sh("blkid", "-p", second, check=False).stdout == ""  # no filesystem was made on it


# ---------------------------------------------------------------- the table of refusals

LOOPS = ("@LOOP@", "@LOOP2@", "@LOOP3@")  # @LOOP2@ holds data; the others are clean


@dataclass(frozen=True)
class Row:
    setup: str  # the [[setup]] keys after its devices
    words: tuple[str, ...]  # the one line holds each
    line: int  # the plan's line the message names
    devices: tuple[str, ...]


def row(
    case_id: str,
    setup: str,
    words: tuple[str, ...],
    *,
    line: int = SETUP + 1,
    devices: tuple[str, ...] = ("@LOOP@",),
) -> Any:
    return pytest.param(Row(setup, words, line, devices), id=case_id)


TWO = ("@LOOP@", "@LOOP3@")
ROWS = [
    # mkfs.btrfs
    row(
        "btrfs-mkfs-names-the-second-device",
        mkfs("btrfs", "@LOOP2@"),
        ("mkfs_options", "'@LOOP2@' names a path or a device"),
    ),
    row("btrfs-mkfs-device-after-force", mkfs("btrfs", "-f @LOOP2@"), ("'@LOOP2@'",)),
    row("btrfs-mkfs-device-by-label-path", mkfs("btrfs", "-L @LOOP2@"), ("'@LOOP2@'",)),
    row("btrfs-mkfs-double-dash", mkfs("btrfs", "-f -- @LOOP2@"), ("'--' ends the options",)),
    row("btrfs-mkfs-rootdir", mkfs("btrfs", "-r etc"), ("'-r' is refused", "directory")),
    row("btrfs-mkfs-rootdir-long", mkfs("btrfs", "--rootdir=@DIR@"), ("names a path",)),
    row("btrfs-mkfs-rootdir-word", mkfs("btrfs", "--rootdir etc"), ("'--rootdir' is refused",)),
    row("btrfs-mkfs-unknown-option", mkfs("btrfs", "--bogus"), ("'--bogus' is not an option",)),
    row(
        "btrfs-mkfs-features-list-all",
        mkfs("btrfs", "-O list-all"),
        ("'-O list-all' is not a feature",),
    ),
    row("btrfs-mkfs-profile-unknown", mkfs("btrfs", "-d raid7"), ("'-d raid7' needs one of",)),
    row("btrfs-mkfs-semicolon", mkfs("btrfs", "-f; rm -rf @DIR@"), ("'-f;' holds ';'",)),
    row("btrfs-mkfs-byte-count-not-a-size", mkfs("btrfs", "-b lots"), ("'-b lots' needs a size",)),
    row("btrfs-mkfs-version", mkfs("btrfs", "--version"), ("'--version' is refused",)),
    row(
        "btrfs-mkfs-profile-beside-level",
        'raid = "btrfs"\nlevel = "raid1"\nmkfs_options = "--data=raid0"',
        ("'--data' is the set-up's level",),
        line=SETUP + 2,
        devices=TWO,
    ),
    row("btrfs-mkfs-value-missing", mkfs("btrfs", "-n"), ("'-n' needs a value",)),
    row("btrfs-mkfs-flag-with-value", mkfs("btrfs", "--force=1"), ("takes no value",)),
    # mkfs.xfs
    row("xfs-mkfs-logdev-path", mkfs("xfs", "-l logdev=@LOOP2@"), ("names a path",)),
    row("xfs-mkfs-logdev", mkfs("xfs", "-l logdev=loop9"), ("'-l logdev=loop9' is refused",)),
    row("xfs-mkfs-realtime-device", mkfs("xfs", "-r rtdev=loop9"), ("'-r' is refused",)),
    row("xfs-mkfs-protofile", mkfs("xfs", "-p proto"), ("'-p' is refused", "prototype")),
    row("xfs-mkfs-config-file", mkfs("xfs", "-c options=cfg"), ("'-c' is refused",)),
    row("xfs-mkfs-data-file", mkfs("xfs", "-d file=1,name=img"), ("'-d file=1' is refused",)),
    row("xfs-mkfs-su-not-a-size", mkfs("xfs", "-d su=lots,sw=4"), ("'-d su=lots' needs su=",)),
    row(
        "xfs-mkfs-unknown-sub-option",
        mkfs("xfs", "-m crc=1,uuid=x"),
        ("'-m uuid=x' is not a sub-option",),
    ),
    row("xfs-mkfs-bare-device-name", mkfs("xfs", "-f loop9"), ("'loop9' is not an option",)),
    row("xfs-mkfs-dry-run", mkfs("xfs", "-N"), ("'-N' is refused",)),
    row("xfs-mkfs-backtick", mkfs("xfs", "-L `reboot`"), ("holds '`'",)),
    row("xfs-mkfs-dollar", mkfs("xfs", "-L $HOME"), ("holds '$'",)),
    row("xfs-mkfs-attached-value", mkfs("xfs", "-bsize=4096"), ("'-bsize=4096' is not an option",)),
    # mkfs.ext4
    row("ext4-mkfs-root-directory", mkfs("ext4", "-d ."), ("'-d' is refused", "directory")),
    row("ext4-mkfs-undo-file", mkfs("ext4", "-z undo"), ("'-z' is refused", "undo")),
    row("ext4-mkfs-bad-blocks-file", mkfs("ext4", "-l list"), ("'-l' is refused",)),
    row("ext4-mkfs-journal-device-path", mkfs("ext4", "-J device=@LOOP2@"), ("names a path",)),
    row(
        "ext4-mkfs-journal-device",
        mkfs("ext4", "-J device=loop9"),
        ("'-J device=loop9' is refused",),
    ),
    row(
        "ext4-mkfs-journal-dev-feature",
        mkfs("ext4", "-O journal_dev"),
        ("'-O journal_dev' is not a feature",),
    ),
    row("ext4-mkfs-offset", mkfs("ext4", "-E offset=4096"), ("'-E offset=4096' is refused",)),
    row("ext4-mkfs-usage-type-unknown", mkfs("ext4", "-T enormous"), ("'-T enormous' needs",)),
    row("ext4-mkfs-superblocks-only", mkfs("ext4", "-S"), ("'-S' is refused",)),
    row("ext4-mkfs-size-after-force", mkfs("ext4", "-F 1000"), ("'1000' is not an option",)),
    row("ext4-mkfs-not-ascii", mkfs("ext4", "-L d\u00e4ta"), ("holds '\u00e4'",)),
    row("ext4-mkfs-other-tool", mkfs("ext4", "mkfs.xfs -f"), ("start with mkfs.xfs",)),
    row("ext4-mkfs-unbalanced-quote", mkfs("ext4", "-L 'x"), ("cannot parse",)),
    # mount
    row("btrfs-mount-device-path", mount("btrfs", "device=@LOOP2@"), ("names a path",)),
    row(
        "btrfs-mount-device", mount("btrfs", "noatime,device=loop9"), ("'device=loop9' is refused",)
    ),
    row("btrfs-mount-subvolume", mount("btrfs", "subvol=data"), ("'subvol=data' is refused",)),
    row("btrfs-mount-compress-unknown", mount("btrfs", "compress=rar"), ("'compress=rar' needs",)),
    row("xfs-mount-logdev", mount("xfs", "logdev=loop9"), ("'logdev=loop9' is refused",)),
    row("xfs-mount-bind-flag", mount("xfs", "--bind"), ("'--bind' is not -o",)),
    row("xfs-mount-label-flag", mount("xfs", "-L data"), ("'-L' is not -o",)),
    row("xfs-mount-unknown", mount("xfs", "noatime,bogus"), ("'bogus' is not a xfs mount",)),
    row("xfs-mount-read-only", mount("xfs", "-o ro"), ("'ro' is refused",)),
    row("xfs-mount-value-not-a-number", mount("xfs", "logbufs=lots"), ("'logbufs=lots' needs",)),
    row("xfs-mount-value-missing", mount("xfs", "logbufs"), ("'logbufs' needs a value",)),
    row("xfs-mount-semicolon", mount("xfs", "noatime;reboot"), ("holds ';'",)),
    row("xfs-mount-double-dash", mount("xfs", "-- @LOOP2@"), ("'--' ends the options",)),
    row("ext4-mount-xfs-option", mount("ext4", "logbufs=8"), ("'logbufs=8' is not a ext4",)),
    row("ext4-mount-journal-path", mount("ext4", "journal_path=j"), ("is refused",)),
    row("ext4-mount-data-mode-unknown", mount("ext4", "data=fast"), ("'data=fast' needs",)),
    # an md layout's name and a queue setting's value
    row(
        "md-layout-device",
        'raid = "mdadm"\nlevel = 1\nmd_layout = "@LOOP2@"',
        ("md_layout", "is not an mdadm layout"),
        line=SETUP + 2,
        devices=TWO,
    ),
    row(
        "md-layout-extra-argument",
        'raid = "mdadm"\nlevel = 1\nmd_layout = "n2 --bitmap=x"',
        ("md_layout", "is not an mdadm layout"),
        line=SETUP + 2,
        devices=TWO,
    ),
    row(
        "queue-scheduler-path",
        'queue = { scheduler = "../../x" }',
        ("queue scheduler", "must be a scheduler's name"),
        line=SETUP,
    ),
    row(
        "queue-read-ahead-word",
        'queue = { read_ahead_kb = "lots" }',
        ("queue read_ahead_kb", "must be a whole number"),
        line=SETUP,
    ),
]


def test_the_table_is_big_and_its_ids_are_unique() -> None:
    ids = [p.id for p in ROWS]
    assert len(ids) == len(set(ids)) and len(ids) >= 35, len(ids)


@pytest.fixture(scope="module")
def devs() -> Iterator[dict[str, str]]:
    """Three small loop devices; the second holds data."""
    require_root("loop devices")
    made = LoopDevs("tool-options")
    try:
        names = {token: made.make(64) for token in LOOPS}
        _write_data(names["@LOOP2@"], MIB)
        yield names
    finally:
        problems = made.cleanup()
    assert not problems, "left behind: " + "; ".join(problems)


@pytest.mark.root
@pytest.mark.parametrize("bad", ROWS)
def test_a_tool_option_off_the_allow_list_is_refused_before_anything_runs(
    bad: Row,
    devs: dict[str, str],
    workdir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = {"@DIR@": str(workdir), **devs}
    devices = [fill(d, values) for d in bad.devices]
    (workdir / "plan.toml").write_text(devices_plan(devices, setup=fill(bad.setup, values)))
    words = [at(bad.line), *(fill(w, values) for w in bad.words)]
    sums = {dev: device_sha256(dev) for dev in devs.values()}
    before = listing(workdir)
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    confirm = [arg for dev in devices for arg in ("--yes-destroy", dev)]
    problems = []
    for args in (["show", "plan.toml"], ["run", "plan.toml", *confirm]):
        outcome = invoke(args, limit_s=60)
        problems += [f"iolab {args[0]}: {found}" for found in problems_with_output(outcome, words)]
    problems += [f"{dev} changed" for dev, digest in sums.items() if device_sha256(dev) != digest]
    if listing(workdir) != before:
        problems.append(f"the scratch directory changed: {sorted(listing(workdir))}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- what passes

WORK = '\n[[workload]]\nrw = "randread"\n'
GOOD = [
    ("xfs", "-f -b size=4096 -i size=512 -l size=64m", "noatime,logbufs=8"),
    (
        "xfs",
        "mkfs.xfs -f -K -d su=64k,sw=4 -l size=64m -m crc=1,finobt=1 -n size=8192 -L data",
        "-o noatime,nodiratime,inode64,logbsize=256k,allocsize=1m,largeio,swalloc",
    ),
    (
        "ext4",
        "-q -b 4096 -I 256 -E stride=16,stripe_width=64,lazy_itable_init=0 -m 0 -T largefile",
        "noatime,data=writeback,commit=60,barrier=0,stripe=64",
    ),
    (
        "ext4",
        "-F -O ^has_journal,metadata_csum -E lazy_journal_init=1,nodiscard -L lab",
        "relatime nodiratime nobarrier discard",
    ),
    (
        "btrfs",
        "-f -K -d single -m dup -n 16k -s 4096 -O no-holes -R free-space-tree",
        "noatime,compress=zstd:3,ssd,space_cache=v2,autodefrag,commit=120",
    ),
    (
        "btrfs",
        "--force --nodiscard --checksum=crc32c --label lab",
        "nodatacow,nodatasum,discard=async,nossd",
    ),
]


def _one_setup(fs: str, mkfs_options: str, mount_options: str, device: str) -> Layout:
    text = (
        f'[[setup]]\ndevices = ["{device}"]\n{mkfs(fs, mkfs_options)}\n'
        f"mount_options = {_toml(mount_options)}\n{WORK}"
    )
    layout = parse_plan(text, "plan.toml").setups[0].layout
    assert layout is not None
    return layout


@pytest.mark.parametrize(("fs", "mkfs_options", "mount_options"), GOOD)
def test_good_options_load_and_reach_the_tools_as_written(
    fs: str, mkfs_options: str, mount_options: str
) -> None:
    layout = _one_setup(fs, mkfs_options, mount_options, "/dev/loop0")
    argv = recipe.commands(layout, Path("/run/iolab/nowhere"))
    made = next(a for a in argv if a[0] == f"mkfs.{fs}")
    assert " ".join(made[1:-1]).endswith(mkfs_options.removeprefix(f"mkfs.{fs} "))
    assert made[-1] == "/dev/loop0"
    mounted = next(a for a in argv if a[0] == "mount")
    listed = mount_options.removeprefix("-o ").replace(" ", ",")
    assert mounted == ["mount", "-t", fs, "-o", listed, "/dev/loop0", "/run/iolab/nowhere"]


@pytest.mark.parametrize(
    ("layout", "words"),
    [
        (
            Layout(devices=("/dev/loop8",), filesystem="btrfs", mkfs_options="/dev/loop9"),
            "mkfs_options: mkfs.btrfs '/dev/loop9' names a path or a device",
        ),
        (
            Layout(devices=("/dev/loop8",), filesystem="xfs", mkfs_options="-l logdev=x"),
            "mkfs_options: mkfs.xfs '-l logdev=x' is refused",
        ),
        (
            Layout(devices=("/dev/loop8",), filesystem="ext4", mount_options="journal_dev=9"),
            "mount_options: mount 'journal_dev=9' is refused",
        ),
        (
            Layout(devices=("/dev/loop8",), filesystem="xfs", mount_options="-o noatime /dev/x"),
            "mount_options: mount '/dev/x' names a path",
        ),
    ],
)
def test_the_argv_is_checked_again_where_it_is_built(layout: Layout, words: str) -> None:
    """A layout that never went through a plan (a stored one, a caller's) is refused by the
    recipe itself, before any command is listed or run."""
    with pytest.raises(ToolOptionError) as error:
        recipe.commands(layout, Path("/run/iolab/nowhere"))
    assert isinstance(error.value, TargetError) and str(error.value).startswith(words)


def test_a_command_naming_a_path_the_set_up_does_not_list_is_refused_behind_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Were the table ever to let a device through, the recipe still refuses a command that
    names a path the set-up does not list."""
    monkeypatch.setattr(tool_options, "mkfs_args", lambda layout: ["/dev/loop9"])
    layout = Layout(devices=("/dev/loop8",), filesystem="btrfs")
    with pytest.raises(TargetError, match=r"^mkfs.btrfs would name '/dev/loop9', which the set"):
        recipe.commands(layout, Path("/run/iolab/nowhere"))


def test_the_options_iolab_writes_for_md_and_lvm_pass_their_tables() -> None:
    for level, layout in (("10", "n2"), ("5", "left-symmetric"), ("0", None)):
        text = (
            '[[setup]]\ndevices = ["/dev/loop0", "/dev/loop1", "/dev/loop2", "/dev/loop3"]\n'
            f'raid = "mdadm"\nlevel = {level}\nchunk = "64k"\nfilesystem = "xfs"\n'
            + (f'md_layout = "{layout}"\n' if layout else "")
            + WORK
        )
        built = parse_plan(text, "plan.toml").setups[0].layout
        assert built is not None
        create = recipe.commands(built, Path("/run/iolab/nowhere"))[0]
        assert create[:2] == ["mdadm", "--create"] and f"--level={level}" in create
    for level in ("linear", "0", "1", "10", "5", "6"):
        lvm = Layout(
            devices=("/dev/a", "/dev/b", "/dev/c", "/dev/d"), raid="lvm", level=level, chunk="64k"
        )
        argv = recipe.commands(lvm, Path("/run/iolab/nowhere"))
        assert next(a for a in argv if a[0] == "lvcreate")[-1] == recipe.vg_name(lvm)
    with pytest.raises(ToolOptionError, match="'--write-journal' is refused"):
        tool_options.mdadm_args(["--run", "--write-journal", "x"])
    with pytest.raises(ToolOptionError, match="'-l 50%VG' needs"):
        tool_options.lvcreate_args(["-l", "50%VG"])


def test_a_plan_refusal_names_its_line_and_the_option() -> None:
    text = '[[setup]]\ndevices = ["/dev/loop8"]\nfilesystem = "btrfs"\n'
    text += 'mkfs_options = "-f /dev/loop9"\n' + WORK
    with pytest.raises(PlanError) as error:
        parse_plan(text, "plan.toml")
    assert str(error.value) == (
        "plan.toml:4: mkfs_options: mkfs.btrfs '/dev/loop9' names a path or a device; iolab "
        "names the set-up's devices itself, so leave it out"
    )


def test_the_docs_list_every_option_iolab_passes() -> None:
    assert tool_options_doc.markdown() in DOCS.read_text(), (
        "docs/setups.md's table of tool options differs from targets/tool_options.py; paste "
        "tool_options_doc.markdown() there"
    )


@pytest.mark.parametrize(("fs", "mkfs_options", "mount_options"), GOOD)
def test_the_tools_take_the_options_iolab_passes(
    fs: str, mkfs_options: str, mount_options: str, loops: LoopDevs, tmp_path: Path
) -> None:
    """The table's options are the tools' own: mkfs and mount take them on a real device."""
    dev = loops.make(XFS_MIB if fs == "xfs" else 256)
    layout = _one_setup(fs, mkfs_options, mount_options, dev)
    with provision.build(layout, tmp_path / "mnt", confirmed={dev}) as built:
        assert built.path.parent == tmp_path / "mnt"
        found = sh("findmnt", "-n", "-o", "OPTIONS", str(tmp_path / "mnt")).stdout.split(",")
        first = mount_options.removeprefix("-o ").replace(" ", ",").split(",")[0]
        assert first in {o.strip() for o in found}


__all__ = ["loops_fixture"]
