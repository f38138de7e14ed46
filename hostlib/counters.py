"""The counters a stream reports, as the native core writes them, and a Snapshot of them.

Every driver reports the same counters under the same names (docs/architecture.md),
so one case means the same thing on every device. The key sets are the core's:
`RxCheckerCounters` is `counters_json(RxCounters)` (rx_check.cpp), `TxStreamCounters`
is `TxStream::stats`, `SimDeviceStats` is `SimDevice::stats`; tests/test_counters.py
pins each to what the native module returns. A counter a stream cannot know is null
(None): "not measured", never 0.

A leaf module: drivers fill a Snapshot, the engine measures it; neither imports the other
for it.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypedDict

__all__ = ["DeviceStats", "FrameSinkTxCounters", "RxCounters", "Snapshot", "TcpInfo", "TxCounters", "counter",
           "measured"]


class TcpInfo(TypedDict):
    """One end of a tcp connection as the kernel tells it (to_json(TcpInfo), io/tcp.hpp)."""

    connected: bool
    retransmits: int
    rtt_ns: int
    rttvar_ns: int
    cwnd_segments: int
    sndbuf_bytes: int
    rcvbuf_bytes: int
    congestion: str


class RxCheckerCounters(TypedDict, total=False):
    """The core's receive checker (counters_json in rx_check.cpp), one host receiver."""

    frames_received: int
    samples_received: int
    payload_bytes_received: int
    seq_errors: int | None         # None: the receiver cannot see sequence numbers (a radio's API)
    missing_frames: int | None
    dropped_samples: int | None
    duplicate_frames: int | None
    reordered_frames: int | None
    malformed_frames: int | None
    overruns: int | None
    pattern_errors: int | None     # None: the pattern is not checked
    timeouts: int
    first_frame_ns: int
    last_frame_ns: int
    longest_gap_ns: int
    read_ns: int                   # when these counters were read (CLOCK_MONOTONIC, as last_frame_ns)
    latency_p50_ns: int
    latency_p99_ns: int
    latency_p999_ns: int
    latency_max_ns: int
    latency_count: int
    eob_received: bool
    block_frames: int              # sequence numbers per block of `blocks`
    blocks: list[list[int]] | None  # [received, sent] per block of seq (None: no sequence numbers)


class RxCounters(RxCheckerCounters, total=False):
    """A host receiver's stats: the checker's counters and the stream's own (RxStream,
    UsbStream's rx, a radio's rx_counters_json, the GNU Radio host's)."""

    thread_cpu_ns: int
    warnings: list[str]
    tcp: TcpInfo                     # transport tcp: the receiving end
    late_commands: int               # radio streams
    other_errors: int                # radio streams
    rig_source_pattern_errors: int   # host: gnuradio (drivers/flowgraph.py)
    device_pattern_errors: int | None
    flowgraph_samples: int
    flowgraph_gaps: int


class TxStreamCounters(TypedDict, total=False):
    """TxStream::stats (tx_stream.cpp), UsbStream's tx."""

    frames_sent: int
    samples_sent: int
    payload_bytes_sent: int
    send_errors: int
    start_ns: int
    last_send_ns: int
    thread_cpu_ns: int
    gso: bool
    warnings: list[str]


class FrameSinkTxCounters(TxStreamCounters, total=False):
    """TxStream::stats over a frame sink (udp, shm) adds the sink's per-datagram pacer."""

    pacing_period_p50_ns: int      # transport.pacing: achieved period, send start to send start
    pacing_period_p99_ns: int
    pacing_period_count: int       # periods measured (0: unpaced)
    pacing_waits_slept: int        # waits that slept for their bulk, then spun
    pacing_waits_spun: int         # waits that only spun (below the timer's resolution)
    pacing_sent_late: int          # period/rate: datagrams sent at once, their slot passed (catching up)
    pacing_schedule_restarts: int  # period/rate: fresh schedules, the sender too far behind to catch up
    tcp: TcpInfo                   # transport tcp: the sending end


class TxCounters(FrameSinkTxCounters, total=False):
    """A host sender's stats; a radio's (tx_counters_json) add what its API reports."""

    underruns: int
    seq_errors: int
    late_commands: int
    bursts_acked: int


class SimDeviceStats(TypedDict, total=False):
    """SimDevice::stats (sim_device.cpp): the simulator's own record, and what its
    receive side (TX, loopback) checked as tx_<counter>."""

    frames_sent: int
    samples_sent: int
    overflow_events: int
    overflow_frames: int
    link_errors: int
    injected_drop_frames: int
    injected_corrupt_samples: int
    injected_duplicate_frames: int
    injected_reorder_frames: int
    underruns: int
    injected_stalls: int
    injected_stall_ns: int
    overflow_link_full_frames: int
    overflow_late_frames: int
    producer_longest_gap_ns: int
    fifo_peak_frames: int
    running: bool
    tx_frames_received: int
    tx_samples_received: int
    tx_seq_errors: int | None
    tx_missing_frames: int | None
    tx_dropped_samples: int | None
    tx_duplicate_frames: int | None
    tx_reordered_frames: int | None
    tx_pattern_errors: int | None
    tx_malformed_frames: int | None
    tx_blocks: list[list[int]]     # [received, sent] per block of 100 000 seq (rx_check.hpp)
    tx_samples_played: int         # consumed by the device's TX sample clock (sim/playout_clock.hpp)
    tx_played_ns: int              # when tx_samples_played was true; 0: not yet
    tcp: TcpInfo                   # transport tcp: the device's end (RX: sending, TX: receiving)


class RtlStats(TypedDict, total=False):
    """with_rtl_stats (sim_device.cpp): the simulator with the RTL as its device core."""

    device_core: str
    rtl_cycles: int
    rtl_clock_hz: float
    rtl_rate_div: int
    rtl_thread_cpu_ns: int
    rtl_pauses: int
    rtl_paused_cycles: int
    rtl_rx_ticks_lost: int
    tx_consumed_beats: int
    tx_late_frames: int


class UsbEngineStats(TypedDict, total=False):
    """UsbEngine::stats()["usb"] (usb_engine.cpp): the host's transfers."""

    usb_transfers_completed: int
    usb_bytes_transferred: int
    usb_short_transfers: int
    usb_timeouts: int
    usb_stalls: int
    usb_no_device: int
    usb_overflows: int
    usb_errors: int
    usb_submit_errors: int
    usb_abandoned_transfers: int
    transfer_bytes: int
    transfers: int
    running: bool


class DeviceStats(SimDeviceStats, RtlStats, UsbEngineStats, total=False):
    """What the device reported about itself (the simulator's stats, a USB link's, a
    radio's TX side as split_stats maps it)."""

    tx_payload_bytes_received: int
    late_commands: int


@dataclass
class Snapshot:
    """Cumulative counters at one moment of a stream.

    host_rx / host_tx: what the host side measured (its receiver / sender), empty
    when the case has no such side; device: what the device reported about itself;
    taken_ns: time.monotonic_ns() right after the counters were read; asked_ns when
    reading them began (a device's counters were true somewhere in between).
    """

    host_rx: RxCounters = field(default_factory=lambda: RxCounters())
    host_tx: TxCounters = field(default_factory=lambda: TxCounters())
    device: DeviceStats = field(default_factory=lambda: DeviceStats())
    taken_ns: int = field(default_factory=time.monotonic_ns)
    asked_ns: int | None = None   # when the reading began (the engine's poll): counters are true in between

def measured(counters: Mapping[str, object], key: str) -> float | None:
    """A counter as a number, or None when it was not measured (null or absent)."""
    value = counters.get(key)
    if value is None:
        return None
    if not isinstance(value, (int, float)):   # bool is an int: eob_received counts as 0/1
        raise TypeError(f"counter {key!r} is {value!r}, not a number")
    return float(value)


def counter(counters: Mapping[str, object], key: str) -> float:
    """A counter as a number; 0 when it was not measured."""
    return measured(counters, key) or 0.0
