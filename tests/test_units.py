from __future__ import annotations

import pytest

from iolab.units import format_size, human_duration, parse_seconds, parse_size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("512", 512),
        ("4k", 4096),
        ("4K", 4096),
        ("4KiB", 4096),
        ("1m", 1048576),
        ("5g", 5 * 1024**3),
        ("32M", 32 * 1024**2),
        (5120000000, 5120000000),
    ],
)
def test_parse_size_reads_fio_sizes(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["4q", "", "k", "-1", "1.5g", True])
def test_parse_size_refuses_nonsense(text: object) -> None:
    with pytest.raises(ValueError, match="not a size"):
        parse_size(text)


def test_durations_and_formats() -> None:
    assert parse_seconds("2m") == 120
    assert parse_seconds(10) == 10
    assert parse_seconds("1500ms") == 1
    assert format_size(4096) == "4k"
    assert format_size(1536) == "1536"
    assert human_duration(65) == "1m05s"
