"""USB transport settings in one place (docs/usb.md): the case's `transport: {kind: usb}`
knobs (their defaults are the core's), the rig's `driver: usb` entry, the UHD B2xx mapping and rules.

The geometry rules themselves (transfer size vs the endpoint's max packet size, the
usbfs limit, short-packet framing) are the native core's (`usb_geometry_problems`),
so the rig checks before a run exactly what the engine checks after opening the device.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from . import default_usb_transfer_bytes
from .config import Direction, Transport, UsbTransport

USB_KNOBS = ("transfer_bytes", "transfers", "buffer_bytes", "link")
MAX_PACKET_BYTES = {"high": 512, "super": 1024}   # bulk wMaxPacketSize per bus speed (USB 2.0 / 3.x)

# UHD B2xx over USB (UHD manual, B2x0 transport notes): a frame is one USB transfer,
# 40..16360 bytes, default 8176 x 16; never a multiple of the max packet size (512 at
# high speed, 1024 at SuperSpeed), or it ends without a short packet and stalls.
B2XX_FRAME_MIN, B2XX_FRAME_MAX, B2XX_FRAME_DEFAULT = 40, 16360, 8176


def usb_transfers(transfer_bytes: int | None, transfers: int | None,
                  buffer_bytes: int | None) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The case's usb knobs as the core's transport keys, and [(knob, problem)].
    buffer_bytes is the total in flight per direction (the published tables' "buffer
    size"): transfers = buffer_bytes / transfer_bytes. A key the case leaves out is
    the core's default."""
    errs: list[tuple[str, str]] = []
    out = {k: v for k, v in (("transfer_bytes", transfer_bytes), ("transfers", transfers)) if v is not None}
    if buffer_bytes is not None:
        s = transfer_bytes or default_usb_transfer_bytes()
        if buffer_bytes % s:
            errs.append(("buffer_bytes", f"buffer_bytes {buffer_bytes} is not a whole number of {s}-byte transfers: "
                                         f"use {max(1, buffer_bytes // s) * s} or {(buffer_bytes // s + 1) * s}"))
        elif transfers is not None and transfers * s != buffer_bytes:
            errs.append(("buffer_bytes", f"buffer_bytes {buffer_bytes} != transfers {transfers} x transfer_bytes {s}; "
                                         "give two of the three"))
        out["transfers"] = max(1, buffer_bytes // s)
    return out, errs


class UsbCase(Protocol):
    @property
    def direction(self) -> Direction: ...
    @property
    def transport(self) -> Transport: ...
    @property
    def transport_given(self) -> tuple[str, ...]: ...


def uhd_usb_transport_args(case: UsbCase) -> dict[str, int]:
    """A uhd case over USB: the transport keys as UHD device args. A B2xx frame is one
    USB transfer, so transfer_bytes -> recv/send_frame_size, transfers -> num_recv/send_frames,
    for the directions the case streams. Only what the case gave: UHD keeps its defaults."""
    t = case.transport
    if not isinstance(t, UsbTransport):
        return {}
    given = set(case.transport_given)
    args: dict[str, int] = {}
    sides = {"rx": ("recv",), "tx": ("send",)}.get(case.direction, ("recv", "send"))
    for side in sides:
        if "transfer_bytes" in given:
            args[f"{side}_frame_size"] = t.transfer_bytes
        if given & {"transfers", "buffer_bytes"}:
            args[f"num_{side}_frames"] = t.transfers
    return args


def is_b2xx(device_args: Mapping[str, object]) -> bool:
    """The device args name a B2xx (UHD's `type`)."""
    return str(device_args.get("type", "")).lower() in ("b200", "b200mini", "b205mini", "b210")


def b2xx_frame_problems(args: Mapping[str, object]) -> list[str]:
    """UHD B2xx rules on the frame sizes of device args, each with its fix."""
    problems = []
    for key in ("recv_frame_size", "send_frame_size"):
        if key not in args:
            continue
        size = int(str(args[key]))
        if not B2XX_FRAME_MIN <= size <= B2XX_FRAME_MAX:
            problems.append(f"{key} {size} is outside what a B2xx takes ({B2XX_FRAME_MIN}..{B2XX_FRAME_MAX} bytes): "
                            f"use {B2XX_FRAME_DEFAULT} (UHD's default) or {B2XX_FRAME_MAX}")
        elif size % 512 == 0:
            problems.append(f"{key} {size} is a multiple of the USB max packet size (512 at USB 2, 1024 at USB 3), so "
                            f"no short packet ends a frame: use {size - 16} or {min(size + 16, B2XX_FRAME_MAX)}")
    return problems


def max_packet_bytes(device_args: Mapping[str, object]) -> int:
    """The endpoint's max packet size the rig declares: `max_packet_bytes`, else by
    `speed` (high: 512, super: 1024; default high)."""
    if "max_packet_bytes" in device_args:
        return int(str(device_args["max_packet_bytes"]))
    return MAX_PACKET_BYTES[str(device_args.get("speed", "high"))]


__all__ = ["B2XX_FRAME_DEFAULT", "B2XX_FRAME_MAX", "B2XX_FRAME_MIN", "MAX_PACKET_BYTES", "USB_KNOBS",
           "b2xx_frame_problems", "is_b2xx", "max_packet_bytes", "uhd_usb_transport_args",
           "usb_transfers"]
