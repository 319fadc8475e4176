#!/usr/bin/env python3
"""Whether a large fio JSON file imports in bounded memory: a --status-interval stream of
about 50 MB and of about 500 MB (generated from real fio output as bench/import_scaling.py
makes it: the fixture's last document, its counters grown each second), each imported by the
real command into a new database. A file over fio_json.STREAM_FROM is read a chunk at a time,
so its peak RSS should not grow with the file (only the samples, a few per document, do).

Prints, per size side by side: the file's size, documents, wall and CPU time (the child's own
rusage), MB per CPU second and the child's peak RSS; then the ratios of the larger to the
smaller: size, CPU time and peak RSS (1.00: the memory does not grow with the file).

    python3 bench/import_stream.py [--small-mb 50] [--large-mb 500]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from import_scaling import STREAM, Measured, _documents, imported, make_stream


def documents_for(mb: float) -> int:
    """How many documents of the fixture's size make about `mb` MB."""
    one = len(json.dumps(_documents(STREAM.read_text())[-1], indent=2)) + 1
    return max(1, round(mb * 1e6 / one))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--small-mb", type=float, default=50)
    parser.add_argument("--large-mb", type=float, default=500)
    args = parser.parse_args()
    found: list[tuple[float, int, Measured]] = []
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="iolab-import-stream-") as folder:
        for mb in (args.small_mb, args.large_mb):
            path, count = Path(folder) / f"stream-{mb:g}mb.json", documents_for(mb)
            make_stream(path, count)
            size = path.stat().st_size / 1e6
            found.append((size, count, imported(path, Path(folder) / f"{mb:g}.db")))
            path.unlink()
    print(f"{'file':>10} {'documents':>10} {'wall s':>8} {'CPU s':>8} {'MB/CPU s':>9} "
          f"{'peak RSS':>10}")  # fmt: skip
    for size, count, one in found:
        print(f"{size:>7,.0f} MB {count:>10,} {one.wall_s:>8.1f} {one.cpu_s:>8.1f} "
              f"{size / one.cpu_s:>9.1f} {one.peak_mib:>6.0f} MiB")  # fmt: skip
    (small, _, a), (large, _, b) = found
    print(f"larger over smaller: size x{large / small:.2f}, CPU time x{b.cpu_s / a.cpu_s:.2f}, "
          f"peak RSS x{b.peak_mib / a.peak_mib:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
