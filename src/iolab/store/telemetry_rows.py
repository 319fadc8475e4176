"""A case's telemetry as the store keeps it: one row per figure per second, and the CPUs and
devices watched (with the ramp left out of the means) as JSON on the case's row."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from iolab.errors import StoreError
from iolab.model.telemetry import Other, Telemetry, TelemetryPoint
from iolab.store.check import RESTORE


def watched(telemetry: Telemetry | None) -> str | None:
    """The case row's `watched` column: None for a case without telemetry."""
    if telemetry is None:
        return None
    out: dict[str, object] = {
        "cpus": list(telemetry.cpus),
        "devices": list(telemetry.devices),
        "skip_ms": telemetry.skip_ms,
    }
    if telemetry.window_ms is not None:
        out["window_ms"] = list(telemetry.window_ms)
    if telemetry.others_cpu_pct is not None:
        out["others_cpu_pct"] = telemetry.others_cpu_pct
        out["others"] = [
            [o.pid, o.name, o.cpu_pct, o.read_mbps, o.write_mbps] for o in telemetry.others
        ]
    return json.dumps(out)


def points(telemetry: Telemetry) -> list[tuple[int, str, str, float]]:
    return [(p.time_ms, p.source, p.metric, p.value) for p in telemetry.points]


def telemetry(
    text: str, rows: Sequence[tuple[int, str, str, float]], where: Path | str
) -> Telemetry:
    """A stored case's telemetry, from its `watched` column and its rows (of the database
    `where`, named in the error if they do not decode)."""
    try:
        found = json.loads(text)
        cpus = tuple(int(c) for c in found["cpus"])
        devices = tuple(str(d) for d in found["devices"])
        skip = int(found.get("skip_ms", 0))
        kept = tuple(TelemetryPoint(int(t), str(s), str(m), float(v)) for t, s, m, v in rows)
        window = found.get("window_ms")
        window_ms = (int(window[0]), int(window[1])) if window is not None else None
        share = found.get("others_cpu_pct")
        others = tuple(
            Other(int(p), str(n), float(c), float(r), float(w))
            for p, n, c, r, w in found.get("others", [])
        )
    except (ValueError, TypeError, KeyError, AttributeError, IndexError):
        raise StoreError(
            f"{where} is damaged (a case's telemetry does not decode); {RESTORE}"
        ) from None
    return Telemetry(
        cpus,
        devices,
        kept,
        skip,
        window_ms,
        others=others,
        others_cpu_pct=float(share) if share is not None else None,
    )
