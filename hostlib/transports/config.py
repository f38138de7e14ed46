"""The stream config as types: the core's JSON (hilrig/config.hpp `to_json`), field for field.

The loader resolves a case's partial config once through the core (defaults filled
for the transport and frame size, checked by the core's own parser, the socket buffer
and ring sized by rate) and the case carries the result as a `StreamConfig`; every
later consumer passes `to_json()` on unchanged and every stream opens with its values
as given. A test pins the field names to the keys of the core's JSON.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Required, TypedDict, TypeGuard

__all__ = [
    "FAULT_INJECTIONS",
    "Direction",
    "Faults",
    "Json",
    "JsonObject",
    "Pacing",
    "RfChannel",
    "RfModulation",
    "RfTone",
    "RingPublish",
    "SampleFormat",
    "ShmTransport",
    "Signal",
    "SimJson",
    "StreamConfig",
    "StreamJson",
    "TcpTransport",
    "Transport",
    "TransportJson",
    "TransportKind",
    "UdpTransport",
    "UsbLink",
    "UsbTransport",
    "transport_from_json",
]

Json = str | int | float | bool | None | list["Json"] | dict[str, "Json"]
JsonObject = dict[str, Json]

Direction = Literal["rx", "tx", "loopback", "rx+tx"]
SampleFormat = Literal["sc16", "sc8"]
DIRECTIONS: tuple[Direction, ...] = ("rx", "tx", "loopback", "rx+tx")
SAMPLE_FORMATS: tuple[SampleFormat, ...] = ("sc16", "sc8")


class TransportKind(StrEnum):
    UDP = "udp"
    SHM = "shm"
    USB = "usb"
    TCP = "tcp"


class RingPublish(StrEnum):
    """The shm ring's publish strategies (the core's RingPublish; a test pins the names)."""
    BATCHED = "batched"
    IMMEDIATE = "immediate"
    LAMPORT = "lamport"
    FLAG = "flag"
    ADAPTIVE = "adaptive"


class UsbLink(StrEnum):
    """The simulator's USB bus model."""
    USB2 = "usb2"
    USB3 = "usb3"


def _get(d: Mapping[str, object], key: str, where: str) -> object:
    if key not in d:
        raise ValueError(f"{where}.{key}: is missing")
    return d[key]


def _int(d: Mapping[str, object], key: str, where: str) -> int:
    v = _get(d, key, where)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{where}.{key}: must be a whole number, got {v!r}")
    return v


def _float(d: Mapping[str, object], key: str, where: str) -> float:
    v = _get(d, key, where)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{where}.{key}: must be a number, got {v!r}")
    return float(v)


def _bool(d: Mapping[str, object], key: str, where: str) -> bool:
    v = _get(d, key, where)
    if not isinstance(v, bool):
        raise ValueError(f"{where}.{key}: must be true or false, got {v!r}")
    return v


def _str(d: Mapping[str, object], key: str, where: str) -> str:
    v = _get(d, key, where)
    if not isinstance(v, str):
        raise ValueError(f"{where}.{key}: must be text, got {v!r}")
    return v


def _mapping(d: Mapping[str, object], key: str, where: str) -> Mapping[str, object]:
    v = _get(d, key, where)
    if not isinstance(v, Mapping):
        raise ValueError(f"{where}.{key}: must be an object")
    return v


def _is_direction(v: str) -> TypeGuard[Direction]:
    return v in DIRECTIONS


def _is_format(v: str) -> TypeGuard[SampleFormat]:
    return v in SAMPLE_FORMATS


class TransportJson(TypedDict, total=False):
    """The core's transport JSON: `kind` and the keys of that kind."""
    kind: Required[str]
    host: str
    port: int
    socket_buffer_bytes: int
    gso: bool
    gro: bool
    busy_poll: bool
    pacing: dict[str, int]
    write_bytes: int
    congestion: str
    nodelay: bool
    path: str
    slots: int
    publish: str
    link: str
    transfer_bytes: int
    transfers: int


class StreamJson(TypedDict):
    """The core's stream config JSON (`to_json(StreamConfig)`)."""
    direction: str
    channels: int
    sample_format: str
    rate_sps: float
    frame_bytes: int
    transport: TransportJson
    pattern: str
    signal: JsonObject | None
    stream_id: int
    crc: bool
    tx_lead_frames: int


class SimJson(StreamJson, total=False):
    """What the simulator's configure takes: the stream and the device's own keys
    (`to_json(SimConfig)`), and where to send RX when the host receiver is not the driver's."""
    master_clock_hz: Required[float]
    fifo_frames: Required[int]
    faults: Required[dict[str, int]]
    rx_dest: dict[str, object]   # the host receiver's endpoint (its own JSON)


@dataclass(frozen=True, kw_only=True)
class Pacing:
    """udp send pacing, the core's PacingSpec: at most one non-zero; all zero = unpaced."""
    gap_ns: int                     # idle time after each send returns
    period_ns: int                  # send start to send start
    rate_bps: int                   # datagram bits per second

    @property
    def active(self) -> bool:
        return bool(self.gap_ns or self.period_ns or self.rate_bps)

    def to_json(self) -> dict[str, int]:
        return {"gap_ns": self.gap_ns, "period_ns": self.period_ns, "rate_bps": self.rate_bps}

    @classmethod
    def from_json(cls, d: Mapping[str, object], where: str = "pacing") -> Pacing:
        return cls(gap_ns=_int(d, "gap_ns", where), period_ns=_int(d, "period_ns", where),
                   rate_bps=_int(d, "rate_bps", where))


@dataclass(frozen=True, kw_only=True)
class UdpTransport:
    kind: Literal[TransportKind.UDP] = TransportKind.UDP
    host: str
    port: int                       # 0: the receiver picks one (its endpoint says which)
    socket_buffer_bytes: int        # asked of the kernel; resolved: at least 50 ms of the rate
    gso: bool
    gro: bool
    busy_poll: bool
    pacing: Pacing                  # send: per datagram; resolved gso is off while pacing

    def to_json(self) -> TransportJson:
        return {"kind": self.kind.value, "host": self.host, "port": self.port,
                "socket_buffer_bytes": self.socket_buffer_bytes, "gso": self.gso, "gro": self.gro,
                "busy_poll": self.busy_poll, "pacing": self.pacing.to_json()}


@dataclass(frozen=True, kw_only=True)
class TcpTransport:
    """Frames back to back on one TCP connection: the receiver listens, the sender connects."""
    kind: Literal[TransportKind.TCP] = TransportKind.TCP
    host: str
    port: int                       # 0: the receiver picks one (its endpoint says which)
    socket_buffer_bytes: int        # SO_RCVBUF/SO_SNDBUF asked of the kernel (0: its autotuning)
    write_bytes: int                # send: bytes per send() call; 0 = one batch per call
    congestion: str                 # send: TCP_CONGESTION; empty = the kernel's default
    nodelay: bool                   # send: TCP_NODELAY

    def to_json(self) -> TransportJson:
        return {"kind": self.kind.value, "host": self.host, "port": self.port,
                "socket_buffer_bytes": self.socket_buffer_bytes, "write_bytes": self.write_bytes,
                "congestion": self.congestion, "nodelay": self.nodelay}


@dataclass(frozen=True, kw_only=True)
class ShmTransport:
    kind: Literal[TransportKind.SHM] = TransportKind.SHM
    path: str                       # empty: the receiver creates the ring
    slots: int                      # resolved: at least 50 ms of the rate
    publish: RingPublish            # how the ring publishes, both ends alike (docs/performance.md)

    def to_json(self) -> TransportJson:
        return {"kind": self.kind.value, "path": self.path, "slots": self.slots, "publish": self.publish.value}


@dataclass(frozen=True, kw_only=True)
class UsbTransport:
    kind: Literal[TransportKind.USB] = TransportKind.USB
    link: UsbLink
    transfer_bytes: int             # S: bytes per bulk transfer
    transfers: int                  # N: transfers in flight per direction

    def to_json(self) -> TransportJson:
        return {"kind": self.kind.value, "link": self.link.value, "transfer_bytes": self.transfer_bytes,
                "transfers": self.transfers}

    @property
    def buffer_bytes(self) -> int:
        """Bytes in flight per direction (the published tables' "buffer size")."""
        return self.transfer_bytes * self.transfers


Transport = UdpTransport | TcpTransport | ShmTransport | UsbTransport


def transport_from_json(d: Mapping[str, object], where: str = "transport") -> Transport:
    kind = TransportKind(_str(d, "kind", where))
    if kind is TransportKind.UDP:
        return UdpTransport(host=_str(d, "host", where), port=_int(d, "port", where),
                            socket_buffer_bytes=_int(d, "socket_buffer_bytes", where), gso=_bool(d, "gso", where),
                            gro=_bool(d, "gro", where), busy_poll=_bool(d, "busy_poll", where),
                            pacing=Pacing.from_json(_mapping(d, "pacing", where), f"{where}.pacing"))
    if kind is TransportKind.TCP:
        return TcpTransport(host=_str(d, "host", where), port=_int(d, "port", where),
                            socket_buffer_bytes=_int(d, "socket_buffer_bytes", where),
                            write_bytes=_int(d, "write_bytes", where), congestion=_str(d, "congestion", where),
                            nodelay=_bool(d, "nodelay", where))
    if kind is TransportKind.SHM:
        return ShmTransport(path=_str(d, "path", where), slots=_int(d, "slots", where),
                            publish=RingPublish(_str(d, "publish", where)))
    return UsbTransport(link=UsbLink(_str(d, "link", where)), transfer_bytes=_int(d, "transfer_bytes", where),
                        transfers=_int(d, "transfers", where))


@dataclass(frozen=True, kw_only=True)
class RfTone:
    """One tone of an RF signal (the core's rf::ToneSpec): amplitude of full scale 1.0."""
    frequency_hz: float
    amplitude: float
    phase_rad: float = 0.0

    def to_json(self) -> JsonObject:
        return {"frequency_hz": self.frequency_hz, "amplitude": self.amplitude, "phase_rad": self.phase_rad}


@dataclass(frozen=True, kw_only=True)
class RfChannel:
    """The simulator's seeded channel (the core's rf::Channel, docs/rf.md "The channel")."""
    gain_db: float = 0.0
    snr_db: float | None = None     # None: no noise
    cfo_hz: float = 0.0
    iq_gain_db: float = 0.0         # Q rail gain relative to I
    iq_phase_deg: float = 0.0       # Q rail skew from 90 degrees
    dc_i: float = 0.0
    dc_q: float = 0.0
    c3: float = 0.0                 # per-rail cubic coefficient
    seed: int = 1
    sco_ppm: float = 0.0            # the receiver's sample clock fast by this much
    delay_samples: float = 0.0      # read late by this many samples
    phase_noise_hz: float = 0.0     # the LO's 3 dB linewidth (a Wiener phase); 0: none

    def to_json(self) -> JsonObject:
        return {"gain_db": self.gain_db, "snr_db": self.snr_db, "cfo_hz": self.cfo_hz,
                "iq_gain_db": self.iq_gain_db, "iq_phase_deg": self.iq_phase_deg, "dc_i": self.dc_i,
                "dc_q": self.dc_q, "c3": self.c3, "seed": self.seed, "sco_ppm": self.sco_ppm,
                "delay_samples": self.delay_samples, "phase_noise_hz": self.phase_noise_hz}


@dataclass(frozen=True, kw_only=True)
class RfModulation:
    """A modulated signal (the core's rf::ModulationSpec, docs/rf.md "Modulated signals"):
    frames of a known preamble and a seeded PN payload, RRC-shaped, one after another."""
    scheme: str                     # "qpsk" | "16qam" | "64qam"
    samples_per_symbol: int
    rolloff: float
    amplitude: float                # RMS of the samples, full scale 1.0
    payload_seed: int

    def to_json(self) -> JsonObject:
        return {"scheme": self.scheme, "samples_per_symbol": self.samples_per_symbol, "rolloff": self.rolloff,
                "amplitude": self.amplitude, "payload_seed": self.payload_seed}

    @classmethod
    def from_json(cls, d: Mapping[str, object], where: str) -> RfModulation:
        return cls(scheme=_str(d, "scheme", where), samples_per_symbol=_int(d, "samples_per_symbol", where),
                   rolloff=_float(d, "rolloff", where), amplitude=_float(d, "amplitude", where),
                   payload_seed=_int(d, "payload_seed", where))


@dataclass(frozen=True, kw_only=True)
class Signal:
    """pattern "signal": what the device sends (tones, or a modulation, through the channel)
    and how many consecutive samples of channel 0 the host keeps for analysis."""
    tones: tuple[RfTone, ...]       # empty with a modulation
    channel: RfChannel
    capture_samples: int
    modulation: RfModulation | None = None

    def to_json(self) -> JsonObject:
        return {"tones": [t.to_json() for t in self.tones],
                "modulation": None if self.modulation is None else self.modulation.to_json(),
                "channel": self.channel.to_json(), "capture_samples": self.capture_samples}

    @classmethod
    def from_json(cls, d: Mapping[str, object], where: str = "signal") -> Signal:
        tones = _get(d, "tones", where)
        if not isinstance(tones, list):
            raise ValueError(f"{where}.tones: must be a list")
        c = _mapping(d, "channel", where)
        cw = f"{where}.channel"
        snr = _get(c, "snr_db", cw)
        modulation = _get(d, "modulation", where)
        if modulation is not None and not isinstance(modulation, Mapping):
            raise ValueError(f"{where}.modulation: must be an object or null")
        return cls(
            modulation=None if modulation is None else RfModulation.from_json(modulation, f"{where}.modulation"),
            tones=tuple(RfTone(frequency_hz=_float(t, "frequency_hz", f"{where}.tones"),
                               amplitude=_float(t, "amplitude", f"{where}.tones"),
                               phase_rad=_float(t, "phase_rad", f"{where}.tones")) for t in tones),
            channel=RfChannel(gain_db=_float(c, "gain_db", cw), snr_db=None if snr is None else _float(c, "snr_db", cw),
                              cfo_hz=_float(c, "cfo_hz", cw), iq_gain_db=_float(c, "iq_gain_db", cw),
                              iq_phase_deg=_float(c, "iq_phase_deg", cw), dc_i=_float(c, "dc_i", cw),
                              dc_q=_float(c, "dc_q", cw), c3=_float(c, "c3", cw), seed=_int(c, "seed", cw),
                              # absent in older configs: 0 (no timing, no phase noise)
                              sco_ppm=_float(c, "sco_ppm", cw) if "sco_ppm" in c else 0.0,
                              delay_samples=_float(c, "delay_samples", cw) if "delay_samples" in c else 0.0,
                              phase_noise_hz=_float(c, "phase_noise_hz", cw) if "phase_noise_hz" in c else 0.0),
            capture_samples=_int(d, "capture_samples", where))


@dataclass(frozen=True, kw_only=True)
class StreamConfig:
    """One stream as the core runs it (docs/architecture.md "Stream config")."""
    direction: Direction
    channels: int
    sample_format: SampleFormat
    rate_sps: float
    frame_bytes: int                # the whole frame, the 48-byte header included
    transport: Transport
    pattern: str                    # "counter" | "signal" (the payload is `signal`)
    signal: Signal | None           # pattern "signal" only
    stream_id: int
    crc: bool
    tx_lead_frames: int             # TX: frames sent ahead of the rate clock; 0 = automatic

    def to_json(self) -> StreamJson:
        return {"direction": self.direction, "channels": self.channels, "sample_format": self.sample_format,
                "rate_sps": self.rate_sps, "frame_bytes": self.frame_bytes, "transport": self.transport.to_json(),
                "pattern": self.pattern, "signal": None if self.signal is None else self.signal.to_json(),
                "stream_id": self.stream_id, "crc": self.crc, "tx_lead_frames": self.tx_lead_frames}

    @classmethod
    def from_json(cls, d: Mapping[str, object], where: str = "stream config") -> StreamConfig:
        direction, fmt = _str(d, "direction", where), _str(d, "sample_format", where)
        if not _is_direction(direction):
            raise ValueError(f"{where}.direction: must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
        if not _is_format(fmt):
            raise ValueError(f"{where}.sample_format: must be one of {', '.join(SAMPLE_FORMATS)}, got {fmt!r}")
        transport = _mapping(d, "transport", where)
        return cls(direction=direction, channels=_int(d, "channels", where), sample_format=fmt,
                   rate_sps=_float(d, "rate_sps", where), frame_bytes=_int(d, "frame_bytes", where),
                   transport=transport_from_json(transport, f"{where}.transport"), pattern=_str(d, "pattern", where),
                   signal=None if _get(d, "signal", where) is None else Signal.from_json(
                       _mapping(d, "signal", where), f"{where}.signal"),
                   stream_id=_int(d, "stream_id", where), crc=_bool(d, "crc", where),
                   tx_lead_frames=_int(d, "tx_lead_frames", where))


# Fault kinds that put something wrong on the stream (the rest place or time them).
FAULT_INJECTIONS = ("drop_frames", "corrupt_samples", "duplicate_frames", "reorder_frames", "stall_ms")


@dataclass(frozen=True, kw_only=True)
class Faults:
    """The simulator's seeded faults (the core's FaultSpec, every key of kFaultKeys)."""
    seed: int
    drop_frames: int
    corrupt_samples: int
    duplicate_frames: int
    reorder_frames: int
    stall_ms: int                   # TX/loopback: the device stops consuming once for this long
    window_frames: int              # faults sit on seq [16, window_frames); 0 = compact placement
    die_after_ms: int               # the simulator kills itself this long after start; 0 = never

    def to_json(self) -> dict[str, int]:
        return {f.name: int(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_json(cls, d: Mapping[str, object], where: str = "faults") -> Faults:
        return cls(**{f.name: _int(d, f.name, where) for f in dataclasses.fields(cls)})

    def injected(self) -> tuple[str, ...]:
        """The fault kinds this run puts on its stream."""
        return tuple(k for k in FAULT_INJECTIONS if getattr(self, k))
