"""Results in and out: fio's output made elsewhere imported as runs (JSON, json+, old fio's
JSON, terse, --status-interval streams, client/server, logs), and runs exported as a
versioned JSON document or CSV tables that `iolab import` reads back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iolab import lazy

if TYPE_CHECKING:
    from iolab.exchange.export import csv_texts, json_text
    from iolab.exchange.found_jobs import UnreadableJob
    from iolab.exchange.importer import Batch, Imported, read, save
    from iolab.exchange.run_builder import Facts, check_named

# Each name is imported from its module when first asked for (PEP 562), as in iolab.app: a
# command that needs one module of the package (the terminal's reading line) loads no importer.
__getattr__ = lazy.resolver(
    __name__,
    {
        "export": ("csv_texts", "json_text"),
        "found_jobs": ("UnreadableJob",),
        "importer": ("Batch", "Imported", "read", "save"),
        "run_builder": ("Facts", "check_named"),
    },
)


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
