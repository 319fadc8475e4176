"""`iolab advise` as a document: RAID levels over N devices, ranked by the RAID model's
predictions for the workloads that matter, with capacity and failures survived.

One device's figures come from a stored run (see report.judged.single_figures) or from the
command line: `from_figures` turns --read-iops, --write-iops, --read-mbps and --write-mbps
into figures per workload (IOPS for blocks up to 64 KiB, MB/s above; a mixed workload adds
the times of its reads and writes), for the workloads asked (without --workload, those of
DEFAULT_WORKLOADS the figures given cover: `defaults`, which the command parses).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from iolab.analysis import raid_model
from iolab.analysis.raid_model import RaidWorkload, Ranked, Single
from iolab.errors import ReportError
from iolab.report.cells import MB, UNITS, Cell, Row, Table, format_value
from iolab.report.document import Document, Section
from iolab.report.views.raid_view import Figures

# Without --workload: the quick preset's workloads, those the figures given cover.
DEFAULT_WORKLOADS = {
    "read-iops": "randread:4k:32",
    "write-iops": "randwrite:4k:32",
    "read-mbps": "read:1m:8",
    "write-mbps": "write:1m:8",
}


def defaults(figures: Mapping[str, float | None]) -> list[str]:
    """The default workloads (RW:BS:QD) that the figures given cover."""
    return [spec for key, spec in DEFAULT_WORKLOADS.items() if figures.get(key) is not None]


def from_figures(
    figures: Mapping[str, float | None], workloads: Sequence[RaidWorkload]
) -> list[Figures]:
    """Figures per workload from one device's read/write IOPS and MB/s (keys as
    DEFAULT_WORKLOADS's); ReportError for a workload whose figure is missing."""
    for key, value in figures.items():
        if value is not None and value <= 0:
            raise ReportError(f"--{key} {value:g}: give a positive figure")
    return [_one(figures, w) for w in workloads]


def _one(figures: Mapping[str, float | None], w: RaidWorkload) -> Figures:
    unit = "iops" if Figures("", w, Single(0, 0)).metric() == "iops" else "mbps"
    per_io = {}  # direction -> seconds per I/O of one device
    for direction, share in (("read", w.read_share), ("write", 1 - w.read_share)):
        if share == 0:
            continue
        value = figures.get(f"{direction}-{unit}")
        if value is None:
            what = "IOPS (blocks up to 64k)" if unit == "iops" else "MB/s (blocks over 64k)"
            raise ReportError(
                f"workload {w.label} needs --{direction}-{unit}: one device's {direction} {what}"
            )
        per_io[direction] = 1 / value if unit == "iops" else w.bs / (value * MB)
    seconds = w.read_share * per_io.get("read", 0) + (1 - w.read_share) * per_io.get("write", 0)
    iops = 1 / seconds
    rho = 1.0
    read, write = figures.get(f"read-{unit}"), figures.get(f"write-{unit}")
    if read and write:
        rho = write / read  # the read's time over the write's
    return Figures(w.label, w, Single(iops, iops * w.bs, rho))


def document(
    ranked: Sequence[Ranked], figures: Sequence[Figures], devices: int, source: str
) -> Document:
    """The ranking as a one-table document."""
    columns = [f"{f.name} ({UNITS[f.metric()]})" for f in figures]
    rows = tuple(_row(index, found, figures) for index, found in enumerate(ranked, start=1))
    table = Table(
        f"RAID levels over {devices} devices, best first",
        "rank",
        (*columns, "overall"),
        rows,
        _notes(ranked, figures, devices, source),
        name="advice",
        stub_headers=("level", "capacity (devices)", "failures survived"),
        column_header="workload",
        column_keys=(*(f.name for f in figures), "overall"),
    )
    title = f"iolab advise: RAID levels over {devices} devices, from {source}"
    return Document(title, (), (Section("Advice", (table,)),))


def _row(rank: int, found: Ranked, figures: Sequence[Figures]) -> Row:
    array = found.array
    cells = []
    for f, prediction in zip(figures, found.predictions, strict=True):
        metric = f.metric()
        value = f.value(metric, prediction.factor)
        text = f"{format_value(value, metric)} x{prediction.factor:.2f}"
        cells.append(Cell(value, UNITS[metric], text))
    cells.append(Cell(found.score, "x", f"x{found.score:.2f}"))
    capacity = f"{array.data:g} of {array.devices}"
    return Row(str(rank), tuple(cells), (array.name, capacity, _survives(array)))


def _survives(array: raid_model.Geometry) -> str:
    text = str(array.tolerates)
    pairs = array.devices // array.copies
    if array.level == "10" and pairs > 1:
        text += f", up to {pairs}"
    return text


def _notes(
    ranked: Sequence[Ranked], figures: Sequence[Figures], devices: int, source: str
) -> tuple[str, ...]:
    one = "; ".join(
        f"{f.name}: {format_value(f.value(f.metric()), f.metric())} {UNITS[f.metric()]}"
        for f in figures
    )
    notes = [
        f"One device ({source}): {one}.",
        "Each cell: the level's predicted figure, x its multiple of one device; overall: the "
        "geometric mean of the multiples, which ranks the levels (ties: more failures survived, "
        "then more capacity).",
    ]
    left = [level for level, fewest in raid_model.FEWEST.items() if fewest > devices]
    if left:
        needs = ", ".join(f"RAID{level} {raid_model.FEWEST[level]}" for level in left)
        notes.append(f"Left out, too few devices (fewest: {needs}).")
    if any(p.ceiling for r in ranked for p in r.predictions):
        notes.append(
            "With more than one I/O in flight the figures are ceilings: every member kept as "
            "busy as the one device was. At QD1 they are the chain of member I/Os one I/O waits "
            "for (iolab.analysis.raid_model)."
        )
    return tuple(notes)
