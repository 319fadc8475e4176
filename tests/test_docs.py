"""The README tells the truth: its commands exist, its plan parses, its presets are the presets."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from iolab import plan
from iolab.cli import main

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def test_every_command_is_documented_and_has_help() -> None:
    for name, command in main.commands.items():
        assert f"iolab {name}" in README, name
        assert command.help, name
        result = CliRunner().invoke(main, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output


def test_every_documented_command_exists() -> None:
    used = set(re.findall(r"^iolab (\w+)", README, flags=re.MULTILINE))
    assert used <= set(main.commands), used - set(main.commands)


def test_the_readme_hosts_plan_is_valid() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", README, flags=re.DOTALL)
    on_hosts = plan.parse_plan(next(b for b in blocks if "hosts = [" in b), "README.md")
    assert on_hosts.hosts is not None and len(on_hosts.hosts.addresses) == 3
    assert [s.name for s in on_hosts.setups] == [f"nfs share on {n}" for n in
                                                 ("1 host", "2 hosts", "3 hosts")]  # fmt: skip


def test_the_readme_plans_are_valid() -> None:
    blocks = re.findall(r"```toml\n(.*?)```", README, flags=re.DOTALL)
    full = next(b for b in blocks if 'name = "ssd vs raid"' in b)
    the_plan = plan.parse_plan(full, "README.md")
    assert [s.name for s in the_plan.setups] == ["ssd", "raid0"]
    assert len(the_plan.workloads) == 6 and the_plan.repeat == 3 and the_plan.baseline == "ssd"
    devices = next(b for b in blocks if "devices = " in b)
    built = plan.parse_plan(devices + '[[workload]]\nrw = "read"\n', "README.md").setups
    assert [s.name for s in built] == [
        "xfs on one SSD",
        "md raid0 x1",
        "md raid0 x2",
        "md raid0 x4",
    ]


def test_the_preset_table_lists_every_preset() -> None:
    listed = re.findall(r"^\| `([\w-]+)` \|", README, flags=re.MULTILINE)
    assert listed == plan.preset_names() or sorted(listed) == plan.preset_names()


def test_the_two_commands_are_the_scripts_ci_runs() -> None:
    assert "scripts/setup && .venv/bin/iolab run" in README
    assert "exec scripts/test" in (ROOT / ".ci" / "run").read_text()
    assert "\nscripts/test\n" in README
    assert (ROOT / "scripts" / "setup").stat().st_mode & 0o111


def test_iolab_keys_in_readme_are_the_checked_keys() -> None:
    from iolab.plan import CHECKS

    documented = re.search(r"Workload keys iolab checks itself: `([^`]*)`", README)
    assert documented is not None
    keys = set(documented.group(1).split()) - {"name"}
    assert keys <= set(CHECKS)


def test_refused_options_and_engines_are_the_documented_ones() -> None:
    from iolab.plan.checks import ENGINES, REFUSED

    section = README[README.index("**What a plan may not do.**") :]
    section = section[: section.index("\n\n")]
    undocumented = [key for key in REFUSED if f"`{key}`" not in section and key not in section]
    assert not undocumented or set(undocumented) <= {
        "write_lat_log",
        "write_iops_log",
        "write_hist_log",
        "iolog",
        "program",
        "arguments",
        "trigger",
        "cgroup_nodelete",
    }, undocumented
    listed = re.search(r"`ioengine` is one of `([^`]*)`", section)
    assert listed is not None
    assert tuple(listed.group(1).split()) == ENGINES
