"""iolab: a storage evaluation lab in one command."""

from iolab.exchange.frame import load
from iolab.version import __version__

__all__ = ["__version__", "load"]
