"""fio job files from resolved workload options, and fio's own reading of them back."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from iolab.errors import FioError
from iolab.fio import info, options
from iolab.model import FioValue

LOG_KINDS = ("bw", "iops", "lat")


@dataclass(frozen=True)
class Job:
    """One fio job section: a name and its options, in order, with nothing left to resolve."""

    name: str
    options: Mapping[str, FioValue]
    comment: str = ""


def section_name(name: str) -> str:
    """fio job names: keep letters, digits, '.', '_' and '-'."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "job"


def fio_value(value: FioValue) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


_KEY = re.compile(r"^[a-z][a-z0-9_-]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _line(key: str, value: FioValue) -> str:
    """One `key=value` line; anything that could start another line or section is refused,
    and so is an option neither classified safe nor one iolab sets (fio.options: an allow-list)."""
    text = fio_value(value)
    if not _KEY.match(key) or _CONTROL.search(text):
        raise FioError(f"fio option {key!r} = {text!r} cannot go into a job file: plain text only")
    if not options.passable(key):
        raise FioError(f"fio option {key!r} cannot go into a job file: iolab does not pass it on")
    problem = options.value_problem(key, text)
    if problem:
        raise FioError(f"fio option {key} = {text!r} cannot go into a job file: it {problem}")
    return f"{key}={text}"


def _ordered(given: Mapping[str, FioValue]) -> list[tuple[str, FioValue]]:
    """The options in order, kb_base first and those iolab sets (the file fio uses, its logs)
    last: fio reads a size's suffix under the kb_base given before it, so every size of the job
    is read in one base (as `fio.reach` reads them); fio takes an option's last value, so none
    of iolab's can be overridden (and fio.options lets no other option that names a file in: a
    second filename= would add its file, not replace iolab's)."""
    own = [key for key in given if key in options.IOLAB_SETS]
    first = [key for key in given if key == "kb_base"]
    rest = [key for key in given if key not in own and key not in first]
    return [(key, given[key]) for key in (*first, *rest, *own)]


def render(jobs: Sequence[Job]) -> str:
    """The text of one job file holding these jobs, each in its own section.

    Generated line by line from checked keys and values: a name or value can never add a
    line, a section or an include of its own.
    """
    parts = []
    for job in jobs:
        comment = _CONTROL.sub(" ", job.comment)
        lines = [f"# {comment}"] if comment else []
        lines.append(f"[{section_name(job.name)}]")
        lines += [_line(key, value) for key, value in _ordered(job.options)]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def with_logs(options: Mapping[str, FioValue], prefix: str) -> dict[str, FioValue]:
    """Add fio's bw/iops/lat logs under `prefix` when the workload asks for samples;
    `log_avg_msec = 0` asks for none (fio would log every single I/O)."""
    out = dict(options)
    if out.get("log_avg_msec") == 0:
        del out["log_avg_msec"]
    elif "log_avg_msec" in out:
        for kind in LOG_KINDS:
            out.setdefault(f"write_{kind}_log", prefix)
    return out


@contextlib.contextmanager
def _in_memory(text: str) -> Iterator[str]:
    """A job file fio can open by name that lives only in this process's memory (memfd), so
    that nothing is left in the temporary folder when iolab is killed (kill -9) while fio
    reads it."""
    fd = os.memfd_create("iolab-jobs.fio", os.MFD_CLOEXEC)
    try:
        data = memoryview(text.encode())
        while data:
            data = data[os.write(fd, data) :]
        yield f"/proc/{os.getpid()}/fd/{fd}"
    finally:
        os.close(fd)


def read_back(text: str, fio: str = "fio") -> list[dict[str, str]]:
    """fio's own reading of a job file, via --showcmd: one dict of options per job."""
    with _in_memory(text) as name:
        shown = info.ask([fio, "--showcmd", name], "reading a job file back")
    jobs: list[dict[str, str]] = []
    for word in shlex.split(shown.stdout):
        key, _, value = word.removeprefix("--").partition("=")
        if key == "name":
            jobs.append({})
        elif jobs:
            jobs[-1][key] = value
    return jobs


class Rejected(FioError):
    """fio refused a job: which one (its index), the option at fault if fio named it, why.
    The caller places it in whatever the job came from (a plan's line)."""

    def __init__(self, index: int, key: str | None, reason: str) -> None:
        super().__init__(reason)
        self.index, self.key, self.reason = index, key, reason


def fio_accepts(jobs: Sequence[Job], fio: str = "fio") -> None:
    """Let fio parse all jobs at once (--parse-only); raise Rejected for the first it refuses."""
    numbered = [Job(f"j{i}", job.options) for i, job in enumerate(jobs)]
    with _in_memory(render(numbered)) as name:
        done = info.ask([fio, "--parse-only", name], "checking the plan's jobs")
    if done.returncode == 0:
        return
    text = done.stdout + done.stderr
    dropped = re.search(r"job j(\d+) dropped", text)
    raise Rejected(int(dropped.group(1)) if dropped else 0, *_fio_complaint(text))


def _fio_complaint(text: str) -> tuple[str | None, str]:
    """(the option fio names, if any; why it refuses) from fio's --parse-only output."""
    bad = re.search(r"Bad option <([^=>]+)=?([^>]*)>", text)
    if bad:
        hint = re.search(r"Did you mean (\S+)\?", text)
        also = f" (fio suggests {hint.group(1)!r})" if hint else ""
        key = bad.group(1)
        return key, f"unknown key {key!r}: neither an iolab key nor an fio option{also}"
    failed = re.search(r"failed parsing (([^=\s]+)=\S*)", text)
    if failed:
        reason = f"fio rejects {failed.group(1)}: fix the value (see 'fio --cmdhelp=OPTION')"
        return failed.group(2), reason
    lines = [_CONTROL.sub("?", line.strip())[:200] for line in text.splitlines() if line.strip()]
    return None, f"fio rejects the job: {lines[0] if lines else 'no reason given'}"
