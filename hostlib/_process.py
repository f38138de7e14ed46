"""Stopping a child process we started (simulator, InfluxDB, iperf3); finding processes by name."""
from __future__ import annotations

import subprocess
from pathlib import Path


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


def processes(name: str, parent: int | None = None) -> set[int]:
    """Pids of the running processes called `name` (/proc/<pid>/stat's comm; zombies
    excluded), only the children of `parent` when given."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:   # exited while we looked
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, ppid = stat[stat.rindex(")") + 2 :].split()[:2]
        if comm == name and state != "Z" and (parent is None or int(ppid) == parent):
            pids.add(int(entry.name))
    return pids
