"""One-way delay of a kernel-realised link (tc netem + tbf keep no delay histogram): a
few small UDP probes a second from one namespace to the other, each carrying its send
time, received with the kernel's receive timestamp. Both namespaces share the host's
clock, so a probe's delay is exact: the link's propagation, jitter and queueing, as
hilrig-link's own in-to-out histogram. ~100 probes of 36 IP bytes a second (a few kbit/s
beside a stream); the link's packet counters include them.
"""
from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time

from .emulator import Histogram
from .netns import entered

__all__ = ["DelayProbe"]

PROBE_INTERVAL_S = 0.01
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
_STAMP = struct.Struct("<q")


class DelayProbe:
    """Probes from (src_netns, src_addr) to (dst_netns, dst_addr) while started; histogram()
    of their one-way delays so far."""

    def __init__(self, src_netns: str, src_addr: str, dst_netns: str, dst_addr: str):
        with entered(dst_netns):
            self._rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._rx.bind((dst_addr, 0))
            self._rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            self._rx.settimeout(0.2)
        with entered(src_netns):
            self._tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self._tx.bind((src_addr, 0))
        self._to = (dst_addr, self._rx.getsockname()[1])
        self._delays_ns: list[int] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._send, daemon=True, name="link-probe-send"),
                         threading.Thread(target=self._receive, daemon=True, name="link-probe-receive")]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        """Stops both threads and closes the sockets (safe to call twice)."""
        self._stop.set()
        for t in self._threads:
            if t.is_alive():
                t.join(2)
        for s in (self._tx, self._rx):
            with contextlib.suppress(OSError):
                s.close()

    def histogram(self) -> Histogram | None:
        """The delays so far as the core's histogram keys (ns), or None before the first."""
        with self._lock:
            delays = sorted(self._delays_ns)
        if not delays:
            return None

        def q(p: float) -> int:
            return delays[min(len(delays) - 1, int(p * len(delays)))]
        return Histogram(count=len(delays), p50=q(0.5), p90=q(0.9), p99=q(0.99), p999=q(0.999), max=delays[-1])

    def _send(self) -> None:
        while not self._stop.wait(PROBE_INTERVAL_S):
            with contextlib.suppress(OSError):   # a full queue drops a probe, as it would a frame
                self._tx.sendto(_STAMP.pack(time.time_ns()), self._to)

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                data, anc, _, _ = self._rx.recvmsg(64, 64)
            except (TimeoutError, BlockingIOError):
                continue
            except OSError:
                return
            if len(data) != _STAMP.size or not anc:
                continue
            sec, nsec = struct.unpack("qq", anc[0][2][:16])   # the kernel's receive time (CLOCK_REALTIME)
            delay = sec * 1_000_000_000 + nsec - _STAMP.unpack(data)[0]
            with self._lock:
                self._delays_ns.append(max(0, delay))
