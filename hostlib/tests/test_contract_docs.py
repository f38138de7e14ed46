"""docs/architecture.md is the contract between the parts: every key the native
streams and the simulator report must be written down there (docs lag code, not
the other way round)."""
from __future__ import annotations

from hostlib.transports import complete_config

import re

from hostlib.drivers.sim import SimProcess
from hostlib.transports import native

from .conftest import REPO, requires_native

DOC = (REPO / "docs" / "architecture.md").read_text()
# Keys count as documented only where the contract writes them as code (`key` or a
# fenced block), not as any word of the prose.
DOC_CODE = " ".join(re.findall(r"```.*?```|`[^`]+`", DOC, re.S))
DOCUMENTED = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", DOC_CODE))

RX_CONFIG = {"direction": "rx", "channels": 1, "sample_format": "sc16", "rate_sps": 1e6, "frame_bytes": 8048,
             "transport": {"kind": "udp", "host": "127.0.0.1", "port": 0}, "pattern": "counter"}


def undocumented(keys) -> list[str]:
    return sorted(k for k in keys if k not in DOCUMENTED)


@requires_native
def test_host_stream_stats_keys_are_documented():
    rx = native().RxStream(complete_config(RX_CONFIG))
    try:
        assert undocumented(rx.stats()) == []
        assert undocumented(rx.endpoint()) == []
    finally:
        rx.stop()


@requires_native
def test_simulator_stats_keys_are_documented():
    sim = SimProcess()
    try:
        rx = native().RxStream(complete_config(RX_CONFIG))
        try:
            answer = sim.request("configure", fields=complete_config({**RX_CONFIG, "rx_dest": rx.endpoint(), "fifo_frames": 16},
                                                                sim=True))
            stats = sim.request("stats")["stats"]
        finally:
            rx.stop()
        assert "frames_sent" in stats
        assert undocumented(stats) == []
        assert undocumented(sim.request("hello")) == []
        assert undocumented(answer) == [] and undocumented(answer["config"]) == []
        assert undocumented(answer["fault_plan"]) == [] and undocumented(answer["config"]["faults"]) == []
    finally:
        sim.close()
