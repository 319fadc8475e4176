"""Hostile names (issue 19, findings 7 and 8): one rule where a name comes in, escaping where
any text goes out.

Doors. A name the rule refuses (C0 and C1 controls, ESC sequences, DEL, bidi overrides and
isolates, zero-width characters, line and paragraph separators, private-use and unassigned
code points, only spaces, empty, too long) is refused at every door in one line on stderr,
exit 1, with nothing written: a plan's set-up name, workload name, job-file section and
hosts, an imported fio JSON job name, --setup, the folder an import names its set-up after,
and the set-up name in an iolab export. A name hostile only to a renderer (HTML, Markdown,
rich markup, emoji codes, spreadsheet formulas) is printable: accepted, as it is. "here" and
"here " (and "é" composed and decomposed) are one name: twice is refused.

Exits. Copies of the golden store with such names written straight into their rows, as a
database made before the rule would hold them, rendered in every format: the terminal's
text holds no control, bidi or separator character and rich reads no markup or emoji code
in it; Markdown through a CommonMark renderer with raw HTML on yields no element from a name
and keeps every table row whole; no CSV text cell starts a formula; the HTML page in headless
Chromium runs no script from a name and shows each name as its text.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
import time
import unicodedata
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from conftest import FIXTURES, Outcome, invoke, iolab_here, listing, problems_with_output, run_iolab
from iolab import names
from iolab.store import Store
from test_bad_input import plan

GOLDEN = Path(__file__).parent / "golden"
FIO_JSON = FIXTURES / "fio" / "randread-json" / "randread-json.json"
SETUP_LINE, WORKLOAD_LINE = 10, 15  # the template's name lines (test_bad_input.plan)

# ---------------------------------------------------------------- the names

# (id, name, words one of which the refusal says)
REFUSED: list[tuple[str, str, tuple[str, ...]]] = [
    ("newline", "a\nb", ("control character",)),
    ("carriage-return", "a\rb", ("control character",)),
    ("tab", "a\tb", ("control character",)),
    ("nul", "a\x00b", ("control character",)),
    ("bell", "a\x07b", ("control character",)),
    ("esc-osc-title", "\x1b]0;TITLE\x07", ("control character",)),
    ("esc-csi-clear", "\x1b[2J\x1b[Hx", ("control character",)),
    ("del", "a\x7fb", ("control character",)),
    ("c1-csi", "a\x9b31mb", ("U+009B",)),
    ("c1-nel", "a\x85b", ("U+0085",)),
    ("c1-osc", "a\x9d0;T\x9cb", ("U+009D",)),
    ("rlo", "abc\u202edcba", ("U+202E",)),
    ("lro", "\u202dabc", ("U+202D",)),
    ("lri", "a\u2066b\u2069", ("U+2066",)),
    ("fsi", "a\u2068b", ("U+2068",)),
    ("lrm", "a\u200eb", ("U+200E",)),
    ("arabic-letter-mark", "a\u061cb", ("U+061C",)),
    ("zwj", "a\u200db", ("U+200D",)),
    ("zwsp", "a\u200bb", ("U+200B",)),
    ("bom", "\ufeffname", ("U+FEFF",)),
    ("soft-hyphen", "a\u00adb", ("U+00AD",)),
    ("line-separator", "a\u2028b", ("U+2028",)),
    ("paragraph-separator", "a\u2029b", ("U+2029",)),
    ("private-use", "a\ue000b", ("U+E000",)),
    ("unassigned", "a\u0378b", ("U+0378",)),
    ("tag-character", "a\U000e0041b", ("U+E0041",)),
    ("only-spaces", "   ", ("only spaces", "is empty", "not a host name")),
    ("only-unicode-spaces", "\u00a0\u3000", ("only spaces", "is empty", "not a host name")),
    ("empty", "", ("is empty", "empty", "not a host name")),
    ("201-characters", "x" * 201, ("201 characters",)),
    ("10000-characters", "y" * 10_000, ("10,000 characters",)),
]
# Printable names, hostile to a renderer only: accepted at the doors, escaped at the exits.
PRINTABLE: list[tuple[str, str]] = [
    ("img-onerror", '<img src=x onerror="window.__pwned=1">'),
    ("script-close", "</script><script>window.__pwned=2</script>"),
    ("svg-onload", "<svg onload=window.__pwned=3>"),
    ("js-link", '<a href="javascript:window.__pwned=4">click</a>'),
    ("plotly-br", "a<br>b<b>bold</b>"),
    ("entity", "&lt;b&gt; &amp; &#60;"),
    ("md-table-row", "| a | b |"),
    ("md-link", "[x](javascript:alert(1))"),
    ("md-image", "![x](http://example.invalid/x.png)"),
    ("md-reference", "[x]: http://example.invalid"),
    ("md-emphasis", "*bold* _it_ `code` ~~s~~"),
    ("md-heading", "# heading #"),
    ("md-list", "- item"),
    ("md-ordered", "1. item"),
    ("md-autolink", "<http://example.invalid>"),
    ("rich-close", "[/]"),
    ("rich-close-bold", "[/bold]"),
    ("rich-link", "[link=file:///etc/passwd]click[/link]"),
    ("rich-style", "[bold red]x[/bold red]"),
    ("rich-emoji", ":smile:"),
    ("csv-hyperlink", '=HYPERLINK("http://example.invalid","x")'),
    ("csv-plus", "+1"),
    ("csv-minus", "-2+3"),
    ("csv-at", "@SUM(A1)"),
    ("quotes-commas", "a \"b\", 'c'; d"),
    ("backslashes", "a\\b\\"),
    ("right-to-left-letters", "שלום عالم"),
    ("emoji", "disk 💾 ✓"),
    ("nbsp-inside", "a\u00a0b"),
    ("decomposed", "e\u0301t\u0301e"),
]


def ids(rows: Sequence[tuple[Any, ...]]) -> list[str]:
    return [row[0] for row in rows]


def toml(text: str) -> str:
    """A TOML basic string holding `text` exactly (controls and DEL as escapes)."""
    out = []
    for char in text:
        if char in '"\\' or ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}" if char not in '"\\' else f"\\{char}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def hostile_characters(text: str) -> list[str]:
    """The characters a terminal must not be sent: C0 but the newline, DEL, C1, and every
    other character the rule of names refuses (bidi, zero-width, separators...)."""
    return sorted(
        {f"U+{ord(c):04X}" for c in text if c != "\n" and unicodedata.category(c) in names.REFUSED}
    )


def refused_problems(outcome: Outcome, words: Sequence[str | tuple[str, ...]]) -> list[str]:
    """One line, exit 1, "iolab: error: ", the row's words, no hostile character."""
    found = problems_with_output(outcome, words)
    if hostile_characters(outcome.stdout + outcome.stderr):
        found.append(f"hostile characters printed: {hostile_characters(outcome.stderr)}")
    return found


# ---------------------------------------------------------------- unit: the rule itself


@pytest.mark.parametrize(("case_id", "name", "words"), REFUSED, ids=ids(REFUSED))
def test_the_rule_refuses_with_its_reason(case_id: str, name: str, words: tuple[str, ...]) -> None:
    with pytest.raises(names.BadName) as caught:
        names.check(name)
    reason = str(caught.value)
    assert "\n" not in reason and not hostile_characters(reason)
    expected = tuple(w.replace("control character", "a control character") for w in words)
    assert any(w in reason for w in (*words, *expected)), reason
    assert name not in reason or not name.strip()  # the name is never quoted


@pytest.mark.parametrize(("case_id", "name"), PRINTABLE, ids=ids(PRINTABLE))
def test_the_rule_keeps_printable_names_normalised(case_id: str, name: str) -> None:
    kept = names.check(f"  {name} ")
    assert kept == unicodedata.normalize("NFC", name)
    assert names.check(kept) == kept


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b]0;T\x07b", "a\\u001b]0;T\\u0007b"),
        ("a\x9bb", "a\\u009bb"),
        ("x\u202ey", "x\\u202ey"),
        ("t\U000e0041", "t\\udb40\\udc41"),
        ("plain µs → ±", "plain µs → ±"),
        ("two\nlines", "two\\nlines"),
    ],
)
def test_shown_spells_what_a_name_may_not_hold_as_json_escapes(text: str, shown: str) -> None:
    assert names.shown(text) == shown
    assert json.loads(f'"{shown}"') == text  # JSON text stays the same JSON


@pytest.mark.parametrize(
    ("cell", "safe"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("one", "one"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_spreadsheet_cells_never_start_a_formula(cell: str, safe: str) -> None:
    assert names.spreadsheet_cell(cell) == safe


# ---------------------------------------------------------------- doors: the plan


def _check_door(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    args: list[str],
    words: Sequence[str | tuple[str, ...]],
) -> None:
    monkeypatch.chdir(workdir)
    for name, text in files.items():
        (workdir / name).write_text(text.replace("@DIR@", str(workdir)))
    before = listing(workdir)
    outcome = invoke(args, limit_s=60)
    problems = refused_problems(outcome, words)
    if listing(workdir) != before:
        problems.append(f"the directory changed: {sorted(set(listing(workdir)) - set(before))}")
    assert not problems, "\n".join([f"iolab {' '.join(args)[:200]}", *problems])


PLAN_DOORS = ("setup", "workload", "host")


@pytest.mark.parametrize("door", PLAN_DOORS)
@pytest.mark.parametrize(("case_id", "name", "words"), REFUSED, ids=ids(REFUSED))
def test_a_plan_refuses_the_name_in_one_line(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    door: str,
    case_id: str,
    name: str,
    words: tuple[str, ...],
) -> None:
    said: list[str | tuple[str, ...]]
    if door == "setup":
        text, said = plan(setup_name=toml(name)), [f"plan.toml:{SETUP_LINE}:", words]
    elif door == "workload":
        text, said = plan(name=toml(name)), [f"plan.toml:{WORKLOAD_LINE}:", words]
    else:
        text, said = plan(top=f"hosts = [{toml(name)}]"), ["plan.toml:", "host", words]
    args = ["run", "plan.toml", "--db", "out.db"]
    _check_door(workdir, monkeypatch, {"plan.toml": text}, args, said)


def _section_ok(name: str) -> bool:
    """A name a job file's [section] header can hold at all (one line, no ']')."""
    return bool(name.strip()) and not any(c in name for c in "\n\r\x00[]\x85\u2028\u2029")


SECTIONS = [row for row in REFUSED if _section_ok(row[1]) and not row[1].isspace()]


@pytest.mark.parametrize(("case_id", "name", "words"), SECTIONS, ids=ids(SECTIONS))
def test_a_job_file_refuses_the_section_name_in_one_line(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    case_id: str,
    name: str,
    words: tuple[str, ...],
) -> None:
    text = f"[global]\nrw=randread\nsize=8m\nruntime=1\n[{name}]\nbs=4k\n"
    monkeypatch.chdir(workdir)
    (workdir / "jobs.fio").write_bytes(text.encode("utf-8", "surrogatepass"))
    before = listing(workdir)
    outcome = invoke(["run", "jobs.fio", "--db", "out.db"], limit_s=60)
    problems = refused_problems(outcome, ["jobs.fio:5:", words])
    assert listing(workdir) == before
    assert not problems, "\n".join(problems)


DUPLICATES = [
    (
        "setup-trailing-space",
        {"setup_name": '"here"'},
        '[[setup]]\nname = "here "\npath = "@DIR@"',
        "set-up name 'here' is used twice",
    ),
    (
        "setup-leading-space",
        {"setup_name": '" here"'},
        '[[setup]]\nname = "here"\npath = "@DIR@"',
        "set-up name 'here' is used twice",
    ),
    (
        "setup-nfd-nfc",
        {"setup_name": '"\u00e9t\u00e9"'},
        '[[setup]]\nname = "e\u0301te\u0301"\npath = "@DIR@"',
        "set-up name '\u00e9t\u00e9' is used twice",
    ),
    (
        "workload-trailing-space",
        {},
        '[[workload]]\nname = "rr "\nrw = "read"',
        "workload 'rr' appears twice",
    ),
    (
        "workload-nfd-nfc",
        {"name": '"\u00e9"'},
        '[[workload]]\nname = "e\u0301"\nrw = "read"',
        "workload '\u00e9' appears twice",
    ),
]


@pytest.mark.parametrize(
    ("case_id", "given", "tail", "said"), DUPLICATES, ids=[d[0] for d in DUPLICATES]
)
def test_names_equal_once_normalised_are_one_name(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    case_id: str,
    given: dict[str, str],
    tail: str,
    said: str,
) -> None:
    text = plan(tail=tail, **given)
    _check_door(workdir, monkeypatch, {"plan.toml": text}, ["run", "plan.toml"], [said])


@pytest.mark.parametrize("door", ["setup", "workload"])
@pytest.mark.parametrize(("case_id", "name"), PRINTABLE, ids=ids(PRINTABLE))
def test_a_plan_takes_a_printable_name_as_it_is(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, door: str, case_id: str, name: str
) -> None:
    given = {"setup_name" if door == "setup" else "name": toml(f" {name} ")}
    (workdir / "plan.toml").write_text(plan(**given).replace("@DIR@", str(workdir)))
    monkeypatch.chdir(workdir)
    outcome = invoke(["show", "plan.toml"], limit_s=60)
    assert outcome.code == 0 and not outcome.crash, outcome.stderr + outcome.crash
    assert unicodedata.normalize("NFC", name) in outcome.stdout  # trimmed, NFC, as it is
    assert outcome.stderr == ""


# ---------------------------------------------------------------- doors: imports


def _fio_json(jobname: str) -> str:
    """fio's own JSON (a real run's), its job renamed: the file as a hostile tool would give."""
    document = json.loads(FIO_JSON.read_text())
    document["jobs"][0]["jobname"] = jobname
    return json.dumps(document, indent=2)


@pytest.mark.parametrize(("case_id", "name", "words"), REFUSED, ids=ids(REFUSED))
def test_an_import_refuses_the_job_name_in_one_line(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    case_id: str,
    name: str,
    words: tuple[str, ...],
) -> None:
    files = {"hostile.json": _fio_json(name)}
    args = ["import", "hostile.json", "--db", "out.db"]
    _check_door(workdir, monkeypatch, files, args, ["hostile.json: job name", words])


LONE_SURROGATE = [("lone-surrogate", "a\ud800b", ("U+D800",))]


@pytest.mark.parametrize(("case_id", "name", "words"), LONE_SURROGATE, ids=ids(LONE_SURROGATE))
def test_an_import_refuses_a_lone_surrogate(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    case_id: str,
    name: str,
    words: tuple[str, ...],
) -> None:
    text = _fio_json("JOBNAME").replace('"JOBNAME"', '"a\\ud800b"')
    args = ["import", "hostile.json", "--db", "out.db"]
    _check_door(workdir, monkeypatch, {"hostile.json": text}, args, ["job name", words])


@pytest.mark.parametrize(("case_id", "name", "words"), REFUSED, ids=ids(REFUSED))
def test_an_import_refuses_the_setup_option_in_one_line(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    case_id: str,
    name: str,
    words: tuple[str, ...],
) -> None:
    files = {"good.json": FIO_JSON.read_text()}
    args = ["import", "good.json", "--setup", name, "--db", "out.db"]
    _check_door(workdir, monkeypatch, files, args, ["--setup", words])


def _folder_ok(name: str) -> bool:
    return (
        bool(name)
        and "/" not in name
        and "\x00" not in name
        and not name.startswith(".")
        and len(name.encode()) <= 255
    )


FOLDERS = [row for row in REFUSED if _folder_ok(row[1])]


@pytest.mark.parametrize(("case_id", "name", "words"), FOLDERS, ids=ids(FOLDERS))
def test_an_import_refuses_a_folder_that_would_name_the_setup(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    case_id: str,
    name: str,
    words: tuple[str, ...],
) -> None:
    folder = workdir / "results" / name
    folder.mkdir(parents=True)
    shutil.copy(FIO_JSON, folder / "run.json")
    args = ["import", "results", "--db", "out.db"]
    said: list[str | tuple[str, ...]] = ["the name of its folder", "--setup NAME", words]
    _check_door(workdir, monkeypatch, {}, args, said)


@pytest.fixture(scope="module")
def export_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An iolab export of a real fio run imported (the fixture's), as JSON."""
    where = tmp_path_factory.mktemp("export")
    iolab_here("import", str(FIO_JSON), "--setup", "ssd", "--db", "x.db", cwd=where, check=True)
    done = iolab_here("export", "1", "--db", "x.db", "--format", "json", cwd=where, check=True)
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize(("case_id", "name", "words"), REFUSED, ids=ids(REFUSED))
def test_an_import_refuses_the_setup_name_of_an_iolab_export(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    export_json: dict[str, Any],
    case_id: str,
    name: str,
    words: tuple[str, ...],
) -> None:
    document = json.loads(json.dumps(export_json))
    old = document["setups"][0]["name"]
    document["setups"][0]["name"] = name
    for case in document["cases"]:
        case["setup"] = name if case["setup"] == old else case["setup"]
    files = {"export.json": json.dumps(document)}
    args = ["import", "export.json", "--db", "out.db"]
    _check_door(workdir, monkeypatch, files, args, ["setups[0].name", words])


@pytest.mark.parametrize(("case_id", "name"), PRINTABLE, ids=ids(PRINTABLE))
def test_an_import_takes_a_printable_job_name_as_it_is(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, case_id: str, name: str
) -> None:
    (workdir / "job.json").write_text(_fio_json(f"{name} "))
    monkeypatch.chdir(workdir)
    done = invoke(["import", "job.json", "--setup", "ssd", "--db", "in.db"], limit_s=60)
    assert done.code == 0 and not done.crash, done.stderr + done.crash
    with Store(workdir / "in.db") as store:
        assert [c.workload for c in store.cases(1)] == [unicodedata.normalize("NFC", name)]


# ---------------------------------------------------------------- exits: an old store

# Stores of names as a database made before the rule may hold them: four a store (set-up
# "one", set-up "two", workload "seq", the plan's name), refused and printable names mixed.
EXIT_NAMES = [
    (case_id, name)
    for case_id, name, _ in REFUSED
    if name.strip() and len(name) <= 201 and "\ud800" not in name
] + PRINTABLE
GROUPS = [tuple(EXIT_NAMES[i : i + 4]) for i in range(0, len(EXIT_NAMES), 4)]
GROUPS = [g if len(g) == 4 else (*g, *EXIT_NAMES[: 4 - len(g)]) for g in GROUPS]
GROUP_IDS = ["+".join(case_id for case_id, _ in group) for group in GROUPS]


def _rename(db: sqlite3.Connection, names4: Sequence[str]) -> None:
    one, two, seq, plan_name = names4
    for old, new in (("one", one), ("two", two)):
        db.execute("UPDATE cases SET setup = ? WHERE setup = ?", (new, old))
        for row_id, definition in db.execute(
            "SELECT id, definition FROM setups WHERE name = ?", (old,)
        ).fetchall():
            defined = {**json.loads(definition), "name": new}
            db.execute(
                "UPDATE setups SET name = ?, definition = ? WHERE id = ?",
                (new, json.dumps(defined), row_id),
            )
    db.execute("UPDATE runs SET baseline = ? WHERE baseline = 'one'", (one,))
    db.execute("UPDATE runs SET plan_name = ?", (plan_name,))
    db.execute("UPDATE cases SET workload = ? WHERE workload = 'seq'", (seq,))


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each group's store: the committed golden store, upgraded, its names replaced."""
    where = tmp_path_factory.mktemp("hostile-stores")
    made: dict[str, Path] = {}
    for group_id, group in zip(GROUP_IDS, GROUPS, strict=True):
        path = where / f"{len(made)}.db"
        shutil.copyfile(GOLDEN / "store.db", path)
        Store(path).close()  # upgraded by this iolab, as `report` would
        with sqlite3.connect(path) as db:
            _rename(db, [name for _, name in group])
        db.close()
        made[group_id] = path
    return made


def _names_of(group_id: str) -> list[str]:
    return [name for _, name in GROUPS[GROUP_IDS.index(group_id)]]


def _render(store: Path, *args: str) -> Outcome:
    outcome = invoke([*args, "--db", str(store)], limit_s=120)
    assert outcome.code == 0 and not outcome.crash, outcome.stderr + outcome.crash
    return outcome


TERMINAL = [("report", "1"), ("compare", "1", "2"), ("runs",), ("report", "1", "--format", "csv")]


@pytest.mark.parametrize("command", TERMINAL, ids=[" ".join(c) for c in TERMINAL])
@pytest.mark.parametrize("group_id", GROUP_IDS)
def test_the_terminal_gets_no_control_character_and_no_markup(
    stores: dict[str, Path], group_id: str, command: tuple[str, ...]
) -> None:
    outcome = _render(stores[group_id], *command)
    text = outcome.stdout + outcome.stderr
    assert hostile_characters(text) == [], hostile_characters(text)
    assert "\x1b" not in text and "😄" not in text and "Traceback" not in text
    seq = _names_of(group_id)[2]
    if command[0] == "report" and names.refused(seq) is None and len(seq) < 40:
        assert names.normal(seq) in text  # markup and emoji codes shown as they are
    if command[0] == "runs":
        assert names.one_line(_names_of(group_id)[3]) in text


class Elements(HTMLParser):
    """The elements of an HTML fragment, each table's rows as cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append("".join(self.cell))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


MARKDOWN_TAGS = {
    "h1",
    "h2",
    "h3",
    "p",
    "ul",
    "li",
    "em",
    "code",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
}


def _flat(text: str) -> str:
    """Text with its runs of white space as one space, as a browser shows them."""
    return " ".join(text.split())


@pytest.mark.parametrize("command", [("report", "1"), ("compare", "1", "2")])
@pytest.mark.parametrize("group_id", GROUP_IDS)
def test_markdown_rendered_with_raw_html_holds_no_element_from_a_name(
    stores: dict[str, Path], group_id: str, command: tuple[str, ...]
) -> None:
    text = _render(stores[group_id], *command, "--format", "markdown").stdout
    assert hostile_characters(text) == []
    page = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    found = Elements()
    found.feed(page.render(text))
    assert set(found.tags) <= MARKDOWN_TAGS, set(found.tags) - MARKDOWN_TAGS
    assert "tr" in found.tags and all(len(row) >= 2 for row in found.rows)
    cells = {cell for row in found.rows for cell in row}
    _, two, seq, _ = (names.one_line(n) for n in _names_of(group_id))
    if command[0] == "report":  # each name whole in its own cell: no | or newline cut it
        assert seq in cells, (seq, sorted(cells)[:20])
        assert two in cells, (two, sorted(cells)[:20])


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


CSV_COMMANDS = [("report", "1", "--format", "csv"), ("export", "1", "--format", "csv")]


@pytest.mark.parametrize("command", CSV_COMMANDS, ids=["report", "export"])
@pytest.mark.parametrize("group_id", GROUP_IDS)
def test_no_csv_text_cell_starts_a_formula(
    stores: dict[str, Path], group_id: str, command: tuple[str, ...]
) -> None:
    text = _render(stores[group_id], *command).stdout
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    named = [i for i, column in enumerate(header) if column in ("setup", "workload")] or [0]
    for row in body:
        for index, cell in enumerate(row):
            if index in named or not _number(cell):  # a number is data, not a formula
                assert not cell.startswith(names.FORMULA_START), (header[index], cell)
    seq = _names_of(group_id)[2]
    kept = names.one_line(seq) if command[0] == "report" else names.shown(seq, keep="\n")
    shown = {row[i] for row in body for i in named}
    assert names.spreadsheet_cell(kept) in shown, (kept, sorted(shown)[:10])


# ---------------------------------------------------------------- exits: HTML in Chromium

PAGE_JS = """
(() => ({
  pwned: typeof window.__pwned,
  elements: document.querySelectorAll('img, iframe, object, embed, frame').length,
  svgImages: [...document.querySelectorAll('svg image')]
    .filter(i => !(i.getAttribute('href') || i.getAttribute('xlink:href') || '')
      .startsWith('data:')).length,
  jsLinks: [...document.querySelectorAll('a')].filter(a => /^\\s*javascript:/i.test(a.href))
    .length,
  scripts: document.querySelectorAll('script').length,
  charts: document.querySelectorAll('figure.chart').length,
  drawn: [...document.querySelectorAll('figure.chart')].every(
    f => f.querySelectorAll('.main-svg').length > 0),
  text: document.body.innerText,
  legends: [...document.querySelectorAll('.legendtext')].map(e => e.textContent),
  title: document.title,
}))()
"""


@pytest.mark.browser
@pytest.mark.parametrize("command", [("report", "1"), ("compare", "1", "2")])
@pytest.mark.parametrize("group_id", GROUP_IDS)
def test_the_html_page_runs_no_script_from_a_name(
    stores: dict[str, Path],
    tmp_path: Path,
    browser: Any,
    group_id: str,
    command: tuple[str, ...],
) -> None:
    page = tmp_path / "page.html"
    _render(stores[group_id], *command, "--format", "html", "-o", str(page))
    browser.load(page.as_uri())
    deadline = time.monotonic() + 20
    while True:
        seen = browser.evaluate(PAGE_JS)
        if seen["drawn"] or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert seen["pwned"] == "undefined"
    assert (seen["elements"], seen["svgImages"], seen["jsLinks"]) == (0, 0, 0)
    # plotly's loader, the plotly.js it unpacks, and one script per chart
    assert seen["scripts"] == seen["charts"] + (2 if seen["charts"] else 0)
    assert seen["drawn"] and browser.errors() == []
    _, two, _, plan_name = _names_of(group_id)
    assert _flat(names.shown(two, keep="\n\t")) in _flat(seen["text"])  # as its text
    if command[0] == "report":
        assert _flat(names.shown(plan_name, keep="\n\t")) in _flat(seen["title"])
        legend = _flat(names.one_line(two))
        assert any(legend in _flat(text) for text in seen["legends"]), (legend, seen["legends"])


# ---------------------------------------------------------------- a real run


@pytest.mark.fio
def test_a_run_with_markup_names_prints_its_table_and_reports(workdir: Path) -> None:
    """Finding 8's crash: rich markup in a set-up and a workload name, after the cases."""
    text = plan(setup_name=toml("[/]"), name=toml("[/bold] :smile: <b>x</b>"))
    (workdir / "plan.toml").write_text(text.replace("@DIR@", str(workdir)))
    done = run_iolab("run", "plan.toml", "--db", "r.db", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert "[/bold] :smile: <b>x</b>" in done.stdout and "[/]" in done.stdout
    again = run_iolab("report", "--db", "r.db", "--format", "markdown", cwd=workdir)
    assert again.returncode == 0, again.stderr
    assert "[/bold] :smile: &lt;b&gt;x&lt;/b&gt;" in again.stdout  # "]" ends no link here
