"""The simulator's fault plan on both directions (issue 10 item 3, issue 11 item 6):
TX faults change what the device receives, so TX sequence and underrun thresholds
can be tested; a window bounds placement and a plan that does not fit is refused;
injected_* counts what was placed."""
from __future__ import annotations

import time

import pytest

from hostlib.tests.test_native_streams import SIM, Sim, effective, run_rx, transport
from hostlib.transports import complete_config

native = pytest.importorskip("hostlib._native", reason="build the native core first (cmake --build build)")
pytestmark = [pytest.mark.timeout(60), pytest.mark.skipif(not SIM.exists(), reason=f"{SIM} not built")]

FRAME_BYTES = 1048
SPF = (FRAME_BYTES - 48) // 4


@pytest.fixture
def sim():
    s = Sim()
    yield s
    s.close()


def run_tx(sim, kind, faults, seconds=0.6, rate=1e6):
    cfg = {"direction": "tx", "rate_sps": rate, "frame_bytes": FRAME_BYTES, "transport": transport(kind)}
    answer = sim.ok("configure", **cfg, fifo_frames=64, faults=faults)
    tx = native.TxStream(effective(cfg, dest=answer["endpoint"]))
    sim.ok("start")
    tx.start()
    time.sleep(seconds)
    tx.stop()
    time.sleep(0.05)
    return sim.ok("stop")["stats"], tx.stats(), answer


@pytest.mark.parametrize("kind", ["udp", "shm"])
@pytest.mark.parametrize("seed", [1, 9])
def test_tx_faults_reach_the_device_counters_exactly(sim, kind, seed):
    faults = {"seed": seed, "drop_frames": 3, "duplicate_frames": 2, "reorder_frames": 4, "corrupt_samples": 11}
    ss, ts, answer = run_tx(sim, kind, faults)
    assert answer["fault_plan"]["slots_needed"] == 3 + 2 + 4 + 2   # 11 samples: 8 + 3 -> 2 frames
    assert ts["send_errors"] == 0 and ts["frames_sent"] > answer["fault_plan"]["last_fault_seq"]
    # What was placed ...
    assert ss["injected_drop_frames"] == 3 and ss["injected_duplicate_frames"] == 2
    assert ss["injected_reorder_frames"] == 4 and ss["injected_corrupt_samples"] == 11
    # ... is what the device's receive accounting found.
    assert ss["tx_missing_frames"] == 3 and ss["tx_seq_errors"] == 3 + 4  # each drop and each swap's jump
    assert ss["tx_dropped_samples"] == 3 * SPF
    assert ss["tx_duplicate_frames"] == 2 and ss["tx_reordered_frames"] == 4
    assert ss["tx_pattern_errors"] == 11
    assert ss["tx_frames_received"] == ts["frames_sent"] - 3 + 2
    assert ss["underruns"] == 0


@pytest.mark.serial  # its calm run must show no underrun: the simulator's consumer clock is wall time
@pytest.mark.parametrize("kind", ["udp", "shm"])
def test_tx_consumer_stall_is_an_underrun(sim, kind):
    ss, ts, _ = run_tx(sim, kind, {"stall_ms": 250}, seconds=0.8)
    assert ss["injected_stalls"] == 1 and ss["injected_stall_ns"] >= 250e6
    assert ss["underruns"] >= 1            # the consumption clock passed what had arrived
    # A ring smaller than the stall backs up into the host, whose frames that found no
    # room are lost (send_errors) and seen by the device as missing: nothing else is.
    assert ss["tx_missing_frames"] == ts["send_errors"] and ss["tx_pattern_errors"] == 0
    if kind == "udp":  # 250 ms of 1 MS/s fit the socket buffer: nothing lost
        assert ts["send_errors"] == 0
    calm, _, _ = run_tx(sim, kind, {}, seconds=0.8)
    assert calm["underruns"] == 0 and calm["injected_stalls"] == 0


def test_window_bounds_placement_and_a_plan_that_does_not_fit_is_refused(sim):
    cfg = complete_config({"direction": "rx", "rate_sps": 1e6, "frame_bytes": FRAME_BYTES,
                           "transport": {"kind": "udp", "port": 9}, "faults": {"drop_frames": 21,
                                                                              "window_frames": 100}}, sim=True)
    assert native.fault_capacity(cfg) == {"slots_needed": 21, "slots_available": 21, "corrupt_samples_per_frame": 8,
                                          "last_seq": 97, "fits": True}
    cfg["faults"]["drop_frames"] = 22
    assert native.fault_capacity(cfg)["fits"] is False
    r = sim.rpc("configure", **cfg)
    assert not r["ok"] and "22 faulty frames" in r["error"] and "at most 21" in r["error"]
    r = sim.rpc("configure", **{**cfg, "faults": {**cfg["faults"], "drop_frames": 0, "stall_ms": 100}})
    assert not r["ok"] and "stall_ms" in r["error"]   # a stall of the consumer is a TX fault


@pytest.mark.parametrize("kind", ["udp", "shm"])
def test_rx_faults_inside_a_window_are_all_placed(sim, kind):
    rate, window = 1e6, 300   # 300 frames of 250 samples: 75 ms
    faults = {"seed": 5, "drop_frames": 30, "reorder_frames": 20, "duplicate_frames": 20, "window_frames": window}
    cap = native.fault_capacity(complete_config({"frame_bytes": FRAME_BYTES, "faults": faults}, sim=True))
    assert cap["fits"] and cap["last_seq"] < window
    # A device FIFO of the whole run: a simulator stalled by a busy machine cannot
    # overflow, so every missing frame is an injected one.
    st, ss, _ = run_rx(sim, kind, rate, FRAME_BYTES, 0.4, faults=faults, fifo_frames=4096)
    assert st["overruns"] == 0
    assert (ss["injected_drop_frames"], ss["injected_reorder_frames"], ss["injected_duplicate_frames"]) == (30, 20, 20)
    assert st["missing_frames"] == 30 and st["reordered_frames"] == 20 and st["duplicate_frames"] == 20
