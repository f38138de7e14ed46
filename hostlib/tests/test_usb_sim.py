"""The simulator over USB (docs/usb.md "The simulator's USB link"): the host's
UsbEngine submits transfers over a shared channel to hilrig-sim, whose bus model
completes them; the fault plan applies as on UDP/shm; a simulator that dies ends the
case ERROR (device) with no hang."""
from __future__ import annotations

import time

import pytest

from hostlib.engine import run_case
from hostlib.tests.conftest import requires_native

pytestmark = requires_native

CASE = """
name: usb sim {direction}
device: dut
direction: {direction}
master_clock: 64 MHz
{divider}: {factor}
transport: {{kind: usb, link: {link}, frame_bytes: 8192, transfer_bytes: 16 KiB, transfers: 16}}
duration: {duration}
{extra}
thresholds: {{missing_frames: "== 0"}}
"""
SAMPLES_PER_FRAME = (8192 - 48) // 4


def usb_case(write_case, direction="rx", link="usb2", factor=16, duration="0.6 s", extra="", transfers=16):
    divider = "interpolation" if direction == "tx" else "decimation"
    [case] = write_case(CASE.format(direction=direction, link=link, divider=divider, factor=factor,
                                    duration=duration, extra=extra).replace("transfers: 16", f"transfers: {transfers}"))
    return case


@pytest.mark.parametrize("seed, drop, corrupt", [(3, 2, 5), (9, 4, 11)])
def test_rx_faults_over_usb_are_counted_exactly(write_case, sim_rig, seed, drop, corrupt):
    case = usb_case(write_case, extra=f"faults: {{seed: {seed}, drop_frames: {drop}, corrupt_samples: {corrupt}}}")
    result = run_case(case, sim_rig, run_id="t")
    m = result.metrics
    assert result.error is None, result.message
    assert (m["missing_frames"], m["dropped_samples"], m["pattern_errors"]) == (drop, drop * SAMPLES_PER_FRAME, corrupt)
    assert m["overruns"] == 0 and m["malformed_frames"] == 0
    assert m["frames_received"] > 100


def run_frames(rate_sps: float, run_s: float) -> int:
    """Frames of the whole run (and a tenth more): a buffer this deep never fills,
    however long a busy machine stalls the host."""
    return int(1.1 * rate_sps * run_s / SAMPLES_PER_FRAME) + 1


def test_tx_faults_over_usb_are_counted_by_the_device(write_case, sim_rig):
    # 8 MS/s for 0.6 s: the whole run's frames in flight at once (16 KiB transfers of two
    # frames), so no host stall can hold back what the device must see; the device counts
    # the injected faults exactly. (Underruns are a timing matter the simulator's own
    # thread takes part in on a busy machine; the shipped "USB2 TX 8 MS/s" case judges them.)
    transfers = run_frames(8e6, 0.6) // 2 + 1
    case = usb_case(write_case, direction="tx", factor=8, transfers=transfers,
                    extra="fifo_frames: 256\nfaults: {seed: 4, drop_frames: 3, corrupt_samples: 6}")
    result = run_case(case, sim_rig, run_id="t")
    m = result.metrics
    assert result.error is None, result.message
    assert (m["missing_frames"], m["pattern_errors"]) == (3, 6), m


def test_usb2_bus_limits_an_rx_stream_above_it(write_case, sim_rig):
    # 64 MHz / 4 = 16 MS/s sc16 = 65.5 MB/s of frames: more than USB 2's 53.248 MB/s,
    # so the device FIFO (64 frames, 43 ms of the shortfall) overflows whatever the host
    # does; over usb3 the same stream fits, with a FIFO that holds the whole run so that
    # a host stalled by a busy machine loses nothing.
    slow = run_case(usb_case(write_case, factor=4, extra="fifo_frames: 64"), sim_rig, run_id="t")
    assert slow.error is None, slow.message
    assert slow.metrics["overruns"] >= 1 and slow.metrics["missing_frames"] > 0
    assert slow.metrics["throughput_Bps"] < 53.248e6
    fast = run_case(usb_case(write_case, link="usb3", factor=4, extra=f"fifo_frames: {run_frames(16e6, 0.6)}"),
                    sim_rig, run_id="t")
    assert fast.error is None, fast.message
    assert fast.metrics["overruns"] == 0 and fast.metrics["missing_frames"] == 0


def test_simulator_dying_mid_run_is_error_device_without_a_hang(write_case, sim_rig):
    case = usb_case(write_case, duration="2 s", extra="faults: {die_after_ms: 300}")
    t0 = time.monotonic()
    result = run_case(case, sim_rig, run_id="t")
    assert time.monotonic() - t0 < 5
    assert result.verdict == "ERROR" and result.error_kind == "device", result.message
    assert "hilrig-sim" in result.error and ("gone" in result.error or "SIGKILL" in result.error), result.error


def test_expect_error_turns_the_expected_error_into_the_pass(write_case, sim_rig):
    gone = run_case(usb_case(write_case, extra="faults: {die_after_ms: 300}\nexpect_error: device"), sim_rig, run_id="t")
    assert gone.verdict == "PASS" and "ERROR (device) as expected" in gone.message, gone.message
    alive = run_case(usb_case(write_case, duration="0.3 s", extra="expect_error: device"), sim_rig, run_id="t")
    assert alive.verdict == "FAIL" and "expected ERROR (device), the run ended PASS" in alive.message, alive.message


def test_usb_geometry_on_the_sim_link_is_a_config_error_with_the_fix(write_case, sim_rig):
    [case] = write_case(CASE.format(direction="rx", link="usb2", divider="decimation", factor=16, duration="0.3 s",
                                    extra="").replace("frame_bytes: 8192", "frame_bytes: 8000"))
    result = run_case(case, sim_rig, run_id="t")
    assert result.verdict == "ERROR" and result.error_kind == "config", result.message
    assert "not a whole number of 8000-byte frames" in result.error, result.error


def test_loopback_over_the_sim_usb_link_echoes_every_frame(write_case, sim_rig):
    # The device echoes each OUT frame into its IN FIFO; the host checks them all.
    [case] = write_case(CASE.format(direction="loopback", link="usb2", divider="decimation", factor=16,
                                    duration="0.5 s", extra="fifo_frames: 256"))
    result = run_case(case, sim_rig, run_id="t")
    m = result.metrics
    assert result.verdict == "PASS", result.message
    assert m["frames_received"] > 200 and m["pattern_errors"] == 0 and m["missing_frames"] == 0
