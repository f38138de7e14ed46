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
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MOCK_DIR = REPO / "build" / "test-modules"


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

    from hostlib.bench.usb_link import measure
    board = _usb_mock.BulkDevice()
    w = measure("rx", {"transfer_bytes": transfer_bytes, "transfers": transfers, "device": {"vid_pid": "1209:4852"}},
                seconds, warmup_s=0.2)
    del board     # after the stream, which measure() has dropped
    s0, s1, dt = w.before, w.after, w.seconds
    rx0, rx1 = s0["rx"], s1["rx"]
    return {"transfer_bytes": transfer_bytes, "transfers": transfers, "seconds": dt,
            "bytes_per_s": (s1["usb"]["usb_bytes_transferred"] - s0["usb"]["usb_bytes_transferred"]) / dt,
            "transfers_per_s": (s1["usb"]["usb_transfers_completed"] - s0["usb"]["usb_transfers_completed"]) / dt,
            "frames_received": rx1["frames_received"], "pattern_errors": rx1["pattern_errors"],
            "missing_frames": rx1["missing_frames"], "error": w.error,
            "process_cpu_percent": w.process_cpu_s / (dt + 0.2) * 100,
            "frames_per_s": (rx1["frames_received"] - rx0["frames_received"]) / dt}


if __name__ == "__main__":
    print(json.dumps(_point(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]))))
