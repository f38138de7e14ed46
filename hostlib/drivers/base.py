"""The driver protocol: how the engine talks to any device (simulator, UHD, SoapySDR).

Modelled on Labgrid's resource/driver split: a rig file entry (DeviceEntry) is the
resource, a Driver binds to it. Every driver reports the same counters under the
same names (docs/architecture.md), so one case means the same thing on every device.
"""
from __future__ import annotations

import abc
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._exceptions import ConfigError


@dataclass
class Snapshot:
    """Cumulative counters at one moment of a stream.

    host: what the host side measured (RxStream / TxStream stats)
    device: what the device reported about itself (the simulator's stats)
    taken_ns: time.monotonic_ns() right after the counters were read
    """

    host_rx: dict[str, Any] = field(default_factory=dict)
    host_tx: dict[str, Any] = field(default_factory=dict)
    device: dict[str, Any] = field(default_factory=dict)
    taken_ns: int = field(default_factory=time.monotonic_ns)


class Driver(abc.ABC):
    """One device, opened for one case: open -> configure -> start -> poll* -> stop -> close."""

    name: ClassVar[str]

    def __init__(self, device: Any):
        self.device = device  # hostlib.rig.DeviceEntry

    @abc.abstractmethod
    def open(self) -> None:
        """Reach the device; raise DeviceAbsent when it is not there."""

    @abc.abstractmethod
    def configure(self, case: Any) -> None:
        """Set rate, channels, format and transport for `case`; nothing streams yet."""

    @abc.abstractmethod
    def start(self) -> int:
        """Start streaming; returns the monotonic ns at which the stream was started."""

    @abc.abstractmethod
    def poll(self) -> Snapshot:
        """Cumulative counters now; raises DeviceError if the device is gone."""

    @abc.abstractmethod
    def stop(self) -> Snapshot:
        """Stop streaming, drain to end of burst, return the final counters."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release everything (processes, sockets, shared memory). Idempotent, never raises."""

    def versions(self) -> dict[str, str]:
        return {}


_DRIVERS: dict[str, type[Driver]] = {}


def register_driver(cls: type[Driver]) -> type[Driver]:
    """Class decorator: make a driver available by its `name` (once)."""
    if cls.name in _DRIVERS:
        raise RuntimeError(f"driver {cls.name!r} registered twice ({_DRIVERS[cls.name]} and {cls})")
    _DRIVERS[cls.name] = cls
    return cls


def driver_class(name: str, where: str = "") -> type[Driver]:
    try:
        return _DRIVERS[name]
    except KeyError:
        raise ConfigError(
            f"{where}unknown driver {name!r}; known drivers: {', '.join(sorted(_DRIVERS))}"
        ) from None


def known_drivers() -> list[str]:
    return sorted(_DRIVERS)

