"""Results in and out: `iolab import` (with the facts a person gives) and `iolab export`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from iolab import exchange, outputs, saving, units
from iolab.app.base import Ui, open_store
from iolab.errors import PlanError, ReportError
from iolab.exchange import factored, importer
from iolab.store import Store
from iolab.units import parse_size
from iolab.version import __version__

EXPORT_FORMATS = ("json", "csv", "parquet", "fio-plot")


@dataclass(frozen=True)
class FactsGiven:
    """`iolab import`'s facts of the set-ups, as the person wrote them (checked by
    import_facts), each flag given any number of times, for every set-up or as SETUP=VALUE
    for one: devices, one device's rated IOPS (N or READ,WRITE, then @BS[:random|sequential])
    and MB/s (N or READ,WRITE), a cache size."""

    devices: tuple[str, ...] = ()
    rated_iops: tuple[str, ...] = ()
    rated_mbps: tuple[str, ...] = ()
    cache: tuple[str, ...] = ()
    factor: tuple[str, ...] = ()  # --factor [SETUP=]NAME=VALUE (exchange.factored.given)


def import_facts(given: FactsGiven) -> exchange.Facts:
    """Every set-up's facts, and each named set-up's own: each value checked (finite,
    positive, a size, a block and pattern)."""
    found: dict[str, exchange.Facts] = {}  # by the set-up named; "": every set-up's
    for flag, values in (("--devices", given.devices), ("--rated-iops", given.rated_iops),
                         ("--rated-mbps", given.rated_mbps), ("--cache", given.cache)):  # fmt: skip
        for text in values:
            name, named, value = text.rpartition("=")
            if named and not name:
                raise PlanError(f"{flag} {text}: give VALUE, or SETUP=VALUE for one set-up")
            found[name] = replace(found.get(name, exchange.Facts()), **_fact(flag, value))
    every = found.pop("", exchange.Facts())
    return replace(every, named=tuple(found.items()))


def _fact(flag: str, text: str) -> dict[str, Any]:
    """One flag's value as Facts fields."""
    if flag == "--devices":
        devices = _positive(flag, text)
        if devices != int(devices) or devices > 4096:
            raise PlanError(f"--devices {text}: give a whole number, 1 to 4096")
        return {"devices": int(devices)}
    if flag == "--cache":
        try:
            cache_bytes = parse_size(text)
        except ValueError:
            raise PlanError(f"--cache {text}: not a size; give one such as 512M or 1G") from None
        if not cache_bytes:
            raise PlanError(f"--cache {text}: give a size above 0, such as 512M")
        return {"cache_bytes": cache_bytes}
    if flag == "--rated-mbps":
        return {"rated_bps": _rated(flag, text, 1e6)}
    figures, at, shape = text.partition("@")
    return {"rated_iops": _rated(flag, figures, 1.0), **(_rated_shape(text, shape) if at else {})}


def _rated_shape(text: str, shape: str) -> dict[str, Any]:
    """'4k:random' -> the block and pattern rated IOPS hold at (default 4 KiB random)."""
    block, _, pattern = shape.partition(":")
    try:
        size = parse_size(block)
    except ValueError:
        size = 0
    if not size or pattern not in ("", "random", "sequential"):
        raise PlanError(
            f"--rated-iops {text}: after @ give the block size and pattern the figures hold at, "
            "such as @4k:random or @128k:sequential"
        )
    return {"rated_block": size, "rated_random": pattern != "sequential"}


def _rated(flag: str, text: str | None, unit: float) -> tuple[float, float]:
    """One figure for both directions, or READ,WRITE."""
    parts = (text or "").split(",")
    if len(parts) > 2 or (text is not None and not all(parts)):
        raise PlanError(f"{flag} {text}: give one figure, or two as READ,WRITE")
    read, write = (_positive(flag, part or None) * unit for part in (parts[0], parts[-1]))
    return read, write


def _positive(flag: str, text: str | None) -> float:
    """A flag's number: finite and above 0; 0.0 when the flag was not given."""
    if text is None:
        return 0.0
    try:
        value = units.number(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise PlanError(f"{flag} {text}: give a finite number above 0")
    return value


def import_files(
    paths: Sequence[str],
    setup: str | None,
    db: str,
    ui: Ui,
    given: FactsGiven | None = None,
    baseline: str | None = None,
) -> exchange.Imported:
    """fio's output (and iolab exports) into the database; nothing is created when nothing
    could be read. `baseline`: the set-up a table of percentages is relative to."""
    facts = import_facts(given or FactsGiven())
    factors = factored.given(given.factor if given else ())
    found = Store.check_path(db)  # another program's, or damaged: refused before reading
    known: dict[str, int] = {}
    if found.kind == "iolab":  # missing or empty: created below, if anything was read
        with open_store(db, ui) as store:
            known = store.imported()
    batch = exchange.read(paths, setup, known, baseline)
    batch.facts = facts
    exchange.check_named(facts, batch.jobs, batch.setup)
    importer.add_factors(batch, factors)
    if batch.empty:
        return exchange.Imported((), tuple(batch.problems), tuple(batch.skipped))
    with open_store(db, ui, create=True) as store:
        return exchange.save(batch, store, __version__)


def export_run(
    db: str, run_id: int | None, fmt: str, output: str, ui: Ui, force: bool = False
) -> tuple[str, list[str]]:
    """The export's text for stdout ('' when written to files), and a line per file written:
    every file through iolab.outputs (no link, no file iolab did not write unless `force`)."""
    from iolab.exchange import export, fioplot, parquet  # pyarrow only when asked for

    if fmt not in EXPORT_FORMATS:
        raise ReportError(f"--format {fmt}: choose one of {', '.join(EXPORT_FORMATS)}")
    if output == "-" and fmt in ("parquet", "fio-plot"):
        where = "a folder: -o DIR" if fmt == "fio-plot" else "files: -o FILE.parquet"
        raise ReportError(f"--format {fmt} writes {where}")
    if fmt == "fio-plot":
        fioplot.check(output, force)
    elif output != "-":
        suffix = {"csv": ".csv", "parquet": ".parquet"}.get(fmt)
        for path in export.file_names(output, suffix).values() if suffix else [output]:
            fix = "give a file name such as run.json"
            saving.check_file(path, force=force, what=f"-o {path}", fix=fix)
    if fmt == "parquet":
        parquet.module("pyarrow", "--format parquet")  # before any work
    with open_store(db, ui) as store:
        run = store.run(run_id)
        if store.ratios(run.id):  # said, not dropped: an export of it would hold nothing
            raise ReportError(
                f"run {run.id} holds published shares of a baseline (a table of percentages), "
                f"which exports do not carry; import {', '.join(run.origin.files)} again instead"
            )
        tables = store.dump(run.id)
    if fmt == "fio-plot":
        return "", fioplot.write(tables, output, force)
    if fmt == "parquet":
        return "", [f"wrote {path}" for path in parquet.write(tables, __version__, output, force)]
    if fmt == "json":
        texts = {output: exchange.json_text(tables, __version__)}
    else:
        texts = exchange.csv_texts(tables, __version__, output)
    if output == "-":
        return texts[output], []
    folder = outputs.split(output)[0]
    files = {outputs.split(path)[1]: text.encode() for path, text in texts.items()}
    saving.save([saving.WriteBatch(folder, files, "export")], force=force)
    return "", [f"wrote {path}" for path in texts]
