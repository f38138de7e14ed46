"""SoapyRemote serving driver=hilrig over loopback, beside hilrig's UDP path (make bench).

The peer a lab would pick for samples over a network: Debian's soapyremote-server
(SoapySDRServer) serves the module driver=hilrig on 127.0.0.1, and a client reads CS16
through soapysdr-module-remote (driver=remote). remote:mtu makes each SoapyRemote
datagram as large as hilrig's frame (UDP payload = frame_bytes), and the module's own
simulator link runs at that frame size too (SoapyRemote 0.5.2 carries no datagram above
4096 bytes: the 8000-byte row says so). The client checks the counter pattern over
every sample it receives, so a datagram lost anywhere (simulator -> module, server ->
client) breaks it. Zero loss: an unbroken pattern, no error return, at least 99 % of
rate x window received; the highest such rate is searched and confirmed exactly as
iperf3's (the bench's search and confirm).

Why a private D-Bus: SoapySDRServer publishes itself over DNS-SD (avahi) and its serve
loop ends as soon as its avahi client is unusable (SoapyServer.cpp runServer,
SoapyMDNSEndpoint::status()). Without a system bus, avahi_client_new() fails ("Daemon
not running"), status() is false and the server exits at once ("DNS-SD daemon
disconnected... Exiting prematurely"). On a bus without an avahi daemon the avahi
client (AVAHI_CLIENT_NO_FAIL) stays CONNECTING and the server serves. So the bench
starts dbus-daemon with soapyremote-bus.conf on a socket of its own and gives the
server DBUS_SYSTEM_BUS_ADDRESS: no avahi-daemon, no system bus, nothing published.

`python -m hostlib.bench.soapyremote URL FRAME_BYTES RATE_SPS SECONDS SERVER_PID` is
the client: one run, one JSON line on stdout; the bench runs it as a process of its own.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypedDict

from .._process import stop_process
from .record import BenchRow
from .search import CEILING_HEADROOM, Point, held, zero_loss_rate

BUS_CONFIG = Path(__file__).resolve().parent / "soapyremote-bus.conf"
FRAME_SIZES = (1472, 4096, 8000)    # the UDP rows' 1472 and 8000, and SoapyRemote's largest datagram
IP_UDP_HEADER_BYTES = 48            # SoapyRemote's remote:mtu counts an IPv6 + UDP header
# SoapyRemote 0.5.2 sends and receives its stream in pieces of SOAPY_REMOTE_SOCKET_BUFFMAX
# (4096) bytes; over UDP a larger datagram arrives as several and the client fails
# ("StreamEndpoint::acquireRecv(7976 bytes), FAILED 4096 ... MTU setting may be unachievable").
MAX_DATAGRAM_BYTES = 4096
DATAGRAM_HEADER_BYTES = 24          # SoapyRemote's StreamDatagramHeader
HILRIG_HEADER_BYTES = 48            # docs/frame-format.md
CS16_BYTES = 4
START_TIMEOUT_S = 10.0


def _cpu_s(pid: int) -> float:
    """utime + stime of a process, seconds (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class ClientRun(TypedDict, total=False):
    """A client run's JSON line (or only `error`)."""
    rate_sps: float
    seconds: float
    samples: int
    breaks: int
    timeouts: int
    errors: dict[str, int]          # readStream error code -> count
    cpu_percent: float | None       # client + server process CPU over the window
    module_missing_frames: int | None
    module_pattern_errors: int | None
    error: str


def client(url: str, frame_bytes: int, rate_sps: float, seconds: float, server_pid: int) -> ClientRun:
    """Read CS16 from driver=hilrig through SoapyRemote for `seconds` after the first
    sample; the counter pattern (one u32 word per CS16 sample) is checked throughout."""
    import numpy as np
    import SoapySDR
    from SoapySDR import SOAPY_SDR_CS16, SOAPY_SDR_RX, SOAPY_SDR_TIMEOUT

    dev = SoapySDR.Device({"driver": "remote", "remote": url, "remote:driver": "hilrig"})
    dev.setSampleRate(SOAPY_SDR_RX, 0, rate_sps)
    actual_sps = dev.getSampleRate(SOAPY_SDR_RX, 0)
    stream = dev.setupStream(SOAPY_SDR_RX, SOAPY_SDR_CS16, [0],
                             {"remote:mtu": str(frame_bytes + IP_UDP_HEADER_BYTES), "frame_bytes": str(frame_bytes)})
    buf = np.empty(1 << 22, np.uint32)
    flush_at = len(buf) - dev.getStreamMTU(stream)
    received = breaks = timeouts = 0
    errors: dict[int, int] = {}
    last: int | None = None
    pos = 0

    def check(words: np.ndarray) -> None:
        nonlocal breaks, last
        if last is not None and int(words[0]) != (last + 1) & 0xFFFFFFFF:
            breaks += 1
        breaks += int(np.count_nonzero(np.diff(words) != 1))  # uint32: wraps like the pattern
        last = int(words[-1])

    dev.activateStream(stream)
    deadline = time.monotonic() + START_TIMEOUT_S
    t0: float | None = None
    cpu0 = server0 = 0.0
    while True:
        now = time.monotonic()
        if t0 is None and now > deadline:
            break
        if t0 is not None and now - t0 >= seconds:
            break
        r = dev.readStream(stream, [buf[pos:]], len(buf) - pos, timeoutUs=100_000)
        if r.ret > 0:
            if t0 is None:  # the window starts at the first sample
                t0, cpu0, server0 = time.monotonic(), time.process_time(), _cpu_s(server_pid)
            pos += r.ret
            if pos >= flush_at:
                check(buf[:pos])
                received += pos
                pos = 0
        elif r.ret == SOAPY_SDR_TIMEOUT:
            timeouts += int(t0 is not None)
        else:
            errors[r.ret] = errors.get(r.ret, 0) + 1
    elapsed_s = time.monotonic() - t0 if t0 is not None else 0.0
    cpu_s = (time.process_time() - cpu0 + _cpu_s(server_pid) - server0) if t0 is not None else 0.0
    if pos:
        check(buf[:pos])
        received += pos
    dev.deactivateStream(stream)
    rx_stats = json.loads(dev.readSensor("rx_stats") or "{}")
    dev.closeStream(stream)
    return {"rate_sps": actual_sps, "seconds": elapsed_s, "samples": received, "breaks": breaks,
            "timeouts": timeouts, "errors": {str(k): v for k, v in errors.items()},
            "cpu_percent": 100.0 * cpu_s / elapsed_s if elapsed_s else None,
            "module_missing_frames": rx_stats.get("missing_frames"),
            "module_pattern_errors": rx_stats.get("pattern_errors")}


class RemoteServer:
    """SoapySDRServer on 127.0.0.1 with a private D-Bus (see the module doc)."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="hilrig-soapyremote-")
        self._log = Path(self._tmp.name) / "server.log"
        self._bus_log = Path(self._tmp.name) / "dbus.log"
        self.dbus: subprocess.Popen | None = None
        self.server: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> str | None:
        """None once the server serves, else why it cannot (the row says so)."""
        from ..drivers.sim import find_sim_binary
        from ..drivers.soapy import ensure_plugin_path

        exe, dbus = shutil.which("SoapySDRServer"), shutil.which("dbus-daemon")
        if exe is None:
            return "SoapySDRServer not found (Debian package soapyremote-server)"
        if dbus is None:
            return "dbus-daemon not found (Debian package dbus-daemon): SoapySDRServer exits without a bus"
        bus = Path(self._tmp.name) / "bus"
        with self._bus_log.open("wb") as log:
            self.dbus = subprocess.Popen([dbus, f"--config-file={BUS_CONFIG}", f"--address=unix:path={bus}",
                                          "--nofork", "--nopidfile", "--nosyslog"],
                                         stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not bus.exists():
            if self.dbus.poll() is not None or time.monotonic() > deadline:
                return f"private dbus-daemon did not start: {self._bus_log.read_text()[-300:].strip()}"
            time.sleep(0.05)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        ensure_plugin_path()  # the server loads driver=hilrig from our build or package
        env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={bus}", "HILRIG_SIM_BIN": find_sim_binary()}
        with self._log.open("wb") as log:
            self.server = subprocess.Popen([exe, f"--bind=127.0.0.1:{port}"], env=env,
                                           stdout=log, stderr=subprocess.STDOUT)
        while "Press Ctrl+C" not in self._log.read_text(errors="replace"):
            if self.server.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        time.sleep(0.5)  # a server without DNS-SD leaves its loop at once
        if self.server.poll() is not None:
            return f"SoapySDRServer exited ({self.server.returncode}): {self.last_words()}"
        self.url = f"tcp://127.0.0.1:{port}"
        return None

    def version(self) -> str:
        """The version the server printed at start ("0.5.2"), or "?"."""
        text = self._log.read_text(errors="replace") if self._log.exists() else ""
        found = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Server version:")]
        return found[0].split("-")[0] if found else "?"

    def last_words(self) -> str:
        text = self._log.read_text(errors="replace") if self._log.exists() else ""
        lines = [line.strip() for line in text.replace("\x1b[1m", "").replace("\x1b[31m", "")
                 .replace("\x1b[0m", "").splitlines() if line.strip()]
        return "; ".join(lines[-3:])

    def close(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGINT)  # its own clean shutdown
            try:
                self.server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                stop_process(self.server, 5)
        if self.dbus is not None:
            stop_process(self.dbus, 5)
        self._tmp.cleanup()


def run_client(server: RemoteServer, frame_bytes: int, rate_sps: float, seconds: float) -> ClientRun:
    """One client run in its own process: its JSON, or {"error": ...}."""
    if server.server is None:
        return {"error": "SoapySDRServer is not running"}
    args = [sys.executable, "-m", "hostlib.bench.soapyremote", server.url, str(frame_bytes), repr(rate_sps),
            repr(seconds), str(server.server.pid)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=seconds + 60)
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        return {"error": (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]}
    run: ClientRun = json.loads(lines[-1])
    return run


def zero_loss(r: ClientRun) -> bool:
    """Every sample in order (no break in the pattern), no error return, the rate held."""
    return ("error" not in r and r["breaks"] == 0 and not r["errors"] and r["seconds"] > 0
            and r["samples"] >= 0.99 * r["rate_sps"] * r["seconds"])


def rows(window_s: float, confirm_s: float,
         rig_point: Callable[[int], Point]) -> Iterator[tuple[tuple, BenchRow | None]]:
    """(table row, BenchRow) per frame size: hilrig's UDP zero-loss rate (rig_point(size),
    frames/s) beside SoapyRemote's, both in MS/s of CS16 payload; the ratio is rig/peer."""
    label = "SoapyRemote zero-loss RX, driver=hilrig"
    peer = "SoapySDRServer + remote client, udp"
    server = RemoteServer()
    try:
        why = server.start()
        if why is not None:
            yield (label, "-", "-", "-", peer, f"not available: {why}", "n/a"), None
            return
        for size in FRAME_SIZES:
            def run_at(sps: float, seconds: float, size: int = size) -> Point:
                r = run_client(server, size, sps, seconds)
                got = r.get("samples", 0) / r["seconds"] if r.get("seconds") else 0.0
                return Point(zero_loss(r), got, r.get("cpu_percent"), r)

            if size > MAX_DATAGRAM_BYTES:
                yield (label, f"{size} B", "-", "-", peer,
                       f"not available: SoapyRemote {server.version()} carries UDP datagrams of at most "
                       f"{MAX_DATAGRAM_BYTES} bytes (SOAPY_REMOTE_SOCKET_BUFFMAX)", "n/a"), None
                continue
            rig = rig_point(size)
            rig_sps = rig.fps * (size - HILRIG_HEADER_BYTES) / CS16_BYTES
            first = run_client(server, size, 1e6, 1.0)
            if "error" in first:
                yield (label, f"{size} B", f"{rig_sps / 1e6:7.2f} MS/s", f"{rig.cpu:.0f}", peer,
                       f"not available: {first['error']}", "n/a"), None
                continue
            # The ceiling: what the client receives when asked for the rig's own rate.
            ceiling = run_at(max(rig_sps, 1e6), window_s).fps
            best = held(zero_loss_rate(run_at, CEILING_HEADROOM * ceiling, window_s, confirm_s=confirm_s))
            ratio = rig_sps / best.fps if best.fps else None
            datagram_samples = (size - DATAGRAM_HEADER_BYTES) // CS16_BYTES
            yield ((label, f"{size} B", f"{rig_sps / 1e6:7.2f} MS/s", f"{rig.cpu:.0f}", peer,
                    (f"{best.fps / 1e6:7.2f} MS/s  CPU {best.cpu or 0:.0f} %" if best.fps else "no clean window"),
                    f"{ratio:.2f}" if ratio else "n/a"),
                   BenchRow(label, size, rig.fps * size, rig.fps, rig.cpu, "SoapyRemote",
                            best.fps / datagram_samples * size, best.fps / datagram_samples, ratio))
    finally:
        server.close()


if __name__ == "__main__":
    url, frame_bytes, rate_sps, seconds, server_pid = sys.argv[1:6]
    print(json.dumps(client(url, int(frame_bytes), float(rate_sps), float(seconds), int(server_pid))))
