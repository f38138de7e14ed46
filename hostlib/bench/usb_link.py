"""make bench rows: the host USB engine over the bus model's in-process device
(UsbStream with transport.link, docs/usb.md), every frame checked on both ends.
The thread's CPU includes the simulated device's work (it fills and checks in the
same event thread), so it is an upper bound on the host engine's cost.
measure() runs one UsbStream window; usb_umockdev's libusb row uses it too."""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..transports import complete_config, native
from ..transports.config import UsbLink

FRAME_BYTES = 8192


@dataclass
class UsbWindow:
    """A UsbStream's stats before and after a window (after a warm-up), and when stopped."""
    before: dict
    after: dict
    final: dict
    seconds: float        # the window, by the monotonic clock
    process_cpu_s: float  # this process's CPU from start to stop
    error: str


def measure(direction: str, transport: dict, seconds: float, *, warmup_s: float, rate_sps: float = 1e6) -> UsbWindow:
    """One UsbStream with this usb transport (in place of the default one under the core's
    complete defaults, sc16 frames of FRAME_BYTES): started, warmed up, measured, stopped."""
    cfg = complete_config({"direction": direction, "frame_bytes": FRAME_BYTES, "rate_sps": rate_sps})
    cfg["transport"] = {"kind": "usb", **transport}
    stream = native().UsbStream(cfg)
    cpu0 = time.process_time()
    stream.start()
    time.sleep(warmup_s)
    before, t0 = stream.stats(), time.monotonic()
    time.sleep(seconds)
    after, t1 = stream.stats(), time.monotonic()
    stream.stop()
    return UsbWindow(before, after, stream.stats(), t1 - t0, time.process_time() - cpu0, stream.error())


def run(link: UsbLink, direction: str, transfer_bytes: int, transfers: int, seconds: float,
        rate_sps: float = 1e6, fifo_bytes: int = 0) -> dict:
    """fifo_bytes 0: the device streams as fast as the bus; else at rate_sps (sc16) through that FIFO."""
    w = measure(direction, {"link": link.value, "transfer_bytes": transfer_bytes, "transfers": transfers,
                            "fifo_bytes": fifo_bytes}, seconds, warmup_s=0.3, rate_sps=rate_sps)
    a, b, final, dt = w.before, w.after, w.final, w.seconds
    rx = (b.get("rx", {}).get("payload_bytes_received", 0) - a.get("rx", {}).get("payload_bytes_received", 0)) / dt
    tx = (b.get("tx", {}).get("payload_bytes_sent", 0) - a.get("tx", {}).get("payload_bytes_sent", 0)) / dt
    side = "rx" if "rx" in b else "tx"
    cpu = (b[side]["thread_cpu_ns"] - a[side]["thread_cpu_ns"]) / dt / 1e9 * 100
    r = final.get("rx", {})
    ok = (not final["error"] and r.get("pattern_errors", 0) == 0 and r.get("missing_frames", 0) == 0
          and final["device_stats"].get("overflow_events", 0) == 0)
    return {"rx_Bps": rx, "tx_Bps": tx, "cpu_percent": cpu, "ok": ok, "error": final["error"]}
