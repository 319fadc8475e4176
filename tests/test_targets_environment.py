"""Host and target facts, checked against what the system itself reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import fake_smartctl
from conftest import json_at
from iolab.model import Layout, codec
from iolab.model.facts import SetupFacts, TargetFacts
from iolab.model.host import HOST_KEYS, KEYS, HostKeyError, checked, unit_of
from iolab.targets import devices as dv
from iolab.targets import drive_health, environment, provision, stack
from loopdevs import LoopDevs, loops_fixture, sh

__all__ = ["loops_fixture"]

MIB = 1024**2


def test_host_keeps_its_keys_and_adds_topology() -> None:
    host = environment.host("fio-3.33")
    json.dumps(host)
    for key in ("hostname", "cpu_model", "cpu_count", "memory_bytes", "kernel", "distro"):
        assert host[key]
    assert host["fio_version"] == "fio-3.33"
    online = environment.parse_cpulist(Path("/sys/devices/system/cpu/online").read_text())
    assert host["threads"] == len(online)
    sockets, cores = host["sockets"], host["cores"]
    assert isinstance(sockets, int) and isinstance(cores, int)
    assert 1 <= sockets <= cores <= len(online)
    assert "governor" in host
    if Path("/sys/devices/system/node/node0").exists():
        numa = host["numa"]
        assert isinstance(numa, list)
        assert host["numa_nodes"] == len(numa) >= 1
        cpus = [json_at(node, "cpus") for node in numa]
        assert (
            sorted(int(str(c)) for listed in cpus if isinstance(listed, list) for c in listed)
            == online
        )


def test_host_topology_agrees_with_lscpu() -> None:
    assert shutil.which("lscpu"), "NOT CHECKED: lscpu (util-linux) is not installed"
    fields = {f["field"]: f["data"] for f in json.loads(sh("lscpu", "-J").stdout)["lscpu"]}
    host = environment.host("")
    sockets = int(fields["Socket(s):"])
    per_socket = int(fields["Core(s) per socket:"])
    per_core = int(fields["Thread(s) per core:"])
    assert host["sockets"] == sockets
    assert host["cores"] == sockets * per_socket
    assert host["threads"] == sockets * per_socket * per_core


def test_parse_cpulist() -> None:
    assert environment.parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert environment.parse_cpulist("") == []


def test_target_of_a_directory_matches_findmnt(workdir: Path) -> None:
    facts = environment.target_facts(workdir)
    stored = environment.target(workdir)
    assert json.loads(json.dumps(stored)) == stored == codec.to_object(facts)
    assert codec.from_json(TargetFacts, stored) == facts
    found = json.loads(sh("findmnt", "-J", "-T", str(workdir)).stdout)["filesystems"][0]
    assert facts.path == str(workdir)
    assert facts.filesystem is not None
    assert facts.filesystem.mountpoint == found["target"]
    assert facts.filesystem.fstype == found["fstype"]
    fs_layer = facts.stack.below[0]
    assert (fs_layer.layer, fs_layer.details["mountpoint"]) == ("filesystem", found["target"])
    if found["source"].startswith("/dev/"):
        name = dv.kernel_name(found["source"])
        assert facts.device is not None
        assert facts.device.name == name
        assert name in facts.devices
        assert facts.disks


@pytest.mark.root
def test_target_on_btrfs_raid_resolves_to_loops_and_their_files(
    loops: LoopDevs, tmp_path: Path
) -> None:
    devs = (loops.make(256), loops.make(256))
    layout = Layout(devices=devs, raid="btrfs", level="raid0", metadata="raid1")
    with provision.build(layout, tmp_path / "mnt", confirmed=set(devs)) as built:
        facts = environment.target_facts(built.path.parent)
        stored = {"target": codec.to_object(facts), "layout": built.facts, "log": []}
    assert codec.to_object(codec.from_json(SetupFacts, json.loads(json.dumps(stored)))) == stored
    names = tuple(Path(d).name for d in devs)
    assert facts.raid is not None
    assert (facts.raid.kind, facts.raid.members) == ("btrfs", names)
    assert json_at(facts.raid.details, "profiles", "data") == "RAID0"
    assert facts.raid == built.layout.raid
    assert json_at(facts.filesystem_params, "profiles", "metadata") == "RAID1"
    fs_layer = facts.stack.below[0]
    loops_below = {str(n.device): n for n in fs_layer.below}
    assert sorted(loops_below) == sorted(names)
    for dev in devs:
        node = loops_below[Path(dev).name]
        assert node.layer == "loop"
        assert node.details["backing_file"] == str(loops.image(dev))
        assert (node.below[0].layer, node.below[0].path) == ("file", str(loops.image(dev)))
        device = facts.devices[Path(dev).name]
        assert device.size_bytes == 256 * MIB
        assert device.kind == "loop"
        assert device.logical_block_size == int(
            Path(f"/sys/block/{Path(dev).name}/queue/logical_block_size").read_text()
        )


@pytest.mark.root
def test_target_on_xfs_and_ext4_records_mkfs_parameters(loops: LoopDevs, tmp_path: Path) -> None:
    xfs_dev, ext_dev = loops.make(320), loops.make(128)
    xfs = Layout(
        devices=(xfs_dev,),
        filesystem="xfs",
        mkfs_options="-b size=4096 -i size=512 -l size=64m",
        mount_options="noatime,logbufs=8",
    )
    ext4 = Layout(devices=(ext_dev,), filesystem="ext4", mkfs_options="-q -I 512")
    with provision.build(xfs, tmp_path / "x", confirmed={xfs_dev}):
        x = environment.target(tmp_path / "x")
    with provision.build(ext4, tmp_path / "e", confirmed={ext_dev}):
        e = environment.target(tmp_path / "e")
    assert json_at(x, "filesystem", "fstype") == "xfs"
    assert "logbufs=8" in str(json_at(x, "filesystem", "options")).split(",")
    assert codec.to_object(codec.from_json(TargetFacts, x)) == x
    params = x["filesystem_params"]
    assert (
        json_at(params, "block_size"),
        json_at(params, "inode_size"),
        json_at(params, "log_bytes"),
    ) == (
        4096,
        512,
        64 * MIB,
    )
    assert x["raid"] is None
    assert json_at(e, "filesystem_params", "tool") == "tune2fs"
    assert json_at(e, "filesystem_params", "inode_size") == 512


@pytest.mark.root
def test_partition_start_alignment_is_reported(loops: LoopDevs) -> None:
    dev = loops.make(64, partitions=[(2048, 8192), (10241, 8192)])
    aligned, skewed = dv.facts(Path(f"{dev}p1").name), dv.facts(Path(f"{dev}p2").name)
    assert (aligned.start_bytes, aligned.aligned_1mib) == (MIB, True)
    assert (skewed.start_bytes, skewed.aligned_1mib) == (10241 * 512, False)
    assert aligned.disk == Path(dev).name
    whole = dv.facts(Path(dev).name)
    assert whole.partitions == (f"{Path(dev).name}p1", f"{Path(dev).name}p2")
    assert whole.start_bytes is None
    assert stack.stack(aligned.name).below[0].device == Path(dev).name


@pytest.mark.root
def test_optional_tools_are_used_when_present_and_never_required(
    loops: LoopDevs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dev = loops.make(64)
    name = Path(dev).name
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not drive_health.installed()
    assert environment.filesystem_params("xfs", dev, None) == {
        "tool": "xfs_info",
        "error": "xfs_info not installed",
    }
    stub = tmp_path / "smartctl"
    stub.write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/args\nexit 2\n')
    stub.chmod(0o755)
    assert drive_health.answer(name) == (2, "")
    assert (tmp_path / "args").read_text().split() == ["-j", "-a", dev]
    assert environment.smart_facts(2, "") == {"error": "smartctl printed no JSON"}


def test_a_disks_identity_and_account_come_from_one_smartctl_answer() -> None:
    """What smartctl -j -a printed of a real drive gives the environment's identity facts too
    (one smartctl a disk, not one for each)."""
    name = "sat-Samsung_based_SSDs-SAMSUNG_MZ7LH480HAHQ-00005-sda.json"
    text = (fake_smartctl.reference() / name).read_text()
    assert environment.smart_facts(0, text) == {
        "model": "SAMSUNG MZ7LH480HAHQ-00005",
        "serial": "REDACTED",
        "firmware": "REDACTED",
        "rotation_rate": 0,
        "form_factor": "2.5 inches",
        "interface_speed": "6.0 Gb/s",
        "smart_passed": True,
        "exit_status": 0,
    }
    assert drive_health.parse(text).smart_passed is True


def test_the_host_environment_holds_to_each_keys_type_unit_and_check() -> None:
    """This host's environment, as a run records it: every key written once in model.host,
    each value of its type, and every key a host always has is there."""
    env = environment.host("fio-3.33")
    assert set(env) <= set(KEYS)
    assert set(KEYS) - set(env) == {"hosts"}, "only a run on hosts adds its servers"
    assert env == checked(env)
    assert isinstance(env["memory_bytes"], int) and env["memory_bytes"] > 0
    assert env["threads"] == len(
        environment.parse_cpulist(dv.sysfs_text(environment.SYS_CPU / "online"))
    )
    assert unit_of("memory_bytes") == "bytes" and unit_of("max_mhz") == "MHz"
    assert unit_of("hostname") == "" and unit_of("not-a-key") == ""
    assert len({key.name for key in HOST_KEYS}) == len(HOST_KEYS), "each key written once"


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("memory_bytes", "8 GiB", "'memory_bytes': '8 GiB' is not the host's memory"),
        ("cpu_count", -1, "'cpu_count': -1"),
        ("cpu_count", True, "'cpu_count': True"),
        ("sockets", None, None),  # the host did not say: allowed
        ("threads", None, "'threads': None"),
        ("hostname", "a\nb", "'hostname'"),
        ("numa", [{"node": 0, "cpus": ["x"], "memory_bytes": 1}], "'numa'"),
        ("numa", [{"node": 0, "cpus": [0, 1], "memory_bytes": None}], None),
        ("uptime", 5, "'uptime' is not one of model.host's"),
    ],
)
def test_a_host_value_off_its_type_or_range_is_refused_naming_its_key(
    key: str, value: object, said: str | None
) -> None:
    env = {**environment.host("fio-3.33"), key: value}
    if said is None:
        assert checked(env)[key] == value  # type: ignore[arg-type]
        return
    with pytest.raises(HostKeyError, match="host environment key") as refused:
        checked(env)  # type: ignore[arg-type]
    assert said in str(refused.value)
