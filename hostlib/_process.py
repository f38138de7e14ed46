"""Stopping a child process we started (simulator, InfluxDB, iperf3)."""
from __future__ import annotations

import subprocess


def stop_process(proc: subprocess.Popen, timeout_s: float) -> None:
    """SIGTERM, up to timeout_s to exit, then SIGKILL; reaped either way, so no
    zombie is left behind."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
