"""What iolab says when the lab kernel does not boot: a host the installed user-mode Linux cannot
serve at all (its CPU's register state), told apart from a boot that failed for another reason.
A stand-in kernel prints what user-mode Linux 6.1 printed on such a host; the other failure is
the real kernel's."""

from __future__ import annotations

from pathlib import Path

import pytest

from iolab.errors import LabHostError, TargetError
from iolab.targets import lab

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
    monkeypatch.setattr(lab, "MODULES", modules)
    monkeypatch.setattr(lab, "kernel", lambda: str(kernel))
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
@pytest.mark.skipif(lab.missing() is not None, reason="no user-mode-linux here")
def test_a_real_failed_boot_is_not_taken_for_a_host_it_cannot_serve(tmp_path: Path) -> None:
    too_small = lab.Kernel(tmp_path / "lab", [], memory_mib=8)
    with pytest.raises(TargetError) as raised:
        too_small.start()
    assert not isinstance(raised.value, LabHostError)
    said = str(raised.value)
    assert said.startswith("the lab kernel did not boot: Too few physical memory! Needed="), said
