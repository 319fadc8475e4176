"""A large fio JSON file is read a chunk at a time (fio_json.stream), never whole, and finds
exactly what reading it whole finds: the same jobs, entries, samples and raw text, for every
form fio writes (a json+ document, several jobs, a --status-interval stream, client/server,
old fio's layout), and the same refusals for damaged ones. Here the size a file is streamed
from is lowered to 0 and the chunks to a few bytes, so real fio output of a few KB crosses
every boundary; bench/import_scaling.py --stream measures the memory at 50 and 500 MB.

`iolab import` of a large fio JSON file shows how far it has read on one line of stderr,
where stderr is a terminal: the bytes its streaming reader took from the file (counted as they
pass, read_progress), drawn by the terminal Ui at most ten times a second and cleared when the
file is done; a pipe, a file or a small file gets nothing. The stream is real fio output
(tests/fixtures), grown to the size of a large one as bench/import_stream.py grows it."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import itertools
import json
import os
import pty
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.console import Console

from conftest import FIXTURES, IOLAB
from iolab.app.transfer import import_files
from iolab.exchange import fio_json, importer, read_progress
from iolab.exchange.found_jobs import UnreadableJob
from iolab.terminal_ui import ReadingLine, TerminalUi

STREAM = FIXTURES / "import" / "status-interval" / "status-interval.json"
JSONPLUS = FIXTURES / "fio" / "randread-jsonplus" / "randread-jsonplus.json"
NAME = "odd\x1b[31mname\u202e.json"  # a name a file may have: a control and a bidi override
SHOWN = "odd\\u001b[31mname\\u202e.json"  # as names.one_line shows it


def grown_stream(path: Path, size: int) -> Path:
    """A --status-interval stream of at least `size` bytes: the fixture's last document, its
    I/O counters and runtime grown by one interval's worth each document."""
    path.parent.mkdir(exist_ok=True)
    text = STREAM.read_text()
    last = [d.value for d in fio_json.each(text)][-1]
    with path.open("w") as out:
        second = 0
        while out.tell() < size:
            second += 1
            doc = copy.deepcopy(last)
            for direction in ("read", "write", "trim"):
                part = doc["jobs"][0][direction]
                if part["runtime"]:
                    part["runtime"] = second * 1000
                    part["total_ios"] *= second
                    part["io_bytes"] *= second
            out.write(json.dumps(doc, indent=2) + "\n")
    return path


def counted_documents(path: Path, step: int) -> tuple[list[int], list[tuple[int, int]]]:
    """Every count the reader told, and for each document as it was yielded: where it ends in
    the file (bytes) and the count heard by then."""
    counts: list[int] = [0]
    assert path.read_bytes().isascii()  # a document's place in the text is its place in bytes
    with path.open("rb", buffering=0) as file, read_progress.text(file, counts.append, step) as t:
        seen = [(doc.end, counts[-1]) for doc in fio_json.stream(t)]
    return counts, seen


def test_the_reader_counts_the_bytes_of_a_real_fio_stream_as_it_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Read as the stream reads it, a few hundred characters at a time (the text layer takes
    8 KiB of bytes at a time, io.DEFAULT_BUFFER_SIZE): the count moves a step of at most that
    each time, and each document is yielded once its bytes are counted, a step ahead at most."""
    monkeypatch.setattr(fio_json, "CHUNK_CHARS", 300)
    step = io.DEFAULT_BUFFER_SIZE
    counts, seen = counted_documents(STREAM, step)
    size = STREAM.stat().st_size
    steps = [b - a for a, b in itertools.pairwise(counts)]
    assert counts[-1] == size  # every byte, once
    assert all(0 < s <= step for s in steps) and len(steps) >= size // step
    assert len(seen) == len(list(fio_json.each(STREAM.read_text()))) > 1
    for end, heard in seen:
        assert end <= heard <= end + step


@pytest.mark.slow  # starts processes (iolab, a stand-in tool, one killed)
def test_the_reader_counts_a_large_stream_a_step_at_a_time(tmp_path: Path) -> None:
    path = grown_stream(tmp_path / "large.json", 3 * read_progress.STEP_BYTES + 12_345)
    counts, seen = counted_documents(path, read_progress.STEP_BYTES)
    size = path.stat().st_size
    assert counts == [0, *range(read_progress.STEP_BYTES, size, read_progress.STEP_BYTES), size]
    assert seen[0][1] < size / 2  # the first document comes before the file is read whole
    assert len(seen) > 400


class Watched(TerminalUi):
    """The import's Ui, quiet, keeping what it was told of each large file."""

    def __init__(self) -> None:
        super().__init__(Console(quiet=True), Console(quiet=True))
        self.files: list[tuple[Path, int, list[int]]] = []

    def reading(
        self, path: Path, size: int
    ) -> contextlib.AbstractContextManager[Callable[[int], None]]:
        counts: list[int] = []
        self.files.append((path, size, counts))
        return contextlib.nullcontext(counts.append)


def test_an_import_tells_its_ui_how_far_each_large_file_has_been_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files over the size streamed from (lowered here to 100 KB) are watched, each to
    its size; a smaller one is not."""
    large = grown_stream(tmp_path / "stream" / "large.json", 300_000)
    (tmp_path / "plus").mkdir()
    small = tmp_path / "plus" / "small.json"
    small.write_bytes(JSONPLUS.read_bytes())
    monkeypatch.setattr(fio_json, "STREAM_FROM", 100_000)
    ui = Watched()
    done = import_files([str(large), str(small)], None, str(tmp_path / "i.db"), ui)
    assert not done.problems and len(done.runs) == 1
    assert [(path, size) for path, size, _ in ui.files] == [(large, large.stat().st_size)]
    counts = ui.files[0][2]
    assert counts == sorted(counts) and counts[-1] == large.stat().st_size


def drawn(console: Console) -> str:
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def terminal(force: bool = True) -> Console:
    return Console(file=io.StringIO(), force_terminal=force, width=120, color_system=None)


def test_the_terminal_ui_draws_one_line_with_the_name_escaped_and_clears_it() -> None:
    err = terminal()
    ui = TerminalUi(Console(quiet=True), err)
    with ui.reading(Path("/var/tmp") / NAME, 100_000_000) as told:
        told(40_000_000)  # the first count is drawn
        told(100_000_000)  # and the last, however soon after
    out = drawn(err)
    assert f"{SHOWN} " in out and "\x1b[31mname" not in out and "\u202e" not in out
    assert "0.0/100.0 MB" in out and "  0%" in out  # drawn when opened
    assert "40.0/100.0 MB" in out and " 40%" in out
    assert "100.0/100.0 MB" in out and "100%" in out and "B/s ETA 0:00:00" in out
    assert "/var/tmp" not in out  # the file's name, not its folder
    lines = [line for line in out.split("\r") if "MB" in line]
    assert all(" ETA " in line for line in lines)
    assert out.endswith("\x1b[1A\x1b[2K")  # cleared: up to its line, and erased


def test_a_long_name_is_cut_before_it_is_escaped() -> None:
    """A long name's start and end, each escape whole: never a cut one."""
    err = terminal()
    name = "a" * 10 + "\x1b" + "a" * 8 + "b" * 40 + "\u202e" + ".json"
    with ReadingLine(err, Path(name), 10_000_000) as told:
        told(10_000_000)
    out = drawn(err)
    assert "aaaaaaaaaa\\u001baaaaaaaa…bbbbbbbbbbbbbb\\u202e.json" in out, out
    assert "\x1b[31" not in out and "\u202e" not in out


def test_the_line_is_drawn_at_most_ten_times_a_second() -> None:
    """On a clock of its own: counts within a tenth of a second of the last drawn one are
    left out, the file's last count never."""
    now = [0.0]
    err = terminal()
    with ReadingLine(err, Path("big.json"), 10_000_000, clock=lambda: now[0]) as told:
        for at, count in [(0.0, 1), (0.05, 2), (0.1, 3), (0.15, 4), (0.3, 5), (0.31, 10)]:
            now[0] = at
            told(count * 1_000_000)
    out = drawn(err)
    assert [n for n in range(1, 11) if f" {n}.0/10.0 MB" in out] == [1, 3, 5, 10]
    assert "MB/s" in out


def test_no_line_where_stderr_is_no_terminal() -> None:
    for err in (terminal(force=False), Console(file=io.StringIO(), width=120)):
        ui = TerminalUi(Console(quiet=True), err)
        with ui.reading(Path("big.json"), 100_000_000) as told:
            told(50_000_000)
            told(100_000_000)
        assert drawn(err) == ""


@pytest.fixture(scope="module")
def large_stream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A stream over the size a file is streamed from (32 MiB), in a folder of its own."""
    folder = tmp_path_factory.mktemp("large") / "ssd"
    folder.mkdir()
    path = grown_stream(folder / "stream.json", fio_json.STREAM_FROM + 1_000_000)
    yield path
    path.unlink()


def plain_env() -> dict[str, str]:
    """This environment without what makes rich take a pipe for a terminal."""
    return {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}


@pytest.mark.slow
def test_the_real_import_writes_no_progress_to_a_pipe(large_stream: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [*IOLAB, "import", str(large_stream), "--db", str(tmp_path / "p.db")],
        capture_output=True,
        text=True,
        env=plain_env(),
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == "run 1: 1 cases from 1 files, set-ups ssd (fio-3.33)\n"


@pytest.mark.slow
def test_the_real_import_shows_the_line_on_a_terminal(large_stream: Path, tmp_path: Path) -> None:
    """stderr a pseudo-terminal, stdout a pipe: the line is on the terminal only, and the
    results on stdout are what a pipe gets."""
    main, side = pty.openpty()
    said: list[bytes] = []

    def drain() -> None:
        with contextlib.suppress(OSError):  # EIO: the child closed its side
            while chunk := os.read(main, 65536):
                said.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        done = subprocess.run(
            [*IOLAB, "import", str(large_stream), "--db", str(tmp_path / "t.db")],
            stdout=subprocess.PIPE,
            stderr=side,
            text=True,
            env={**plain_env(), "TERM": "xterm"},
            timeout=600,
            check=False,
        )
    finally:
        os.close(side)
        reader.join(timeout=60)
        os.close(main)
    out = b"".join(said).decode()
    size = large_stream.stat().st_size / 1e6
    assert done.returncode == 0, out
    assert done.stdout == "run 1: 1 cases from 1 files, set-ups ssd (fio-3.33)\n"
    assert "stream.json " in out and f"/{size:.1f} MB" in out and "ETA" in out
    assert f"{size:.1f}/{size:.1f} MB" in out and "100%" in out
    assert out.endswith("\x1b[1A\x1b[2K")  # cleared when the file was done


# ---------------------------------------------------------------- read a chunk at a time

FILES = [
    FIXTURES / "fio" / "randread-jsonplus" / "randread-jsonplus.json",
    FIXTURES / "import" / "jsonplus-two-jobs" / "jsonplus-two-jobs.json",
    FIXTURES / "import" / "status-interval" / "status-interval.json",
    FIXTURES / "import" / "client-server" / "client-server.json",
    FIXTURES / "import" / "old-2.21-json" / "old-2.21-json.json",
]


def found(path: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool) -> importer.Batch:
    with monkeypatch.context() as patch:
        if streamed:
            patch.setattr(fio_json, "STREAM_FROM", 0)
            patch.setattr(fio_json, "CHUNK_CHARS", 7)
        return importer.read([str(path)], None, {})


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_streamed_file_finds_what_reading_it_whole_finds(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = found(path, monkeypatch, streamed=False)
    streamed = found(path, monkeypatch, streamed=True)
    assert streamed.sources[0].large and not whole.sources[0].large
    assert streamed.sources[0].digest == whole.sources[0].digest
    assert not whole.problems and not streamed.problems
    assert [dataclasses.asdict(j) for j in streamed.jobs] == [
        dataclasses.asdict(j) for j in whole.jobs
    ]
    assert whole.jobs


def test_a_stream_reads_one_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the reader holds: a document and a chunk, whatever the stream's length."""
    one = (FIXTURES / "import" / "status-interval" / "status-interval.json").read_text()
    first = one[: one.index("\n{") + 1]
    monkeypatch.setattr(fio_json, "CHUNK_CHARS", 4096)
    held: list[int] = []

    class Watched(fio_json._Buffer):
        def more(self) -> bool:
            held.append(len(self.text) - self.at)
            return super().more()

    monkeypatch.setattr(fio_json, "_Buffer", Watched)
    docs = list(fio_json.stream(io.StringIO(first * 300)))
    assert len(docs) == 300 and all(d.several for d in docs)
    assert max(held) < len(first) + 4096 < len(first * 300) / 100


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"jobs": []}\n{"jobs": [', "cut short or damaged"),
        ("fio: no such job\n", "no JSON document in it"),
        ('{"jobs": []}\n[1]', None),  # what follows a document that is no '{' is left, as whole
        ("[" * 1000 + "]" * 1000 + "{}", None),
    ],
)
def test_a_damaged_stream_is_refused_as_the_whole_text_is(text: str, words: str | None) -> None:
    def outcome(read: object) -> str:
        try:
            return repr([d.value for d in read])  # type: ignore[attr-defined]
        except UnreadableJob as error:
            return f"{type(error).__name__}: {error}"

    whole = outcome(fio_json.each(text))
    assert outcome(fio_json.stream(io.StringIO(text))) == whole
    assert words is None or words in whole
