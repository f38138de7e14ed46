"""The `usb` driver: a lab's own board streaming hilrig frames over bulk endpoints
(an FX3/FT60x bridge), through the native USB engine and its libusb-1.0 backend
(hostlib/native/src/usb_engine.cpp, usb_libusb.cpp; docs/usb.md).

The rig entry names the device (args.vid_pid and/or serial, interface, endpoints,
framing, speed); the case gives the transfers (`transport: {kind: usb, transfer_bytes,
transfers | buffer_bytes}`). The geometry is checked before anything is opened, with
the fix in the message; the engine checks it again against the endpoint's real
descriptor. A device that is not there SKIPs; one that goes away mid-run, stalls or
fails a transfer ends the case with ERROR naming it.
"""
from __future__ import annotations

import time
from typing import Any

from .._exceptions import ConfigError, DeviceAbsent, DeviceError, InfrastructureError
from ..transports import native, stream_config
from ..transports.usb import max_packet_bytes
from .base import Driver, Snapshot, register_driver
from .radio import split_stats


def usb_match(device: Any) -> dict[str, Any]:
    """The native device match of a rig entry: {"vid_pid", "serial", "interface"}."""
    args = getattr(device, "args", None) or {}
    match: dict[str, Any] = {"interface": int(args.get("interface", 0))}
    if args.get("vid_pid"):
        match["vid_pid"] = str(args["vid_pid"])
    if getattr(device, "serial", None):
        match["serial"] = str(device.serial)
    return match


def describe_match(match: dict[str, Any]) -> str:
    serial = f"serial {match['serial']}" if "serial" in match else ""
    return " ".join(p for p in (match.get("vid_pid", ""), serial) if p)


def usb_transport(case: Any, device: Any) -> dict[str, Any]:
    """The native transport dict of a usb case on a usb rig entry."""
    args = getattr(device, "args", None) or {}
    opts = vars(case.transport)   # the effective transport config (hostlib.transports.config)
    return {"kind": "usb", "transfer_bytes": int(opts["transfer_bytes"]), "transfers": int(opts["transfers"]),
            "framing": args.get("framing", "packed"), "endpoint_in": int(args.get("endpoint_in", 0x81)),
            "endpoint_out": int(args.get("endpoint_out", 0x01)), "device": usb_match(device)}


def geometry_problems(case: Any, device: Any) -> list[str]:
    """Why this case's transfers cannot work on this device (each with its fix), from the
    native rules, with the max packet size the rig declares and the kernel's usbfs limit."""
    nat = native()
    directions = 2 if case.direction == "loopback" else 1
    return list(nat.usb_geometry_problems(usb_transport(case, device), int(case.frame_bytes),
                                          max_packet_bytes(getattr(device, "args", None) or {}), directions,
                                          int(nat.usbfs_memory_limit_bytes())))


@register_driver
class UsbDriver(Driver):
    name = "usb"

    def __init__(self, device: Any):
        super().__init__(device)
        self.stream: Any = None  # the native UsbStream (the native module is untyped)
        self.case: Any = None
        self.match = usb_match(device)

    def open(self) -> None:
        # The device is looked for in configure(), after the case's geometry is checked:
        # a wrong transfer size is the case's mistake whether or not the board is plugged in.
        if not getattr(native(), "HAVE_LIBUSB", False):
            raise InfrastructureError("hostlib._native was built without libusb-1.0 "
                                      "(apt-get install libusb-1.0-0-dev; make build)")

    def configure(self, case: Any) -> None:
        self.case = case
        where = getattr(case, "location", case.name)
        if case.transport.kind != "usb":
            raise ConfigError(f"{where}: device {self.device.alias!r} is a usb device; the case's transport must be "
                              f"{{kind: usb, transfer_bytes, transfers}}, not {case.transport.kind}")
        problems = geometry_problems(case, self.device)
        if problems:
            raise ConfigError(f"{where}: transport on usb device {self.device.alias!r}: " + "; ".join(problems))
        nat = native()
        try:
            found = nat.UsbStream.find(self.match)
        except (RuntimeError, ValueError) as exc:
            raise InfrastructureError(f"libusb cannot list devices: {exc}") from exc
        if not found:
            raise DeviceAbsent(f"no USB device {describe_match(self.match)} on this host")
        cfg = {**stream_config(case), "transport": usb_transport(case, self.device)}
        try:
            self.stream = nat.UsbStream(cfg)
        except nat.UsbDeviceAbsent as exc:
            raise DeviceAbsent(str(exc)) from None
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        except RuntimeError as exc:
            raise DeviceError(str(exc)) from None

    def start(self) -> int:
        started = time.monotonic_ns()
        self.stream.start()
        return started

    def _snapshot(self) -> Snapshot:
        stats = self.stream.stats()
        if stats.get("error"):
            raise DeviceError(stats["error"])
        return split_stats(self.case, stats, stats.get("usb", {}))

    def poll(self) -> Snapshot:
        return self._snapshot()

    def stop(self) -> Snapshot:
        self.stream.stop()
        return self._snapshot()

    def close(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            try:
                stream.stop()
            except Exception:  # noqa: BLE001  close never raises
                pass
            del stream
