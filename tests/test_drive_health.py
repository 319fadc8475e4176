"""The drive's own account: every smartctl output that real drives printed, read typed.

Every file in ../shared/reference/device-health/smartctl/ (beside the checkout; read from
there, never copied here) has a row in RECORDED: what the reader must find in it, with units
(bytes, Celsius, hours, percent). `test_every_recorded_file_has_a_row` fails for a file
without one. A figure a drive does not report is None, never 0.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import fake_smartctl
from iolab.analysis import checks, drive_checks
from iolab.analysis.check_context import Context
from iolab.model import CaseMetrics, Code, codec
from iolab.model.drive import DriveHealth, DriveReading, change, changes
from iolab.runner import telemetry
from iolab.targets import drive_health
from iolab.targets.drive_health import DriveError

MIB = 2**20

# file -> the fields the reader must give (every field not named must be None or empty)
RECORDED: dict[str, dict[str, object]] = {
    "INTEL_SSDPE2KX080T8_1.json": {
        "protocol": "NVMe",
        "model": "INTEL SSDPE2KX080T8",
        "firmware": "REDACTED",
        "capacity_bytes": 8001563222016,
        "smart_passed": True,
        "temperature_c": 29,
        "host_written_bytes": 184919244 * 512_000,  # 94.7 TB
        "host_read_bytes": 20126802 * 512_000,
        "percentage_used": 0,
        "available_spare_pct": 100,
        "spare_threshold_pct": 10,
        "media_errors": 0,
        "unsafe_shutdowns": 8,
        "power_on_hours": 12164,
        "warning_temp_minutes": 0,
        "critical_temp_minutes": 0,
    },
    "nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json": {
        "protocol": "NVMe",
        "model": "Samsung SSD 970 EVO Plus 250GB",
        "firmware": "REDACTED",
        "capacity_bytes": 250059350016,
        "smart_passed": True,
        "temperature_c": 35,
        "sensors_c": (35, 39),
        "host_written_bytes": 1969459 * 512_000,
        "host_read_bytes": 2025034 * 512_000,
        "percentage_used": 0,
        "available_spare_pct": 100,
        "spare_threshold_pct": 10,
        "media_errors": 0,
        "unsafe_shutdowns": 12,
        "power_on_hours": 3149,
        "warning_temp_minutes": 0,
        "critical_temp_minutes": 0,
    },
    "sat-Samsung_based_SSDs-SAMSUNG_MZ7LH480HAHQ-00005-sda.json": {
        "protocol": "ATA",
        "model": "SAMSUNG MZ7LH480HAHQ-00005",
        "firmware": "REDACTED",
        "capacity_bytes": 480103981056,
        "smart_passed": True,
        "temperature_c": 26,
        "host_written_bytes": 1375952821 * 512,  # Total_LBAs_Written
        "host_read_bytes": 45092229071 * 512,
        "nand_written_bytes": 1637892480 * 512,  # NAND_Writes, in sectors
        "percentage_used": 1,  # Wear_Leveling_Count's normalised 99
        "available_spare_pct": 100,  # Unused_Rsvd_Blk_Cnt_Tot
        "spare_threshold_pct": 10,
        "media_errors": 0,
        "crc_errors": 0,
        "reallocated": 0,
        "pending": 0,
        "power_on_hours": 7753,
        "throttling": False,  # Thermal_Throttle_St
    },
    "sat-Intel_S4510_S4610_S4500_S4600_Series_SSDs-INTEL_SSDSC2KB480G8-sdm.json": {
        "protocol": "ATA",
        "model": "INTEL SSDSC2KB480G8",
        "firmware": "REDACTED",
        "capacity_bytes": 480103981056,
        "smart_passed": True,
        "temperature_c": 30,
        "host_written_bytes": 14308 * 32 * MIB,  # Host_Writes_32MiB
        "host_read_bytes": 1059500 * 32 * MIB,
        "nand_written_bytes": 95488 * 32 * MIB,  # NAND_Writes_32MiB
        "percentage_used": 0,  # Media_Wearout_Indicator's normalised 100
        "available_spare_pct": 100,  # Available_Reservd_Space
        "spare_threshold_pct": 10,
        "media_errors": 0,
        "crc_errors": 0,
        "reallocated": 0,
        "pending": 0,
        "unsafe_shutdowns": 7,
        "power_on_hours": 13017,
        "throttle_events": 0,  # Thermal_Throttle_Status "0/0"
        "throttling": False,
    },
    "SAMSUNG_MZ7WD240HAFV-00003_21.json": {
        "protocol": "ATA",
        "model": "SAMSUNG MZ7WD240HAFV-00003",
        "firmware": "REDACTED",
        "capacity_bytes": 240057409536,
        "smart_passed": True,
        "temperature_c": 27,
        "host_written_bytes": 216456537880 * 512,
        "percentage_used": 9,  # Wear_Leveling_Count's normalised 91
        "available_spare_pct": 100,
        "spare_threshold_pct": 10,
        "media_errors": 0,
        "crc_errors": 0,
        "reallocated": 0,
        "power_on_hours": 84619,
    },
    "ST3500418AS_11.json": {  # a hard disk: no wear, no spare, no flash
        "protocol": "ATA",
        "model": "ST3500418AS",
        "firmware": "REDACTED",
        "capacity_bytes": 500107862016,
        "smart_passed": True,
        "temperature_c": 32,
        "host_written_bytes": 543343366 * 512,
        "host_read_bytes": 224972325 * 512,
        "media_errors": 0,
        "crc_errors": 0,
        "reallocated": 1,
        "pending": 0,
        "power_on_hours": 44670,
    },
}


def _text(name: str) -> str:
    return (fake_smartctl.reference() / name).read_text()


def test_every_recorded_file_has_a_row() -> None:
    assert fake_smartctl.recorded_files() == sorted(RECORDED)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_each_recorded_output_reads_typed(name: str) -> None:
    health = drive_health.parse(_text(name))
    expected = RECORDED[name]
    found = {key: getattr(health, key) for key in DriveHealth.__dataclass_fields__}
    for key, value in found.items():
        assert value == expected.get(key, () if key == "sensors_c" else None), key


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_an_account_round_trips_as_stored(name: str) -> None:
    health = drive_health.parse(_text(name))
    reading = DriveReading(1.5, {"sda": health})
    stored = json.loads(json.dumps(codec.to_json(reading)))
    assert codec.from_json(DriveReading, stored) == reading
    assert None not in stored["drives"]["sda"].values()  # what it does not report is absent


def test_the_p4510_has_written_94_7_tb() -> None:
    written = drive_health.parse(_text(fake_smartctl.P4510)).host_written_bytes
    assert written is not None and f"{written / 1e12:.1f} TB" == "94.7 TB"


def _nvme_with(**log: object) -> DriveHealth:
    data = json.loads(_text(fake_smartctl.P4510))
    data["nvme_smart_health_information_log"].update(log)
    return drive_health.parse(json.dumps(data))


def test_a_change_names_heat_writes_and_errors() -> None:
    before = _nvme_with(temperature=40)
    after = _nvme_with(
        temperature=71, warning_temp_time=3, data_units_written=184919244 + 2000, media_errors=2
    )
    moved = change(before, after)
    assert moved.hot and moved.warning_temp_minutes == 3 and moved.highest_c == 71
    assert moved.temperature_rise_c == 31
    assert moved.written_bytes == 2000 * 512_000
    assert moved.errors == {"media errors": 2}
    assert not change(before, before).hot and change(before, before).errors == {}


def test_nvme_throttling_and_wear_are_read() -> None:
    health = _nvme_with(
        thermal_temp1_transition_count=2, thermal_temp1_total_time=30, percentage_used=104
    )
    assert (health.throttle_events, health.throttle_s) == (2, 30)
    assert "104%" in health.worn
    assert "spare (5%)" in _nvme_with(available_spare=5).worn
    assert _nvme_with().worn == ""


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "[1, 2]",
        '{"smartctl": {"exit_status": 2, "messages": [{"string": "open failed"}]}}',
        '{"model_name": "x"}',  # not smartctl's report
        "[" * 100_000,
    ],
)
def test_what_is_not_an_account_is_one_error(text: str) -> None:
    with pytest.raises(DriveError) as raised:
        drive_health.parse(text)
    assert "\n" not in str(raised.value)


def test_hostile_values_are_absent_not_wrong() -> None:
    data = json.loads(_text(fake_smartctl.P4510))
    data["nvme_smart_health_information_log"].update(
        data_units_written=-5, temperature=10_000, media_errors=True, percentage_used="lots"
    )
    data["model_name"] = "x" * 5000
    health = drive_health.parse(json.dumps(data))
    assert health.host_written_bytes is None and health.temperature_c == 29  # the device's
    assert health.media_errors is None and health.percentage_used is None
    assert health.model is not None and len(health.model) == 200


def test_a_smartctl_that_hangs_or_prints_garbage_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = fake_smartctl.install(tmp_path / "bin", tmp_path / "state.json", mode="hang")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    started = time.monotonic()
    hung = drive_health.reading(["sda"], 0.0, timeout_s=0.5)
    assert time.monotonic() - started < 5
    assert hung.drives == {} and hung.problems == (
        "sda: smartctl: `-j -a /dev/sda` did not answer within 0.5 s",
    )
    fake_smartctl.install(tmp_path / "bin", tmp_path / "state.json", mode="garbage")
    garbled = drive_health.reading(["sda"], 0.0)
    assert garbled.problems == ("sda: smartctl printed what is not JSON",)


def test_a_reading_takes_each_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = fake_smartctl.install(tmp_path / "bin", tmp_path / "state.json")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    found = drive_health.reading(["sda", "sdb"], 7.0)
    assert set(found.drives) == {"sda", "sdb"} and found.problems == () and found.at == 7.0
    assert found.drives["sda"].model == "INTEL SSDPE2KX080T8"


def _context(state: str, share: float | None, rw: str = "randwrite") -> Context:
    return Context(
        options={"rw": rw},
        metrics=CaseMetrics((), 0.0, 0.0, 1000, 0),
        target_state=state,
        drive_written=share,
    )


def test_fresh_device_reads_the_drives_lifetime_writes() -> None:
    unknown = checks.fresh_device(_context("", 0.004))
    assert unknown is not None
    assert unknown.message.startswith("this drive had written 0.4% of its capacity in its life")
    built = checks.fresh_device(_context("fresh", 11.8))
    assert (
        built is not None
        and "(this drive had written 11.8 times its capacity in its life)" in built.message
    )
    assert checks.fresh_device(_context("", 11.8)) is None  # a drive written many times over
    assert checks.fresh_device(_context("", None)) is None  # nothing known: nothing said
    assert checks.fresh_device(_context("", 0.004, "randread")) is None  # reads
    p4510 = DriveReading(0.0, {"nvme0n1": drive_health.parse(_text(fake_smartctl.P4510))})
    assert f"{drive_checks.written_share(p4510):.2f}" == "11.83"  # 94.7 TB on 8.0 TB


def test_errors_and_wear_warn_on_the_case() -> None:
    before = _nvme_with()
    after = _nvme_with(media_errors=1, percentage_used=100)
    readings = DriveReading(0.0, {"nvme0n1": before}), DriveReading(1.0, {"nvme0n1": after})
    found = drive_checks.warnings(*readings, changes(*readings), mixed=False)
    assert [w.code for w in found] == [Code.DRIVE_ERRORS, Code.DRIVE_WORN]
    assert "nvme0n1: media errors +1" in found[0].message
    assert "used 100% of its rated endurance" in found[1].message
    quiet = DriveReading(1.0, {"nvme0n1": before})
    assert drive_checks.warnings(readings[0], quiet, changes(readings[0], quiet), False) == ()


def test_heat_joins_a_drop_of_speed_when_they_coincide() -> None:
    before, after = _nvme_with(), _nvme_with(warning_temp_time=2, temperature=80)
    hot = drive_checks.hot({"nvme0n1": change(before, after)}, mixed=True)
    assert hot is not None and hot.code == Code.DRIVE_HOT
    assert "nvme0n1: 2 min above its warning temperature, highest 80 °C read" in hot.message
    assert "(mixed-speeds) coincides with it" in hot.message


def _sensor(root: Path, name: str, pattern: str, millidegrees: str) -> Path:
    folder = root / name / pattern
    folder.mkdir(parents=True)
    (folder / "temp1_input").write_text(millidegrees)
    return folder / "temp1_input"


def test_hwmon_sensors_are_found_for_nvme_and_sata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telemetry, "SYS_BLOCK", tmp_path)
    sata = _sensor(tmp_path, "sda", "device/hwmon/hwmon2", "38000")
    nvme = _sensor(tmp_path, "nvme0n1", "device/hwmon4", "41850")
    (tmp_path / "vda" / "device").mkdir(parents=True)  # a disk without a sensor
    found = telemetry.hwmon_sensors(["sda", "nvme0n1", "vda", "absent"])
    assert found == {"sda": sata, "nvme0n1": nvme}


@pytest.mark.slow
def test_the_telemetry_records_a_drives_temperature_each_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telemetry, "SYS_BLOCK", tmp_path)
    _sensor(tmp_path, "nvme0n1", "device/hwmon4", "41850\n")
    with telemetry.Sampler((0,), ("nvme0n1",)) as sampler:
        time.sleep(1.2)
    temps = sampler.telemetry().series("nvme0n1", "temp_c")
    assert temps and {value for _, value in temps} == {41.85}
