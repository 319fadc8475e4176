"""Hostile input at the command line, table-driven (issue 19, findings 10, 11 and 13).

Each row is one invocation iolab must refuse: exit code 1, exactly one line on stderr starting
"iolab: error: " and holding the row's words, no traceback, nothing created, changed or left
in the scratch directory or the temporary directory; and none of the row's `absent` strings
(the content of a file that is not iolab's: a secret first line) anywhere in what it printed.
The rows cover files a plan names that are not what they should be (job files, hosts files,
a plan that is not TOML), values nested thousands deep, and every flag that takes a number or
a name given a value it cannot mean (empty, infinite, not a number, out of range).

(Standard output that cannot be written and the signals: test_shell.py.)
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    Word,
    invoke,
    listing,
    problems_with_output,
    run_iolab,
    spawn,
)
from test_bad_input import DIR, FileSpec, Spec, fill, leftovers, make_file, plan

SECRET = "SECRET-LINE-123 hunter2"  # the first line of a file that is not iolab's
SECRET_FILE = f"{SECRET}\nsecond line, also private\n"
SECRETS = ("SECRET-LINE-123", "hunter2", "also private")
STORED = Spec("stored")  # a copy of the module's database: two set-ups, iodepth swept
DEEP = 3000
FULL = os.strerror(28)  # ENOSPC: "No space left on device", as /dev/full answers


# ---------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    args: tuple[str, ...]
    words: tuple[Word, ...]
    files: tuple[tuple[str, FileSpec], ...]
    absent: tuple[str, ...]
    spawn: bool

    @property
    def stored(self) -> bool:
        return any(spec == STORED for _, spec in self.files)


def row(
    case_id: str,
    args: str | Sequence[str],
    words: Sequence[Word] = (),
    files: Mapping[str, FileSpec] | None = None,
    *,
    absent: Sequence[str] = (),
    spawn: bool = False,
) -> Any:
    made = Row(
        args=tuple(args.split()) if isinstance(args, str) else tuple(args),
        words=tuple(words),
        files=tuple((files or {}).items()),
        absent=tuple(absent),
        spawn=spawn,
    )
    marks = [pytest.mark.fio] if made.stored else []  # the module's database is a real run
    return pytest.param(made, id=case_id, marks=marks)


def secret_plan(case_id: str, words: Sequence[Word], command: str = "show", **slots: str) -> Any:
    """`iolab COMMAND plan.toml` with the template plan, and secret.txt beside it."""
    files: dict[str, FileSpec] = {"plan.toml": plan(**slots), "secret.txt": SECRET_FILE, "sub": DIR}
    return row(case_id, f"{command} plan.toml", words, files, absent=SECRETS)


def job_plan(case_id: str, words: Sequence[Word], job: str | bytes) -> Any:
    """A plan whose second [[workload]] names mine.fio, holding `job`."""
    tail = '[[workload]]\njobfile = "mine.fio"\n'
    files = {"plan.toml": plan(tail=tail), "mine.fio": job}
    return row(case_id, "show plan.toml", words, files, absent=SECRETS)


def deep_plan(case_id: str, words: Sequence[Word], spawned: bool = False, **slots: str) -> Any:
    files = {"plan.toml": plan(**slots)}
    return row(case_id, "show plan.toml", words, files, spawn=spawned)


NOT_A_JOB_LINE = "not a line of an fio job file"
NOT_A_HOST = "not a host"
FOREIGN_FILES = [
    secret_plan(
        "jobfile-secret-relative",
        ["secret.txt", ":1:", NOT_A_JOB_LINE],
        tail='[[workload]]\njobfile = "secret.txt"\n',
    ),
    secret_plan(
        "jobfile-secret-absolute",
        ["@DIR@/secret.txt:1:", NOT_A_JOB_LINE],
        tail='[[workload]]\njobfile = "@DIR@/secret.txt"\n',
    ),
    secret_plan(
        "jobfile-secret-dotdot",
        ["sub/../secret.txt:1:", NOT_A_JOB_LINE],
        tail='[[workload]]\njobfile = "sub/../secret.txt"\n',
    ),
    secret_plan(
        "jobfile-secret-run",
        ["secret.txt:1:", NOT_A_JOB_LINE],
        command="run",
        tail='[[workload]]\njobfile = "secret.txt"\n',
    ),
    secret_plan(
        "jobfile-etc-passwd",
        ["/etc/passwd:1:", NOT_A_JOB_LINE],
        tail='[[workload]]\njobfile = "/etc/passwd"\n',
    ),
    secret_plan(
        "hosts-file-secret", ["hosts file secret.txt:1:", NOT_A_HOST], top='hosts = "secret.txt"'
    ),
    secret_plan(
        "hosts-file-secret-absolute",
        ["@DIR@/secret.txt:1:", NOT_A_HOST],
        top='hosts = "@DIR@/secret.txt"',
    ),
    secret_plan(
        "hosts-file-secret-run",
        ["hosts file secret.txt:1:", NOT_A_HOST],
        command="run",
        top='hosts = "secret.txt"',
    ),
    secret_plan(
        "hosts-file-etc-passwd",
        ["hosts file /etc/passwd:1:", NOT_A_HOST],
        top='hosts = "/etc/passwd"',
    ),
    row(
        "hosts-file-secret-port",
        "show plan.toml",
        ["hosts.txt:2:", NOT_A_HOST],
        {
            "plan.toml": plan(top='hosts = "hosts.txt"'),
            "hosts.txt": "# servers\nlocalhost:hunter2\n",
        },
        absent=SECRETS,
    ),
    row(
        "hosts-file-secret-ipv6",
        "show plan.toml",
        ["hosts.txt:1:", NOT_A_HOST],
        {"plan.toml": plan(top='hosts = "hosts.txt"'), "hosts.txt": "[hunter2]:8765\n"},
        absent=SECRETS,
    ),
    row(
        "hosts-file-not-utf8",
        "show plan.toml",
        ["hosts.txt", "UTF-8"],
        {
            "plan.toml": plan(top='hosts = "hosts.txt"'),
            "hosts.txt": b"10.0.0.2\nhunter2 \xff\xfe\n",
        },
        absent=SECRETS,
    ),
    row(
        "hosts-file-twice",
        "show plan.toml",
        ["hosts.txt:3:", "twice"],
        {"plan.toml": plan(top='hosts = "hosts.txt"'), "hosts.txt": "10.0.0.2\n\n10.0.0.2\n"},
    ),
    row(
        "hosts-file-directory",
        "show plan.toml",
        ["hosts", "not a regular file"],
        {"plan.toml": plan(top='hosts = "sub"'), "sub": DIR},
    ),
    job_plan("job-secret-first-line", ["mine.fio:1:", NOT_A_JOB_LINE], SECRET_FILE),
    job_plan(
        "job-secret-after-section", ["mine.fio:2:", NOT_A_JOB_LINE], f"[{SECRET}]\n{SECRET}\n"
    ),
    job_plan(
        "job-secret-upper-key", ["mine.fio:3:", NOT_A_JOB_LINE], "[a]\nrw=read\nPASSWORD=hunter2\n"
    ),
    job_plan("job-bare-word-first", ["mine.fio:1:", "an unknown key"], "hunter2\n[a]\nrw=read\n"),
    job_plan("job-not-utf8", ["mine.fio", "UTF-8"], b"[a]\nrw=read\n# hunter2 \xff\n"),
    job_plan("job-nul-line", ["mine.fio:2:", NOT_A_JOB_LINE], "[a]\nhunter2\x00=1\n"),
    job_plan(
        "job-control-in-section", ["mine.fio:1:", "control character"], "[hunter2\x1b]\nrw=read\n"
    ),
    job_plan(
        "job-include", ["mine.fio:2:", "include names another file"], "[a]\ninclude hunter2.fio\n"
    ),
    job_plan("job-over-1mib", ["mine.fio", "1 MiB"], "[a]\n" + "#" * (1024**2 + 10) + "\n"),
    job_plan("job-no-section", ["mine.fio", "no job section"], "; hunter2\n"),
    row(
        "plan-is-secret-job-file",
        "show secret.fio",
        ["secret.fio:2:", NOT_A_JOB_LINE],
        {"secret.fio": f"[SECRET-SECTION]\n{SECRET}\n"},
        absent=(*SECRETS, "SECRET-SECTION"),
    ),
    row(
        "plan-is-secret-text",
        "show secret.txt",
        ["secret.txt", "not valid TOML", "line 1"],
        {"secret.txt": SECRET_FILE},
        absent=SECRETS,
    ),
    row(
        "plan-is-etc-passwd",
        "show /etc/passwd",
        ["/etc/passwd", "not valid TOML"],
        absent=("root:",),
    ),
    row(
        "plan-toml-table-twice",
        "show plan.toml",
        ["plan.toml", "declared twice", "line 2"],
        {"plan.toml": "[hunter2]\n[hunter2]\n"},
        absent=SECRETS,
    ),
    row(
        "plan-toml-inline-key-twice",
        "show plan.toml",
        ["plan.toml", "given twice", "line 1"],
        {"plan.toml": "a = {hunter2 = 1, hunter2 = 2}\n"},
        absent=SECRETS,
    ),
    row(
        "plan-toml-control-character",
        "show plan.toml",
        ["plan.toml", "control character"],
        {"plan.toml": 'a = "hunter2\x01"\n'},
        absent=SECRETS,
    ),
]

NESTED = [
    deep_plan(
        "deep-array-top", ["plan.toml", "too deep", "32"], top="x = " + "[" * DEEP + "]" * DEEP
    ),
    deep_plan(
        "deep-inline-table-top",
        ["plan.toml", "too deep", "32"],
        top="x = " + "{a = " * DEEP + "1" + "}" * DEEP,
    ),
    deep_plan(
        "deep-array-spawned",
        ["plan.toml", "too deep"],
        spawned=True,
        top="x = " + "[" * DEEP + "]" * DEEP,
    ),
    deep_plan(
        "deep-dotted-keys-workload",
        ["plan.toml:14:", "workload", "32 levels"],
        workload="a" + ".a" * DEEP + " = 1",
    ),
    deep_plan(
        "deep-dotted-keys-spawned",
        ["plan.toml:14:", "32 levels"],
        spawned=True,
        workload="a" + ".a" * DEEP + " = 1",
    ),
    deep_plan(
        "deep-table-header", ["plan.toml", "32 levels"], tail="[" + "a." * DEEP + "a]\nx = 1"
    ),
    deep_plan(
        "deep-array-in-defaults",
        ["plan.toml:4:", "defaults", "32 levels"],
        defaults="iodepth = " + "[" * 40 + "1" + "]" * 40,
    ),
    deep_plan(
        "deep-inline-in-setup",
        ["plan.toml:9:", "setup", "32 levels"],
        setup="queue = " + "{a = " * 40 + "1" + "}" * 40,
    ),
    deep_plan(
        "deep-array-in-report",
        ["plan.toml:20:", "report", "32 levels"],
        report="baseline = " + "[" * 200 + "]" * 200,
    ),
]


def host_path(case_id: str, path: str, mark: str, moved: bool = False) -> Any:
    """A plan on a host (host_env = "ssh") whose directory there is `path` (issue 40,
    finding 5): refused when loaded, before any host is asked, naming the set-up and `mark`
    (a C0 control is refused sooner, as in any plan value: CONTROL)."""
    top = 'hosts = ["127.0.0.9"]\nhost_env = "ssh"'
    if moved:
        setup, target = f'[setup.hosts]\n"127.0.0.9:8765" = "{path}"', 'path = "/srv/io"'
    else:
        setup, target = "", f'path = "{path}"'
    files = {"plan.toml": plan(top=top, setup=setup, target=target)}
    words = [CONTROL] if mark == CONTROL else ["set-up 'here'", f"holds {mark}"]
    return row(case_id, "run plan.toml", words, files)


CONTROL = "holds a control character"


HOST_PATHS = [
    host_path("host-path-semicolon", "/srv/x;touch PWNED", "';'"),
    host_path("host-path-backtick", "/srv/`touch PWNED`", "'`'"),
    host_path("host-path-pipe", "/srv/x|touch PWNED", "'|'"),
    host_path("host-path-dollar", "/srv/$(touch PWNED)", "'$'"),
    host_path("setup-hosts-newline", "/srv/x\\ntouch PWNED", CONTROL, moved=True),
    host_path("setup-hosts-escape", "/srv/x\\u001b[2J", CONTROL, moved=True),
    host_path("host-path-c1", "/srv/x\\u0085", "U+0085"),
    host_path("host-path-bidi", "/srv/x\\u202etxt", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    host_path("setup-hosts-semicolon", "/srv/y;touch PWNED", "';'", moved=True),
    host_path("setup-hosts-ampersand", "/srv/y&touch PWNED", "'&'", moved=True),
]


def chart_text(case_id: str, key: str, escaped: str, char: str) -> Any:
    """A plan whose chart's title or caption holds `escaped` (a TOML escape) (issue 40,
    finding 9): refused as a name is, at its line, by `iolab show`."""
    tail = f'[report.charts.bars-iops]\n{key} = "a{escaped}b"\n'
    words = ["plan.toml:23:", f"{key} holds {char}"]
    return row(case_id, "show plan.toml", words, {"plan.toml": plan(tail=tail)})


CHART_TEXTS = [
    chart_text("chart-title-c1-nel", "title", "\\u0085", "U+0085"),
    chart_text("chart-title-c1-csi", "title", "\\u009b31m", "U+009B"),
    chart_text("chart-title-rlo", "title", "\\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    chart_text("chart-title-lri", "title", "\\u2066", "U+2066"),
    chart_text("chart-caption-zwsp", "caption", "\\u200b", "U+200B"),
    chart_text("chart-caption-line-separator", "caption", "\\u2028", "U+2028"),
]


def bad_files(case_id: str, count: int) -> Any:
    """`iolab import` of `count` files none of which it can read (issue 40, finding 10): one
    line for them all (it said one for each, and one more), exit 1, no database made."""
    files: dict[str, FileSpec] = {f"bad{k}.json": f'{{"jobs": [{k},' for k in range(count)}
    words = ["bad0.json: its JSON is cut short", f"({count} of the files could not be imported"]
    if count > 3:
        words.append(f"and {count - 3} more")
    return row(case_id, ["import", *files, "--db", "new.db"], words, files)


NEW_FILE_JOB = "[j]\nfilename=@DIR@/new-file\nrw=write\nruntime=1\nsize=100t\n"
SEVERAL_LINES = [
    bad_files("import-two-bad-files", 2),
    bad_files("import-twelve-bad-files", 12),
    # a job file's note ("filename=... does not exist yet") came before the refusal
    row(
        "jobfile-note-then-too-big",
        "run big.fio --db new.db",
        ["set-up", "100.0 TiB", "more than"],
        {"big.fio": NEW_FILE_JOB},
    ),
]

DB = {"stored.db": STORED}
EMPTY = "is empty"
POSITIVE = "positive figure"
FIGURES = "--read-iops 1000 --write-iops 500 --read-mbps 100 --write-mbps 100"


def flag(case_id: str, args: str | Sequence[str], words: Sequence[Word], db: bool = False) -> Any:
    return row(case_id, args, words, DB if db else None)


def figure(name: str, value: str) -> Any:
    """advise with one device's four figures, `name` given `value` instead."""
    given = {"read-iops": "1000", "write-iops": "500", "read-mbps": "100", "write-mbps": "100"}
    args = [part for key, text in {**given, name: value}.items() for part in (f"--{key}", text)]
    return flag(f"advise-{name}-{value}", ["advise", *args], [f"--{name}", POSITIVE])


FLAGS = [
    flag("advise-devices-0", f"advise --devices 0 {FIGURES}", ["--devices 0", "2 to 64"]),
    flag("advise-devices-1", f"advise --devices 1 {FIGURES}", ["--devices 1", "2 to 64"]),
    flag("advise-devices-negative", f"advise --devices -3 {FIGURES}", ["--devices", "-3"]),
    flag("advise-devices-65", f"advise --devices 65 {FIGURES}", ["--devices 65", "2 to 64"]),
    flag("advise-devices-huge", f"advise --devices {10**30} {FIGURES}", ["2 to 64"]),
    flag("advise-devices-abc", f"advise --devices abc {FIGURES}", ["--devices", "abc"]),
    flag("advise-devices-float", f"advise --devices 2.5 {FIGURES}", ["--devices", "2.5"]),
    *(
        figure(name, value)
        for name in ("read-iops", "write-iops", "read-mbps", "write-mbps")
        for value in ("inf", "nan", "0", "-1")
    ),
    figure("read-iops", "1e400"),
    figure("write-iops", "-inf"),
    figure("read-mbps", "-0"),
    flag("advise-read-iops-abc", "advise --read-iops abc", ["--read-iops", "abc"]),
    flag("advise-read-iops-empty", ["advise", "--read-iops", ""], ["--read-iops"]),
    flag(
        "advise-setup-empty",
        ["advise", "--setup", "", "--db", "stored.db"],
        ["--setup", EMPTY],
        db=True,
    ),
    flag(
        "advise-setup-nosuch", "advise --setup nope --db stored.db", ["'nope'", "set-ups"], db=True
    ),
    flag(
        "advise-workload-empty",
        ["advise", "--workload", "", *FIGURES.split()],
        ["--workload", EMPTY],
    ),
    flag("advise-workload-bogus", f"advise --workload bogus {FIGURES}", ["--workload"]),
    flag(
        "report-baseline-empty",
        ["report", "--baseline", "", "--db", "stored.db"],
        ["--baseline", EMPTY],
        db=True,
    ),
    flag(
        "report-baseline-blank",
        ["report", "--baseline", "  ", "--db", "stored.db"],
        ["--baseline", EMPTY],
        db=True,
    ),
    flag(
        "report-baseline-nosuch",
        "report --baseline nope --db stored.db",
        ["'nope'", "set-ups: a, b"],
        db=True,
    ),
    flag(
        "report-x-bogus-table",
        "report --charts scaling --x bogus --db stored.db",
        ["--x 'bogus'", "iodepth"],
        db=True,
    ),
    flag(
        "report-x-bogus-csv",
        "report --format csv --x bogus --db stored.db",
        ["--x 'bogus'", "iodepth"],
        db=True,
    ),
    flag(
        "report-x-bogus-html",
        "report --format html -o r.html --x bogus --db stored.db",
        ["--x bogus", "iodepth"],
        db=True,
    ),
    flag("report-x-empty", ["report", "--x", "", "--db", "stored.db"], ["--x", EMPTY], db=True),
    flag(
        "report-x-without-charts",
        "report --x iodepth --db stored.db",
        ["--x", "draw none"],
        db=True,
    ),
    flag(
        "report-y-without-charts", "report --y iops --db stored.db", ["--y", "draw none"], db=True
    ),
    flag(
        "report-lines-without-charts",
        "report --lines setup --db stored.db",
        ["--lines", "draw none"],
        db=True,
    ),
    flag(
        "report-charts-without-charts",
        "report --charts scaling --db stored.db",
        ["--charts", "draw none"],
        db=True,
    ),
    flag(
        "report-skip-without-charts",
        "report --skip-charts bars --db stored.db",
        ["--skip-charts", "draw none"],
        db=True,
    ),
    flag("report-charts-bogus-table", "report --charts pie --db stored.db", ["'pie'"], db=True),
    flag(
        "report-charts-empty",
        ["report", "--charts", "", "--db", "stored.db"],
        ["--charts", EMPTY],
        db=True,
    ),
    flag(
        "report-x-not-with-bars",
        "report --format html -o r.html --charts bars --x iodepth --db stored.db",
        ["--x", "add scaling to --charts"],
        db=True,
    ),
    flag(
        "report-export-empty",
        ["report", "--export", "", "--db", "stored.db"],
        ["--export", EMPTY],
        db=True,
    ),
    flag(
        "report-output-empty",
        ["report", "-o", "", "--db", "stored.db"],
        ["--output", EMPTY],
        db=True,
    ),
    flag("report-db-empty", ["report", "--db", ""], ["--db"]),
    flag("report-run-0", "report 0 --db stored.db", ["no run 0"], db=True),
    flag(
        "compare-output-empty",
        ["compare", "1", "1", "-o", "", "--db", "stored.db"],
        ["--output", EMPTY],
        db=True,
    ),
    flag(
        "export-output-empty",
        ["export", "-o", "", "--db", "stored.db"],
        ["--output", EMPTY],
        db=True,
    ),
    flag(
        "export-format-empty",
        ["export", "--format", "", "--db", "stored.db"],
        ["--format", EMPTY],
        db=True,
    ),
    flag("run-plan-empty", ["run", ""], ["PLAN.toml", EMPTY]),
    flag("run-preset-empty", ["run", "--preset", ""], ["--preset", EMPTY]),
    flag("run-target-empty", ["run", "--preset", "quick", "--target", ""], ["--target", EMPTY]),
    flag("run-size-empty", ["run", "--preset", "quick", "--size", ""], ["--size", EMPTY]),
    flag("run-runtime-empty", ["run", "--preset", "quick", "--runtime", ""], ["--runtime", EMPTY]),
    flag("run-runtime-inf", "run --preset quick --runtime inf", ["--runtime", "inf"]),
    flag("run-runtime-nan", "run --preset quick --runtime nan", ["--runtime", "nan"]),
    flag("run-size-inf", "run --preset quick --size inf", ["--size", "inf"]),
    flag("run-max-cases-0", "run --preset quick --max-cases 0", ["--max-cases"]),
    flag("run-max-cases-negative", "run --preset quick --max-cases -5", ["--max-cases"]),
    flag("run-repeat-inf", "run --preset quick --repeat inf", ["--repeat"]),
    flag("run-resume-negative", "run --resume -1 --db stored.db", ["--resume", "'-1'"], db=True),
    flag(
        "run-yes-destroy-empty",
        ["run", "--preset", "quick", "--yes-destroy", ""],
        ["--yes-destroy", EMPTY],
    ),
    flag("show-plan-empty", ["show", ""], ["PLAN.toml", EMPTY]),
    flag("show-preset-blank", ["show", "--preset", " "], ["--preset", EMPTY]),
    flag("env-path-empty", ["env", ""], ["PATH", EMPTY]),
    flag("peak-target-empty", ["peak", "--target", ""], ["--target", EMPTY]),
    flag("peak-rw-empty", ["peak", "--rw", ""], ["--rw", EMPTY]),
    flag("peak-numjobs-0", "peak --numjobs 0-4", ["--numjobs"]),
    flag("peak-iodepth-reversed", "peak --iodepth 64-1", ["--iodepth"]),
    flag("peak-iodepth-inf", "peak --iodepth 1-inf", ["--iodepth"]),
    flag("peak-runtime-nan", "peak --runtime nan", ["--runtime"]),
    flag(
        "import-setup-empty",
        ["import", "x.json", "--setup", "", "--db", "new.db"],
        ["--setup", EMPTY],
    ),
    flag("import-path-empty", ["import", "", "--db", "new.db"], ["PATH", EMPTY]),
]

ROWS = [*FOREIGN_FILES, *NESTED, *FLAGS, *HOST_PATHS, *CHART_TEXTS, *SEVERAL_LINES]


def test_the_table_is_big_and_its_ids_are_unique() -> None:
    ids = [p.id for p in ROWS]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert len(FLAGS) >= 40 and len(ROWS) >= 100


# ---------------------------------------------------------------- fixtures

SWEEP = """name = "hostile cli"
[defaults]
runtime = 1
size = "8m"
[[setup]]
name = "a"
path = "{target}"
[[setup]]
name = "b"
path = "{target}"
[[workload]]
name = "rr"
rw = "randread"
bs = "4k"
iodepth = [1, 2]
"""


@pytest.fixture(scope="module")
def stored() -> Iterator[Path]:
    """A database holding one real run: set-ups a and b, iodepth 1 and 2."""
    base = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp"))
    where = Path(tempfile.mkdtemp(prefix=f"iolab-hostile-cli-{os.getpid()}-", dir=base))
    (where / "target").mkdir()
    (where / "plan.toml").write_text(SWEEP.format(target=where / "target"))
    done = run_iolab("run", "plan.toml", "--db", "stored.db", cwd=where)
    if done.returncode != 0:
        pytest.fail(f"the run for the stored database failed: {done.stderr[-2000:]}")
    yield where / "stored.db"
    subprocess.run(["rm", "-rf", str(where)], check=False)


# ---------------------------------------------------------------- the table's test


@pytest.mark.slow
@pytest.mark.parametrize("bad", ROWS)
def test_hostile_input_is_one_line_exit_1_and_quotes_nothing(
    bad: Row,
    request: pytest.FixtureRequest,
    workdir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = {"@DIR@": str(workdir)}
    database = request.getfixturevalue("stored") if bad.stored else None
    for name, spec in bad.files:
        target = workdir / fill(name, values)
        if spec == STORED:
            assert database is not None
            target.write_bytes(database.read_bytes())
        else:
            make_file(target, spec, values, None)
    args = [fill(arg, values) for arg in bad.args]
    words = [
        tuple(fill(w, values) for w in word) if isinstance(word, tuple) else fill(word, values)
        for word in bad.words
    ]
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    before = listing(workdir)
    case_dirs_before = set(map(str, Path("/tmp").glob("iolab-case-*")))
    if bad.spawn:
        outcome = spawn(args, workdir, tmp, limit_s=60)
    else:
        monkeypatch.chdir(workdir)
        monkeypatch.setenv("TMPDIR", str(tmp))
        monkeypatch.setattr(tempfile, "tempdir", str(tmp))
        outcome = invoke(args, limit_s=60)
    problems = problems_with_output(outcome, words)
    printed = outcome.stdout + outcome.stderr
    problems += [f"it quotes {text!r}: {printed[:300]!r}" for text in bad.absent if text in printed]
    problems += leftovers(workdir, before, tmp, case_dirs_before)
    assert not problems, "\n".join([f"iolab {' '.join(args)[:300]}", *problems])
