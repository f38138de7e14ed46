"""hilrig-link, the user-space link emulator (hostlib/native/link): one process carries
both directions of one link between two network namespaces through TUN devices, and
answers JSON lines like the simulator (hello, configure, start, stats, stop, quit). Its
failures are the rig's own: LinkError, naming hilrig-link.
"""
from __future__ import annotations

from typing import TypedDict, cast

from .._exceptions import LinkError
from .._installed import find_executable
from .._process import ControlledProcess
from .spec import LinkSide, LinkSpec

__all__ = ["DirectionStats", "Histogram", "LinkEmulator", "LinkStats", "find_link_binary"]

CONTROL_TIMEOUT_S = 10.0


class Histogram(TypedDict):
    """A LatencyHistogram of the core, in ns (link_model.cpp histogram_json)."""
    count: int
    p50: int
    p90: int
    p99: int
    p999: int
    max: int


class DirectionStats(TypedDict, total=False):
    """One direction's report (link_model.cpp to_json(LinkStats), link_pump.cpp)."""
    packets_in: int
    bytes_in: int
    packets_out: int
    bytes_out: int
    dropped_queue: int
    dropped_queue_bytes: int
    dropped_loss: int
    duplicated: int
    reordered: int
    queue_bytes_max: int
    in_flight: int
    write_errors: int
    delay_ns: Histogram
    late_ns: Histogram
    read_wait_ns: Histogram      # coalesced reads: the first packet's wait, at most (link_pump.hpp)
    scheduling: str              # "fifo" (real-time) or "other": the pump thread's policy
    wake_gap_ns: int
    config: dict[str, float]
    error: str


class LinkStats(TypedDict, total=False):
    up: DirectionStats
    down: DirectionStats
    running_s: float


def find_link_binary() -> str:
    """$HILRIG_LINK_BIN, then the package's hostlib/bin/hilrig-link, then PATH."""
    path, why = find_executable("hilrig-link", "HILRIG_LINK_BIN")
    if path is None:
        raise LinkError(f"link emulator {why}; build it with `make build`")
    return path


class LinkEmulator(ControlledProcess):
    """One running hilrig-link."""

    def __init__(self, binary: str | None = None):
        super().__init__([binary or find_link_binary()], "link emulator hilrig-link", LinkError)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def request(self, cmd: str, **fields: object) -> dict[str, object]:
        return self._request(cmd, CONTROL_TIMEOUT_S, None, fields)

    def configure(self, spec: LinkSpec, a: tuple[str, str], b: tuple[str, str]) -> dict[str, object]:
        """a, b: (namespace, TUN device) of the device side and of the host side; up
        carries a -> b. Answers the effective config of both directions."""
        sides: tuple[LinkSide, LinkSide] = ("up", "down")
        answer = self.request("configure", a={"netns": a[0], "dev": a[1]}, b={"netns": b[0], "dev": b[1]},
                              **{side: spec.core_json(side) for side in sides})
        config = answer.get("config")
        return config if isinstance(config, dict) else {}

    def stats(self) -> LinkStats:
        return cast(LinkStats, self.request("stats").get("stats", {}))

    def stop(self) -> LinkStats:
        return cast(LinkStats, self.request("stop").get("stats", {}))
