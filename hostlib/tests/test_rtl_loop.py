"""RTL in the loop (docs/firmware.md): hilrig-sim with firmware/rtl/loopback_top as its device
core (a Verilator model), selected by `firmware: rtl` on the sim rig's device `rtl`.

These tests prove the RTL path is the one in use, so that the YAML cases of
testcases/firmware/ cannot pass on the C++ core by accident: the simulator reports the
RTL image of firmware/images.yaml, the model's clock ran, and the RTL's parameters bind
the stream as only elaborated hardware does.
"""
from __future__ import annotations

import time

import pytest

from hostlib._exceptions import ConfigError, DeviceError
from hostlib.drivers.sim import SimDriver, SimProcess
from hostlib.engine import run_case
from hostlib.rig import load_rig
from hostlib.rig.images import compare_images, load_images, rtl_tree_hash
from hostlib.rig.probe import Found

from .conftest import REPO, requires_native

pytestmark = requires_native

CASES = REPO / "testcases" / "firmware" / "rtl_in_the_loop.yaml"


def rtl_image():
    return next(im for im in load_images() if im.image == "hilrig-loopback-rtl")


def stream(sim_rig, case, seconds: float):
    """The `rtl` device streams `case` for `seconds`: (final snapshot, seconds from start to stop)."""
    driver = SimDriver(sim_rig.devices["rtl"])
    driver.open()
    try:
        driver.configure(case)
        driver.start()
        t0 = time.monotonic()
        time.sleep(seconds)
        final = driver.stop()
        return final, time.monotonic() - t0
    finally:
        driver.close()


def test_rig_device_rtl_runs_the_rtl_image(sim_rig):
    entry = sim_rig.devices["rtl"]
    assert entry.driver == "sim" and entry.firmware == "rtl"
    sim = SimProcess(None, ["--firmware", "rtl"])
    try:
        hello = sim.request("hello")
    finally:
        sim.close()
    image = rtl_image()
    assert hello["firmware"] == "rtl" and hello["image"] == image.image
    assert hello["fpga_version"] == image.version
    # The model was built from the RTL the manifest names, which is the RTL in the tree.
    assert hello["rtl_git_hash"] == image.rtl_git_hash == rtl_tree_hash()
    assert hello["parameters"]["SAMPLES_PER_FRAME"] == image.parameters["SAMPLES_PER_FRAME"]


def test_rig_check_compares_the_rtl_device_with_the_manifest(sim_rig):
    from hostlib.drivers.sim import find_sim_binary
    found = {"rtl": Found("sim", {"binary": find_sim_binary()}), "dut": Found("sim", {"binary": find_sim_binary()})}
    rows = {r.alias: r for r in compare_images(sim_rig, found, load_images())}
    assert rows["rtl"].ok and "hilrig-loopback-rtl 0.1.0" in rows["rtl"].detail, rows["rtl"].detail
    assert rows["dut"].ok and "hilrig-sim" in rows["dut"].detail, rows["dut"].detail
    stale = [im for im in load_images() if im.image == "hilrig-loopback-rtl"]
    stale[0] = type(stale[0])(**{**stale[0].__dict__, "version": "9.9.9"})
    rows = {r.alias: r for r in compare_images(sim_rig, found, stale)}
    assert not rows["rtl"].ok and "fpga_version=0.1.0" in rows["rtl"].detail


def test_firmware_key_is_for_the_simulator_only(tmp_path):
    rig = tmp_path / "bad.yaml"
    rig.write_text("name: bad\ndevices:\n  radio:\n    driver: uhd\n    firmware: rtl\n    max_rate: 1 MS/s\n")
    with pytest.raises(ConfigError) as err:
        load_rig(rig)
    assert "bad.yaml:3" in str(err.value) and "firmware" in str(err.value)
    rig.write_text("name: bad\ndevices:\n  sim:\n    driver: sim\n    firmware: verilog\n    max_rate: 1 MS/s\n")
    with pytest.raises(ConfigError) as err:
        load_rig(rig)
    assert "firmware" in str(err.value) and "rtl" in str(err.value)


def test_the_rtl_binds_the_stream_to_its_parameters(write_case, sim_rig):
    """The C++ core takes any frame size; elaborated RTL takes the one it was built for."""
    [case] = write_case("""
        name: RTL with 8000-byte frames
        device: rtl
        direction: rx
        master_clock: 2 MHz
        decimation: 2
        transport: {kind: udp, frame_bytes: 8000}
        duration: 0.2 s
        thresholds: {missing_frames: "== 0"}
        """)
    driver = SimDriver(sim_rig.devices["rtl"])
    driver.open()
    try:
        with pytest.raises(DeviceError) as err:
            driver.configure(case)
    finally:
        driver.close()
    assert "RTL core hilrig-loopback-rtl" in str(err.value) and "frame_bytes 8000" in str(err.value)
    assert "1040-byte frames" in str(err.value)


def test_rx_frames_come_out_of_the_clocked_model(write_case, sim_rig):
    """The device's own figures: the model's clock ran at master_clock for the stream's time,
    and every frame the host checked came out of it."""
    [case] = write_case("""
        name: RTL RX shm
        device: rtl
        direction: rx
        master_clock: 2 MHz
        decimation: 2
        transport: {kind: shm, frame_bytes: 1040}
        duration: 0.5 s
        thresholds: {missing_frames: "== 0"}
        """)
    final, elapsed = stream(sim_rig, case, 0.5)
    dev, rx = final.device, final.host_rx
    assert dev["device_core"] == "rtl" and dev["rtl_rate_div"] == 2 and dev["rtl_clock_hz"] == 2e6
    # 2 M clocks per second of wall time, less the 1 ms start delay, plus the stop's EOB run
    assert 0.8 * 2e6 * (elapsed - 0.1) <= dev["rtl_cycles"] <= 2e6 * elapsed * 1.1 + 2e6 * 0.1
    assert rx["frames_received"] >= 0.8 * 0.5 * 1e6 / 248
    assert rx["pattern_errors"] == 0 and rx["missing_frames"] == 0 and rx["eob_received"]
    assert dev["frames_sent"] == rx["frames_received"]
    assert dev["overflow_frames"] == 0


@pytest.mark.parametrize("name", ["RTL RX UDP 1 MS/s", "RTL TX UDP 1 MS/s", "RTL loopback shm 1 MS/s",
                                  "RTL RX UDP injected faults", "RTL TX UDP injected faults"])
def test_yaml_cases_pass_against_the_rtl(name, sim_rig):
    from hostlib.dsl import load_cases
    [case] = [c for c in load_cases([CASES]) if c.name == name]
    result = run_case(case, sim_rig, run_id="test")
    if result.verdict != "PASS" and "host-limited" in result.message:
        result = run_case(case, sim_rig, run_id="test")   # the machine was busy: once more
    m = result.metrics
    # A pass: PASS, or PASS (marginal) when a busy machine's timing leaves the rate
    # inside its limit but outside the marginal band (the counts below are exact).
    assert result.verdict.passed, (result.message, m)
    if "faults" in name:  # the injected truth, counted exactly by the host (RX) or the RTL checker (TX)
        assert m["injected_drop_frames"] == m["missing_frames"] == 2
        assert m["injected_corrupt_samples"] == m["pattern_errors"] == 5
    if "RX UDP injected" in name:
        assert m["injected_duplicate_frames"] == m["duplicate_frames"] == 1
        assert m["injected_reorder_frames"] == m["reordered_frames"] == 1
    if "TX" in name:  # the checker has no duplicate window: those two are not measured, not 0
        assert "duplicate_frames" not in m and "reordered_frames" not in m



def test_a_model_behind_real_time_overflows_in_the_rtl(write_case, sim_rig):
    """100 M clocks a second is more than the model runs: with 4 frames of slack its clock
    pauses, and the RTL's packetizer drops whole frames and flags the next one
    OVERFLOW_BEFORE, which the host counts exactly as it does a device's."""
    [case] = write_case("""
        name: RTL RX beyond the model
        device: rtl
        direction: rx
        master_clock: 100 MHz
        decimation: 1
        transport: {kind: shm, frame_bytes: 1040}
        fifo_frames: 4
        duration: 0.5 s
        thresholds: {missing_frames: "== 0"}
        """)
    final, _ = stream(sim_rig, case, 0.5)
    dev, rx = final.device, final.host_rx
    assert dev["rtl_pauses"] > 0 and dev["rtl_paused_cycles"] > 0
    assert dev["overflow_frames"] > 0 and dev["overflow_late_frames"] > 0
    assert dev["overflow_late_frames"] + dev["overflow_link_full_frames"] == dev["overflow_frames"]
    # Every frame the RTL dropped is a seq gap behind an OVERFLOW_BEFORE frame at the host.
    assert rx["overruns"] == dev["overflow_events"] > 0
    assert rx["missing_frames"] == dev["overflow_frames"]
    assert rx["pattern_errors"] == 0 and rx["duplicate_frames"] == 0
