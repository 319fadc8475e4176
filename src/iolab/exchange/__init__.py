"""Results in and out: fio's output made elsewhere imported as runs (JSON, json+, old fio's
JSON, terse, --status-interval streams, client/server, logs), and runs exported as a
versioned JSON document or CSV tables that `iolab import` reads back."""
