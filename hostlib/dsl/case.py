"""The resolved case: one run (a case, or one point of its sweep), all units in SI."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hostlib.dsl.thresholds import Threshold

__all__ = ["BYTES_PER_SAMPLE", "FRAME_HEADER_BYTES", "LEGS", "Case", "SearchSpec", "TransportSpec"]

# Fixed by docs/frame-format.md; repeated here so that validation needs no native build.
FRAME_HEADER_BYTES = 48
BYTES_PER_SAMPLE = {"sc16": 4, "sc8": 2}


@dataclass(frozen=True)
class TransportSpec:
    """kind 'udp' or 'shm'; frame_bytes is the whole frame including the 48-byte header.

    options: udp -> {"host": str, "port": int, "socket_buffer_bytes": int}
             shm -> {"slots": int}
    """

    kind: str
    frame_bytes: int
    options: dict[str, Any] = field(default_factory=dict)


# The streams a direction runs, each with its own counters: rx+tx runs RX and TX at once.
LEGS = {"rx": ("rx",), "tx": ("tx",), "loopback": ("loopback",), "rx+tx": ("rx", "tx")}


@dataclass(frozen=True)
class SearchSpec:
    """A rate search: `key` (decimation | interpolation) over `values`, ordered from the
    lowest rate to the highest; each candidate runs `step_s`, the best is confirmed over
    the case's duration (hostlib.engine.search)."""

    key: str
    values: tuple[int, ...]
    step_s: float


@dataclass(frozen=True)
class Case:
    name: str
    test_name: str
    source_file: str
    source_line: int
    device: str
    direction: str                    # "rx" | "tx" | "loopback"
    channels: int
    sample_format: str                # "sc16" | "sc8"
    master_clock_hz: float
    decimation: int | None
    interpolation: int | None
    rate_sps: float
    transport: TransportSpec
    duration_s: float
    warmup_s: float
    pattern: str
    thresholds: tuple[Threshold, ...]
    tags: tuple[str, ...]
    timeout_s: float
    faults: dict[str, int]
    sweep_point: dict[str, object]
    raw: dict[str, Any]
    fifo_frames: int | None = None    # simulator device FIFO depth; None = the rig's/simulator's default
    # What the case needs from the device (hostlib.rig.requires): keys channels (int),
    # directions (tuple), rate_sps (float), transports (tuple); empty = nothing extra.
    requires: dict[str, Any] = field(default_factory=dict)
    stream_args: dict[str, Any] = field(default_factory=dict)     # driver stream args (UHD spp, Soapy WIRE ...)
    transport_args: dict[str, Any] = field(default_factory=dict)  # radio transport args (num_recv_frames ...)
    host: str = "native"              # host side: "native" (RxStream) | "gnuradio" (a flowgraph, docs/gnuradio.md)
    flowgraph: str | None = None      # host: gnuradio: the lab's chain (absolute .grc/.py path[:Class])
    expect_error: str | None = None   # the run must end ERROR of this kind (a negative case); None = a normal case
    search: SearchSpec | None = None  # a rate search case (hostlib.engine.search); None = one run at rate_sps

    @property
    def legs(self) -> tuple[str, ...]:
        """The streams this case runs: ("rx", "tx") for rx+tx, else its direction alone."""
        return LEGS[self.direction]

    @property
    def bytes_per_sample(self) -> int:
        """Bytes of one sample of one channel."""
        return BYTES_PER_SAMPLE[self.sample_format]

    @property
    def payload_bytes(self) -> int:
        return self.transport.frame_bytes - FRAME_HEADER_BYTES

    @property
    def samples_per_frame(self) -> int:
        """Per-channel samples (ticks) in one frame."""
        return self.payload_bytes // (self.bytes_per_sample * self.channels)

    @property
    def location(self) -> str:
        return f"{self.source_file}:{self.source_line}"

    def threshold_params(self) -> dict[str, float]:
        """The values a threshold's "<pct>% of <param>" refers to (hostlib.dsl.thresholds.PARAMS)."""
        return {
            "rate": self.rate_sps,
            "master_clock": self.master_clock_hz,
            "duration": self.duration_s,
            "channels": float(self.channels),
            "frame_bytes": float(self.transport.frame_bytes),
            "samples_per_frame": float(self.samples_per_frame),
        }
