"""Bad input, table-driven: every row is one invocation that iolab must refuse.

Each row asserts, for one command line: exit code 1; exactly one line on stderr, starting
"iolab: error: " and holding the row's words; no traceback; nothing created, changed or left
behind in the scratch directory (names, sizes and contents), in the temporary directory, in
/tmp/iolab-case-* or as /dev/null-journal; and no byte changed on any loop device the row
names. Most rows run in-process (click's CliRunner); a few through the real entry point in a
subprocess, also the ones that could block or eat memory if they were not refused.

Placeholders in rows: @DIR@ is the scratch directory (also the plan's set-up path); @LOOP@,
@LOOP2@ are clean 64 MiB loop devices, @VICTIM@ a clean one that a broken refusal would
write to (zeroed again afterwards), @MOUNTED@ carries ext4 mounted read-only, @SIGNED@
carries ext4 unmounted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import IOLAB, iolab_here, needs_root, require_root, run_iolab
from iolab.cli import main
from iolab.store import Store
from loopdevs import MIB, LoopDevs, device_sha256, sh

# ---------------------------------------------------------------- the plan template

# Line numbers of the template below; a slot is one line, empty unless a row fills it.
NAME_LINE = 1
TOP = 2  # slot: top-level keys
RUNTIME = 5
SIZE = 6
DEFAULTS = 7  # slot: [defaults] keys
SETUP_HEADER = 9
SETUP_NAME = 10
TARGET = 11  # path = "@DIR@", or devices = [...]
SETUP = 12  # slot: [[setup]] keys
NAME = 15
RW = 16
BS = 17
WORKLOAD = 18  # slot: [[workload]] keys
REPORT = 21  # slot: [report] keys
TAIL = 22  # more tables


def plan(
    *,
    top: str = "",
    defaults: str = "",
    setup: str = "",
    workload: str = "",
    report: str = "",
    tail: str = "",
    target: str = 'path = "@DIR@"',
    plan_name: str = '"bad input"',
    runtime: str = "1",
    size: str = '"8m"',
    setup_name: str = '"here"',
    name: str = '"rr"',
    rw: str = '"randread"',
    bs: str = '"4k"',
) -> str:
    """The template: one path set-up on the scratch directory, one 4k randread workload."""
    lines = [
        f"name = {plan_name}",
        top,
        "",
        "[defaults]",
        f"runtime = {runtime}",
        f"size = {size}",
        defaults,
        "",
        "[[setup]]",
        f"name = {setup_name}",
        target,
        setup,
        "",
        "[[workload]]",
        f"name = {name}",
        f"rw = {rw}",
        f"bs = {bs}",
        workload,
        "",
        "[report]",
        report,
        tail,
    ]
    return "\n".join(lines) + "\n"


def devices_plan(
    devices: Sequence[str] = ("@LOOP@",), setup: str = 'filesystem = "ext4"', **kw: str
) -> str:
    """The template with a set-up built on devices instead of the scratch directory."""
    listed = ", ".join(f'"{d}"' for d in devices)
    return plan(target=f"devices = [{listed}]", setup=setup, **kw)


def at(line: int) -> str:
    return f"plan.toml:{line}"


# ---------------------------------------------------------------- rows


@dataclass(frozen=True)
class Spec:
    """A file a row needs that is not plain text: a FIFO, a directory, a database..."""

    kind: str
    arg: str | int = ""


FIFO = Spec("fifo")
DIR = Spec("dir")
STORED = Spec("stored")  # the module's database holding runs 1 and 2
EMPTY_DB = Spec("empty-db")  # a valid iolab database without runs
NEWER_DB = Spec("newer-db")  # PRAGMA user_version = 99


def random_file(size: int) -> Spec:
    return Spec("random", size)


def symlink(to: str) -> Spec:
    return Spec("symlink", to)


FileSpec = str | bytes | Spec
Word = str | tuple[str, ...]  # a tuple: any one of these
LOOP_TOKENS = ("@LOOP@", "@LOOP2@", "@VICTIM@", "@MOUNTED@", "@SIGNED@")
ZEROED = ("@LOOP@", "@LOOP2@", "@VICTIM@")  # made from zeros; restored to zeros if written


@dataclass(frozen=True)
class Bad:
    args: tuple[str, ...]
    words: tuple[Word, ...]
    files: tuple[tuple[str, FileSpec], ...]
    spawn: bool  # through the real entry point, in a subprocess
    max_s: float | None  # must be refused within this many seconds
    env: tuple[tuple[str, str], ...] = ()  # environment variables the row sets

    def text(self) -> str:
        """Everything the row names, to see which loop devices it involves."""
        parts = [
            *self.args,
            *(w for word in self.words for w in (word if isinstance(word, tuple) else (word,))),
        ]
        for name, spec in self.files:
            shown = spec.decode("latin-1") if isinstance(spec, bytes) else spec
            parts += [name, str(shown.arg) if isinstance(shown, Spec) else shown]
        return " ".join(parts)

    def loops(self) -> list[str]:
        text = self.text()
        return [token for token in LOOP_TOKENS if token in text]


def case(
    case_id: str,
    args: str | Sequence[str],
    words: Sequence[Word] = (),
    files: Mapping[str, FileSpec] | None = None,
    *,
    spawn: bool = False,
    max_s: float | None = None,
    env: Mapping[str, str] | None = None,
) -> Any:
    bad = Bad(
        args=tuple(args.split()) if isinstance(args, str) else tuple(args),
        words=tuple(words),
        files=tuple((files or {}).items()),
        spawn=spawn,
        max_s=max_s,
        env=tuple((env or {}).items()),
    )
    marks = [pytest.mark.root] if bad.loops() else []  # devs requires root
    if case_id in REACHES_FIO:
        marks.append(pytest.mark.fio)
    return pytest.param(bad, id=case_id, marks=marks)


# Rows whose input is refused only once fio has read it (the fast lane leaves them out).
REACHES_FIO = {
    "compare-export-onto-file",
    "compare-format-bogus",
    "compare-no-runs",
    "compare-no-such-run",
    "compare-one-run",
    "compare-output-is-directory",
    "compare-output-is-fifo",
    "compare-output-missing-dir-csv",
    "compare-output-missing-dir-html",
    "compare-output-missing-dir-md",
    "compare-output-missing-dir-table",
    "ctl-newline-description",
    "db-newer-run",
    "db-not-sqlite-run",
    "device-character",
    "device-missing",
    "filesize-high-low",
    "filesize-high-low-colon",
    "filesize-high-low-spaces",
    "filesize-percent",
    "limit-cpus_allowed",
    "limit-cpus_allowed-range",
    "offset-align-zero",
    "report-abc",
    "report-baseline-nosuch",
    "report-charts-pie",
    "report-export-onto-file",
    "report-format-bogus",
    "report-image-format-gif",
    "report-lines-bogus",
    "report-metric-bogus",
    "report-no-such-run",
    "report-output-is-directory",
    "report-output-is-fifo",
    "report-output-missing-dir-csv",
    "report-output-missing-dir-html",
    "report-output-missing-dir-md",
    "report-output-missing-dir-table",
    "report-y-bogus",
    "resume-no-such-run",
    "setup-file-randrw-unconfirmed",
    "setup-file-randwrite-unconfirmed",
    "setup-file-trimwrite-unconfirmed",
    "setup-file-write-sweep-unconfirmed",
    "setup-file-write-unconfirmed",
    "setup-path-dev-null",
    "setup-path-fifo",
    "setup-path-missing",
    "size-beyond-free-space",
    "size-beyond-free-space-flag",
    "size-beyond-free-space-target",
    "target-character-device",
    "target-fifo",
    "target-file-grown",
    "target-file-grown-preset",
    "target-file-write-preset",
    "target-nonexistent",
    "unknown-key-defaults",
    "unknown-key-workload",
}


def bad_plan(
    case_id: str,
    words: Sequence[Word],
    text: str,
    *,
    command: str = "run",
    extra: str = "",
    spawn: bool = False,
) -> Any:
    """A row running COMMAND on plan.toml holding TEXT."""
    return case(case_id, f"{command} plan.toml {extra}", words, {"plan.toml": text}, spawn=spawn)


# ---------------------------------------------------------------- the table

PLAN_FILES = [
    case("plan-dev-zero", "run /dev/zero", ["/dev/zero"], spawn=True),
    case("plan-fifo", "run plan.fifo", ["plan.fifo"], {"plan.fifo": FIFO}, spawn=True),
    case("plan-directory", "run plandir", ["plandir"], {"plandir": DIR}),
    case("plan-dev-null", "run /dev/null", ["/dev/null"]),
    case(
        "plan-over-1mib",
        "run big.toml",
        ["big.toml"],
        {"big.toml": plan() + "# padding\n" * (MIB // 10 + 1)},
    ),
    case(
        "plan-not-utf8",
        "run plan.toml",
        ["plan.toml"],
        {"plan.toml": plan().encode() + b"# \xff\xfe\xfa\n"},
    ),
    case("plan-invalid-toml", "run plan.toml", ["plan.toml"], {"plan.toml": "name = \n"}),
    case("plan-missing", "run missing.toml", ["missing.toml"]),
    case("plan-empty", "run plan.toml", ["plan.toml"], {"plan.toml": ""}),
    case(
        "plan-no-workload",
        "run plan.toml",
        ["plan.toml", "workload"],
        {"plan.toml": '[[setup]]\npath = "@DIR@"\n'},
    ),
    case(
        "plan-no-setup",
        "run plan.toml",
        ["plan.toml", "setup"],
        {"plan.toml": '[[workload]]\nrw = "randread"\n'},
    ),
    case(
        "plan-workload-not-table",
        "run plan.toml",
        ["plan.toml", "workload"],
        {"plan.toml": '[[setup]]\npath = "@DIR@"\nworkload = 1\n'},
    ),
    case(
        "plan-symlink-to-dev-zero",
        "run link.toml",
        [("link.toml", "/dev/zero")],
        {"link.toml": symlink("/dev/zero")},
        spawn=True,
    ),
    case("show-plan-missing", "show missing.toml", ["missing.toml"]),
    case("show-plan-directory", "show plandir", ["plandir"], {"plandir": DIR}),
]

CONTROLS = [
    ("\\n", "newline"),
    ("\\r", "cr"),
    ("\\t", "tab"),
    ("\\u0000", "nul"),
    ("\\u001b", "esc"),
]
INJECTION = "x{c}[x]{c}filename=@VICTIM@{c}rw=write"

CONTROL_CHARACTERS = [
    row
    for c, label in CONTROLS
    for row in (
        bad_plan(f"ctl-{label}-workload-name", [at(NAME), "name"], plan(name=f'"rr{c}[x]"')),
        bad_plan(
            f"ctl-{label}-setup-name", [at(SETUP_NAME), "name"], plan(setup_name=f'"here{c}x"')
        ),
        bad_plan(
            f"ctl-{label}-description",
            [at(WORKLOAD), "description"],
            plan(workload=f'description = "{INJECTION.format(c=c)}"'),
        ),
        bad_plan(f"ctl-{label}-bs", [at(BS), "bs"], plan(bs=f'"4k{c}"')),
    )
] + [
    bad_plan(
        "ctl-newline-defaults-description",
        [at(DEFAULTS), "description"],
        plan(defaults=f'description = "{INJECTION.format(c=chr(92) + "n")}"'),
    ),
    bad_plan(
        "ctl-newline-ioengine",
        [at(WORKLOAD), "ioengine"],
        plan(workload='ioengine = "libaio\\nexec_prerun=touch @DIR@/pwned"'),
    ),
    bad_plan(
        "ctl-newline-in-a-sweep",
        [at(WORKLOAD), "description"],
        plan(workload='description = ["fine", "x\\n[x]\\nrw=write"]'),
    ),
    bad_plan("ctl-newline-verify", [at(WORKLOAD), "verify"], plan(workload='verify = "md5\\n[x]"')),
    bad_plan("ctl-newline-show", [at(NAME), "name"], plan(name='"rr\\n[x]"'), command="show"),
]

PATH_OPTIONS = [
    ("filename", '"@VICTIM@"'),
    ("filename-in-scratch", '"@DIR@/other.file"'),
    ("directory", '"@DIR@"'),
    ("filename_format", '"@DIR@/f.$jobnum"'),
    ("opendir", '"@DIR@"'),
    ("exec_prerun", '"touch @DIR@/pwned"'),
    ("exec_postrun", '"touch @DIR@/pwned"'),
    ("write_iolog", '"@DIR@/io.log"'),
    ("read_iolog", '"@DIR@/io.log"'),
    ("replay_redirect", '"@VICTIM@"'),
    ("merge_blktrace_file", '"@DIR@/merged.log"'),
    ("write_bw_log", '"@DIR@/bw"'),
    ("write_lat_log", '"@DIR@/lat"'),
    ("write_iops_log", '"@DIR@/iops"'),
    ("write_hist_log", '"@DIR@/hist"'),
    ("ioscheduler", '"bogus-scheduler"'),
    ("cgroup", '"iolab-bad-input"'),
    ("mem", '"mmap:@DIR@/mem"'),
    ("mem-mmaphuge", '"mmaphuge:@DIR@/huge"'),
    ("iomem", '"mmapshared:@DIR@/mem"'),
    ("buffer_pattern", "\"'/etc/passwd'\""),
    ("verify_pattern", "\"'/etc/passwd'\""),
]

PASS_THROUGH = (
    [
        bad_plan(
            f"option-{label}",
            [at(WORKLOAD), label.split("-")[0]],
            plan(workload=f"{label.split('-')[0]} = {value}"),
        )
        for label, value in PATH_OPTIONS
    ]
    + [
        bad_plan(
            "option-filename-write-to-device",
            [at(WORKLOAD), "filename"],
            plan(rw='"write"', workload='filename = "@VICTIM@"'),
        ),
        bad_plan(
            "option-filename-in-defaults",
            [at(DEFAULTS), "filename"],
            plan(defaults='filename = "@VICTIM@"'),
        ),
        bad_plan(
            "option-exec_prerun-in-defaults",
            [at(DEFAULTS), "exec_prerun"],
            plan(defaults='exec_prerun = "touch @DIR@/pwned"'),
        ),
        bad_plan(
            "option-filename-sweep",
            [at(WORKLOAD), "filename"],
            plan(workload='filename = ["@DIR@/a", "@DIR@/b"]'),
        ),
        bad_plan(
            "option-exec_prerun-show",
            [at(WORKLOAD), "exec_prerun"],
            plan(workload='exec_prerun = "touch @DIR@/pwned"'),
            command="show",
        ),
    ]
    + [
        bad_plan(
            f"ioengine-{label}", [at(WORKLOAD), "ioengine"], plan(workload=f'ioengine = "{engine}"')
        )
        for label, engine in (
            ("external", "external:@DIR@/x.so"),
            ("exec", "exec"),
            ("net", "net"),
            ("nosuchengine", "nosuchengine"),
        )
    ]
)

SWEEP_1M = "\n".join(
    [
        "numjobs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]",
        "iodepth = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]",
        "ramp_time = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]",
        f"runtime = {list(range(1, 101))}",
    ]
)
MILLION = ("1000000", "1,000,000", "1 000 000")

LIMITS = [
    bad_plan("limit-numjobs", [at(WORKLOAD), "numjobs"], plan(workload="numjobs = 100000")),
    bad_plan(
        "limit-numjobs-in-defaults", [at(DEFAULTS), "numjobs"], plan(defaults="numjobs = 100000")
    ),
    bad_plan("limit-iodepth", [at(WORKLOAD), "iodepth"], plan(workload="iodepth = 100000")),
    bad_plan(
        "limit-iodepth-sweep", [at(WORKLOAD), "iodepth"], plan(workload="iodepth = [1, 100000]")
    ),
    bad_plan(
        "limit-cpus_allowed", [at(WORKLOAD), "cpus_allowed"], plan(workload='cpus_allowed = "999"')
    ),
    bad_plan(
        "limit-cpus_allowed-range",
        [at(WORKLOAD), "cpus_allowed"],
        plan(workload='cpus_allowed = "0-999"'),
    ),
    bad_plan("limit-workload-name-100k", [at(NAME), "name"], plan(name=f'"{"x" * 100_000}"')),
    bad_plan(
        "limit-setup-name-10k", [at(SETUP_NAME), "name"], plan(setup_name=f'"{"s" * 10_000}"')
    ),
    case(
        "limit-sweep-1m-run",
        "run plan.toml",
        [MILLION, "--max-cases"],
        {
            "plan.toml": plan(
                bs=str([f"{4 * i}k" for i in range(1, 11)]).replace("'", '"'), workload=SWEEP_1M
            )
        },
        max_s=2.0,
    ),
    case(
        "limit-sweep-1m-show",
        "show plan.toml",
        [MILLION, "--max-cases"],
        {
            "plan.toml": plan(
                bs=str([f"{4 * i}k" for i in range(1, 11)]).replace("'", '"'), workload=SWEEP_1M
            )
        },
        max_s=2.0,
    ),
    case(
        "limit-repeat-1m",
        "run plan.toml --repeat 1000000",
        [MILLION, "--max-cases"],
        {"plan.toml": plan()},
        max_s=2.0,
    ),
]

KEYS = [
    bad_plan("key-with-space", ["a b"], plan(workload='"a b" = 1')),
    bad_plan("key-with-equals", ["x=y"], plan(workload='"x=y" = 1')),
    bad_plan("key-with-brackets", ["[x]"], plan(workload='"[x]" = 1')),
    bad_plan("key-with-newline", [], plan(workload='"a\\nb" = 1')),
    bad_plan("key-empty", [], plan(workload='"" = 1')),
    bad_plan("key-with-space-in-defaults", ["a b"], plan(defaults='"a b" = 1')),
]

PLAN_CHECKS = [
    bad_plan("bs-4q", [at(BS), "4q"], plan(bs='"4q"')),
    bad_plan("bs-4q-show", [at(BS), "4q"], plan(bs='"4q"'), command="show"),
    bad_plan("bs-zero", [at(BS), "bs"], plan(bs="0")),
    bad_plan("bs-empty-sweep", [at(BS), "bs"], plan(bs="[]")),
    bad_plan("bs-nested-list", [at(BS), "bs"], plan(bs='[["4k"]]')),
    bad_plan("bs-1000-direct", [at(BS), "bs"], plan(bs='"1000"')),
    bad_plan("rw-randred", [at(RW), "randred"], plan(rw='"randred"')),
    bad_plan("rw-randred-show", [at(RW), "randred"], plan(rw='"randred"'), command="show"),
    bad_plan("rw-empty-sweep", [at(RW), "rw"], plan(rw="[]")),
    bad_plan("rw-number", [at(RW), "rw"], plan(rw="5")),
    bad_plan("unknown-key-workload", [at(WORKLOAD), "colour"], plan(workload="colour = 1")),
    bad_plan("unknown-key-defaults", [at(DEFAULTS), "colour"], plan(defaults="colour = 1")),
    bad_plan("unknown-key-top", [at(TOP), "colour"], plan(top="colour = 1")),
    bad_plan("unknown-key-report", [at(REPORT), "colour"], plan(report="colour = 1")),
    bad_plan("unknown-key-show", [at(TOP), "colour"], plan(top="colour = 1"), command="show"),
    bad_plan(
        "rwmixread-with-randread", [at(WORKLOAD), "rwmixread"], plan(workload="rwmixread = 50")
    ),
    bad_plan(
        "rwmixread-101",
        [at(WORKLOAD), "rwmixread"],
        plan(rw='"randrw"', workload="rwmixread = 101"),
    ),
    bad_plan(
        "bs-bigger-than-size",
        [(at(BS), at(WORKLOAD)), "size"],
        plan(bs='"1m"', workload='size = "4k"'),
    ),
    bad_plan(
        "bs-bigger-than-default-size", [(at(SIZE), at(BS)), "size"], plan(bs='"1m"', size='"4k"')
    ),
    bad_plan("size-zero", [at(WORKLOAD), "size"], plan(workload='size = "0"')),
    bad_plan("size-negative", [at(WORKLOAD), "size"], plan(workload="size = -1")),
    bad_plan("runtime-0-time-based", [at(WORKLOAD), "runtime"], plan(workload="runtime = 0")),
    bad_plan("runtime-abc", [at(WORKLOAD), "runtime"], plan(workload='runtime = "abc"')),
    bad_plan("ramp_time-abc", [at(WORKLOAD), "ramp_time"], plan(workload='ramp_time = "abc"')),
    bad_plan(
        "ramp_time-date", [at(WORKLOAD), "ramp_time"], plan(workload="ramp_time = 1979-05-27")
    ),
    bad_plan("repeat-0", [at(TOP), "repeat"], plan(top="repeat = 0")),
    bad_plan("repeat-x", [at(TOP), "repeat"], plan(top='repeat = "x"')),
    bad_plan("repeat-float", [at(TOP), "repeat"], plan(top="repeat = 1.5")),
    bad_plan(
        "iodepth-8-psync",
        [at(WORKLOAD + 1), "iodepth"],
        plan(workload='ioengine = "psync"\niodepth = 8'),
    ),
    bad_plan("iodepth-0", [at(WORKLOAD), "iodepth"], plan(workload="iodepth = 0")),
    bad_plan("iodepth-text", [at(WORKLOAD), "iodepth"], plan(workload='iodepth = "x"')),
    bad_plan("numjobs-negative", [at(WORKLOAD), "numjobs"], plan(workload="numjobs = -1")),
    bad_plan("numjobs-float", [at(WORKLOAD), "numjobs"], plan(workload="numjobs = 1.5")),
    bad_plan("direct-2", [at(WORKLOAD), "direct"], plan(workload="direct = 2")),
    bad_plan("time_based-yes", [at(WORKLOAD), "time_based"], plan(workload='time_based = "yes"')),
    bad_plan(
        "log_avg_msec-negative", [at(WORKLOAD), "log_avg_msec"], plan(workload="log_avg_msec = -1")
    ),
    bad_plan("ioengine-empty", [at(WORKLOAD), "ioengine"], plan(workload='ioengine = ""')),
    bad_plan("option-table-value", [at(WORKLOAD), "verify"], plan(workload="verify = { a = 1 }")),
    bad_plan("metric-bogus", [at(REPORT), "bogus"], plan(report='metric = "bogus"')),
    bad_plan("baseline-no-setup", [at(REPORT), "nosuch"], plan(report='baseline = "nosuch"')),
    bad_plan("plan-name-number", [at(NAME_LINE), "name"], plan(plan_name="5")),
    bad_plan(
        "defaults-not-table",
        ["defaults"],
        'defaults = 1\n[[setup]]\npath = "@DIR@"\n[[workload]]\nrw = "read"\n',
    ),
    bad_plan(
        "duplicate-setup-names",
        [at(TAIL + 1), "here"],
        plan(tail='[[setup]]\nname = "here"\npath = "@DIR@"'),
    ),
    bad_plan(
        "duplicate-workload-names",
        [at(TAIL + 1), "rr"],
        plan(tail='[[workload]]\nname = "rr"\nrw = "read"'),
    ),
    bad_plan("setup-without-path", ["path"], plan(target="")),
    bad_plan("setup-path-empty", [at(TARGET), "path"], plan(target='path = ""')),
    bad_plan(
        "setup-path-and-devices",
        [at(TARGET), "devices"],
        plan(setup='devices = ["/dev/nosuchdisk"]'),
    ),
    bad_plan("setup-unknown-key", [at(SETUP), "colour"], plan(setup='colour = "red"')),
    bad_plan("setup-path-missing", ["missing"], plan(target='path = "@DIR@/missing"')),
    bad_plan("setup-path-dev-null", ["/dev/null"], plan(target='path = "/dev/null"')),
    case(
        "setup-path-fifo",
        "run plan.toml",
        ["t.fifo"],
        {"plan.toml": plan(target='path = "@DIR@/t.fifo"'), "t.fifo": FIFO},
    ),
    case(
        "setup-path-symlink-to-device",
        "run plan.toml",
        [("devlink", "@LOOP@")],
        {"plan.toml": plan(target='path = "@DIR@/devlink"'), "devlink": symlink("@LOOP@")},
    ),
    bad_plan("setup-path-block-device", ["@LOOP@"], plan(target='path = "@LOOP@"')),
]

DEVICE_PLANS = [
    bad_plan(
        "queue-unknown-key",
        [(at(SETUP_HEADER), at(SETUP)), "bogus"],
        devices_plan(setup="queue = { bogus = 1 }"),
    ),
    bad_plan("queue-not-table", [at(SETUP), "queue"], devices_plan(setup='queue = "none"')),
    bad_plan(
        "two-devices-no-raid",
        [(at(SETUP_HEADER), at(TARGET)), "raid"],
        devices_plan(["@LOOP@", "@LOOP2@"]),
    ),
    bad_plan(
        "raid-level-needs-more-devices",
        [at(SETUP + 1), "mdadm"],
        devices_plan(["@LOOP@", "@LOOP2@"], setup='raid = "mdadm"\nlevel = 5'),
    ),
    bad_plan("raid-unknown", [at(SETUP), "zfs"], devices_plan(setup='raid = "zfs"')),
    bad_plan(
        "raid-level-unknown",
        [at(SETUP + 1), "level"],
        devices_plan(["@LOOP@", "@LOOP2@"], setup='raid = "mdadm"\nlevel = 7'),
    ),
    bad_plan("level-without-raid", [at(SETUP), "level"], devices_plan(setup="level = 0")),
    bad_plan("filesystem-unknown", [at(SETUP), "ntfs"], devices_plan(setup='filesystem = "ntfs"')),
    bad_plan(
        "btrfs-raid-with-xfs",
        [at(SETUP + 1), "filesystem"],
        devices_plan(["@LOOP@", "@LOOP2@"], setup='raid = "btrfs"\nfilesystem = "xfs"'),
    ),
    bad_plan("discard-yes", [at(SETUP), "discard"], devices_plan(setup='discard = "yes"')),
    bad_plan("devices-etc-passwd", [at(TARGET), "devices"], devices_plan(["/etc/passwd"])),
    bad_plan("devices-empty", [at(TARGET), "devices"], devices_plan([])),
    bad_plan("devices-twice", [at(TARGET), "devices"], devices_plan(["@LOOP@", "@LOOP@"])),
    bad_plan(
        "device_count-out-of-range",
        [at(SETUP), "device_count"],
        devices_plan(setup="device_count = [1, 2]"),
    ),
    bad_plan(
        "device_count-zero", [at(SETUP), "device_count"], devices_plan(setup="device_count = 0")
    ),
    bad_plan(
        "setup_hook-without-allow-hooks",
        ["--allow-hooks"],
        devices_plan(["@VICTIM@"], setup='setup_hook = "touch @DIR@/hooked"'),
        extra="--yes-destroy @VICTIM@",
    ),
    bad_plan(
        "teardown_hook-without-allow-hooks",
        ["--allow-hooks"],
        devices_plan(["@VICTIM@"], setup='teardown_hook = "touch @DIR@/hooked"'),
        extra="--yes-destroy @VICTIM@",
    ),
    bad_plan(
        "device-size-5g-on-64m",
        ["size"],
        devices_plan(["@VICTIM@"], size='"5g"'),
        extra="--yes-destroy @VICTIM@",
    ),
    bad_plan(
        "raw-device-size-5g-on-64m",
        ["size"],
        devices_plan(["@VICTIM@"], setup="", size='"5g"'),
        extra="--yes-destroy @VICTIM@",
    ),
    bad_plan(
        "device-mounted",
        ["@MOUNTED@", "mounted"],
        devices_plan(["@MOUNTED@"]),
        extra="--yes-destroy @MOUNTED@",
    ),
    bad_plan(
        "device-mounted-wipe-signatures",
        ["@MOUNTED@", "mounted"],
        devices_plan(["@MOUNTED@"]),
        extra="--yes-destroy @MOUNTED@ --wipe-signatures",
    ),
    bad_plan(
        "device-signature",
        ["@SIGNED@", "--wipe-signatures"],
        devices_plan(["@SIGNED@"]),
        extra="--yes-destroy @SIGNED@",
    ),
    bad_plan("device-not-confirmed", ["@LOOP@", "--yes-destroy"], devices_plan()),
    bad_plan(
        "device-one-of-two-not-confirmed",
        ["@LOOP2@", "--yes-destroy"],
        devices_plan(["@LOOP@", "@LOOP2@"], setup='raid = "btrfs"'),
        extra="--yes-destroy @LOOP@",
    ),
    bad_plan(
        "device-other-confirmed",
        ["@LOOP2@", "--yes-destroy"],
        devices_plan(),
        extra="--yes-destroy @LOOP2@",
    ),
    bad_plan(
        "device-missing",
        ["/dev/nosuchdisk"],
        devices_plan(["/dev/nosuchdisk"]),
        extra="--yes-destroy /dev/nosuchdisk",
    ),
    bad_plan(
        "device-character",
        ["/dev/null"],
        devices_plan(["/dev/null"]),
        extra="--yes-destroy /dev/null",
    ),
]

COMMANDS = ("run", "runs", "report", "compare")


def db_args(command: str, db: str) -> str:
    if command == "run":
        return f"run plan.toml --db {db}"
    if command == "compare":
        return f"compare 1 2 --db {db}"
    return f"{command} --db {db}"


def db_rows(command: str) -> list[Any]:
    with_plan: dict[str, FileSpec] = {"plan.toml": plan()} if command == "run" else {}
    rows = [
        case(f"db-block-device-{command}", db_args(command, "@VICTIM@"), ["@VICTIM@"], with_plan),
        case(f"db-dev-null-{command}", db_args(command, "/dev/null"), ["/dev/null"], with_plan),
        case(
            f"db-directory-{command}",
            db_args(command, "dbdir"),
            ["dbdir"],
            {**with_plan, "dbdir": DIR},
        ),
        case(
            f"db-fifo-{command}",
            db_args(command, "db.fifo"),
            ["db.fifo"],
            {**with_plan, "db.fifo": FIFO},
            spawn=True,
        ),  # SQLite would block on it
        case(
            f"db-missing-directory-{command}", db_args(command, "nodir/x.db"), ["nodir"], with_plan
        ),
        case(
            f"db-not-sqlite-{command}",
            db_args(command, "notes.txt"),
            ["notes.txt", "database"],
            {**with_plan, "notes.txt": "my notes, not a database\n"},
        ),
        case(
            f"db-newer-{command}",
            db_args(command, "newer.db"),
            ["newer.db", "newer"],
            {**with_plan, "newer.db": NEWER_DB},
        ),
        case(
            f"db-symlink-to-device-{command}",
            db_args(command, "dblink"),
            [("dblink", "@VICTIM@")],
            {**with_plan, "dblink": symlink("@VICTIM@")},
        ),
    ]
    if command != "run":
        rows.append(
            case(f"db-missing-file-{command}", db_args(command, "missing.db"), ["missing.db"])
        )
    return rows


DATABASES = [row for command in COMMANDS for row in db_rows(command)] + [
    case("db-empty-report", "report --db empty.db", ["empty.db"], {"empty.db": EMPTY_DB}),
    case("db-empty-compare", "compare 1 2 --db empty.db", ["empty.db"], {"empty.db": EMPTY_DB}),
    case("db-missing-value", "runs --db", ["--db"]),
]

STORE = {"stored.db": STORED}
FLAGS = [
    bad_plan("flag-repeat-0", ["--repeat"], plan(), extra="--repeat 0"),
    bad_plan("flag-repeat-x", ["--repeat"], plan(), extra="--repeat x"),
    bad_plan("flag-repeat-negative", ["--repeat"], plan(), extra="--repeat -1"),
    bad_plan("flag-repeat-float", ["--repeat"], plan(), extra="--repeat 1.5"),
    case("flag-bogus", "run --bogus", ["--bogus"]),
    case("flag-bogus-show", "show --bogus", ["--bogus"]),
    case("flag-bogus-env", "env --bogus", ["--bogus"]),
    case("flag-wipe-signatures-with-value", "run --wipe-signatures=yes", ["--wipe-signatures"]),
    case("report-abc", "report abc --db stored.db", ["abc"], STORE),
    case("resume-abc", "run --resume abc", ["--resume"]),
    case(
        "report-format-bogus", "report --format bogus --db stored.db", ["--format", "bogus"], STORE
    ),
    case(
        "compare-format-bogus",
        "compare 1 2 --format bogus --db stored.db",
        ["--format", "bogus"],
        STORE,
    ),
    case("report-image-format-gif", "report --image-format gif --db stored.db", ["gif"], STORE),
    case("report-metric-bogus", "report --metric bogus --db stored.db", ["bogus"], STORE),
    case("report-y-bogus", "report --y bogus --db stored.db", ["bogus"], STORE),
    case("report-lines-bogus", "report --lines bogus --db stored.db", ["bogus"], STORE),
    case("unknown-command", "nosuchcommand", ["nosuchcommand"]),
    case("compare-one-run", "compare 1 --db stored.db", [("two", "2")], STORE),
    case("compare-no-runs", "compare --db stored.db", [], STORE),
    case("presets-extra-argument", "presets extra", ["extra"]),
    bad_plan("two-plan-files", ["other.toml"], plan(), extra="other.toml"),
    bad_plan("size-4q", ["--size", "4q"], plan(), extra="--size 4q"),
    bad_plan("size-0", ["--size"], plan(), extra="--size 0"),
    bad_plan("size-4q-show", ["--size", "4q"], plan(), command="show", extra="--size 4q"),
    bad_plan("runtime-abc-flag", ["--runtime", "abc"], plan(), extra="--runtime abc"),
    bad_plan("runtime-negative-flag", ["--runtime", "-1"], plan(), extra="--runtime -1"),
    bad_plan("runtime-0-flag", ["runtime"], plan(), extra="--runtime 0"),
    case("target-nonexistent", "run --target /nonexistent", ["/nonexistent"]),
    case("target-block-device", "run --target @LOOP@", ["@LOOP@"]),
    case("target-character-device", "run --target /dev/null", ["/dev/null"]),
    case("target-fifo", "run --target t.fifo", ["t.fifo"], {"t.fifo": FIFO}),
    bad_plan(
        "yes-destroy-unused-device",
        ["--yes-destroy", "@LOOP@"],
        plan(),
        extra="--yes-destroy @LOOP@",
    ),
    bad_plan("resume-with-plan", ["--resume"], plan(), extra="--resume 5"),
    case("resume-no-such-run", "run --resume 99 --db stored.db", ["99"], STORE),
    case("resume-missing-db", "run --resume 1 --db missing.db", ["missing.db"]),
    case("preset-nosuch", "run --preset nosuch", ["nosuch"]),
    case("preset-nosuch-show", "show --preset nosuch", ["nosuch"]),
    bad_plan("plan-and-preset", ["--preset"], plan(), extra="--preset quick"),
    case("report-no-such-run", "report 99 --db stored.db", ["99"], STORE),
    case("compare-no-such-run", "compare 1 99 --db stored.db", ["99"], STORE),
    case(
        "report-baseline-nosuch",
        "report --format html -o x.html --baseline nope --db stored.db",
        ["nope"],
        STORE,
    ),
    case(
        "report-charts-pie",
        "report --format html -o x.html --charts pie --db stored.db",
        ["pie"],
        STORE,
    ),
    case("env-nonexistent", "env /nonexistent", ["/nonexistent"]),
]

OUTPUTS = [
    row
    for command in ("report", "compare 1 2")
    for label in (command.split()[0],)
    for row in (
        case(
            f"{label}-output-missing-dir-md",
            f"{command} --db stored.db --format markdown -o missing/x.md",
            ["missing"],
            STORE,
        ),
        case(
            f"{label}-output-missing-dir-csv",
            f"{command} --db stored.db --format csv -o missing/x.csv",
            ["missing"],
            STORE,
        ),
        case(
            f"{label}-output-missing-dir-html",
            f"{command} --db stored.db --format html -o missing/x.html",
            ["missing"],
            STORE,
        ),
        case(
            f"{label}-output-missing-dir-table",
            f"{command} --db stored.db -o missing/x.txt",
            ["missing"],
            STORE,
        ),
        case(
            f"{label}-output-is-directory",
            f"{command} --db stored.db -o outdir",
            ["outdir"],
            {**STORE, "outdir": DIR},
        ),
        case(
            f"{label}-output-is-block-device",
            f"{command} --db stored.db -o @VICTIM@",
            ["@VICTIM@"],
            STORE,
        ),
        case(
            f"{label}-output-is-fifo",
            f"{command} --db stored.db -o out.fifo",
            ["out.fifo"],
            {**STORE, "out.fifo": FIFO},
        ),
        case(
            f"{label}-export-onto-file",
            f"{command} --db stored.db --export taken.csv",
            ["taken.csv"],
            {**STORE, "taken.csv": "mine\n"},
        ),
        case(
            f"{label}-export-onto-block-device",
            f"{command} --db stored.db --export @VICTIM@",
            ["@VICTIM@"],
            STORE,
        ),
    )
]

USER_FILE = {"user.file": random_file(8 * MIB)}
TARGETS = [
    case(
        "target-file-grown",
        "run plan.toml --target @DIR@/user.file --size 64m",
        ["user.file"],
        {"plan.toml": plan(), "user.file": random_file(20 * MIB)},
    ),
    case(
        "target-file-grown-preset",
        "run --preset quick --target user.file --size 64m --runtime 1",
        ["user.file"],
        {"user.file": random_file(20 * MIB)},
    ),
    case(
        "target-file-write-preset",
        "run --preset quick --target user.file --size 8m --runtime 1",
        ["--yes-destroy"],
        USER_FILE,
    ),
    *[
        case(
            f"setup-file-{rw}-unconfirmed",
            "run plan.toml",
            ["--yes-destroy"],
            {"plan.toml": plan(target='path = "@DIR@/user.file"', rw=f'"{rw}"'), **USER_FILE},
        )
        for rw in ("randwrite", "write", "randrw", "trimwrite")
    ],
    case(
        "setup-file-write-sweep-unconfirmed",
        "run plan.toml",
        ["--yes-destroy"],
        {"plan.toml": plan(target='path = "@DIR@/user.file"', rw='["read", "write"]'), **USER_FILE},
    ),
    case(
        "setup-path-with-colons-naming-a-device",
        "run plan.toml",
        ["':'", "list of files"],
        {
            "plan.toml": plan(target='path = "@DIR@/x:@VICTIM@:@DIR@"', rw='"randwrite"'),
            "x:@VICTIM@:@DIR@": DIR,
        },
    ),
    case(
        "target-link-to-colons-naming-a-device",
        "run --target @DIR@/t --runtime 1 --size 8m",
        ["':'"],
        {"x:@VICTIM@:@DIR@": DIR, "t": symlink("@DIR@/x:@VICTIM@:@DIR@")},
    ),
    bad_plan("size-beyond-free-space", ["size"], plan(size='"100t"')),
    bad_plan("size-beyond-free-space-flag", ["size"], plan(), extra="--size 100t"),
    case("size-beyond-free-space-target", "run --target @DIR@ --size 100t --runtime 1", ["size"]),
]

STATE = "IOLAB_STATE_DIR"  # iolab's state folder (issue 40, finding 2)
STATE_REFUSED = "iolab keeps its records only in an empty folder of yours or one it made"
STATE_DIR_ROWS: list[tuple[str, str, str, str, str, dict[str, FileSpec]]] = [
    ("etc", "runs", "/etc", "/etc", "is neither empty nor iolab's", {}),
    ("etc-run", "run --target @DIR@ --runtime 1", "/etc", "/etc", "is neither empty", {}),
    ("relative", "runs", "state", "state", "is not an absolute path", {}),
    ("newline", "runs", "@DIR@/st\nate", "@DIR@/st\\nate", "holds a control character", {}),
    ("escape", "runs", "@DIR@/\x1b[2J", "@DIR@/\\x1b[2J", "holds a control character", {}),
    ("c1-control", "runs", "@DIR@/\x9b2J", "@DIR@/\\x9b2J", "holds a control character", {}),
    ("dot-dot", "runs", "@DIR@/../s", "@DIR@/../s", "is not a clean path", {}),
    ("trailing-slash", "runs", "@DIR@/s/", "@DIR@/s/", "is not a clean path", {}),
    (
        "users-folder",
        "runs",
        "@DIR@/mine",
        "@DIR@/mine",
        "is neither empty nor iolab's",
        {"mine": DIR, "mine/notes.txt": "the user's\n"},
    ),
    (
        "a-file",
        "runs",
        "@DIR@/notes.txt",
        "@DIR@/notes.txt",
        "is not a folder",
        {"notes.txt": "the user's\n"},
    ),
    ("no-parent", "runs", "@DIR@/a/b", "@DIR@/a/b", "is in a folder that does not exist", {}),
    (
        "a-link",
        "runs",
        "@DIR@/link",
        "@DIR@/link",
        "is reached through a symbolic link",
        {"real": DIR, "link": symlink("@DIR@/real")},
    ),
]
STATE_DIRS = [
    case(
        f"state-dir-{row_id}",
        args,
        [f"{STATE}={shown!r} {words}", STATE_REFUSED],
        files,
        env={STATE: value},
    )
    for row_id, args, value, shown, words, files in STATE_DIR_ROWS
]

SPAWNED = [
    bad_plan("spawn-bs-4q", [at(BS), "4q"], plan(bs='"4q"'), spawn=True),
    case("spawn-bogus-flag", "run --bogus", ["--bogus"], spawn=True),
    case("spawn-db-block-device-runs", "runs --db @VICTIM@", ["@VICTIM@"], spawn=True),
]

# fio's ranges and alignments the reach model cannot bound, refused before fio runs, and values
# once taken silently (issue 40, findings 6, 8 and 10)
ROUND_4 = [
    case(
        f"filesize-{label}",
        "run plan.toml",
        ["filesize", value],
        {
            "plan.toml": plan(workload=f'filesize = "{value}"', target='path = "@DIR@/mine.bin"'),
            "mine.bin": random_file(16 * MIB),
        },
    )
    for label, value in (
        ("high-low", "40m-1m"),
        ("high-low-colon", "40m:1m"),
        ("high-low-spaces", "40m - 1m"),
        ("percent", "50%"),
    )
] + [
    # nrfiles x filesize cannot multiply: iolab names the one file fio uses
    bad_plan("nrfiles-times-filesize", ["nrfiles"], plan(workload="nrfiles = 1000")),
    case(
        "nr-files-in-a-job-file",
        "run job.fio",
        ["nr_files"],
        {"job.fio": "[w]\nrw=read\nnr_files=1000\nfilesize=1g\nruntime=1\n"},
    ),
    bad_plan(
        "offset-align-zero",
        ["offset_align", "SIGFPE"],
        plan(workload='offset = "33%"\noffset_align = "0"'),
    ),
]

FIXTURES = Path(__file__).parent / "fixtures"
FIO_JSON = (FIXTURES / "fio" / "randread-json" / "randread-json.json").read_text()
IMPORT_ONE = {"r.json": FIO_JSON}


def _with_bin(latency_ns: int) -> str:
    """fio's json+ with one more latency bin."""
    document = json.loads(
        (FIXTURES / "fio" / "randread-jsonplus" / "randread-jsonplus.json").read_text()
    )
    document["jobs"][0]["read"]["clat_ns"]["bins"][str(latency_ns)] = 1
    return json.dumps(document)


def _published_with(description: str) -> str:
    """A published table whose first row's workload is `description`."""
    lines = (FIXTURES / "import" / "published" / "A_sata_ssd_sw_raid0.csv").read_text().splitlines()
    first = next(n for n, line in enumerate(lines) if line.startswith("4k "))
    lines[first] = description + lines[first][lines[first].index(",") :]
    return "\n".join(lines) + "\n"


def _hosts_plan(hosts: str) -> dict[str, FileSpec]:
    return {"plan.toml": plan(top='hosts = "hosts.txt"'), "hosts.txt": hosts}


BONNIE_CSV = (FIXTURES / "import" / "bonnie" / "bonnie-quiet.csv").read_text()
SILENT = [
    case("check-window-space", ["check", "--window", " "], ["--window"]),
    case("check-window-trailing-space", ["check", "--window", "10 "], ["--window", "spaces"]),
    case(
        "import-cache-past-any",
        "import r.json --cache 99999999999999p",
        ["--cache", "1P"],
        IMPORT_ONE,
    ),
    case("import-rated-iops-at-0", "import r.json --rated-iops 35000@0", ["@"], IMPORT_ONE),
    case(
        "import-factor-control",
        ["import", "r.json", "--factor", "card=P\x01"],
        ["U+0001"],
        IMPORT_ONE,
    ),
    case("import-factor-comma", "import r.json --factor a,b=c", ["--factor", ","], IMPORT_ONE),
    case(
        "import-factor-10kb",
        ["import", "r.json", "--factor", "card=" + "v" * 10_000],
        ["--factor", "10,005 characters", "keep it to 200"],
        IMPORT_ONE,
    ),
    case("import-setup-control", ["import", "r.json", "--setup", "a\x1bb"], ["U+001B"], IMPORT_ONE),
    case(
        "import-published-nul",
        "import t.csv",
        ["t.csv", "U+0000"],
        {"t.csv": _published_with("4k read\x00evil")},
    ),
    case(
        "import-latency-bin-1e18",
        "import r.json",
        ["bins", "10^11 ns"],
        {"r.json": _with_bin(10**18)},
    ),
    case(
        "import-bonnie-size-0",
        "import b.csv",
        ["b.csv", "0 bytes"],
        {"b.csv": BONNIE_CSV.replace(",256M,", ",0,")},
    ),
    case(
        "hosts-zero-address",
        "show plan.toml",
        ["hosts.txt:1", "no one host"],
        _hosts_plan("0.0.0.0\n"),
    ),
    case(
        "hosts-ipv6-scope-id",
        "show plan.toml",
        ["hosts.txt:1", "scope id"],
        _hosts_plan("ip6:fe80::1%eth0\n"),
    ),
    case(
        "hosts-ipv4-and-mapped",
        "show plan.toml",
        ["hosts.txt:2", "twice"],
        _hosts_plan("10.0.0.2\n[::ffff:10.0.0.2]\n"),
    ),
    bad_plan(
        "rwmix-disagree",
        ["rwmixread", "rwmixwrite", "100"],
        plan(rw='"randrw"', workload="rwmixread = 70", defaults="rwmixwrite = 50"),
        command="show",
    ),
]

CASES = [
    *PLAN_FILES,
    *CONTROL_CHARACTERS,
    *PASS_THROUGH,
    *LIMITS,
    *KEYS,
    *PLAN_CHECKS,
    *DEVICE_PLANS,
    *DATABASES,
    *FLAGS,
    *OUTPUTS,
    *TARGETS,
    *STATE_DIRS,
    *SPAWNED,
    *ROUND_4,
    *SILENT,
]


def test_the_table_is_big_and_its_ids_are_unique() -> None:
    ids = [p.id for p in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert len(ids) >= 160


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def module_dir() -> Iterator[Path]:
    base = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp"))
    path = Path(tempfile.mkdtemp(prefix=f"iolab-bad-input-{os.getpid()}-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def devs(module_dir: Path) -> Iterator[dict[str, str]]:
    """The module's loop devices, by placeholder; made once, always torn down."""
    require_root()
    made = LoopDevs("bad-input")
    try:
        names = {token: made.make(64) for token in LOOP_TOKENS}
        sh("mkfs.ext4", "-q", names["@MOUNTED@"])
        sh("mkfs.ext4", "-q", names["@SIGNED@"])
        made.mount(names["@MOUNTED@"], module_dir / "mounted", "-o", "ro")
        yield names
    finally:
        problems = made.cleanup()
    assert not problems, "left behind: " + "; ".join(problems)


@pytest.fixture(scope="module")
def stored_db(module_dir: Path) -> Path:
    """A database holding two real quick runs (1 and 2) of the template plan."""
    where = module_dir / "stored"
    (where / "target").mkdir(parents=True)
    (where / "plan.toml").write_text(plan().replace("@DIR@", str(where / "target")))
    for extra in ((), ("--new",)):
        done = run_iolab("run", "plan.toml", "--db", "stored.db", *extra, cwd=where)
        if done.returncode != 0:
            pytest.fail(f"the quick run for the stored database failed: {done.stderr[-2000:]}")
    return where / "stored.db"


# ---------------------------------------------------------------- helpers


def fill(text: str, values: Mapping[str, str]) -> str:
    for token, value in values.items():
        text = text.replace(token, value)
    return text


def make_file(path: Path, spec: FileSpec, values: Mapping[str, str], stored: Path | None) -> None:
    if isinstance(spec, str):
        path.write_text(fill(spec, values))
    elif isinstance(spec, bytes):
        path.write_bytes(fill(spec.decode("latin-1"), values).encode("latin-1"))
    elif spec.kind == "fifo":
        os.mkfifo(path)
    elif spec.kind == "dir":
        path.mkdir(parents=True)
    elif spec.kind == "random":
        path.write_bytes(os.urandom(int(spec.arg)))
    elif spec.kind == "symlink":
        path.symlink_to(fill(str(spec.arg), values))
    elif spec.kind == "stored":
        assert stored is not None
        shutil.copyfile(stored, path)
    elif spec.kind == "empty-db":
        Store(path).close()
    elif spec.kind == "newer-db":
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY)")
            con.execute("PRAGMA user_version = 99")
        con.close()
    else:
        raise AssertionError(f"unknown file spec {spec}")


def listing(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under root: kind, size, and the hash of a regular file (FIFOs stay shut)."""
    found: dict[str, tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            st = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISREG(st.st_mode):
                found[rel] = ("file", st.st_size, hashlib.sha256(path.read_bytes()).hexdigest())
            elif stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", 0, os.readlink(path))
            else:
                found[rel] = (stat.filemode(st.st_mode)[0], st.st_size, "")
    return found


def case_dirs_about(scratch: Path, before: set[str]) -> list[str]:
    """New /tmp/iolab-case-* directories whose files mention this case's scratch directory."""
    mine = []
    for entry in set(map(str, Path("/tmp").glob("iolab-case-*"))) - before:
        texts = []
        for dirpath, _, filenames in os.walk(entry):
            for name in filenames:
                try:
                    with open(Path(dirpath, name), "rb") as handle:
                        texts.append(handle.read(65536).decode("utf-8", "replace"))
                except OSError:
                    continue
        if any(str(scratch) in text for text in texts):
            mine.append(entry)
    return mine


class Hung(BaseException):
    """Raised by the alarm: an in-process invocation took far too long."""


@dataclass
class Outcome:
    code: int | None
    stdout: str
    stderr: str
    seconds: float
    crash: str = ""  # an exception that escaped iolab, formatted


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hung("still running after the time limit")


def invoke(args: Sequence[str], limit_s: float) -> Outcome:
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    t0 = time.monotonic()
    try:
        result = CliRunner().invoke(main, list(args))
    except Hung:
        return Outcome(None, "", "", time.monotonic() - t0, crash=traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    seconds = time.monotonic() - t0
    crash = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        crash = "".join(traceback.format_exception(result.exception))
    return Outcome(result.exit_code, result.stdout, result.stderr, seconds, crash)


def spawn(args: Sequence[str], cwd: Path, tmp: Path, limit_s: float) -> Outcome:
    """The real entry point, memory-capped, in its own session (killed whole on a time-out)."""
    command = ["prlimit", f"--as={4 << 30}", "--", *IOLAB, *args]
    env = {**os.environ, "TMPDIR": str(tmp)}
    t0 = time.monotonic()
    child = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        text=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
        return Outcome(None, out, err, time.monotonic() - t0, crash="still running; killed")
    return Outcome(child.returncode, out, err, time.monotonic() - t0)


def problems_with_output(outcome: Outcome, words: Sequence[Word]) -> list[str]:
    found = []
    if outcome.crash:
        found.append(f"crashed: {outcome.crash[-1500:]}")
    if outcome.code != 1:
        found.append(f"exit code {outcome.code}, not 1")
    if "Traceback" in outcome.stdout + outcome.stderr:
        found.append("a traceback was printed")
    err = outcome.stderr
    line = err.removesuffix("\n")
    if not line or "\n" in line or not err.endswith("\n"):
        found.append(f"stderr is not exactly one line: {err[:600]!r}")
    if not line.startswith("iolab: error: "):
        found.append(f"stderr does not start with 'iolab: error: ': {line[:300]!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in line):
        found.append(f"stderr holds control characters: {line[:300]!r}")
    for word in words:
        choices = word if isinstance(word, tuple) else (word,)
        if not any(choice in line for choice in choices):
            found.append(f"stderr lacks {' or '.join(map(repr, choices))}: {line[:300]!r}")
    return found


def restore_zeros(dev: str) -> None:
    """Zero a clean loop device again after a broken refusal wrote to it."""
    if sh("findmnt", "--source", dev, check=False).returncode == 0:
        return
    with open(dev, "r+b", buffering=0) as handle:
        left = handle.seek(0, os.SEEK_END)
        handle.seek(0)
        while left > 0:
            left -= handle.write(bytes(min(left, 4 * MIB)))
    sh("blockdev", "--flushbufs", dev)


def leftovers(
    scratch: Path, before: Mapping[str, tuple[str, int, str]], tmp: Path, case_dirs: set[str]
) -> list[str]:
    """What a case changed or left: in the scratch directory, its TMPDIR, /tmp/iolab-case-*."""
    found = []
    after = listing(scratch)
    for name in sorted(before.keys() | after.keys()):
        if before.get(name) != after.get(name):
            found.append(f"{name}: {before.get(name)} became {after.get(name)}")
    left = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*"))
    if left:
        found.append(f"left in the temporary directory: {left[:5]}")
    if stray := case_dirs_about(scratch, case_dirs):
        found.append(f"left behind: {stray}")
    return found


# ---------------------------------------------------------------- the test

JOURNAL = Path("/dev/null-journal")


@pytest.mark.parametrize("bad", CASES)
def test_bad_input_is_one_line_exit_1_and_changes_nothing(
    bad: Bad,
    request: pytest.FixtureRequest,
    workdir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = {"@DIR@": str(workdir)}
    used = bad.loops()
    if used:
        values |= request.getfixturevalue("devs")
    needs_store = any(spec == STORED for _, spec in bad.files)
    stored = request.getfixturevalue("stored_db") if needs_store else None
    for name, spec in bad.files:
        make_file(workdir / fill(name, values), spec, values, stored)
    args = [fill(arg, values) for arg in bad.args]
    words = [
        tuple(fill(w, values) for w in word) if isinstance(word, tuple) else fill(word, values)
        for word in bad.words
    ]
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    for key, value in bad.env:
        monkeypatch.setenv(key, fill(value, values))

    before = listing(workdir)
    sums = {token: device_sha256(values[token]) for token in used}
    journal_before = JOURNAL.exists()
    case_dirs_before = set(map(str, Path("/tmp").glob("iolab-case-*")))
    problems: list[str] = []
    try:
        if bad.spawn:
            outcome = spawn(args, workdir, tmp, limit_s=60)
        else:
            monkeypatch.chdir(workdir)
            monkeypatch.setenv("TMPDIR", str(tmp))
            monkeypatch.setattr(tempfile, "tempdir", str(tmp))
            outcome = invoke(args, limit_s=20 if bad.max_s else 60)
    finally:
        if JOURNAL.exists() and not journal_before:
            problems.append(f"{JOURNAL} was created")
            JOURNAL.unlink()
        for token, digest in sums.items():
            if device_sha256(values[token]) != digest:
                problems.append(f"{token} ({values[token]}) changed")
                if token in ZEROED:
                    restore_zeros(values[token])

    problems += problems_with_output(outcome, words)
    if bad.max_s is not None and outcome.seconds > bad.max_s:
        problems.append(f"took {outcome.seconds:.1f} s, more than {bad.max_s} s")
    problems += leftovers(workdir, before, tmp, case_dirs_before)
    assert not problems, "\n".join([f"iolab {' '.join(args)[:300]}", *problems])


# ---------------------------------------------------------------- what is not bad input


def test_the_templates_are_valid(workdir: Path) -> None:
    """The rows' faults are the only faults: the unchanged template passes."""
    (workdir / "plan.toml").write_text(fill(plan(), {"@DIR@": str(workdir)}))
    done = iolab_here("show", "plan.toml", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert list(workdir.iterdir()) == [workdir / "plan.toml"]


@needs_root()
def test_the_device_template_is_valid(workdir: Path, devs: dict[str, str]) -> None:
    (workdir / "plan.toml").write_text(fill(devices_plan(), {"@DIR@": str(workdir), **devs}))
    before = device_sha256(devs["@LOOP@"])
    done = run_iolab("show", "plan.toml", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert device_sha256(devs["@LOOP@"]) == before


def test_runs_on_an_empty_database_is_not_an_error(workdir: Path) -> None:
    Store(workdir / "empty.db").close()
    before = listing(workdir)
    done = iolab_here("runs", "--db", "empty.db", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert "holds no runs" in done.stdout
    assert listing(workdir) == before


@pytest.mark.fio
@pytest.mark.root
@pytest.mark.parametrize("engine", ["libaio", "psync", "io_uring"])
def test_ordinary_engines_are_not_refused(
    engine: str, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = plan(workload=f'ioengine = "{engine}"')
    (workdir / "plan.toml").write_text(fill(text, {"@DIR@": str(workdir)}))
    monkeypatch.chdir(workdir)
    outcome = invoke(["run", "plan.toml", "--db", "ok.db"], limit_s=120)
    assert not outcome.crash, outcome.crash
    assert "iolab: error:" not in outcome.stderr, outcome.stderr
    assert outcome.code in (0, 3), outcome.stderr  # 3: this kernel may not allow io_uring
