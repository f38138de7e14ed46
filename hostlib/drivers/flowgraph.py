"""The host side of a case as a GNU Radio flowgraph (`host: gnuradio`, docs/gnuradio.md).

`FlowgraphRx` has the native RxStream's face (endpoint, start, stop, stats), so a
driver uses it in its place: rig_source (gr-hilrig) receives the simulator's frames
through the core's RxChecker, so every RxStream counter keeps its name and meaning,
and the flowgraph ends in pattern_check, whose counts are the case's pattern_errors
and dropped_samples: the flowgraph's check is what the verdict is about.
"""
from __future__ import annotations

import time
from typing import Any

from .._exceptions import InfrastructureError


def _blocks() -> tuple[Any, Any]:
    try:
        from gnuradio import gr, hilrig
    except ImportError as exc:
        raise InfrastructureError(
            f"host: gnuradio needs GNU Radio and gr-hilrig (make build installs gr_blocks/): {exc}") from None
    return gr, hilrig


class FlowgraphRx:
    """rig_source -> pattern_check for the stream config `cfg` (hostlib.transports.stream_config)."""

    def __init__(self, cfg: dict[str, Any]):
        gr, hilrig = _blocks()
        t = cfg["transport"]
        # shm: the ring is created here; the simulator opens it
        address = f"{t.get('host') or '127.0.0.1'}:{int(t.get('port') or 0)}" if t["kind"] == "udp" else ""
        channels, fmt = int(cfg["channels"]), str(cfg["sample_format"])
        self.source = hilrig.rig_source(fmt, channels, t["kind"], address, int(cfg["frame_bytes"]),
                                        int(t.get("slots") or 0), int(t.get("socket_buffer_bytes") or 0),
                                        True, float(cfg["rate_sps"]))
        self.check = hilrig.pattern_check(fmt, channels, stats_interval_s=0)
        self.tb = gr.top_block("hilrig case host")
        for ch in range(channels):
            self.tb.connect((self.source, ch), (self.check, ch))
        self._cpu0 = self._cpu_ns = 0
        self._running = False

    def endpoint(self) -> dict[str, Any]:
        return self.source.endpoint()

    def start(self) -> None:
        self._cpu0 = time.process_time_ns()
        self.tb.start()
        self._running = True

    def stop(self) -> None:
        if self._running:
            self.tb.stop()
            self.tb.wait()
            self._cpu_ns = time.process_time_ns() - self._cpu0
            self._running = False

    def stats(self) -> dict[str, Any]:
        s = dict(self.source.stats())
        # GNU Radio runs a thread per block; the process's CPU time stands for the
        # receive thread's (the Python side sleeps while the flowgraph runs).
        s["thread_cpu_ns"] = (time.process_time_ns() - self._cpu0) if self._running else self._cpu_ns
        s["warnings"] = []
        s["rig_source_pattern_errors"] = s["pattern_errors"]
        s["pattern_errors"] = self.check.pattern_errors()
        s["dropped_samples"] = self.check.missing_samples()
        s["flowgraph_samples"] = self.check.samples()
        s["flowgraph_gaps"] = self.check.gaps()
        return s
