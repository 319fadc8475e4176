"""RAID cards through their vendors' tools: storcli and perccli (JSON), MegaCli, ssacli and
arcconf (text). One parser module per tool family turns what the tool printed into the
typed values of `model`; `probe` runs whichever tools are installed (`iolab env`)."""

from iolab.targets.controllers.model import (
    Battery,
    CachePolicy,
    CacheRatio,
    Controller,
    DriveCache,
    Health,
    Io,
    Read,
    VirtualDrive,
    Write,
    differs,
)
from iolab.targets.controllers.probe import CardsFound, probe

__all__ = [
    "Battery",
    "CachePolicy",
    "CacheRatio",
    "CardsFound",
    "Controller",
    "DriveCache",
    "Health",
    "Io",
    "Read",
    "VirtualDrive",
    "Write",
    "differs",
    "probe",
]
