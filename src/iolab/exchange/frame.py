"""`iolab.load`: a database's results as a pandas DataFrame in one call.

    >>> import iolab
    >>> df = iolab.load("iolab.db")          # the latest run; run=N for another
    >>> df.groupby(["setup", "workload"])["iops"].mean()

The frame is the export's main table (see `export.py`): one row per case and direction of its
main window, the workload's parameters as columns, the metrics and p50..p99.99 in ns;
table="percentiles" or "samples" gives the other two. Its columns are typed as in the Parquet
export, so `load(db)` equals `pandas.read_parquet` of `iolab export --format parquet`.
Needs the optional extra `iolab[data]` (pandas and pyarrow).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from iolab.errors import ReportError
from iolab.version import __version__

if TYPE_CHECKING:
    import pandas

TABLES = ("main", "percentiles", "samples")


def load(
    db: str | Path = "iolab.db",
    run: int | None = None,
    table: Literal["main", "percentiles", "samples"] = "main",
) -> pandas.DataFrame:
    """One run of the database `db` (default: its latest) as a DataFrame of `table`."""
    from iolab.exchange import export, parquet  # here: `import iolab` stays light
    from iolab.store import Store

    purpose = "iolab.load"
    parquet.module("pandas", purpose)
    if table not in TABLES:
        raise ReportError(f"table={table!r}: choose one of {', '.join(TABLES)}")
    with Store(db, create=False, readonly=True) as store:
        tables = store.dump(store.run(run).id)
    flat = export.flat_tables(tables, __version__)[table]
    frame: pandas.DataFrame = parquet.arrow_table(flat, __version__, purpose).to_pandas()
    return frame
