"""What the link did, as case metrics (registered in hostlib.metrics): the emulator's
report over the measured window beside what the case configured, for the direction
the case's frames cross: `down` (host -> device) for a tx case, else `up` (device ->
host: rx, and the returning stream of loopback and rx+tx)."""
from __future__ import annotations

from .emulator import DirectionStats, LinkStats
from .spec import LinkSide, LinkSpec

__all__ = ["LINK_COUNTERS", "data_side", "link_metrics"]

# The emulator's counters -> metric names (differences over the window).
LINK_COUNTERS = {
    "packets_in": "link_packets_in", "packets_out": "link_packets_out", "bytes_out": "link_bytes_out",
    "dropped_queue": "link_dropped_queue", "dropped_loss": "link_dropped_loss",
    "duplicated": "link_duplicated", "reordered": "link_reordered",
}


def _count(d: DirectionStats, key: str) -> float:
    value = d.get(key, 0)
    return float(value) if isinstance(value, (int, float)) else 0.0


def data_side(direction: str) -> LinkSide:
    """The link direction a case's frames cross (the one its metrics report)."""
    return "down" if direction == "tx" else "up"


def link_metrics(spec: LinkSpec, start: LinkStats, end: LinkStats, window_s: float,
                 side: LinkSide = "up") -> dict[str, float]:
    """Configured and delivered figures of one direction. start/end: the emulator's
    stats at the window's start and end ({} on netem: the configured figures alone)."""
    d = spec.direction(side)
    out = {
        "link_configured_rate_Bps": d.rate_bps / 8,
        "link_configured_delay_s": d.delay_s,
        "link_configured_loss": d.expected_loss,
    }
    s0, s1 = start.get(side), end.get(side)
    if s0 is None or s1 is None:
        return out
    for key, name in LINK_COUNTERS.items():
        out[name] = _count(s1, key) - _count(s0, key)
    packets_in = out["link_packets_in"]
    out["link_loss_ratio"] = out["link_dropped_loss"] / packets_in if packets_in else 0.0
    out["link_rate_Bps"] = out["link_bytes_out"] / window_s if window_s > 0 else 0.0
    delay, late = s1.get("delay_ns"), s1.get("late_ns")
    if delay is not None and delay["count"]:
        out["link_delay_p50_s"] = delay["p50"] / 1e9
        out["link_delay_p99_s"] = delay["p99"] / 1e9
        out["link_delay_max_s"] = delay["max"] / 1e9
    if late is not None and late["count"]:
        out["link_late_p99_s"] = late["p99"] / 1e9
    read_wait = s1.get("read_wait_ns")
    if read_wait is not None and read_wait["count"]:
        out["link_read_wait_p99_s"] = read_wait["p99"] / 1e9
    return out
