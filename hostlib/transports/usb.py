"""USB transport settings in one place (docs/usb.md): the case's `transport: {kind: usb}`
knobs and their defaults, the rig's `driver: usb` entry, the UHD B2xx mapping and rules.

The geometry rules themselves (transfer size vs the endpoint's max packet size, the
usbfs limit, short-packet framing) are the native core's (`usb_geometry_problems`),
so the rig checks before a run exactly what the engine checks after opening the device.
"""
from __future__ import annotations

from typing import Any

TRANSFER_BYTES = 16 * 1024      # S: the lab's published USB 2 point (16 KiB transfers)
TRANSFERS = 16                  # N in flight per direction
USB_KNOBS = ("transfer_bytes", "transfers", "buffer_bytes", "link")
MAX_PACKET_BYTES = {"high": 512, "super": 1024}   # bulk wMaxPacketSize per bus speed (USB 2.0 / 3.x)

# UHD B2xx over USB (UHD manual, B2x0 transport notes): a frame is one USB transfer,
# 40..16360 bytes, default 8176 x 16; never a multiple of the max packet size (512 at
# high speed, 1024 at SuperSpeed), or it ends without a short packet and stalls.
B2XX_FRAME_MIN, B2XX_FRAME_MAX, B2XX_FRAME_DEFAULT = 40, 16360, 8176


def usb_options(transfer_bytes: int | None, transfers: int | None, buffer_bytes: int | None,
                link: str | None) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The case's usb knobs -> (TransportSpec.options, [(knob, problem)]). buffer_bytes is
    the total in flight per direction (the published tables' "buffer size"):
    transfers = buffer_bytes / transfer_bytes."""
    errs: list[tuple[str, str]] = []
    s = transfer_bytes or TRANSFER_BYTES
    n = transfers or TRANSFERS
    if buffer_bytes is not None:
        if buffer_bytes % s:
            errs.append(("buffer_bytes", f"buffer_bytes {buffer_bytes} is not a whole number of {s}-byte transfers: "
                                         f"use {max(1, buffer_bytes // s) * s} or {(buffer_bytes // s + 1) * s}"))
        elif transfers is not None and transfers * s != buffer_bytes:
            errs.append(("buffer_bytes", f"buffer_bytes {buffer_bytes} != transfers {transfers} x transfer_bytes {s}; "
                                         "give two of the three"))
        n = max(1, buffer_bytes // s)
    options: dict[str, Any] = {"transfer_bytes": s, "transfers": n, "buffer_bytes": s * n}
    if link is not None:
        options["link"] = link
    # What the YAML said itself (a radio keeps its own defaults for the rest).
    options["given"] = tuple(k for k, v in (("transfer_bytes", transfer_bytes), ("transfers", transfers),
                                            ("buffer_bytes", buffer_bytes)) if v is not None)
    return options, errs


def uhd_usb_transport_args(case: Any) -> dict[str, int]:
    """A uhd case over USB: the transport keys as UHD device args. A B2xx frame is one
    USB transfer, so transfer_bytes -> recv/send_frame_size, transfers -> num_recv/send_frames,
    for the directions the case streams. Only what the case gave: UHD keeps its defaults."""
    t = case.transport
    if t.kind != "usb":
        return {}
    given = set(t.options.get("given", ()))
    args: dict[str, int] = {}
    sides = {"rx": ("recv",), "tx": ("send",)}.get(case.direction, ("recv", "send"))
    for side in sides:
        if "transfer_bytes" in given:
            args[f"{side}_frame_size"] = int(t.options["transfer_bytes"])
        if given & {"transfers", "buffer_bytes"}:
            args[f"num_{side}_frames"] = int(t.options["transfers"])
    return args


def is_b2xx(device: Any) -> bool:
    args = getattr(device, "args", None) or {}
    return str(args.get("type", "")).lower() in ("b200", "b200mini", "b205mini", "b210")


def b2xx_frame_problems(args: dict[str, Any]) -> list[str]:
    """UHD B2xx rules on the frame sizes of device args, each with its fix."""
    problems = []
    for key in ("recv_frame_size", "send_frame_size"):
        if key not in args:
            continue
        size = int(args[key])
        if not B2XX_FRAME_MIN <= size <= B2XX_FRAME_MAX:
            problems.append(f"{key} {size} is outside what a B2xx takes ({B2XX_FRAME_MIN}..{B2XX_FRAME_MAX} bytes): "
                            f"use {B2XX_FRAME_DEFAULT} (UHD's default) or {B2XX_FRAME_MAX}")
        elif size % 512 == 0:
            problems.append(f"{key} {size} is a multiple of the USB max packet size (512 at USB 2, 1024 at USB 3), so "
                            f"no short packet ends a frame: use {size - 16} or {min(size + 16, B2XX_FRAME_MAX)}")
    return problems


def max_packet_bytes(device_args: dict[str, Any]) -> int:
    """The endpoint's max packet size the rig declares: `max_packet_bytes`, else by
    `speed` (high: 512, super: 1024; default high)."""
    if "max_packet_bytes" in device_args:
        return int(device_args["max_packet_bytes"])
    return MAX_PACKET_BYTES[str(device_args.get("speed", "high"))]


__all__ = ["B2XX_FRAME_DEFAULT", "B2XX_FRAME_MAX", "B2XX_FRAME_MIN", "MAX_PACKET_BYTES", "TRANSFERS",
           "TRANSFER_BYTES", "USB_KNOBS", "b2xx_frame_problems", "is_b2xx", "max_packet_bytes",
           "uhd_usb_transport_args", "usb_options"]
