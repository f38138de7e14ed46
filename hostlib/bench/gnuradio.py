"""`make bench` rows for gr-hilrig (BENCH_ONLY=gnuradio), each beside a GNU Radio peer in
the same run (docs/gnuradio.md). Run outside ctest: its wrappers set VOLK_GENERIC=1.

- rig_source (shm) -> pattern_check, fed by pattern_source -> rig_sink in the same
  flowgraph, items/s beside null_source -> head -> copy -> null_sink (same 4-byte items);
- pattern_source -> pattern_check GB/s beside null_source -> head -> copy -> null_sink;
- rig_source (UDP, 8000-byte frames) zero-loss rate from the simulator beside GNU Radio's
  network.udp_source fed by the same simulator, found by the same search.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .record import BenchRow
from .search import Point, zero_loss_rate

if TYPE_CHECKING:
    from gnuradio import gr

ITEM_BYTES = 4            # sc16
UDP_CEILING_SPS = 1e9     # where the zero-loss searches start
UDP_HALVINGS = 16         # down to ~15 kS/s (GNU Radio's udp_source passes little at its default timer)
FRAME_BYTES = 8000


def _timed(tb: gr.top_block) -> float:
    t0 = time.perf_counter()
    tb.run()
    return time.perf_counter() - t0


def _copy_chain(n: int) -> float:
    from gnuradio import blocks, gr

    tb = gr.top_block()
    tb.connect(blocks.null_source(ITEM_BYTES), blocks.head(ITEM_BYTES, n), blocks.copy(ITEM_BYTES),
               blocks.null_sink(ITEM_BYTES))
    return n / _timed(tb)


def _shm_chain(n: int) -> float:
    from gnuradio import blocks, gr, hilrig

    tb = gr.top_block()
    src = hilrig.rig_source("sc16", 1, "shm", "", FRAME_BYTES)
    chk = hilrig.pattern_check("sc16", 1, stop_after_samples=n, stats_interval_s=0)
    sink = hilrig.rig_sink("sc16", 1, src.endpoint(), FRAME_BYTES)
    tb.connect(hilrig.pattern_source("sc16", 1), blocks.head(ITEM_BYTES, n + 10_000), sink)
    tb.connect(src, chk)
    rate = n / _timed(tb)
    if chk.samples() != n or chk.pattern_errors() or chk.gaps():
        raise RuntimeError(f"rig_source shm chain lost or corrupted samples: {chk.stats()}")
    return rate


def _check_chain(n: int) -> float:
    from gnuradio import gr, hilrig

    tb = gr.top_block()
    chk = hilrig.pattern_check("sc16", 1, stop_after_samples=n, stats_interval_s=0)
    tb.connect(hilrig.pattern_source("sc16", 1), chk)
    rate = n / _timed(tb)
    if chk.pattern_errors():
        raise RuntimeError("pattern_check found errors in pattern_source's stream")
    return rate


def _median_of(fn: Callable[[int], float], n: int, repeats: int) -> tuple[float, float, float]:
    xs = [fn(n) for _ in range(repeats)]
    return statistics.median(xs), min(xs), max(xs)


def _fmt(r: tuple[float, float, float]) -> str:
    return f"{r[0] / 1e6:7.1f} M items/s ({r[1] / 1e6:.0f}-{r[2] / 1e6:.0f})"


class _Endpoint:
    """A receiver the simulator sends to, for the Simulator helper (it asks endpoint())."""

    def __init__(self, port: int):
        self.port = port

    def endpoint(self) -> dict:
        return {"kind": "udp", "host": "127.0.0.1", "port": self.port}


def _udp_window(receiver: str, rate_sps: float, window_s: float) -> Point:
    """The simulator at rate_sps into rig_source or network.udp_source for window_s:
    clean when every frame it sent arrived (and, for rig_source, checked clean); fps:
    the frames per second the simulator sent."""
    import socket

    from gnuradio import blocks, gr, hilrig, network
    from gnuradio.hilrig.simulator import Simulator, case_from

    case = case_from(master_clock=f"{rate_sps} Hz", decimation=1, duration=f"{window_s} s",
                     transport={"kind": "udp", "frame_bytes": FRAME_BYTES, "socket_buffer": 4 << 20})
    tb = gr.top_block()
    if receiver == "rig_source":
        src = hilrig.rig_source("sc16", 1, "udp", "127.0.0.1:0", FRAME_BYTES, 0, 0, True, rate_sps)
        chk = hilrig.pattern_check("sc16", 1, stats_interval_s=0)
        tb.connect(src, chk)
        target: object = src
    else:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:   # a free port for udp_source
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        # sc16 items (4 bytes) as rig_source outputs; udp_source reads one datagram per
        # work call and, when none is waiting, returns 0 and sleeps the scheduler's
        # blocked-input timer: at its default it passes ~60 datagrams/s whatever the
        # rate (docs/performance.md), so it gets the 1 ms a lab would set.
        src = network.udp_source(ITEM_BYTES, 1, port, 0, FRAME_BYTES, False, False, False)
        src.set_blkd_input_timer_value(1)
        sink = blocks.null_sink(ITEM_BYTES)
        tb.connect(src, sink)
        target = _Endpoint(port)
    sim = Simulator(target, case)
    tb.start()
    time.sleep(0.3)   # the flowgraph's threads are up before the first frame arrives
    try:
        sim.start()
        time.sleep(window_s)
        dev = sim.stop()
    finally:
        sim.close()
    if receiver == "rig_source":
        # The flowgraph ends at the simulator's EOB; a window that lost frames may have
        # lost the EOB too: then it is stopped (and is not clean anyway).
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and not src.stats()["eob_received"]:
            time.sleep(0.01)
        tb.stop()
        tb.wait()
        s = src.stats()
        ok = s["missing_frames"] == 0 and s["overruns"] == 0 and chk.pattern_errors() == 0 and chk.gaps() == 0
        return Point(ok and dev.get("overflow_frames", 0) == 0, float(dev["frames_sent"]) / window_s)
    # Let udp_source drain the socket: wait until its count stops growing (<= 3 s).
    got, deadline = -1, time.monotonic() + 3.0
    while time.monotonic() < deadline and sink.nitems_read(0) * ITEM_BYTES != got:
        got = sink.nitems_read(0) * ITEM_BYTES
        time.sleep(0.3)
    tb.stop()
    tb.wait()
    got = sink.nitems_read(0) * ITEM_BYTES   # bytes, datagram payloads as they came
    # frames_sent counts the simulator's 48-byte EOB frame, which udp_source (payload
    # size 8000) never outputs, and udp_source outputs a datagram only when the next
    # one arrives (measured: 51 of 52 from a plain socket at 50/s): so the last two.
    sent = int(dev["frames_sent"]) * FRAME_BYTES
    ok = got >= sent - 2 * FRAME_BYTES and dev.get("overflow_frames", 0) == 0
    return Point(ok and got <= sent, float(dev["frames_sent"]) / window_s)


def _zero_loss_sps(receiver: str, window_s: float) -> float:
    """Highest rate with a clean window, by the bench's one search from UDP_CEILING_SPS."""
    return zero_loss_rate(lambda rate_sps, seconds: _udp_window(receiver, rate_sps, seconds), UDP_CEILING_SPS,
                          window_s, halvings=UDP_HALVINGS).rate


def rows(window_s: float, repeats: int) -> list[tuple[tuple, BenchRow]]:
    """(row, size, rig, rig CPU %, peer, peer, ratio) for the bench table, each with its
    BenchRow (the same figures as numbers, trended as hilrig_bench)."""
    n = 50_000_000 if window_s >= 10 else 20_000_000
    out: list[tuple[tuple, BenchRow]] = []
    copy_r = _median_of(_copy_chain, n, repeats)
    shm_r = _median_of(_shm_chain, n, repeats)
    label, peer_label = "GR rig_source shm -> pattern_check", "null_source->copy->null_sink"
    out.append(((label, f"{FRAME_BYTES} B", _fmt(shm_r), "-", peer_label, _fmt(copy_r), f"{shm_r[0] / copy_r[0]:.2f}"),
                BenchRow(label, FRAME_BYTES, shm_r[0] * ITEM_BYTES, shm_r[0] * ITEM_BYTES / FRAME_BYTES, None,
                         peer_label, copy_r[0] * ITEM_BYTES, None, shm_r[0] / copy_r[0])))
    chk_r = _median_of(_check_chain, n, repeats)
    label = "GR pattern_source -> pattern_check"
    out.append(((label, f"{ITEM_BYTES} B items", f"{chk_r[0] * ITEM_BYTES / 1e9:6.2f} GB/s", "-", peer_label,
                 f"{copy_r[0] * ITEM_BYTES / 1e9:6.2f} GB/s", f"{chk_r[0] / copy_r[0]:.2f}"),
                BenchRow(label, ITEM_BYTES, chk_r[0] * ITEM_BYTES, None, None, peer_label, copy_r[0] * ITEM_BYTES,
                         None, chk_r[0] / copy_r[0])))
    # The same search from the same ceiling for both (1 GS/s: rig_source passed 100 MS/s).
    rig = _zero_loss_sps("rig_source", window_s)
    peer = _zero_loss_sps("udp_source", window_s)
    label = "GR UDP zero-loss from hilrig-sim"
    # sc16, one channel: ITEM_BYTES per sample; frames of FRAME_BYTES payload.
    out.append(((label, f"{FRAME_BYTES} B", f"{rig / 1e6:7.1f} MS/s", "-", "network.udp_source",
                 f"{peer / 1e6:7.1f} MS/s", f"{rig / peer:.2f}" if peer else "n/a"),
                BenchRow(label, FRAME_BYTES, rig * ITEM_BYTES, rig * ITEM_BYTES / FRAME_BYTES, None,
                         "network.udp_source", peer * ITEM_BYTES, peer * ITEM_BYTES / FRAME_BYTES,
                         rig / peer if peer else None)))
    return out
