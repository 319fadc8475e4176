"""`iolab export --format parquet`: the CSV export's three tables (main, percentiles, samples)
as Parquet files written by pyarrow, which pandas, polars and DuckDB read.

Each column gets one type from its values: integers int64, numbers float64, flags bool, and
anything else text (a list or table as JSON); an empty cell is null. Every file's schema
carries the key "iolab-export" with the schema name, version and the iolab that wrote it.

pyarrow (and pandas, for `iolab.load`) come with the optional extra `iolab[data]`; without
it, the one-line error says how to install it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from iolab import outputs, saving
from iolab.errors import ReportError
from iolab.exchange import export

INSTALL = "pip install 'iolab[data]'"


class MissingExtra(ReportError, ImportError):
    """pyarrow or pandas is not installed; the message says how to install them."""


def module(name: str, purpose: str) -> ModuleType:
    """Import `name` (pyarrow, pandas) or raise MissingExtra saying how to get it."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise MissingExtra(f"{purpose} needs {name.partition('.')[0]}: {INSTALL}") from None


def arrow_table(flat: export.FlatRow, iolab_version: str, purpose: str) -> Any:
    """One flat table as a pyarrow Table of typed columns, marked as an iolab export."""
    pa = module("pyarrow", purpose)
    arrays = [_array(pa, [row[i] for row in flat.rows]) for i in range(len(flat.columns))]
    table = pa.Table.from_arrays(arrays, names=list(flat.columns))
    mark = {
        "schema": export.SCHEMA,
        "version": export.VERSION,
        "exported_by": f"iolab {iolab_version}",
    }
    return table.replace_schema_metadata({"iolab-export": json.dumps(mark)})


def _array(pa: ModuleType, values: Sequence[Any]) -> Any:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.bool_())
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, type=pa.int64())
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64())
    return pa.array([None if v is None else _text(v) for v in values], type=pa.string())


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def write(tables: export.Tables, iolab_version: str, name: str, force: bool = False) -> list[str]:
    """Write `name` (the main table), NAME.percentiles.parquet and NAME.samples.parquet
    through iolab.outputs (all checked before any is written); the files written."""
    purpose = "--format parquet"
    pa = module("pyarrow", purpose)
    parquet = module("pyarrow.parquet", purpose)
    flat = export.flat_tables(tables, iolab_version)
    paths = export.file_names(name, ".parquet")
    files = {}
    for table, path in paths.items():
        sink = pa.BufferOutputStream()
        parquet.write_table(arrow_table(flat[table], iolab_version, purpose), sink)
        files[outputs.split(path)[1]] = bytes(sink.getvalue().to_pybytes())
    saving.save([saving.WriteBatch(outputs.split(name)[0], files, "export")], force=force)
    return list(paths.values())
