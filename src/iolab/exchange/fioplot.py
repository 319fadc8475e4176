"""`iolab export --format fio-plot -o DIR`: a run as the folder tree that bench-fio (of the
fio-plot package) writes, so that fio-plot draws its charts from iolab's results as it does
from bench-fio's:

    DIR/SETUP/BS/MODE-IODEPTH-NUMJOBS.json        fio's own JSON of the case
    DIR/SETUP/BS/MODE-iodepth-IODEPTH-numjobs-NUMJOBS_bw.1.log   (and _iops, _lat): its samples
    DIR/SETUP/MODE<RWMIXREAD>/BS/...               the mixed modes (rw, readwrite, randrw)
    DIR/SETUP/BS/repetition-N/...                  repetitions after the first, named alike
    DIR/.iolab-written                             the files iolab wrote there (iolab.outputs)

One folder per set-up (bench-fio's per target), MODE is fio's rw. fio-plot reads one folder
of JSON files at a time (`fio-plot -i DIR/SETUP/4k -T TITLE -l -r randread`), and picks files
by the rw, bs, iodepth and numjobs of their job options: where fio's JSON leaves one out (fio's
default), the file's job options get it. The logs are fio's log format (time in ms, value,
direction, block size, offset) made from the stored samples of the case's main window: bw in
KiB/s, lat in ns, whole numbers (as fio writes them), summed over jobs as fio-plot sums a
job's log files.

Cases without fio's JSON (failed ones, or imported from terse or logs) are left out, and so is
a workload that only differs from another of its set-up in what the file names cannot say;
each is said in a line. A folder is written only when new, empty, or holding iolab's record of
what it wrote there (or with --force): files are written, replaced and removed only as
iolab.outputs allows (never through a link; only files still as iolab wrote them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from iolab import outputs, saving
from iolab.exchange import export

BY = "fio-plot"  # the kind of output, in the folder's record
MIXED = ("readwrite", "rw", "randrw")  # bench-fio's mixed modes: a folder per read share
# fio's defaults for what fio-plot reads from the job options
DEFAULTS = {"rw": "read", "bs": "4k", "iodepth": "1", "numjobs": "1", "rwmixread": "50"}
LOGS = {"bw": 1024, "iops": 1, "lat": 1}  # stored unit per unit of fio's log (bw: KiB/s)
DDIR = {"read": 0, "write": 1, "trim": 2}


@dataclass(frozen=True)
class Tree:
    """The files to write (path relative to DIR -> text) and a line per case left out."""

    files: dict[str, str]
    notes: list[str]


def tree(tables: export.Tables) -> Tree:
    """The run's files in bench-fio's layout."""
    files: dict[str, str] = {}
    owner: dict[tuple[str, ...], tuple[str, str]] = {}  # a file's place -> (setup, workload)
    clashes: dict[tuple[str, str], tuple[str, str]] = {}
    bare = 0
    samples = _samples(tables)
    for case in sorted(tables["cases"], key=lambda c: (c["repetition"], c["id"])):
        document = _document(case)
        if document is None:
            bare += 1
            continue
        options = {k: str(case["options"].get(k, v)) for k, v in DEFAULTS.items()}
        folder, name, prefix = _place(case["setup"], options)
        mine = (case["setup"], case["workload"])
        if (first := owner.setdefault((*folder, name), mine)) != mine:
            clashes[mine] = first
            continue
        if f"{'/'.join(folder)}/{name}.json" in files:  # a later repetition
            folder.append(f"repetition-{case['repetition']}")
        where = "/".join(folder)
        files[f"{where}/{name}.json"] = _text(case["raw_json"], document, options)
        for metric, lines in _logs(samples.get(case["id"], [])).items():
            files[f"{where}/{prefix}_{metric}.1.log"] = lines
    notes = [
        f"left out workload {workload!r} of set-up {setup!r}: fio-plot cannot tell it from "
        f"{first[1]!r} (the same rw, bs, iodepth and numjobs)"
        for (setup, workload), first in clashes.items()
    ]
    if bare:
        notes.append(
            f"left out {bare} case(s) without fio's JSON (failed, or imported from "
            "terse output or logs)"
        )
    return Tree(files, notes)


def _place(setup: str, options: Mapping[str, str]) -> tuple[list[str], str, str]:
    """bench-fio's folder of a case ([SETUP, (MODE RWMIXREAD,) BS]), the name of its JSON file
    (MODE-IODEPTH-NUMJOBS, without .json) and of its logs (MODE-iodepth-N-numjobs-N)."""
    mode, iodepth, numjobs = (_part(options[k]) for k in ("rw", "iodepth", "numjobs"))
    mixed = [f"{mode}{_part(options['rwmixread'])}"] if options["rw"] in MIXED else []
    folder = [_part(setup), *mixed, _part(options["bs"])]
    return folder, f"{mode}-{iodepth}-{numjobs}", f"{mode}-iodepth-{iodepth}-numjobs-{numjobs}"


def _part(text: str) -> str:
    """A safe file name part: letters, digits and . _ + - kept, anything else '_'."""
    part = re.sub(r"[^A-Za-z0-9._+-]", "_", text)
    return part if part and not part.startswith(".") else f"_{part}"


def _document(case: Mapping[str, Any]) -> dict[str, Any] | None:
    """fio's JSON document of an ok case, or None."""
    raw = case["raw_json"]
    if case["status"] != "ok" or not raw or "{" not in raw:
        return None
    try:
        document = json.loads(raw[raw.index("{") :])
    except json.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    jobs = [
        j for k in ("jobs", "client_stats") for j in document.get(k) or [] if isinstance(j, dict)
    ]
    made = any("terse_version" in job for job in jobs)  # iolab's own, from fio's terse output
    return document if jobs and not made else None


def _text(raw: str, document: dict[str, Any], options: Mapping[str, str]) -> str:
    """fio's JSON as stored; where its job options lack what fio-plot reads, with them."""
    wanted = ("rw", "bs", "iodepth", "numjobs", *(("rwmixread",) * (options["rw"] in MIXED)))
    head = document.get("global options")
    head = head[0] if isinstance(head, list) and head else head
    head = head if isinstance(head, dict) else {}
    if "client_stats" in document:
        missing = {k: options[k] for k in wanted if k not in head}
        if not missing:
            return raw[raw.index("{") :]
        document["global options"] = {**head, **missing}
        return json.dumps(document, indent=2) + "\n"
    jobs = [j for j in document["jobs"] if isinstance(j, dict)]
    missing = {
        k: options[k]
        for k in wanted
        if any(k not in {**head, **j.get("job options", {})} for j in jobs)
    }
    if not missing:
        return raw[raw.index("{") :]
    for job in jobs:
        job["job options"] = {**missing, **job.get("job options", {})}
    return json.dumps(document, indent=2) + "\n"


def _samples(tables: export.Tables) -> dict[int, list[Mapping[str, Any]]]:
    """Case id -> its samples of the main window."""
    found: dict[int, list[Mapping[str, Any]]] = {}
    for row in tables["samples"]:
        if (row["phase"], row["round"], row["host"]) == export.MAIN_WINDOW:
            found.setdefault(row["case_id"], []).append(row)
    return found


def _logs(samples: list[Mapping[str, Any]]) -> dict[str, str]:
    """fio log text per metric (bw, iops, lat): "time, value, ddir, bs, offset" lines."""
    logs: dict[str, str] = {}
    for metric, unit in LOGS.items():
        rows = sorted(
            (int(s["time_ms"]), DDIR[s["direction"]], round(s["value"] / unit))
            for s in samples
            if s["metric"] == metric and s["direction"] in DDIR
        )
        if rows:
            logs[metric] = "".join(f"{t}, {v}, {d}, 0, 0\n" for t, d, v in rows)
    return logs


def write(tables: export.Tables, folder: str, force: bool = False) -> list[str]:
    """Write the tree into `folder` through iolab.outputs: the files an earlier fio-plot
    export wrote there and this one does not are removed (only those still as iolab wrote
    them, reached without links); a line saying what was written, then the notes."""
    made = tree(tables)
    with _folder(folder, force) as out:
        files = {name: text.encode() for name, text in made.files.items()}
        out.check(files)
        left = out.remove(out.recorded(BY) - set(files))
        out.write(files, BY)
    jsons = sum(name.endswith(".json") for name in made.files)
    setups = len({PurePosixPath(name).parts[0] for name in made.files})
    said = f"wrote {folder}: {jsons} fio JSON files and {len(made.files) - jsons} logs for "
    kept = (
        [
            f"left {left} file(s) of the earlier export in place: changed since, or not "
            "reached without a symbolic link"
        ]
        if left
        else []
    )
    return [f"{said}fio-plot, in {setups} set-up folder(s)", *kept, *made.notes]


def check_folder(folder: str, force: bool = False) -> None:
    """`folder` can take the tree, checked before any work: a new name in an existing folder,
    an empty folder, or one holding iolab's record of what it wrote (whose files may be
    replaced); with `force`, any folder. Never a symbolic link."""
    _folder(folder, force).close()


def _folder(folder: str, force: bool) -> outputs.Folder:
    out = saving.check_folder(folder, force=force, what=f"-o {folder}")
    if not force and not out.holds_only_iolabs():
        out.close()
        raise outputs.OutputRefused(
            f"-o {folder} holds files iolab did not write; name a new or empty folder, or add "
            "--force"
        )
    return out
