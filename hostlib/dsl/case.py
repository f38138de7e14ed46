"""The resolved case: one run (a case, or one point of its sweep), all units in SI."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from hostlib.dsl.thresholds import Threshold
from hostlib.dsl.yamlsrc import YamlValue
from hostlib.link.spec import LinkSpec
from hostlib.transports.config import Direction, Faults, SampleFormat, Signal, StreamConfig, Transport

__all__ = [
    "BYTES_PER_SAMPLE",
    "DEFAULT_TIMEOUT_MARGIN_S",
    "FRAME_HEADER_BYTES",
    "LEGS",
    "Case",
    "Host",
    "Requirements",
    "Scalar",
    "SearchSpec",
    "SweepValue",
    "YamlValue",
    "default_timeout_s",
]

# Fixed by docs/frame-format.md; repeated here so that validation needs no native build.
FRAME_HEADER_BYTES = 48
BYTES_PER_SAMPLE: Mapping[SampleFormat, int] = {"sc16": 4, "sc8": 2}

Scalar = str | int | float | bool
SweepValue = Scalar | None
Host = Literal["native", "gnuradio"]
ExpectedError = Literal["device", "infrastructure", "config"]
TransportName = Literal["udp", "tcp", "shm", "usb", "pcie"]

DEFAULT_TIMEOUT_MARGIN_S = 30.0


def default_timeout_s(duration_s: float, warmup_s: float) -> float:
    """The timeout of a run that names none: its warm-up and duration plus a margin
    for opening, stopping and draining."""
    return duration_s + warmup_s + DEFAULT_TIMEOUT_MARGIN_S


# The streams a direction runs, each with its own counters: rx+tx runs RX and TX at once.
LEGS: Mapping[Direction, tuple[Direction, ...]] = {
    "rx": ("rx",), "tx": ("tx",), "loopback": ("loopback",), "rx+tx": ("rx", "tx")}


@dataclass(frozen=True)
class SearchSpec:
    """A rate search: `key` (decimation | interpolation) over `values`, ordered from the
    lowest rate to the highest; each candidate runs `step_s`, the best is confirmed over
    the case's duration (hostlib.engine.search)."""

    key: Literal["decimation", "interpolation"]
    values: tuple[int, ...]
    step_s: float


@dataclass(frozen=True)
class Requirements:
    """What a case needs from the device beyond what it streams (`requires:`, checked
    by hostlib.rig.requires); each None or empty asks nothing."""

    channels: int | None = None
    directions: tuple[Direction, ...] = ()
    rate_sps: float | None = None
    transports: tuple[TransportName, ...] = ()


@dataclass(frozen=True)
class Case:
    name: str
    test_name: str
    source_file: str
    source_line: int
    device: str
    direction: Direction
    channels: int
    sample_format: SampleFormat
    master_clock_hz: float
    decimation: int | None
    interpolation: int | None
    rate_sps: float
    # The effective stream config, resolved by the core when the case was loaded.
    # Invariant: its direction, channels, sample_format and rate_sps are the case's
    # (a leg or a search step made with dataclasses.replace carries its own).
    stream: StreamConfig
    duration_s: float
    warmup_s: float
    thresholds: tuple[Threshold, ...]
    tags: tuple[str, ...]
    timeout_s: float
    faults: Faults                    # every fault key, the core's defaults where the YAML gives none
    sweep_point: Mapping[str, SweepValue]
    raw: Mapping[str, YamlValue]      # the case's YAML as plain data, this sweep point applied
    fifo_frames: int | None = None    # simulator device FIFO depth; None = the rig's/simulator's default
    requires: Requirements = Requirements()
    stream_args: Mapping[str, Scalar] = field(default_factory=dict)     # driver stream args (UHD spp, Soapy WIRE ...)
    transport_args: Mapping[str, Scalar] = field(default_factory=dict)  # radio transport args (num_recv_frames ...)
    # The transport keys the YAML set itself: a radio keeps its own defaults for the rest.
    transport_given: tuple[str, ...] = ()
    host: Host = "native"             # "native" (RxStream) | "gnuradio" (a flowgraph, docs/gnuradio.md)
    flowgraph: str | None = None      # host: gnuradio: the lab's chain (absolute .grc/.py path[:Class])
    expect_error: ExpectedError | None = None  # the run must end ERROR of this kind; None = a normal case
    search: SearchSpec | None = None  # a rate search case (hostlib.engine.search); None = one run at rate_sps
    link: LinkSpec | None = None      # an emulated network between device and host (docs/long-link.md)

    def __post_init__(self) -> None:
        s = self.stream
        own = (self.direction, self.channels, self.sample_format, self.rate_sps)
        if (s.direction, s.channels, s.sample_format, s.rate_sps) != own:
            object.__setattr__(self, "stream", dataclasses.replace(
                s, direction=self.direction, channels=self.channels, sample_format=self.sample_format,
                rate_sps=self.rate_sps))

    @property
    def transport(self) -> Transport:
        """The stream's transport (kind and the core's keys for it)."""
        return self.stream.transport

    @property
    def frame_bytes(self) -> int:
        """The whole frame, the 48-byte header included."""
        return self.stream.frame_bytes

    @property
    def pattern(self) -> str:
        return self.stream.pattern

    @property
    def signal(self) -> Signal | None:
        """An RF case's signal (what the device sends, the channel, the capture); None otherwise."""
        return self.stream.signal

    @property
    def legs(self) -> tuple[Direction, ...]:
        """The streams this case runs: ("rx", "tx") for rx+tx, else its direction alone."""
        return LEGS[self.direction]

    @property
    def bytes_per_sample(self) -> int:
        """Bytes of one sample of one channel."""
        return BYTES_PER_SAMPLE[self.sample_format]

    @property
    def payload_bytes(self) -> int:
        return self.frame_bytes - FRAME_HEADER_BYTES

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
            "frame_bytes": float(self.frame_bytes),
            "samples_per_frame": float(self.samples_per_frame),
        }
