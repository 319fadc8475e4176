"""Formats: one module per output format, each writing a Document."""
