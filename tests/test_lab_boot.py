"""What iolab says when the lab kernel does not boot: a host the installed user-mode Linux cannot
serve at all (its CPU's register state), told apart from a boot that failed for another reason.
A stand-in kernel prints what user-mode Linux 6.1 printed on such a host; the other failure is
the real kernel's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from iolab.errors import LabHostError, TargetError
from iolab.targets import lab, lab_backends

# two lines user-mode Linux 6.1 printed as it died on a host with a larger XSAVE area: the
# refusal, and the last line of the call trace that followed it
REFUSED = """userspace - ptrace set fp regs failed, errno = 14
[<6002c0dd>] new_thread_handler+0xae/0xb0
"""


def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, console: str) -> lab.Kernel:
    modules = tmp_path / "modules"
    (modules / "6.1.176").mkdir(parents=True)
    printed = tmp_path / "console.txt"
    printed.write_text(console)
    kernel = tmp_path / "linux.uml"
    kernel.write_text(f"#!/bin/sh\ncat {printed}\nexit 1\n")
    kernel.chmod(0o755)
    monkeypatch.setenv(lab.SETTING, "uml")
    monkeypatch.setattr(lab_backends, "UML_MODULES", modules)
    monkeypatch.setattr(lab_backends.Uml, "kernel", lambda self: str(kernel))
    return lab.Kernel(tmp_path / "lab", [])


def test_a_host_the_kernel_cannot_serve_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(LabHostError) as raised:
        stand_in(tmp_path, monkeypatch, REFUSED).start()
    said = str(raised.value)
    assert said.startswith("the lab kernel cannot run on this host")
    assert "ptrace set fp regs failed, errno = 14" in said
    assert said.endswith("use the lab on another machine, or a newer user-mode Linux")


@pytest.mark.kernel
@pytest.mark.usefixtures("lab_host")
def test_a_real_failed_boot_is_not_taken_for_a_host_it_cannot_serve(tmp_path: Path) -> None:
    """Too little memory for the kernel: a failed boot, said with the console's words, not
    a host the lab cannot run on (which would send the lab to another backend)."""
    too_small = lab.Kernel(tmp_path / "lab", [], memory_mib=8)
    with pytest.raises(TargetError) as raised:
        too_small.start()
    assert not isinstance(raised.value, LabHostError)
    said = str(raised.value)
    assert said.startswith("the lab kernel did not boot: "), said
    if lab.backends()[0].name == "uml":
        assert said.startswith("the lab kernel did not boot: Too few physical memory! Needed=")


def test_the_initramfs_is_an_archive_cpio_reads(tmp_path: Path) -> None:
    """QEMU's initramfs is a newc cpio archive written by iolab: GNU cpio (as the kernel's
    unpacker) reads back every name, mode and byte."""
    data = lab_backends.cpio(
        [("bin", 0o040755, b""), ("bin/x", 0o100755, b"abc"), ("init", 0o100644, b"#!\n")]
    )
    (tmp_path / "a.cpio").write_bytes(data)
    (tmp_path / "out").mkdir()
    done = subprocess.run(
        ["cpio", "-idv", "-F", str(tmp_path / "a.cpio")],
        cwd=tmp_path / "out",
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr.split()[:3] == ["bin", "bin/x", "init"], done.stderr
    assert (tmp_path / "out" / "bin" / "x").read_bytes() == b"abc"
    assert (tmp_path / "out" / "bin" / "x").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "out" / "init").read_bytes() == b"#!\n"
