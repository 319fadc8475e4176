"""Targets: where I/O goes, whether it is safe, and what it is made of."""
