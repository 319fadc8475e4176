#!/usr/bin/env python3
"""Whether a large fio JSON file imports in bounded memory: a --status-interval stream of
about 50 MB and of about 500 MB (generated from real fio output as bench/import_scaling.py
makes it: the fixture's last document, its counters grown each second), each imported by the
real command into a new database. A file over fio_json.STREAM_FROM is read a chunk at a time,
so its peak RSS should not grow with the file (only the samples, a few per document, do).

Prints, per size side by side: the file's size, documents, wall and CPU time (the child's own
rusage), MB per CPU second and the child's peak RSS; then the ratios of the larger to the
smaller: size, CPU time and peak RSS (1.00: the memory does not grow with the file).

`--tty`: the child's stderr is a pseudo-terminal (drained by a thread here), so the line that
shows how far a large file has been read is drawn, as a person at a terminal sees it; without
it stderr is a file and nothing is drawn. `--before REV`: each file is imported by the iolab
of that git revision too (its src/ taken with `git archive`), alternating with this one's,
`--rounds` times, and the medians' ratios printed (this one's over REV's: 1.00 is no change).

    python3 bench/import_stream.py [--small-mb 50] [--large-mb 500] [--tty] [--before REV]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pty
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from import_scaling import STREAM, Measured, _documents, imported, make_stream
from report_size import source_of


def documents_for(mb: float) -> int:
    """How many documents of the fixture's size make about `mb` MB."""
    one = len(json.dumps(_documents(STREAM.read_text())[-1], indent=2)) + 1
    return max(1, round(mb * 1e6 / one))


@contextlib.contextmanager
def terminal() -> Iterator[int]:
    """A pseudo-terminal's side for a child's stderr; what it draws is read and dropped."""
    main, side = pty.openpty()

    def drain() -> None:
        with contextlib.suppress(OSError):  # EIO: the child closed its side
            while os.read(main, 65536):
                pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield side
    finally:
        os.close(side)
        reader.join(timeout=10)
        os.close(main)


def imported_by(path: Path, db: Path, src: Path | None, tty: bool) -> Measured:
    """`iolab import PATH` into a new database by this iolab or the one in `src`, its stderr
    a pseudo-terminal with `tty`; its wall time, its own CPU time and peak RSS."""
    if src is None and not tty:
        return imported(path, db)
    env = {**os.environ, "TERM": "xterm"}
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        env.pop(name, None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    with contextlib.ExitStack() as stack:
        err = stack.enter_context(terminal()) if tty else subprocess.DEVNULL
        start = time.perf_counter()
        args = [sys.executable, "-m", "iolab", "import", str(path), "--db", str(db)]
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        took = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"iolab import {path} failed (exit {os.waitstatus_to_exitcode(status)})")
    db.unlink()
    return Measured(0.0, took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def compared(path: Path, folder: Path, before: Path, rounds: int, tty: bool) -> str:
    """This iolab and REV's alternately on one file, `rounds` times each: the medians of CPU
    time, wall time and peak RSS, this one's over REV's."""
    ours: list[Measured] = []
    theirs: list[Measured] = []
    for n in range(rounds):
        ours.append(imported_by(path, folder / f"ours-{n}.db", None, tty))
        theirs.append(imported_by(path, folder / f"theirs-{n}.db", before, tty))
    cpu, wall, rss = (
        statistics.median(getattr(a, key) for a in ours)
        / statistics.median(getattr(b, key) for b in theirs)
        for key in ("cpu_s", "wall_s", "peak_mib")
    )
    each = ", ".join(f"{a.cpu_s:.1f}/{b.cpu_s:.1f}" for a, b in zip(ours, theirs, strict=True))
    return f"CPU time x{cpu:.3f} (this/REV CPU s: {each}), wall x{wall:.3f}, peak RSS x{rss:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--small-mb", type=float, default=50)
    parser.add_argument("--large-mb", type=float, default=500)
    parser.add_argument("--tty", action="store_true", help="the child's stderr a terminal")
    parser.add_argument("--before", metavar="REV", help="time this git revision's iolab too")
    parser.add_argument("--rounds", type=int, default=3, help="with --before: rounds of each")
    args = parser.parse_args()
    found: list[tuple[float, int, Measured]] = []
    against: list[str] = []
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="iolab-import-stream-") as folder:
        before = source_of(args.before, Path(folder)) if args.before else None
        for mb in (args.small_mb, args.large_mb):
            path, count = Path(folder) / f"stream-{mb:g}mb.json", documents_for(mb)
            make_stream(path, count)
            size = path.stat().st_size / 1e6
            found.append(
                (size, count, imported_by(path, Path(folder) / f"{mb:g}.db", None, args.tty))
            )
            if before is not None:
                said = compared(path, Path(folder), before, args.rounds, args.tty)
                against.append(f"{size:,.0f} MB, this over {args.before}: {said}")
            path.unlink()
    print(
        f"{'file':>10} {'documents':>10} {'wall s':>8} {'CPU s':>8} {'MB/CPU s':>9} "
        f"{'peak RSS':>10}"
    )
    for size, count, one in found:
        print(
            f"{size:>7,.0f} MB {count:>10,} {one.wall_s:>8.1f} {one.cpu_s:>8.1f} "
            f"{size / one.cpu_s:>9.1f} {one.peak_mib:>6.0f} MiB"
        )
    (small, _, a), (large, _, b) = found
    print(
        f"larger over smaller: size x{large / small:.2f}, CPU time x{b.cpu_s / a.cpu_s:.2f}, "
        f"peak RSS x{b.peak_mib / a.peak_mib:.2f}"
    )
    print("\n".join(against))


if __name__ == "__main__":
    main()
