"""Runs usb cases on rigs/usb_board.yaml against the umockdev board (_usb_mock) and
prints one JSON line per case. Started by test_usb_umockdev.py in a process with
LD_PRELOAD=libumockdev-preload.so.0 (umockdev must be preloaded before libusb opens
anything); argv: a JSON list of [direction, fault or "", at_in_transfer]."""
from __future__ import annotations

import json
import sys
import tempfile
import textwrap
from pathlib import Path

import _usb_mock

from hostlib.dsl import load_cases
from hostlib.engine import run_case
from hostlib.rig import load_rig

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    rig = load_rig(REPO / "rigs" / "usb_board.yaml")
    tmp = Path(tempfile.mkdtemp(prefix="hilrig-usb-"))
    for i, (direction, fault, at) in enumerate(json.loads(sys.argv[1])):
        divider = "interpolation" if direction == "tx" else "decimation"
        # A board over libusb does not report what it received, so a TX case's receive
        # counters are "not measured": the board's own counts (printed below) are checked.
        thresholds = "" if direction == "tx" else (
            'thresholds: {missing_frames: "== 0", pattern_errors: "== 0", malformed_frames: "== 0"}')
        path = tmp / f"case{i}.yaml"
        path.write_text(textwrap.dedent(f"""
            name: usb {direction} {fault or 'clean'}
            device: board
            direction: {direction}
            master_clock: 64 MHz
            {divider}: 16
            transport: {{kind: usb, frame_bytes: 8192, transfer_bytes: 16 KiB, transfers: 4}}
            duration: 300 ms
            {thresholds}
        """))
        case, = load_cases([path])
        board = _usb_mock.BulkDevice()
        if fault:
            board.arm(fault, at)
        result = run_case(case, rig, run_id="usb-umockdev")
        print(json.dumps({"verdict": result.verdict, "error": result.error, "error_kind": result.error_kind, "message": result.message,
                          "metrics": result.metrics, "device_out_frames": board.out_frames(),
                          "device_out_pattern_errors": board.out_pattern_errors(),
                          "device_out_seq_errors": board.out_seq_errors()}), flush=True)
        del board


if __name__ == "__main__":
    main()
