"""Reports: a table model built from the store, and one module per output format."""
