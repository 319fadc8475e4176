"""Names: one rule where a name comes in, and safe text where any text goes out.

The rule (`check`), for every name a person or a file gives iolab (a plan's set-ups and
workloads, a job file's sections, an imported job or set-up): text, normalised to NFC, trimmed
of spaces at either end, not empty, at most MAX_LENGTH characters, and holding no character
of the Unicode categories a name has no use for: controls (Cc, C0 and C1, ESC among them),
format characters (Cf: bidi overrides and isolates, zero-width joiners), surrogates (Cs),
private use (Co), unassigned code points (Cn), and the line and paragraph separators (Zl,
Zp). After the rule, "here" and "here " (or "é" composed and decomposed) are one name.

Text leaving iolab may still hold such characters (a database made before the rule, a
device's model string): `shown` spells each as a visible escape ("\\u001b", "\\u202e"), and
`spreadsheet_cell` keeps a CSV cell from being read as a formula. Plain functions of strings:
no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

MAX_LENGTH = 200  # characters in a name
REFUSED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_KINDS = {
    "Cc": "a control character",
    "Cf": "a format character",
    "Cs": "a surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
}
_SUSPECT = re.compile(r"[^\x20-\x7e\n]")  # all but printable ASCII: the few worth a look
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # OWASP's list for CSV injection


class BadName(ValueError):
    """A name that breaks the rule; str(error) says why, without quoting the name."""


def check(value: object) -> str:
    """`value` as a name (NFC, trimmed), or BadName saying what is wrong with it."""
    if not isinstance(value, str):
        raise BadName(f"must be text, not {type(value).__name__}")
    found = refused(value)
    if found is not None:
        raise BadName(f"holds {spelled(found)}; use printable text")
    name = normal(value)
    if not name:
        raise BadName("is empty" if not value else "holds only spaces")
    if len(name) > MAX_LENGTH:
        raise BadName(f"is {len(name):,} characters; keep it to {MAX_LENGTH}")
    return name


FACTOR_MARKS = ",:="  # a factor's name or value holds none: they part `--pivot a,b:c`, `k=v`


def factor(value: object) -> str:
    """A factor's name or value (a set-up's card, level, policy): a name by `check`, without
    the marks that part a pivot and a `NAME=VALUE` flag (FACTOR_MARKS)."""
    name = check(value)
    if any(mark in name for mark in FACTOR_MARKS):
        raise BadName(f"holds one of {' '.join(FACTOR_MARKS)}, which part factors; leave them out")
    return name


def normal(text: str) -> str:
    """The text in NFC, without spaces at either end: how a name is compared and kept."""
    return unicodedata.normalize("NFC", text).strip()


def refused(text: str) -> str | None:
    """The first character of `text` a name may not hold; None if it holds none."""
    if text.isprintable():  # no C*, Z* but the space: the common case, at C speed
        return None
    return next((c for c in text if unicodedata.category(c) in REFUSED), None)


def spelled(char: str) -> str:
    """A character as a message names it: "U+202E (RIGHT-TO-LEFT OVERRIDE)"."""
    category = unicodedata.category(char)
    word = unicodedata.name(char, "") or _KINDS.get(category, category)
    return f"U+{ord(char):04X} ({word})"


def shown(text: str, keep: str = "") -> str:
    """`text` with each character a name may not hold spelled as a visible escape, as JSON
    spells it ("\\u001b", "\\u202e"; a pair of surrogates above U+FFFF), so that JSON text
    stays the same JSON; but those in `keep` (say "\\n" for a page of lines)."""

    def one(found: re.Match[str]) -> str:
        char = found.group(0)
        if char in keep or unicodedata.category(char) not in REFUSED:
            return char
        return _escaped(ord(char))

    return _SUSPECT.sub(one, text.replace("\n", "\\n") if "\n" not in keep else text)


def _escaped(code: int) -> str:
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def one_line(text: str) -> str:
    """`text` on one line: line breaks and tabs as spaces, other such characters escaped."""
    flat = re.sub(r"[\t\n\v\f\r\x1c-\x1e\x85\u2028\u2029]", " ", text)
    return shown(flat)


def spreadsheet_cell(text: str) -> str:
    """A CSV text cell a spreadsheet shows as text: one that starts with = + - @, a tab or a
    carriage return gets a leading apostrophe (OWASP's rule against formula injection).
    Only for text: a number is written as a number, never through this."""
    return f"'{text}" if text.startswith(FORMULA_START) else text


def and_list(items: Sequence[str]) -> str:
    """Names as a sentence lists them: "3", "3 and 10", "3, 7 and 10"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def runs_said(ids: Sequence[int]) -> str:
    """Run numbers as a sentence says them: "runs 1-6", "runs 2, 4-6", "run 3"."""
    spans: list[list[int]] = []
    for i in sorted(ids):
        if spans and i == spans[-1][-1] + 1:
            spans[-1].append(i)
        else:
            spans.append([i])
    said = ", ".join(f"{s[0]}-{s[-1]}" if len(s) > 1 else str(s[0]) for s in spans)
    return f"run{'s' if len(ids) != 1 else ''} {said}"
