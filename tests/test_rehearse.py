"""`iolab rehearse PLAN`: each set-up built, run briefly and torn down on sparse images in the
lab kernel (user-mode Linux), under the plan's own device names, none of which exist here."""

from __future__ import annotations

import signal
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import LAB_COMMAND_S, needs_root, run_iolab
from iolab.app import lab_run, rehearsal
from iolab.cli import main
from iolab.plan.load import parse_plan
from iolab.targets import lab, lab_backends, scratch
from iolab.targets.lab_backends import Qemu, Uml

PLAN = """
name = "two arrays"
[[setup]]
name = "md raid5"
devices = ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1"]
raid = "mdadm"
level = 5
chunk = "256k"
filesystem = "xfs"
setup_hook = "echo hello"
[[setup]]
name = "bad layout"
devices = ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1"]
raid = "mdadm"
level = 5
md_layout = "no-such-layout"
[[workload]]
rw = ["randwrite", "randread"]
bs = "4k"
runtime = 30
ramp_time = 5
"""


@pytest.mark.kernel
@needs_root()
@pytest.mark.usefixtures("lab_host")
def test_rehearse_builds_runs_and_tears_down_each_set_up_and_names_a_failing_command(
    workdir: Path,
) -> None:
    (workdir / "plan.toml").write_text(PLAN)
    before = set(Path("/var/tmp").glob("iolab-rehearse-*"))
    done = run_iolab("rehearse", "plan.toml", cwd=workdir, timeout_s=LAB_COMMAND_S)
    lines = done.stderr.splitlines()  # each set-up's line is news, on stderr
    assert done.returncode == 3, done.stdout + done.stderr
    assert "/dev/nvme0n1 -> /dev/" in lines[0] and ", in " in lines[0], lines
    assert "md raid5: built, ran and torn down (its hooks were not run)" in lines, lines
    bad = next(line for line in lines if line.startswith("bad layout: "))
    assert bad.startswith("bad layout: did not build: mdadm --create "), bad
    assert "--layout=no-such-layout" in bad and "not understood" in bad, bad
    assert set(Path("/var/tmp").glob("iolab-rehearse-*")) == before, "images left behind"
    assert sorted(p.name for p in workdir.iterdir()) == ["plan.toml"], "nothing written here"


@pytest.mark.parametrize(
    ("backend", "told"),
    [
        ("uml", ["apt-get install user-mode-linux", "/nonexistent/linux.uml"]),
        ("", ["apt-get install user-mode-linux", "apt-get install qemu-system-x86"]),
    ],
)
def test_without_a_lab_kernel_one_line_says_how_to_get_one(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, backend: str, told: list[str]
) -> None:
    monkeypatch.setenv(lab.SETTING, backend)
    monkeypatch.setattr(Uml, "kernel", lambda self: "/nonexistent/linux.uml")
    monkeypatch.setattr(lab_backends, "QEMU", "/nonexistent/qemu-system-x86_64")
    (workdir / "plan.toml").write_text(PLAN)
    result = CliRunner().invoke(main, ["rehearse", str(workdir / "plan.toml")])
    assert result.exit_code == 1, result.output
    [line] = result.output.strip().splitlines()
    assert all(words in line for words in told), line


def test_a_lab_backend_that_is_not_one_is_refused_in_one_line(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(lab.SETTING, "bochs")
    (workdir / "plan.toml").write_text(PLAN)
    result = CliRunner().invoke(main, ["rehearse", str(workdir / "plan.toml")])
    assert result.exit_code == 1, result.output
    [line] = result.output.strip().splitlines()
    assert "IOLAB_LAB_BACKEND='bochs' is not a lab backend; use one of uml, qemu" in line, line


def test_a_plan_that_builds_nothing_has_nothing_to_rehearse(workdir: Path) -> None:
    (workdir / "plan.toml").write_text('[[setup]]\npath = "."\n[[workload]]\nrw = "read"\n')
    result = CliRunner().invoke(main, ["rehearse", str(workdir / "plan.toml")])
    assert result.exit_code == 1 and "nothing to rehearse" in result.output, result.output


def test_a_set_ups_rehearsal_plan_is_the_set_up_without_hooks_and_one_short_run() -> None:
    the_plan = parse_plan(PLAN, "plan.toml")
    text = rehearsal.plan_text(the_plan, the_plan.setups[0])
    data = tomllib.loads(text)
    [setup] = data["setup"]
    assert setup["devices"] == ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1"]
    assert (setup["level"], setup["chunk"], setup["filesystem"]) == ("5", "256k", "xfs")
    assert "setup_hook" not in setup
    [workload] = data["workload"]
    assert (workload["rw"], workload["runtime"], workload["ramp_time"]) == ("randwrite", 1, 0)
    assert workload["size"] == "64m"
    layout = the_plan.setups[0].layout
    assert layout is not None
    again = parse_plan(text, "rehearsal.toml")
    assert again.setups[0].layout == replace(layout, setup_hook=None)


def test_disks_follow_the_plan_and_are_sized_after_real_devices() -> None:
    text = PLAN.replace("/dev/nvme2n1", "/dev/loop-nope").replace(
        'md_layout = "no-such-layout"', 'md_layout = "left-symmetric"'
    )
    text += '[[setup]]\nname = "one"\ndevices = ["/dev/null-disk"]\n'
    found = rehearsal.disks(parse_plan(text, "plan.toml"))
    devices = ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/loop-nope", "/dev/null-disk"]
    assert [d.device for d in found] == devices
    assert {d.size for d in found} == {rehearsal.DEFAULT_IMAGE}
    images = [Path(f"disk{i}.img") for i in range(4)]
    uml = [d.inside for d in Uml().drives(images, devices)]
    assert uml == ["/dev/ubda", "/dev/ubdb", "/dev/ubdc", "/dev/ubdd"]
    assert 'KERNEL=="ubdc", SYMLINK+="loop-nope"' in rehearsal.udev_rules(found, uml)
    qemu = [d.inside for d in Qemu().drives(images, devices)]
    assert qemu == ["/dev/nvme0n1", "/dev/nvme1n1", "/dev/vda", "/dev/vdb"], "NVMe as NVMe"
    rules = rehearsal.udev_rules(found, qemu)
    assert 'KERNEL=="vda", SYMLINK+="loop-nope"' in rules and "nvme" not in rules


@pytest.mark.parametrize(
    ("code", "output", "cases", "said"),
    [
        (0, "", [("ok", None)], "built, ran and torn down"),
        (
            3,
            "",
            [
                (
                    "failed",
                    "set-up 's' failed: set-up step failed: mdadm --create x: bad; "
                    "and teardown step failed: umount y: busy",
                )
            ],
            "did not build: mdadm --create x: bad; and its teardown failed: umount y: busy",
        ),
        (
            3,
            "",
            [("failed", "EIO: Input/output error: fio: io_u error")],
            "built; fio failed: EIO: Input/output error: fio: io_u error; torn down",
        ),
        (
            1,
            "iolab: error: teardown step failed: mdadm --stop /dev/md127: busy\n",
            [("ok", None)],
            "built and ran; teardown failed: mdadm --stop /dev/md127: busy",
        ),
        (
            1,
            "iolab: error: /dev/nvme0n1: refused, it is mounted\n",
            [],
            "did not run: /dev/nvme0n1: refused, it is mounted",
        ),
    ],
)
def test_what_a_rehearsal_says_of_each_outcome(
    code: int, output: str, cases: list[tuple[str, str | None]], said: str
) -> None:
    found = rehearsal.verdict("s", code, output, cases)
    assert (found.ok, found.text) == (code == 0, said)


def test_the_labs_plan_keeps_each_set_ups_drive_cache() -> None:
    """The plan the lab runs sets each set-up's drive_cache (it once dropped it, and the lab
    measured "write-through" set-ups under whatever the disk had)."""
    text = (
        '[[setup]]\nname = "nvme"\ndevices = ["/dev/nvme0n1"]\n'
        'drive_cache = ["write-back", "write-through"]\n[[workload]]\nrw = "randwrite"\n'
    )
    inside = tomllib.loads(lab_run.plan_text(parse_plan(text, "plan.toml")))
    caches = [(s["name"], s.get("drive_cache")) for s in inside["setup"]]
    assert caches == [("nvme write-back", "write-back"), ("nvme write-through", "write-through")]


def _killed_holder(base: Path) -> Path:
    """A process that takes a scratch folder and is SIGKILLed inside it: what it leaves."""
    script = (
        "import os, sys\nfrom pathlib import Path\nfrom iolab.targets import scratch\n"
        "with scratch.folder(print, Path(sys.argv[1])) as made:\n"
        "    (made / 'disk0.img').write_bytes(b'x')\n"
        "    print(made, flush=True)\n"
        "    os.kill(os.getpid(), 9)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(base)], capture_output=True, text=True, check=False
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    return Path(done.stdout.strip())


@pytest.mark.slow  # starts a Python process that is killed
def test_a_killed_commands_lab_folder_is_removed_by_the_next(tmp_path: Path) -> None:
    """The killed command's folder goes, said in one line; a live command's folder, a folder
    iolab did not mark as its own, a link and another name are left."""
    left = _killed_holder(tmp_path)
    assert (left / "disk0.img").exists()
    foreign = tmp_path / "iolab-rehearse-by-hand"
    foreign.mkdir()
    (tmp_path / "iolab-rehearse-link").symlink_to(left)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / scratch.OWNER).write_text("")
    said: list[str] = []
    with scratch.folder(print, tmp_path) as live, scratch.folder(said.append, tmp_path) as mine:
        assert said == [], "the first command already removed it"
        assert live.is_dir() and mine.is_dir() and live != mine
    assert not left.exists()
    assert foreign.is_dir() and (tmp_path / "other").is_dir()
    assert (tmp_path / "iolab-rehearse-link").is_symlink()
    assert not live.exists() and not mine.exists(), "each command removes its own at its end"


def test_a_live_commands_lab_folder_is_kept(tmp_path: Path) -> None:
    said: list[str] = []
    with scratch.folder(said.append, tmp_path) as first:
        (first / "disk0.img").write_bytes(b"x")
        assert scratch.left_behind(tmp_path) == []
        with scratch.folder(said.append, tmp_path):
            assert (first / "disk0.img").exists()
    assert said == []


@pytest.mark.slow  # starts a Python process that is killed
def test_the_next_command_says_what_it_removed(tmp_path: Path) -> None:
    left = _killed_holder(tmp_path)
    said: list[str] = []
    with scratch.folder(said.append, tmp_path):
        pass
    assert said == [f"removed {left}: the lab folder of an iolab that was killed"]
