"""Hostile outputs, table-driven: every command and format that writes a file or a folder,
against links, files iolab did not write, files it wrote and the user edited since, and the
fio-plot record attack (issue 19, findings 4 and 5).

Each row sets a scene in a scratch folder (a copy of the golden store, and a victim folder
outside it), runs one command line, and asserts: a refusal is exit 1, exactly one line on
stderr starting "iolab: error: " with the row's words, no traceback, and nothing created,
changed or removed in the scratch folder; a success is exit 0, no traceback, and each file
written is a regular file whose content the folder's `.iolab-written` record holds; either
way, no byte of the victim folder (files, links, names) changed. Then six real concurrent
reports into one folder (issue 29, finding 11): each kept in the folder's record.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import IOLAB, run_iolab
from iolab.cli import main
from iolab.outputs import RECORD

GOLDEN = Path(__file__).parent / "golden" / "store.db"
THEIRS = "the user's own words\n"
Scene = Callable[[Path, Path], None]  # (scratch, victim) -> None: make the row's scene


@dataclass(frozen=True)
class Writer:
    """One command line that writes: `out` is its -o FILE, or the folder it writes into."""

    label: str
    args: str
    out: str
    beside: tuple[str, ...] = ()  # more files it writes beside `out` (CSV and Parquet tables)
    images: str = ""  # a Markdown report's images folder, and a file it writes there
    image: str = ""
    folder: bool = False  # `out` is a folder (--export DIR, fio-plot's -o DIR)
    inner: str = ""  # a folder writer: a file it writes inside `out`


FILES = [
    *(
        Writer(
            f"report-{fmt}",
            f"report --db s.db --format {fmt} -o r.{ext}"
            + " --charts bars" * (fmt in ("markdown", "html")),
            f"r.{ext}",
            **extra,  # type: ignore[arg-type]
        )
        for fmt, ext, extra in (
            ("table", "txt", {}),
            ("csv", "csv", {}),
            ("html", "html", {}),
            ("markdown", "md", {"images": "r_files", "image": "r_files/bars-iops.png"}),
        )
    ),
    *(
        Writer(
            f"compare-{fmt}",
            f"compare 1 2 --db s.db --format {fmt} -o c.{ext}",
            f"c.{ext}",
            **extra,  # type: ignore[arg-type]
        )
        for fmt, ext, extra in (
            ("table", "txt", {}),
            ("csv", "csv", {}),
            ("html", "html", {}),
            ("markdown", "md", {"images": "c_files", "image": "c_files/bars-iops.png"}),
        )
    ),
    Writer("export-json", "export 1 --db s.db -o x.json", "x.json"),
    Writer(
        "export-csv",
        "export 1 --db s.db --format csv -o x.csv",
        "x.csv",
        beside=("x.percentiles.csv", "x.samples.csv"),
    ),
    Writer(
        "export-parquet",
        "export 1 --db s.db --format parquet -o x.parquet",
        "x.parquet",
        beside=("x.percentiles.parquet", "x.samples.parquet"),
    ),
]
FOLDERS = [
    Writer(
        "report-export",
        "report --db s.db --charts bars --export ex",
        "ex",
        folder=True,
        inner="results.csv",
    ),
    Writer(
        "compare-export",
        "compare 1 2 --db s.db --export ex",
        "ex",
        folder=True,
        inner="comparison.csv",
    ),
    Writer(
        "export-fio-plot",
        "export 1 --db s.db --format fio-plot -o fp",
        "fp",
        folder=True,
        inner="one/4k/randread-1-1.json",
    ),
]
FIO_PLOT = FOLDERS[2]


@dataclass(frozen=True)
class Row:
    id: str
    writer: Writer
    scene: Scene
    force: bool = False
    refused: tuple[str, ...] | None = None  # the words of the one line; None: succeeds
    extra: tuple[str, ...] = ()  # more arguments
    check: Scene | None = None  # more to assert afterwards
    written: tuple[str, ...] = field(default=())  # a success: files it must have written


# ---------------------------------------------------------------- scenes


def run(scratch: Path, writer: Writer, *extra: str) -> None:
    """Run the writer once as part of a scene; it must succeed."""
    outcome = invoke(scratch, [*writer.args.split(), *extra])
    assert outcome.code == 0, outcome.stderr


def link(name: str, to: str) -> Scene:
    """`name` in the scratch folder, a symbolic link to `to` (@VICTIM@: the victim folder)."""

    def make(scratch: Path, victim: Path) -> None:
        path = scratch / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(to.replace("@VICTIM@", str(victim)))

    return make


def theirs(name: str) -> Scene:
    def make(scratch: Path, victim: Path) -> None:
        path = scratch / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(THEIRS)

    return make


def folder(name: str) -> Scene:
    return lambda scratch, victim: (scratch / name).mkdir(parents=True)


def hard_link(name: str) -> Scene:
    return lambda scratch, victim: os.link(victim / "passwd", scratch / name)


def written_then(writer: Writer, then: Scene) -> Scene:
    """The writer's output, made by iolab, then `then` (an edit, a link...)."""

    def make(scratch: Path, victim: Path) -> None:
        run(scratch, writer)
        then(scratch, victim)

    return make


def edit(name: str) -> Scene:
    def make(scratch: Path, victim: Path) -> None:
        with (scratch / name).open("ab") as handle:
            handle.write(b"\nmy note\n")

    return make


def record_of(folder_name: str, entries: dict[str, str]) -> Scene:
    """Add entries (name -> the file whose sha256 they claim, @VICTIM@ for the victim
    folder) to the record in `folder_name`, as an attacker who knows the content would."""

    def make(scratch: Path, victim: Path) -> None:
        path = scratch / folder_name / RECORD
        record = json.loads(path.read_text())
        for name, source in entries.items():
            data = (scratch / source.replace("@VICTIM@", str(victim))).read_bytes()
            listed = name.replace("@VICTIM@", str(victim))
            record["files"][listed] = {"sha256": sha256(data), "by": "fio-plot"}
        path.write_text(json.dumps(record))

    return make


def both(*scenes: Scene) -> Scene:
    def make(scratch: Path, victim: Path) -> None:
        for scene in scenes:
            scene(scratch, victim)

    return make


def nothing(scratch: Path, victim: Path) -> None:
    """No scene: the command's own first run."""


# ---------------------------------------------------------------- rows

LINK = ("symbolic link", "never writes through")
FOREIGN = ("exists and iolab did not write it", "--force")


def victim_kept(*names: str) -> Scene:
    def check(scratch: Path, victim: Path) -> None:
        for name in names:
            assert (victim / name).read_text() == VICTIM_FILES[name], name

    return check


def file_rows(w: Writer) -> list[Row]:
    rows = [
        Row(f"{w.label}-link-to-victim", w, link(w.out, "@VICTIM@/passwd"), refused=LINK),
        Row(
            f"{w.label}-link-to-victim-force",
            w,
            link(w.out, "@VICTIM@/passwd"),
            force=True,
            refused=LINK,
        ),
        Row(
            f"{w.label}-dangling-link", w, link(w.out, "@VICTIM@/created"), force=True, refused=LINK
        ),
        Row(f"{w.label}-relative-link", w, link(w.out, "sub/../s.db"), force=True, refused=LINK),
        Row(f"{w.label}-foreign", w, theirs(w.out), refused=(w.out, *FOREIGN)),
        Row(f"{w.label}-foreign-force", w, theirs(w.out), force=True, written=(w.out,)),
        Row(f"{w.label}-hard-link-to-victim", w, hard_link(w.out), refused=FOREIGN),
        Row(
            f"{w.label}-hard-link-to-victim-force",
            w,
            hard_link(w.out),
            force=True,
            written=(w.out,),
            check=victim_kept("passwd"),
        ),
        Row(f"{w.label}-twice", w, written_then(w, nothing), written=(w.out, *w.beside)),
        Row(f"{w.label}-edited", w, written_then(w, edit(w.out)), refused=(w.out, *FOREIGN)),
        Row(
            f"{w.label}-edited-force", w, written_then(w, edit(w.out)), force=True, written=(w.out,)
        ),
        Row(
            f"{w.label}-written-then-linked",
            w,
            written_then(
                w, both(lambda s, v: (s / w.out).unlink(), link(w.out, "@VICTIM@/passwd"))
            ),
            refused=LINK,
        ),
        Row(
            f"{w.label}-record-is-a-link",
            w,
            link(RECORD, "@VICTIM@/passwd"),
            force=True,
            refused=(RECORD, "symbolic link"),
        ),
        Row(
            f"{w.label}-record-is-foreign",
            w,
            theirs(RECORD),
            refused=(RECORD, "iolab did not write it"),
        ),
        Row(
            f"{w.label}-record-is-a-folder",
            w,
            folder(RECORD),
            force=True,
            refused=(RECORD, "directory"),
        ),
    ]
    for name in w.beside:
        rows += [
            Row(
                f"{w.label}-beside-link-{name}",
                w,
                link(name, "@VICTIM@/passwd"),
                force=True,
                refused=(name, *LINK),
            ),
            Row(f"{w.label}-beside-foreign-{name}", w, theirs(name), refused=(name, *FOREIGN)),
        ]
    if w.images:
        rows += [
            Row(
                f"{w.label}-images-folder-link",
                w,
                link(w.images, "@VICTIM@/dir"),
                refused=(w.images, *LINK),
            ),
            Row(
                f"{w.label}-images-folder-link-force",
                w,
                link(w.images, "@VICTIM@/dir"),
                force=True,
                refused=(w.images, *LINK),
            ),
            Row(
                f"{w.label}-images-folder-is-a-file",
                w,
                theirs(w.images),
                force=True,
                refused=(w.images, "not a folder"),
            ),
            Row(
                f"{w.label}-image-is-a-link",
                w,
                link(w.image, "@VICTIM@/passwd"),
                force=True,
                refused=(w.image, *LINK),
            ),
            Row(f"{w.label}-image-foreign", w, theirs(w.image), refused=(w.image, *FOREIGN)),
            Row(
                f"{w.label}-image-foreign-force",
                w,
                theirs(w.image),
                force=True,
                written=(w.out, w.image),
            ),
        ]
    return rows


def folder_rows(w: Writer) -> list[Row]:
    inner = f"{w.out}/{w.inner}"
    top = f"{w.out}/{w.inner.split('/')[0]}"  # fio-plot: the set-up folder
    return [
        Row(f"{w.label}-folder-link", w, link(w.out, "@VICTIM@/dir"), refused=(w.out, *LINK)),
        Row(
            f"{w.label}-folder-link-force",
            w,
            link(w.out, "@VICTIM@/dir"),
            force=True,
            refused=(w.out, *LINK),
        ),
        Row(
            f"{w.label}-folder-dangling-link",
            w,
            link(w.out, "@VICTIM@/new"),
            force=True,
            refused=(w.out, *LINK),
        ),
        Row(
            f"{w.label}-folder-is-a-file",
            w,
            theirs(w.out),
            force=True,
            refused=(w.out, "not a directory"),
        ),
        Row(
            f"{w.label}-inner-link-force",
            w,
            both(
                folder(w.out),
                link(top, "@VICTIM@/dir") if "/" in w.inner else link(inner, "@VICTIM@/passwd"),
            ),
            force=True,
            refused=(top, *LINK),
        ),
        Row(f"{w.label}-inner-foreign", w, theirs(inner), refused=("--force",)),
        Row(f"{w.label}-inner-foreign-force", w, theirs(inner), force=True, written=(inner,)),
        Row(f"{w.label}-twice", w, written_then(w, nothing), written=(inner,)),
        Row(f"{w.label}-edited", w, written_then(w, edit(inner)), refused=(inner, *FOREIGN)),
        Row(
            f"{w.label}-edited-force", w, written_then(w, edit(inner)), force=True, written=(inner,)
        ),
        Row(
            f"{w.label}-record-is-a-link",
            w,
            both(folder(w.out), link(f"{w.out}/{RECORD}", "@VICTIM@/passwd")),
            force=True,
            refused=(RECORD, "symbolic link"),
        ),
    ]


def victim_and_link_kept(scratch: Path, victim: Path) -> None:
    victim_kept("passwd", "dir/important.txt")(scratch, victim)
    assert (scratch / "fp" / "evil").is_symlink()


def said_left(count: int) -> Scene:
    def check(scratch: Path, victim: Path) -> None:
        assert f"left {count} file(s) of the earlier export in place" in LAST[0].stderr

    return check


def both_checks(*checks: Scene) -> Scene:
    return both(*checks)


OLD_MARK = json.dumps(
    {
        "exported_by": "iolab",
        "format": "fio-plot",
        "files": ["evil/important.txt", "../x", "/etc/x"],
    }
)


def old_mark(scratch: Path, victim: Path) -> None:
    """The manifest of the fio-plot export before the record: a list of names, no hashes."""
    (scratch / "fp" / ".iolab-fio-plot").write_text(OLD_MARK)


FIO_PLOT_ROWS = [
    # the attack of finding 5, on the record that replaced .iolab-fio-plot
    Row(
        "fio-plot-record-lists-a-file-through-a-link",
        FIO_PLOT,
        written_then(
            FIO_PLOT,
            both(
                link("fp/evil", "@VICTIM@/dir"),
                record_of("fp", {"evil/important.txt": "@VICTIM@/dir/important.txt"}),
            ),
        ),
        written=("fp/one/4k/randread-1-1.json",),
        check=both_checks(victim_and_link_kept, said_left(1)),
    ),
    Row(
        "fio-plot-record-lists-parent-and-absolute",
        FIO_PLOT,
        written_then(
            FIO_PLOT,
            both(
                link("fp/evil", "@VICTIM@/dir"),
                theirs("x"),
                record_of(
                    "fp",
                    {
                        "../x": "x",
                        "../../victim/passwd": "@VICTIM@/passwd",
                        "@VICTIM@/passwd": "@VICTIM@/passwd",
                        "/etc/x": "x",
                        "evil/../../x": "x",
                    },
                ),
            ),
        ),
        written=("fp/one/4k/randread-1-1.json",),
        check=both(
            victim_and_link_kept,
            lambda s, v: (
                None if (s / "x").read_text() == THEIRS else pytest.fail("../x was removed")
            ),
        ),
    ),
    Row(
        "fio-plot-record-lists-a-link",
        FIO_PLOT,
        written_then(
            FIO_PLOT,
            both(link("fp/evil", "@VICTIM@/passwd"), record_of("fp", {"evil": "@VICTIM@/passwd"})),
        ),
        written=("fp/one/4k/randread-1-1.json",),
        check=both_checks(victim_and_link_kept, said_left(1)),
    ),
    Row(
        "fio-plot-record-lists-under-a-file",
        FIO_PLOT,
        written_then(
            FIO_PLOT,
            both(
                theirs("fp/plain"),
                record_of("fp", {"plain/x": "fp/plain", "fp/plain/x": "fp/plain"}),
            ),
        ),
        written=("fp/one/4k/randread-1-1.json",),
        check=lambda s, v: (
            None if (s / "fp/plain").read_text() == THEIRS else pytest.fail("fp/plain changed")
        ),
    ),
    Row(
        "fio-plot-record-lists-an-edited-file",
        FIO_PLOT,
        written_then(
            FIO_PLOT,
            both(
                theirs("fp/one/8k/stale.json"),
                record_of("fp", {"one/8k/stale.json": "fp/one/8k/stale.json"}),
                edit("fp/one/8k/stale.json"),
            ),
        ),
        written=("fp/one/4k/randread-1-1.json",),
        check=both_checks(
            said_left(1),
            lambda s, v: (
                None
                if (s / "fp/one/8k/stale.json").read_text().startswith(THEIRS)
                else pytest.fail("removed")
            ),
        ),
    ),
    Row(
        "fio-plot-record-lists-a-hard-link-to-the-victim",
        FIO_PLOT,
        written_then(
            FIO_PLOT, both(hard_link("fp/hard"), record_of("fp", {"hard": "@VICTIM@/passwd"}))
        ),
        written=("fp/one/4k/randread-1-1.json",),
        check=victim_kept("passwd"),
    ),
    Row(
        "fio-plot-stale-file-of-its-own-is-removed",
        FIO_PLOT,
        written_then(
            FIO_PLOT,
            both(
                theirs("fp/one/8k/stale.json"),
                record_of("fp", {"one/8k/stale.json": "fp/one/8k/stale.json"}),
            ),
        ),
        written=("fp/one/4k/randread-1-1.json",),
        check=lambda s, v: (
            None
            if not (s / "fp/one/8k").exists()
            else pytest.fail("the stale file (and its folder) stayed")
        ),
    ),
    Row(
        "fio-plot-old-manifest-attack",
        FIO_PLOT,
        both(folder("fp"), link("fp/evil", "@VICTIM@/dir"), old_mark),
        refused=("fp", "iolab did not write", "--force"),
    ),
    Row(
        "fio-plot-old-manifest-attack-force",
        FIO_PLOT,
        both(folder("fp"), link("fp/evil", "@VICTIM@/dir"), old_mark),
        force=True,
        written=("fp/one/4k/randread-1-1.json",),
        check=victim_and_link_kept,
    ),
    Row(
        "fio-plot-folder-of-other-files",
        FIO_PLOT,
        theirs("fp/notes.txt"),
        refused=("fp", "iolab did not write", "--force"),
    ),
    Row(
        "fio-plot-folder-of-other-files-force",
        FIO_PLOT,
        theirs("fp/notes.txt"),
        force=True,
        written=("fp/one/4k/randread-1-1.json",),
        check=lambda s, v: (
            None if (s / "fp/notes.txt").read_text() == THEIRS else pytest.fail("notes.txt changed")
        ),
    ),
    Row(
        "fio-plot-record-is-foreign",
        FIO_PLOT,
        both(folder("fp"), theirs(f"fp/{RECORD}")),
        refused=(RECORD, "iolab did not write it"),
    ),
]

ROWS = [
    *(row for w in FILES for row in file_rows(w)),
    *(row for w in FOLDERS for row in folder_rows(w)),
    *FIO_PLOT_ROWS,
]


def test_the_table_is_big_and_its_ids_are_unique() -> None:
    ids = [row.id for row in ROWS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert len(ids) >= 200


# ---------------------------------------------------------------- running and looking


@dataclass
class Outcome:
    code: int | None
    stdout: str
    stderr: str
    crash: str = ""


LAST: list[Outcome] = []  # the row's own outcome, for its checks


def invoke(scratch: Path, args: list[str]) -> Outcome:
    """iolab in this process, in the scratch folder (click's runner keeps stdout and stderr
    apart)."""
    before = Path.cwd()
    os.chdir(scratch)
    try:
        result = CliRunner().invoke(main, args)
    finally:
        os.chdir(before)
    crash = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        crash = "".join(traceback.format_exception(result.exception))
    return Outcome(result.exit_code, result.stdout, result.stderr, crash)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def listing(root: Path) -> dict[str, tuple[str, str]]:
    """Every entry under root (links not followed): kind and content hash or link target."""
    found: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            mode = path.lstat().st_mode
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(mode):
                found[rel] = ("file", sha256(path.read_bytes()))
            else:
                found[rel] = (stat.filemode(mode)[0], "")
    return found


VICTIM_FILES = {"passwd": "root:x:0:0:root:/root:/bin/bash\n", "dir/important.txt": "keep\n"}


@pytest.fixture
def scene(tmp_path: Path) -> tuple[Path, Path]:
    scratch, victim = tmp_path / "scratch", tmp_path / "victim"
    scratch.mkdir()
    shutil.copyfile(GOLDEN, scratch / "s.db")
    for name, text in VICTIM_FILES.items():
        (victim / name).parent.mkdir(parents=True, exist_ok=True)
        (victim / name).write_text(text)
    migrated = invoke(scratch, ["runs", "--db", "s.db"])  # a late refusal leaves it as it is
    assert migrated.code == 0, migrated.stderr
    return scratch, victim


def problems_with_refusal(outcome: Outcome, words: tuple[str, ...]) -> list[str]:
    found = []
    if outcome.code != 1:
        found.append(f"exit code {outcome.code}, not 1")
    line = outcome.stderr.removesuffix("\n")
    if not line or "\n" in line or not outcome.stderr.endswith("\n"):
        found.append(f"stderr is not exactly one line: {outcome.stderr[:600]!r}")
    if not line.startswith("iolab: error: "):
        found.append(f"stderr does not start with 'iolab: error: ': {line[:300]!r}")
    found += [f"stderr lacks {word!r}: {line[:300]!r}" for word in words if word not in line]
    return found


def problems_with_success(outcome: Outcome, scratch: Path, names: tuple[str, ...]) -> list[str]:
    found = [] if outcome.code == 0 else [f"exit code {outcome.code}: {outcome.stderr[-600:]}"]
    if "iolab: error" in outcome.stderr:
        found.append(f"an error was said: {outcome.stderr[-600:]!r}")
    for name in names:
        found += recorded(scratch, name)
    return found


def recorded(scratch: Path, name: str) -> list[str]:
    """`name` is a regular file, and a record above it holds its content's sha256."""
    path = scratch / name
    if path.is_symlink() or not path.is_file():
        return [f"{name} is not a regular file"]
    digest = sha256(path.read_bytes())
    for top in [path.parent, *path.parent.parents]:
        record = top / RECORD
        if record.is_file() and not record.is_symlink():
            entry = json.loads(record.read_text())["files"].get(str(path.relative_to(top)))
            if entry and entry["sha256"] == digest:
                return []
        if top == scratch:
            break
    return [f"{name}: no record holds what it holds"]


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_outputs_never_go_through_links_nor_replace_what_iolab_did_not_write(
    row: Row, scene: tuple[Path, Path]
) -> None:
    scratch, victim = scene
    row.scene(scratch, victim)
    before, victim_before = listing(scratch), listing(victim)
    args = [*row.writer.args.split(), *row.extra, *(("--force",) if row.force else ())]
    outcome = invoke(scratch, args)
    LAST[:] = [outcome]
    problems = [f"crashed: {outcome.crash[-1500:]}"] if outcome.crash else []
    if "Traceback" in outcome.stdout + outcome.stderr:
        problems.append("a traceback was printed")
    if row.refused is not None:
        problems += problems_with_refusal(outcome, row.refused)
        after = listing(scratch)
        problems += [
            f"{name}: {before.get(name)} became {after.get(name)}"
            for name in sorted(before.keys() | after.keys())
            if before.get(name) != after.get(name)
        ]
    else:
        problems += problems_with_success(outcome, scratch, row.written)
    if listing(victim) != victim_before:
        problems.append(f"the victim folder changed: {listing(victim)}")
    assert not problems, "\n".join([f"iolab {' '.join(args)}", *problems])
    if row.check is not None:
        row.check(scratch, victim)


# ---------------------------------------------------------------- concurrent outputs


def _record_holds(folder: Path) -> list[str]:
    """What the folder's record gets wrong: a file it does not list, or lists with another
    sha256 than the file's."""
    files = json.loads((folder / RECORD).read_text())["files"]
    found = {
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != RECORD
    }
    wrong = [f"{name} not recorded" for name in sorted(found - set(files))]
    wrong += [
        f"{name} recorded with another sha256"
        for name in sorted(found & set(files))
        if sha256((folder / name).read_bytes()) != files[name]["sha256"]
    ]
    return wrong


ROUNDS = 3  # rounds of six: without the lock, most rounds lose one report or more


def _report(run: str, args: list[str], cwd: Path) -> subprocess.Popen[str]:
    command = [*IOLAB, "report", run, *args]
    return subprocess.Popen(
        command, cwd=cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


@pytest.mark.slow
def test_six_concurrent_reports_into_one_folder_are_all_kept(workdir: Path) -> None:
    """One report into out/x.md, then six reruns at once, of run 1 and run 2 in turn (their
    texts differ), three times: each is written (none refused as a file iolab did not
    write), and the folder's record lists every file with its sha256, so a later rerun is
    not refused."""
    shutil.copyfile(GOLDEN, workdir / "g.db")
    (workdir / "out").mkdir()
    args = ["--format", "markdown", "-o", "out/x.md", "--db", "g.db"]
    run_iolab("report", "1", *args, cwd=workdir, check=True)
    for _ in range(ROUNDS):
        children = [_report(str(1 + n % 2), args, workdir) for n in range(6)]
        outcomes = [(child.communicate(timeout=300)[1], child.returncode) for child in children]
        assert [code for _, code in outcomes] == [0] * 6, [err for err, _ in outcomes]
        assert _record_holds(workdir / "out") == []
    again = run_iolab("report", "2", *args, cwd=workdir)
    assert again.returncode == 0, again.stderr
