"""The native core's handles, typed: the one place where the drivers touch hostlib._native.

The native module carries no type information (pybind11); everything the drivers use
of it goes through the classes and functions here, which say what goes in and what
comes out (the counters of hostlib.counters). Construction errors become one-line
hilrig errors naming the case: the core raises ValueError for a config it rejects,
RuntimeError for a socket, ring or device it cannot set up.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypedDict

from .._exceptions import ConfigError, DeviceAbsent, DeviceError, HilrigError, InfrastructureError
from ..counters import DeviceStats, RxCounters, TxCounters, UsbEngineStats
from ..transports import native

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Endpoint", "HostRx", "HostTx", "NativeRadio", "NativeRx", "NativeTx", "NativeUsb", "Radio", "RadioStats",
           "RfCapture",
           "UsbStats", "have", "soapy_enumerate", "soapy_module_dir", "uhd_find", "usb_find", "usb_geometry_problems",
           "usbfs_memory_limit_bytes"]

Config = Mapping[str, object]          # a stream / simulator config as hostlib.transports builds it
Endpoint = dict[str, object]           # where a host receiver listens ({kind, host, port} / {kind, ring ...})


class HostRx(Protocol):
    """A host receiver: the native RxStream, or a GNU Radio flowgraph with its face."""

    def endpoint(self) -> Endpoint: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def stats(self) -> RxCounters: ...


class HostTx(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def stats(self) -> TxCounters: ...


class RadioStats(TypedDict, total=False):
    """A radio's stats (uhd_driver.cpp / soapy_driver.cpp stats(), FlowgraphRadio's)."""

    rx: RxCounters
    tx: TxCounters
    sensors: dict[str, str]
    device_error: str | None
    running: bool


class Radio(Protocol):
    """A radio the uhd / soapy drivers stream through: UhdRadio, SoapyRadio, a FlowgraphRadio."""

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def stats(self) -> RadioStats: ...


class UsbStats(TypedDict, total=False):
    """UsbEngine::stats (usb_engine.cpp)."""

    device: str
    device_stats: DeviceStats
    error: str | None
    rx: RxCounters
    tx: TxCounters
    usb: UsbEngineStats


def have(feature: str) -> bool:
    """Whether the native core was built with `feature` (UHD, SOAPY, LIBUSB)."""
    return bool(getattr(native(), f"HAVE_{feature}", False))


def _construct(cls_name: str, cfg: Config, where: str, role: str):
    """native().<cls_name>(cfg), its errors as hilrig errors naming `where`."""
    try:
        return getattr(native(), cls_name)(dict(cfg))
    except ValueError as exc:
        raise ConfigError(f"{where}: host {role} rejects the stream config: {exc}") from None
    except RuntimeError as exc:
        raise InfrastructureError(f"{where}: host {role} cannot be set up: {exc}") from None


class _Handle:
    """A native object with a stream's life cycle (start, stop)."""

    def __init__(self, handle):
        self._h = handle

    def start(self) -> None:
        self._h.start()

    def stop(self) -> None:
        self._h.stop()


@dataclass(frozen=True)
class RfCapture:
    """What the host kept of an RF stream: consecutive samples of channel 0 (complex128,
    full scale 1.0) from sample tick `start_tick`; `restarts`: gaps that started it again."""

    samples: npt.NDArray[np.complex128]
    start_tick: int
    restarts: int


class NativeRx(_Handle):
    """The core's RxStream."""

    def __init__(self, cfg: Config, where: str):
        super().__init__(_construct("RxStream", cfg, where, "receiver"))

    def endpoint(self) -> Endpoint:
        return dict(self._h.endpoint())

    def stats(self) -> RxCounters:
        return self._h.stats()

    def arm_capture(self) -> None:
        """pattern "signal": keep the capture from the next frame on."""
        self._h.arm_capture()

    def capture(self) -> RfCapture | None:
        """The complete capture, or None (not armed or not complete yet)."""
        got = self._h.capture()
        if got is None:
            return None
        return RfCapture(samples=got["samples"], start_tick=int(got["start_tick"]), restarts=int(got["restarts"]))


class NativeTx(_Handle):
    """The core's TxStream."""

    def __init__(self, cfg: Config, where: str):
        super().__init__(_construct("TxStream", cfg, where, "sender"))

    def stats(self) -> TxCounters:
        return self._h.stats()


class NativeUsb(_Handle):
    """The core's UsbStream: the USB engine over a libusb device or the simulator's link.
    A device that cannot be opened is `setup_error` (a board: DeviceError; the
    simulator's link: InfrastructureError, the rig's own)."""

    def __init__(self, cfg: Config, where: str, setup_error: type[HilrigError] = DeviceError):
        nat = native()
        try:
            super().__init__(nat.UsbStream(dict(cfg)))
        except nat.UsbDeviceAbsent as exc:
            raise DeviceAbsent(str(exc)) from None
        except ValueError as exc:
            raise ConfigError(f"{where}: host usb engine rejects the stream config: {exc}") from None
        except RuntimeError as exc:
            raise setup_error(f"{where}: host usb engine cannot be set up: {exc}") from None

    def stats(self) -> UsbStats:
        return self._h.stats()

    def error(self) -> str:
        return str(self._h.error() or "")


class NativeRadio(_Handle):
    """The core's UhdRadio / SoapyRadio (open: the device args as markup)."""

    def __init__(self, library: str, args: str):
        super().__init__((native().UhdRadio if library == "uhd" else native().SoapyRadio)(args))

    def info(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in dict(self._h.info()).items()}

    def configure(self, request: Config) -> dict[str, float]:
        """The configured stream (rate_sps as the device coerced it, rate_sps_requested)."""
        return {str(k): float(v) for k, v in dict(self._h.configure(dict(request))).items()
                if isinstance(v, (int, float))}

    def stats(self) -> RadioStats:
        return self._h.stats()


def uhd_find(args: str) -> list[dict[str, str]]:
    return [{str(k): str(v) for k, v in dict(a).items()} for a in native().UhdRadio.find(args)]


def soapy_enumerate(args: str) -> list[dict[str, str]]:
    return [{str(k): str(v) for k, v in dict(a).items()} for a in native().SoapyRadio.enumerate(args)]


def soapy_module_dir() -> str | None:
    found = getattr(native(), "SOAPY_MODULE_DIR", None)
    return str(found) if found else None


def usb_find(match: Mapping[str, object]) -> list[dict[str, str]]:
    """The USB devices a match finds (libusb): vid_pid, serial, bus, address, speed."""
    return [{str(k): str(v) for k, v in dict(a).items()} for a in native().UsbStream.find(dict(match))]


def usb_geometry_problems(transport: Mapping[str, object], frame_bytes: int, max_packet_bytes: int, directions: int,
                          limit_bytes: int) -> list[str]:
    """Why these transfers cannot work (each with its fix), by the core's rules."""
    return [str(p) for p in native().usb_geometry_problems(dict(transport), frame_bytes, max_packet_bytes, directions,
                                                           limit_bytes)]


def usbfs_memory_limit_bytes() -> int:
    return int(native().usbfs_memory_limit_bytes())
