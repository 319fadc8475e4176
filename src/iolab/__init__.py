"""iolab: a storage evaluation lab in one command."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from iolab.version import __version__

if TYPE_CHECKING:
    from iolab.exchange.frame import load

__all__ = ["__version__", "load"]


def __getattr__(name: str) -> Any:
    """`iolab.load` is imported on first use, so that `import iolab` stays light."""
    if name == "load":
        from iolab.exchange.frame import load

        return load
    raise AttributeError(f"module 'iolab' has no attribute {name!r}")
