"""`iolab -v`: each command iolab runs is said on stderr, one line each, before it runs;
without it stderr stays as quiet as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_iolab

PLAN = """
[[setup]]
name = "here"
path = "{path}"

[[workload]]
name = "null"
ioengine = "null"
rw = "randread"
size = "16m"
runtime = 1
time_based = 1
"""


@pytest.mark.fio
def test_verbose_says_each_fio_run(workdir: Path) -> None:
    (workdir / "plan.toml").write_text(PLAN.format(path=workdir))
    loud = run_iolab("-v", "run", "plan.toml", "--repeat", "2", cwd=workdir, check=True)
    said = [line for line in loud.stderr.splitlines() if line.startswith("iolab: ran: ")]
    fio = [line for line in said if " --output-format=json+ " in line]
    assert len(fio) == 2 and all("job.fio" in line for line in fio), loud.stderr
    # every other tool run is said too: smartctl reading the disk, where it is installed
    others = {line.split()[2] for line in said if line not in fio}
    assert {tool.rsplit("/", 1)[-1] for tool in others} <= {"smartctl"}, loud.stderr
    quiet = run_iolab("run", "plan.toml", "--db", "q.db", cwd=workdir, check=True)
    assert "ran:" not in quiet.stderr
