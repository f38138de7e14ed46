"""End-to-end: YAML case -> engine -> sim driver -> hilrig-sim process -> verdict.

These are the issue's "must show" items, run against the real simulator
process and the real native core (no mocks).
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time

import pytest

from hostlib.engine import run_case

from .conftest import child_pids, requires_native, ring_handles, run_in_background, run_killing_the_simulator

pytestmark = requires_native


def run_sized_buffer(kind: str, rate_Bps: float, run_s: float) -> str:
    """The transport knob that makes a UDP socket buffer hold the whole run (twice: the
    kernel charges each datagram's buffer overhead), so a host that a busy machine stalls
    for a while still loses nothing: every frame the counters miss is one the device
    really did not send. shm needs none: a full ring holds the device back, its FIFO
    buffers the stall."""
    if kind != "udp":
        return ""
    mib = 1 << 20
    return f", socket_buffer: {int(-(-2 * rate_Bps * run_s // mib))} MiB"


RX_CASE = """
name: RX 10 MS/s over {kind}
device: dut
direction: rx
channels: 1
format: sc16
master_clock: 200 MHz
decimation: 20
transport: {{kind: {kind}, frame_bytes: 8048{buffer}}}
duration: 2 s
warmup: 0.2 s
pattern: counter
thresholds:
  throughput: ">= 99.9% of rate"
  missing_frames: "== 0"
  pattern_errors: "== 0"
"""


@pytest.mark.parametrize("kind", ["udp", "shm"])
def test_rx_10msps_two_seconds_is_clean(kind, write_case, sim_rig):
    before_rings = ring_handles()
    [case] = write_case(RX_CASE.format(kind=kind, buffer=run_sized_buffer(kind, 40e6, 2.2)))
    assert case.rate_sps == pytest.approx(10e6)
    spf = (8048 - 48) // 4
    stalls = []
    for _attempt in range(3):
        result = run_case(case, sim_rig, run_id="test")
        m = result.metrics
        # Nothing lost, every sample right: exact on every run, however busy the machine.
        assert result.error is None, result.message
        assert m["missing_frames"] == 0 and m["overruns"] == 0 and m["pattern_errors"] == 0, (result.message, m)
        assert 1.9 <= m["duration_s"] <= 2.5
        # The timing checks: >= 99.9 % of the rate over the window (2 ms in 2 s), and
        # received and expected counting the same span (up to one frame and the arrival
        # jitter at the span's ends). A host stall at a window edge, or a late first
        # read, on a busy machine moves arrivals by more than that although nothing was
        # lost; such a run (its longest gap or start-up measures the stall) runs again.
        span_ok = abs(m["samples_expected"] - m["samples_received"]) <= 2 * spf + 5e-3 * m["samples_expected"]
        if result.verdict == "PASS" and m["throughput_ratio"] >= 0.999 and span_ok:
            break
        stall_s = max(m["longest_gap_s"], m["time_to_first_sample_s"])
        assert stall_s > 1e-3 * case.duration_s, f"timing off in a run without a stall: {result.message} {m}"
        # Off by no more than the run's own measured stall explains (then try again, up
        # to three runs, for the 0.1 % checks themselves).
        assert abs(m["samples_expected"] - m["samples_received"]) <= \
            2 * spf + 5e-3 * m["samples_expected"] + stall_s * case.rate_sps, (stall_s, m)
        assert m["throughput_ratio"] >= 0.999 - stall_s / m["duration_s"], (stall_s, m)
        stalls.append(round(stall_s, 4))
    assert result.verdict == "PASS" or len(stalls) == 3, (result.message, m)
    # Every sample the window counted was really received: 2 s at 10 MS/s.
    assert m["samples_received"] >= 0.999 * 10e6 * 2
    assert len(result.series) >= 2
    # What the device said of itself travels with the result into the evidence.
    assert set(result.device_versions) == {"hilrig-sim"} and result.to_record().device_versions["hilrig-sim"]
    assert child_pids() == [], "simulator process leaked"
    assert ring_handles() == before_rings, "shared-memory ring leaked"


def test_rate_the_host_cannot_take_ends_on_time_and_fails(write_case, sim_rig):
    [case] = write_case(
        """
        name: RX 5 GS/s over 1400-byte UDP
        device: dut
        direction: rx
        master_clock: 10 GHz
        decimation: 2
        transport: {kind: udp, frame_bytes: 1400}
        duration: 2 s
        thresholds:
          throughput: ">= 99.9% of rate"
          missing_frames: "== 0"
          overruns: "== 0"
        """
    )
    t0 = time.monotonic()
    result = run_case(case, sim_rig, run_id="test")
    elapsed = time.monotonic() - t0
    m = result.metrics
    assert elapsed < 2 + 10, f"took {elapsed:.1f} s for a 2 s case"
    assert result.verdict == "FAIL", result.message
    assert m["overruns"] + m["missing_frames"] > 0
    # The throughput is what arrived, not what was asked for.
    delivered = m["frames_received"] / (m["frames_received"] + m["missing_frames"])
    assert m["throughput_ratio"] <= min(delivered + 0.02, 0.999)
    assert m["throughput_sps"] <= m["samples_received"] / m["duration_s"] * 1.01


@contextlib.contextmanager
def every_cpu_saturated():
    """One spinning process per CPU this process may run on, for the body's duration."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in os.sched_getaffinity(0)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def test_loss_while_the_rig_cpu_is_saturated_is_reported_as_host_limited(write_case, sim_rig):
    """The rig's CPUs saturated by construction: a spinning process on every CPU, and the
    host's receive thread at nice 19, so beside a spinner it gets ~1.5 % of a CPU (CFS
    weight 15 against 1024) while the simulator, at nice 0, gets a fair share. Whatever
    this machine's speed, the receiver then checks far fewer frames than the device
    sends (~1 M frames/s here, which an unloaded receiver checks with room to spare): the
    ring fills, the 64-frame device FIFO overflows, and the loss, the host's, must not be
    blamed on the device."""
    [case] = write_case(
        """
        name: RX 50 MS/s in 256-byte shm frames
        device: dut
        direction: rx
        master_clock: 400 MHz
        decimation: 8
        transport: {kind: shm, frame_bytes: 256}
        fifo_frames: 64
        duration: 1 s
        thresholds:
          missing_frames: "== 0"
          overruns: "== 0"
        """
    )
    ours = {threading.get_native_id(), *(int(t) for t in os.listdir("/proc/self/task"))}
    with every_cpu_saturated():
        worker, box, _ = run_in_background(case, sim_rig, "test")   # the simulator started at nice 0
        while worker.is_alive():
            # The run's own threads but its driver thread: the receive thread (and any
            # helper it starts), however late it starts.
            for tid in {int(t) for t in os.listdir("/proc/self/task")} - ours - {worker.native_id}:
                with contextlib.suppress(ProcessLookupError):
                    os.setpriority(os.PRIO_PROCESS, tid, 19)
            worker.join(timeout=0.02)
    result = box["r"]
    m = result.metrics
    assert result.verdict == "FAIL", result.message
    assert m["missing_frames"] > 0 and m["pattern_errors"] == 0
    assert m["host_rx_cpu_percent"] >= 90 or m["host_cpu_busy_percent"] >= 95, m
    assert m["host_limited"] == 1.0, m
    assert result.message.startswith("host-limited: rig CPU saturated;"), result.message


FAULT_CASE = """
name: RX with faults
device: dut
direction: rx
master_clock: 100 MHz
decimation: 20
transport: {{kind: {kind}, frame_bytes: 4048{buffer}}}
duration: 1 s
faults: {{seed: {seed}, drop_frames: {drop}, corrupt_samples: {corrupt}}}
"""


@pytest.mark.parametrize("kind", ["udp", "shm"])
@pytest.mark.parametrize("seed", [1, 7, 42])
def test_injected_faults_are_counted_exactly(kind, seed, write_case, sim_rig):
    # 500+ dropped frames (0.1 s of the stream): more samples than the span check's
    # tolerance below, so that check shows the dropped frames' time is inside the span.
    drop, corrupt = 500 + seed % 5, 5 + seed % 11
    buffer = run_sized_buffer(kind, 20e6, 1.5)   # 5 MS/s sc16 for warm-up + 1 s: host drops cannot pose as faults
    [case] = write_case(FAULT_CASE.format(kind=kind, seed=seed, drop=drop, corrupt=corrupt, buffer=buffer))
    samples_per_frame = (4048 - 48) // 4
    distortions = []
    for _attempt in range(3):
        result = run_case(case, sim_rig, run_id="test")
        m = result.metrics
        # The counts are exact on every run, however busy the machine.
        assert result.error is None, result.message
        assert m["missing_frames"] == drop
        assert m["dropped_samples"] == drop * samples_per_frame
        assert m["pattern_errors"] == corrupt
        assert m["overruns"] == 0
        # Expected is the rate over the received span (arrival times), so it agrees with
        # received + dropped up to the timing of the span's ends: the end-of-burst frame
        # leaves when the stream is stopped, not when it is due, and on a busy machine a
        # late first read or a stalled sender moves an end by as much as the run's own
        # start-up time or longest gap (both measured in this run). A run distorted by
        # more than the dropped frames' time cannot show where they lie: run again (up to
        # three runs); the span is still checked within the last run's own bound.
        distortion_s = m["time_to_first_sample_s"] + m["longest_gap_s"]
        tolerance = 2 * samples_per_frame + 5e-3 * m["samples_expected"] + distortion_s * case.rate_sps
        if tolerance < m["dropped_samples"]:
            break
        distortions.append(round(distortion_s, 3))
    assert abs(m["samples_expected"] - (m["samples_received"] + m["dropped_samples"])) <= tolerance, \
        (tolerance, distortions, m)


def test_killed_simulator_gives_an_error_verdict_naming_it(write_case, sim_rig):
    before_rings = ring_handles()
    [case] = write_case(RX_CASE.format(kind="shm", buffer="").replace("duration: 2 s", "duration: 5 s"))
    result = run_killing_the_simulator(case, sim_rig, run_id="test")
    assert result.verdict == "ERROR"
    assert "simulator" in result.message and "SIGKILL" in result.message
    assert result.message.startswith("ERROR (device)")
    assert child_pids() == []
    assert ring_handles() == before_rings, "shared-memory ring leaked"


def test_absent_device_is_a_skip_with_reason(write_case, sim_rig):
    [case] = write_case(RX_CASE.format(kind="udp", buffer="").replace("device: dut", "device: x310"))
    result = run_case(case, sim_rig, run_id="test")
    assert result.verdict == "SKIP"
    assert "x310" in result.message


def test_host_socket_that_cannot_bind_is_an_infrastructure_error_naming_the_case(write_case, sim_rig):
    # 192.0.2.1 (TEST-NET-1) is on no interface here: the host receiver cannot bind it.
    [case] = write_case(RX_CASE.format(kind="udp", buffer="").replace(
        "frame_bytes: 8048}", "frame_bytes: 8048, host: 192.0.2.1}"))
    result = run_case(case, sim_rig, run_id="test")
    assert result.verdict == "ERROR" and result.error_kind == "infrastructure", result.message
    assert case.location in result.message and "192.0.2.1" in result.message
    assert child_pids() == []


def test_bad_reference_duration_is_the_case_verdict_not_an_exception(write_case, sim_rig, monkeypatch):
    monkeypatch.setenv("HILRIG_REFERENCE_DURATION", "ten")
    [case] = write_case(RX_CASE.format(kind="udp", buffer="") + "tags: [reference]\n")
    result = run_case(case, sim_rig, run_id="test")
    assert result.verdict == "ERROR", result.message
    assert "HILRIG_REFERENCE_DURATION='ten'" in result.message, result.message
