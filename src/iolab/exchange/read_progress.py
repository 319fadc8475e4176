"""How far the reading of a large file has got: the bytes its reader has taken from the file,
counted as they pass through (a wrapper around the binary file, never a stat in a loop), told
to whoever shows them (`Watch`: the use case's Ui). The library only counts; it never prints."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

    from iolab.exchange import fio_json

# The reader takes the file this many bytes at a time: the count moves in steps of this size
# (a few hundred steps for a file of hundreds of MB), cheap to tell.
STEP_BYTES = 1024**2

Told = Callable[[int], None]  # hears the bytes read so far, after each read


class Watch(Protocol):
    """Whoever shows how far a large file's reading has got (app.base.Ui)."""

    def reading(self, path: Path, size: int) -> contextlib.AbstractContextManager[Told]:
        """While open, a callable told the bytes of `path` (`size` bytes in all) read so far;
        closed when the file is done (read, or refused)."""


class Unwatched:
    """Nobody to tell: the counts go nowhere."""

    def reading(self, path: Path, size: int) -> contextlib.AbstractContextManager[Told]:
        return contextlib.nullcontext(_nowhere)


def _nowhere(count: int) -> None:
    """A count nobody hears."""


class Counted(io.RawIOBase):
    """A binary file whose reads are counted: `told` hears the bytes read so far after each
    read that returned some. Closing it leaves the file it wraps to its owner."""

    def __init__(self, file: io.RawIOBase | io.BufferedIOBase, told: Told) -> None:
        super().__init__()
        self.file, self.told, self.count = file, told, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        got = self.file.readinto(buffer)
        if got:
            self.count += got
            self.told(self.count)
        return int(got or 0)


def text(file: io.RawIOBase | io.BufferedIOBase, told: Told, step: int = STEP_BYTES) -> TextIO:
    """The binary file as UTF-8 text (lines as `open` gives them), its bytes counted as the
    text is read: `told` hears the count after each `step` bytes and at the end."""
    counted = io.BufferedReader(Counted(file, told), buffer_size=step)
    return io.TextIOWrapper(counted, encoding="utf-8")


@contextlib.contextmanager
def documents_of(path: Path, watch: Watch | None) -> Iterator[Iterator[fio_json.JsonDocument]]:
    """The JSON documents of a large file, read a chunk at a time (fio_json.stream), while
    `watch` is told how many of its bytes have been read."""
    from iolab.exchange import fio_json  # the reader, where a file is read

    with path.open("rb", buffering=0) as file:
        size = os.fstat(file.fileno()).st_size
        with (watch or Unwatched()).reading(path, size) as told, text(file, told) as handle:
            yield fio_json.stream(handle)
