"""Analysis: statistics over repetitions, differences with their confidence, latency
distributions, warm-up detection and environment differences. Pure functions; no printing,
no files."""
