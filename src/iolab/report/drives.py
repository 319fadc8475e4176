"""A drive's own account in words: one line per drive (`iolab env`, the report's environment
section), and what moved over a set-up's cases. Figures the drive does not report are left
out, never shown as 0."""

from __future__ import annotations

from iolab.model.drive import DriveChange, DriveHealth
from iolab.units import decimal_bytes


def _bytes(value: int) -> str:
    return f"{decimal_bytes(value)} ({value:,} bytes)"


def said(health: DriveHealth) -> str:
    """'INTEL SSDPE2KX080T8, firmware X, 8.0 TB, 29 °C, written 94.7 TB (...), 0% used, ...'."""
    h = health
    parts = [h.model or "model not reported"]
    parts += [f"firmware {h.firmware}"] if h.firmware else []
    parts += [decimal_bytes(h.capacity_bytes)] if h.capacity_bytes is not None else []
    if h.temperature_c is not None:
        sensors = f" (sensors {', '.join(f'{t} °C' for t in h.sensors_c)})" if h.sensors_c else ""
        parts.append(f"{h.temperature_c} °C{sensors}")
    if h.host_written_bytes is not None:
        parts.append(f"written {_bytes(h.host_written_bytes)} in its life")
    parts += [f"read {decimal_bytes(h.host_read_bytes)}"] if h.host_read_bytes is not None else []
    if h.nand_written_bytes is not None:
        parts.append(f"flash written {decimal_bytes(h.nand_written_bytes)}")
    parts += (
        [f"{h.percentage_used}% of its endurance used"] if h.percentage_used is not None else []
    )
    if h.available_spare_pct is not None:
        least = (
            f" (threshold {h.spare_threshold_pct}%)" if h.spare_threshold_pct is not None else ""
        )
        parts.append(f"spare {h.available_spare_pct}%{least}")
    parts += [f"{h.power_on_hours:,} hours on"] if h.power_on_hours is not None else []
    parts += [f"{n} {name}" for name, n in h.errors.items()]
    if h.unsafe_shutdowns is not None:
        parts.append(f"{h.unsafe_shutdowns} unsafe shutdowns")
    if h.warning_temp_minutes:
        parts.append(f"{h.warning_temp_minutes:,} min above its warning temperature")
    parts += ["throttling now"] if h.throttling else []
    if h.smart_passed is not None:
        parts.append("SMART passed" if h.smart_passed else "SMART FAILED")
    return ", ".join(parts)


def moved(change: DriveChange) -> str:
    """'wrote 2.1 GB (write amplification 1.20), 31 °C -> +9 °C, 3 min above warning, ...'."""
    c = change
    parts = [f"wrote {_bytes(c.written_bytes)}"] if c.written_bytes is not None else []
    amplification = c.write_amplification
    if amplification is not None:
        parts.append(f"write amplification {amplification:.2f} (flash/host)")
    if c.temperature_rise_c is not None:
        parts.append(f"temperature {c.temperature_rise_c:+d} °C (highest {c.highest_c} °C)")
    if c.warning_temp_minutes:
        parts.append(f"{c.warning_temp_minutes} min added above its warning temperature")
    if c.critical_temp_minutes:
        parts.append(f"{c.critical_temp_minutes} min added above its critical temperature")
    if c.throttle_events or c.throttle_s or c.throttling:
        parts.append("throttled")
    parts += [f"{name} +{n}" for name, n in c.errors.items()]
    return ", ".join(parts) or "nothing it reports moved"
