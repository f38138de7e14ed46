"""The measure layer's integrity rules (issue 11): not measured is absent (never 0),
longest_gap counts to the window end, silence beyond the documented bound is a
device error, injected_* travel as metrics, and the fault placement rule."""
from __future__ import annotations

import pytest

from hostlib.drivers.base import Snapshot
from hostlib.dsl.faults import fault_fit
from hostlib.engine.measure import compute_metrics, silence_error, silence_limit_s
from hostlib.metrics import METRICS

from .factories import make_case

CASE = make_case("rx 1 MS/s", rate_sps=1e6, frame_bytes=4048)
S = 1_000_000_000


def rx(**kw):
    base = {"payload_bytes_received": 4000 * 1000, "frames_received": 1000, "first_frame_ns": 1 * S,
            "last_frame_ns": 2 * S, "longest_gap_ns": 2_000_000, "seq_errors": 0, "missing_frames": 0,
            "dropped_samples": 0, "duplicate_frames": 0, "reordered_frames": 0, "malformed_frames": 0,
            "pattern_errors": 0, "overruns": 0, "timeouts": 0, "latency_count": 0}
    base.update(kw)
    return base


def metrics(end_rx: dict, taken_ns: int, device: dict | None = None) -> dict:
    start = Snapshot(host_rx=rx(payload_bytes_received=0, frames_received=0, last_frame_ns=1 * S), taken_ns=1 * S)
    end = Snapshot(host_rx=end_rx, device=device or {}, taken_ns=taken_ns)
    return compute_metrics(CASE, started_ns=0, window_start=start, window_end=end, final=end, cpu_s=0.0,
                           rcvbuf_errors=None)


def test_counters_a_driver_cannot_know_are_absent_not_zero():
    m = metrics(rx(seq_errors=None, missing_frames=None, dropped_samples=None, duplicate_frames=None,
                   reordered_frames=None, pattern_errors=None), 2 * S)
    for name in ("seq_errors", "missing_frames", "dropped_samples", "duplicate_frames", "reordered_frames",
                 "pattern_errors", "drop_ratio"):
        assert name not in m, name
    assert m["overruns"] == 0 and m["samples_received"] == 1000 * 1000


def test_tx_leg_counters_of_a_radio_that_does_not_report_them_are_absent():
    case = make_case("tx 1 MS/s", direction="tx", rate_sps=1e6, frame_bytes=4048)
    snap = Snapshot(host_tx={"payload_bytes_sent": 4000, "frames_sent": 1, "last_send_ns": S},
                    device={"tx_frames_received": 1, "tx_payload_bytes_received": 4000}, taken_ns=2 * S)
    m = compute_metrics(case, started_ns=0, window_start=snap, window_end=snap, final=snap, cpu_s=0.0,
                        rcvbuf_errors=None)
    assert "missing_frames" not in m and "pattern_errors" not in m
    assert m["overruns"] == 0   # an RX event: nothing on a TX-only stream can overflow
    from hostlib.engine.measure import series_row
    row = series_row(case, snap, Snapshot(host_tx=snap.host_tx, device=snap.device, taken_ns=3 * S), 0)
    assert row["overruns"] == 0 and row["missing_frames"] != row["missing_frames"]   # NaN: not measured


def test_longest_gap_counts_to_the_end_of_the_window():
    # The last frame came at 2 s; the window closed at 2.7 s: a 0.7 s silence, not 2 ms.
    assert metrics(rx(), int(2.7 * S))["longest_gap_s"] == pytest.approx(0.7)
    # With the end of burst received, the silence after it is not a gap.
    assert metrics(rx(eob_received=True), int(2.7 * S))["longest_gap_s"] == pytest.approx(0.002)


def test_injected_faults_are_metrics_beside_the_detected_ones():
    m = metrics(rx(missing_frames=3), 2 * S, device={"injected_drop_frames": 3, "injected_corrupt_samples": 0,
                                                     "injected_duplicate_frames": 1, "injected_reorder_frames": 0})
    assert m["injected_drop_frames"] == 3 == m["missing_frames"] and m["injected_duplicate_frames"] == 1
    assert all(name in METRICS for name in m)


def test_silence_beyond_the_bound_is_named():
    assert silence_limit_s(CASE) == 1.0   # 10 frame periods are 10 ms here: the 1 s floor holds
    slow = make_case("rx 1 kS/s", rate_sps=1e3, frame_bytes=4048)
    assert silence_limit_s(slow) == 10.0  # 10 frame periods of 1 s
    assert silence_error(CASE, Snapshot(host_rx=rx(), taken_ns=int(2.9 * S))) is None
    err = silence_error(CASE, Snapshot(host_rx=rx(), taken_ns=int(3.5 * S)))
    assert err.startswith("received no samples for 1.50 s mid-run"), err
    # Before the first frame (start-up) and after the end of burst, silence is no error.
    assert silence_error(CASE, Snapshot(host_rx=rx(last_frame_ns=0), taken_ns=9 * S)) is None
    assert silence_error(CASE, Snapshot(host_rx=rx(eob_received=True), taken_ns=9 * S)) is None
    tx = make_case("tx 1 MS/s", direction="tx", rate_sps=1e6, frame_bytes=4048)
    assert "accepted no samples" in silence_error(tx, Snapshot(host_tx={"last_send_ns": S}, taken_ns=3 * S))


@pytest.mark.parametrize("faults,run_s,rate,spf,fits,most", [
    ({"drop_frames": 137}, 0.5, 1e6, 1988, False, 29),     # the example: 29 of 137 would land
    ({"drop_frames": 29}, 0.5, 1e6, 1988, True, 29),
    ({"drop_frames": 1}, 0.1, 1e6, 1988, False, 0),        # 50 frames: fewer than the 32 places need
    ({"corrupt_samples": 17}, 1.0, 5e6, 1000, True, 623),   # 5000 frames: 1246 places; 17 samples = 3 frames
    ({}, 0.01, 1e6, 1000, True, 0),
])
def test_fault_placement_rule(faults, run_s, rate, spf, fits, most):
    fit = fault_fit(faults, rate_sps=rate, samples_per_frame=spf, run_s=run_s)
    assert (fit.fits, fit.placeable_max) == (fits, most)
    if fit.faulted_frames:
        # The run length the message proposes holds them all.
        longer = fault_fit(faults, rate_sps=rate, samples_per_frame=spf, run_s=fit.frames_needed * spf / rate)
        assert longer.fits


@pytest.mark.parametrize("faults", [
    {"drop_frames": 1}, {"drop_frames": 3, "corrupt_samples": 20}, {"duplicate_frames": 7, "reorder_frames": 9},
    {"corrupt_samples": 17}, {"drop_frames": 40, "duplicate_frames": 2, "reorder_frames": 5, "corrupt_samples": 3},
])
@pytest.mark.parametrize("frame_bytes", [48 + 4 * 5, 8000])
def test_the_python_fault_rule_is_the_simulators(faults, frame_bytes):
    """fault_fit (validation, the core's FaultPlan::fit_run) and the capacity the simulator's
    FaultPlan places by (without a window) agree: the same faulted frames, and a run needs
    exactly up to its last fault's successor."""
    from hostlib.transports import complete_config, native

    cfg = complete_config({"frame_bytes": frame_bytes, "transport": {"kind": "udp"}, "faults": faults}, sim=True)
    cap = native().fault_capacity(cfg)
    spf = (frame_bytes - 48) // 4
    fit = fault_fit(faults, rate_sps=1e6, samples_per_frame=spf, run_s=1.0)
    assert fit.faulted_frames == cap["slots_needed"]
    assert fit.frames_needed == cap["last_seq"] + 1
