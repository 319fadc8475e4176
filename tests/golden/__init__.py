"""The golden store, its builder and the snapshots rendered from it."""
