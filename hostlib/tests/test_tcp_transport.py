"""The tcp transport (transport.kind: tcp): the DSL's options and errors at their lines,
the simulator streaming over tcp in both directions with exact accounting of injected
faults, TCP_INFO figures that are plausible and name the congestion control asked for,
and the case files in testcases/transports run on the simulator rig (no mocks)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from hostlib._exceptions import ConfigError
from hostlib.dsl import load_cases
from hostlib.engine import run_case
from hostlib.reports.html import case_log_html
from hostlib.tests.test_native_streams import SIM, Sim, effective
from hostlib.transports import resolve_stream
from hostlib.transports.config import TcpTransport

from .conftest import requires_native

pytestmark = [requires_native, pytest.mark.timeout(120),
              pytest.mark.skipif(not SIM.exists(), reason=f"{SIM} not built")]
native = pytest.importorskip("hostlib._native", reason="build the native core first (cmake --build build)")

REPO = Path(__file__).resolve().parents[2]
FRAME_BYTES = 4048
SPF = (FRAME_BYTES - 48) // 4

CASE = """\
name: tcp
device: dut
direction: tx
master_clock: 200 MHz
interpolation: 20
transport:
  kind: tcp
  frame_bytes: 8000
{options}
duration: 1 s
"""


def _errors(write_case, options: str) -> str:
    with pytest.raises(ConfigError) as e:
        write_case(CASE.format(options=options))
    return str(e.value)


def test_tcp_options_resolve_to_the_cores_keys(write_case):
    [case] = write_case(CASE.format(options="  write_bytes: 512 KiB\n  congestion: reno\n  nodelay: true\n"
                                            "  socket_buffer: 8 MiB"))
    t = case.transport
    assert isinstance(t, TcpTransport)
    assert (t.write_bytes, t.congestion, t.nodelay, t.socket_buffer_bytes) == (512 * 1024, "reno", True, 8 << 20)
    [plain] = write_case(CASE.format(options=""))
    # Defaults: one batch per send(), the kernel's congestion control, the socket buffer sized by rate.
    assert isinstance(plain.transport, TcpTransport)
    assert (plain.transport.write_bytes, plain.transport.congestion, plain.transport.nodelay) == (0, "", False)
    assert plain.transport.socket_buffer_bytes >= 4 << 20


@pytest.mark.parametrize(("options", "line", "expected"), [
    ("  write_byte: 1 MiB", 9, "did you mean 'write_bytes'"),
    ("  write_bytes: 1 Mbit/s", 9, "write_bytes"),
    ("  congestion: cubc", 9, "did you mean 'cubic'"),
    ("  congestion: nosuchcc", 9, "/proc/sys/net/ipv4/tcp_allowed_congestion_control"),
    ("  pacing: {gap: 4 us}", 9, "'pacing' is not a tcp setting"),
    ("  publish: batched", 9, "'publish' is not a tcp setting"),
    ("  gso: true", 9, "'gso' is not a tcp setting"),
])
def test_wrong_tcp_options_name_their_line(write_case, options, line, expected):
    text = _errors(write_case, options)
    assert f"case1.yaml:{line}" in text and expected in text, text


def test_udp_refuses_tcp_options(write_case):
    text = CASE.format(options="  write_bytes: 64 KiB").replace("kind: tcp", "kind: udp")
    with pytest.raises(ConfigError, match="'write_bytes' is not a udp setting"):
        write_case(text)


def test_core_refuses_a_congestion_name_that_cannot_be_one():
    with pytest.raises(ValueError, match="congestion"):
        resolve_stream({"transport": {"kind": "tcp", "congestion": "Not A Name"}})


# --- the simulator over tcp, the native streams directly -------------------------------

@pytest.fixture
def sim():
    s = Sim()
    yield s
    s.close()


def tcp(**options):
    return {"kind": "tcp", "host": "127.0.0.1", "port": 0, **options}


def run_rx(sim, faults, *, rate=1e6, seconds=0.6, **options):
    cfg = {"direction": "rx", "rate_sps": rate, "frame_bytes": FRAME_BYTES, "transport": tcp(**options)}
    rx = native.RxStream(effective(cfg))
    # A device FIFO of the whole run: a simulator stalled by a busy machine cannot
    # overflow, so every missing frame is an injected one.
    sim.ok("configure", **cfg, rx_dest=rx.endpoint(), fifo_frames=4096, faults=faults)
    rx.start()
    sim.ok("start")
    time.sleep(seconds)
    ss = sim.ok("stop")["stats"]
    deadline = time.monotonic() + 2.0
    while not rx.stats()["eob_received"] and time.monotonic() < deadline:
        time.sleep(0.01)
    st = rx.stats()
    rx.stop()
    return st, ss


def run_tx(sim, faults, *, rate=1e6, seconds=0.6, **options):
    cfg = {"direction": "tx", "rate_sps": rate, "frame_bytes": FRAME_BYTES, "transport": tcp(**options)}
    answer = sim.ok("configure", **cfg, fifo_frames=4096, faults=faults)
    assert answer["endpoint"]["kind"] == "tcp" and answer["endpoint"]["port"] > 0
    tx = native.TxStream(effective(cfg, dest=answer["endpoint"]))
    sim.ok("start")
    tx.start()
    time.sleep(seconds)
    tx.stop()
    # The device has every frame the host's socket took once its receive side caught up.
    deadline = time.monotonic() + 2.0
    ts = tx.stats()
    while sim.ok("stats")["stats"]["tx_frames_received"] < ts["frames_sent"] - faults.get("drop_frames", 0) \
            + faults.get("duplicate_frames", 0) and time.monotonic() < deadline:
        time.sleep(0.01)
    return sim.ok("stop")["stats"], ts


@pytest.mark.parametrize("seed", [1, 9])
def test_rx_over_tcp_counts_injected_faults_exactly(sim, seed):
    faults = {"seed": seed, "drop_frames": 3 + seed % 5, "corrupt_samples": 5 + seed % 11,
              "duplicate_frames": 2, "reorder_frames": 1 + seed % 4}
    st, ss = run_rx(sim, faults)
    assert ss["overflow_frames"] == 0 and ss["link_errors"] == 0
    assert st["eob_received"] and st["malformed_frames"] == 0
    # TCP loses nothing: a frame missing is one the device never sent.
    assert st["missing_frames"] == faults["drop_frames"] == ss["injected_drop_frames"]
    assert st["dropped_samples"] == faults["drop_frames"] * SPF
    assert st["pattern_errors"] == faults["corrupt_samples"] == ss["injected_corrupt_samples"]
    assert st["duplicate_frames"] == 2 and st["reordered_frames"] == faults["reorder_frames"]
    assert st["frames_received"] == ss["frames_sent"]
    assert st["warnings"] == []


def test_tx_over_tcp_counts_injected_faults_exactly(sim):
    faults = {"seed": 4, "drop_frames": 5, "corrupt_samples": 9, "duplicate_frames": 2, "reorder_frames": 3}
    ss, ts = run_tx(sim, faults, write_bytes=1000)   # every frame split over several send() calls
    assert ts["send_errors"] == 0 and ts["frames_sent"] > 100
    assert ss["tx_malformed_frames"] == 0
    assert ss["tx_missing_frames"] == 5 and ss["tx_dropped_samples"] == 5 * SPF
    assert ss["tx_pattern_errors"] == 9
    assert ss["tx_duplicate_frames"] == 2 and ss["tx_reordered_frames"] == 3
    assert ss["tx_frames_received"] == ts["frames_sent"] - 5 + 2


@pytest.mark.parametrize("congestion", ["reno", "cubic", "bbr"])
def test_tcp_info_is_plausible_and_names_the_congestion_control_asked_for(sim, congestion):
    st, ss = run_rx(sim, {}, rate=10e6, seconds=0.4, congestion=congestion)
    sender, receiver = ss["tcp"], st["tcp"]   # RX: the device sends, the host receives
    assert sender["connected"] and receiver["connected"]
    assert sender["congestion"] == congestion
    assert 0 < sender["rtt_ns"] < 1e9 and sender["rttvar_ns"] >= 0
    assert sender["cwnd_segments"] >= 1 and sender["retransmits"] >= 0
    # What each end was granted (Linux reports twice the usable size): at least the rate's 50 ms.
    assert sender["sndbuf_bytes"] > 0 and receiver["rcvbuf_bytes"] >= 4 << 20
    assert st["missing_frames"] == 0 and st["pattern_errors"] == 0


def test_a_host_receiver_that_never_accepts_leaves_frames_in_the_device_fifo_then_overflows(sim):
    """The device's FIFO is what TCP's back-pressure fills: when the host stops reading, the
    frames pile up there and overflow like hardware (counted, and missing at the receiver)."""
    cfg = {"direction": "rx", "rate_sps": 20e6, "frame_bytes": FRAME_BYTES,
           "transport": tcp(socket_buffer_bytes=256 * 1024)}
    rx = native.RxStream(effective(cfg))
    sim.ok("configure", **cfg, rx_dest=rx.endpoint(), fifo_frames=64, faults={})
    sim.ok("start")   # the host's receive thread is not running: nothing is read
    time.sleep(0.5)
    mid = sim.ok("stats")["stats"]
    rx.start()
    time.sleep(0.3)
    ss = sim.ok("stop")["stats"]
    deadline = time.monotonic() + 2.0
    while not rx.stats()["eob_received"] and time.monotonic() < deadline:
        time.sleep(0.01)
    st = rx.stats()
    rx.stop()
    assert mid["overflow_frames"] > 0 and mid["fifo_peak_frames"] > 64
    assert st["overruns"] >= 1 and st["malformed_frames"] == 0 and st["pattern_errors"] == 0
    assert st["frames_received"] == ss["frames_sent"]
    # Every frame the FIFO overflowed is missing at the receiver (and nothing arrives twice).
    assert st["missing_frames"] >= ss["overflow_frames"] and st["duplicate_frames"] == 0


def test_a_sender_gone_mid_frame_is_one_malformed_frame_and_a_warning():
    import socket
    import struct

    cfg = {"direction": "rx", "rate_sps": 1e6, "frame_bytes": FRAME_BYTES, "transport": tcp()}
    rx = native.RxStream(effective(cfg))
    rx.start()
    with socket.create_connection(("127.0.0.1", rx.endpoint()["port"])) as s:
        # A header announcing a 4048-byte frame, 56 bytes of its payload, then the sender goes.
        header = struct.pack("<HBBHBBI", 0x4852, 1, 0, 0, 1, 1, FRAME_BYTES - 48).ljust(48, b"\0")
        s.sendall(header + bytes(56))
    deadline = time.monotonic() + 2.0
    while rx.stats()["malformed_frames"] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    st = rx.stats()
    rx.stop()
    assert st["malformed_frames"] == 1 and st["frames_received"] == 0
    assert any(f"inside a frame (104 of its {FRAME_BYTES} bytes arrived)" in w for w in st["warnings"]), st["warnings"]


def test_nothing_listening_is_an_error_naming_host_and_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = {"direction": "tx", "rate_sps": 1e6, "frame_bytes": FRAME_BYTES, "transport": tcp()}
    dest = {"kind": "tcp", "host": "127.0.0.1", "port": port}
    t0 = time.monotonic()
    with pytest.raises(Exception, match=f"127.0.0.1:{port}"):
        native.TxStream(effective(cfg, dest=dest))
    assert time.monotonic() - t0 >= 1.0   # retried while nothing listened


# --- the case files on the simulator rig -----------------------------------------------

@pytest.fixture(scope="module")
def tcp_cases():
    return {c.name: c for c in load_cases([REPO / "testcases" / "transports" / "tcp.yaml"])}


@pytest.mark.parametrize("name", ["TCP RX 10 MS/s", "TCP TX 10 MS/s 512 KiB writes"])
def test_case_file_streams_and_reports_the_connection(tcp_cases, sim_rig, name):
    case = tcp_cases[name]
    result = run_case(case, sim_rig, run_id="test")
    m = result.metrics
    assert result.error is None, result.message
    assert m["missing_frames"] == 0 and m["pattern_errors"] == 0 and m["malformed_frames"] == 0, m
    assert 0 < m["tcp_rtt_s"] < 1.0 and m["tcp_cwnd_segments"] >= 1 and m["tcp_retransmits"] >= 0, m
    assert m["tcp_sndbuf_bytes"] > 0 and m["tcp_rcvbuf_bytes"] > 0, m
    assert isinstance(case.transport, TcpTransport)
    assert result.transport_info == {"tcp_congestion": case.transport.congestion}
    assert result.to_dict()["transport_info"] == result.transport_info
    assert any("tcp_rtt_s" in row for row in result.series), result.series
    html = case_log_html(result, plots_inline=False)
    assert f"transport: tcp_congestion {case.transport.congestion}" in html


@pytest.mark.parametrize("name", ["TCP RX injected faults", "TCP TX injected faults"])
def test_case_file_fault_cases_pass_on_exact_counts(tcp_cases, sim_rig, name):
    result = run_case(tcp_cases[name], sim_rig, run_id="test")
    assert result.error is None, result.message
    assert result.passed, (result.failed, result.metrics)


def test_loopback_over_tcp_on_the_simulator_is_a_skip_with_the_reason(write_case, sim_rig):
    text = CASE.format(options="").replace("direction: tx", "direction: loopback")
    [case] = write_case(text)
    why = sim_rig.devices["dut"].can_run(case).why_not
    assert why is not None and "loops back over udp, shm or usb, not tcp" in why
