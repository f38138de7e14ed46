"""make bench row: the libusb path (USB engine + libusb-1.0) against the umockdev board
(hostlib/native/tests/usb_mock_device.hpp) at S x N transfers, RX, every frame
checked. umockdev answers each usbfs ioctl over a socket, so it is the ceiling here:
the figure proves the glue moves data, not what a real bus carries (docs/usb.md).

`python -m hostlib.bench.usb_umockdev S N SECONDS` runs one point (in a process with
LD_PRELOAD=libumockdev-preload.so.0) and prints JSON; run(S, N, s) starts that process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MOCK_DIR = REPO / "build" / "test-modules"
FRAME_BYTES = 8192   # the board's frame


def run(transfer_bytes: int, transfers: int, seconds: float) -> dict:
    if not list(MOCK_DIR.glob("_usb_mock*.so")):
        return {"error": "build/test-modules/_usb_mock not built"}
    env = {**os.environ, "LD_PRELOAD": "libumockdev-preload.so.0",
           "PYTHONPATH": os.pathsep.join([str(MOCK_DIR), str(REPO)])}
    proc = subprocess.run([sys.executable, "-m", "hostlib.bench.usb_umockdev", str(transfer_bytes), str(transfers),
                           str(seconds)], env=env, capture_output=True, text=True, timeout=seconds + 60)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[-300:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _point(transfer_bytes: int, transfers: int, seconds: float) -> dict:
    import _usb_mock

    from hostlib import _native
    from hostlib.transports import complete_config
    board = _usb_mock.BulkDevice()
    # A complete stream config (the core's defaults) with the usb transport in place of the default one.
    cfg = complete_config({"direction": "rx", "frame_bytes": FRAME_BYTES, "rate_sps": 1e6})
    cfg["transport"] = {"kind": "usb", "transfer_bytes": transfer_bytes, "transfers": transfers,
                        "device": {"vid_pid": "1209:4852"}}
    stream = _native.UsbStream(cfg)
    cpu0 = time.process_time()
    stream.start()
    time.sleep(0.2)  # warm-up
    s0, t0 = stream.stats(), time.monotonic()
    time.sleep(seconds)
    s1, t1 = stream.stats(), time.monotonic()
    stream.stop()
    cpu = (time.process_time() - cpu0) / (t1 - t0 + 0.2) * 100
    dt = t1 - t0
    rx0, rx1 = s0["rx"], s1["rx"]
    out = {"transfer_bytes": transfer_bytes, "transfers": transfers, "seconds": dt,
           "bytes_per_s": (s1["usb"]["usb_bytes_transferred"] - s0["usb"]["usb_bytes_transferred"]) / dt,
           "transfers_per_s": (s1["usb"]["usb_transfers_completed"] - s0["usb"]["usb_transfers_completed"]) / dt,
           "frames_received": rx1["frames_received"], "pattern_errors": rx1["pattern_errors"],
           "missing_frames": rx1["missing_frames"], "error": stream.error(), "process_cpu_percent": cpu,
           "frames_per_s": (rx1["frames_received"] - rx0["frames_received"]) / dt}
    del stream, board
    return out


if __name__ == "__main__":
    print(json.dumps(_point(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))))
