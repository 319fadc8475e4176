"""Results in and out: fio's output made elsewhere imported as runs (JSON, json+, old fio's
JSON, terse, --status-interval streams, client/server, logs), and runs exported as a
versioned JSON document or CSV tables that `iolab import` reads back."""

from iolab.exchange.export import csv_texts, json_text
from iolab.exchange.found_jobs import UnreadableJob
from iolab.exchange.importer import Batch, Imported, read, save
from iolab.exchange.run_builder import Facts, check_named

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
