"""The structural schema of one YAML case (pydantic v2). Semantic checks live in loader.py.

Unit-bearing fields are parsed by hostlib.units inside the model, so a wrong
unit is reported by the same machinery (and at the same line) as a wrong type.
"""
from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from hostlib.transports import stream_defaults
from hostlib.transports.config import UsbLink
from hostlib.units import UnitError, parse_quantity

__all__ = [
    "DEFAULT_CAPTURE_SAMPLES",
    "MAX_BUFFER_BYTES",
    "MAX_DIVIDER",
    "MAX_DURATION_S",
    "MAX_FAULTS",
    "MAX_FRAME_BYTES",
    "MAX_LINK_DELAY_S",
    "MAX_LINK_RATE_BPS",
    "MAX_MASTER_CLOCK_HZ",
    "MAX_PACING_RATE_BPS",
    "MAX_RATE_SPS",
    "MAX_SEED",
    "MAX_TIMEOUT_S",
    "MAX_WARMUP_S",
    "MIN_RATE_SPS",
    "SWEEP_KEYS",
    "BurstLossModel",
    "CaseModel",
    "ChannelModel",
    "DcModel",
    "FaultsModel",
    "IqImbalanceModel",
    "LinkDirectionModel",
    "LinkModel",
    "PacingModel",
    "SignalModel",
    "ToneModel",
    "TransportModel",
    "int_quantity",
    "quantity",
]

# Documented bounds (docs/dsl.md "Bounds"): far beyond any real device, and well inside
# what the native core's 64-bit counters and the float arithmetic of rates can carry,
# so an absurd value is refused at validation instead of running (or wrapping).
MAX_MASTER_CLOCK_HZ = 20e9        # fastest converters sold today run at a few GHz
MIN_RATE_SPS = 1e3                # master_clock / divider; slower streams need minutes per frame
MAX_RATE_SPS = 10e9               # 40 GB/s of sc16: beyond any host link
MAX_DIVIDER = 65536               # decimation / interpolation
MAX_DURATION_S = 24 * 3600.0      # a day; soaks longer than that are several cases
MAX_WARMUP_S = 3600.0
MAX_TIMEOUT_S = 48 * 3600.0
MAX_FRAME_BYTES = 64 * 1024**2    # a shm slot larger than this is a typo, not a test
MAX_BUFFER_BYTES = 1024**3        # socket and device buffers
MAX_FAULTS = 1_000_000            # per fault kind (the simulator's own bound)
MAX_SEED = 2**63 - 1              # the simulator takes a signed 64-bit seed
MAX_PACING_RATE_BPS = 1e12        # the core's bound on transport.pacing.rate_bps
MAX_LINK_RATE_BPS = 400e9         # link.rate: the fastest Ethernet sold (400 GbE)
MAX_LINK_DELAY_S = 10.0           # link.delay, link.jitter: a geostationary hop is 0.27 s


def quantity(dimension: str, *, require_unit: bool = False, minimum: float | None = None,
             exclusive: bool = False, what: str = "", maximum: float | None = None) -> BeforeValidator:
    """A float field written with units of `dimension`, with optional bounds."""

    def parse(value: object) -> float:
        number = parse_quantity(value, dimension, require_unit=require_unit)
        if minimum is not None and (number < minimum or (exclusive and number == minimum)):
            rel = "greater than" if exclusive else "at least"
            raise UnitError(f"{value!r} must be {rel} {minimum:g}{what}")
        if maximum is not None and number > maximum:
            raise UnitError(f"{value!r} is {number:g}{what}; at most {maximum:g}{what} is allowed")
        return number

    return BeforeValidator(parse)


def int_quantity(dimension: str, *, minimum: int | None = None, maximum: int | None = None) -> BeforeValidator:
    """An integer field that may carry a unit ('8 KiB' for bytes)."""

    def parse(value: object) -> int:
        if isinstance(value, float) and not value.is_integer():
            raise UnitError(f"{value!r} must be a whole number")
        number = parse_quantity(value, dimension)
        if not float(number).is_integer():
            raise UnitError(f"{value!r} is {number:g}, not a whole number")
        n = int(number)
        if minimum is not None and n < minimum:
            raise UnitError(f"{value!r} must be at least {minimum}")
        if maximum is not None and n > maximum:
            raise UnitError(f"{value!r} must be at most {maximum}")
        return n

    return BeforeValidator(parse)


_Strict = ConfigDict(extra="forbid", strict=False, str_strip_whitespace=True)
NonEmpty = Annotated[str, StringConstraints(min_length=1, strip_whitespace=True), Field(strict=True)]
# Strict ints: YAML `true` or "4" for a count is a mistake worth reporting.
Count1 = Annotated[int, Field(strict=True, ge=1, le=1_000_000)]
Count0 = Annotated[int, Field(strict=True, ge=0, le=MAX_FAULTS)]
Divider = Annotated[int, Field(strict=True, ge=1, le=MAX_DIVIDER)]


class PacingModel(BaseModel):
    """udp send pacing (docs/dsl.md "pacing"): one of gap, period, rate; semantics.py
    refuses two at once at the second one's line."""
    model_config = _Strict
    gap: Annotated[float, quantity("time", require_unit=True, minimum=1e-9, maximum=1.0)] | None = None
    period: Annotated[float, quantity("time", require_unit=True, minimum=1e-9, maximum=1.0)] | None = None
    rate: Annotated[float, quantity("data_rate", require_unit=True, minimum=1 / 8, exclusive=False,
                                    maximum=MAX_PACING_RATE_BPS / 8)] | None = None

    def core_json(self) -> dict[str, int]:
        """The core's pacing keys (hilrig/config.hpp PacingSpec), every one of them."""
        return {"gap_ns": round((self.gap or 0) * 1e9), "period_ns": round((self.period or 0) * 1e9),
                "rate_bps": round((self.rate or 0) * 8)}


class TransportModel(BaseModel):
    model_config = _Strict
    kind: Literal["udp", "tcp", "shm", "usb"]
    frame_bytes: Annotated[int, int_quantity("size", minimum=1, maximum=MAX_FRAME_BYTES)] = Field(
        default_factory=lambda: stream_defaults()["frame_bytes"])   # the core's default
    # udp knobs (host, port and socket_buffer are tcp's too)
    host: NonEmpty | None = None
    port: Annotated[int, Field(strict=True, ge=0, le=65535)] | None = None
    socket_buffer: Annotated[int, int_quantity("size", minimum=1, maximum=MAX_BUFFER_BYTES)] | None = None
    gso: Annotated[bool, Field(strict=True)] | None = None        # UDP_SEGMENT send batches (default on)
    gro: Annotated[bool, Field(strict=True)] | None = None        # UDP_GRO coalesced receives (default on)
    busy_poll: Annotated[bool, Field(strict=True)] | None = None  # spin on the socket (default off)
    pacing: PacingModel | None = None                              # send one datagram at a time, paced
    # tcp knobs (docs/dsl.md "tcp"): bytes per send() call (default: one batch), the
    # sender's congestion control (default: the kernel's), TCP_NODELAY (default off)
    write_bytes: Annotated[int, int_quantity("size", minimum=1, maximum=MAX_BUFFER_BYTES)] | None = None
    congestion: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_]{1,15}$"), Field(strict=True)] | None = None
    nodelay: Annotated[bool, Field(strict=True)] | None = None
    # shm knobs
    slots: Annotated[int, Field(strict=True, ge=2, le=65536)] | None = None
    publish: NonEmpty | None = None   # the ring's publish strategy; the core's parser checks the name
    # usb knobs (docs/usb.md): bytes per bulk transfer, transfers in flight per direction,
    # or their product buffer_bytes; link: the simulator's bus model
    transfer_bytes: Annotated[int, int_quantity("size", minimum=1, maximum=64 * 1024**2)] | None = None
    transfers: Annotated[int, Field(strict=True, ge=1, le=4096)] | None = None
    buffer_bytes: Annotated[int, int_quantity("size", minimum=1)] | None = None
    link: UsbLink | None = None


class FaultsModel(BaseModel):
    """The core's fault keys (kFaultKeys, a test pins the two lists equal); a key left
    out takes the core's default when the case is resolved."""
    model_config = _Strict
    seed: Annotated[int, Field(strict=True, ge=0, le=MAX_SEED)] | None = None
    drop_frames: Count0 | None = None
    corrupt_samples: Count0 | None = None
    duplicate_frames: Count0 | None = None
    reorder_frames: Count0 | None = None
    stall_ms: Annotated[int, Field(strict=True, ge=0, le=60_000)] | None = None  # TX: the device stops consuming once
    window_frames: Annotated[int, Field(strict=True, ge=0, le=2**48)] | None = None  # faults on seq [16, this)
    die_after_ms: Annotated[int, Field(strict=True, ge=0, le=3_600_000)] | None = None  # the simulator dies mid-run

    def given(self) -> dict[str, int]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


Probability = Annotated[float, quantity("ratio", minimum=0, maximum=1)]


class BurstLossModel(BaseModel):
    """link.burst_loss: a Gilbert-Elliott chain (docs/long-link.md): per packet the
    state moves good -> bad with p and bad -> good with r (mean burst 1/r packets);
    a packet is lost with loss_bad in the bad state, loss_good in the good one."""
    model_config = _Strict
    p: Probability
    r: Annotated[float, quantity("ratio", minimum=0, exclusive=True, maximum=1)]
    loss_bad: Probability = 1.0
    loss_good: Probability = 0.0


class LinkDirectionModel(BaseModel):
    """One direction of `link:` (or both, at its top level): what the emulated network
    does to each packet (docs/long-link.md)."""
    model_config = _Strict
    rate: Annotated[float, quantity("data_rate", require_unit=True, minimum=0, exclusive=True,
                                    maximum=MAX_LINK_RATE_BPS / 8)] | None = None
    delay: Annotated[float, quantity("time", require_unit=True, minimum=0, what=" s",
                                     maximum=MAX_LINK_DELAY_S)] | None = None
    jitter: Annotated[float, quantity("time", require_unit=True, minimum=0, what=" s",
                                      maximum=MAX_LINK_DELAY_S)] | None = None
    queue: Annotated[int, int_quantity("size", minimum=1, maximum=MAX_BUFFER_BYTES)] | None = None
    loss: Probability | None = None
    burst_loss: BurstLossModel | None = None
    reorder: Probability | None = None
    duplicate: Probability | None = None


class LinkModel(LinkDirectionModel):
    """`link:` the network between the device and the host. The keys at its top level
    apply to both directions; `up:` (device -> host) and `down:` (host -> device)
    override them for one direction."""
    seed: Annotated[int, Field(strict=True, ge=0, le=MAX_SEED - 1)] | None = None
    up: LinkDirectionModel | None = None
    down: LinkDirectionModel | None = None


# RF cases (docs/dsl.md "RF signal and channel"; docs/rf.md): bounds the core's parser
# holds too (rf::signal_from_json), here so that they are reported at the field's line.
DEFAULT_CAPTURE_SAMPLES = 65536
MAX_CAPTURE_SAMPLES = 1 << 24
MAX_TONES = 16


def _amplitude(value: object) -> float:
    """A tone's amplitude: a fraction of full scale (0.5) or a level ("-6 dBFS")."""
    if isinstance(value, str) and value.strip().endswith("dBFS"):
        level = parse_quantity(value, "dbfs")
        if level > 0:
            raise UnitError(f"{value!r} is above full scale; at most 0 dBFS is allowed")
        return float(10 ** (level / 20))
    try:
        number = parse_quantity(value, "count")
    except UnitError as e:
        raise UnitError(f"{e}; an amplitude is a fraction of full scale (0.5) or a level such as '-6 dBFS'") from None
    if not 0 < number <= 1:
        raise UnitError(f"{value!r} must be a fraction of full scale in (0, 1], or a level such as '-6 dBFS'")
    return number


Amplitude = Annotated[float, BeforeValidator(_amplitude)]
Frequency = Annotated[float, quantity("frequency", require_unit=True, what=" Hz")]


class ToneModel(BaseModel):
    """One tone of `signal: {kind: multitone, tones: [...]}`."""
    model_config = _Strict
    frequency: Frequency
    amplitude: Amplitude = 0.5


MODULATIONS = ("qpsk", "16qam", "64qam")


class SignalModel(BaseModel):
    """`signal:` what an RF case's device sends in place of the counter pattern: `tone`
    (frequency, amplitude), `multitone` (tones), or a modulation `qpsk`, `16qam`, `64qam`
    (symbol_rate, rolloff, amplitude as RMS, payload_seed); `capture`: how many
    consecutive samples of the window the host analyzes."""
    model_config = _Strict
    kind: Literal["tone", "multitone", "qpsk", "16qam", "64qam"]
    frequency: Frequency | None = None          # tone
    amplitude: Amplitude | None = None          # tone (default 0.5: -6 dBFS); a modulation's RMS (default 0.25)
    tones: Annotated[list[ToneModel], Field(min_length=1, max_length=MAX_TONES)] | None = None  # multitone
    symbol_rate: Frequency | None = None        # a modulation: rate / symbol_rate samples per symbol, an integer >= 2
    rolloff: Annotated[float, quantity("count", minimum=0.05, maximum=1)] | None = None   # a modulation's RRC (0.35)
    payload_seed: Annotated[int, Field(strict=True, ge=0, le=MAX_SEED)] | None = None   # a modulation's PRBS-23 (1)
    capture: Annotated[int, int_quantity("count", minimum=64, maximum=MAX_CAPTURE_SAMPLES)] = DEFAULT_CAPTURE_SAMPLES


class IqImbalanceModel(BaseModel):
    """The receiver's IQ imbalance: the Q rail's gain relative to I and its skew from 90 degrees."""
    model_config = _Strict
    gain: Annotated[float, quantity("db", minimum=-20, maximum=20, what=" dB")] = 0.0
    phase: Annotated[float, quantity("angle", minimum=-45, maximum=45, what=" deg")] = 0.0


class DcModel(BaseModel):
    """A DC offset, per rail, as a fraction of full scale."""
    model_config = _Strict
    i: Annotated[float, quantity("count", minimum=-1, maximum=1)] = 0.0
    q: Annotated[float, quantity("count", minimum=-1, maximum=1)] = 0.0


class PhaseNoiseModel(BaseModel):
    """The LO's phase noise: a Wiener (random-walk) phase of the given 3 dB (full) linewidth,
    L(f) = linewidth / (2 pi f^2) (docs/rf.md "Phase noise"); or the same walk given by a
    point of its L(f), as a datasheet states phase noise: `level` at `offset` (rf.py
    refuses both forms at once, or half of the second)."""
    model_config = _Strict
    linewidth: Annotated[float, quantity("frequency", require_unit=True, minimum=0, what=" Hz")] | None = None
    level: Annotated[float, quantity("dbc_per_hz", require_unit=True, minimum=-250, maximum=0,
                                     what=" dBc/Hz")] | None = None
    offset: Annotated[float, quantity("frequency", require_unit=True, minimum=0, exclusive=True,
                                      what=" Hz")] | None = None

    @property
    def linewidth_hz(self) -> float:
        """The Wiener phase's 3 dB linewidth: as given, or 2 pi offset^2 10^(level/10)."""
        if self.linewidth is not None:
            return self.linewidth
        if self.level is None or self.offset is None:
            return 0.0
        return 2 * math.pi * self.offset**2 * 10 ** (self.level / 10)


class ChannelModel(BaseModel):
    """`channel:` the simulator's seeded channel, applied at stream rate in the order
    sco and delay (the receiver's sampling instants), phase_noise, gain, cfo, cubic,
    iq_imbalance, dc, noise (docs/rf.md "The channel")."""
    model_config = _Strict
    gain: Annotated[float, quantity("db", minimum=-200, maximum=60, what=" dB")] = 0.0
    snr: Annotated[float, quantity("db", minimum=-50, maximum=300, what=" dB")] | None = None  # None: no noise
    cfo: Annotated[float, quantity("frequency", require_unit=True, what=" Hz")] = 0.0
    iq_imbalance: IqImbalanceModel | None = None
    dc: DcModel | None = None
    cubic: Annotated[float, quantity("count", minimum=-10, maximum=10)] = 0.0   # per-rail c3: I + c3*I^3
    # The receiver's sample clock fast by sco (a tone at f reads f / (1 + sco)), read late by delay.
    sco: Annotated[float, quantity("ppm", require_unit=True, minimum=-1000, maximum=1000, what=" ppm")] = 0.0
    delay: Annotated[float, quantity("samples", require_unit=True, minimum=0, maximum=1000, what=" samples")] = 0.0
    phase_noise: PhaseNoiseModel | None = None
    seed: Annotated[int, Field(strict=True, ge=0, le=MAX_SEED)] = 1


def _scalar(value: object) -> object:
    if value is None or isinstance(value, (dict, list)):
        raise ValueError(f"must be a number, text or true/false, not {_yaml_kind(value)}")
    return value


def _yaml_kind(value: object) -> str:
    return "empty" if value is None else "a mapping" if isinstance(value, dict) else "a list"


# A device or stream arg: one plain value (reported once when it is not).
ArgValue = Annotated[str | int | float | bool, BeforeValidator(_scalar)]
# `direction: rx` and `direction: [rx, tx]` both mean a list.
_one_or_list = BeforeValidator(lambda v: [v] if isinstance(v, str) else v)


class RequiresModel(BaseModel):
    """What a case needs from the device beyond what it streams (docs/dsl.md); the
    runner SKIPs with the reason when the rig's device cannot give it."""
    model_config = _Strict
    channels: Count1 | None = None
    direction: Annotated[list[Literal["rx", "tx", "loopback", "rx+tx"]], _one_or_list] | None = None
    rate: Annotated[float, quantity("rate", minimum=0, exclusive=True, maximum=MAX_RATE_SPS)] | None = None
    transport: Annotated[list[Literal["udp", "tcp", "shm", "usb", "pcie"]], _one_or_list] | None = None


class TransportArgsModel(BaseModel):
    """Device transport args for real radios (UHD: multi_usrp::make args); keys beyond
    these pass through to the radio's library, each one plain value."""
    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)
    __pydantic_extra__: dict[str, ArgValue] = Field(init=False)
    num_recv_frames: Count1 | None = None
    num_send_frames: Count1 | None = None
    recv_frame_size: Annotated[int, int_quantity("size", minimum=1, maximum=MAX_BUFFER_BYTES)] | None = None
    send_frame_size: Annotated[int, int_quantity("size", minimum=1, maximum=MAX_BUFFER_BYTES)] | None = None
    recv_buff_size: Annotated[int, int_quantity("size", minimum=1, maximum=MAX_BUFFER_BYTES)] | None = None
    send_buff_size: Annotated[int, int_quantity("size", minimum=1, maximum=MAX_BUFFER_BYTES)] | None = None


class SearchRangeModel(BaseModel):
    """`{from: 16, to: 6}`: every divider between the two, both included."""
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    start: Divider = Field(alias="from")
    end: Divider = Field(alias="to")


class SearchModel(BaseModel):
    """`search:` a rate search (docs/dsl.md "Rate search"): the divider's candidates,
    each tried for `step` (the case's thresholds as the pass rule), the best confirmed
    over the case's duration."""
    model_config = _Strict
    decimation: list[Divider] | SearchRangeModel | None = None
    interpolation: list[Divider] | SearchRangeModel | None = None
    step: Annotated[float, quantity("time", minimum=0, exclusive=True, what=" s", maximum=MAX_DURATION_S)] = 0.5


class CaseModel(BaseModel):
    model_config = _Strict
    name: NonEmpty
    description: str | None = None
    device: NonEmpty
    direction: Literal["rx", "tx", "loopback", "rx+tx"]
    channels: Annotated[int, Field(strict=True, ge=1, le=255)] = 1
    format: Literal["sc16", "sc8"] = "sc16"
    master_clock: Annotated[float, quantity("frequency", require_unit=True, minimum=0, exclusive=True,
                                            maximum=MAX_MASTER_CLOCK_HZ, what=" Hz")]
    decimation: Divider | None = None
    interpolation: Divider | None = None
    transport: TransportModel
    duration: Annotated[float, quantity("time", minimum=0, exclusive=True, what=" s", maximum=MAX_DURATION_S)]
    warmup: Annotated[float, quantity("time", minimum=0, what=" s", maximum=MAX_WARMUP_S)] = 0.0
    pattern: Literal["counter"] = "counter"
    thresholds: dict[str, object] = Field(default_factory=dict)   # parsed by hostlib.dsl.thresholds
    tags: list[NonEmpty] = Field(default_factory=list)
    timeout: Annotated[float, quantity("time", minimum=0, exclusive=True, what=" s",
                                       maximum=MAX_TIMEOUT_S)] | None = None
    faults: FaultsModel = Field(default_factory=FaultsModel)
    fifo_frames: Annotated[int, Field(strict=True, ge=1, le=1_000_000)] | None = None
    requires: RequiresModel | None = None
    stream_args: dict[NonEmpty, ArgValue] = Field(default_factory=dict)
    transport_args: TransportArgsModel | None = None
    # The host side of the stream: the native receiver, or a GNU Radio flowgraph
    # (rig_source -> pattern_check, gr_blocks/) with the same metrics.
    host: Literal["native", "gnuradio"] = "native"
    # host: gnuradio with the lab's own chain between the source and pattern_check: a
    # .grc (hier block) or a .py (gr.hier_block2 subclass), relative to the case file.
    flowgraph: NonEmpty | None = None
    # A negative case: the run must end ERROR of this kind (e.g. `device` with
    # faults.die_after_ms: the rig must notice the device going); then it passes.
    expect_error: Literal["device", "infrastructure", "config"] | None = None
    # A rate search: the highest rate whose short steps meet the thresholds (docs/dsl.md).
    search: SearchModel | None = None
    # An emulated network between the device and the host (docs/long-link.md).
    link: LinkModel | None = None
    # An RF case (docs/rf.md): the device sends this signal through this channel in place
    # of the counter pattern; the host analyzes a capture of it (RF metrics).
    signal: SignalModel | None = None
    channel: ChannelModel | None = None


def _sweep_keys() -> list[str]:
    keys = []
    for name in CaseModel.model_fields:
        if name in ("name", "description", "thresholds", "tags", "transport", "faults",
                    "requires", "stream_args", "transport_args", "search", "link", "signal", "channel"):
            continue
        keys.append(name)
    keys += [f"transport.{k}" for k in TransportModel.model_fields] + ["transport.frame_size"]
    keys += [f"transport.pacing.{k}" for k in PacingModel.model_fields]
    keys += [f"faults.{k}" for k in FaultsModel.model_fields]
    keys += [f"link.{k}" for k in LinkModel.model_fields if k not in ("burst_loss", "up", "down")]
    keys += [f"link.{side}.{k}" for side in ("up", "down") for k in LinkDirectionModel.model_fields
             if k != "burst_loss"]
    keys += [f"signal.{k}" for k in SignalModel.model_fields if k not in ("kind", "tones")]
    keys += [f"channel.{k}" for k in ChannelModel.model_fields if k not in ("iq_imbalance", "dc", "phase_noise")]
    keys += [f"channel.iq_imbalance.{k}" for k in IqImbalanceModel.model_fields]
    keys += [f"channel.phase_noise.{k}" for k in PhaseNoiseModel.model_fields]
    keys += [f"channel.dc.{k}" for k in DcModel.model_fields]
    return keys


# Case fields a sweep may vary (dotted for nested ones).
SWEEP_KEYS: list[str] = _sweep_keys()
