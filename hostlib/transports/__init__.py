"""The Python face of the native transports (UDP, shared-memory ring).

Everything that moves or checks samples is C++ (hostlib/native); this module is
the one place that turns a resolved case into the native stream config and that
loads the native core with a clear error when it was not built.
"""
from __future__ import annotations

from typing import Any

from .._exceptions import InfrastructureError

SHM_RING_BYTES = 8 * 1024**2  # default ring: 8 MiB, fits the L3 cache, rarely full


def native():
    """The native module hostlib._native, or InfrastructureError saying how to build it."""
    try:
        from .. import _native
    except ImportError as exc:
        raise InfrastructureError(f"native core hostlib._native is not built ({exc}); run `make build`") from exc
    return _native


def default_shm_slots(frame_bytes: int) -> int:
    """Slots of an 8 MiB ring (16..65536). A deep ring lets producer and consumer
    run apart on two cores instead of waking each other every few frames
    (`make bench`: 8 KiB frames move ~3x faster with 1024 slots than with 128)."""
    return max(16, min(65536, SHM_RING_BYTES // int(frame_bytes)))


def stream_config(case: Any) -> dict[str, Any]:
    """The native stream config of a case (docs/architecture.md "Stream config"),
    shared by the host streams and the simulator's `configure`."""
    return {
        "direction": case.direction,
        "channels": int(case.channels),
        "sample_format": case.sample_format,
        "rate_sps": float(case.rate_sps),
        "frame_bytes": int(case.transport.frame_bytes),
        "transport": {"kind": case.transport.kind, **dict(case.transport.options or {})},
        "pattern": case.pattern,
        "stream_id": 0,
        "crc": False,
    }


__all__ = ["SHM_RING_BYTES", "default_shm_slots", "native", "stream_config"]
