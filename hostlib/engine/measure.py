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

from ..counters import Snapshot, TcpInfo, counter, measured
from ..dsl.case import LEGS, Case
from ..link.report import data_side
from ..metrics import HOST_LIMITED_ALL_CPUS_PERCENT, HOST_LIMITED_RX_THREAD_PERCENT
from ..results.schema import BlockCount, StudyRow
from ..transports import stream_config, stream_defaults
from ..transports.config import Direction, UdpTransport
from .study import study_rows

# The simulator's own record of what it injected (sim stats), reported as metrics.
INJECTED_KEYS = ("injected_drop_frames", "injected_corrupt_samples", "injected_duplicate_frames",
                 "injected_reorder_frames")

def leg_case(case: Case, leg: Direction) -> Case:
    """The case as one of its streams sees it: an rx+tx case's RX or TX leg is measured
    exactly as an rx or a tx case (the engine's one RX path and one TX path)."""
    return case if case.direction == leg else dataclasses.replace(case, direction=leg)


def legs_of(case: Case) -> tuple[Direction, ...]:
    """The streams of a case's direction (hostlib.dsl.case.LEGS)."""
    return LEGS.get(case.direction, (case.direction,))


# rx+tx: what the case's own (unqualified) metrics are made of its legs' — both
# directions together (the published "both directions" figure is the sum).
_SUMMED = ("throughput_sps", "throughput_msps", "throughput_Bps", "frames_per_s", "sent_frames_per_s",
           "samples_expected", "samples_received", "samples_sent", "frames_received", "frames_sent", "seq_errors",
           "missing_frames", "dropped_samples", "duplicate_frames", "reordered_frames", "malformed_frames",
           "pattern_errors", "overruns")
_WORST = ("throughput_ratio",)   # the lower leg


def combine_legs(legs: dict[str, dict[str, float]]) -> dict[str, float]:
    """The metrics of an rx+tx run under the case's own names, both legs together (sums;
    throughput_ratio the worse leg; the rest the most of either, e.g. duration_s, host
    CPU, underruns, which are the device's). Each leg's own stay in CaseResult.legs."""
    out: dict[str, float] = {}
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


def frames_per_delivery(case: Case) -> int:
    """Frames that reach the receiving end at once: over USB a packed IN transfer
    completes only when full, so the delivery unit is the transfer (docs/usb.md)."""
    if case.transport.kind != "usb":
        return 1
    transfer_bytes = int(stream_config(case)["transport"]["transfer_bytes"])
    return max(1, transfer_bytes // int(case.frame_bytes))


def link_frames_in_flight(case: Case) -> int:
    """Frames the link itself holds between device and host: over USB the transfers in
    flight (N deliveries); a UDP or shm link's buffer is the host's, drained as it reads."""
    if case.transport.kind != "usb":
        return 0
    return int(stream_config(case)["transport"]["transfers"]) * frames_per_delivery(case)


def fed_by_host(case: Case, snap: Snapshot) -> bool:
    """The host's sender feeds what the window counts at the stream's receiving end:
    loopback (the looped frames come back as fast as the host sent them), and tx or
    rx+tx's TX leg on a device that does not report its sample clock's consumption
    (played_samples)."""
    return any(leg == "loopback" or (leg == "tx" and played_samples(snap) is None) for leg in legs_of(case))


def played_samples(snap: Snapshot) -> tuple[float, int] | None:
    """(samples the device's TX sample clock consumed, the monotonic ns that was true),
    or None when the device does not report it (a radio, the RTL core). A TX window
    counts these: a host's lead (frames sent ahead into the device FIFO, a socket
    buffer, USB transfers in flight) lands at bus speed but is played at the rate."""
    at_ns = measured(snap.device, "tx_played_ns")
    samples = measured(snap.device, "tx_samples_played")
    if not at_ns or samples is None:
        return None
    return samples, int(at_ns)


def sender_lead_frames(case: Case, snap: Snapshot) -> float:
    """How many frames the host's sender is ahead of the rate's clock (started at its
    first send): it grows while the sender fills what it may have in flight (a device
    FIFO, USB transfers, which a USB sender fills at bus speed), shrinks while the
    sender is descheduled, and stays put while it runs at the rate."""
    start_ns = counter(snap.host_tx, "start_ns")
    due = (snap.taken_ns - start_ns) / 1e9 * float(case.rate_sps) / case.samples_per_frame if start_ns else 0.0
    return counter(snap.host_tx, "frames_sent") - due


def throughput_ceiling(case: Case, window_s: float, edge_slack_s: float = 0.0) -> float:
    """The highest throughput_ratio a window can show: the rate plus one delivery (a
    frame, a USB transfer) counted whole at its edge, plus how far the window's edges
    could be from the moment its counters were true (edge_slack_s, measured by the run:
    a host thread that was descheduled at an edge). Above it, the window counted
    samples that were not its own: an accounting error, not a measurement."""
    delivery_s = frames_per_delivery(case) * case.samples_per_frame / float(case.rate_sps)
    return 1.0 + (delivery_s + edge_slack_s) / max(window_s, 1e-9)


def edge_slack_s(case: Case, window_start: Snapshot, window_end: Snapshot, final: Snapshot) -> float:
    """How far a window's edges can be off, as the run measured it. A host receiver's
    edge is its last frame's arrival: behind by at most its longest wait between frames
    (a stall), never more. A device's counters (TX) were true between the poll's start
    and end (the time each edge's poll took), and frames the host had sent but the
    device not yet counted at the start (its receiver counts in batches) land inside.
    A device-paced RX stream may also drain inside the window what the device produced
    before it: at most its FIFO's measured peak plus what its link holds in flight (USB:
    the transfers in flight), all of which arrives as fast as the host takes it."""
    frame_s = case.samples_per_frame / float(case.rate_sps)
    if case.direction == "rx":
        backlog_frames = counter(final.device, "fifo_peak_frames") + link_frames_in_flight(case)
        return max(counter(final.host_rx, "longest_gap_ns") / 1e9, backlog_frames * frame_s)
    if case.direction == "loopback":
        # A device that echoes at its sample clock (the RTL core) catches up after its own
        # thread was descheduled: what fell due meanwhile arrives at once, at most its
        # longest pause (producer_longest_gap_ns) late.
        return (counter(final.host_rx, "longest_gap_ns") + counter(final.device, "producer_longest_gap_ns")) / 1e9
    polls_s = sum((s.taken_ns - s.asked_ns) / 1e9 for s in (window_start, window_end) if s.asked_ns is not None)

    def in_flight(s: Snapshot) -> float:
        return counter(s.host_tx, "frames_sent") - counter(s.device, "tx_frames_received")

    landed = max(0.0, in_flight(window_start) - in_flight(window_end))
    return polls_s + landed * frame_s


# The metrics a window's throughput accounting makes.
THROUGHPUT_METRICS = ("throughput_sps", "throughput_msps", "throughput_Bps", "throughput_ratio", "frames_per_s")


def overcounted(case: Case, metrics: dict[str, float], leg_metrics: dict[str, dict[str, float]],
                window_start: Snapshot, window_end: Snapshot, final: Snapshot) -> str | None:
    """Why a run's throughput cannot be true (above throughput_ceiling), or None;
    `leg_metrics` is each leg's own (rx+tx), empty for one stream."""
    legs = ({leg: (leg_case(case, leg), leg_metrics.get(leg, {})) for leg in legs_of(case)}
            if case.direction == "rx+tx" else {"": (case, metrics)})
    for leg, (leg_c, m) in legs.items():
        ratio, window_s = m.get("throughput_ratio"), m.get("duration_s")
        if ratio is None or window_s is None:
            continue
        slack_s = edge_slack_s(leg_c, window_start, window_end, final)
        ceiling = throughput_ceiling(leg_c, window_s, slack_s)
        if ratio > ceiling:
            return (f"{leg + ' ' if leg else ''}throughput {ratio:.2%} of the rate over a {window_s:.3f} s window is "
                    f"more than the window can hold ({ceiling:.2%}: the rate plus one delivery of "
                    f"{frames_per_delivery(case)} frame(s) and {slack_s * 1e3:.1f} ms the edges may be off); "
                    "the window counted samples that were not its own")
    return None


def bytes_per_tick(case: Case) -> int:
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


def _tx_window(case: Case, start: Snapshot, end: Snapshot) -> tuple[float, float] | None:
    """A TX window's (samples the device played, seconds of its sample clock), or None
    when the device does not report what it played (then received frames count)."""
    if case.direction != "tx":
        return None
    p0, p1 = played_samples(start), played_samples(end)
    if p0 is None or p1 is None:
        return None
    return p1[0] - p0[0], max((p1[1] - p0[1]) / 1e9, 1e-9)


def received_payload_bytes(case: Case, snap: Snapshot) -> float:
    """Payload bytes that reached the receiving end of the case's stream."""
    if case.direction == "tx":
        return counter(snap.device, "tx_payload_bytes_received") or (
            counter(snap.device, "tx_samples_received") * bytes_per_tick(case)
        )
    return counter(snap.host_rx, "payload_bytes_received")


def received_frames(case: Case, snap: Snapshot) -> float:
    if case.direction == "tx":
        return counter(snap.device, "tx_frames_received")
    return counter(snap.host_rx, "frames_received")


def window_edge_ns(case: Case, snap: Snapshot) -> int:
    """When the counters of `snap` were true.

    For a host receiver that is the arrival of the last frame counted (so the
    window holds whole frames and a 2 ms frame cannot move a 1.5 s measurement
    by 0.1 %), unless the stream has stalled for more than two frame periods:
    then it is the moment the counters were read, so a stall lowers throughput.
    "Read" is the receiver's own stamp (read_ns), not the poll's end (taken_ns): a
    poll that also waits on the device, or a thread descheduled after the read,
    ends later, and a window edge put there would hold frames from before it.
    """
    if case.direction == "tx":
        return snap.taken_ns
    last = int(snap.host_rx.get("last_frame_ns") or 0)
    read = int(snap.host_rx.get("read_ns") or snap.taken_ns)
    frame_period_ns = case.samples_per_frame / float(case.rate_sps) * 1e9
    if last and read - last <= 2 * frame_period_ns:
        return last
    return read


def expected_samples(case: Case, final: Snapshot) -> float:
    """What the stream should have carried, comparable with samples_received (both
    count the whole stream): RX, the rate over the span from the first to the last
    received frame (plus that frame's own period); TX, what the host sent."""
    if case.direction == "tx":
        return counter(final.host_tx, "payload_bytes_sent") / bytes_per_tick(case)
    first, last = counter(final.host_rx, "first_frame_ns"), counter(final.host_rx, "last_frame_ns")
    if not first or last < first:
        return 0.0
    return round((last - first) / 1e9 * float(case.rate_sps) + case.samples_per_frame)


def series_row(case: Case, prev: Snapshot, cur: Snapshot, t0_ns: int) -> dict[str, float]:
    """One per-second row: rates over the last interval, error counts in it (rx+tx:
    both legs together, and each as '<leg>.<name>')."""
    if case.direction == "rx+tx":
        legs: dict[str, dict[str, float]] = {
            leg: _series_row(leg_case(case, leg), prev, cur, t0_ns) for leg in legs_of(case)}
        # the series keeps each leg's columns as '<leg>.<name>' (a series row is flat)
        row = combine_legs(legs) | {f"{leg}.{k}": v for leg, m in legs.items() for k, v in m.items() if k != "t_s"}
        return {"t_s": legs["rx"]["t_s"], **{k: v for k, v in row.items() if k != "t_s"}}
    return _series_row(case, prev, cur, t0_ns)


def _series_row(case: Case, prev: Snapshot, cur: Snapshot, t0_ns: int) -> dict[str, float]:
    dt = max((cur.taken_ns - prev.taken_ns) / 1e9, 1e-9)
    d_samples = (received_payload_bytes(case, cur) - received_payload_bytes(case, prev)) / bytes_per_tick(case)
    d_frames = received_frames(case, cur) - received_frames(case, prev)
    played = _tx_window(case, prev, cur)
    if played is not None:
        d_samples, dt = played
        d_frames = d_samples / case.samples_per_frame
    row = {
        "t_s": round((cur.taken_ns - t0_ns) / 1e9, 3),
        "throughput_sps": d_samples / dt,
        "frames_per_s": d_frames / dt,
    }
    row["throughput_ratio"] = row["throughput_sps"] / float(case.rate_sps)
    for name in ("missing_frames", "overruns", "pattern_errors", "seq_errors"):
        # Every row has every column; a counter the driver does not measure is NaN here
        # (the outbox leaves NaN out) and absent from the case's metrics.
        now, before = _error_total(case, cur, name), _error_total(case, prev, name)
        row[name] = now - before if now is not None and before is not None else float("nan")
    row["underruns"] = counter(cur.device, "underruns") - counter(prev.device, "underruns")
    tcp = tcp_metrics(case, cur)   # tcp: the connection second by second (its counters as totals so far)
    for name in ("tcp_rtt_s", "tcp_cwnd_segments", "tcp_retransmits"):
        if name in tcp:
            row[name] = tcp[name]
    return row


def progress_row(case: Case, row: dict[str, float], snap: Snapshot) -> dict[str, float]:
    """What a live progress display shows: the series row plus the counters as the verdict
    counts them (over the whole stream, warm-up included), the frames so far, MB/s and
    the requested window, so that the live view and the verdict never disagree."""
    out = dict(row)
    legs = [leg_case(case, leg) for leg in legs_of(case)]
    for name in ("missing_frames", "overruns", "pattern_errors", "seq_errors"):
        # not measured: nothing to show live
        out["total_" + name] = sum(_error_total(c, snap, name) or 0.0 for c in legs)
    out["total_underruns"] = counter(snap.device, "underruns")
    out["total_frames"] = sum(received_frames(c, snap) for c in legs) + out["total_missing_frames"]
    out["throughput_Bps"] = row["throughput_sps"] * bytes_per_tick(case)
    out["window_s"] = float(case.duration_s)
    if counter(snap.host_tx, "pacing_period_count") > 0:   # a paced sender: its achieved period so far
        for q in ("p50", "p99"):
            out[f"pacing_period_{q}_s"] = counter(snap.host_tx, f"pacing_period_{q}_ns") / 1e9
        out["pacing_sent_late"] = counter(snap.host_tx, "pacing_sent_late")
    return out


def _error_total(case: Case, snap: Snapshot, name: str) -> float | None:
    """A counter at the receiving end of the stream: RX, the host receiver; TX, the
    device's own receiver (tx_<name>); loopback, both legs (a device that does not
    report its TX leg leaves the RX leg, which sees what the TX leg lost as pattern
    errors). None when the receiving end did not measure it."""
    if name == "overruns" and case.direction == "tx":
        return 0.0  # overflow is an RX event: a TX-only stream has nothing that can overflow
    if case.direction == "tx":
        return measured(snap.device, "tx_" + name)
    host = measured(snap.host_rx, name)
    if host is None or case.direction == "rx":
        return host
    device = measured(snap.device, "tx_" + name)
    return host + (device or 0.0)


def longest_gap_ns(case: Case, window_end: Snapshot, final: Snapshot) -> float:
    """The longest time without a frame, counting the silence from the last frame to
    the end of the window (a device that stopped sending has that as its gap)."""
    gap = counter(final.host_rx, "longest_gap_ns")
    last = counter(window_end.host_rx, "last_frame_ns")
    if last and not window_end.host_rx.get("eob_received"):
        gap = max(gap, window_end.taken_ns - last)
    return gap


CpuTicks = tuple[tuple[int, int] | None, tuple[int, int] | None]   # cpu_busy_ticks() at the window's ends


@dataclasses.dataclass(frozen=True)
class Run:
    """What a run measured, for compute_metrics."""

    started_ns: int
    window_start: Snapshot
    window_end: Snapshot
    final: Snapshot
    cpu_s: float
    rcvbuf_errors: int | None
    cpu_ticks: CpuTicks


def compute_metrics(
    case: Case,
    *,
    started_ns: int,
    window_start: Snapshot,
    window_end: Snapshot,
    final: Snapshot,
    cpu_s: float,
    rcvbuf_errors: int | None,
    cpu_ticks: CpuTicks = (None, None),
) -> dict[str, float]:
    """The metrics of a run (rx+tx: both legs together, combine_legs)."""
    run = Run(started_ns, window_start, window_end, final, cpu_s, rcvbuf_errors, cpu_ticks)
    return measure_legs(case, run)[0]


def measure_legs(case: Case, run: Run) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """(the run's metrics, each leg's own): rx+tx measures each leg as its own rx or tx
    case and combines them (CaseResult.metrics, CaseResult.legs); other directions have
    no legs."""
    if case.direction == "rx+tx":
        legs: dict[str, dict[str, float]] = {leg: _compute_metrics(leg_case(case, leg), run) for leg in legs_of(case)}
        return combine_legs(legs), legs
    return _compute_metrics(case, run), {}


def _compute_metrics(case: Case, run: Run) -> dict[str, float]:
    started_ns, window_start, window_end, final = run.started_ns, run.window_start, run.window_end, run.final
    cpu_s, rcvbuf_errors, cpu_ticks = run.cpu_s, run.rcvbuf_errors, run.cpu_ticks
    tick_bytes = bytes_per_tick(case)
    rate = float(case.rate_sps)
    window_s = max((window_edge_ns(case, window_end) - window_edge_ns(case, window_start)) / 1e9, 1e-9)
    d_bytes = received_payload_bytes(case, window_end) - received_payload_bytes(case, window_start)
    d_frames = received_frames(case, window_end) - received_frames(case, window_start)
    played = _tx_window(case, window_start, window_end)
    if played is not None:   # TX: what the device's sample clock consumed in its own time
        window_s = played[1]
        d_bytes = played[0] * tick_bytes
        d_frames = played[0] / case.samples_per_frame
    m: dict[str, float] = {}
    m["duration_s"] = window_s
    m["samples_expected"] = expected_samples(case, final)
    m["samples_received"] = received_payload_bytes(case, final) / tick_bytes
    m["frames_received"] = received_frames(case, final)
    if case.direction == "tx":
        m["samples_sent"] = counter(final.host_tx, "payload_bytes_sent") / tick_bytes
        m["frames_sent"] = counter(final.host_tx, "frames_sent")
    else:
        m["samples_sent"] = counter(final.device, "samples_sent")
        m["frames_sent"] = counter(final.device, "frames_sent")
    m["throughput_sps"] = d_bytes / tick_bytes / window_s
    m["throughput_msps"] = m["throughput_sps"] / 1e6
    m["throughput_Bps"] = d_bytes / window_s
    m["throughput_ratio"] = m["throughput_sps"] / rate
    m["frames_per_s"] = d_frames / window_s
    sender0, sender1 = ((window_start.host_tx, window_end.host_tx) if case.direction == "tx"
                        else (window_start.device, window_end.device))
    sent_window_s = (window_end.taken_ns - window_start.taken_ns) / 1e9
    if sent_window_s > 0:
        m["sent_frames_per_s"] = (counter(sender1, "frames_sent") - counter(sender0, "frames_sent")) / sent_window_s
    for name in ("seq_errors", "missing_frames", "dropped_samples", "duplicate_frames",
                 "reordered_frames", "malformed_frames", "pattern_errors", "overruns"):
        value = _error_total(case, final, name)
        if value is not None:
            m[name] = value
    for name in INJECTED_KEYS:
        injected = measured(final.device, name)
        if injected is not None:
            m[name] = injected
    m["underruns"] = counter(final.device, "underruns")
    m["late_commands"] = counter(final.device, "late_commands")
    m["timeouts"] = counter(final.host_rx, "timeouts")
    if case.direction in ("rx", "loopback") and counter(final.host_rx, "latency_count") > 0:
        for q in ("p50", "p99", "p999", "max"):
            m[f"latency_{q}_s"] = counter(final.host_rx, f"latency_{q}_ns") / 1e9
    if counter(final.host_tx, "pacing_period_count") > 0:   # a paced UDP sender (transport.pacing)
        for q in ("p50", "p99"):
            m[f"pacing_period_{q}_s"] = counter(final.host_tx, f"pacing_period_{q}_ns") / 1e9
        m["pacing_sent_late"] = counter(final.host_tx, "pacing_sent_late")
        m["pacing_schedule_restarts"] = counter(final.host_tx, "pacing_schedule_restarts")
    if case.direction in ("rx", "loopback"):
        first = counter(final.host_rx, "first_frame_ns")
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
            100.0 * (counter(host_side, "thread_cpu_ns") - counter(host_side0, "thread_cpu_ns")) / 1e9 / raw_window_s)
    t0, t1 = cpu_ticks
    if t0 is not None and t1 is not None and t1[1] > t0[1]:
        m["host_cpu_busy_percent"] = 100.0 * (t1[0] - t0[0]) / (t1[1] - t0[1])
    lossy = (m.get("missing_frames", 0) > 0 or m.get("overruns", 0) > 0 or m["underruns"] > 0
             or m["throughput_ratio"] < 0.99)
    saturated = (m.get("host_rx_cpu_percent", 0.0) >= HOST_LIMITED_RX_THREAD_PERCENT
                 or m.get("host_cpu_busy_percent", 0.0) >= HOST_LIMITED_ALL_CPUS_PERCENT)
    m["host_limited"] = 1.0 if (lossy and saturated) else 0.0
    m.update(tcp_metrics(case, final))
    warnings = host_warnings(final)
    m["socket_buffer_capped"] = 1.0 if any("buffer" in w for w in warnings) else 0.0
    return m


def blocks(case: Case, snap: Snapshot) -> list[BlockCount]:
    """The receiver's received / sent per block of 100 000 sequence numbers (rx_check.hpp),
    over the whole stream: TX, the device's receiver; otherwise the host's."""
    raw = snap.device.get("tx_blocks") if case.direction == "tx" else snap.host_rx.get("blocks")
    size = stream_defaults()["block_frames"]
    return [BlockCount(first_seq=i * size, received=int(r), sent=int(s)) for i, (r, s) in enumerate(raw or [])]


def study(case: Case, metrics: dict[str, float], blocks: list[BlockCount], congestion: str) -> list[StudyRow]:
    """A study case's rows beside its blocks (hostlib.link.models): measured, the models
    from its link spec, the lab's figure its `lab:` tag names; [] for other cases."""
    transport = case.stream.transport
    period_s = 0.0
    if isinstance(transport, UdpTransport):
        pacing = transport.pacing
        if pacing.period_ns:
            period_s = pacing.period_ns / 1e9
        elif pacing.rate_bps:
            period_s = case.frame_bytes * 8 / pacing.rate_bps
    return study_rows(spec=case.link, side=data_side(case.direction), transport=transport.kind.value,
                      frame_bytes=int(case.frame_bytes), pacing_period_s=period_s, tags=case.tags,
                      metrics=metrics, blocks=blocks, block_frames=int(stream_defaults()["block_frames"]),
                      congestion=congestion)


def tcp_ends(case: Case, snap: Snapshot) -> tuple[TcpInfo | None, TcpInfo | None]:
    """(sending end, receiving end) of a tcp stream's connection, as far as reported:
    RX the device sends and the host receives, TX the other way round."""
    if case.transport.kind != "tcp":
        return None, None
    host = snap.host_rx if case.direction == "rx" else snap.host_tx
    device = snap.device.get("tcp")
    sender, receiver = (device, host.get("tcp")) if case.direction == "rx" else (host.get("tcp"), device)
    return sender, receiver


def tcp_metrics(case: Case, snap: Snapshot) -> dict[str, float]:
    """transport tcp: the connection's figures (TCP_INFO) from its sending end, and the
    socket buffers each end was granted; empty for other transports or a connection
    neither end reports."""
    sender, receiver = tcp_ends(case, snap)
    m: dict[str, float] = {}
    if sender is not None and sender.get("connected"):
        m["tcp_retransmits"] = float(sender["retransmits"])
        m["tcp_rtt_s"] = sender["rtt_ns"] / 1e9
        m["tcp_rttvar_s"] = sender["rttvar_ns"] / 1e9
        m["tcp_cwnd_segments"] = float(sender["cwnd_segments"])
        m["tcp_sndbuf_bytes"] = float(sender["sndbuf_bytes"])
    if receiver is not None and receiver.get("connected"):
        m["tcp_rcvbuf_bytes"] = float(receiver["rcvbuf_bytes"])
    return m


def tcp_congestion(case: Case, snap: Snapshot) -> str | None:
    """The congestion control the sending end of a tcp stream ran (TCP_CONGESTION)."""
    sender, _ = tcp_ends(case, snap)
    return sender["congestion"] if sender is not None and sender.get("congestion") else None


def host_warnings(snap: Snapshot) -> list[str]:
    """Set-up warnings the host streams reported (e.g. a socket buffer capped by rmem_max)."""
    out: list[str] = []
    for side in (snap.host_rx, snap.host_tx):
        for w in side.get("warnings") or []:
            if w not in out:
                out.append(str(w))
    return out
