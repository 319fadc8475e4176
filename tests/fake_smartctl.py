"""A stand-in for smartctl, for tests: it prints what a real drive's smartctl printed.

`install(folder, state)` writes a `smartctl` launcher into `folder` (to put first on PATH)
that runs this script; the state is a JSON file named by $IOLAB_FAKE_SMART_STATE:
{"file": a recorded output's name in ../shared/reference/device-health/smartctl/, "calls":
how many readings (`-a`) it answered so far, "from_call": N, "set": {"section.key": value}}.
It prints the recorded output as it is, and from its N-th reading on with the `set` fields
changed (a drive that starts reporting warning_temp_time grown, say; an identity or status,
`-i` or `-H` without `-a`, answers as the next reading will); "mode" "hang" sleeps,
"garbage" prints what is not JSON. Drives behind a RAID card (`-d megaraid,N`, `-d cciss,N`)
answer from "devices": {"megaraid,N": a recorded output's name} ("set_for": {"megaraid,N":
{...}} changes one's fields), and one it does not name with nothing (exit 2); "asked"
lists each reading's arguments. The recorded outputs are read
from beside the checkout (the first ancestor holding shared/reference/device-health), never
copied here.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

STATE_ENV = "IOLAB_FAKE_SMART_STATE"
HERE = Path(__file__).resolve()
REFERENCE = next(
    (
        p / "shared" / "reference" / "device-health" / "smartctl"
        for p in HERE.parents
        if (p / "shared" / "reference" / "device-health" / "smartctl").is_dir()
    ),
    HERE.parents[2] / "shared" / "reference" / "device-health" / "smartctl",
)
P4510 = "INTEL_SSDPE2KX080T8_1.json"


def reference() -> Path:
    """The folder of recorded outputs; a test without it fails, saying where it looked."""
    if not REFERENCE.is_dir():
        import pytest  # only the tests call this; the fake itself runs without pytest

        pytest.fail(f"{REFERENCE} is absent: the recorded smartctl outputs sit beside the checkout")
    return REFERENCE


def recorded_files() -> list[str]:
    return sorted(p.name for p in reference().glob("*.json"))


def install(folder: Path, state: Path, file: str = P4510, **more: Any) -> dict[str, str]:
    """A smartctl in `folder` answering from `file`; the environment to run iolab with."""
    folder.mkdir(parents=True, exist_ok=True)
    launcher = folder / "smartctl"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {HERE} "$@"\n')
    launcher.chmod(0o755)
    state.write_text(json.dumps({"file": file, "calls": 0, **more}))
    path = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
    return {STATE_ENV: str(state), "PATH": path}


def calls(state: Path) -> int:
    count = json.loads(state.read_text())["calls"]
    return int(count)


def _changed(document: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    for dotted, value in fields.items():
        *parents, key = dotted.split(".")
        place = document
        for name in parents:
            place = place[name]
        place[key] = value
    return document


def _answer(state: dict[str, Any], reading: int) -> str:
    """The recorded output, with the `set` fields changed from the `from_call`-th reading;
    with `-d KIND` (a drive behind a RAID card), the one "devices" names for KIND."""
    file, kind = str(state["file"]), ""
    if "-d" in sys.argv[:-1]:
        kind = sys.argv[sys.argv.index("-d") + 1]
        file = str(state.get("devices", {}).get(kind, ""))
    if not file:
        return ""  # smartctl answers a device it cannot reach with no JSON (exit 2)
    text = (REFERENCE / file).read_text()
    if kind in state.get("set_for", {}):  # one drive behind the card changed, from the start
        return json.dumps(_changed(json.loads(text), state["set_for"][kind]), indent=2)
    if reading < state.get("from_call", 1) or not state.get("set"):
        return text
    return json.dumps(_changed(json.loads(text), state["set"]), indent=2)


def main() -> int:
    path = Path(os.environ[STATE_ENV])
    state = json.loads(path.read_text())
    if "-a" not in sys.argv:  # an identity or status (-i, -H): as the next reading would be
        sys.stdout.write(_answer(state, state["calls"] + 1))
        return 0
    state["calls"] += 1
    state["asked"] = [*state.get("asked", []), " ".join(sys.argv[1:])]
    path.write_text(json.dumps(state))
    if state.get("mode") == "hang":
        time.sleep(600)
    if state.get("mode") == "garbage":
        print("Smartctl open device: /dev/sda failed: \x1b[31mno such device")
        return 2
    answer = _answer(state, state["calls"])
    sys.stdout.write(answer)
    return 0 if answer else 2


if __name__ == "__main__":
    sys.exit(main())
