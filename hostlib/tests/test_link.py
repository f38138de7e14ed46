"""The emulated link end to end: two network namespaces joined by hilrig-link, real
kernel UDP and TCP across it, configured vs delivered (delay, rate, loss); a killed
emulator or a killed run leaves nothing behind once the janitor ran. Needs root and
/dev/net/tun: without them every test here SKIPs with that reason."""
from __future__ import annotations

import math
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from hostlib._exceptions import LinkError
from hostlib.link.netns import entered, list_netns, pid_alive, sweep_stale, unavailable
from hostlib.link.session import LinkSession
from hostlib.link.spec import LinkDirection, LinkSpec
from hostlib.tests.conftest import REPO

LINK_BIN = REPO / "build" / "bin" / "hilrig-link"
_why = unavailable() or (None if LINK_BIN.exists() or os.environ.get("HILRIG_LINK_BIN") else f"{LINK_BIN} not built")
pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(_why is not None, reason=_why or "")]

PORT = 9000
IP_UDP_OVERHEAD = 28   # IPv4 + UDP headers: the link's rate counts IP packet bytes
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def link_of(**kw: float) -> LinkSpec:
    d = LinkDirection(**kw)
    return LinkSpec(up=d, down=d, seed=7)


def udp_pair(link: LinkSession) -> tuple[socket.socket, socket.socket]:
    """(device-side socket at device_addr:PORT, host-side socket), each made in its namespace."""
    with entered(link.ends.device_netns):
        dev = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        dev.bind((link.ends.device_addr, PORT))
    with entered(link.ends.host_netns):
        host = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        host.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        host.bind((link.ends.host_addr, PORT))
    return dev, host


def test_round_trip_takes_at_least_twice_the_one_way_delay() -> None:
    delay = 0.040
    with LinkSession(link_of(delay_s=delay)) as link:
        dev, host = udp_pair(link)
        dev.settimeout(5)
        host.settimeout(5)
        rtts = []
        for i in range(20):
            t0 = time.monotonic()
            host.sendto(i.to_bytes(4, "little"), (link.ends.device_addr, PORT))
            data, addr = dev.recvfrom(100)
            dev.sendto(data, addr)
            assert host.recvfrom(100)[0] == data
            rtts.append(time.monotonic() - t0)
        stats = link.stats()
    assert min(rtts) >= 2 * delay
    # What the emulator itself measured, in to out: the configured delay, never less.
    for side in ("up", "down"):
        assert stats[side]["packets_out"] == 20
        assert stats[side]["delay_ns"]["max"] >= delay * 1e9
        assert stats[side]["delay_ns"]["p50"] >= delay * 1e9


def test_udp_at_twice_the_rate_is_delivered_at_the_rate_and_the_queue_drops_the_rest() -> None:
    rate_bps, payload = 20e6, 1430
    queue = 256 * 1024   # 105 ms at the rate: a sender stall shorter than that never starves the link
    with LinkSession(link_of(rate_bps=rate_bps, queue_bytes=queue)) as link:
        dev, host = udp_pair(link)
        host.settimeout(2)
        host.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        got: list[tuple[float, int]] = []

        def receive() -> None:
            # The kernel's arrival time of each datagram: a receiver stall does not move it.
            try:
                while True:
                    data, anc, _, _ = host.recvmsg(65536, 64)
                    sec, nsec = struct.unpack("qq", anc[0][2][:16])
                    got.append((sec + nsec / 1e9, len(data)))
            except OSError:
                return

        rx = threading.Thread(target=receive)
        rx.start()
        # Offered at twice the link rate for 2 s, paced by the clock (not by sleeps alone).
        gap = (payload + IP_UDP_OVERHEAD) * 8 / (2 * rate_bps)
        t0, sent = time.monotonic(), 0
        while time.monotonic() - t0 < 2.0:
            while sent * gap <= time.monotonic() - t0:
                dev.sendto(bytes(payload), (link.ends.host_addr, PORT))
                sent += 1
            time.sleep(gap / 2)
        rx.join()
        stats = link.stats()["up"]
    assert stats["packets_in"] == sent
    assert stats["dropped_queue"] > 0
    assert stats["packets_out"] == len(got) == sent - stats["dropped_queue"]
    # Delivered rate while the link was busy, from the kernel's arrival times: within 1 %.
    span = got[-1][0] - got[0][0]
    delivered = (len(got) - 1) * (payload + IP_UDP_OVERHEAD) * 8 / span
    assert delivered == pytest.approx(rate_bps, rel=0.01)
    assert stats["queue_bytes_max"] <= queue


def test_the_kernel_realisation_counts_what_it_carried_in_ip_bytes_no_faster_than_the_rate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """HILRIG_LINK=netem on a rate-only link: a tbf on each veth end, which this kernel has
    (netem it has not). Offered at twice the rate; the qdisc's own counters, read with tc,
    say what entered, left and was dropped, in IP bytes as the spec's rate is."""
    monkeypatch.setenv("HILRIG_LINK", "netem")
    rate_bps, payload = 20e6, 1430
    with LinkSession(link_of(rate_bps=rate_bps, queue_bytes=256 * 1024)) as link:
        assert link.realisation == "netem"
        dev, host = udp_pair(link)
        host.settimeout(2)
        host.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        got: list[float] = []

        def receive() -> None:
            try:
                while True:
                    _, anc, _, _ = host.recvmsg(65536, 64)
                    sec, nsec = struct.unpack("qq", anc[0][2][:16])
                    got.append(sec + nsec / 1e9)
            except OSError:
                return

        rx = threading.Thread(target=receive)
        rx.start()
        gap = (payload + IP_UDP_OVERHEAD) * 8 / (2 * rate_bps)
        t0, sent = time.monotonic(), 0
        while time.monotonic() - t0 < 1.5:
            # A local sender is held back by its socket's send buffer while the qdisc holds its
            # datagrams (backpressure, not drops), so the schedule is bounded by the time too.
            while sent * gap <= time.monotonic() - t0 < 1.5:
                dev.sendto(bytes(payload), (link.ends.host_addr, PORT))
                sent += 1
            time.sleep(gap / 2)
        rx.join()   # 2 s without a datagram: the queue has drained
        stats = link.stats()
    up, down = stats["up"], stats["down"]
    # Every datagram the socket took entered the link and left it or was dropped; the link
    # also carried the namespaces' own few packets (ARP, IPv6 neighbour discovery).
    assert up["packets_in"] == up["packets_out"] + up["dropped_queue"]
    assert 0 <= up["packets_in"] - sent <= 10 and 0 <= up["packets_out"] - len(got) <= 10, (sent, len(got), up)
    assert up["dropped_loss"] == 0 and down["packets_out"] <= 10 and down["dropped_queue"] == 0, down
    # IP bytes: 1458 a datagram (the Ethernet header's 14 taken off), beside a few small packets.
    assert 0 <= up["bytes_out"] - (payload + IP_UDP_OVERHEAD) * len(got) <= 10 * 100, up
    # Shaped: never faster than the rate (tbf's bucket is 1 ms of it). tbf loses the tokens its
    # timer comes late for, so on a busy host it may carry less: only "most of it" is asserted.
    delivered = (len(got) - 1) * (payload + IP_UDP_OVERHEAD) * 8 / (got[-1] - got[0])
    assert 0.5 * rate_bps <= delivered <= 1.01 * rate_bps, delivered
    assert _our_netns() == []


def test_loss_is_the_configured_probability_and_every_drop_is_counted() -> None:
    loss, n = 0.05, 4000
    with LinkSession(link_of(loss=loss)) as link:
        dev, host = udp_pair(link)
        for i in range(n):
            dev.sendto(i.to_bytes(4, "little"), (link.ends.host_addr, PORT))
            if i % 100 == 99:
                time.sleep(0.002)   # stays far below what the receiver's buffer holds
        host.settimeout(1)
        received = set()
        try:
            while True:
                received.add(int.from_bytes(host.recv(100), "little"))
        except OSError:
            pass
        stats = link.stats()["up"]
    assert stats["packets_in"] == n
    assert stats["dropped_loss"] == n - len(received)   # nothing else lost a packet
    half = 2.576 * math.sqrt(n * loss * (1 - loss)) + 1
    assert abs(stats["dropped_loss"] - n * loss) <= half


def test_tcp_crosses_the_link_intact_and_no_faster_than_its_rate() -> None:
    rate_bps, size = 40e6, 4 << 20
    with LinkSession(link_of(rate_bps=rate_bps, delay_s=0.005, queue_bytes=256 * 1024)) as link:
        with entered(link.ends.host_netns):
            srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            srv.bind((link.ends.host_addr, PORT))
            srv.listen(1)
        with entered(link.ends.device_netns):
            cli = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        payload = os.urandom(size)
        box: dict[str, bytes] = {}

        def serve() -> None:
            conn, _ = srv.accept()
            chunks = []
            while chunk := conn.recv(1 << 16):
                chunks.append(chunk)
            box["data"] = b"".join(chunks)
            conn.close()

        t = threading.Thread(target=serve)
        t.start()
        t0 = time.monotonic()
        cli.connect((link.ends.host_addr, PORT))
        cli.sendall(payload)
        cli.close()
        t.join(60)
        elapsed = time.monotonic() - t0
    assert box["data"] == payload
    assert size * 8 / elapsed <= rate_bps * 1.01


def test_a_killed_emulator_is_a_link_error_naming_it_and_close_leaves_nothing() -> None:
    link = LinkSession(link_of(delay_s=0.001)).open()
    try:
        assert link.emulator is not None
        pid = link.emulator.pid
        os.kill(pid, signal.SIGKILL)
        link.emulator.proc.wait(5)
        with pytest.raises(LinkError, match=r"hilrig-link \(pid \d+\) was killed by SIGKILL"):
            link.check()
    finally:
        link.close()
    assert not pid_alive(pid)
    assert link.ends.device_netns not in list_netns() and link.ends.host_netns not in list_netns()


def test_after_a_kill_9_of_the_run_the_janitor_leaves_nothing(tmp_path: Path) -> None:
    """A run that holds a link is SIGKILLed: its emulator dies with it (PDEATHSIG) and so
    do its TUN devices; the namespaces stay until the janitor finds their owner dead."""
    script = tmp_path / "hold.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        from hostlib.link.session import LinkSession
        from hostlib.link.spec import LinkDirection, LinkSpec
        link = LinkSession(LinkSpec(up=LinkDirection(delay_s=0.01), down=LinkDirection())).open()
        print(link.ends.device_netns, link.ends.host_netns, link.emulator.pid, flush=True)
        time.sleep(60)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert proc.stdout is not None
    dev_ns, host_ns, emu_pid = proc.stdout.readline().split()
    assert {dev_ns, host_ns} <= set(list_netns())
    proc.send_signal(signal.SIGKILL)
    proc.wait(5)
    deadline = time.monotonic() + 5
    while pid_alive(int(emu_pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(int(emu_pid)), "hilrig-link outlived the run that started it"
    removed = sweep_stale()
    assert f"netns {dev_ns}" in removed and f"netns {host_ns}" in removed
    assert dev_ns not in list_netns() and host_ns not in list_netns()
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    assert f"hl{proc.pid}." not in links


LAN_CASE = """
    name: across the link
    device: dut
    direction: %s
    format: sc8
    master_clock: 100 MHz
    %s: 100
    transport: {kind: udp, frame_bytes: 1430}
    link: {rate: 50 Mbit/s, delay: 5 ms, seed: 2}
    duration: %s
    thresholds:
      pattern_errors: "== 0"
      link_delay_p50: ">= 5 ms"
"""


def _our_netns() -> list[str]:
    return [n for n in list_netns() if n.startswith(f"hilrig-{os.getpid()}-")]


@pytest.mark.parametrize("direction", ["rx", "tx", "loopback"])
def test_a_sim_case_runs_across_the_link_with_the_link_metrics(write_case, sim_rig, direction: str) -> None:
    from hostlib.engine import run_case

    divider = "interpolation" if direction == "tx" else "decimation"
    (case,) = write_case(LAN_CASE % (direction, divider, "1 s"))
    result = run_case(case, sim_rig, run_id="link-test")
    assert result.verdict.passed, result.message
    m = result.metrics
    assert m["link_configured_rate_Bps"] == 50e6 / 8
    assert m["link_configured_delay_s"] == 0.005
    assert m["link_packets_in"] > 0 and m["link_dropped_loss"] == 0
    assert m["link_delay_p50_s"] >= 0.005
    # The frames' own latency (send time to receive) includes the link's delay: once,
    # and twice for loopback (host -> device -> host).
    if direction != "tx":
        assert m["latency_p50_s"] >= (0.010 if direction == "loopback" else 0.005)
    assert result.link is not None and result.link["realisation"] in ("hilrig-link", "netem")
    assert _our_netns() == []


@pytest.mark.parametrize("direction", ["rx", "tx"])
def test_a_sim_case_runs_across_the_kernel_realisation_with_its_counters(write_case, sim_rig, direction: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The same case over a veth pair with tbf (HILRIG_LINK=netem, a rate-only link: what this
    kernel has): the link's counters come from the qdiscs', in IP bytes, and its delay from
    probes (tc keeps none), so a threshold on link_delay_p50 is judged on netem too."""
    from hostlib.engine import run_case

    monkeypatch.setenv("HILRIG_LINK", "netem")
    divider = "interpolation" if direction == "tx" else "decimation"
    text = (LAN_CASE % (direction, divider, "1 s")).replace("rate: 50 Mbit/s, delay: 5 ms,", "rate: 50 Mbit/s,")
    (case,) = write_case(text.replace('link_delay_p50: ">= 5 ms"', 'link_delay_p50: "< 50 ms"'))
    result = run_case(case, sim_rig, run_id="link-test")
    assert result.verdict.passed, result.message
    assert result.link is not None and result.link["realisation"] == "netem"
    m = result.metrics
    # No loss configured: nothing lost. (The queue may drop: a host stall's frames, released
    # at once by the TX rate clock, can overflow it, as they would a switch's.)
    assert m["link_packets_in"] > 100 and m["link_dropped_loss"] == 0, m
    # No delay configured and the link a third used: the probes' delay is the veth's and tbf's
    # own, far below a millisecond's queue; measured, not absent.
    assert 0 <= m["link_delay_p50_s"] <= m["link_delay_max_s"] < 0.05, m
    # At about the frames' rate in IP bytes (1458 a 1430-byte frame; the probes add 0.2 %).
    # The link's counters are read just after the stream's own, and a TX rate clock releases
    # a stall's frames at once, so the two windows can differ by a batch: only the order of
    # magnitude is asserted here (the counts themselves: the UDP test above).
    assert 0.5 < m["link_rate_Bps"] / (m["frames_per_s"] * 1458) < 1.5, m
    assert _our_netns() == []


@pytest.mark.parametrize("direction", ["rx", "tx"])
def test_a_tcp_case_crosses_the_link_every_frame_counted_and_checked(write_case, sim_rig, direction: str) -> None:
    """tcp across the link: the receiver listens at its end, the sender connects across it;
    1 MS/s sc8 (~12 Mbit/s) over 50 Mbit/s, 5 ms each way with 1 % loss: TCP retransmits
    what the link loses, so every frame arrives, checked, and the round trip is the link's."""
    from hostlib.engine import run_case

    divider = "interpolation" if direction == "tx" else "decimation"
    text = (LAN_CASE % (direction, divider, "1 s")).replace("{kind: udp, frame_bytes: 1430}",
                                                           "{kind: tcp, frame_bytes: 8000, congestion: cubic}")
    text = text.replace("seed: 2}", "loss: 1 %, seed: 2}")
    (case,) = write_case(text)
    result = run_case(case, sim_rig, run_id="link-test")
    assert result.verdict.passed, result.message
    m = result.metrics
    assert m["missing_frames"] == 0 and m["pattern_errors"] == 0 and m["frames_received"] > 100, m
    assert m["link_dropped_loss"] > 0 and m["tcp_retransmits"] > 0, m   # lost on the link, resent by TCP
    assert 0.010 <= m["tcp_rtt_s"] < 0.2, m
    assert result.transport_info == {"tcp_congestion": "cubic"}
    assert any(r["what"] == "model: loss-limited TCP (Mathis)" for r in result.study), result.study
    assert _our_netns() == []


def test_a_killed_emulator_mid_case_is_an_infrastructure_error_naming_it(write_case, sim_rig) -> None:
    from hostlib.engine import run_case
    from hostlib.results.record import ErrorKind, Verdict
    from hostlib.tests.conftest import child_pids

    (case,) = write_case(LAN_CASE % ("rx", "decimation", "10 s"))
    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("r", run_case(case, sim_rig, run_id="link-kill")))
    worker.start()
    deadline = time.monotonic() + 10
    pids: list[int] = []
    while not pids and time.monotonic() < deadline:
        time.sleep(0.05)
        pids = child_pids("hilrig-link")
    assert pids, "hilrig-link never started"
    time.sleep(1.5)
    os.kill(pids[0], signal.SIGKILL)
    worker.join(30)
    assert not worker.is_alive(), "the run hung after the emulator died"
    result = box["r"]
    assert result.verdict is Verdict.ERROR and result.kind is ErrorKind.INFRASTRUCTURE, result.message
    assert "hilrig-link" in (result.error or "") and "SIGKILL" in (result.error or ""), result.error
    left = (_our_netns(), child_pids("hilrig-link"), child_pids("hilrig-sim"))
    assert left == ([], [], []), left
