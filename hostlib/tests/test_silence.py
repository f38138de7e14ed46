"""A simulator that goes silent mid-run (alive, sending nothing: SIGSTOP) is ERROR
(device) within the silence bound of every driver (measure.silence_limit_s), naming
the simulator and what happened; what was measured before it is kept, its gap
counted to the moment it was noticed. A slow but alive stream is never flagged."""
from __future__ import annotations

import contextlib
import os
import re
import signal
import time

import pytest

from hostlib.engine import run_case
from hostlib.engine.silence import SILENCE_LIMIT_S, silence_limit_s
from hostlib.tests.conftest import child_pids, requires_native, run_in_background

pytestmark = requires_native

TRANSPORTS = {   # a UDP socket buffer of 2.5 s at 20 MB/s: a host stalled by a busy machine drops nothing
    "udp": "{kind: udp, frame_bytes: 4048, socket_buffer: 96 MiB}",
    "shm": "{kind: shm, frame_bytes: 4048}",
    "usb": "{kind: usb, link: usb2, frame_bytes: 4096, transfer_bytes: 8 KiB, transfers: 8}",
}


@pytest.mark.parametrize("kind", sorted(TRANSPORTS))
def test_stopped_simulator_is_a_device_error_within_the_bound(write_case, sim_rig, kind):
    [case] = write_case(f"""
        name: silent simulator over {kind}
        device: dut
        direction: rx
        master_clock: 100 MHz
        decimation: 20
        transport: {TRANSPORTS[kind]}
        warmup: 200 ms
        duration: 6 s
        thresholds: {{missing_frames: "== 0"}}
    """)
    limit_s = silence_limit_s(case)
    assert limit_s == SILENCE_LIMIT_S   # 5 MS/s, 1000-sample frames (2 per usb transfer): the 1 s floor
    worker, box, pids = run_in_background(case, sim_rig, "silence")
    time.sleep(1.5)                      # well inside the 6 s window
    os.kill(pids[0], signal.SIGSTOP)     # alive, but it sends (and answers) nothing
    stopped = time.monotonic()
    try:
        worker.join(timeout=limit_s + 8)
    finally:
        if worker.is_alive():
            os.kill(pids[0], signal.SIGCONT)
    ended = time.monotonic() - stopped
    assert not worker.is_alive(), "the run hung on a silent simulator"
    r = box["r"]
    assert r.verdict == "ERROR" and r.error_kind == "device", r.message
    assert r.message.startswith("ERROR (device)"), r.message
    # It names the device and what happened.
    assert f"simulator hilrig-sim (pid {pids[0]}, stopped by a signal) received no samples for" in r.message, r.message
    found = re.search(r"received no samples for ([0-9.]+) s mid-run", r.message)
    assert found, r.message
    silent_s = float(found.group(1))
    assert limit_s <= silent_s <= limit_s + 0.5, r.message   # at the bound (printed to 10 ms), not at a 10 s timeout
    assert ended <= limit_s + 3.0, f"the run ended {ended:.2f} s after the simulator went silent"
    # What was measured before the silence is kept, the silence is its longest gap.
    m = r.metrics
    assert m["samples_received"] >= 5e6 * 1.0, m
    assert m["missing_frames"] == 0 and m["pattern_errors"] == 0, m
    assert limit_s < m["longest_gap_s"] <= silent_s + 0.05, m   # the silence, to the moment it was noticed
    # ... and travels with the ERROR result: the evidence and the outbox line.
    from hostlib.results.lineprotocol import result_lines

    assert r.to_dict()["metrics"]["samples_received"] == m["samples_received"]
    assert "samples_received=" in result_lines(r)[0] and "longest_gap_s=" in result_lines(r)[0], result_lines(r)[0]
    assert child_pids() == [], "simulator process leaked"


def test_slow_but_alive_stream_is_not_flagged(write_case, sim_rig):
    """A frame every 1.25 s (1.6 kS/s, 2000-sample frames): longer than the 1 s floor, so
    the bound follows the frame interval (10 frame periods) and a live stream passes."""
    [case] = write_case("""
        name: slow stream
        device: dut
        direction: rx
        master_clock: 1.6 MHz
        decimation: 1000
        transport: {kind: udp, frame_bytes: 8048}
        duration: 4 s
        thresholds: {missing_frames: "== 0", pattern_errors: "== 0"}
    """)
    frame_period_s = case.samples_per_frame / case.rate_sps
    assert frame_period_s == pytest.approx(1.25)
    assert silence_limit_s(case) == pytest.approx(10 * frame_period_s)
    r = run_case(case, sim_rig, run_id="slow")
    assert r.verdict == "PASS", r.message
    m = r.metrics
    assert m["frames_received"] >= 3, m
    # The gaps really were longer than the floor: a fixed 1 s bound would have flagged it.
    assert SILENCE_LIMIT_S < m["longest_gap_s"] < 2 * frame_period_s, m


def test_usb_bound_follows_the_transfer(write_case):
    """Over USB a packed IN transfer arrives whole: the delivery interval is frames per
    transfer x the frame period, and the bound follows it."""
    [case] = write_case("""
        name: slow usb
        device: dut
        direction: rx
        master_clock: 1 MHz
        decimation: 1000
        transport: {kind: usb, link: usb2, frame_bytes: 4096, transfer_bytes: 64 KiB, transfers: 4}
        duration: 1 s
    """)
    frames_per_transfer, frame_period_s = 64 * 1024 // 4096, (4096 - 48) // 4 / 1e3
    assert silence_limit_s(case) == pytest.approx(10 * frames_per_transfer * frame_period_s)


def test_a_busy_host_is_not_a_silent_device(write_case):
    """A machine-wide stall freezes the receiver as well as the check: the first look
    sees 1.5 s without a frame, but by the second the receiver has drained its backlog.
    Only a silence that the second look confirms (same last frame) is the device's."""
    from hostlib.counters import Snapshot
    from hostlib.engine.silence import SilenceWatch

    [case] = write_case("""
        name: watch
        device: dut
        direction: rx
        master_clock: 100 MHz
        decimation: 20
        transport: {kind: udp, frame_bytes: 4048}
        duration: 1 s
    """)
    s = 1_000_000_000
    watch = SilenceWatch(case)
    assert watch.check(Snapshot(host_rx={"last_frame_ns": 1 * s}, taken_ns=int(2.5 * s))) is None
    assert watch.suspect
    # The receiver ran again: a new frame, no silence.
    assert watch.check(Snapshot(host_rx={"last_frame_ns": int(2.52 * s)}, taken_ns=int(2.55 * s))) is None
    assert not watch.suspect
    # A real silence: the second look sees the same last frame.
    assert watch.check(Snapshot(host_rx={"last_frame_ns": 3 * s}, taken_ns=int(4.1 * s))) is None
    silent = watch.check(Snapshot(host_rx={"last_frame_ns": 3 * s}, taken_ns=int(4.15 * s)))
    assert silent and "received no samples for 1.15 s mid-run" in silent


def test_stopped_simulator_on_a_tx_stream_is_a_device_error(write_case, sim_rig):
    """TX over shm: a stopped simulator takes nothing, the ring fills, the host's sends
    stop being accepted: "accepted no samples", within the same bound."""
    [case] = write_case("""
        name: silent simulator, tx over shm
        device: dut
        direction: tx
        master_clock: 100 MHz
        interpolation: 20
        transport: {kind: shm, frame_bytes: 4048}
        warmup: 200 ms
        duration: 6 s
    """)
    limit_s = silence_limit_s(case)
    worker, box, pids = run_in_background(case, sim_rig, "silence-tx")
    time.sleep(1.5)
    os.kill(pids[0], signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        worker.join(timeout=limit_s + 8)
    finally:
        if worker.is_alive():
            os.kill(pids[0], signal.SIGCONT)
    assert not worker.is_alive(), "the run hung on a silent simulator"
    r = box["r"]
    assert r.verdict == "ERROR" and r.error_kind == "device", r.message
    assert f"simulator hilrig-sim (pid {pids[0]}, stopped by a signal) accepted no samples for" in r.message, r.message
    # The ring absorbs what was in flight before the sends block: the bound plus that.
    assert time.monotonic() - stopped <= limit_s + 3.0
    assert r.metrics["samples_received"] > 0, r.metrics
    assert child_pids() == [], "simulator process leaked"


@pytest.mark.parametrize("kind", ["udp", "shm"])
def test_stopped_simulator_behind_the_soapy_module_is_a_device_error(write_case, sim_rig, kind):
    """The radio path: driver=hilrig's simulator stopped mid-run. The module's stats read
    gives up after 1 s instead of holding the host for the 10 s control timeout, so the
    same bound ends the case as ERROR (device) naming the SoapySDR device."""
    from hostlib.tests.test_fault_matrix import _soapy_ready

    _soapy_ready("soapy_sim")
    [case] = write_case(f"""
        name: silent simulator behind SoapySDR over {kind}
        device: soapy_sim
        direction: rx
        master_clock: 100 MHz
        decimation: 20
        transport: {TRANSPORTS[kind]}
        warmup: 200 ms
        duration: 8 s
        thresholds: {{missing_frames: "== 0"}}
    """)
    limit_s = silence_limit_s(case)
    worker, box, pids = run_in_background(case, sim_rig, "silence")
    time.sleep(1.5)
    os.kill(pids[-1], signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        worker.join(timeout=limit_s + 10)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):   # reaped by the run's close
                os.kill(pid, signal.SIGCONT)
    ended = time.monotonic() - stopped
    assert not worker.is_alive(), "the run hung on a silent simulator"
    r = box["r"]
    assert r.verdict == "ERROR" and r.error_kind == "device", r.message
    assert r.message.startswith("ERROR (device)"), r.message
    assert "SoapySDR device 'driver=hilrig" in r.message and "received no samples for" in r.message, r.message
    # at the bound plus one timed-out stats read, not at the 10 s control timeout (twice)
    assert ended <= limit_s + 4.0, f"the run ended {ended:.2f} s after the simulator went silent"
    assert r.metrics["samples_received"] >= 5e6 * 1.0, r.metrics
