"""A stateful stand-in for the RAID cards' tools, for tests: storcli/perccli, MegaCli,
ssacli and arcconf.

`install(folder)` writes one small launcher per tool name into `folder` (storcli64, storcli,
perccli, perccli64, MegaCli, MegaCli64, ssacli, arcconf); each runs this script with the
name it was called by. The state is a JSON file named by $IOLAB_FAKE_RAID_STATE (see
`default_state`): each VD's policy in iolab's words, the battery ("optimal", "learning",
"failed", "absent"), the values the card refuses or silently ignores, and a log of every
command run ("calls"). Read commands answer with the outputs real cards printed, from
../shared/reference/raid-cli/ (next to the repository), with the policy lines rewritten from
the state, so that a set command shows in what the next read prints; set commands change the
state. A VD configured write-back on a card whose battery is not optimal is shown in effect
write-through, as real cards do.

Read commands and the recorded output each answers with:
  storcli|perccli /cALL show all J [nolog]   storcli/cALL-show-all-J.praid-ep420i.json
  storcli|perccli /call show J [nolog]       storcli/call-show-J-nolog.json
  storcli|perccli /cN/vM show all J [nolog]  storcli/c0-v0-show-all-J-nolog.json (re-keyed)
  (state "no_controller": true)              storcli/perccli-call-show-J-nolog.fail.json
  MegaCli -LDPDInfo -aAll [-NoLog]           megacli/mega-phys-drives-info.txt
  MegaCli -AdpBbuCmd [-GetBbuStatus] -aAll   megacli/mega-bbu-info-recent.txt
  ssacli ctrl all show config detail         ssacli/ssacli-P400ar.txt
  arcconf GETCONFIG 1 LD                     arcconf/getconfig-ld-current.txt

Set commands, and where their syntax comes from (searched: the vendors' reference guides
are not in the corpus this project can search, so the syntax is from public pages that quote
the tools, and from the tools' own help text where a page quotes it):
  storcli /cX/vY set wrcache=wt|wb|awb, set rdcache=ra|nora, set iopolicy=direct|cached,
    set pdcache=on|off|default: community command sheets quoting storcli ("storcli
    /c0/v0 set wrcache=WT|WB|AWB", "set rdcache=RA|NoRA", "set pdcache=On|Off|Default",
    "set iopolicy=direct"); WB/WT/AWB/NORA/DIO/CIO meanings from Broadcom's MegaRAID
    Storage Manager guide. The exact reply of a set command is in no recorded output:
    the fake answers with the recorded documents' "Command Status" shape and a "Detailed
    Status" row of its own making.
  MegaCli -LDSetProp WB|WT|RA|NORA|ADRA|Direct|Cached|CachedBadBBU|NoCachedBadBBU -LX -aY,
    -LDSetProp -EnDskCache|-DisDskCache -LX -aY: pages quoting MegaCli sessions, which also
    quote its replies "Set Write Policy to WriteBack on Adapter 0, VD 0 (target id: 0)
    success" and "Set Write Cache OK if bad BBU on Adapter 0, VD 0 (target id: 0) success"
    then "Exit Code: 0x00"; the fake's replies to the other properties follow that pattern,
    and its refusal text is its own (no recorded output holds one).
  ssacli ctrl slot=N ld M modify arrayaccelerator=enable|disable (also logicaldrive, aa=),
    ctrl slot=N modify cacheratio=R/W, ctrl slot=N modify drivewritecache=enable|disable
    (also dwc=, [forced]), ctrl slot=N modify nobatterywritecache=enable|disable (also
    nbwc=): HPE Smart Array command sheets and ssacli's help text as quoted on a Q&A page.
    No recorded output holds a modify's reply: the fake prints nothing on success, and an
    "Error: ..." line of its own on refusal.
  arcconf SETCACHE 1 LOGICALDRIVE 0 wb|wbb|wt|ron|roff [noprompt]: a vendor's (Huawei's)
    arcconf page, with the modes (wb: write-back even unprotected; wbb: write-back while
    the battery/ZMM protects the cache; wt; ron; roff) and its reply "Controllers found:
    1", "Command completed successfully."; the refusal text is the fake's own.

The words a card prints for a battery that is learning or has failed are in no recorded
output (all recorded batteries are optimal): the fake's are "Learning"/"Failed" (storcli),
"Learn Cycle Active: Yes"/"Battery Replacement required: Yes" (MegaCli), "Recharging" with
"Cache Status: Temporarily Disabled" and "Failed" with "Permanently Disabled" (ssacli), and
"Off" for the write-cache status (arcconf). Like the real tools, storcli and MegaCli write a
log into the working directory unless told `nolog`/`-NoLog`, and arcconf always does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from copy import deepcopy
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

STATE_ENV = "IOLAB_FAKE_RAID_STATE"
HERE = Path(__file__).resolve()
REFERENCE = next(
    (
        p / "shared" / "reference" / "raid-cli"
        for p in HERE.parents
        if (p / "shared" / "reference" / "raid-cli").is_dir()
    ),
    HERE.parents[2] / "shared" / "reference" / "raid-cli",
)


def reference_absent() -> None:
    """A test without the recorded outputs fails, saying where it looked: a parser test that
    skips where its recordings are missing passes without having checked."""
    import pytest  # only the tests call this; the fake itself runs without pytest

    pytest.fail(f"{REFERENCE} is absent: the recorded RAID tool outputs sit beside the checkout")


TOOLS = {
    "storcli64": "storcli",
    "storcli": "storcli",
    "perccli64": "perccli",
    "perccli": "perccli",
    "MegaCli64": "MegaCli",
    "MegaCli": "MegaCli",
    "ssacli": "ssacli",
    "arcconf": "arcconf",
}
LOGS = {"storcli": "storcli.log", "perccli": "perccli.log", "MegaCli": "MegaSAS.log"}
State = dict[str, Any]


def _vd(write: str, read: str, io: str | None, device: str | None = None) -> dict[str, Any]:
    return {
        "write": write,
        "read": read,
        "io": io,
        "drive_cache": "drive default",
        "device": device,
    }


_DEFAULT_VDS: dict[str, dict[str, dict[str, Any]]] = {
    "storcli": {"/c0/v0": _vd("write-back", "read-ahead", "direct", device="/dev/sdb")},
    "MegaCli": {"-L0 -a0": {**_vd("write-back", "read-ahead", "direct"), "bad_bbu": False}},
    "ssacli": {
        "slot=0 ld 1": {"caching": True, "device": "/dev/sda"},
        "slot=0 ld 2": {"caching": True, "device": "/dev/sdb"},
    },
    "arcconf": {"1 LOGICALDRIVE 0": _vd("always-write-back", "read-ahead", None)},
}
_DEFAULT_VDS["perccli"] = _DEFAULT_VDS["storcli"]


class Refused(Exception):
    """A set command the card does not take (state "refuse")."""


# -- for tests ------------------------------------------------------------------------------


def install(folder: Path, tools: Iterable[str] = TOOLS) -> Path:
    """Launchers for `tools` in `folder` (to put first on PATH); `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in tools:
        launcher = folder / name
        launcher.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{__file__}' '{name}' \"$@\"\n")
        launcher.chmod(0o755)
    return folder


def default_state(*families: str) -> State:
    """The state that prints the recorded outputs unchanged, for one tool family or more
    (their VDs' names differ, so several fakes can share one state)."""
    vds: dict[str, dict[str, Any]] = {}
    for family in families:
        vds.update(_DEFAULT_VDS[TOOLS.get(family, family)])
    card = {"cache_ratio": [10, 90], "drive_cache": "on", "no_battery_write_cache": True}
    return {
        "battery": "optimal",
        "no_controller": False,
        "refuse": {},
        "ignore": {},
        "vds": deepcopy(vds),
        "card": card,
        "calls": [],
    }


def read_state(path: Path) -> State:
    state: State = json.loads(path.read_text())
    return state


def write_state(path: Path, state: Mapping[str, Any]) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(state, indent=1))
    partial.replace(path)


# -- the command line -----------------------------------------------------------------------


def tools_on_path(folder: Path, state: Path, monkeypatch: pytest.MonkeyPatch, dev: str) -> None:
    """Every tool's launcher first on PATH, its card as default_state has it, the VDs whose
    tools name their block device naming `dev`."""
    if not REFERENCE.is_dir():
        reference_absent()
    install(folder)
    first = default_state("storcli", "MegaCli", "ssacli", "arcconf")
    for vd in ("/c0/v0", "slot=0 ld 1"):
        first["vds"][vd]["device"] = dev
    write_state(state, first)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    monkeypatch.setenv(STATE_ENV, str(state))


def main(argv: list[str]) -> int:
    name, args = argv[0], argv[1:]
    family = TOOLS[name]
    path = Path(os.environ[STATE_ENV])
    state = read_state(path)
    state["calls"].append([name, *args])
    _leave_log(family, args)
    setting = _is_set(args)
    if state.get("child"):
        _leave_a_child(state)
    broken = state.get("broken_sets" if setting else "broken", state.get("broken"))
    if state.get("hang") or (setting and state.get("stall_sets")):  # before any effect
        write_state(path, state)
        _hang(path)
    if broken is not None:
        write_state(path, state)
        return int(broken)
    hang = setting and state.get("hang_sets")  # as it was before this command changed it
    try:
        code, out = ANSWERS[family](state, args, family)
    except Refused as refused:
        code, out = 1, str(refused)
    if setting and code == 0 and "after_set" in state:
        _after_set(state)
    write_state(path, state)
    if hang:
        _hang(path)
    sys.stdout.write(out if setting else _mutated(state, out))
    return code


# -- misbehaving on purpose (the state's "hang", "hang_sets", "stall_sets", "broken",
# "broken_sets", "child", "mutate", "cut", "pad", "after_set") ------------------------------


def _is_set(args: list[str]) -> bool:
    return any(a.lower() in ("set", "-ldsetprop", "modify", "setcache") for a in args)


def _hang(path: Path) -> None:
    """Never answer: the set (if any) has taken effect; only a kill ends this. Its pid goes
    in the state's "hanging" first."""
    state = read_state(path)
    state.setdefault("hanging", []).append(os.getpid())
    write_state(path, state)
    sys.stdout.flush()
    time.sleep(3600)


def _leave_a_child(state: State) -> None:
    """Start a child that keeps this tool's standard output open long after it exits (as a
    tool that starts a daemon does; with "setsid", in a session of its own); its pid goes in
    the state's "children"."""
    argv = ["setsid", "sleep", "3600"] if state.get("child") == "setsid" else ["sleep", "3600"]
    child = subprocess.Popen(argv, stdout=sys.stdout, stderr=subprocess.DEVNULL)
    state.setdefault("children", []).append(child.pid)


def _after_set(state: State) -> None:
    """Once a set command has worked: the state's "after_set" changes take effect ("vds":
    changes to each VD's fields, anything else replaced)."""
    changes = state.pop("after_set")
    if changes.pop("vanish", False):  # the tool is gone: every launcher of its family
        _vanish(TOOLS[sys.argv[1]])
    for vd, fields in changes.pop("vds", {}).items():
        state["vds"][vd].update(fields)
    state.update(changes)


def _vanish(family: str) -> None:
    found = shutil.which(sys.argv[1])
    folder = Path(found).parent if found else None
    for name, its in TOOLS.items():
        if folder is not None and its == family and (folder / name).exists():
            (folder / name).unlink()


def _mutated(state: State, out: str) -> str:
    """A read's answer changed as the state says: regular expressions replaced ("mutate":
    [[pattern, replacement], ...]), cut to a share of it ("cut"), or padded ("pad" bytes)."""
    for pattern, replacement in state.get("mutate", ()):
        out = re.compile(pattern, re.MULTILINE).sub(str(replacement).replace("\\", "\\\\"), out)
    if "cut" in state:
        out = out[: int(len(out) * float(state["cut"]))]
    if state.get("pad"):
        out += ("x" * 1023 + "\n") * (int(state["pad"]) // 1024 + 1)
    return out


def _leave_log(family: str, args: list[str]) -> None:
    """What the real tools do: a log in the working directory, unless told not to."""
    told = any(arg.lower() in ("nolog", "-nolog") for arg in args)
    log = "UcliEvt.log" if family == "arcconf" else None if told else LOGS.get(family)
    if log:
        with Path(log).open("a") as file:
            file.write(f"fake {family} {' '.join(args)}\n")


def _unknown(family: str) -> tuple[int, str]:
    sys.stderr.write(f"fake {family}: no recorded answer for this command\n")
    return 2, ""


def _check(state: State, field: str, value: object) -> bool:
    """False when the card should silently not take `value`; Refused when it refuses it."""
    if value in state["refuse"].get(field, ()):
        raise Refused(str(value))
    return value not in state["ignore"].get(field, ())


def _effective_write(state: State, write: str) -> str:
    return "write-through" if write == "write-back" and state["battery"] != "optimal" else write


# -- storcli and perccli --------------------------------------------------------------------

_STORCLI_WRITE = {"wb": "write-back", "wt": "write-through", "awb": "always-write-back"}
_STORCLI_READ = {"ra": "read-ahead", "nora": "none"}
_STORCLI_IO = {"direct": "direct", "cached": "cached"}
_STORCLI_PD = {"on": "on", "off": "off", "default": "drive default"}
_CACHE_WRITE = {"write-back": "WB", "write-through": "WT", "always-write-back": "AWB"}
_CACHE_READ = {"read-ahead": "R", "none": "NR", "adaptive": "R"}
_INITIAL = {"write-back": "WriteBack", "write-through": "WriteThrough"}
_PDC = {"on": "enbl", "off": "dsbl", "drive default": "dflt"}
_DISK_POLICY = {"on": "Enabled", "off": "Disabled", "drive default": "Disk's Default"}
_VD_ADDRESS = re.compile(r"^/c(\d+)/v(\d+)$", re.IGNORECASE)


def _storcli(state: State, args: list[str], family: str) -> tuple[int, str]:
    words = [a.lower() for a in args if a.lower() != "nolog"]
    if state["no_controller"]:
        return 0, _recorded("storcli/perccli-call-show-J-nolog.fail.json")
    if len(words) >= 3 and words[1] == "set":
        return _storcli_set(state, args[0], [w for w in words[2:] if w != "j"])
    if words == ["/call", "show", "all", "j"]:
        return 0, _dump(_storcli_show_all(state))
    if words == ["/call", "show", "j"]:
        return 0, _dump(_storcli_call_show(state))
    if len(words) == 4 and _VD_ADDRESS.match(words[0]) and words[1:] == ["show", "all", "j"]:
        return _storcli_vd(state, words[0])
    return _unknown(family)


def _cache_string(state: State, vd: Mapping[str, Any]) -> str:
    io = "C" if vd["io"] == "cached" else "D"
    return f"{_CACHE_READ[vd['read']]}{_CACHE_WRITE[_effective_write(state, vd['write'])]}{io}"


def _storcli_show_all(state: State) -> Any:
    document = json.loads(_recorded("storcli/cALL-show-all-J.praid-ep420i.json"))
    data = document["Controllers"][0]["Response Data"]
    for row in data["VD LIST"]:
        group, number = row["DG/VD"].split("/")
        vd = state["vds"].get(f"/c0/v{number}")
        if vd is not None:
            row["Cache"] = _cache_string(state, vd)
            for top in data["TOPOLOGY"]:
                if str(top["DG"]) == group:
                    top["PDC"] = _PDC[vd["drive_cache"]]
    if state["battery"] == "absent":
        del data["Cachevault_Info"]
        data["HwCfg"]["BBU"] = "Absent"
    else:
        data["Cachevault_Info"][0]["State"] = state["battery"].capitalize()
    return document


def _storcli_call_show(state: State) -> Any:
    document = json.loads(_recorded("storcli/call-show-J-nolog.json"))
    for entry in document["Controllers"]:
        index = entry["Command Status"]["Controller"]
        for row in entry["Response Data"].get("VD LIST", []):
            vd = state["vds"].get(f"/c{index}/v{row['DG/VD'].split('/')[1]}")
            if vd is not None:
                row["Cache"] = _cache_string(state, vd)
    return document


def _storcli_vd(state: State, address: str) -> tuple[int, str]:
    found = _VD_ADDRESS.match(address)
    assert found is not None
    controller, number = int(found.group(1)), int(found.group(2))
    key = f"/c{controller}/v{number}"
    vd = state["vds"].get(key)
    if vd is None:
        return 1, _dump(_storcli_failure(controller, "the fake's own words: no such VD"))
    listed = _storcli_show_all(state)["Controllers"][0]["Response Data"]["VD LIST"]
    row_of_list = next((r for r in listed if r["DG/VD"].endswith(f"/{number}")), None)
    document = json.loads(_recorded("storcli/c0-v0-show-all-J-nolog.json"))
    entry = document["Controllers"][0]
    entry["Command Status"]["Controller"] = controller
    data = entry["Response Data"]
    row = data.pop("/c0/v0")[0]
    if row_of_list is not None:
        row.update({k: row_of_list[k] for k in ("DG/VD", "TYPE", "State", "Size", "Name")})
    row["Cache"] = _cache_string(state, vd)
    props = data.pop("VD0 Properties")
    props["Write Cache(initial setting)"] = _INITIAL.get(vd["write"], "AlwaysWriteBack")
    props["Disk Cache Policy"] = _DISK_POLICY[vd["drive_cache"]]
    if vd.get("device"):
        props["OS Drive Name"] = vd["device"]
    else:
        props.pop("OS Drive Name", None)
    data[key] = [row]
    data[f"PDs for VD {number}"] = data.pop("PDs for VD 0")
    data[f"VD{number} Properties"] = props
    return 0, _dump(document)


def _storcli_set(state: State, address: str, settings: list[str]) -> tuple[int, str]:
    found = _VD_ADDRESS.match(address)
    if found is None:
        return 1, _dump(_storcli_failure(0, "the fake's own words: no such VD"))
    controller, number = int(found.group(1)), int(found.group(2))
    vd = state["vds"].get(f"/c{controller}/v{number}")
    if vd is None:
        return 1, _dump(_storcli_failure(controller, "the fake's own words: no such VD"))
    rows = []
    for setting in settings:
        key, _, value = setting.partition("=")
        table = {
            "wrcache": _STORCLI_WRITE,
            "rdcache": _STORCLI_READ,
            "iopolicy": _STORCLI_IO,
            "pdcache": _STORCLI_PD,
        }.get(key)
        field = {"wrcache": "write", "rdcache": "read", "iopolicy": "io"}.get(key, "drive_cache")
        if table is None or value not in table:
            return 1, _dump(_storcli_failure(controller, "the fake's own words: bad syntax"))
        try:
            if _check(state, field, table[value]):
                vd[field] = table[value]
        except Refused:
            failed = _storcli_failure(controller, "the fake's own words: not allowed")
            failed["Controllers"][0]["Response Data"] = {
                "Detailed Status": [_detail(number, key, value, "Failure")]
            }
            return 1, _dump(failed)
        rows.append(_detail(number, key, value, "Success"))
    document = _storcli_failure(controller, "None")
    document["Controllers"][0]["Command Status"]["Status"] = "Success"
    document["Controllers"][0]["Response Data"] = {"Detailed Status": rows}
    return 0, _dump(document)


def _detail(vd: int, key: str, value: str, status: str) -> dict[str, Any]:
    error = 0 if status == "Success" else 255
    return {
        "VD": vd,
        "Property": key,
        "Value": value.upper(),
        "Status": status,
        "ErrCd": error,
        "ErrMsg": "-" if not error else "the fake's own words",
    }


def _storcli_failure(controller: int, description: str) -> dict[str, Any]:
    document = json.loads(_recorded("storcli/perccli-call-show-J-nolog.fail.json"))
    status = document["Controllers"][0]["Command Status"]
    status.update({"Controller": controller, "Description": description})
    return dict(document)


# -- MegaCli --------------------------------------------------------------------------------

_MEGA_SET = {
    "wb": ("write", "WB", "Write Policy to WriteBack"),
    "wt": ("write", "WT", "Write Policy to WriteThrough"),
    "ra": ("read", "read-ahead", "Read Policy to ReadAhead"),
    "nora": ("read", "none", "Read Policy to ReadAheadNone"),
    "adra": ("read", "adaptive", "Read Policy to Adaptive"),
    "direct": ("io", "direct", "Cache Policy to Direct"),
    "cached": ("io", "cached", "Cache Policy to Cached"),
    "cachedbadbbu": ("write", "BAD", "Write Cache OK if bad BBU"),
    "nocachedbadbbu": ("write", "NOBAD", "No Write Cache if bad BBU"),
    "-endskcache": ("drive_cache", "on", "Disk Cache Policy to Enabled"),
    "-disdskcache": ("drive_cache", "off", "Disk Cache Policy to Disabled"),
}
_MEGA_WORDS = {
    "write-back": "WriteBack",
    "write-through": "WriteThrough",
    "always-write-back": "WriteBack",
    "read-ahead": "ReadAhead",
    "none": "ReadAheadNone",
    "adaptive": "ReadAdaptive",
    "direct": "Direct",
    "cached": "Cached",
}


def _megacli(state: State, args: list[str], family: str) -> tuple[int, str]:
    words = [a.lower() for a in args if a.lower() != "-nolog"]
    if words == ["-ldpdinfo", "-aall"]:
        return 0, _mega_ldpdinfo(state)
    if words in (["-adpbbucmd", "-aall"], ["-adpbbucmd", "-getbbustatus", "-aall"]):
        return 0, _mega_bbu(state)
    if len(words) == 4 and words[0] == "-ldsetprop" and words[1] in _MEGA_SET:
        return _mega_set(state, words[1], words[2], words[3])
    return _unknown(family)


def _mega_policy(state: State, vd: Mapping[str, Any], effective: bool) -> str:
    write = _effective_write(state, vd["write"]) if effective else vd["write"]
    bad = "Write Cache OK if Bad BBU" if vd["bad_bbu"] else "No Write Cache if Bad BBU"
    return ", ".join((_MEGA_WORDS[write], _MEGA_WORDS[vd["read"]], _MEGA_WORDS[vd["io"]], bad))


def _mega_ldpdinfo(state: State) -> str:
    text = _recorded("megacli/mega-phys-drives-info.txt")
    vd = state["vds"]["-L0 -a0"]
    text = _line(text, "Default Cache Policy", _mega_policy(state, vd, effective=False))
    text = _line(text, "Current Cache Policy", _mega_policy(state, vd, effective=True))
    return _line(text, "Disk Cache Policy", _DISK_POLICY[vd["drive_cache"]])


def _mega_bbu(state: State) -> str:
    text = _recorded("megacli/mega-bbu-info-recent.txt")
    battery = state["battery"]
    text = _line(text, "Learn Cycle Active", "Yes" if battery == "learning" else "No")
    text = _line(text, "Battery Replacement required", "Yes" if battery == "failed" else "No")
    text = _line(text, "Battery Pack Missing", "Yes" if battery == "absent" else "No")
    return _line(text, "Battery State", "Failed" if battery == "failed" else "Optimal")


def _mega_set(state: State, prop: str, target: str, adapter: str) -> tuple[int, str]:
    vd = state["vds"].get("-L0 -a0")
    if vd is None or target not in ("-l0", "-lall") or adapter not in ("-a0", "-aall"):
        return 1, "the fake's own words: no such VD\n\nExit Code: 0x01\n"
    field, value, said = _MEGA_SET[prop]
    new = dict(vd)
    if field == "write":
        bad = {"BAD": True, "NOBAD": False}.get(value, vd["bad_bbu"])
        back = value == "WB" or (value in ("BAD", "NOBAD") and vd["write"] != "write-through")
        new["bad_bbu"] = bad
        new["write"] = ("always-write-back" if bad else "write-back") if back else "write-through"
    else:
        new[field] = value
    try:
        if _check(state, field, new[field]):
            vd.update(new)
    except Refused:
        return 1, f"Adapter 0: Set {said} failed (the fake's own words)\n\nExit Code: 0x01\n"
    return 0, f"Set {said} on Adapter 0, VD 0 (target id: 0) success\n\nExit Code: 0x00\n"


# -- ssacli ---------------------------------------------------------------------------------

_SSA_BATTERY = {
    "learning": ("Recharging", "Temporarily Disabled"),
    "failed": ("Failed", "Permanently Disabled"),
}


def _ssacli(state: State, args: list[str], family: str) -> tuple[int, str]:
    words = [a.lower() for a in args if a.lower() != "forced"]
    if words == ["ctrl", "all", "show", "config", "detail"]:
        return 0, _ssa_config(state)
    if len(words) == 6 and words[:2] == ["ctrl", "slot=0"] and words[2] in ("ld", "logicaldrive"):
        return _ssa_ld(state, words[3], words[4], words[5])
    if len(words) == 4 and words[:3] == ["ctrl", "slot=0", "modify"]:
        return _ssa_card(state, words[3])
    if words[:1] == ["ctrl"] and len(words) > 1 and words[1].startswith("slot="):
        return 1, "\nError: the fake's own words: no such controller or logical drive\n"
    return _unknown(family)


def _ssa_config(state: State) -> str:
    text = _recorded("ssacli/ssacli-P400ar.txt")
    card = state["card"]
    read, write = card["cache_ratio"]
    text = _line(text, "Cache Ratio", f"{read}% Read / {write}% Write")
    drive_cache = "Enabled" if card["drive_cache"] == "on" else "Disabled"
    text = _line(text, "Drive Write Cache", drive_cache)
    nbwc = "Enabled" if card["no_battery_write_cache"] else "Disabled"
    text = _line(text, "No-Battery Write Cache", nbwc)
    battery, cache = _SSA_BATTERY.get(state["battery"], ("OK", "OK"))
    text = _line(text, "Cache Status", cache)
    if state["battery"] == "absent":
        text = _line(text, "Battery/Capacitor Count", "0")
        text = re.sub(r"(?m)^\s*Battery/Capacitor Status:.*\n", "", text)
    else:
        text = _line(text, "Battery/Capacitor Status", battery)
    return _ssa_drives(state, text)


def _ssa_drives(state: State, text: str) -> str:
    """Each logical drive's Caching and Disk Name lines, from the state."""
    out, current = [], None
    for line in text.splitlines(keepends=True):
        header = re.match(r"^\s*Logical Drive:\s*(\d+)", line)
        if header:
            current = state["vds"].get(f"slot=0 ld {header.group(1)}")
        out.append(line if current is None else _ssa_drive_line(current, line))
    return "".join(out)


def _ssa_drive_line(vd: Mapping[str, Any], line: str) -> str:
    if re.match(r"^\s*Caching:", line):
        return re.sub(
            r"Caching:.*", f"Caching:  {'Enabled' if vd['caching'] else 'Disabled'}", line
        )
    if re.match(r"^\s*Disk Name:", line) and vd.get("device"):
        return re.sub(r"Disk Name:.*", f"Disk Name: {vd['device']}", line)
    return line


def _ssa_ld(state: State, number: str, verb: str, setting: str) -> tuple[int, str]:
    vd = state["vds"].get(f"slot=0 ld {number}")
    key, _, value = setting.partition("=")
    if vd is None or verb != "modify" or key not in ("arrayaccelerator", "aa", "caching"):
        return 1, "\nError: the fake's own words: no such logical drive or setting\n"
    if value not in ("enable", "disable"):
        return 1, "\nError: the fake's own words: give enable or disable\n"
    try:
        if _check(state, "caching", value == "enable"):
            vd["caching"] = value == "enable"
    except Refused:
        return 1, "\nError: the fake's own words: the controller refused the change\n"
    return 0, ""


def _ssa_card(state: State, setting: str) -> tuple[int, str]:
    key, _, value = setting.partition("=")
    card = state["card"]
    field = {
        "cacheratio": "cache_ratio",
        "drivewritecache": "drive_cache",
        "dwc": "drive_cache",
        "nobatterywritecache": "no_battery_write_cache",
        "nbwc": "no_battery_write_cache",
    }.get(key)
    ratio = re.fullmatch(r"(\d{1,3})/(\d{1,3})", value)
    if field == "cache_ratio" and ratio and int(ratio.group(1)) + int(ratio.group(2)) == 100:
        new: object = [int(ratio.group(1)), int(ratio.group(2))]
    elif field in ("drive_cache", "no_battery_write_cache") and value in ("enable", "disable"):
        on = value == "enable"
        new = ("on" if on else "off") if field == "drive_cache" else on
    else:
        return 1, "\nError: the fake's own words: no such setting or value\n"
    try:
        if _check(state, field, new):
            card[field] = new
    except Refused:
        return 1, "\nError: the fake's own words: the controller refused the change\n"
    return 0, ""


# -- arcconf --------------------------------------------------------------------------------

_ARC_WRITE = {"wb": "always-write-back", "wbb": "write-back", "wt": "write-through"}
_ARC_READ = {"ron": "read-ahead", "roff": "none"}
_ARC_SETTING = {
    "always-write-back": "Enabled",
    "write-through": "Disabled",
    "write-back": "Enabled (write-back) when protected by battery/ZMM",
}
_DONE = "Controllers found: 1\n\nCommand completed successfully.\n"


def _arcconf(state: State, args: list[str], family: str) -> tuple[int, str]:
    words = [a.lower() for a in args if a.lower() != "noprompt"]
    if words == ["getconfig", "1", "ld"]:
        return 0, _arc_config(state)
    if len(words) == 5 and words[:2] == ["setcache", "1"] and words[2] == "logicaldrive":
        return _arc_set(state, words[3], words[4])
    return _unknown(family)


def _arc_config(state: State) -> str:
    vd = state["vds"]["1 LOGICALDRIVE 0"]
    write = _effective_write(state, vd["write"])
    text = _recorded("arcconf/getconfig-ld-current.txt")
    text = _line(text, "Read-cache setting", "Enabled" if vd["read"] != "none" else "Disabled")
    text = _line(text, "Read-cache status", "On" if vd["read"] != "none" else "Off")
    text = _line(text, "Write-cache setting", _ARC_SETTING[vd["write"]])
    status = {"write-through": "Off", "write-back": "On when protected by battery/ZMM"}
    return _line(text, "Write-cache status", status.get(write, "On"))


def _arc_set(state: State, number: str, mode: str) -> tuple[int, str]:
    vd = state["vds"].get(f"1 LOGICALDRIVE {number}")
    field, value = (
        ("write", _ARC_WRITE.get(mode)) if mode in _ARC_WRITE else ("read", _ARC_READ.get(mode))
    )
    if vd is None or value is None:
        return 1, "Controllers found: 1\n\nthe fake's own words: invalid logical drive or mode\n"
    try:
        if _check(state, field, value):
            vd[field] = value
    except Refused:
        return 1, "Controllers found: 1\n\nthe fake's own words: the controller refused it\n"
    return 0, _DONE


# -- shared ---------------------------------------------------------------------------------


def _recorded(relative: str) -> str:
    return (REFERENCE / relative).read_bytes().decode(errors="replace")


def _dump(document: Any) -> str:
    return json.dumps(deepcopy(document), indent="\t", separators=(",", " : ")) + "\n"


def _line(text: str, key: str, value: str) -> str:
    """`text` with the value of every "key : value" line set to `value` (padding kept)."""
    pattern = re.compile(rf"(?m)^(\s*{re.escape(key)}\s*:[ \t]*).*$")
    return pattern.sub(lambda found: found.group(1) + value, text)


ANSWERS = {
    "storcli": _storcli,
    "perccli": _storcli,
    "MegaCli": _megacli,
    "ssacli": _ssacli,
    "arcconf": _arcconf,
}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
