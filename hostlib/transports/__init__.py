"""The Python face of the native transports (UDP, TCP, shared-memory ring, USB link).

Everything that moves or checks samples is C++ (hostlib/native); this module loads
the native core with a clear error when it was not built, and is where a case's
partial stream config crosses into the core once: `resolve_stream` has the core
resolve it (its defaults for the transport and frame size, its parser's checks, the
socket buffer and ring grown to the rate) and the case carries the effective config
(`Case.stream`), which every stream opener uses as given. Every default is defined
once, in the core (hilrig/core/config.hpp); the configs passed on are complete,
because the core's parsers reject a missing key instead of defaulting it.
"""
from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import Protocol, TypedDict

from .._exceptions import InfrastructureError
from .config import (
    Faults,
    Json,
    JsonObject,
    ShmTransport,
    SimJson,
    StreamConfig,
    StreamJson,
    TcpTransport,
    TransportKind,
    UdpTransport,
)


def native():  # the native module is untyped: this is its one door
    """The native module hostlib._native, or InfrastructureError saying how to build it."""
    try:
        from .. import _native
    except ImportError as exc:
        raise InfrastructureError(f"native core hostlib._native is not built ({exc}); run `make build`") from exc
    return _native


class StreamDefaults(TypedDict):
    """The core's `stream_defaults()` (hilrig/config.hpp `defaults::`)."""
    frame_bytes: int
    udp_max_frame_bytes: int
    socket_buffer_bytes: int
    ring_bytes: int
    ring_min_slots: int
    ring_max_slots: int
    fifo_bytes: int
    fifo_min_frames: int
    rate_sps: float
    master_clock_hz: float
    host: str
    fault_keys: list[str]
    ring_publish: str               # shm: the ring's publish strategy by default
    ring_publish_names: list[str]   # shm: every strategy the core knows
    block_frames: int               # the receiver's blocks of sequence numbers (rx_check.hpp)


@functools.cache
def stream_defaults() -> StreamDefaults:
    """The core's defaults: frame_bytes, udp_max_frame_bytes, socket_buffer_bytes,
    ring_bytes (+ ring_min/max_slots), fifo_bytes (+ fifo_min_frames), rate_sps,
    master_clock_hz, host, fault_keys."""
    defaults: StreamDefaults = native().stream_defaults()
    return defaults


@functools.cache
def _default_sim_config(kind: str, frame_bytes: int) -> JsonObject:
    config: JsonObject = native().default_sim_config(kind, int(frame_bytes))
    return config


def default_sim_config(kind: str = "udp", frame_bytes: int | None = None) -> JsonObject:
    """A complete simulator config (stream config + master_clock_hz, fifo_frames,
    faults) with every default of the core for this transport and frame size."""
    fb = stream_defaults()["frame_bytes"] if frame_bytes is None else int(frame_bytes)
    return copy.deepcopy(_default_sim_config(kind, fb))


def _transport_default(kind: str, frame_bytes: int, key: str) -> int:
    transport = _default_sim_config(kind, int(frame_bytes))["transport"]
    assert isinstance(transport, dict)
    value = transport[key]
    assert isinstance(value, int)
    return value


def default_shm_slots(frame_bytes: int) -> int:
    """Slots of the default shm ring for this frame size (the core's ring_bytes worth)."""
    return _transport_default("shm", frame_bytes, "slots")


def default_usb_transfer_bytes() -> int:
    """S, bytes per USB bulk transfer, when the case gives none (the core's default)."""
    return _transport_default("usb", stream_defaults()["frame_bytes"], "transfer_bytes")


def default_fifo_frames(frame_bytes: int) -> int:
    """The simulator's default device FIFO depth in frames (the core's fifo_bytes worth)."""
    fifo = _default_sim_config("udp", int(frame_bytes))["fifo_frames"]
    assert isinstance(fifo, int)
    return fifo


_SIM_KEYS = ("master_clock_hz", "fifo_frames", "faults")


def complete_config(partial: Mapping[str, Json], *, sim: bool = False) -> JsonObject:
    """A partial config completed with the core's defaults, unchecked and not sized by
    rate (for the simulator's configure in tests and tools, and for configs meant to be
    refused; a stream's effective config is `resolve_stream`'s): the transport kind and
    frame_bytes pick the defaults; nested transport/faults dicts are merged key by key.
    sim=False gives the stream config only, sim=True adds the simulator's keys."""
    given_transport = partial.get("transport")
    kind = given_transport.get("kind", "udp") if isinstance(given_transport, dict) else "udp"
    frame_bytes = partial.get("frame_bytes")
    out = default_sim_config(str(kind), frame_bytes if isinstance(frame_bytes, int) else None)
    for key, value in partial.items():
        base = out.get(key)
        out[key] = {**base, **value} if isinstance(base, dict) and isinstance(value, dict) else value
    if not sim:
        for key in _SIM_KEYS:
            if key not in partial:
                out.pop(key)
    return out


def resolve_stream(partial: Mapping[str, Json]) -> StreamConfig:
    """The effective stream config of a partial one, resolved by the core
    (`resolve_stream_config`): its defaults for the transport and frame size, checked
    by its parser (ValueError naming the key), udp socket_buffer_bytes and (unless
    given) shm slots grown to the rate. The one place a stream is sized."""
    return StreamConfig.from_json(native().resolve_stream_config(dict(partial)))


def resolve_faults(given: Mapping[str, int]) -> Faults:
    """Every fault key: the given values over the core's defaults, checked by the core."""
    config = default_sim_config(TransportKind.UDP)
    defaults = config["faults"]
    assert isinstance(defaults, dict)
    checked = native().check_sim_config({**config, "faults": {**defaults, **given}})
    return Faults.from_json(checked["faults"])


class SimCase(Protocol):
    """What the simulator's configure takes from a case."""
    @property
    def stream(self) -> StreamConfig: ...
    @property
    def master_clock_hz(self) -> float: ...
    @property
    def fifo_frames(self) -> int | None: ...
    @property
    def faults(self) -> Faults: ...


class StreamCase(Protocol):
    @property
    def stream(self) -> StreamConfig: ...


def stream_config(case: StreamCase) -> StreamJson:
    """The native stream config of a case (docs/architecture.md "Stream config"):
    the effective config the case carries, shared by the host streams and the
    simulator's `configure`."""
    return case.stream.to_json()


def sim_config(case: SimCase, fifo_frames: int | None = None) -> SimJson:
    """stream_config(case) plus the simulator's keys: master_clock_hz, fifo_frames
    (the case's, else fifo_frames given (the rig's), else the core's default) and
    the case's faults."""
    fifo = case.fifo_frames or fifo_frames or default_fifo_frames(case.stream.frame_bytes)
    return {**stream_config(case), "master_clock_hz": float(case.master_clock_hz), "fifo_frames": int(fifo),
            "faults": case.faults.to_json()}


# Where a stream's link happens to be (a port, a ring path) is the endpoint, not config.
ENDPOINT_KEYS = ("host", "port", "path")


def config_differences(sent: Mapping[str, object], answer: Mapping[str, object], where: str = "") -> list[str]:
    """How the simulator's effective config (its answer to configure) differs from the
    config it was sent, endpoint keys aside: each as 'key: sent X, runs Y'."""
    out: list[str] = []
    for key in sorted(set(sent) | set(answer)):
        if key in ENDPOINT_KEYS or key == "rx_dest":
            continue
        a, b = sent.get(key), answer.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += config_differences(a, b, f"{where}{key}.")
        elif a != b:
            out.append(f"{where}{key}: sent {a!r}, runs {b!r}")
    return out


def endpoint_differences(stream: StreamConfig, endpoint: Mapping[str, object]) -> list[str]:
    """How a link opened from `stream` (a host receiver's endpoint, the simulator's TX
    endpoint) differs from it in the sizes resolution decided, as far as the endpoint
    reports them (udp socket_buffer_bytes, shm slots): each as 'transport.key: case X,
    opened Y'."""
    t = stream.transport
    sized = ({"socket_buffer_bytes": t.socket_buffer_bytes} if isinstance(t, (UdpTransport, TcpTransport))
             else {"slots": t.slots, "publish": t.publish.value} if isinstance(t, ShmTransport) else {})
    return [f"transport.{key}: case {value!r}, opened {endpoint[key]!r}"
            for key, value in sized.items() if key in endpoint and endpoint[key] != value]


def agreed_endpoint(stream: StreamConfig, endpoint: Mapping[str, object], who: str) -> None:
    """InfrastructureError naming every size in which `who`'s link differs from the case's
    config (a core built from other sources than this hostlib); the endpoint is only read."""
    differences = endpoint_differences(stream, endpoint)
    if differences:
        raise InfrastructureError(f"{who} opened another link than the case's config (rebuild the native core "
                                  "with this hostlib): " + "; ".join(differences))


def agreed_config(sent: Mapping[str, object], answer: dict[str, Json]) -> dict[str, Json]:
    """The simulator's answer to configure when it runs the config it was sent
    (endpoints aside); InfrastructureError naming every difference otherwise (a
    simulator built from other sources than this hostlib)."""
    differences = config_differences(sent, answer)
    if differences:
        raise InfrastructureError("the simulator runs another config than the case's (rebuild hilrig-sim with "
                                  "this hostlib): " + "; ".join(differences))
    return answer


__all__ = [
    "ENDPOINT_KEYS",
    "SimCase",
    "StreamCase",
    "StreamDefaults",
    "agreed_config",
    "agreed_endpoint",
    "complete_config",
    "config_differences",
    "default_fifo_frames",
    "default_shm_slots",
    "default_sim_config",
    "default_usb_transfer_bytes",
    "endpoint_differences",
    "native",
    "resolve_faults",
    "resolve_stream",
    "sim_config",
    "stream_config",
    "stream_defaults",
]
