"""`iolab export --format fio-plot -o DIR`: a run as the folder tree that bench-fio (of the
fio-plot package) writes, so that fio-plot draws its charts from iolab's results as it does
from bench-fio's:

    DIR/SETUP/BS/MODE-IODEPTH-NUMJOBS.json        fio's own JSON of the case
    DIR/SETUP/BS/MODE-iodepth-IODEPTH-numjobs-NUMJOBS_bw.1.log   (and _iops, _lat): its samples
    DIR/SETUP/MODE<RWMIXREAD>/BS/...               the mixed modes (rw, readwrite, randrw)
    DIR/SETUP/BS/repetition-N/...                  repetitions after the first, named alike
    DIR/.iolab-fio-plot                            the files iolab wrote there

One folder per set-up (bench-fio's per target), MODE is fio's rw. fio-plot reads one folder
of JSON files at a time (`fio-plot -i DIR/SETUP/4k -T TITLE -l -r randread`), and picks files
by the rw, bs, iodepth and numjobs of their job options: where fio's JSON leaves one out (fio's
default), the file's job options get it. The logs are fio's log format (time in ms, value,
direction, block size, offset) made from the stored samples of the case's main window: bw in
KiB/s, lat in ns, whole numbers (as fio writes them), summed over jobs as fio-plot sums a
job's log files.

Cases without fio's JSON (failed ones, or imported from terse or logs) are left out, and so is
a workload that only differs from another of its set-up in what the file names cannot say;
each is said in a line. A folder is written only when new, empty, or an earlier export of this
kind: then only the files it lists are replaced, and no other file is ever overwritten.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from iolab.errors import ReportError
from iolab.exchange import export
from iolab.files import check_folder

MARK = ".iolab-fio-plot"
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
        notes.append(f"left out {bare} case(s) without fio's JSON (failed, or imported from "
                     "terse output or logs)")  # fmt: skip
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
    missing = {k: options[k] for k in wanted
               if any(k not in {**head, **j.get("job options", {})} for j in jobs)}  # fmt: skip
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


def write(tables: export.Tables, folder: str) -> list[str]:
    """Write the tree into `folder`; a line saying what was written, then the notes."""
    earlier = check(folder)
    made = tree(tables)
    root = Path(folder)
    root.mkdir(exist_ok=True)
    for name in made.files:
        path = root / name
        if (path.exists() or path.is_symlink()) and name not in earlier:
            raise ReportError(f"-o {folder}: {name} is there and is not from an iolab export; "
                              "name a new or empty folder")  # fmt: skip
    _remove(root, earlier)
    for name, text in made.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    listing = {"exported_by": "iolab", "format": "fio-plot", "files": sorted(made.files)}
    (root / MARK).write_text(json.dumps(listing, indent=1) + "\n")
    jsons = sum(name.endswith(".json") for name in made.files)
    setups = len({PurePosixPath(name).parts[0] for name in made.files})
    said = f"wrote {folder}: {jsons} fio JSON files and {len(made.files) - jsons} logs for "
    return [f"{said}fio-plot, in {setups} set-up folder(s)", *made.notes]


def check(folder: str) -> set[str]:
    """`folder` can take the tree: a new name in an existing folder, an empty folder, or an
    earlier export of this kind (the files it lists, which may be replaced)."""
    check_folder(folder, f"-o {folder}", ReportError)
    root = Path(folder)
    if not root.exists() or not any(root.iterdir()):
        return set()
    try:
        listing = json.loads((root / MARK).read_text())
        names = {str(n) for n in listing["files"] if _inside(str(n))}
    except (OSError, ValueError, TypeError, KeyError):
        raise ReportError(
            f"-o {folder} holds files that are not an earlier iolab fio-plot export; name a "
            "new or empty folder"
        ) from None
    return names


def _inside(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts and bool(path.parts)


def _remove(root: Path, names: set[str]) -> None:
    """Remove the files an earlier export wrote, then the folders left empty by that."""
    folders: set[Path] = set()
    for name in names:
        path = root / name
        if path.is_file() and not path.is_symlink():
            path.unlink()
            folders.update(_parents(path.parent, root))
    for path in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def _parents(path: Path, root: Path) -> Iterator[Path]:
    while path != root and root in path.parents:
        yield path
        path = path.parent
