"""Cases whose host side is a GNU Radio flowgraph (`host: gnuradio`, testcases/gnuradio/):
they run like any case and the flowgraph's pattern_check counts exactly what the
simulator injected."""
from __future__ import annotations

import time

import pytest

from .conftest import REPO, requires_native, skip_unless_required

CASES = REPO / "testcases" / "gnuradio" / "rx_flowgraph.yaml"


def gr_hilrig_or_skip() -> None:
    try:
        from gnuradio import hilrig  # noqa: F401
    except ImportError as exc:
        skip_unless_required(f"gr-hilrig not importable ({exc}); make build installs gr_blocks/")


def load(name: str):
    from hostlib.dsl import load_cases

    return next(c for c in load_cases([CASES]) if c.name == name)


@requires_native
def test_flowgraph_check_counts_exactly_what_the_simulator_injected(sim_rig):
    gr_hilrig_or_skip()
    from hostlib.drivers.flowgraph import FlowgraphRx
    from hostlib.drivers.sim import SimDriver

    case = load("GR RX shm injected faults")
    driver = SimDriver(sim_rig.devices["dut"])
    try:
        driver.open()
        driver.configure(case)
        assert isinstance(driver.rx, FlowgraphRx)
        driver.start()
        time.sleep(case.duration_s)
        final = driver.stop()
    finally:
        driver.close()
    host, device = final.host_rx, final.device
    samples_per_frame = (4048 - 48) // 4
    assert device["injected_drop_frames"] == 6 and device["injected_corrupt_samples"] == 9
    assert host["flowgraph_gaps"] == device["injected_drop_frames"]
    assert host["dropped_samples"] == device["injected_drop_frames"] * samples_per_frame
    assert host["pattern_errors"] == device["injected_corrupt_samples"]
    assert host["missing_frames"] == 6 and host["eob_received"]
    # Every sample the simulator sent (it does not count the frames it dropped) reached the check.
    assert host["flowgraph_samples"] == device["samples_sent"]


@requires_native
@pytest.mark.parametrize("name", ["GR RX UDP 5 MS/s", "GR RX shm 2 channels sc8", "GR RX shm injected faults"])
def test_gnuradio_cases_pass_on_the_sim_rig(name, sim_rig):
    gr_hilrig_or_skip()
    from hostlib.engine import run_case

    case = load(name)
    result = run_case(case, sim_rig, run_id="test")
    if result.verdict == "FAIL" and result.error is None:   # real time on a shared machine: once more
        result = run_case(case, sim_rig, run_id="test")
    assert result.verdict.startswith("PASS"), result.message
    assert result.metrics["samples_received"] > 0.99 * case.rate_sps * case.duration_s * 0.5


def test_host_gnuradio_is_rx_only_and_named_in_the_error(write_case):
    from hostlib._exceptions import ConfigError

    with pytest.raises(ConfigError, match="host: gnuradio .* supports direction rx, not tx"):
        write_case("""
            name: tx flowgraph
            device: dut
            direction: tx
            host: gnuradio
            master_clock: 100 MHz
            interpolation: 100
            transport: {kind: udp}
            duration: 1 s
        """)
