"""A large fio JSON file is read a chunk at a time (fio_json.stream), never whole, and finds
exactly what reading it whole finds: the same jobs, entries, samples and raw text, for every
form fio writes (a json+ document, several jobs, a --status-interval stream, client/server,
old fio's layout), and the same refusals for damaged ones. Here the size a file is streamed
from is lowered to 0 and the chunks to a few bytes, so real fio output of a few KB crosses
every boundary; bench/import_scaling.py --stream measures the memory at 50 and 500 MB."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from iolab.exchange import fio_json, importer
from iolab.exchange.found_jobs import UnreadableJob

FIXTURES = Path(__file__).parent / "fixtures"
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
