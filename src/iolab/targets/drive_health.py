"""Each whole disk's own account (model.drive.DriveHealth), read from `smartctl -j -a`.

NVMe drives report one standard log (`nvme_smart_health_information_log`: data units of
1,000 x 512 bytes, percentage used, spare, media errors, minutes above the warning and
critical temperatures, thermal throttling). ATA drives report attributes whose names their
vendor chose: the tables below say which names hold lifetime host and flash writes (and in
what unit), wear, spare and errors; a name not listed is not read. SCSI/SAS drives report
their error counter log. A figure no name gives is None.

smartctl runs through the RAID tools' bounded call (controllers.probe.call): its own process
group, a time limit, at most 16 MiB of output; one that hangs, fails or prints what is not its
JSON is a problem in one line, never an error that stops a run.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from iolab import layouts
from iolab.errors import ControllerError, TargetError
from iolab.model import JSON, JSONObject, Setup
from iolab.model.drive import DriveHealth, DriveReading
from iolab.targets import devices as dv
from iolab.targets import stack as stk
from iolab.targets.controllers.probe import call

TIMEOUT_S = 10.0  # one drive's answer
ANSWER_ENV = "IOLAB_DRIVE_ANSWER_S"  # seconds, to change it (tests lower it)
ANSWER_MAX_S = 600.0
MAX_INT = 2**63  # what SQLite's integers hold
NVME_UNIT = 512_000  # an NVMe data unit: 1,000 x 512 bytes
MIB = 2**20
GIB = 2**30
LBA = 0  # an attribute counted in the drive's logical blocks
THROUGH = re.compile(r"(megaraid|cciss),\d{1,5}", re.ASCII)  # a card's drive, smartctl's -d
NOT_DRIVES = ("loop", "ram", "zram", "nbd", "ubd", "md", "dm-")  # no account of their own

# ATA attribute name -> (the field it fills, its unit in bytes), first name found wins
ATA_BYTES: dict[str, tuple[str, int]] = {
    "Total_LBAs_Written": ("host_written_bytes", LBA),
    "Host_Writes_32MiB": ("host_written_bytes", 32 * MIB),
    "Host_Writes_GiB": ("host_written_bytes", GIB),
    "Lifetime_Writes_GiB": ("host_written_bytes", GIB),
    "Host_Writes_MiB": ("host_written_bytes", MIB),
    "Total_LBAs_Read": ("host_read_bytes", LBA),
    "Host_Reads_32MiB": ("host_read_bytes", 32 * MIB),
    "Host_Reads_GiB": ("host_read_bytes", GIB),
    "Lifetime_Reads_GiB": ("host_read_bytes", GIB),
    "Host_Reads_MiB": ("host_read_bytes", MIB),
    "NAND_Writes_32MiB": ("nand_written_bytes", 32 * MIB),
    "NAND_Writes_GiB": ("nand_written_bytes", GIB),
    "Flash_Writes_GiB": ("nand_written_bytes", GIB),
    "NAND_Writes": ("nand_written_bytes", LBA),  # Samsung's (PM883), in sectors
}
# wear indicators whose normalised value counts down from 100 (new) as the flash wears
ATA_WEAR = (
    "Media_Wearout_Indicator",
    "Wear_Leveling_Count",
    "Percent_Lifetime_Remain",
    "SSD_Life_Left",
    "Remaining_Lifetime_Perc",
)
# spare whose normalised value and threshold are percentages
ATA_SPARE = ("Available_Reservd_Space", "Unused_Rsvd_Blk_Cnt_Tot")
# raw counters: the field -> the names that hold it
ATA_COUNTS: dict[str, tuple[str, ...]] = {
    "media_errors": ("Reported_Uncorrect", "Uncorrectable_Error_Cnt"),
    "crc_errors": ("UDMA_CRC_Error_Count", "CRC_Error_Count"),
    "reallocated": ("Reallocated_Sector_Ct",),
    "pending": ("Current_Pending_Sector", "Pending_Sector_Count"),
    "unsafe_shutdowns": ("Unsafe_Shutdown_Count", "Unexpect_Power_Loss_Ct"),
}
# device statistics (smartctl -x): the name -> the field, for drives without the attributes
DEVSTAT: dict[str, tuple[str, int]] = {
    "Logical Sectors Written": ("host_written_bytes", LBA),
    "Logical Sectors Read": ("host_read_bytes", LBA),
    "Percentage Used Endurance Indicator": ("percentage_used", 1),
}


class DriveError(TargetError):
    """What smartctl printed is not a drive's account."""


def _int(value: JSON | None) -> int | None:
    """A count as the drive gave it: a whole number from 0 up, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not 0 <= value < MAX_INT:  # NaN, negative, past SQLite's integers
        return None
    return int(value)


def _temp(value: JSON | None) -> int | None:
    """A temperature in Celsius, within what a drive can be."""
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and -60 < value < 250
        else None
    )


def _obj(value: JSON | None) -> JSONObject:
    return value if isinstance(value, dict) else {}


def _text(value: JSON | None) -> str | None:
    return value.strip()[:200] or None if isinstance(value, str) else None


def _times(count: int | None, unit: int) -> int | None:
    if count is None:
        return None
    product = count * unit
    return product if product < MAX_INT else None


def parse(text: str) -> DriveHealth:
    """`smartctl -j -a`'s output as a typed account; DriveError when it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise DriveError("smartctl printed what is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("smartctl"), dict):
        raise DriveError("smartctl printed JSON that is not its report")
    found: dict[str, object] = {}
    for part in (_identity(data), _nvme(data), _ata(data), _scsi(data)):
        found.update({key: value for key, value in part.items() if value is not None})
    if not any(key not in ("protocol", "sensors_c") for key in found):
        raise DriveError(f"smartctl read nothing of the drive: {_message(data)}")
    return DriveHealth(**found)  # type: ignore[arg-type]


def _message(data: JSONObject) -> str:
    """smartctl's own words for why it read nothing."""
    messages = _obj(data.get("smartctl")).get("messages")
    for message in messages if isinstance(messages, list) else []:
        said = _text(_obj(message).get("string"))
        if said:
            return said
    return "no identity, temperature or counters"


def _identity(data: JSONObject) -> dict[str, object]:
    device, status = _obj(data.get("device")), _obj(data.get("smart_status"))
    passed = status.get("passed")
    capacity = _int(_obj(data.get("user_capacity")).get("bytes"))
    sct = _obj(_obj(data.get("ata_sct_status")).get("temperature"))
    temperature = _obj(data.get("temperature"))
    return {
        "protocol": _text(device.get("protocol")) or "",
        "model": _text(data.get("model_name")) or _text(data.get("scsi_model_name")),
        "firmware": _text(data.get("firmware_version")),
        "capacity_bytes": capacity
        if capacity is not None
        else _int(data.get("nvme_total_capacity")),
        "smart_passed": passed if isinstance(passed, bool) else None,
        "temperature_c": _temp(temperature.get("current")),
        "warning_temp_c": _temp(temperature.get("op_limit_max") or sct.get("op_limit_max")),
        "critical_temp_c": _temp(temperature.get("critical_limit_max") or sct.get("limit_max")),
        "power_on_hours": _int(_obj(data.get("power_on_time")).get("hours")),
    }


def _nvme(data: JSONObject) -> dict[str, object]:
    log = _obj(data.get("nvme_smart_health_information_log"))
    if not log:
        return {}
    sensors = log.get("temperature_sensors")
    temps = [_temp(t) for t in sensors] if isinstance(sensors, list) else []
    transitions = [_int(log.get(f"thermal_temp{n}_transition_count")) for n in (1, 2)]
    throttled = [_int(log.get(f"thermal_temp{n}_total_time")) for n in (1, 2)]
    return {
        "temperature_c": _temp(log.get("temperature"))
        or _temp(_obj(data.get("temperature")).get("current")),
        "sensors_c": tuple(t for t in temps if t is not None),
        "host_written_bytes": _times(_int(log.get("data_units_written")), NVME_UNIT),
        "host_read_bytes": _times(_int(log.get("data_units_read")), NVME_UNIT),
        "percentage_used": _int(log.get("percentage_used")),
        "available_spare_pct": _int(log.get("available_spare")),
        "spare_threshold_pct": _int(log.get("available_spare_threshold")),
        "media_errors": _int(log.get("media_errors")),
        "unsafe_shutdowns": _int(log.get("unsafe_shutdowns")),
        "power_on_hours": _int(log.get("power_on_hours")),
        "warning_temp_minutes": _int(log.get("warning_temp_time")),
        "critical_temp_minutes": _int(log.get("critical_comp_time")),
        "throttle_events": _sum(transitions),
        "throttle_s": _sum(throttled),
    }


def _sum(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _attributes(data: JSONObject) -> dict[str, JSONObject]:
    """The ATA attributes by name (the first of a name the table holds twice)."""
    table = _obj(data.get("ata_smart_attributes")).get("table")
    named: dict[str, JSONObject] = {}
    for row in table if isinstance(table, list) else []:
        name = _obj(row).get("name")
        if isinstance(name, str) and isinstance(row, dict):
            named.setdefault(name, row)
    return named


def _raw(row: JSONObject) -> int | None:
    return _int(_obj(row.get("raw")).get("value"))


def _ata(data: JSONObject) -> dict[str, object]:
    attributes = _attributes(data)
    if not attributes and not data.get("ata_device_statistics"):
        return {}
    block = _int(data.get("logical_block_size")) or 512
    found: dict[str, object] = {}
    for name, (key, unit) in ATA_BYTES.items():
        if key not in found and name in attributes:
            found[key] = _times(_raw(attributes[name]), unit or block)
    for key, (stat, unit) in _devstat(data).items():
        if found.get(key) is None:
            found[key] = _times(stat, unit or block)
    wear = next((attributes[n] for n in ATA_WEAR if n in attributes), None)
    if wear is not None and found.get("percentage_used") is None:
        value = _int(wear.get("value"))
        found["percentage_used"] = max(0, 100 - value) if value is not None else None
    spare = next((attributes[n] for n in ATA_SPARE if n in attributes), None)
    if spare is not None:
        found["available_spare_pct"] = _int(spare.get("value"))
        found["spare_threshold_pct"] = _int(spare.get("thresh"))
    for key, names in ATA_COUNTS.items():
        row = next((attributes[n] for n in names if n in attributes), None)
        found[key] = _raw(row) if row is not None else None
    return {**found, **_ata_throttle(attributes)}


def _devstat(data: JSONObject) -> dict[str, tuple[int | None, int]]:
    """Device statistics (smartctl -x) that the table names: the field -> (value, unit)."""
    found: dict[str, tuple[int | None, int]] = {}
    pages = _obj(data.get("ata_device_statistics")).get("pages")
    for page in pages if isinstance(pages, list) else []:
        table = _obj(page).get("table")
        for row in table if isinstance(table, list) else []:
            name = _obj(row).get("name")
            if isinstance(name, str) and name in DEVSTAT:
                key, unit = DEVSTAT[name]
                found.setdefault(key, (_int(_obj(row).get("value")), unit))
    return found


def _ata_throttle(attributes: Mapping[str, JSONObject]) -> dict[str, object]:
    """Intel's Thermal_Throttle_Status ("percent/events"), Samsung's Thermal_Throttle_St."""
    intel = attributes.get("Thermal_Throttle_Status")
    if intel is not None:
        words = str(_obj(intel.get("raw")).get("string") or "").split("/")
        if len(words) == 2 and all(w.strip().isdigit() for w in words):
            share, events = (int(w) for w in words)
            return {"throttling": share > 0, "throttle_events": events}
    samsung = attributes.get("Thermal_Throttle_St")
    raw = _raw(samsung) if samsung is not None else None
    return {"throttling": raw > 0} if raw is not None else {}


def _scsi(data: JSONObject) -> dict[str, object]:
    """A SCSI/SAS drive's error counter log: gigabytes processed, uncorrected errors."""
    counters = _obj(data.get("scsi_error_counter_log"))
    if not counters:
        return {}
    write, read = _obj(counters.get("write")), _obj(counters.get("read"))
    errors = [_int(side.get("total_uncorrected_errors")) for side in (read, write)]
    return {
        "host_written_bytes": _gigabytes(write.get("gigabytes_processed")),
        "host_read_bytes": _gigabytes(read.get("gigabytes_processed")),
        "media_errors": _sum(errors),
        "reallocated": _int(data.get("scsi_grown_defect_list")),
        "percentage_used": _int(data.get("scsi_percentage_used_endurance_indicator")),
    }


def _gigabytes(value: JSON | None) -> int | None:
    try:
        count = float(str(value))
    except ValueError:
        return None
    return _int(count * 1e9)


# -- reading the drives -----------------------------------------------------------------------


def answer_limit() -> float:
    """Seconds smartctl may take per drive: IOLAB_DRIVE_ANSWER_S if set, else TIMEOUT_S."""
    text = os.environ.get(ANSWER_ENV, "")
    try:
        value = float(text) if text else TIMEOUT_S
    except ValueError:
        value = math.nan
    if not 0 < value <= ANSWER_MAX_S:
        raise DriveError(f"{ANSWER_ENV} is not a number of seconds from 0 to {ANSWER_MAX_S:g}")
    return value


def read(
    name: str, timeout_s: float | None = None, asked: str = "-a", through: str = ""
) -> DriveHealth:
    """One whole disk's account (its kernel name, or a device path); DriveError or
    ControllerError when it cannot be had (smartctl failed, hung, printed too much or what is
    not its JSON). `asked` is what smartctl reads: `-a` all of it, `-H` its overall SMART
    status alone; `through` a RAID card's member ("megaraid,N", "cciss,N": smartctl's -d)."""
    return parse(answer(name, timeout_s, asked, through)[1])


def answer(
    name: str, timeout_s: float | None = None, asked: str = "-a", through: str = ""
) -> tuple[int, str]:
    """What `smartctl -j <asked>` printed of one disk, and its exit status (a bit mask:
    smartctl's own), for a caller that reads more of it than `parse` (read's arguments);
    DriveError or ControllerError when smartctl cannot run, or hung."""
    program = shutil.which("smartctl")
    if program is None:
        raise DriveError("smartctl is not installed")
    if through and not THROUGH.fullmatch(through):
        raise DriveError(f"{through!r} is not a RAID card's drive smartctl reaches (-d)")
    timeout_s = answer_limit() if timeout_s is None else timeout_s
    device = name if name.startswith("/dev/") else dv.dev_path(name)
    argv = [program, "-j", asked, *(["-d", through] if through else []), device]
    return call(argv, "smartctl", Path(tempfile.gettempdir()), timeout_s)


@dataclass(frozen=True)
class Answered:
    """One disk's `smartctl -j -a` asked before anything was made (the pre-flight): its exit
    status and what it printed, or why none came (`problem`: it could not run, or hung)."""

    code: int = 0
    text: str = ""
    problem: str = ""


def answered(name: str, known: Answered | None = None) -> tuple[int, str]:
    """`answer(name)`, or the one `known` already (its problem raised as DriveError)."""
    if known is None:
        return answer(name)
    if known.problem:
        raise DriveError(known.problem)
    return known.code, known.text


def installed() -> bool:
    return shutil.which("smartctl") is not None


def reading(
    disks: Iterable[str],
    now: float,
    timeout_s: float | None = None,
    behind: Mapping[str, tuple[str, str]] | None = None,
) -> DriveReading:
    """Every disk read once, and every drive `behind` a RAID card (its name -> the card's
    block device and smartctl's -d value): their accounts, and a line for each that could
    not be read."""
    asked = [(name, name, "") for name in disks]
    asked += [(name, device, kind) for name, (device, kind) in (behind or {}).items()]
    drives: dict[str, DriveHealth] = {}
    problems: list[str] = []
    for name, device, kind in asked:
        try:
            drives[name] = read(device, timeout_s, through=kind)
        except (DriveError, ControllerError) as error:
            problems.append(f"{name}: {error}")
    return DriveReading(now, drives, tuple(problems))


# -- before anything is made ------------------------------------------------------------------


def own_disks(disks: Iterable[str]) -> tuple[str, ...]:
    """The disks that may give an account of themselves (not loop, RAM, md or dm devices)."""
    return tuple(d for d in dict.fromkeys(disks) if not d.startswith(NOT_DRIVES))


def disks_before_built(setup: Setup) -> tuple[str, ...]:
    """The whole disks a set-up will reach, read before anything is made: a path's, down its
    filesystem's stack; a layout's devices', down theirs (a partition's disk, a loop device's
    backing file's). A device or path that is not there reaches none (its own check says so)."""
    if setup.layout is None:
        path = Path(setup.path).expanduser()
        return own_disks(stk.tree_disks(stk.resolve(path))) if path.exists() else ()
    names = (dv.try_kernel_name(d) for d in layouts.present(setup.layout))
    return own_disks(d for name in names if name for d in stk.tree_disks(stk.stack(name)))


def failing(
    disks: Iterable[str],
    timeout_s: float | None = None,
    behind: Mapping[str, tuple[str, str]] | None = None,
    answers: dict[str, Answered] | None = None,
) -> list[str]:
    """The disks (and drives `behind` a RAID card: name -> the VD's device, smartctl's -d
    value) whose overall SMART status (`smartctl -H`) says they are failing; a drive that
    cannot be read is not said here (the set-up's own readings say it, in one line). With
    `answers`, each disk is asked all (`-a`) and its answer kept there, by name, for the
    environment and the set-up's first reading to share (one smartctl a disk)."""
    if not installed():
        return []
    asked = [(name, name, "") for name in disks]
    asked += [(name, device, kind) for name, (device, kind) in (behind or {}).items()]
    found = []
    for name, device, kind in asked:
        try:
            if answers is None or kind:
                health = read(device, timeout_s, asked="-H", through=kind)
            else:
                answers[name] = Answered(*answer(device, timeout_s))
                health = parse(answers[name].text)
        except (DriveError, ControllerError) as error:
            if answers is not None and not kind:
                answers.setdefault(name, Answered(problem=str(error)))
            continue
        if health.smart_passed is False:
            found.append(name)
    return found
