"""`iolab import`: files (and folders of them) read, recognised, checked against what the
database already holds, and stored: fio's output (bench-fio's trees too), dd's and bonnie++'s
reports and published tables as one new run, each iolab export as the run it holds. A file that
cannot be read is one line naming it and why; the rest still import."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iolab import names
from iolab.errors import PlanError
from iolab.exchange import (
    benchfio,
    bonnie,
    dd,
    factored,
    fio_json,
    logs,
    published,
    restore,
    rules,
    terse,
)
from iolab.exchange.found_jobs import FoundJob, UnreadableJob
from iolab.exchange.named_jobs import Placed
from iolab.exchange.read_progress import Watch, documents_of
from iolab.exchange.run_builder import Facts, build_run, setup_name, setup_names, software
from iolab.fio import parse
from iolab.model import JSON, Origin, Ratio
from iolab.store import Store

# Walking a folder reads the files that may be results (and fio's client/server logs, named
# NAME_bw.1.log.HOST), and leaves job files and the like.
OUTPUT_SUFFIXES = (".json", ".log", ".txt", ".out", ".terse", ".csv")
MAX_BYTES = 1024**3
MAX_FOLDER_DEPTH = 64  # bench-fio's trees are 5 deep; a folder deeper than this is no result tree
_JSON_START = re.compile(r"\s*\{")
_Groups = dict[tuple[Path, str], list[Path]]  # the logs found, by folder and name
KNOWN = (
    "fio JSON or json+, terse v3-v5, a --status-interval stream, client/server JSON, fio's "
    "_bw/_iops/_lat/_clat logs, dd's or bonnie++'s report, a published table, or an iolab export"
)


class _Unknown(UnreadableJob):
    """A file of no kind iolab reads."""


@dataclass
class Source:
    path: Path
    text: str
    digest: str
    large: bool = False  # fio's JSON over fio_json.STREAM_FROM: read a chunk at a time


@dataclass
class Batch:
    """What was read: fio's jobs, iolab exports, and a line for each file left out."""

    setup: str | None
    jobs: list[FoundJob] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)  # the files the jobs come from
    exports: list[tuple[Source, dict[str, list[dict[str, Any]]]]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    facts: Facts = field(default_factory=Facts)  # what `iolab import` was told of the set-ups
    # each set-up's factors, by its name ("": every set-up's), from --factor
    factors: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    # a published table's set-ups' factors (its columns), by (set-up, the table's file)
    tables: dict[tuple[str, Path], tuple[tuple[str, str], ...]] = field(default_factory=dict)
    baseline: str | None = None  # --baseline: the set-up a table of percentages is of
    ratios: list[tuple[Source, list[Ratio]]] = field(default_factory=list)  # each such table's

    @property
    def empty(self) -> bool:
        return not self.jobs and not self.exports and not self.ratios


@dataclass(frozen=True)
class Imported:
    runs: tuple[tuple[int, str], ...]  # (run id, a line saying what it holds)
    problems: tuple[str, ...]  # one line per file that could not be imported
    skipped: tuple[str, ...]  # one line per file already imported

    def problem_line(self) -> str:
        """The files that could not be imported, in one line: the first SHOWN_FILES with why
        (each file's own line), the rest counted, and how many; and those left out."""
        left_out = self.skipped_line()
        return (
            f"{_some(self.problems)} ({len(self.problems):,} of the files could not be "
            f"imported{'; ' if left_out else ''}{left_out})"
        )

    def skipped_line(self) -> str:
        """The files left out as imported before (or twice), in one line ("" if none): the
        file's own line, or how many and the first SHOWN_FILES."""
        if len(self.skipped) <= 1:
            return "".join(self.skipped)
        return f"{len(self.skipped):,} of the files left out ({_some(self.skipped)})"


def _some(lines: Sequence[str]) -> str:
    more = len(lines) - SHOWN_FILES
    return "; ".join(lines[:SHOWN_FILES]) + (f"; and {more:,} more" if more > 0 else "")


SHOWN_FILES = 3  # files named, with why, in the line of those not imported or left out


def files(paths: Sequence[str], problems: list[str]) -> list[Path]:
    """The files named, and those under the folders named (sorted), each once."""
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            try:
                inside = _walk(path)
            except UnreadableJob as error:
                problems.append(f"{name}: {error}")
                continue
            if not inside:  # said, not passed over: an import that reads nothing is no import
                problems.append(
                    f"{name}: no regular file of a kind iolab imports in it (a FIFO, a device or "
                    f"a link to one is left out); files end in {', '.join(OUTPUT_SUFFIXES)}"
                )
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            why = "no such file or folder" if not path.exists() else "not a regular file"
            problems.append(f"{name}: {why}")
    return list(dict.fromkeys(found))


def _walk(folder: Path) -> list[Path]:
    """The result files under `folder` (sorted): not under hidden folders, nor through linked
    folders; a tree deeper than MAX_FOLDER_DEPTH is refused whole."""
    found: list[Path] = []
    stack = [(folder, 0)]
    while stack:
        where, depth = stack.pop()
        try:
            with os.scandir(where) as listing:
                entries = list(listing)
        except OSError:
            continue  # a folder that cannot be listed holds nothing to import
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth >= MAX_FOLDER_DEPTH:
                    raise UnreadableJob(
                        f"folders nested more than {MAX_FOLDER_DEPTH} levels deep in it; name "
                        "the folder of the results themselves"
                    )
                stack.append((path, depth + 1))
            elif _is_file(entry) and (
                path.suffix.lower() in OUTPUT_SUFFIXES or benchfio.is_host_log(path)
            ):
                found.append(path)
    return sorted(found)


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def read(
    paths: Sequence[str],
    setup: str | None,
    imported: Mapping[str, int],
    baseline: str | None = None,
    watch: Watch | None = None,
) -> Batch:
    """Every file read and recognised; those already in the database (by their content's
    sha256), or given twice, are skipped with a line saying so. `baseline`: the set-up a
    table of percentages is relative to (--baseline); `watch`: who hears how far a large
    file's reading has got."""
    batch = Batch(given_setup(setup), baseline=given_setup(baseline, "--baseline"))
    seen: dict[str, Path] = {}
    groups: _Groups = {}
    named = {Path(name) for name in paths}
    for path in files(paths, batch.problems):
        try:
            source = _source(path)
        except UnreadableJob as error:
            batch.problems.append(f"{path}: {error}")
            continue
        blank = not source.text or source.text.isspace()
        if blank and (logs.NAME.match(path.name) or benchfio.is_host_log(path)):
            continue  # fio's log of a job shorter than one interval: nothing in it
        if source.digest in imported:
            batch.skipped.append(f"{path}: already imported (run {imported[source.digest]})")
            continue
        if source.digest in seen:
            batch.skipped.append(f"{path}: the same content as {seen[source.digest]}")
            continue
        seen[source.digest] = path
        try:
            _recognise(batch, source, groups, watch)
            source.text = ""  # read: its name and digest are kept, not what it holds
        except _Unknown:
            if path.suffix.lower() == ".csv" and path not in named:  # found in a folder
                batch.skipped.append(f"{path}: a CSV file of no kind iolab reads, left out")
            else:
                batch.problems.append(f"{path}: not fio output iolab knows ({KNOWN})")
        except UnreadableJob as error:
            batch.problems.append(f"{path}: {error}")
    _attach(batch, groups)
    return batch


def _source(path: Path) -> Source:
    try:
        if _large_json(path):
            return Source(path, "", _digest(path), large=True)
        data = _contents(path)
        return Source(path, data.decode(), hashlib.sha256(data).hexdigest())
    except UnicodeDecodeError:
        raise UnreadableJob(f"not text ({KNOWN} is)") from None
    except OSError as error:
        raise UnreadableJob(f"cannot be read ({error.strerror})") from None


def _contents(path: Path) -> bytes:
    """A regular file's bytes, at most MAX_BYTES; what it is is told from the open file itself
    (opened without blocking), so a FIFO or a device put in place of a file after it was
    listed is refused instead of waited on."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(handle, "rb") as opened:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode):
            raise UnreadableJob("not a regular file (a FIFO, a device or a socket); name the file")
        if found.st_size > MAX_BYTES:
            raise UnreadableJob("larger than 1 GiB; fio's output is smaller")
        data = opened.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:  # it grew while it was read
        raise UnreadableJob("larger than 1 GiB; fio's output is smaller")
    return data


def _large_json(path: Path) -> bool:
    """A regular file larger than fio_json.STREAM_FROM (and at most MAX_BYTES) that starts as
    fio's JSON: read a chunk at a time, never whole."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(handle, "rb") as opened:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode) or found.st_size <= fio_json.STREAM_FROM:
            return False
        if found.st_size > MAX_BYTES:
            raise UnreadableJob("larger than 1 GiB; fio's output is smaller")
        head = opened.read(4096).decode(errors="replace")
    return bool(_JSON_START.match(head)) or '"fio version"' in head


def _digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _recognise_large(batch: Batch, source: Source, watch: Watch | None) -> None:
    """fio's JSON (or an export) read a document at a time: its memory is a document's and
    the samples, not the file's."""
    with documents_of(source.path, watch) as docs:
        first = next(docs)
        if restore.is_export(first.value):
            batch.exports.append((source, restore.tables(first.value)))
            return
        # a file of one document is its raw json+, kept whole (at most MAX_DOCUMENT_CHARS)
        raw = "" if first.several else source.path.read_text(encoding="utf-8")
        found = fio_json.jobs_of(source.path, raw, first, docs)
    jobs = benchfio.placed_jobs(source.path, _usable(found))
    _checked(jobs)
    _named(jobs, batch.setup)
    batch.jobs += jobs
    batch.sources.append(source)


def _recognise(batch: Batch, source: Source, groups: _Groups, watch: Watch | None) -> None:
    path, text = source.path, source.text
    if source.large:
        try:
            _recognise_large(batch, source, watch)
        except UnicodeDecodeError:
            raise UnreadableJob(f"not text ({KNOWN} is)") from None
        return
    if logs.is_log(path, text) or benchfio.is_host_log(path):
        logs.check_log(path, text)
        groups.setdefault((path.parent, benchfio.log_prefix(path)), []).append(path)
        batch.sources.append(source)
        return
    jobs: list[FoundJob]
    if terse.is_terse(text):
        jobs = list(terse.read(path, text))
    elif _JSON_START.match(text) or '"fio version"' in text:
        docs = fio_json.each(text)
        first = next(docs)
        if restore.is_export(first.value):
            batch.exports.append((source, restore.tables(first.value)))
            return
        jobs = benchfio.placed_jobs(path, _usable(fio_json.jobs_of(path, text, first, docs)))
    elif dd.is_dd(text):
        jobs = list(dd.read(path, text))
    elif bonnie.is_bonnie(text):
        jobs = list(bonnie.read(path, text))
    elif published.is_table(text) and published.is_ratio_table(text):
        batch.ratios.append((source, factored.ratios(text, batch.setup, batch.baseline)))
        batch.sources.append(source)
        return
    elif published.is_table(text):
        jobs = list(published.read(path, text))
        for setup, found in published.factors(text).items():
            batch.tables[(_name(setup, "set-up name"), path)] = found
    else:
        raise _Unknown(KNOWN)
    _checked(jobs)
    _named(jobs, batch.setup)
    batch.jobs += jobs
    batch.sources.append(source)


def _checked(jobs: Sequence[FoundJob]) -> None:
    """Every job's figures, samples and options in range (exchange.rules), whatever read them;
    a job is named (by its position when its name is not plain text) if the file has several."""
    for number, job in enumerate(jobs, start=1):
        where = f"{rules.field_name(job.name, f'job {number}')}: " if len(jobs) > 1 else ""
        if job.metrics is not None:
            rules.check_metrics(job.metrics, where)
        rules.check_samples(job.samples, where)
        rules.check_options(job.options, f"{where}options")


def _named(jobs: Sequence[FoundJob], given: str | None) -> None:
    """Every name a file brings in, by the rule of names (iolab.names), kept normalised: its
    jobs', the set-ups it names (or its folder's, which names the set-up without --setup),
    and its hosts'."""
    for number, job in enumerate(jobs, start=1):
        where = f"job {number}: " if len(jobs) > 1 else ""
        job.name = _name(job.name, f"{where}job name")
        if isinstance(job, Placed) and job.setup:
            job.setup = _name(job.setup, f"{where}set-up name")
        elif given is None:
            folder = "the name of its folder (the set-up's name)"
            _name(setup_name(job, None), folder, "; rename the folder or give --setup NAME")
        for entry in job.entries:
            if "hostname" in entry:
                entry["hostname"] = _name(str(entry["hostname"]), f"{where}hostname")


def _name(value: str, what: str, remedy: str = "") -> str:
    try:
        return names.check(value)
    except names.BadName as error:
        raise UnreadableJob(f"{what} {error}{remedy}") from None


def given_setup(setup: str | None, flag: str = "--setup") -> str | None:
    """--setup NAME (or --baseline NAME), by the rule of names; PlanError (one line) when it
    breaks it."""
    if setup is None:
        return None
    try:
        return names.check(setup)
    except names.BadName as error:
        raise PlanError(f"{flag}: the set-up name {error}") from None


def add_factors(batch: Batch, given: Mapping[str, tuple[tuple[str, str], ...]]) -> None:
    """--factor's factors after the tables' own (so they win); a set-up named that the import
    does not have is refused (PlanError naming those it has)."""
    have = setup_names(batch.jobs, batch.setup)
    have += [n for _, found in batch.ratios for n in (found[0].setup, found[0].baseline)]
    factored.check_named(given, list(dict.fromkeys(have)))
    for setup, found in given.items():
        batch.factors[setup] = (*batch.factors.get(setup, ()), *found)


def _usable(jobs: list[FoundJob]) -> list[FoundJob]:
    """Jobs whose entries fio's parser reads (a value of the wrong type is the file's fault)."""
    for job in jobs:
        try:
            parse.metrics({"jobs": list[JSON](job.entries)})
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise UnreadableJob(
                f"job {job.name!r}: a value fio would not write ({error})"
            ) from None
    return jobs


def _attach(batch: Batch, groups: _Groups) -> None:
    """Logs to their jobs: bench-fio's by its names, client/server logs (NAME_bw.1.log.HOST) to
    the job of that name or the folder's only job, other logs as logs.attach does."""
    for key, paths in groups.items():
        folder, prefix = key
        claims = logs.claimants((j for j in batch.jobs if j.file.parent == folder), prefix)
        if len(claims) > 1:
            batch.skipped.append(_overwritten(folder, prefix, paths, claims))
            batch.sources = [s for s in batch.sources if s.path not in paths]
            continue
        owner = benchfio.owner(folder, prefix, batch.jobs)
        try:
            if all(benchfio.is_host_log(p) for p in paths):
                owner = owner or _only(batch.jobs, folder, prefix)
                if owner is None:
                    raise UnreadableJob(
                        "client/server logs without their job's fio JSON beside them"
                    )
                benchfio.attach_host_logs(owner, paths)
            elif owner is not None:
                logs.attach([owner], {key: paths})
            else:
                attached = logs.attach(batch.jobs, {key: paths})
                _checked([job for job in attached if job.file in paths])
                _named([job for job in attached if job.file in paths], batch.setup)
                batch.jobs = attached
        except UnreadableJob as error:
            batch.problems.append(f"{', '.join(str(p) for p in paths)}: {error}")
            batch.sources = [s for s in batch.sources if s.path not in paths]


def _overwritten(folder: Path, prefix: str, paths: list[Path], claims: list[FoundJob]) -> str:
    """One line for the logs that several jobs' write_*_log named alike."""
    files = ", ".join(sorted(names.shown(j.file.name) for j in claims))
    return (
        f"{folder / names.shown(prefix)}_*.log ({len(paths)} files): named by the write_*_log "
        f"of {len(claims)} jobs ({files}), each run wrote them over the one before, so they "
        "are no one job's: left out"
    )


def _only(jobs: list[FoundJob], folder: Path, name: str) -> FoundJob | None:
    """The job called NAME in FOLDER, else the folder's only job."""
    beside = [j for j in jobs if j.file.parent == folder]
    named = [j for j in beside if j.name == name]
    return named[0] if len(named) == 1 else beside[0] if len(beside) == 1 else None


def save(batch: Batch, store: Store, iolab_version: str) -> Imported:
    """fio's jobs as one run; each export as its own run."""
    runs = [_save_jobs(batch, store, iolab_version)] if batch.jobs else []
    runs += [_save_ratios(batch, s, r, store, iolab_version) for s, r in batch.ratios]
    skipped = list(batch.skipped)
    here = {_identity(r.plan_name, r.started_at, r.environment): r.id for r in store.runs()}
    for source, tables in batch.exports:
        run = tables["runs"][0]
        environment = run["environment"]
        identity = _identity(run.get("plan_name"), run.get("started_at"), environment)
        if identity in here:
            skipped.append(
                f"{source.path}: the same run as run {here[identity]} here ({identity[0]}, "
                "started at the same moment on the same host): left out, so that it is not "
                "counted twice"
            )
            continue
        origin = Origin(
            "import",
            (str(source.path),),
            str(environment.get("fio_version", "")),
            str(environment.get("hostname", "")),
            (source.digest,),
        )
        run_id = store.restore(tables, origin)
        here[identity] = run_id  # the same run twice in one batch: the second is a twin too
        cases = len(tables["cases"])
        runs.append((run_id, f"run {run_id}: {run['plan_name']}, {cases} cases from the export"))
    return Imported(tuple(runs), tuple(batch.problems), tuple(skipped))


def _identity(
    plan: object, started: object, environment: Mapping[str, Any]
) -> tuple[str, str, str]:
    """What makes two stored runs one: the same plan, started at the same moment on the same
    host (a run exported from here, or imported before); a moment as a float, as the store
    keeps it (an export may write 1700000000 for 1700000000.0)."""
    moment = float(started) if isinstance(started, int | float) else started
    return str(plan), repr(moment), str(environment.get("hostname", ""))


def _save_ratios(
    batch: Batch, source: Source, ratios: list[Ratio], store: Store, iolab_version: str
) -> tuple[int, str]:
    run = factored.ratio_run(source.path, source.digest, ratios, batch.factors)
    environment = {"hostname": "", "fio_version": "published"}
    run_id = store.save_ratios(run.plan, environment, iolab_version, run.origin, ratios)
    return run_id, f"run {run_id}: {run.said}"


def _save_jobs(batch: Batch, store: Store, iolab_version: str) -> tuple[int, str]:
    names = [str(s.path) for s in batch.sources]
    built = factored.with_factors(
        build_run(batch.jobs, batch.setup, names, batch.facts), batch.tables, batch.factors
    )
    version = ", ".join(sorted({software(j) for j in batch.jobs} - {""}))
    hosts = ", ".join(
        sorted({str(e["hostname"]) for j in batch.jobs for e in j.entries if e.get("hostname")})
    )
    origin = Origin("import", tuple(names), version, hosts, tuple(s.digest for s in batch.sources))
    environment = {"hostname": hosts, "fio_version": version}
    run_id = store.save_import(
        built.plan, environment, iolab_version, origin, built.results, built.span
    )
    failed = sum(1 for r, _ in built.results if r.status != "ok")
    failures = f" ({failed} failed)" if failed else ""
    where = ", ".join(s.name for s in built.plan.setups)
    said = (
        f"run {run_id}: {len(built.results)} cases{failures} from {len(names)} files, "
        f"set-ups {where}{f' ({version})' if version else ''}"
    )
    return run_id, said
