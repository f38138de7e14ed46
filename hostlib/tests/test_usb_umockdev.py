"""The usb driver end to end without hardware: rig entry -> case -> native engine ->
libusb -> usbfs ioctls answered by a board emulated by umockdev in the same process
(hostlib/native/tests/usb_mock_device.hpp). Each injected error reaches its verdict."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hostlib.tests.conftest import REPO, requires_native, skip_unless_required

pytestmark = requires_native
MOCK_DIR = REPO / "build" / "test-modules"


def run_cases(tmp_path, *cases):
    if not list(MOCK_DIR.glob("_usb_mock*.so")):
        skip_unless_required("build/test-modules/_usb_mock is not built (libumockdev-dev missing?)")
    env = {**os.environ, "LD_PRELOAD": "libumockdev-preload.so.0", "HILRIG_LOCK_DIR": str(tmp_path / "locks"),
           "PYTHONPATH": os.pathsep.join([str(MOCK_DIR), str(REPO)])}
    proc = subprocess.run([sys.executable, "-m", "hostlib.tests.usb_umockdev_run", json.dumps(list(cases))],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_usb_board_rx_and_tx_pass_with_every_frame_checked(tmp_path):
    rx, tx = run_cases(tmp_path, ["rx", "", 0], ["tx", "", 0])
    assert rx["verdict"] == "PASS", rx
    assert rx["metrics"]["frames_received"] > 50 and rx["metrics"]["pattern_errors"] == 0, rx["metrics"]
    assert tx["verdict"] == "PASS", tx
    # The board checked what it got: every frame the host counted as sent, in order, with the pattern.
    assert tx["device_out_frames"] == tx["metrics"]["frames_received"] > 50, tx
    assert tx["device_out_pattern_errors"] == 0 and tx["device_out_seq_errors"] == 0, tx


def test_usb_board_errors_reach_their_verdicts(tmp_path):
    gone, stall, overflow, short = run_cases(tmp_path, ["rx", "no_device", 20], ["rx", "stall", 20],
                                             ["rx", "overflow", 20], ["rx", "short_transfer", 20])
    assert gone["verdict"] == "ERROR" and gone["error_kind"] == "device" and gone["error"].startswith("usb 1209:4852"), gone
    assert "the device is gone" in gone["error"], gone
    assert stall["verdict"] == "ERROR" and stall["error_kind"] == "device" and "endpoint 0x81 IN stalled" in stall["error"], stall
    # Lost data is the device under test failing its thresholds, not an error of the rig.
    assert overflow["verdict"] == "FAIL" and overflow["metrics"]["missing_frames"] == 2, overflow
    assert short["verdict"] == "FAIL", short
    assert (short["metrics"]["missing_frames"], short["metrics"]["malformed_frames"]) == (1, 1), short
