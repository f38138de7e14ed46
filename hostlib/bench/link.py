"""The link rows of `make bench`: hilrig-link carrying 1430-byte UDP datagrams in both
directions at once (iperf3 in each namespace, offered 10 % above the configured rate,
so the link's queue is what limits them), 1 ms delay and 0.1 % loss each way
(docs/long-link.md). Per configured rate: the delivered rate of each direction against
the configured one (the mark: within 1 %), the emulator's timing error (how late after
its due time a packet left, p99; the mark: <= 50 us; beside it the bound on how long a
packet waited in the emulator's input before it was read, from its coalesced reads), the
loss against the binomial 99 % interval, and the emulator's CPU. Nothing here is a pass/fail test; without root
the group says why it has no rows.
"""
from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import math
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .._installed import find_executable
from ..link.emulator import LinkStats
from ..link.netns import add_netns, delete_netns, entered, ip, list_netns, tun_name, unavailable
from ..link.session import LinkSession
from ..link.spec import LinkDirection, LinkSpec
from ..results.record import CaseResult, Verdict
from .record import BenchRow

Row = tuple[str, str, str, str, str, str, str]

RATES_BPS = (100e6, 500e6, 1e9)
DATAGRAM = 1430
IP_BYTES = DATAGRAM + 28
OFFERED = 1.10            # offered / configured: the queue, not the sender, sets the rate
DELAY_S, LOSS = 0.001, 0.001
LATE_P99_MARK_S = 50e-6
RATE_MARK = 0.01
PORTS = {"up": 5301, "down": 5302}


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _one(rate_bps: float, seconds: float) -> tuple[Row, BenchRow]:
    d = LinkDirection(rate_bps=rate_bps, delay_s=DELAY_S, loss=LOSS, queue_bytes=4 << 20)
    with LinkSession(LinkSpec(up=d, down=d, seed=1)) as link:
        e = link.ends
        assert link.emulator is not None
        # up: device -> host (server on the host side); down: host -> device.
        ends = {"up": (e.device_netns, e.host_netns, e.host_addr),
                "down": (e.host_netns, e.device_netns, e.device_addr)}
        servers = [subprocess.Popen(["ip", "netns", "exec", srv_ns, "iperf3", "-s", "-1", "-B", addr, "-p",
                                     str(PORTS[side])], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                   for side, (_, srv_ns, addr) in ends.items()]
        time.sleep(0.5)
        offered = f"{rate_bps * OFFERED * DATAGRAM / IP_BYTES:.0f}"   # iperf3's -b counts UDP payload
        clients = [subprocess.Popen(["ip", "netns", "exec", cli_ns, "iperf3", "-c", addr, "-p", str(PORTS[side]),
                                     "-u", "-b", offered, "-l", str(DATAGRAM), "-t", str(math.ceil(seconds) + 1),
                                     "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                   for side, (cli_ns, _, addr) in ends.items()]
        time.sleep(1.0)   # the queues fill: from here the link runs at its rate
        s0, c0 = link.stats(), _cpu_s(link.emulator.pid)
        time.sleep(seconds)
        s1, c1 = link.stats(), _cpu_s(link.emulator.pid)
        for p in clients:
            out, _ = p.communicate(timeout=60)
            json.loads(out or "{}")   # iperf3 ran to its end (its own figures are the sender's)
        for server in servers:
            server.wait(timeout=10)
    # The emulator's own clock between the snapshots: the control channel's latency on a
    # busy host would otherwise count as link time.
    window = s1["running_s"] - s0["running_s"]
    got, late, read_wait, losses = {}, 0.0, 0.0, []
    for side, a, b in (("up", s0["up"], s1["up"]), ("down", s0["down"], s1["down"])):
        got[side] = (b["bytes_out"] - a["bytes_out"]) * 8 / window
        late = max(late, b["late_ns"]["p99"] / 1e9)
        rw = b.get("read_wait_ns")
        read_wait = max(read_wait, rw["p99"] / 1e9 if rw else 0.0)
        n = b["packets_in"] - a["packets_in"]
        lost = b["dropped_loss"] - a["dropped_loss"]
        losses.append(abs(lost - n * LOSS) <= 2.576 * math.sqrt(n * LOSS * (1 - LOSS)) + 1)
    worst = min(got.values()) / rate_bps
    met = abs(worst - 1) <= RATE_MARK and all(abs(g / rate_bps - 1) <= RATE_MARK for g in got.values()) \
        and late <= LATE_P99_MARK_S and all(losses)
    cpu = (c1 - c0) / window * 100
    row: Row = (f"link emulator, both ways at once, {rate_bps / 1e6:g} Mbit/s, 1 ms, 0.1 % loss",
                f"{DATAGRAM} B",
                f"up {got['up'] / 1e6:.1f} / down {got['down'] / 1e6:.1f} Mbit/s, late p99 {late * 1e6:.0f} us "
                f"(input wait p99 <= {read_wait * 1e6:.0f} us), "
                f"loss {'in' if all(losses) else 'OUT of'} 99 % interval",
                f"{cpu:.0f}", "configured", f"{rate_bps / 1e6:g} Mbit/s", f"{worst:.3f} "
                + ("(marks met)" if met else "(marks: rate +-1 %, late p99 <= 50 us: NOT met)"))
    data = BenchRow(row[0], DATAGRAM, min(got.values()) / 8, None, cpu, "configured rate", rate_bps / 8, None, worst,
                    rig_s=late)
    return row, data


def rows(window_s: float) -> list[tuple[Row, BenchRow | None]]:
    """One row per configured rate, or one row saying why there are none."""
    why = unavailable() or (None if shutil.which("iperf3") else "iperf3 is not installed")
    if why:
        return [(("link emulator", f"{DATAGRAM} B", f"skipped: {why}", "-", "-", "-", "-"), None)]
    return [_one(rate, max(2.0, window_s)) for rate in RATES_BPS]


# ---- Peers across the same emulated link (the long-link study's, docs/long-link.md) ----
#
# The study's scaled WAN (100 Mbit/s, 125 ms each way, 0.005 % loss, 1 MiB queue: a rate
# hilrig-link carries on this machine) carries, one after another from the host side to
# the device side: hilrig's paced UDP (the simulator's TX case) beside iperf3's UDP `-b`
# (its 1 ms pacing timer) and iperf2's UDP `-b` (its microsecond pacing), at 0.95x and 2x
# the link rate; hilrig's TCP beside iperf3's and iperf2's (cubic, 512 KiB writes).
# Every sender is measured by the same instruments: the emulator's counters over a window
# in mid-run (offered = packets into the link, received = 1 - dropped / in, delivered IP
# bit/s) and, for paced UDP, tcpdump on the host side's TUN device (kernel timestamps of
# each datagram leaving the sender's stack: its achieved period p50 / p99).

PEER_SPEC = LinkDirection(rate_bps=100e6, delay_s=0.125, loss=0.00005, queue_bytes=1 << 20)
PEER_WINDOW_S = 6.0           # the measured window of each row (after PEER_SETTLE_S)
PEER_SETTLE_S = 2.0           # slow start over a 250 ms RTT, the queue filling at 2x
PEER_PORT = 5311
PEER_UDP_SHARES = (0.95, 2.0)  # offered / link rate (IP bytes)


@dataclass
class Sent:
    """One sender's run across the link: the emulator's window and the capture's periods."""

    offered_bps: float = 0.0       # IP bits/s into the link
    delivered_bps: float = 0.0     # IP bits/s out of the link
    received: float = 0.0          # 1 - dropped / in
    period_p50_s: float | None = None
    period_p99_s: float | None = None
    note: str = ""


def _window(s0: LinkStats, s1: LinkStats, seconds: float) -> Sent:
    a, b = s0["down"], s1["down"]
    n = b["packets_in"] - a["packets_in"]
    dropped = (b["dropped_queue"] - a["dropped_queue"]) + (b["dropped_loss"] - a["dropped_loss"])
    return Sent(offered_bps=(b["bytes_in"] - a["bytes_in"]) * 8 / seconds,
                delivered_bps=(b["bytes_out"] - a["bytes_out"]) * 8 / seconds,
                received=1 - dropped / n if n else 0.0)


class Capture:
    """tcpdump on one device of a namespace: each matching packet's kernel timestamp (ns)."""

    def __init__(self, netns: str, dev: str, bpf: str):
        self.path = Path(tempfile.mkstemp(prefix="hilrig-bench-", suffix=".pcap")[1])
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", netns, "tcpdump", "-i", dev, "-n", "-q", "-s", "64", "-B", "32768",
             "--time-stamp-precision=nano", "-w", str(self.path), bpf],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> list[int]:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=10)
        try:
            return pcap_times_ns(self.path.read_bytes())
        finally:
            self.path.unlink(missing_ok=True)


def pcap_times_ns(data: bytes) -> list[int]:
    """The packet timestamps of a pcap file (microsecond or nanosecond precision), in ns."""
    if len(data) < 24:
        return []
    magic = struct.unpack_from("<I", data)[0]
    endian, scale = {0xA1B2C3D4: ("<", 1000), 0xA1B23C4D: ("<", 1), 0xD4C3B2A1: (">", 1000),
                     0x4D3CB2A1: (">", 1)}[magic]
    out, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack_from(endian + "IIII", data, off)
        out.append(sec * 1_000_000_000 + frac * scale)
        off += 16 + incl
    return out


def period_quantiles(times_ns: list[int]) -> tuple[float, float] | None:
    """(p50, p99) of the time between consecutive packets, seconds."""
    gaps = sorted(b - a for a, b in itertools.pairwise(times_ns))
    if len(gaps) < 100:
        return None
    return gaps[len(gaps) // 2] / 1e9, gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))] / 1e9


def _peer_spec() -> LinkSpec:
    return LinkSpec(up=PEER_SPEC, down=PEER_SPEC, seed=31)


def _udp_bpf() -> str:
    return f"udp and greater {IP_BYTES - 1}"   # the 1458-byte datagrams, not iperf's control


def _iperf(tool: str, udp_share: float | None, seconds: float) -> Sent:
    """iperf3 or iperf2 from the host side to a server on the device side, across a fresh
    link of PEER_SPEC; udp_share None: TCP (cubic, 512 KiB writes)."""
    total = math.ceil(PEER_SETTLE_S + seconds + 1)
    with LinkSession(_peer_spec()) as link:
        e = link.ends
        if tool == "iperf3":
            server = ["iperf3", "-s", "-1", "-B", e.device_addr, "-p", str(PEER_PORT)]
            client = ["iperf3", "-c", e.device_addr, "-p", str(PEER_PORT), "-t", str(total)]
            client += (["-u", "-l", str(DATAGRAM)] if udp_share else ["-C", "cubic", "-l", "512K"])
        else:
            server = ["iperf", "-s", "-B", e.device_addr, "-p", str(PEER_PORT)] + (["-u"] if udp_share else [])
            client = ["iperf", "-c", e.device_addr, "-p", str(PEER_PORT), "-t", str(total)]
            client += (["-u", "-l", str(DATAGRAM)] if udp_share else ["-Z", "cubic", "-l", "512K"])
        if udp_share:   # -b counts UDP payload bits
            client += ["-b", f"{PEER_SPEC.rate_bps * udp_share * DATAGRAM / IP_BYTES:.0f}"]
        srv = subprocess.Popen(["ip", "netns", "exec", e.device_netns, *server],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            cli = subprocess.Popen(["ip", "netns", "exec", e.host_netns, *client],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(PEER_SETTLE_S)
            cap = Capture(e.host_netns, link.devices[1], _udp_bpf()) if udp_share else None
            s0, t0 = link.stats(), time.monotonic()
            time.sleep(seconds)
            s1, t1 = link.stats(), time.monotonic()
            sent = _window(s0, s1, t1 - t0)
            if cap is not None:
                q = period_quantiles(cap.stop())
                if q is not None:
                    sent.period_p50_s, sent.period_p99_s = q
            cli.wait(timeout=total + 30)
        finally:
            srv.terminate()
            srv.wait(timeout=10)
    return sent


HILRIG_CASE = """\
name: bench peers hilrig
device: dut
direction: tx
format: sc8
master_clock: 10 GHz
interpolation: 1
transport: {transport}
link: {{rate: {rate_bps:.0f} bit/s, delay: {delay_ms:g} ms, loss: {loss_percent:g} %, queue: {queue} B, seed: 31}}
warmup: {warmup_s:g} s
duration: {duration_s:g} s
"""


def _our_host_netns() -> set[str]:
    pid = os.getpid()
    return {n for n in list_netns() if n.startswith(f"hilrig-{pid}-") and n.endswith("-host")}


def _hilrig(udp_share: float | None, seconds: float) -> Sent:
    """hilrig's TX case (the simulator as the receiver) across a link of PEER_SPEC: paced
    UDP at udp_share of the link rate, or TCP (cubic, 512 KiB writes); the link's figures
    from the case's link_* metrics, the period from tcpdump on the link's host-side TUN
    (found by name while the case runs)."""
    from ..dsl import load_cases
    from ..engine import run_case
    from ..rig import default_rig_path, load_rig

    if udp_share:
        period_us = IP_BYTES * 8 / (PEER_SPEC.rate_bps * udp_share) * 1e6
        transport = f"{{kind: udp, frame_bytes: {DATAGRAM}, pacing: {{period: {period_us:.3f} us}}}}"
    else:
        transport = "{kind: tcp, frame_bytes: 8000, write_bytes: 512 KiB, congestion: cubic}"
    text = HILRIG_CASE.format(transport=transport, rate_bps=PEER_SPEC.rate_bps, delay_ms=PEER_SPEC.delay_s * 1e3,
                              loss_percent=PEER_SPEC.loss * 100, queue=PEER_SPEC.queue_bytes,
                              warmup_s=PEER_SETTLE_S, duration_s=seconds)
    with tempfile.TemporaryDirectory(prefix="hilrig-bench-") as tmp:
        path = Path(tmp) / "peers.yaml"
        path.write_text(text)
        (case,) = load_cases([path])
    rig = load_rig(default_rig_path("sim"))
    before = _our_host_netns()
    box: dict[str, CaseResult] = {}
    worker = threading.Thread(target=lambda: box.setdefault("r", run_case(case, rig, run_id="bench-peers")))
    worker.start()
    cap: Capture | None = None
    if udp_share:
        deadline = time.monotonic() + 30
        while not (_our_host_netns() - before) and time.monotonic() < deadline and worker.is_alive():
            time.sleep(0.05)
        new = sorted(_our_host_netns() - before)
        if new:
            n = int(new[0].split("-")[2])
            time.sleep(PEER_SETTLE_S + 1.0)   # the link up, the simulator started, past its warm-up
            cap = Capture(new[0], tun_name(os.getpid(), n, "host"), _udp_bpf())
            time.sleep(min(seconds - 1.0, 4.0))
    times = cap.stop() if cap is not None else []
    worker.join()
    result = box["r"]
    if result.verdict is not Verdict.PASS:
        return Sent(note=f"{result.label}: {result.message}")
    m = result.metrics
    n_in = m.get("link_packets_in", 0.0)
    sent = Sent(offered_bps=0.0, delivered_bps=m.get("link_rate_Bps", 0.0) * 8,
                received=1 - (m.get("link_dropped_queue", 0.0) + m.get("link_dropped_loss", 0.0)) / n_in
                if n_in else 0.0)
    sent.offered_bps = n_in * IP_BYTES * 8 / m["duration_s"] if udp_share and m.get("duration_s") else 0.0
    q = period_quantiles(times)
    if q is not None:
        sent.period_p50_s, sent.period_p99_s = q
    if udp_share and m.get("pacing_period_p99_s"):
        sent.note = (f"own p50/p99 {m['pacing_period_p50_s'] * 1e6:.1f}/{m['pacing_period_p99_s'] * 1e6:.1f} us")
    return sent


def _fig(s: Sent, udp: bool) -> str:
    if s.note and not s.delivered_bps:
        return s.note
    if not udp:
        return f"{s.delivered_bps / 1e6:.1f} Mbit/s"
    return f"offered {s.offered_bps / 1e6:.1f}, delivered {s.delivered_bps / 1e6:.1f} Mbit/s, {100 * s.received:.2f} %"


Limit = tuple[str, str]


def peer_rows(window_s: float) -> list[tuple[Row, Limit, BenchRow | None]]:
    """hilrig beside iperf3 and iperf2 across the same emulated link: one row per peer
    and load (UDP at 0.95x and 2x the link rate: offered and delivered IP bit/s and the
    share of what entered the link that left it, the ratio being hilrig's share / the
    peer's, the model's share as the limit; TCP: delivered bit/s, ratio hilrig / peer);
    then the pacers' burstiness (achieved period p50 / p99 on the wire) at 0.95x."""
    from ..link.models import paced_received_ratio, wire_time_s

    missing = [t for t in ("iperf3", "iperf", "tcpdump") if shutil.which(t) is None]
    why = unavailable() or (f"not installed: {', '.join(missing)}" if missing else None)
    label = (f"link peers: {PEER_SPEC.rate_bps / 1e6:g} Mbit/s, {PEER_SPEC.delay_s * 1e3:g} ms each way, "
             f"{PEER_SPEC.loss * 100:g} % loss")
    if why:
        return [((label, f"{DATAGRAM} B", f"skipped: {why}", "-", "-", "-", "-"), ("-", "-"), None)]
    seconds = max(PEER_WINDOW_S, window_s)
    out: list[tuple[Row, Limit, BenchRow | None]] = []
    wire = wire_time_s(IP_BYTES, PEER_SPEC.rate_bps)
    bursts: dict[str, Sent] = {}
    for share in (*PEER_UDP_SHARES, None):
        udp = share is not None
        what = f"UDP at {share:g}x the link rate" if udp else "TCP cubic, 512 KiB writes"
        mine = _hilrig(share, seconds)
        if share == PEER_UDP_SHARES[0]:
            bursts["hilrig (paced)"] = mine
        model = paced_received_ratio(wire / share, wire, PEER_SPEC.loss) if udp and share else None
        for tool, peer_name in (("iperf3", "iperf3 -b" if udp else "iperf3 -C cubic"),
                                ("iperf2", "iperf 2 -b" if udp else "iperf 2 -Z cubic")):
            theirs = _iperf(tool, share, seconds)
            if share == PEER_UDP_SHARES[0]:
                bursts[tool] = theirs
            mine_v = mine.received if udp else mine.delivered_bps
            theirs_v = theirs.received if udp else theirs.delivered_bps
            ratio = mine_v / theirs_v if theirs_v else math.nan
            limit: Limit = (f"model {100 * model:.2f} %", f"{mine.received / model:.3f}") if model else ("-", "-")
            size = DATAGRAM if udp else 8000
            row: Row = (f"{label}: {what}", f"{size} B",
                        _fig(mine, udp) + (f" ({mine.note})" if mine.note and mine.delivered_bps else ""),
                        "-", peer_name, _fig(theirs, udp), f"{ratio:.3f}")
            out.append((row, limit, BenchRow(f"{label}: {what} vs {tool}", size, mine.delivered_bps / 8,
                                             None, None, tool, theirs.delivered_bps / 8, None, ratio,
                                             limit="model" if model else "",
                                             limit_ratio=(mine.received / model) if model else None)))
    hilrig = bursts.get("hilrig (paced)")
    for tool in ("iperf3", "iperf2"):
        peer = bursts.get(tool)
        if hilrig is None or peer is None or hilrig.period_p99_s is None or peer.period_p99_s is None:
            continue
        assert hilrig.period_p50_s is not None and peer.period_p50_s is not None
        period_us = wire / PEER_UDP_SHARES[0] * 1e6
        burst_row: Row = (f"{label}: pacer burstiness at {PEER_UDP_SHARES[0]:g}x (period {period_us:.1f} us), "
                           "tcpdump on the TUN", f"{DATAGRAM} B",
                           f"period p50 {hilrig.period_p50_s * 1e6:.1f} / p99 {hilrig.period_p99_s * 1e6:.1f} us",
                           "-", tool, f"p50 {peer.period_p50_s * 1e6:.1f} / p99 {peer.period_p99_s * 1e6:.1f} us",
                           f"p99 {hilrig.period_p99_s / peer.period_p99_s:.3f}")
        out.append((burst_row, ("-", "-"), BenchRow(
            f"{label}: pacer period p99 vs {tool}", DATAGRAM, None, None, None, tool, None, None,
            hilrig.period_p99_s / peer.period_p99_s, rig_s=hilrig.period_p99_s, peer_s=peer.period_p99_s)))
    return out


# ---- The pacers at a 2 us period, same host (no link) ----
#
# hilrig's paced TX case at a 2 us period (5.72 Gbit/s of 1430-byte datagrams) into the
# simulator over loopback: its own achieved period (the sender's histogram, send start
# to send start) and rate; iperf3 and iperf 2 asked for the same rate in a scratch
# namespace, their period on the wire by tcpdump on its loopback. The mark:
# hilrig's period p99 within 1 us of 2 us.

PACER_PERIOD_S = 2e-6
PACER_S = 3.0

PACER_CASE = """\
name: bench pacer 2 us
device: dut
direction: tx
format: sc8
master_clock: 10 GHz
interpolation: 1
transport: {{kind: udp, frame_bytes: {datagram}, pacing: {{period: {period_us:g} us}}}}
warmup: 500 ms
duration: {duration_s:g} s
"""


def _hilrig_pacer(seconds: float) -> tuple[float, float, float] | str:
    """(period p50 s, p99 s, datagrams/s) of hilrig's paced sender, or why not."""
    from ..dsl import load_cases
    from ..engine import run_case
    from ..rig import default_rig_path, load_rig

    with tempfile.TemporaryDirectory(prefix="hilrig-bench-") as tmp:
        path = Path(tmp) / "pacer.yaml"
        path.write_text(PACER_CASE.format(datagram=DATAGRAM, period_us=PACER_PERIOD_S * 1e6, duration_s=seconds))
        (case,) = load_cases([path])
    result = run_case(case, load_rig(default_rig_path("sim")), run_id="bench-pacer")
    m = result.metrics
    if result.verdict is not Verdict.PASS or "pacing_period_p99_s" not in m:
        return f"{result.label}: {result.message}"
    return m["pacing_period_p50_s"], m["pacing_period_p99_s"], m.get("sent_frames_per_s", 0.0)


def _iperf_pacer(tool: str, seconds: float) -> tuple[float, float, float] | str:
    """(period p50 s, p99 s, datagrams/s on the wire) of iperf3 / iperf 2 asked for a 2 us
    period's rate, over the loopback of a scratch namespace."""
    ns = f"hilrig-{os.getpid()}-{next(_pacer_ids)}-pacer"
    add_netns(ns)
    try:
        bps = f"{DATAGRAM * 8 / PACER_PERIOD_S:.0f}"
        if tool == "iperf3":
            server = ["iperf3", "-s", "-1", "-p", str(PEER_PORT)]
            client = ["iperf3", "-c", "127.0.0.1", "-p", str(PEER_PORT), "-u", "-l", str(DATAGRAM), "-b", bps]
        else:
            server = ["iperf", "-s", "-u", "-p", str(PEER_PORT)]
            client = ["iperf", "-c", "127.0.0.1", "-p", str(PEER_PORT), "-u", "-l", str(DATAGRAM), "-b", bps]
        srv = subprocess.Popen(["ip", "netns", "exec", ns, *server], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        cap = Capture(ns, "lo", _udp_bpf())
        time.sleep(0.5)
        subprocess.run(["ip", "netns", "exec", ns, *client, "-t", f"{seconds:g}"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=seconds + 30, check=False)
        times = cap.stop()
        srv.terminate()
        srv.wait(timeout=10)
    finally:
        delete_netns(ns)
    # tcpdump on lo records each datagram once (checked: its count equals iperf3's sent count).
    q = period_quantiles(times)
    if q is None or len(times) < 2:
        return f"{tool}: no datagrams captured"
    return q[0], q[1], (len(times) - 1) / ((times[-1] - times[0]) / 1e9)


_pacer_ids = itertools.count()


def pacer_rows() -> list[tuple[Row, Limit, BenchRow | None]]:
    """hilrig's pacer at a 2 us period beside iperf3 and iperf 2 asked for the same rate."""
    missing = [t for t in ("iperf3", "iperf", "tcpdump") if shutil.which(t) is None]
    why = unavailable() or (f"not installed: {', '.join(missing)}" if missing else None)
    label = f"pacer at a {PACER_PERIOD_S * 1e6:g} us period, same host, {DATAGRAM} B"
    if why:
        return [((label, f"{DATAGRAM} B", f"skipped: {why}", "-", "-", "-", "-"), ("-", "-"), None)]
    mine = _hilrig_pacer(PACER_S)
    out: list[tuple[Row, Limit, BenchRow | None]] = []

    def fig(r: tuple[float, float, float] | str) -> str:
        if isinstance(r, str):
            return r
        return f"p50 {r[0] * 1e6:.2f} / p99 {r[1] * 1e6:.2f} us, {r[2] * DATAGRAM * 8 / 1e9:.2f} Gbit/s"

    for tool in ("iperf3", "iperf2"):
        theirs = _iperf_pacer("iperf3" if tool == "iperf3" else "iperf", PACER_S)
        ratio = math.nan if isinstance(mine, str) or isinstance(theirs, str) else mine[1] / theirs[1]
        met = not isinstance(mine, str) and abs(mine[1] - PACER_PERIOD_S) <= 1e-6
        row: Row = (label + " (hilrig: its own histogram; peer: tcpdump on lo)", f"{DATAGRAM} B", fig(mine), "-",
                    f"{tool} -b (the same rate)", fig(theirs), f"p99 {ratio:.3f}")
        limit: Limit = ("mark: p99 <= 3 us", "met" if met else "NOT met")
        out.append((row, limit, BenchRow(f"{label}: period p99 vs {tool}", DATAGRAM, None,
                                         None if isinstance(mine, str) else mine[2], None, tool, None,
                                         None if isinstance(theirs, str) else theirs[2], ratio,
                                         rig_s=None if isinstance(mine, str) else mine[1],
                                         peer_s=None if isinstance(theirs, str) else theirs[1])))
    return out


# ---- The pacers into a sink: a send shorter than the period ----
#
# Over the loopback a send carries the receiver's stack too (3-5 us here), so a 2 us
# period cannot be kept by anyone. A NIC takes a datagram in ~1 us; its stand-in here is
# a TUN device that nobody reads (scratch namespace): each datagram passes tcpdump's tap
# on it, then the kernel drops it. Into it, hilrig's paced sender (hilrig-bench pace:
# TxStream with transport.pacing.period, the rate clock out of its way) and iperf 2
# (its microsecond pacing) at the same rate, both timed on the wire by tcpdump; the
# error is |period - 2 us| per consecutive pair. iperf3 cannot send into a sink: its
# UDP test needs its server to answer on the data port.

SINK_ADDR, SINK_PEER, SINK_PORT = "10.203.0.1", "10.203.0.2", 5201
TUNSETIFF, IFF_TUN, IFF_NO_PI = 0x400454CA, 0x0001, 0x1000


@contextlib.contextmanager
def _sink(ns: str) -> Iterator[str]:
    """A TUN device in `ns` held open and never read; yields its name."""
    dev = tun_name(os.getpid(), next(_pacer_ids), "sink")
    with entered(ns):
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", dev.encode(), IFF_TUN | IFF_NO_PI))
        ip("-n", ns, "link", "set", dev, "up")
        ip("-n", ns, "addr", "add", f"{SINK_ADDR}/30", "dev", dev)
        yield dev
    finally:
        os.close(fd)


def period_errors(times_ns: list[int], period_ns: float) -> tuple[float, float, float] | None:
    """(p50, p99 of |period - asked|, datagrams/s) from consecutive packets' times, seconds.
    The rate leaves out pauses over 1 ms (iperf 2 repeats its last datagram for ~2 s)."""
    gaps = [b - a for a, b in itertools.pairwise(times_ns)]
    if len(gaps) < 100:
        return None
    err = sorted(abs(g - period_ns) for g in gaps)
    sending = [g for g in gaps if g < 1_000_000]
    return err[len(err) // 2] / 1e9, err[min(len(err) - 1, int(len(err) * 0.99))] / 1e9, \
        len(sending) / (sum(sending) / 1e9)


def _into_sink(ns: str, dev: str, argv: list[str], seconds: float) -> tuple[list[int], str]:
    """Runs argv in `ns` with tcpdump on the sink: (datagram times, argv's stdout)."""
    cap = Capture(ns, dev, _udp_bpf())
    time.sleep(0.5)
    out = subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True,
                         timeout=seconds + 30, check=False)
    time.sleep(0.2)
    return cap.stop(), out.stdout


def sink_pacer_rows() -> list[tuple[Row, Limit, BenchRow | None]]:
    """hilrig's pacer and iperf 2 at a 2 us period into a sink (a send ~1 us)."""
    label = f"pacer at a {PACER_PERIOD_S * 1e6:g} us period into a sink (TUN nobody reads), {DATAGRAM} B"
    binary, why_not = find_executable("hilrig-bench", "HILRIG_BENCH_BIN")
    missing = [t for t in ("iperf", "tcpdump") if shutil.which(t) is None]
    why = unavailable() or why_not or (f"not installed: {', '.join(missing)}" if missing else None)
    if why or binary is None:
        return [((label, f"{DATAGRAM} B", f"skipped: {why}", "-", "-", "-", "-"), ("-", "-"), None)]
    ns = f"hilrig-{os.getpid()}-{next(_pacer_ids)}-sink"
    period_ns = PACER_PERIOD_S * 1e9
    add_netns(ns)
    try:
        with _sink(ns) as dev:
            mine_t, mine_out = _into_sink(ns, dev, [binary, "pace", "--host", SINK_PEER, "--port", str(SINK_PORT),
                                                     "--frame-bytes", str(DATAGRAM), "--period-ns", f"{period_ns:.0f}",
                                                     "--seconds", f"{PACER_S:g}"], PACER_S)
            theirs_t, _ = _into_sink(ns, dev, ["iperf", "-c", SINK_PEER, "-u", "-p", str(SINK_PORT), "-l",
                                               str(DATAGRAM), "-b", f"{DATAGRAM * 8 / PACER_PERIOD_S:.0f}",
                                               "-t", f"{PACER_S:g}"], PACER_S)
    finally:
        delete_netns(ns)
    own = json.loads(mine_out) if mine_out.strip() else {}
    mine, theirs = period_errors(mine_t, period_ns), period_errors(theirs_t, period_ns)

    def fig(r: tuple[float, float, float] | None) -> str:
        if r is None:
            return "no datagrams captured"
        return f"error p50 {r[0] * 1e6:.2f} / p99 {r[1] * 1e6:.2f} us, {r[2] * DATAGRAM * 8 / 1e9:.2f} Gbit/s"

    ratio = math.nan if mine is None or theirs is None else mine[1] / theirs[1]
    met = mine is not None and mine[1] <= 1e-6
    own_fig = (f"; own histogram p50 {own['pacing_period_p50_ns'] / 1e3:.2f} / p99 "
               f"{own['pacing_period_p99_ns'] / 1e3:.2f} us" if "pacing_period_p99_ns" in own else "")
    row: Row = (label + " (tcpdump on the sink)", f"{DATAGRAM} B", fig(mine) + own_fig, "-",
                "iperf 2 -b (the same rate)", fig(theirs), f"error p99 {ratio:.3f}")
    limit: Limit = ("mark: error p99 <= 1 us", "met" if met else "NOT met")
    return [(row, limit, BenchRow(f"{label}: period error p99 vs iperf 2", DATAGRAM, None,
                                  None if mine is None else mine[2], None, "iperf2", None,
                                  None if theirs is None else theirs[2], ratio,
                                  rig_s=None if mine is None else mine[1],
                                  peer_s=None if theirs is None else theirs[1]))]
