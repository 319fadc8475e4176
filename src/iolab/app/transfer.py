"""Results in and out: `iolab import` (with the facts a person gives, as typed values:
`cli.import_flags` reads them from the command line) and `iolab export`."""

from __future__ import annotations

from collections.abc import Sequence

from iolab import outputs, saving
from iolab.app.base import Ui, open_store
from iolab.choices import EXPORT_FORMATS
from iolab.errors import ReportError, StoreError
from iolab.exchange import factored, importer
from iolab.exchange.export import csv_texts, json_text
from iolab.exchange.importer import Imported, read, save
from iolab.exchange.run_builder import Facts, check_named
from iolab.model import JSON
from iolab.store import Store
from iolab.version import __version__


def import_files(
    paths: Sequence[str],
    setup: str | None,
    db: str,
    ui: Ui,
    facts: Facts | None = None,
    factors: factored.ByName | None = None,
    baseline: str | None = None,
) -> Imported:
    """fio's output (and iolab exports) into the database; nothing is created when nothing
    could be read. `facts` and `factors`: what the person tells of the set-ups (each for
    every set-up, under "", or for the one named); `baseline`: the set-up a table of
    percentages is relative to."""
    found = Store.check_path(db)  # another program's, or damaged: refused before reading
    known: dict[str, int] = {}
    if found.kind == "iolab":  # missing or empty: created below, if anything was read
        with open_store(db, ui) as store:
            known = store.imported()
    batch = read(paths, setup, known, baseline, ui)  # the Ui hears a large file's reading
    batch.facts = facts or Facts()
    check_named(batch.facts, batch.jobs, batch.setup)
    importer.add_factors(batch, factors or {})
    if batch.empty:
        return Imported((), tuple(batch.problems), tuple(batch.skipped))
    with open_store(db, ui, create=True) as store:
        return save(batch, store, __version__)


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
        fioplot.check_folder(output, force)
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
        texts = {output: _json(db, run.id, tables)}
    else:
        texts = csv_texts(tables, __version__, output)
    if output == "-":
        return texts[output], []
    folder = outputs.split(output)[0]
    files = {outputs.split(path)[1]: text.encode() for path, text in texts.items()}
    saving.save([saving.WriteBatch(folder, files, "export")], force=force)
    return "", [f"wrote {path}" for path in texts]


def _json(db: str, run_id: int, tables: dict[str, list[dict[str, JSON]]]) -> str:
    """The export's JSON, or one line naming the database whose run holds a value that is
    not a finite number (NaN, Infinity: not JSON)."""
    try:
        return json_text(tables, __version__)
    except ValueError:
        raise StoreError(
            f"{db}: refused, run {run_id} holds a value that is not a finite number (NaN or "
            "Infinity), which JSON cannot hold; check the figures stored there, or export "
            "--format csv"
        ) from None
