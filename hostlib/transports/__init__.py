"""The Python face of the native transports (UDP, shared-memory ring).

Everything that moves or checks samples is C++ (hostlib/native); this module is
the one place that turns a resolved case into the native stream config and that
loads the native core with a clear error when it was not built. Every default of
the stream config is defined once, in the core (hilrig/core/config.hpp), and read
from there: the configs built here are complete, because the core's parsers
reject a missing key instead of defaulting it.
"""
from __future__ import annotations

import copy
import functools
from typing import Any

from .._exceptions import InfrastructureError


def native():
    """The native module hostlib._native, or InfrastructureError saying how to build it."""
    try:
        from .. import _native
    except ImportError as exc:
        raise InfrastructureError(f"native core hostlib._native is not built ({exc}); run `make build`") from exc
    return _native


@functools.cache
def stream_defaults() -> dict[str, Any]:
    """The core's defaults: frame_bytes, udp_max_frame_bytes, socket_buffer_bytes,
    ring_bytes (+ ring_min/max_slots), fifo_bytes (+ fifo_min_frames), rate_sps,
    master_clock_hz, host, fault_keys."""
    return dict(native().stream_defaults())


@functools.cache
def _default_sim_config(kind: str, frame_bytes: int) -> dict[str, Any]:
    return dict(native().default_sim_config(kind, int(frame_bytes)))


def default_sim_config(kind: str = "udp", frame_bytes: int | None = None) -> dict[str, Any]:
    """A complete simulator config (stream config + master_clock_hz, fifo_frames,
    faults) with every default of the core for this transport and frame size."""
    fb = stream_defaults()["frame_bytes"] if frame_bytes is None else int(frame_bytes)
    return copy.deepcopy(_default_sim_config(kind, fb))


def default_shm_slots(frame_bytes: int) -> int:
    """Slots of the default shm ring for this frame size (the core's ring_bytes worth)."""
    return int(_default_sim_config("shm", int(frame_bytes))["transport"]["slots"])


def default_fifo_frames(frame_bytes: int) -> int:
    """The simulator's default device FIFO depth in frames (the core's fifo_bytes worth)."""
    return int(_default_sim_config("udp", int(frame_bytes))["fifo_frames"])


def udp_defaults() -> dict[str, Any]:
    """The udp transport keys with their defaults: host, port, socket_buffer_bytes, gso, gro, busy_poll."""
    t = dict(_default_sim_config("udp", stream_defaults()["frame_bytes"])["transport"])
    t.pop("kind")
    return t


_STREAM_KEYS = ("direction", "channels", "sample_format", "rate_sps", "frame_bytes", "transport", "pattern",
                "stream_id", "crc", "tx_lead_frames")


def complete_config(partial: dict[str, Any], *, sim: bool = False) -> dict[str, Any]:
    """A partial config completed with the core's defaults (for tools and tests that
    name only what they change): the transport kind and frame_bytes pick the
    defaults; nested transport/faults dicts are merged key by key. sim=False gives
    the stream config only, sim=True adds the simulator's keys."""
    kind = (partial.get("transport") or {}).get("kind", "udp")
    out = default_sim_config(kind, partial.get("frame_bytes"))
    for key, value in partial.items():
        if key in ("transport", "faults") and isinstance(value, dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    if not sim:
        for key in ("master_clock_hz", "fifo_frames", "faults"):
            if key not in partial:
                out.pop(key)
    return out


def stream_config(case: Any) -> dict[str, Any]:
    """The native stream config of a case (docs/architecture.md "Stream config"),
    complete, shared by the host streams and the simulator's `configure`."""
    t = case.transport
    cfg = {k: v for k, v in default_sim_config(t.kind, t.frame_bytes).items() if k in _STREAM_KEYS}
    cfg.update({
        "direction": case.direction,
        "channels": int(case.channels),
        "sample_format": case.sample_format,
        "rate_sps": float(case.rate_sps),
        "frame_bytes": int(t.frame_bytes),
        "pattern": case.pattern,
    })
    if t.kind == "usb":
        # The simulator's USB link: the bus and the host's transfers (the case's
        # buffer_bytes is already transfers x transfer_bytes).
        opts = dict(t.options or {})
        cfg["transport"] = {**cfg["transport"], "transfer_bytes": int(opts["transfer_bytes"]),
                            "transfers": int(opts["transfers"]), "link": opts.get("link") or cfg["transport"]["link"]}
        return cfg
    cfg["transport"] = {**cfg["transport"], **dict(t.options or {})}
    return cfg


def sim_config(case: Any, fifo_frames: int | None = None) -> dict[str, Any]:
    """stream_config(case) plus what the simulator takes: master_clock_hz, fifo_frames
    (the case's, else fifo_frames given (the rig's), else the core's default) and
    faults (every key; the case's values over the core's defaults)."""
    cfg = stream_config(case)
    d = default_sim_config(case.transport.kind, case.transport.frame_bytes)
    fifo = getattr(case, "fifo_frames", None) or fifo_frames or d["fifo_frames"]
    faults = {**d["faults"], **dict(getattr(case, "faults", None) or {})}
    return {**cfg, "master_clock_hz": float(case.master_clock_hz), "fifo_frames": int(fifo), "faults": faults}


__all__ = ["complete_config", "default_fifo_frames", "default_shm_slots", "default_sim_config", "native",
           "sim_config", "stream_config", "stream_defaults", "udp_defaults"]
