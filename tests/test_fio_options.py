"""fio options reach a job file only from an allow-list (iolab.fio.options).

The installed fio is asked for every option it has: those `fio --cmdhelp=all` lists, those it
accepts in a job file without listing them (aliases, deprecated options, its profiles'
options: found by offering fio every word of its own binary, --parse-only), and every engine's
(`fio --enghelp=ENGINE[,OPTION]`). Each must be classified; a newer fio's new option fails
here until it is. Then every option a plan may not set is refused, table-driven, in a plan, its
[defaults] and a job file; the two exploits of issue 19 are reproduced on real fio (and a real
loop device) and refused, also through an export imported and resumed; safe options still run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from conftest import file_sha256, invoke, listing, problems_with_output, run_iolab
from iolab.errors import FioError
from iolab.fio import jobfile
from iolab.fio import options as fio_options
from iolab.plan import jobfile_plan
from iolab.plan.checks import PLAN_KEYS
from iolab.plan.load import parse_plan
from loopdevs import LoopDevs, device_sha256, loops_fixture
from test_bad_input import DEFAULTS, WORKLOAD, at, plan

__all__ = ["loops_fixture"]

NOT_SAFE = sorted(  # "name" is the workload's name in a plan, and the job's in a job file
    key
    for key in fio_options.classified() - set(PLAN_KEYS)
    if (found := fio_options.classify(key)) is not None and found.kind != "safe"
)
# Values that make a refused option do its harm, were it let through; 1 for the others.
HARMFUL: dict[str, str] = {
    "exec_prerun": '"touch @DIR@/pwned"',
    "exec_postrun": '"touch @DIR@/pwned"',
    "include": '"@DIR@/evil.fio"',
    "filename": '"@DIR@/other.file"',
    "directory": '"@DIR@"',
    "filename_format": '"@DIR@/f.$jobnum"',
    "opendir": '"@DIR@"',
    "write_iolog": '"@DIR@/io"',
    "read_iolog": '"@DIR@/io"',
    "replay_redirect": '"@DIR@/other.file"',
    "write_bw_log": '"@DIR@/bw"',
    "write_hist_log": '"@DIR@/hist"',
    "ioscheduler": '"none"',
    "cgroup": '"iolab-test"',
    "uid": "0",
    "gid": "0",
    "program": '"/bin/touch"',
    "arguments": '"@DIR@/pwned"',
    "hostname": '"127.0.0.1"',
    "port": "8765",
    "profile": '"act"',
    "device-names": '"@DIR@/other.file"',
    "dir": '"@DIR@"',
    "verify_state_load": "1",
    "uri": '"nbd://127.0.0.1"',
    "donorname": '"@DIR@/donor"',
}


# ---------------------------------------------------------------- what the installed fio has


def fio(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["fio", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


def listed_options() -> set[str]:
    """The options `fio --cmdhelp=all` prints, one `NAME : help` line each."""
    done = fio("--cmdhelp=all")
    found = set(re.findall(r"^\s*([a-z][\w-]*)\s*:", done.stdout, flags=re.MULTILINE))
    assert len(found) > 150, done.stdout[:500]
    return found


def candidates() -> list[str]:
    """Every word of the fio binary, and each word's tails (the linker stores "mem_align" as
    the end of "iomem_align"): what could be an option name. Not include*: a directive."""
    binary = Path(shutil.which("fio") or "fio").resolve().read_bytes()
    words = {w.decode() for w in re.findall(rb"[a-z][a-z0-9_-]{0,40}", binary)}
    tails = {word[i:] for word in words for i in range(len(word)) if word[i].isalpha()}
    return sorted(t for t in tails if not t.startswith("include"))


def accepted_options(where: Path) -> set[str]:
    """The candidates fio takes as options in a job file: all but those it calls a bad option
    (fio parses every line of a section, reporting each unknown one, before dropping the job)."""
    offered = candidates()
    job = where / "probe.fio"
    job.write_text("[probe]\n" + "".join(f"{name}=1\n" for name in offered))
    done = fio("--parse-only", job.name, cwd=where)
    bad = set(re.findall(r"Bad option <([^=>]*)", done.stdout + done.stderr))
    said = (done.stderr or done.stdout)[-500:]
    assert done.returncode == 1 and len(bad) > len(offered) // 2, said
    assert sorted(p.name for p in where.iterdir()) == ["probe.fio"], "--parse-only made files"
    return set(offered) - bad


def engines() -> list[str]:
    done = fio("--enghelp")
    names = re.findall(r"^\t(\S+)$", done.stdout, flags=re.MULTILINE)
    assert "libaio" in names or "io_uring" in names, done.stdout
    return names


def engine_options(engine: str) -> set[str]:
    """An engine's options (`fio --enghelp=ENGINE`) and their aliases (`--enghelp=ENGINE,NAME`)."""
    shown = fio(f"--enghelp={engine}").stdout
    names = set(re.findall(r"^\s*([a-z][\w-]*)\s*:", shown, flags=re.MULTILINE))
    aliases = set()
    for name in names:
        detail = fio(f"--enghelp={engine},{name}").stdout
        aliases.update(re.findall(r"^\s*alias:\s*(\S+)", detail, flags=re.MULTILINE))
    return names | aliases


@pytest.fixture(scope="module")
def fio_knows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """What the installed fio has: listed, accepted (global table), and each engine's."""
    where = tmp_path_factory.mktemp("probe")
    known = {"listed": listed_options(), "accepted": accepted_options(where)}
    known |= {f"engine {engine}": engine_options(engine) for engine in engines()}
    return known


def unclassified(names: set[str]) -> list[str]:
    return sorted(name for name in names if fio_options.classify(name) is None)


@pytest.mark.fio
def test_every_option_fio_lists_is_classified(fio_knows: dict[str, set[str]]) -> None:
    assert unclassified(fio_knows["listed"]) == []


@pytest.mark.fio
def test_every_option_fio_accepts_is_classified(fio_knows: dict[str, set[str]]) -> None:
    """Aliases, options --cmdhelp=all leaves out (iomem_align, bs_is_seq_rand), deprecated
    ones and the tiobench/act profiles' options included."""
    accepted = fio_knows["accepted"]
    assert fio_knows["listed"] <= accepted, "the probe missed options fio lists"
    assert {"readwrite", "mem_align", "timeout", "device-names"} <= accepted
    assert unclassified(accepted) == []


@pytest.mark.fio
def test_every_engine_option_is_classified(fio_knows: dict[str, set[str]]) -> None:
    missing = {
        engine: unclassified(names)
        for engine, names in fio_knows.items()
        if engine.startswith("engine ") and unclassified(names)
    }
    assert missing == {}


@pytest.mark.fio
def test_the_table_names_only_options_fio_has(fio_knows: dict[str, set[str]]) -> None:
    """No typo in the table: each name is one fio accepts, or an engine's; `include` is a
    directive, gpu_dev_id is built only with CUDA."""
    everything = set().union(*fio_knows.values())
    assert sorted(fio_options.classified() - everything) == ["gpu_dev_id", "include"]


def test_the_table_is_one_kind_per_option() -> None:
    safe, own, refused = set(fio_options.SAFE), set(fio_options.OWN), set(fio_options.REFUSED)
    assert not (safe & own or safe & refused or own & refused)
    for alias, name in fio_options.ALIASES.items():
        assert alias not in safe | own | refused and name in safe | own | refused, alias
        assert fio_options.classify(alias) == fio_options.classify(name)
    reasons = [*fio_options.OWN.values(), *fio_options.REFUSED.values()]
    assert all(reason.strip() for reason in reasons)


# ---------------------------------------------------------------- refusals, table-driven


def refused(
    args: list[str], files: dict[str, str], words: Sequence[str | tuple[str, ...]], where: Path
) -> str:
    """`iolab ARGS` in `where` holding `files`: one line naming `words`, exit 1, nothing
    changed or added in `where` (a refusal that failed would run fio there); its line."""
    for name, text in files.items():
        (where / name).write_text(text.replace("@DIR@", str(where)))
    before = listing(where)
    cwd = Path.cwd()
    os.chdir(where)
    try:
        outcome = invoke(args, limit_s=60)
    finally:
        os.chdir(cwd)
    filled = [w.replace("@DIR@", str(where)) if isinstance(w, str) else w for w in words]
    problems = problems_with_output(outcome, filled)
    after = listing(where)
    problems += [f"{name} changed or appeared" for name in after if after[name] != before.get(name)]
    assert not problems, "\n".join([f"iolab {' '.join(args)}", *problems])
    return outcome.stderr


def toml_value(key: str) -> str:
    return HARMFUL.get(key, "1")


def job_value(key: str) -> str:
    return toml_value(key).strip('"')


@pytest.mark.parametrize("key", NOT_SAFE)
def test_each_option_not_allowed_is_refused_in_a_plan(key: str, workdir: Path) -> None:
    text = plan(workload=f"{key} = {toml_value(key)}")
    shown = key if not key.startswith("include") else "include"
    refused(
        ["run", "plan.toml"],
        {"plan.toml": text},
        [at(WORKLOAD), f"{shown} is not allowed"],
        workdir,
    )


@pytest.mark.parametrize("key", [k for k in NOT_SAFE if k not in jobfile_plan.TARGET_KEYS])
def test_each_option_not_allowed_is_refused_in_a_job_file(key: str, workdir: Path) -> None:
    """directory and filename name a job file's target (tests/test_jobfile_targets.py)."""
    text = f"[global]\nruntime=1\n[job]\nrw=read\n{key}={job_value(key)}\nsize=4m\n"
    refused(["run", "job.fio"], {"job.fio": text}, ["job.fio:5:", f"{key} is not allowed"], workdir)


@pytest.mark.parametrize(
    "key", ["include", "exec_prerun", "filename", "directory", "readfua", "timeout-not", "ss_x"]
)
def test_options_not_allowed_are_refused_in_defaults(key: str, workdir: Path) -> None:
    text = plan(defaults=f"{key} = {toml_value(key)}")
    words: list[str | tuple[str, ...]] = [at(DEFAULTS), key]
    refused(["show", "plan.toml"], {"plan.toml": text}, words, workdir)


UNKNOWN = [
    ("colour", ""),
    ("blocksze", "did you mean 'blocksize'?"),
    ("iolog", ""),
    ("trigger", ""),
    ("chunck_size", ""),
    ("http_host", ""),
    ("exec", ""),
    ("ioengines", ""),
    ("rwmixreads", "did you mean 'rwmixread'?"),
    ("xnvme_dev_nsid", ""),
    ("zonemode2", ""),
]


@pytest.mark.parametrize(("key", "hint"), UNKNOWN)
def test_an_option_iolab_does_not_know_is_refused(key: str, hint: str, workdir: Path) -> None:
    words: list[str | tuple[str, ...]] = [at(WORKLOAD), f"unknown key {key!r}", "iolab import"]
    refused(
        ["run", "plan.toml"],
        {"plan.toml": plan(workload=f"{key} = 1")},
        [*words, *([hint] if hint else [])],
        workdir,
    )


@pytest.mark.parametrize(("key", "hint"), UNKNOWN)
def test_a_job_file_option_iolab_does_not_know_is_refused_unquoted(
    key: str, hint: str, workdir: Path
) -> None:
    """A job file may be no job file at all: its words are not quoted (a known hint is)."""
    text = f"[job]\nrw=read\n{key}=1\n"
    words: list[str | tuple[str, ...]] = ["job.fio:3: an unknown key", *([hint] if hint else [])]
    line = refused(["run", "job.fio"], {"job.fio": text}, words, workdir)
    assert f"'{key}'" not in line


VALUES = [
    ("mem", '"mmap:@DIR@/mem"', "names a file"),
    ("mem", '"mmaphuge:@DIR@/huge"', "names a file"),
    ("iomem", '"mmapshared:@DIR@/mem"', "names a file"),
    ("iomem", '"cudamalloc"', "choose one of malloc"),
    ("mem", '"bogus"', "choose one of malloc"),
    ("buffer_pattern", "\"'/etc/passwd'\"", "names a file"),
    ("buffer_pattern", "\"0xdeadbeef'@DIR@/plan.toml'\"", "names a file"),
    ("verify_pattern", "\"'/etc/hostname'\"", "names a file"),
    ("ioengine", '"external:@DIR@/x.so"', "not an ioengine iolab runs"),
    ("ioengine", '"exec"', "not an ioengine iolab runs"),
    ("readwrite", '"randwrote"', "choose one of"),
    ("blocksize", '"4q"', "is not a size"),
    ("timeout", '"soon"', "is not a duration"),
]


@pytest.mark.parametrize(("key", "value", "words"), VALUES)
def test_a_value_naming_a_file_is_refused(key: str, value: str, words: str, workdir: Path) -> None:
    refused(
        ["run", "plan.toml"],
        {"plan.toml": plan(workload=f"{key} = {value}")},
        [at(WORKLOAD), key, words],
        workdir,
    )


TWICE = [
    ("rw", "readwrite"),
    ("bs", "blocksize"),
    ("runtime", "timeout"),
    ("mem", "iomem"),
    ("stonewall", "wait_for_previous"),
    ("io_size", "io_limit"),
    ("offset", "fileoffset"),
]


@pytest.mark.parametrize(("name", "alias"), TWICE)
def test_an_option_and_its_alias_in_one_table_are_refused(
    name: str, alias: str, workdir: Path
) -> None:
    values = {"rw": '"read"', "bs": '"4k"', "runtime": "1", "mem": '"malloc"', "io_size": '"4m"'}
    value = values.get(name, "0")
    body = f"{alias} = {value}" if name in ("rw", "bs") else f"{name} = {value}\n{alias} = {value}"
    words: list[str | tuple[str, ...]] = [f"are the same fio option ({name})"]
    refused(["run", "plan.toml"], {"plan.toml": plan(workload=body)}, words, workdir)


# ---------------------------------------------------------------- aliases read as fio reads them


def test_aliases_become_fios_own_names(tmp_path: Path) -> None:
    """readwrite is rw to fio: iolab's checks (writes? room?) must read it so."""
    text = plan(workload='readwrite = "randwrite"\nblocksize = "8k"\ntimeout = 2\niomem = "shm"')
    text = text.replace('rw = "randread"\n', "").replace('bs = "4k"\n', "")
    point = parse_plan(text.replace("@DIR@", str(tmp_path)), "plan.toml").workloads[0]
    options = point.options
    assert (options["rw"], options["bs"], options["runtime"], options["mem"]) == (
        "randwrite",
        "8k",
        2,
        "shm",
    )
    assert not {"readwrite", "blocksize", "timeout", "iomem"} & set(options)


def test_a_job_files_aliases_follow_fio_the_later_line_wins(tmp_path: Path) -> None:
    text = "[global]\nreadwrite=write\n[a]\nrw=read\n[b]\nblocksize=8k\n"
    first, second = parse_plan(text, "job.fio").workloads
    assert first.options["rw"] == "read" and "readwrite" not in first.options
    assert (second.options["rw"], second.options["bs"]) == ("write", "8k")


@pytest.mark.fio
def test_an_alias_cannot_write_to_your_file_unasked(workdir: Path) -> None:
    """readwrite = "randwrite" writes as rw does: your file still needs --yes-destroy."""
    mine = workdir / "mine.dat"
    mine.write_bytes(os.urandom(8 << 20))
    digest = file_sha256(mine)
    text = plan(target=f'path = "{mine}"', workload='readwrite = "randwrite"')
    text = text.replace('rw = "randread"\n', "")
    refused(["run", "plan.toml"], {"plan.toml": text}, ["--yes-destroy", str(mine)], workdir)
    assert file_sha256(mine) == digest


# ---------------------------------------------------------------- the finding's exploits, for real

EVIL_COMMAND = "exec_prerun=touch {marker}\n"


@pytest.mark.fio
def test_fio_itself_runs_a_command_from_an_included_file(workdir: Path) -> None:
    """The hazard is real: fio runs exec_prerun from a file a job includes (the control for
    the refusals below, which use the same included file)."""
    marker = workdir / "control-pwned"
    (workdir / "evil.fio").write_text(EVIL_COMMAND.format(marker=marker))
    job = f"[j]\nfilename={workdir / 'data'}\nsize=1m\nrw=read\ninclude {workdir / 'evil.fio'}\n"
    (workdir / "job.fio").write_text(job)
    done = fio("job.fio", cwd=workdir)
    assert done.returncode == 0 and marker.exists(), done.stderr


@pytest.mark.parametrize(
    ("args", "files", "words"),
    [
        (
            ["run", "plan.toml"],
            {"plan.toml": plan(workload='include = "@DIR@/evil.fio"')},
            [at(WORKLOAD), "include is not allowed"],
        ),
        (
            ["run", "plan.toml", "--allow-hooks"],
            {"plan.toml": plan(workload='include = "@DIR@/evil.fio"')},
            [at(WORKLOAD), "include is not allowed"],
        ),
        (
            ["run", "job.fio"],
            {"job.fio": "[a]\nruntime=1\nsize=4m\ninclude=@DIR@/evil.fio\n"},
            ["job.fio:4", "include is not allowed"],
        ),
        (
            ["run", "job.fio"],
            {"job.fio": "[a]\nruntime=1\nsize=4m\ninclude @DIR@/evil.fio\n"},
            ["job.fio:4", "include names another file"],
        ),
        (
            ["run", "job.fio"],
            {"job.fio": "[a]\nruntime=1\nsize=4m\ninclude_x=@DIR@/evil.fio\n"},
            ["job.fio:4", "include is not allowed"],
        ),
        (
            ["run", "plan.toml"],
            {
                "plan.toml": plan(workload='jobfile = "job.fio"')
                .replace('rw = "randread"\n', "")
                .replace('bs = "4k"\n', "")
                .replace('name = "rr"\n', ""),
                "job.fio": "[a]\nruntime=1\ninclude=@DIR@/evil.fio\n",
            },
            ["job.fio:3", "include is not allowed"],
        ),
    ],
    ids=["plan", "plan-allow-hooks", "job-file", "job-file-bare", "job-file-prefix", "jobfile-key"],
)
def test_an_include_with_a_command_is_refused(
    args: list[str], files: dict[str, str], words: list[str | tuple[str, ...]], workdir: Path
) -> None:
    marker = workdir / "pwned"
    (workdir / "evil.fio").write_text(EVIL_COMMAND.format(marker=marker))
    refused(args, files, words, workdir)
    assert not marker.exists()


@pytest.mark.fio
@pytest.mark.root
def test_fio_itself_writes_the_device_an_included_file_names(
    workdir: Path, loops: LoopDevs
) -> None:
    """The hazard is real: a filename= from an included file is added to iolab's, and fio
    writes the device it names (the control for the refusals below)."""
    device = loops.make(32)
    digest = device_sha256(device)
    (workdir / "evil.fio").write_text(f"filename={device}\n")
    job = f"[j]\nfilename={workdir / 'data'}\nsize=1m\nrw=randwrite\ninclude evil.fio\n"
    (workdir / "job.fio").write_text(job)
    done = fio("job.fio", cwd=workdir)
    assert done.returncode == 0, done.stderr
    assert device_sha256(device) != digest


@pytest.mark.root
@pytest.mark.parametrize("via", ["plan", "plan-defaults", "job-file", "job-file-filename"])
def test_an_include_naming_a_device_writes_nothing_to_it(
    via: str, workdir: Path, loops: LoopDevs
) -> None:
    """include with filename=/dev/loopN and rw = "randwrite": fio would write the device (as
    the control above shows); iolab refuses, and the device is unchanged."""
    device = loops.make(32)
    with open(device, "r+b") as handle:
        handle.write(os.urandom(1 << 20))
    digest = device_sha256(device)
    (workdir / "evil.fio").write_text(f"filename={device}\n")
    evil = f'include = "{workdir / "evil.fio"}"'
    files, words = {
        "plan": (
            {"plan.toml": plan(rw='"randwrite"', workload=evil)},
            [at(WORKLOAD), "include is not allowed"],
        ),
        "plan-defaults": (
            {"plan.toml": plan(rw='"randwrite"', defaults=evil)},
            [at(DEFAULTS), "include is not allowed"],
        ),
        "job-file": (
            {"job.fio": f"[a]\nrw=randwrite\nruntime=1\ninclude {workdir}/evil.fio\n"},
            ["job.fio:4", "include names another file"],
        ),
        "job-file-filename": (
            {"job.fio": f"[a]\nrw=randwrite\nruntime=1\nfilename={device}\n"},
            [device, "not confirmed for writing", "--yes-destroy"],
        ),
    }[via]
    name = next(iter(files))
    refused(["run", name], files, words, workdir)
    assert device_sha256(device) == digest


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """A real short run of the template plan, exported as iolab's JSON."""
    base = Path(os.environ.get("IOLAB_TEST_DIR", "/var/tmp"))
    where = base / f"iolab-options-export-{os.getpid()}"
    (where / "target").mkdir(parents=True)
    try:
        (where / "plan.toml").write_text(plan().replace("@DIR@", str(where / "target")))
        run_iolab("run", "plan.toml", "--db", "run.db", cwd=where, check=True)
        run_iolab("export", "--db", "run.db", "-o", "run.json", cwd=where, check=True)
        yield json.loads((where / "run.json").read_text())
    finally:
        shutil.rmtree(where, ignore_errors=True)


@pytest.mark.fio
@pytest.mark.parametrize(
    ("added", "words"),
    [
        ('include = "@DIR@/evil.fio"', "include is not allowed"),
        ('exec_prerun = "touch @DIR@/pwned"', "exec_prerun is not allowed"),
        ('filename = "@DIR@/other.file"', "filename is not allowed"),
        ('hostname = "127.0.0.1"', "hostname is not allowed"),
        ("colour = 1", "unknown key 'colour'"),
    ],
)
def test_a_resumed_import_is_checked_like_a_plan(
    added: str, words: str, exported: dict[str, object], workdir: Path
) -> None:
    """An export whose stored plan text was changed, imported, then resumed: the plan is read
    again with the same allow-list, and nothing runs."""
    marker = workdir / "pwned"
    (workdir / "evil.fio").write_text(EVIL_COMMAND.format(marker=marker))
    document = json.loads(json.dumps(exported))
    run = document["run"]
    assert isinstance(run, dict)
    run["plan_text"] = run["plan_text"].replace(
        "[[workload]]\n", f"[[workload]]\n{added.replace('@DIR@', str(workdir))}\n"
    )
    (workdir / "evil.json").write_text(json.dumps(document))
    done = run_iolab("import", "evil.json", "--db", "evil.db", cwd=workdir)
    assert done.returncode == 0, done.stderr
    (workdir / "evil.json").unlink()
    refused(["run", "--resume", "1", "--db", "evil.db"], {}, [words], workdir)
    assert not marker.exists()


# ---------------------------------------------------------------- what still runs


SAFE_RUN = """
randseed = 42
norandommap = 1
rwmixread = 70
percentile_list = "50:99:99.9"
buffer_pattern = "0xdeadbeef"
iomem = "malloc"
thinktime = 10
rate_iops = 2000
blockalign = "4k"
timeout = 1
userspace_reap = 1
ioengine = "libaio"
"""


@pytest.mark.fio
def test_safe_options_still_run(workdir: Path) -> None:
    text = plan(rw='"randrw"', workload=SAFE_RUN).replace("@DIR@", str(workdir))
    (workdir / "plan.toml").write_text(text)
    done = run_iolab("run", "plan.toml", cwd=workdir)
    assert done.returncode == 0, done.stderr
    shown = run_iolab("show", "--fio", "plan.toml", cwd=workdir).stdout
    lines = [line for line in shown.splitlines() if "=" in line and not line.startswith("#")]
    for wanted in (
        "randseed=42",
        "rate_iops=2000",
        "mem=malloc",
        "ba=4k",
        "runtime=1",
        "buffer_pattern=0xdeadbeef",
        "userspace_reap=1",
    ):
        assert wanted in lines, wanted
    keys = [line.split("=", 1)[0] for line in lines]
    own = [i for i, key in enumerate(keys) if key in fio_options.IOLAB_SETS]
    assert keys[own[0]] == "filename" and own == list(range(own[0], len(keys))), keys


def test_iolabs_own_options_come_last_and_others_never_reach_a_job_file() -> None:
    """fio takes an option's last value: the file and the logs are written after the rest."""
    options = {"filename": "/var/tmp/x", "rw": "read", "write_bw_log": "samples", "bs": "4k"}
    text = jobfile.render([jobfile.Job("a", options)])
    assert text.splitlines()[1:] == [
        "rw=read",
        "bs=4k",
        "filename=/var/tmp/x",
        "write_bw_log=samples",
    ]
    for key, value in (
        ("include", "/etc/x"),
        ("directory", "/"),
        ("exec_prerun", "true"),
        ("opendir", "/"),
        ("colour", "1"),
        ("mem", "mmap:/etc/x"),
    ):
        with pytest.raises(FioError, match="cannot go into a job file"):
            jobfile.render([jobfile.Job("a", {"rw": "read", key: value})])
