"""Cases whose host side is a GNU Radio flowgraph (`host: gnuradio`, testcases/gnuradio/):
they run like any case and the flowgraph's pattern_check counts exactly what the
simulator injected."""
from __future__ import annotations

import re
import time

import pytest

from .conftest import REPO, requires_native, skip_unless_required

CASES = REPO / "testcases" / "gnuradio" / "rx_flowgraph.yaml"
CASE_DIR = REPO / "testcases" / "gnuradio"
LAB_CHAIN_GRC = REPO / "gr_blocks" / "examples" / "lab_chain.grc"
LAB_CHAIN_PY = REPO / "gr_blocks" / "examples" / "lab_chain.py"


def gr_hilrig_or_skip() -> None:
    try:
        from gnuradio import hilrig  # noqa: F401
    except ImportError as exc:
        skip_unless_required(f"gr-hilrig not importable ({exc}); make build installs gr_blocks/")


def load(name: str):
    from hostlib.dsl import load_cases

    return next(c for c in load_cases([CASE_DIR]) if c.name == name)


def run_faulted(driver, case, built) -> tuple[dict, dict]:
    """Run a fault case (6 frames dropped, 9 samples corrupted) on `driver` for its
    duration; the flowgraph's check must count exactly what the simulator injected."""
    try:
        driver.open()
        driver.configure(case)
        assert built(), "the driver did not build the expected flowgraph"
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
    assert host["missing_frames"] == 6
    return host, device


@requires_native
def test_flowgraph_check_counts_exactly_what_the_simulator_injected(sim_rig):
    gr_hilrig_or_skip()
    from hostlib.drivers.flowgraph import FlowgraphRx
    from hostlib.drivers.sim import SimDriver

    case = load("GR RX shm injected faults")
    driver = SimDriver(sim_rig.devices["dut"])
    host, device = run_faulted(driver, case, lambda: isinstance(driver.rx, FlowgraphRx))
    assert host["eob_received"]
    # Every sample the simulator sent (it does not count the frames it dropped) reached the check.
    assert host["flowgraph_samples"] == device["samples_sent"]


@requires_native
def test_soapy_source_flowgraph_counts_exactly_what_the_simulator_injected(sim_rig):
    """gr-soapy's source over the module driver=hilrig -> pattern_check: the check counts
    the simulator's injected drops and corruptions exactly, the module's receive
    accounting the missing frames."""
    gr_hilrig_or_skip()
    from hostlib.drivers.flowgraph import FlowgraphRadio
    from hostlib.drivers.soapy import SoapyDriver

    case = load("GR soapy RX shm injected faults")
    driver = SoapyDriver(sim_rig.devices["soapy_sim"])

    def built_soapy_source() -> bool:
        spec = driver.radio.spec
        return (isinstance(driver.radio, FlowgraphRadio) and spec.block == "soapy_source"
                and spec.params["type"] == "sc16" and "drop_frames=6" in spec.params["stream_args"])

    host, _ = run_faulted(driver, case, built_soapy_source)   # missing_frames: the module's rx_stats
    assert host["flowgraph_samples"] > 0.9 * case.rate_sps * case.duration_s


GR_CASES = ["GR RX UDP 5 MS/s", "GR RX TCP 5 MS/s", "GR RX shm 2 channels sc8", "GR RX shm injected faults",
            "GR soapy RX UDP 5 MS/s", "GR soapy RX shm 2 channels sc8", "GR soapy RX shm injected faults",
            "GR lab chain grc UDP fc32", "GR lab chain py 2 channels soapy", "GR lab chain grc injected faults"]


def test_every_gnuradio_case_file_is_covered_here():
    from hostlib.dsl import load_cases

    names = {c.name for c in load_cases([CASE_DIR])}
    assert names == set(GR_CASES) | {"GR USRP RX 1 MS/s"}


@requires_native
@pytest.mark.parametrize("name", GR_CASES)
def test_gnuradio_cases_pass_on_the_sim_rig(name, sim_rig):
    gr_hilrig_or_skip()
    from hostlib.engine import run_case

    case = load(name)
    result = run_case(case, sim_rig, run_id="test")
    if result.verdict == "FAIL" and result.error is None:   # real time on a shared machine: once more
        result = run_case(case, sim_rig, run_id="test")
    assert result.verdict in ("PASS", "MARGINAL"), result.message   # MARGINAL: a pass short of the marginal band
    assert result.metrics["samples_received"] > 0.99 * case.rate_sps * case.duration_s * 0.5


def test_host_gnuradio_is_rx_only_and_named_in_the_error(write_case):
    from hostlib._exceptions import ConfigError

    with pytest.raises(ConfigError, match=r"host: gnuradio .* supports direction rx, not tx"):
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


@requires_native
def test_usrp_flowgraph_case_skips_without_a_usrp(sim_rig):
    gr_hilrig_or_skip()
    from hostlib.engine import run_case

    result = run_case(load("GR USRP RX 1 MS/s"), sim_rig, run_id="test")
    assert result.verdict == "SKIP", result.message
    assert "no UHD device matching 'type=b200" in result.message


def test_usrp_flowgraph_is_usrp_source_with_the_native_drivers_args(sim_rig):
    """The UHD path is built by the same code as the soapy one: usrp_source with the
    device args the native uhd driver would open (rig args, usb frame args), the case's
    format on the wire and in the flowgraph, one channel per case channel; UHD's own
    stream_args type takes them, and making the block reaches UHD, which finds no USRP."""
    uhd = pytest.importorskip("gnuradio.uhd")
    from hostlib.drivers.flowgraph import make_source, source_spec_uhd
    from hostlib.drivers.uhd import uhd_args

    case = load("GR USRP RX 1 MS/s")
    device = sim_rig.devices["usrp"]
    spec = source_spec_uhd(case, uhd_args(device, case), case.sample_format)
    assert spec.block == "uhd_usrp_source" and spec.cpu_format == "sc16" and spec.channels == 1
    assert spec.params["device_addr"] == uhd_args(device, case)
    assert spec.params["device_addr"].startswith("type=b200")
    assert "recv_frame_size=8176,num_recv_frames=16" in spec.params["device_addr"]   # the case's usb transport
    assert spec.params["stream_args"] == {"cpu_format": "sc16", "otw_format": "sc16", "channels": [0], "args": ""}
    assert spec.settings == {"clock_rate": 32e6, "samp_rate": 1e6}
    sa = uhd.stream_args(**spec.params["stream_args"])
    assert (sa.cpu_format, sa.otw_format, list(sa.channels)) == ("sc16", "sc16", [0])
    with pytest.raises(RuntimeError, match=r"(?i)no devices found"):
        make_source(spec)


# ------------------------------------------------------------------ a lab's own chain

def lab_case(write_case, flowgraph: str, channels: int = 1, fmt: str = "sc16", device: str = "dut"):
    return write_case(f"""
        name: lab chain
        device: {device}
        direction: rx
        host: gnuradio
        flowgraph: {flowgraph}
        channels: {channels}
        format: {fmt}
        master_clock: 100 MHz
        decimation: 100
        transport: {{kind: shm}}
        duration: 0.5 s
    """)[0]


@requires_native
@pytest.mark.parametrize("flowgraph,channels,fmt,message", [
    # The .grc's Pad Source line, the item sizes the case allows.
    (LAB_CHAIN_GRC, 1, "sc8", r"lab_chain\.grc:\d+: the Pad Source carries 8-byte input items; a case of "
                              r"format sc8 needs 2 \(complex int8\)-byte items"),
    (LAB_CHAIN_GRC, 2, "sc16", r"lab_chain\.grc:\d+: the Pad Source has 1 input port\(s\); the case streams 2"),
    (LAB_CHAIN_PY, 1, "sc16", r"lab_chain\.py:13: class lab_chain_2ch has 2 input port\(s\); the case streams 1"),
    (REPO / "gr_blocks" / "examples" / "sim_rx_check.grc", 1, "sc16",
     r"sim_rx_check\.grc:\d+: flowgraph generate_options is 'no_gui'; .* 'Hier Block'"),
])
def test_a_chain_that_cannot_be_used_is_a_config_error_naming_file_and_line(write_case, sim_rig, flowgraph,
                                                                           channels, fmt, message):
    gr_hilrig_or_skip()
    from hostlib.engine import run_case

    result = run_case(lab_case(write_case, str(flowgraph), channels, fmt), sim_rig, run_id="test")
    assert result.verdict == "ERROR" and result.kind == "config", result.message
    assert re.search(message, result.error), result.error


@requires_native
def test_python_chain_errors_name_the_line(tmp_path, write_case, sim_rig):
    gr_hilrig_or_skip()
    from hostlib.engine import run_case

    broken = tmp_path / "broken.py"
    broken.write_text("from gnuradio import gr\n\nraise RuntimeError('the lab forgot something')\n")
    result = run_case(lab_case(write_case, str(broken)), sim_rig, run_id="test")
    assert result.kind == "config" and "broken.py:3: importing the flowgraph failed: RuntimeError" in result.error
    needs_args = tmp_path / "needs_args.py"
    needs_args.write_text("from gnuradio import gr\n\n\nclass chain(gr.hier_block2):\n"
                          "    def __init__(self, taps):\n        pass\n")
    result = run_case(lab_case(write_case, str(needs_args)), sim_rig, run_id="test")
    assert result.kind == "config" and "needs_args.py:4: the chain's class chain must be made without" in result.error
    none = tmp_path / "none.py"
    none.write_text("x = 1\n")
    result = run_case(lab_case(write_case, str(none)), sim_rig, run_id="test")
    assert "expected exactly one gr.hier_block2 subclass" in result.error


def test_flowgraph_key_is_checked_when_the_case_loads(write_case):
    from hostlib._exceptions import ConfigError

    with pytest.raises(ConfigError, match=r"case\d+\.yaml:\d+: flowgraph: flowgraph file .*missing\.grc not found"):
        lab_case(write_case, "missing.grc")
    with pytest.raises(ConfigError, match=r"flowgraph: 'chain\.txt' is not a \.grc or \.py file"):
        lab_case(write_case, "chain.txt")
    with pytest.raises(ConfigError, match=r"flowgraph: a lab's flowgraph is the host side .* needs host: gnuradio"):
        write_case(f"""
            name: native with flowgraph
            device: dut
            direction: rx
            flowgraph: {LAB_CHAIN_GRC}
            master_clock: 100 MHz
            decimation: 100
            transport: {{kind: shm}}
            duration: 1 s
        """)
