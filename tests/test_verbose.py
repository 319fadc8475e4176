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
    assert len(said) == 2, loud.stderr
    assert all("fio --output-format=json+" in line and "job.fio" in line for line in said)
    quiet = run_iolab("run", "plan.toml", "--db", "q.db", cwd=workdir, check=True)
    assert "ran:" not in quiet.stderr
