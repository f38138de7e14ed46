"""The driver protocol: how the engine talks to any device (simulator, UHD, SoapySDR, USB).

Modelled on Labgrid's resource/driver split: a rig file entry (DeviceEntry) is the
resource, a Driver binds to it, and discovery sits next to each driver (`probe`,
`matches`). Every driver reports the same counters under the same names
(hostlib.counters, docs/architecture.md), so one case means the same thing on every device.
"""
from __future__ import annotations

import abc
from collections.abc import Callable
from typing import ClassVar, TypeVar

from .._exceptions import ConfigError, LinkUnavailable
from ..counters import Snapshot
from ..dsl.case import Case
from ..link.session import LinkEnds
from ..rig.args import DeviceArgs
from ..rig.inventory import DeviceEntry
from ..rig.probe import Found, Probe
from ._native_facade import RfCapture

A = TypeVar("A", bound=DeviceArgs)

# Called by a driver while it waits on its device (the engine's silence bound): raises
# DeviceSilent when the host's own counters show the stream has gone silent.
Watchdog = Callable[[], None]


class Driver(abc.ABC):
    """One device, opened for one case: open -> configure -> start -> poll* -> stop -> close."""

    name: ClassVar[str]

    def __init__(self, device: DeviceEntry):
        self.device = device

    @abc.abstractmethod
    def open(self) -> None:
        """Reach the device; raise DeviceAbsent when it is not there."""

    @abc.abstractmethod
    def configure(self, case: Case) -> None:
        """Set rate, channels, format and transport for `case`; nothing streams yet."""

    @abc.abstractmethod
    def start(self) -> int:
        """Start streaming; returns the monotonic ns at which the stream was started."""

    @abc.abstractmethod
    def poll(self, watchdog: Watchdog | None = None) -> Snapshot:
        """Cumulative counters now; raises DeviceError if the device is gone. `watchdog`
        is called while the driver waits on the device (it may raise DeviceSilent)."""

    def host_snapshot(self) -> Snapshot:
        """The host side's counters now, without asking the device (never blocks): what
        the silence bound judges while the device does not answer."""
        return self.poll()

    @abc.abstractmethod
    def stop(self) -> Snapshot:
        """Stop streaming, drain to end of burst, return the final counters."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release everything (processes, sockets, shared memory). Idempotent, never raises."""

    def args_as(self, kind: type[A]) -> A:
        """The rig entry's args as this driver's model (the inventory parsed them by `driver`)."""
        args = self.device.args
        if not isinstance(args, kind):
            raise ConfigError(f"device {self.device.alias!r}: the {self.name} driver takes {kind.__name__}, "
                              f"the entry has {type(args).__name__}")
        return args

    def place_on_link(self, ends: LinkEnds) -> None:
        """Before open(): run the device side in ends.device_netns and the host side in
        ends.host_netns (an emulated link joins them, docs/long-link.md). A driver that
        cannot says why (the case SKIPs)."""
        raise LinkUnavailable(f"the {self.name} driver cannot run a case across an emulated link "
                              "(the sim driver can: its device side is a process of this host)")

    def arm_capture(self) -> None:
        """An RF case, where its window starts: the host receiver keeps the capture
        (signal.capture_samples of channel 0) from the next frame on."""
        raise ConfigError(f"the {self.name} driver cannot capture an RF signal")

    def capture(self) -> RfCapture | None:
        """An RF case, after stop(): the complete capture, or None (the stream ended first)."""
        return None

    def describe(self) -> str:
        """How the device is named in messages."""
        return f"{self.name} device {self.device.alias!r}"

    def versions(self) -> dict[str, str]:
        return {}

    @classmethod
    def probe(cls) -> Probe:
        """What this driver's library finds attached to this host; a library that cannot
        be asked is a problem line, never an exception."""
        return Probe()

    @classmethod
    def matches(cls, entry: DeviceEntry, found: Found) -> bool:
        """Whether `found` (from probe()) is the device the rig entry names."""
        return found.kind == cls.name

    @classmethod
    def attached(cls, entry: DeviceEntry, found: Probe) -> list[Found]:
        """The attached devices that are this rig entry's (`hilrig rig check`)."""
        return [f for f in found.found if cls.matches(entry, f)]


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


def registered_drivers() -> list[type[Driver]]:
    """Every driver, in registration order (probing asks each)."""
    return list(_DRIVERS.values())
