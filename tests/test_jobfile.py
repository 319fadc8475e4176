"""Job files: every option of every preset reaches fio, as fio itself reads the file back."""

from __future__ import annotations

from pathlib import Path

import pytest

from iolab.errors import FioError
from iolab.fio import info, jobfile
from iolab.plan.common import Overrides
from iolab.plan.load import load_preset, preset_names
from iolab.runner.campaign import plan_campaign


@pytest.mark.fio
@pytest.mark.parametrize("name", preset_names())
def test_every_option_of_every_preset_reaches_fio(name: str, workdir: Path) -> None:
    the_plan = load_preset(name, Overrides(target=str(workdir)))
    campaign = plan_campaign(the_plan, info.probe(), probe_write=False)
    jobs = [campaign.preview(step) for step in campaign.steps]
    seen = jobfile.read_back(jobfile.render(jobs))
    assert len(seen) == len(jobs)
    for job, fio_view in zip(jobs, seen, strict=True):
        expected = {key: jobfile.fio_value(value) for key, value in job.options.items()}
        assert fio_view == expected, job.name
    zeros = [job for job in jobs if job.options.get("direct") == 0]
    if name == "dd-bonnie-2009":
        assert zeros, "direct=0 must be written, not dropped"


@pytest.mark.fio
def test_auto_values_are_resolved(workdir: Path) -> None:
    the_plan = load_preset("quick", Overrides(target=str(workdir)))
    fio = info.probe()
    campaign = plan_campaign(the_plan, fio, probe_write=False)
    options = campaign.preview(campaign.steps[0]).options
    assert options["ioengine"] == fio.default_engine in ("io_uring", "libaio", "psync")
    assert options["filename"] == str(workdir.resolve() / "iolab.testfile")
    assert str(options["size"]).endswith("m") and options["size"] != "0m"


def test_sample_logs_are_requested_when_asked() -> None:
    options = jobfile.with_logs({"rw": "read", "log_avg_msec": 1000}, "samples")
    assert options["write_iops_log"] == options["write_bw_log"] == "samples"
    assert "write_lat_log" in options
    assert jobfile.with_logs({"rw": "read"}, "samples") == {"rw": "read"}


@pytest.mark.fio
def test_fio_refuses_an_option_its_engine_lacks() -> None:
    """An engine's option (libaio's userspace_reap) is safe, but fio knows it only with that
    engine: fio's own refusal names the job and the option."""
    good = jobfile.Job("a", {"rw": "read", "filename": "/var/tmp/x", "size": "1m"})
    bad = jobfile.Job(
        "b", {"rw": "read", "ioengine": "psync", "filename": "/var/tmp/x", "userspace_reap": 1}
    )
    jobfile.fio_accepts([good])
    with pytest.raises(jobfile.Rejected) as caught:
        jobfile.fio_accepts([good, bad])
    assert (caught.value.index, caught.value.key) == (1, "userspace_reap")
    assert caught.value.reason.startswith("unknown key 'userspace_reap': neither an iolab key")
    assert isinstance(caught.value, FioError), "the fio layer knows nothing of plans"


def test_an_option_not_allowed_never_reaches_a_job_file() -> None:
    for key in ("blocksze", "include", "exec_prerun", "readfua"):
        with pytest.raises(FioError, match=f"fio option '{key}' cannot go into a job file"):
            jobfile.render([jobfile.Job("a", {"rw": "read", key: "x"})])


@pytest.mark.fio
def test_fio_refuses_a_bad_pass_through_value() -> None:
    bad = jobfile.Job("a", {"rw": "read", "filename": "/var/tmp/x", "verify": "sha7"})
    with pytest.raises(jobfile.Rejected, match="fio rejects verify=sha7") as caught:
        jobfile.fio_accepts([bad])
    assert caught.value.key == "verify"


def test_section_names_are_safe() -> None:
    assert jobfile.section_name("4k random read QD32") == "4k-random-read-QD32"
    assert jobfile.section_name("SEQ1M Q8T1 rw=read") == "SEQ1M-Q8T1-rw-read"
    assert jobfile.section_name("///") == "job"
