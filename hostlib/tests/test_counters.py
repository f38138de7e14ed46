"""hostlib.counters: the TypedDicts of the driver snapshots are the core's own key sets
(counters_json, TxStream::stats, SimDevice::stats, UsbEngine::stats), read from the
native module as it runs, so a counter added or renamed in C++ fails here first."""
from __future__ import annotations

import time

import pytest

from hostlib.counters import (DeviceStats, FrameSinkTxCounters, RxCheckerCounters, RxCounters, SimDeviceStats,
                              TxCounters, TxStreamCounters, UsbEngineStats)
from hostlib.tests.conftest import requires_native

RX_STREAM_KEYS = set(RxCheckerCounters.__optional_keys__) | {"thread_cpu_ns", "warnings"}


def keys(typed: type) -> set[str]:
    return set(typed.__optional_keys__) | set(typed.__required_keys__)


def snapshot_of(write_case, sim_rig, transport: str):
    """A loopback's counters a moment into the stream, through the real sim driver."""
    from hostlib.drivers.sim import SimDriver

    (case,) = write_case(f"""
        cases:
          - name: counters {transport}
            device: dut
            direction: loopback
            master_clock: 64 MHz
            decimation: 64
            transport: {{kind: {transport}, frame_bytes: 8192}}
            duration: 1 s
            thresholds: {{missing_frames: "== 0"}}
        """)
    driver = SimDriver(sim_rig.devices["dut"])
    try:
        driver.open()
        driver.configure(case)
        driver.start()
        time.sleep(0.2)
        snap = driver.poll()
        driver.stop()
    finally:
        driver.close()
    return snap


@requires_native
def test_snapshot_keys_are_the_cores_over_udp(write_case, sim_rig):
    snap = snapshot_of(write_case, sim_rig, "udp")
    assert set(snap.host_rx) == RX_STREAM_KEYS        # counters_json(RxCounters) + RxStream::stats
    assert set(snap.host_tx) == keys(FrameSinkTxCounters) - {"tcp"}   # TxStream::stats (a frame sink's pacer)
    assert set(snap.device) == keys(SimDeviceStats) - {"tcp"}   # SimDevice::stats (the model core)


@requires_native
@pytest.mark.parametrize("direction", ["rx", "tx"])
def test_snapshot_keys_are_the_cores_over_tcp(write_case, sim_rig, direction):
    """tcp adds the connection's figures (`tcp`, TcpInfo) to each end's stats."""
    from hostlib.counters import TcpInfo
    from hostlib.drivers.sim import SimDriver

    divider = "decimation" if direction == "rx" else "interpolation"
    (case,) = write_case(f"""
        name: counters tcp {direction}
        device: dut
        direction: {direction}
        master_clock: 64 MHz
        {divider}: 64
        transport: {{kind: tcp, frame_bytes: 8192}}
        duration: 1 s
        """)
    driver = SimDriver(sim_rig.devices["dut"])
    try:
        driver.open()
        driver.configure(case)
        driver.start()
        time.sleep(0.2)
        snap = driver.poll()
        driver.stop()
    finally:
        driver.close()
    host = snap.host_rx if direction == "rx" else snap.host_tx
    assert set(host) == (RX_STREAM_KEYS if direction == "rx" else keys(FrameSinkTxCounters)) | {"tcp"}
    assert set(snap.device) == keys(SimDeviceStats)
    assert set(host["tcp"]) == set(snap.device["tcp"]) == keys(TcpInfo)


@requires_native
def test_snapshot_keys_are_the_cores_over_usb(write_case, sim_rig):
    snap = snapshot_of(write_case, sim_rig, "usb")
    assert set(snap.host_rx) == RX_STREAM_KEYS        # UsbEngine::stats()["rx"]
    assert set(snap.host_tx) == keys(TxStreamCounters)
    assert keys(UsbEngineStats) <= set(snap.device) <= keys(DeviceStats), set(snap.device) ^ keys(DeviceStats)


def test_every_declared_counter_is_one_the_core_or_a_driver_writes():
    """The wider TypedDicts only add what a radio or the GNU Radio host reports."""
    assert keys(RxCounters) - RX_STREAM_KEYS == {"late_commands", "other_errors", "rig_source_pattern_errors",
                                                 "device_pattern_errors", "flowgraph_samples", "flowgraph_gaps",
                                                 "tcp"}   # transport tcp: the connection's figures
    assert keys(TxCounters) - keys(FrameSinkTxCounters) == {"underruns", "seq_errors", "late_commands", "bursts_acked"}


@pytest.mark.parametrize("value, measured", [(None, None), (3, 3.0), (True, 1.0)])
def test_a_counter_the_stream_cannot_know_is_not_measured(value, measured):
    from hostlib.counters import counter
    from hostlib.counters import measured as measured_of
    assert measured_of({"k": value}, "k") == measured and counter({"k": value}, "k") == (measured or 0.0)
