"""Turn driver snapshots into the metrics of hostlib.metrics.

Counting rules (docs/metrics.md):
- samples are per-channel samples (one complex sample per channel per tick), so
  throughput_sps compares directly with the requested rate_sps;
- throughput and frames/s are measured over the window after warm-up;
- every error counter (missing, overruns, pattern errors ...) counts over the
  whole stream, warm-up included: nothing measured is thrown away;
- a counter the driver cannot know (null or absent in its stats) is "not measured":
  the metric is left out, never reported as 0, and a threshold on it fails saying so;
- longest_gap_s counts to the end of the window: a stream that went quiet before
  the window closed has that silence as its gap;
- what the simulator injected (injected_*) is reported beside what was detected.
"""
from __future__ import annotations

import dataclasses
import resource
from pathlib import Path
from typing import Any

from ..drivers.base import Snapshot
from ..dsl.case import LEGS
from ..metrics import HOST_LIMITED_ALL_CPUS_PERCENT, HOST_LIMITED_RX_THREAD_PERCENT

# A device that sends nothing for this long mid-run (after its first frame, before its
# end of burst) is dead or stuck: the case ends as ERROR (device) (docs/drivers.md).
SILENCE_LIMIT_S = 1.0
SILENCE_LIMIT_FRAMES = 10   # ... or this many frame periods, when that is longer

# The simulator's own record of what it injected (sim stats), reported as metrics.
INJECTED_KEYS = ("injected_drop_frames", "injected_corrupt_samples", "injected_duplicate_frames",
                 "injected_reorder_frames")

def leg_case(case: Any, leg: str) -> Any:
    """The case as one of its streams sees it: an rx+tx case's RX or TX leg is measured
    exactly as an rx or a tx case (the engine's one RX path and one TX path)."""
    return case if case.direction == leg else dataclasses.replace(case, direction=leg)


def legs_of(case: Any) -> tuple[str, ...]:
    """The streams of a case's direction (hostlib.dsl.case.LEGS)."""
    return LEGS.get(case.direction, (case.direction,))


def leg_metrics(metrics: dict[str, float], leg: str) -> dict[str, float]:
    """One leg's metrics of an rx+tx result (stored as '<leg>.<metric>')."""
    prefix = leg + "."
    return {k[len(prefix):]: v for k, v in metrics.items() if k.startswith(prefix)}


# rx+tx: what the case's own (unqualified) metrics are made of its legs' — both
# directions together (the published "both directions" figure is the sum).
_SUMMED = ("throughput_sps", "throughput_msps", "throughput_Bps", "frames_per_s", "samples_expected",
           "samples_received", "samples_sent", "frames_received", "frames_sent", "seq_errors", "missing_frames",
           "dropped_samples", "duplicate_frames", "reordered_frames", "malformed_frames", "pattern_errors",
           "overruns")
_WORST = ("throughput_ratio",)   # the lower leg


def combine_legs(legs: dict[str, dict[str, float]]) -> dict[str, float]:
    """The metrics of an rx+tx run: each leg's as '<leg>.<name>', and the case's own
    names for both together (sums; throughput_ratio the worse leg; the rest the most
    of either, e.g. duration_s, host CPU, underruns, which are the device's)."""
    out: dict[str, float] = {f"{leg}.{k}": v for leg, m in legs.items() for k, v in m.items()}
    names = dict.fromkeys(k for m in legs.values() for k in m)
    for name in names:
        values = [m[name] for m in legs.values() if name in m]
        if name in _SUMMED:
            out[name] = float(sum(values))
        elif name in _WORST:
            out[name] = float(min(values))
        else:
            out[name] = float(max(values))
    return out


def bytes_per_tick(case: Any) -> int:
    """Payload bytes of one tick: one sample on every channel."""
    return case.bytes_per_sample * int(case.channels)


def cpu_seconds() -> float:
    """CPU time of this process and its threads (the native loops run here)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def udp_rcvbuf_errors() -> int | None:
    """Kernel-wide UDP receive-buffer drops (Udp: RcvbufErrors in /proc/net/snmp)."""
    try:
        lines = Path("/proc/net/snmp").read_text().splitlines()
    except OSError:
        return None
    udp = [line.split() for line in lines if line.startswith("Udp:")]
    if len(udp) < 2:
        return None
    table = dict(zip(udp[0][1:], udp[1][1:], strict=True))
    value = table.get("RcvbufErrors")
    return int(value) if value is not None else None


def cpu_busy_ticks() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs from /proc/stat, None where unreadable."""
    try:
        first = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    vals = [int(v) for v in first[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)  # idle + iowait
    return sum(vals) - idle, sum(vals)


def _num(d: dict, key: str) -> float:
    v = d.get(key, 0)
    return float(v or 0)


def _measured(d: dict, key: str) -> float | None:
    """A counter, or None when the driver did not measure it (null or absent)."""
    v = d.get(key)
    return None if v is None else float(v)


def silence_limit_s(case: Any) -> float:
    """How long a stream may stay silent mid-run before the device counts as dead:
    derived from the interval at which a live stream delivers, so a slow stream (low
    rate, large frames) is never flagged. Over USB a packed IN transfer completes only
    when full, so the delivery unit is the transfer (docs/usb.md), not the frame."""
    frames_per_delivery = 1
    t = getattr(case, "transport", None)
    if t is not None and t.kind == "usb":
        transfer_bytes = int(vars(t).get("transfer_bytes") or case.frame_bytes)   # resolved by the loader
        frames_per_delivery = max(1, transfer_bytes // int(case.frame_bytes))
    frame_period_s = case.samples_per_frame / float(case.rate_sps)
    return max(SILENCE_LIMIT_S, SILENCE_LIMIT_FRAMES * frames_per_delivery * frame_period_s)


def silence_error(case: Any, snap: Snapshot) -> str | None:
    """What went quiet and for how long, when a started stream has been silent longer
    than silence_limit_s (RX: no frame received before end of burst; TX: no send
    accepted by the device); None while the stream is alive."""
    limit_s = silence_limit_s(case)
    sides = []
    if case.direction in ("rx", "loopback", "rx+tx") and not snap.host_rx.get("eob_received"):
        sides.append(("received no samples", snap.host_rx.get("last_frame_ns")))
    if case.direction in ("tx", "loopback", "rx+tx"):
        sides.append(("accepted no samples", snap.host_tx.get("last_send_ns")))
    for what, last_ns in sides:
        if last_ns and snap.taken_ns - int(last_ns) > limit_s * 1e9:
            silent_s = (snap.taken_ns - int(last_ns)) / 1e9
            return (f"{what} for {silent_s:.2f} s mid-run (a live device is silent at most "
                    f"{limit_s:g} s: max({SILENCE_LIMIT_S:g} s, {SILENCE_LIMIT_FRAMES} frame periods))")
    return None


SILENCE_CONFIRM_S = 0.05   # the second look at a silence, after the host's own threads have had time to run


class SilenceWatch:
    """silence_error, confirmed by a second look: a silence counts only when a later
    check (at least SILENCE_CONFIRM_S on) still sees the same last frame. A machine-wide
    stall freezes the host's receiver as well as the check, and when both run again the
    receiver drains the backlog at once: that is a busy host, not a silent device."""

    def __init__(self, case: Any):
        self.case = case
        self._suspect: tuple[Any, Any] | None = None

    @property
    def suspect(self) -> bool:
        """A silence was seen once and awaits its second look."""
        return self._suspect is not None

    def check(self, snap: Snapshot) -> str | None:
        silent = silence_error(self.case, snap)
        if not silent:
            self._suspect = None
            return None
        mark = (snap.host_rx.get("last_frame_ns"), snap.host_tx.get("last_send_ns"))
        if self._suspect != mark:
            self._suspect = mark
            return None
        return silent


def received_payload_bytes(case: Any, snap: Snapshot) -> float:
    """Payload bytes that reached the receiving end of the case's stream."""
    if case.direction == "tx":
        return _num(snap.device, "tx_payload_bytes_received") or (
            _num(snap.device, "tx_samples_received") * bytes_per_tick(case)
        )
    return _num(snap.host_rx, "payload_bytes_received")


def received_frames(case: Any, snap: Snapshot) -> float:
    if case.direction == "tx":
        return _num(snap.device, "tx_frames_received")
    return _num(snap.host_rx, "frames_received")


def window_edge_ns(case: Any, snap: Snapshot) -> int:
    """When the counters of `snap` were true.

    For a host receiver that is the arrival of the last frame counted (so the
    window holds whole frames and a 2 ms frame cannot move a 1.5 s measurement
    by 0.1 %), unless the stream has stalled for more than two frame periods:
    then it is the moment the counters were read, so a stall lowers throughput.
    """
    if case.direction == "tx":
        return snap.taken_ns
    last = int(snap.host_rx.get("last_frame_ns") or 0)
    frame_period_ns = case.samples_per_frame / float(case.rate_sps) * 1e9
    if last and 0 <= snap.taken_ns - last <= 2 * frame_period_ns:
        return last
    return snap.taken_ns


def expected_samples(case: Any, final: Snapshot) -> float:
    """What the stream should have carried, comparable with samples_received (both
    count the whole stream): RX, the rate over the span from the first to the last
    received frame (plus that frame's own period); TX, what the host sent."""
    if case.direction == "tx":
        return _num(final.host_tx, "payload_bytes_sent") / bytes_per_tick(case)
    first, last = _num(final.host_rx, "first_frame_ns"), _num(final.host_rx, "last_frame_ns")
    if not first or last < first:
        return 0.0
    return round((last - first) / 1e9 * float(case.rate_sps) + case.samples_per_frame)


def series_row(case: Any, prev: Snapshot, cur: Snapshot, t0_ns: int) -> dict[str, float]:
    """One per-second row: rates over the last interval, error counts in it (rx+tx:
    both legs together, and each as '<leg>.<name>')."""
    if case.direction == "rx+tx":
        legs = {leg: _series_row(leg_case(case, leg), prev, cur, t0_ns) for leg in legs_of(case)}
        row = combine_legs(legs)
        return {"t_s": legs["rx"]["t_s"], **{k: v for k, v in row.items() if k != "t_s" and not k.endswith(".t_s")}}
    return _series_row(case, prev, cur, t0_ns)


def _series_row(case: Any, prev: Snapshot, cur: Snapshot, t0_ns: int) -> dict[str, float]:
    dt = max((cur.taken_ns - prev.taken_ns) / 1e9, 1e-9)
    d_bytes = received_payload_bytes(case, cur) - received_payload_bytes(case, prev)
    row = {
        "t_s": round((cur.taken_ns - t0_ns) / 1e9, 3),
        "throughput_sps": d_bytes / bytes_per_tick(case) / dt,
        "frames_per_s": (received_frames(case, cur) - received_frames(case, prev)) / dt,
    }
    row["throughput_ratio"] = row["throughput_sps"] / float(case.rate_sps)
    for name in ("missing_frames", "overruns", "pattern_errors", "seq_errors"):
        # Every row has every column; a counter the driver does not measure is NaN here
        # (the outbox leaves NaN out) and absent from the case's metrics.
        now, before = _error_total(case, cur, name), _error_total(case, prev, name)
        row[name] = now - before if now is not None and before is not None else float("nan")
    row["underruns"] = _num(cur.device, "underruns") - _num(prev.device, "underruns")
    return row


def progress_row(case: Any, row: dict[str, float], snap: Snapshot) -> dict[str, float]:
    """What a live progress display shows: the series row plus the counters as the verdict
    counts them (over the whole stream, warm-up included), the frames so far, MB/s and
    the requested window, so that the live view and the verdict never disagree."""
    out = dict(row)
    legs = [leg_case(case, leg) for leg in legs_of(case)]
    for name in ("missing_frames", "overruns", "pattern_errors", "seq_errors"):
        # not measured: nothing to show live
        out["total_" + name] = sum(_error_total(c, snap, name) or 0.0 for c in legs)
    out["total_underruns"] = _num(snap.device, "underruns")
    out["total_frames"] = sum(received_frames(c, snap) for c in legs) + out["total_missing_frames"]
    out["throughput_Bps"] = row["throughput_sps"] * bytes_per_tick(case)
    out["window_s"] = float(case.duration_s)
    return out


def _error_total(case: Any, snap: Snapshot, name: str) -> float | None:
    """A counter at the receiving end of the stream: RX, the host receiver; TX, the
    device's own receiver (tx_<name>); loopback, both legs (a device that does not
    report its TX leg leaves the RX leg, which sees what the TX leg lost as pattern
    errors). None when the receiving end did not measure it."""
    if name == "overruns" and case.direction == "tx":
        return 0.0  # overflow is an RX event: a TX-only stream has nothing that can overflow
    if case.direction == "tx":
        return _measured(snap.device, "tx_" + name)
    host = _measured(snap.host_rx, name)
    if host is None or case.direction == "rx":
        return host
    device = _measured(snap.device, "tx_" + name)
    return host + (device or 0.0)


def longest_gap_ns(case: Any, window_end: Snapshot, final: Snapshot) -> float:
    """The longest time without a frame, counting the silence from the last frame to
    the end of the window (a device that stopped sending has that as its gap)."""
    gap = _num(final.host_rx, "longest_gap_ns")
    last = _num(window_end.host_rx, "last_frame_ns")
    if last and not window_end.host_rx.get("eob_received"):
        gap = max(gap, window_end.taken_ns - last)
    return gap


def compute_metrics(case: Any, **kwargs: Any) -> dict[str, float]:
    """The metrics of a run (rx+tx: each leg measured as its own rx or tx case, then
    combine_legs)."""
    if case.direction == "rx+tx":
        return combine_legs({leg: _compute_metrics(leg_case(case, leg), **kwargs) for leg in legs_of(case)})
    return _compute_metrics(case, **kwargs)


def _compute_metrics(
    case: Any,
    *,
    started_ns: int,
    window_start: Snapshot,
    window_end: Snapshot,
    final: Snapshot,
    cpu_s: float,
    rcvbuf_errors: int | None,
    cpu_ticks: tuple[tuple[int, int] | None, tuple[int, int] | None] = (None, None),
) -> dict[str, float]:
    tick_bytes = bytes_per_tick(case)
    rate = float(case.rate_sps)
    window_s = max((window_edge_ns(case, window_end) - window_edge_ns(case, window_start)) / 1e9, 1e-9)
    d_bytes = received_payload_bytes(case, window_end) - received_payload_bytes(case, window_start)
    d_frames = received_frames(case, window_end) - received_frames(case, window_start)
    m: dict[str, float] = {}
    m["duration_s"] = window_s
    m["samples_expected"] = expected_samples(case, final)
    m["samples_received"] = received_payload_bytes(case, final) / tick_bytes
    m["frames_received"] = received_frames(case, final)
    if case.direction == "tx":
        m["samples_sent"] = _num(final.host_tx, "payload_bytes_sent") / tick_bytes
        m["frames_sent"] = _num(final.host_tx, "frames_sent")
    else:
        m["samples_sent"] = _num(final.device, "samples_sent")
        m["frames_sent"] = _num(final.device, "frames_sent")
    m["throughput_sps"] = d_bytes / tick_bytes / window_s
    m["throughput_msps"] = m["throughput_sps"] / 1e6
    m["throughput_Bps"] = d_bytes / window_s
    m["throughput_ratio"] = m["throughput_sps"] / rate
    m["frames_per_s"] = d_frames / window_s
    for name in ("seq_errors", "missing_frames", "dropped_samples", "duplicate_frames",
                 "reordered_frames", "malformed_frames", "pattern_errors", "overruns"):
        value = _error_total(case, final, name)
        if value is not None:
            m[name] = value
    for name in INJECTED_KEYS:
        if final.device.get(name) is not None:
            m[name] = float(final.device[name])
    m["underruns"] = _num(final.device, "underruns")
    m["late_commands"] = _num(final.device, "late_commands")
    m["timeouts"] = _num(final.host_rx, "timeouts")
    if case.direction in ("rx", "loopback") and _num(final.host_rx, "latency_count") > 0:
        for q in ("p50", "p99", "p999", "max"):
            m[f"latency_{q}_s"] = _num(final.host_rx, f"latency_{q}_ns") / 1e9
    if case.direction in ("rx", "loopback"):
        first = _num(final.host_rx, "first_frame_ns")
        if first:
            m["time_to_first_sample_s"] = max(first - started_ns, 0) / 1e9
        m["longest_gap_s"] = longest_gap_ns(case, window_end, final) / 1e9
    m["host_cpu_percent"] = 100.0 * cpu_s / window_s
    if rcvbuf_errors is not None:
        m["udp_rcvbuf_errors"] = float(rcvbuf_errors)
    if "dropped_samples" in m:
        lost = m["dropped_samples"]
        m["drop_ratio"] = lost / (m["samples_received"] + lost) if (m["samples_received"] + lost) > 0 else 0.0
    # Is the rig itself the limit? Receive-thread CPU over the window, and all CPUs.
    host_side = window_end.host_rx if case.direction in ("rx", "loopback") else window_end.host_tx
    host_side0 = window_start.host_rx if case.direction in ("rx", "loopback") else window_start.host_tx
    if "thread_cpu_ns" in host_side:
        raw_window_s = max((window_end.taken_ns - window_start.taken_ns) / 1e9, 1e-9)
        m["host_rx_cpu_percent"] = (
            100.0 * (_num(host_side, "thread_cpu_ns") - _num(host_side0, "thread_cpu_ns")) / 1e9 / raw_window_s)
    t0, t1 = cpu_ticks
    if t0 is not None and t1 is not None and t1[1] > t0[1]:
        m["host_cpu_busy_percent"] = 100.0 * (t1[0] - t0[0]) / (t1[1] - t0[1])
    lossy = (m.get("missing_frames", 0) > 0 or m.get("overruns", 0) > 0 or m["underruns"] > 0
             or m["throughput_ratio"] < 0.99)
    saturated = (m.get("host_rx_cpu_percent", 0.0) >= HOST_LIMITED_RX_THREAD_PERCENT
                 or m.get("host_cpu_busy_percent", 0.0) >= HOST_LIMITED_ALL_CPUS_PERCENT)
    m["host_limited"] = 1.0 if (lossy and saturated) else 0.0
    warnings = host_warnings(final)
    m["socket_buffer_capped"] = 1.0 if any("buffer" in w for w in warnings) else 0.0
    return m


def host_warnings(snap: Snapshot) -> list[str]:
    """Set-up warnings the host streams reported (e.g. a socket buffer capped by rmem_max)."""
    out: list[str] = []
    for side in (snap.host_rx, snap.host_tx):
        for w in side.get("warnings") or []:
            if w not in out:
                out.append(str(w))
    return out
