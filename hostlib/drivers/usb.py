"""The `usb` driver: a lab's own board streaming hilrig frames over bulk endpoints
(an FX3/FT60x bridge), through the native USB engine and its libusb-1.0 backend
(hostlib/native/usb/usb_engine.cpp, usb_libusb.cpp; docs/usb.md).

The rig entry names the device (args.vid_pid and/or serial, interface, endpoints,
framing, speed); the case gives the transfers (`transport: {kind: usb, transfer_bytes,
transfers | buffer_bytes}`). The geometry is checked before anything is opened, with
the fix in the message; the engine checks it again against the endpoint's real
descriptor. A device that is not there SKIPs; one that goes away mid-run, stalls or
fails a transfer ends the case with ERROR naming it.
"""
from __future__ import annotations

import time

from .._exceptions import ConfigError, DeviceAbsent, DeviceError, InfrastructureError
from ..counters import Snapshot
from ..dsl.case import Case
from ..rig.args import UsbArgs
from ..rig.inventory import DeviceEntry
from ..rig.probe import Found, Probe
from ..transports import stream_config
from ..transports.usb import max_packet_bytes
from ._native_facade import NativeUsb, RadioStats, have, usb_find, usb_geometry_problems, usbfs_memory_limit_bytes
from .base import Driver, Watchdog, register_driver
from .radio import split_stats

UsbMatch = dict[str, str | int]   # the native device match: vid_pid, serial, interface


def usb_match(device: DeviceEntry, args: UsbArgs) -> UsbMatch:
    """The native device match of a rig entry: {"vid_pid", "serial", "interface"}."""
    match: UsbMatch = {"interface": args.interface}
    if args.vid_pid:
        match["vid_pid"] = args.vid_pid
    if device.serial:
        match["serial"] = str(device.serial)
    return match


def describe_match(match: UsbMatch) -> str:
    serial = f"serial {match['serial']}" if "serial" in match else ""
    return " ".join(p for p in (str(match.get("vid_pid", "")), serial) if p)


def usb_transport(case: Case, device: DeviceEntry, args: UsbArgs) -> dict[str, object]:
    """The native transport dict of a usb case on a usb rig entry."""
    t = stream_config(case)["transport"]   # the case's transfers, resolved by the loader
    return {"kind": "usb", "transfer_bytes": int(t["transfer_bytes"]), "transfers": int(t["transfers"]),
            "framing": args.framing, "endpoint_in": args.endpoint_in, "endpoint_out": args.endpoint_out,
            "device": usb_match(device, args)}


def geometry_problems(case: Case, device: DeviceEntry, args: UsbArgs) -> list[str]:
    """Why this case's transfers cannot work on this device (each with its fix), from the
    native rules, with the max packet size the rig declares and the kernel's usbfs limit."""
    directions = 2 if case.direction == "loopback" else 1
    return usb_geometry_problems(usb_transport(case, device, args), int(case.frame_bytes),
                                 max_packet_bytes(args.model_dump(exclude_none=True)), directions,
                                 usbfs_memory_limit_bytes())


@register_driver
class UsbDriver(Driver):
    name = "usb"

    def __init__(self, device: DeviceEntry):
        super().__init__(device)
        self.args = self.args_as(UsbArgs)
        self.stream: NativeUsb | None = None
        self._case: Case | None = None
        self.match = usb_match(device, self.args)

    @classmethod
    def probe(cls) -> Probe:
        """Nothing to list: a bus holds every USB device of the host; a board is found by
        its rig entry's match (attached)."""
        return Probe()

    @classmethod
    def attached(cls, entry: DeviceEntry, found: Probe) -> list[Found]:
        if not isinstance(entry.args, UsbArgs):
            return []
        if not have("LIBUSB"):
            raise InfrastructureError("hostlib._native was built without libusb-1.0")
        try:
            return [Found("usb", hit) for hit in usb_find(usb_match(entry, entry.args))]
        except (RuntimeError, ValueError) as exc:
            raise InfrastructureError(f"libusb cannot list devices: {exc}") from None

    def describe(self) -> str:
        return f"usb device {describe_match(self.match)}"

    def open(self) -> None:
        # The device is looked for in configure(), after the case's geometry is checked:
        # a wrong transfer size is the case's mistake whether or not the board is plugged in.
        if not have("LIBUSB"):
            raise InfrastructureError("hostlib._native was built without libusb-1.0 "
                                      "(apt-get install libusb-1.0-0-dev; make build)")

    def configure(self, case: Case) -> None:
        self._case = case
        where = case.location
        if case.transport.kind != "usb":
            raise ConfigError(f"{where}: device {self.device.alias!r} is a usb device; the case's transport must be "
                              f"{{kind: usb, transfer_bytes, transfers}}, not {case.transport.kind}")
        problems = geometry_problems(case, self.device, self.args)
        if problems:
            raise ConfigError(f"{where}: transport on usb device {self.device.alias!r}: " + "; ".join(problems))
        try:
            found = usb_find(self.match)
        except (RuntimeError, ValueError) as exc:
            raise InfrastructureError(f"libusb cannot list devices: {exc}") from exc
        if not found:
            raise DeviceAbsent(f"no USB device {describe_match(self.match)} on this host")
        self.stream = NativeUsb({**stream_config(case), "transport": usb_transport(case, self.device, self.args)},
                                where)

    @property
    def _stream(self) -> NativeUsb:
        if self.stream is None or self._case is None:
            raise DeviceError(f"{self.describe()} is not configured")
        return self.stream

    def start(self) -> int:
        started = time.monotonic_ns()
        self._stream.start()
        return started

    def poll(self, watchdog: Watchdog | None = None) -> Snapshot:
        stats = self._stream.stats()
        if stats.get("error"):
            raise DeviceError(str(stats.get("error")))
        radio: RadioStats = {"rx": stats.get("rx", {}), "tx": stats.get("tx", {})}
        assert self._case is not None   # _stream checked it
        return split_stats(self._case, radio, {**stats.get("usb", {})})

    def stop(self) -> Snapshot:
        self._stream.stop()
        return self.poll()

    def close(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            try:
                stream.stop()
            except Exception:  # noqa: BLE001  close never raises
                pass
            del stream
