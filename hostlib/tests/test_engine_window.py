"""The measurement window holds the samples of its own time: a throughput above the
asked rate is an accounting error of the rig (ERROR, infrastructure), never a PASS."""
from __future__ import annotations

import dataclasses

import pytest

from hostlib.dsl import load_cases
from hostlib.engine import run_case
from hostlib.results.record import ErrorKind, Verdict
from hostlib.tests.conftest import REPO, requires_native

USB_CASES = REPO / "testcases" / "usb" / "usb_sim.yaml"


def usb_case(name: str):
    return next(c for c in load_cases([USB_CASES]) if c.name == name)


@requires_native
def test_usb_loopback_throughput_is_the_rate_not_the_senders_lead(sim_rig):
    """Over USB the host's sender fills the device FIFO and its transfers in flight at
    bus speed before it runs at the rate; the simulator echoes each frame as it arrives.
    A window that starts while that lead is filling counts it on top of the rate
    (it read 106 %): the window starts once the sender runs at the rate."""
    case = usb_case("USB2 loopback 4 MS/s")
    r = run_case(case, sim_rig, run_id="window")
    m = r.metrics
    assert r.verdict in (Verdict.PASS, Verdict.MARGINAL), r.message
    # The rate plus one 16 KiB transfer (two 8192-byte frames) counted whole at an edge,
    # plus the receiver's longest wait for a frame (how late an edge can be on a busy host).
    ceiling = 1 + (2 * case.samples_per_frame / case.rate_sps + m["longest_gap_s"]) / m["duration_s"]
    assert m["throughput_ratio"] <= ceiling, m
    assert m["throughput_ratio"] >= 0.99, m


@requires_native
def test_a_window_that_counts_the_senders_lead_is_an_infrastructure_error(sim_rig, monkeypatch):
    """The same loopback with no warm-up and no wait for the sender: the window holds the
    lead (more than the rate plus one frame), which the rig reports as its own error,
    keeping what it measured, instead of a PASS above 100 %."""
    from hostlib.engine import runner

    monkeypatch.setattr(runner, "SENDER_SETTLE_MAX_S", 0.0)
    case = dataclasses.replace(usb_case("USB2 loopback 4 MS/s"), warmup_s=0.0)
    r = run_case(case, sim_rig, run_id="window-lead")
    assert r.verdict is Verdict.ERROR and r.error_kind is ErrorKind.INFRASTRUCTURE, r.message
    assert "more than the window can hold" in r.message, r.message
    assert r.metrics["throughput_ratio"] > 1.0, r.metrics   # what was measured is kept


# USB2 TX at 8 MS/s with every frame of the run in flight at once (16 KiB transfers of two
# 8192-byte frames): the host's lead is the whole run, refilled at bus speed, and no host
# stall on a busy machine can starve the device.
TX_LEAD_CASE = """
name: usb tx lead
device: dut
direction: tx
master_clock: 64 MHz
interpolation: 8
transport: {{kind: usb, link: usb2, frame_bytes: 8192, transfer_bytes: 16 KiB, transfers: {transfers}}}
fifo_frames: 256
warmup: 0 s
duration: 0.6 s
thresholds: {{throughput: ">= 90% of rate"}}
"""


@requires_native
def test_a_tx_window_counts_what_the_devices_sample_clock_played(sim_rig, write_case, monkeypatch):
    """Over USB the host fills the device FIFO and its OUT transfers at bus speed before
    it runs at the rate (a host that was descheduled refills that lead at any moment).
    With no warm-up and no wait for the sender, the window holds the whole lead; the
    device counts what its sample clock consumed, so the TX throughput is the rate, not
    the rate plus the lead (counted as it landed, a loaded host read 105.9 %: an ERROR)."""
    from hostlib.engine import runner

    monkeypatch.setattr(runner, "SENDER_SETTLE_MAX_S", 0.0)
    run_frames = int(8e6 * 1.5 / ((8192 - 48) // 4))      # the run, start-up and stop included
    [case] = write_case(TX_LEAD_CASE.format(transfers=run_frames // 2 + 1))
    r = run_case(case, sim_rig, run_id="window-tx-played")
    m = r.metrics
    assert r.verdict in (Verdict.PASS, Verdict.MARGINAL), r.message
    one_frame = case.samples_per_frame / case.rate_sps / m["duration_s"]
    assert 0.9 <= m["throughput_ratio"] <= 1 + one_frame, m


def test_throughput_ceiling_is_the_rate_plus_one_delivery_and_the_measured_edge_slack():
    from hostlib.counters import Snapshot
    from hostlib.engine.measure import overcounted, throughput_ceiling

    case = usb_case("USB2 loopback 4 MS/s")      # 2036-sample frames, two per 16 KiB transfer
    ceiling = throughput_ceiling(case, 1.0)
    assert ceiling == pytest.approx(1 + 2 * 2036 / 4e6)
    quiet = Snapshot(taken_ns=0)
    assert overcounted(case, {"throughput_ratio": ceiling, "duration_s": 1.0}, {}, quiet, quiet, quiet) is None
    text = overcounted(case, {"throughput_ratio": 1.064, "duration_s": 1.0}, {}, quiet, quiet, quiet) or ""
    assert "throughput 106.40%" in text, text
    # A receiver that once waited 5 ms for a frame may have its edge 5 ms late: allowed for.
    stalled = Snapshot(host_rx={"longest_gap_ns": 5_000_000}, taken_ns=0)
    assert overcounted(case, {"throughput_ratio": 1.005, "duration_s": 1.0}, {}, quiet, quiet, stalled) is None
    # Loopback: a device echoing at its sample clock catches up after its own longest pause.
    paused = Snapshot(host_rx={"longest_gap_ns": 5_000_000}, device={"producer_longest_gap_ns": 20_000_000},
                      taken_ns=0)
    assert overcounted(case, {"throughput_ratio": 1.02, "duration_s": 1.0}, {}, quiet, quiet, paused) is None
    assert overcounted(case, {"throughput_ratio": 1.03, "duration_s": 1.0}, {}, quiet, quiet, paused)
    both = usb_case("USB2 rx+tx 4 MS/s")

    def legs(**ratio_and_window: tuple[float, float]) -> dict[str, dict[str, float]]:
        """Each leg's own metrics (CaseResult.legs): throughput_ratio and the window."""
        return {leg: {"throughput_ratio": r, "duration_s": w} for leg, (r, w) in ratio_and_window.items()}

    # TX: the device's counters were true while each edge's poll ran (asked_ns .. taken_ns).
    polled = Snapshot(taken_ns=2_000_000, asked_ns=0)
    assert overcounted(both, {}, legs(tx=(1.004, 1.0)), polled, polled, quiet) is None
    # TX: frames the host had sent but the device had not yet counted at the start land inside.
    start = Snapshot(host_tx={"frames_sent": 100}, device={"tx_frames_received": 90}, taken_ns=0)
    end = Snapshot(host_tx={"frames_sent": 2100}, device={"tx_frames_received": 2100}, taken_ns=0)
    assert overcounted(both, {}, legs(tx=(1.0045, 1.0)), start, end, quiet) is None
    assert overcounted(both, {}, legs(tx=(1.0045, 1.0)), end, end, quiet)
    text = overcounted(both, {}, legs(rx=(1.0, 1.0), tx=(1.05, 1.0)), polled, polled, quiet) or ""
    assert text.startswith("tx throughput 105.00%"), text


def test_a_device_paced_rx_window_may_drain_what_the_device_held_before_it():
    from hostlib.counters import Snapshot
    from hostlib.engine.measure import edge_slack_s, overcounted

    from .factories import make_case

    # USB2 RX, 4 KiB frames in 4 KiB transfers, 8 in flight: 1012-sample frames at 12.8 MS/s.
    case = make_case("RX usb", kind="usb", rate_sps=12.8e6, frame_bytes=4096, transport={"kind": "usb",
        "link": "usb2", "transfer_bytes": 4096, "buffer_bytes": 32768})
    frame_s = case.samples_per_frame / case.rate_sps
    quiet = Snapshot(taken_ns=0)
    held = Snapshot(host_rx={"longest_gap_ns": 1_000_000}, device={"fifo_peak_frames": 100}, taken_ns=0)
    # the device's FIFO peak and the link's transfers in flight arrive as fast as the host reads
    assert edge_slack_s(case, quiet, quiet, held) == pytest.approx((100 + 8) * frame_s)
    inside = 1 + (1 + 100 + 8) * frame_s - 1e-6
    assert overcounted(case, {"throughput_ratio": inside, "duration_s": 1.0}, {}, quiet, quiet, held) is None
    # more than the device could have held is still an accounting error
    beyond = 1 + (1 + 100 + 8) * frame_s + 1e-4
    assert overcounted(case, {"throughput_ratio": beyond, "duration_s": 1.0}, {}, quiet, quiet, held)


class _HeldBackReceiver:
    """What a host receiver reports after it was held back before the window: every
    50 ms look it has drained `backlog_looks` intervals' worth of backlog at three times
    the rate, then it takes the rate. (A real stall cannot be placed on demand; the
    counters it leaves are these.)"""

    def __init__(self, case, backlog_looks: int):
        self.bytes_per_look = case.rate_sps * 4 * 0.05   # sc16, one channel
        self.looks = [3.0] * backlog_looks + [1.0] * 5
        self.received = 0.0
        self.taken_ns = 0

    def poll(self, watchdog):
        from hostlib.counters import Snapshot

        if self.taken_ns:
            self.received += self.looks.pop(0) * self.bytes_per_look
        self.taken_ns += 50_000_000
        frames = self.received / 8000
        return Snapshot(host_rx={"payload_bytes_received": frames * 7952, "frames_received": frames,
                                 "samples_received": frames * 1988}, taken_ns=self.taken_ns)


def test_an_rx_window_starts_once_the_receiver_has_drained_what_piled_up_before_it(monkeypatch):
    """Frames that piled up while the host receiver was held back before the window (in
    the socket buffer, the ring, a flowgraph's buffers: GNU Radio's soapy RX read 109 %
    under two CPU hogs) drain at CPU speed; counted inside the window they read as
    rate. The window starts at the first look that took the rate."""
    from hostlib.engine import runner
    from hostlib.engine.silence import SilenceWatch, watched_poll

    from .factories import make_case

    monkeypatch.setattr(runner.time, "sleep", lambda s: None)
    case = make_case("RX udp 5 MS/s", rate_sps=5e6, frame_bytes=8000)
    receiver = _HeldBackReceiver(case, backlog_looks=3)
    watch = SilenceWatch(case)
    first = watched_poll(receiver, watch)
    start = runner._receiver_caught_up(case, receiver, watch, first, lambda: None)
    # three draining intervals passed over, the window starts where the first at the rate began
    assert start.taken_ns == first.taken_ns + 3 * 50_000_000
    assert start.host_rx["frames_received"] == pytest.approx(9 * receiver.bytes_per_look / 8000)


def test_a_lossy_rx_stream_keeps_pace_and_its_window_starts_at_once(monkeypatch):
    """Frames the device dropped are missing, not late: the receiver's progress through the
    sequence counts them, so a window over losses starts at once and holds them."""
    from hostlib.counters import Snapshot
    from hostlib.engine import runner
    from hostlib.engine.silence import SilenceWatch, watched_poll

    from .factories import make_case

    monkeypatch.setattr(runner.time, "sleep", lambda s: None)
    case = make_case("RX udp 5 MS/s", rate_sps=5e6, frame_bytes=8000)
    per_look = 5e6 / 1988 * 0.05
    looks = iter([(0.0, 0.0), (per_look / 2, per_look / 2), (per_look, per_look)])   # half the frames lost

    class Lossy:
        taken_ns = 0

        def poll(self, watchdog):
            got, lost = next(looks)
            self.taken_ns += 50_000_000
            return Snapshot(host_rx={"frames_received": got, "missing_frames": lost}, taken_ns=self.taken_ns)

    receiver = Lossy()
    watch = SilenceWatch(case)
    first = watched_poll(receiver, watch)
    assert runner._receiver_caught_up(case, receiver, watch, first, lambda: None) is first


def test_an_rx_window_edge_is_when_the_receiver_was_read_not_when_the_poll_ended():
    """A poll that also waits on the device (its stats over the control socket) or a
    thread descheduled after the read ends later than the host's counters were true. A
    flowing stream's edge is its last frame counted, judged against the receiver's own
    read stamp (read_ns): an edge at the poll's end held frames from before it (rx+tx over
    UDP read 101.6 % on a loaded host). A stalled stream's edge is the read itself."""
    from hostlib.counters import Snapshot
    from hostlib.engine.measure import window_edge_ns

    from .factories import make_case

    case = make_case("RX udp 4 MS/s", rate_sps=4e6, frame_bytes=8000)   # 0.5 ms frames
    read, last = 1_000_000_000, 1_000_000_000 - 300_000
    late_poll = Snapshot(host_rx={"last_frame_ns": last, "read_ns": read}, taken_ns=read + 10_000_000)
    assert window_edge_ns(case, late_poll) == last
    stalled = Snapshot(host_rx={"last_frame_ns": last - 5_000_000, "read_ns": read}, taken_ns=read + 10_000_000)
    assert window_edge_ns(case, stalled) == read
    # a flush between the stamp and the loads: the last frame is after the read, still the edge
    assert window_edge_ns(case, Snapshot(host_rx={"last_frame_ns": read + 1000, "read_ns": read}, taken_ns=read)) \
        == read + 1000
    # a receiver that does not stamp its reads: the poll's end, as before
    assert window_edge_ns(case, Snapshot(host_rx={"last_frame_ns": last}, taken_ns=read)) == last
