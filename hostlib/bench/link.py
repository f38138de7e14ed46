"""The link rows of `make bench`: hilrig-link carrying 1430-byte UDP datagrams in both
directions at once (iperf3 in each namespace, offered 10 % above the configured rate,
so the link's queue is what limits them), 1 ms delay and 0.1 % loss each way
(docs/long-link.md). Per configured rate: the delivered rate of each direction against
the configured one (the mark: within 1 %), the emulator's timing error (how late after
its due time a packet left, p99; the mark: <= 50 us), the loss against the binomial
99 % interval, and the emulator's CPU. Nothing here is a pass/fail test; without root
the group says why it has no rows.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import time
from pathlib import Path

from ..link.netns import unavailable
from ..link.session import LinkSession
from ..link.spec import LinkDirection, LinkSpec
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
        s0, c0, t0 = link.stats(), _cpu_s(link.emulator.pid), time.monotonic()
        time.sleep(seconds)
        s1, c1, t1 = link.stats(), _cpu_s(link.emulator.pid), time.monotonic()
        for p in clients:
            out, _ = p.communicate(timeout=60)
            json.loads(out or "{}")   # iperf3 ran to its end (its own figures are the sender's)
        for server in servers:
            server.wait(timeout=10)
    window = t1 - t0
    got, late, losses = {}, 0.0, []
    for side, a, b in (("up", s0["up"], s1["up"]), ("down", s0["down"], s1["down"])):
        got[side] = (b["bytes_out"] - a["bytes_out"]) * 8 / window
        late = max(late, b["late_ns"]["p99"] / 1e9)
        n = b["packets_in"] - a["packets_in"]
        lost = b["dropped_loss"] - a["dropped_loss"]
        losses.append(abs(lost - n * LOSS) <= 2.576 * math.sqrt(n * LOSS * (1 - LOSS)) + 1)
    worst = min(got.values()) / rate_bps
    met = abs(worst - 1) <= RATE_MARK and all(abs(g / rate_bps - 1) <= RATE_MARK for g in got.values()) \
        and late <= LATE_P99_MARK_S and all(losses)
    cpu = (c1 - c0) / window * 100
    row: Row = (f"link emulator, both ways at once, {rate_bps / 1e6:g} Mbit/s, 1 ms, 0.1 % loss",
                f"{DATAGRAM} B",
                f"up {got['up'] / 1e6:.1f} / down {got['down'] / 1e6:.1f} Mbit/s, late p99 {late * 1e6:.0f} us, "
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
