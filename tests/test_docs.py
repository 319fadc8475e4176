"""The manual tells the truth: README.md and docs/*.md. Its commands exist, its plans parse,
its presets are the presets, its pages are linked and its links resolve, the tour runs, and
docs/cli.md is what the commands' --help prints today."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import click
import pytest
from click.testing import CliRunner

from iolab.cli import main
from iolab.plan.load import parse_plan, preset_names

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
PAGES = {path.name: path.read_text() for path in sorted((ROOT / "docs").glob("*.md"))}
GENERATED = "cli.md"
# The manual as prose: the README and every page but the generated reference.
MANUAL = "\n".join([README, *(text for name, text in PAGES.items() if name != GENERATED)])
FENCE = re.compile(r"^```.*?^```[ \t]*$", flags=re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def toml_blocks(text: str = MANUAL) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)


def block_with(marker: str) -> str:
    found = [block for block in toml_blocks() if marker in block]
    assert len(found) == 1, f"{len(found)} toml blocks hold {marker!r}"
    return found[0]


def cli_reference() -> ModuleType:
    """scripts/cli-reference, imported as a module (it has no .py suffix)."""
    path = ROOT / "scripts" / "cli-reference"
    loader = importlib.machinery.SourceFileLoader("cli_reference", str(path))
    spec = importlib.util.spec_from_loader("cli_reference", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


# ---------------------------------------------------------------- commands


def test_every_command_is_documented_and_has_help() -> None:
    for name, command in main.commands.items():
        assert f"iolab {name}" in MANUAL, name
        assert command.help, name
        result = CliRunner().invoke(main, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output


def test_every_documented_command_exists() -> None:
    code = "\n".join(FENCE.findall(MANUAL))
    used = set(re.findall(r"^iolab (\w+)", code, flags=re.MULTILINE))
    assert used, "no command lines found in the manual"
    assert used <= set(main.commands), used - set(main.commands)


def test_the_two_commands_are_the_scripts_ci_runs() -> None:
    assert "scripts/setup && .venv/bin/iolab run" in README
    assert "exec scripts/test" in (ROOT / ".ci" / "run").read_text()
    assert "\nscripts/test\n" in README
    assert (ROOT / "scripts" / "setup").stat().st_mode & 0o111


# ---------------------------------------------------------------- plans


def test_the_plan_files_plan_is_valid() -> None:
    the_plan = parse_plan(block_with('name = "ssd vs raid"'), "docs/plans.md")
    assert [s.name for s in the_plan.setups] == ["ssd", "raid0"]
    assert len(the_plan.workloads) == 6 and the_plan.repeat == 3 and the_plan.baseline == "ssd"


def test_the_steady_table_fits_the_plan_files_plan() -> None:
    text = block_with('name = "ssd vs raid"').replace("repeat = 3", "") + block_with("[steady]")
    the_plan = parse_plan(text, "docs/methods.md")
    assert the_plan.rounds is not None
    assert the_plan.rounds.track == "random rw=randwrite iodepth=32"


def test_the_peak_workload_is_valid() -> None:
    text = '[[setup]]\nname = "here"\npath = "."\n' + block_with('method = "curve"')
    the_plan = parse_plan(text, "docs/methods.md")
    assert the_plan.workloads and all(w.name.startswith("random read") for w in the_plan.workloads)
    assert {w.method.kind for w in the_plan.workloads if w.method} == {"curve"}
    assert all(w.method for w in the_plan.workloads)


def test_the_device_setups_are_valid() -> None:
    devices = block_with('name = "xfs on one SSD"')
    built = parse_plan(devices + '[[workload]]\nrw = "read"\n', "docs/setups.md").setups
    assert [s.name for s in built] == [
        "xfs on one SSD",
        "md raid0 x1",
        "md raid0 x2",
        "md raid0 x4",
    ]


def test_the_hosts_plan_is_valid() -> None:
    on_hosts = parse_plan(block_with("hosts = ["), "docs/hosts.md")
    assert on_hosts.hosts is not None and len(on_hosts.hosts.addresses) == 3
    assert [s.name for s in on_hosts.setups] == [
        f"nfs share on {n}" for n in ("1 host", "2 hosts", "3 hosts")
    ]


def test_the_tour_plan_is_valid() -> None:
    tour = parse_plan(block_with('name = "queue depth"'), "README.md")
    assert [s.name for s in tour.setups] == ["here"] and tour.repeat == 3
    assert len(tour.cases()) == 12  # as the tour says


def test_the_preset_table_lists_every_preset() -> None:
    listed = re.findall(r"^\| `([\w-]+)` \|", PAGES["plans.md"], flags=re.MULTILINE)
    assert listed == preset_names() or sorted(listed) == preset_names()


def test_iolab_keys_in_the_docs_are_the_checked_keys() -> None:
    from iolab.plan.checks import CHECKS

    documented = re.search(r"Workload\s+keys\s+iolab\s+checks\s+itself:\s+`([^`]*)`", MANUAL)
    assert documented is not None
    keys = set(documented.group(1).split()) - {"name"}
    assert keys <= set(CHECKS)


def test_refused_options_and_engines_are_the_documented_ones() -> None:
    """The page names the main refusals (the allow-list in iolab.fio.options classifies every
    fio option; tests/test_fio_options.py checks it), each really refused, and the engines."""
    from iolab.fio import options
    from iolab.plan.checks import ENGINES

    safety = PAGES["safety.md"]
    section = safety[safety.index("### What a plan may not do") :]
    section = section[: section.index("\n\n", section.index("fio does I/O"))]
    headline = (
        "filename",
        "directory",
        "exec_prerun",
        "exec_postrun",
        "write_iolog",
        "read_iolog",
        "replay_redirect",
        "merge_blktrace_file",
        "write_bw_log",
        "verify_state_load",
        "ioscheduler",
        "cgroup",
        "uid",
        "gid",
    )
    assert [key for key in headline if f"`{key}`" not in section] == []
    safe = [key for key in headline if (found := options.classify(key)) and found.kind == "safe"]
    assert safe == []
    listed = re.search(r"`ioengine` is\s+one\s+of\s+`([^`]*)`", section)
    assert listed is not None
    assert tuple(listed.group(1).split()) == ENGINES


def test_every_check_code_is_documented() -> None:
    from iolab.analysis.checks import CODES

    methods = PAGES["methods.md"]
    section = methods[methods.index("## Methodology checks") :]
    assert [code for code in CODES if f"- `{code}`:" not in section] == []


@pytest.mark.slow  # a Python process that loads pandas
def test_the_pandas_example_runs(tmp_path: Path) -> None:
    assert importlib.util.find_spec("pandas"), (
        "NOT CHECKED: pandas is missing (scripts/setup --test)"
    )
    page = PAGES["import-export.md"]
    section = page[page.index("## Use the results in pandas") :]
    example = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert example is not None
    shutil.copy(ROOT / "tests" / "golden" / "store.db", tmp_path / "iolab.db")
    done = subprocess.run(
        [sys.executable, "-c", example.group(1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "iops" in done.stdout and "rand numjobs=1" in done.stdout


# ---------------------------------------------------------------- pages and links


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a page's headings (duplicates numbered as GitHub numbers them)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", text), flags=re.MULTILINE):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(text: str) -> list[str]:
    """Relative link targets of a page, outside code blocks and code spans."""
    prose = re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))
    return [t for t in LINK.findall(prose) if not re.match(r"[a-z]+:", t)]


def broken_links(page: Path, text: str) -> list[str]:
    broken = []
    for target in links(text):
        file, _, anchor = target.partition("#")
        where = (page.parent / file).resolve() if file else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(where.read_text()):
            broken.append(f"{target}: no such heading")
    return broken


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_docs_page_is_linked_from_the_readme(name: str) -> None:
    assert f"](docs/{name})" in README or f"](docs/{name}#" in README, name


@pytest.mark.parametrize("name", ["README.md", *(f"docs/{n}" for n in sorted(PAGES))])
def test_every_relative_link_resolves(name: str) -> None:
    page = ROOT / name
    assert not broken_links(page, page.read_text())


@pytest.mark.parametrize(
    ("text", "broken"),
    [
        ("[a](docs/plans.md)", []),
        ("[a](docs/plans.md#presets)", []),
        ("[a](docs/no-such-page.md)", ["docs/no-such-page.md: no such file"]),
        ("[a](docs/plans.md#no-such-heading)", ["docs/plans.md#no-such-heading: no such heading"]),
        ("[a](#the-five-studies)", []),
        ("[a](#nowhere)", ["#nowhere: no such heading"]),
        ("`[a](nowhere.md)` and https://example.org/x.md", []),
        ("[a](https://example.org/nowhere.md)", []),
    ],
)
def test_the_link_check_finds_broken_links(text: str, broken: list[str]) -> None:
    assert broken_links(ROOT / "README.md", text) == broken


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("## The five studies", "the-five-studies"),
        ("## Several hosts (fio's client/server mode)", "several-hosts-fios-clientserver-mode"),
        ("### What a plan may not do", "what-a-plan-may-not-do"),
        ("## iolab run", "iolab-run"),
        ("## Changes: one vocabulary", "changes-one-vocabulary"),
    ],
)
def test_anchors_are_githubs(heading: str, anchor: str) -> None:
    assert anchors(heading) == {anchor}


def test_the_studies_are_defined_before_the_manual_names_them() -> None:
    defined = README.index("## The five studies")
    first = re.search(r"\b[Ss]tud(y|ies) [A-E]\b", README)
    assert first is None or first.start() > defined
    for name, text in PAGES.items():
        if name != GENERATED and re.search(r"\b[Ss]tudy [A-E]\b", text):
            assert "README.md#the-five-studies" in text, name


# ---------------------------------------------------------------- the CLI reference


def test_the_cli_reference_is_up_to_date() -> None:
    module = cli_reference()
    if module.PAGE.read_text() != module.reference():
        pytest.fail(module.STALE, pytrace=False)


def _with_option(command: click.Command, option: click.Option) -> click.Command:
    return click.Command(
        command.name, params=[*command.params, option], help=command.help, callback=None
    )


def _drifted(change: str) -> click.Group:
    """A copy of iolab's command group with one change of the kind that drifts ("none": a
    faithful copy)."""
    commands = dict(main.commands)
    run = commands["run"]
    if change == "new option":
        commands["run"] = _with_option(run, click.Option(["--force"], is_flag=True, help="New."))
    elif change == "option removed":
        params = [p for p in run.params if p.name != "force_new"]
        commands["run"] = click.Command("run", params=params, help=run.help)
    elif change == "help changed":
        commands["run"] = click.Command("run", params=run.params, help="Another text.")
    elif change == "new command":
        commands["history"] = click.Command("history", help="A command not yet documented.")
    elif change == "command removed":
        del commands["rehearse"]
    group = click.Group("iolab", commands=commands, help=main.help)
    group.params = list(main.params)
    group.context_settings = dict(main.context_settings)
    return group


@pytest.mark.parametrize(
    "change", ["new option", "option removed", "help changed", "new command", "command removed"]
)
def test_a_drifted_command_line_fails_the_cli_reference(change: str) -> None:
    module = cli_reference()
    assert module.reference(_drifted("none")) == module.reference()  # the copy is faithful
    assert module.reference(_drifted(change)) != module.PAGE.read_text()


def test_the_cli_reference_does_not_depend_on_the_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = cli_reference()
    wide = module.reference()
    monkeypatch.setenv("COLUMNS", "40")
    assert module.reference() == wide
    monkeypatch.setenv("COLUMNS", "250")
    assert module.reference() == wide


def test_the_cli_reference_script_checks_and_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = cli_reference()
    page = tmp_path / "cli.md"
    page.write_text("stale\n")
    monkeypatch.setattr(module, "PAGE", page)
    assert module.main(["cli-reference", "--check"]) == 1
    assert capsys.readouterr().err == f"cli-reference: {module.STALE}\n"
    assert module.main(["cli-reference"]) == 0
    assert page.read_text() == module.reference()
    assert module.main(["cli-reference", "--check"]) == 0


# ---------------------------------------------------------------- the tour, for real


def tour_commands() -> list[list[str]]:
    """The README tour's iolab command lines, in order."""
    tour = README[README.index("## A ten-minute tour") : README.index("## The manual")]
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", tour, flags=re.DOTALL):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["iolab"]:
                lines.append(words[1:])
    return lines


@pytest.mark.fio
def test_the_tour_runs(workdir: Path) -> None:
    """Every command of the tour, in order, shrunk in time (the overrides come last and win)."""
    from conftest import run_iolab

    (workdir / "qd.toml").write_text(block_with('name = "queue depth"'))
    commands = tour_commands()
    assert [c[0] for c in commands] == [
        "run",
        "runs",
        "report",
        "report",
        "env",
        "run",
        "compare",
        "show",
        "run",
        "report",
    ]
    shrink = ["--size", "16m", "--runtime", "1", "--repeat", "1"]
    for words in commands:
        args = [*words, *shrink] if words[0] == "run" else words
        done = run_iolab(*args, cwd=workdir)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert (workdir / "quick.html").stat().st_size > 0
    assert (workdir / "qd.md").exists() and any((workdir / "qd_files").iterdir())
