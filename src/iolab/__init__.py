"""iolab: a storage evaluation lab in one command."""

__version__ = "0.1.0"
