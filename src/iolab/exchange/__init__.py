"""Results in and out: fio's output made elsewhere imported as runs (JSON, json+, old fio's
JSON, terse, --status-interval streams, client/server, logs), and runs exported as a
versioned JSON document or CSV tables that `iolab import` reads back."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from iolab.exchange.export import csv_texts, json_text
    from iolab.exchange.found_jobs import UnreadableJob
    from iolab.exchange.importer import Batch, Imported, read, save
    from iolab.exchange.run_builder import Facts, check_named

# Each name is imported from its module when first asked for (PEP 562), as in iolab.app: a
# command that needs one module of the package (the terminal's reading line) loads no importer.
_HOMES = {
    "export": ("csv_texts", "json_text"),
    "found_jobs": ("UnreadableJob",),
    "importer": ("Batch", "Imported", "read", "save"),
    "run_builder": ("Facts", "check_named"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> object:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Batch",
    "Facts",
    "Imported",
    "UnreadableJob",
    "check_named",
    "csv_texts",
    "json_text",
    "read",
    "save",
]
