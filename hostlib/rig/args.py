"""The `args:` of a rig device, typed per driver: SimArgs | UhdArgs | SoapyArgs | UsbArgs,
chosen by the entry's `driver` (labgrid's shape: a resource's attributes are declared
with it). They live here, below the drivers, because the inventory parses them and the
drivers import the inventory.

hilrig's own keys are fields; a key that is none of them is refused with file:line and a
"did you mean" hint. UHD and SoapySDR take free-form device args (`type=b200,addr=...`),
so their models pass every other key through to the library (`device_args()`), except a
key that is a near miss of one of hilrig's own (`lok` for `lock`): that would pass
through silently and disable what it meant, so it is refused too.
"""
from __future__ import annotations

import difflib
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

__all__ = ["DeviceArgs", "RadioArgs", "SimArgs", "SoapyArgs", "UhdArgs", "UsbArgs", "args_model"]

Scalar = str | int | float | bool
StrictBool = Annotated[bool, Field(strict=True)]
NEAR_MISS_CUTOFF = 0.75   # difflib ratio: "lok" ~ "lock" 0.86, "check_patern" ~ "check_pattern" 0.96


class DeviceArgs(BaseModel):
    """What every driver's args have: `lock` (hold the device lock while a case runs;
    the simulator is not locked unless it says so)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    lock: StrictBool | None = None

    def given(self) -> dict[str, Scalar]:
        """Every key the rig file set, as written (for messages, lock keys and image matching)."""
        return {k: v for k, v in self.model_dump(exclude_none=True, exclude_unset=True).items()
                if isinstance(v, (str, int, float, bool))}

    def device_args(self) -> dict[str, str]:
        """The keys the device's own library takes (the pass-through): none by default."""
        return {}


class SimArgs(DeviceArgs):
    """driver: sim: the loopback simulator hilrig-sim."""

    binary: Annotated[str, StringConstraints(min_length=1), Field(strict=True)] | None = None  # another hilrig-sim


class RadioArgs(DeviceArgs):
    """driver: uhd / soapy: hilrig's keys, then the device args the library takes."""

    model_config = ConfigDict(extra="allow", frozen=True)
    check_pattern: StrictBool | None = None      # check the counter pattern on received samples
    frequency_hz: Annotated[float, Field(gt=0)] | None = None   # tune before streaming

    @classmethod
    def refused_keys(cls, data: dict[str, object]) -> dict[str, str]:
        """{key: why} for the keys of raw args that are not hilrig's own and cannot be
        passed through: a near miss of one of hilrig's keys, or a value that is not text."""
        own = list(cls.model_fields)
        out = {}
        for key, value in data.items():
            if key in own:
                continue
            close = difflib.get_close_matches(str(key), own, n=1, cutoff=NEAR_MISS_CUTOFF)
            if close:
                out[key] = (f"unknown key {key!r}: did you mean {close[0]!r}? (hilrig's own keys: "
                            f"{', '.join(own)}; any other key is passed to the device as a device arg)")
            elif not isinstance(value, (str, int, float, bool)):
                out[key] = (f"device arg {key!r} is a {type(value).__name__}; device args are "
                            "key=value text (a string, number or true/false)")
        return out

    @model_validator(mode="before")
    @classmethod
    def _no_refused_keys(cls, data: object) -> object:
        refused = cls.refused_keys(data) if isinstance(data, dict) else {}
        if refused:
            raise ValueError("; ".join(refused.values()))
        return data

    def device_args(self) -> dict[str, str]:
        return {k: _text(v) for k, v in (self.model_extra or {}).items()}

    def get(self, key: str, default: str | None = None) -> str | None:
        """A device arg as text (`default` when not given)."""
        return self.device_args().get(key, default)


class UhdArgs(RadioArgs):
    """driver: uhd: UHD device args (type, addr, name, ...), passed to uhd::usrp."""


class SoapyArgs(RadioArgs):
    """driver: soapy: SoapySDR device args (driver, serial, ...), passed to SoapySDR::Device::make."""


class UsbArgs(DeviceArgs):
    """driver: usb (docs/usb.md): a lab's board streaming hilrig frames over bulk
    endpoints. VID:PID and/or the entry's serial pick the device."""

    vid_pid: Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{4}$"),
                       Field(strict=True)] | None = None
    interface: Annotated[int, Field(strict=True, ge=0, le=255)] = 0
    endpoint_in: Annotated[int, Field(strict=True, ge=0x81, le=0x8F)] = 0x81
    endpoint_out: Annotated[int, Field(strict=True, ge=0x01, le=0x0F)] = 0x01
    framing: Literal["packed", "short_packet"] = "packed"
    speed: Literal["high", "super"] = "high"          # declares the max packet size checked before a run
    max_packet_bytes: Annotated[int, Field(strict=True, ge=8, le=1024)] | None = None


# What each usb key takes, said instead of pydantic's generic message.
USB_ARG_HINTS = {
    "vid_pid": "VID:PID in hex as lsusb shows it, e.g. \"1209:4852\" (quoted)",
    "endpoint_in": "an IN endpoint address, 0x81..0x8f (bit 7 set), as lsusb -v shows bEndpointAddress",
    "endpoint_out": "an OUT endpoint address, 0x01..0x0f",
    "interface": "the bInterfaceNumber to claim, 0..255",
}

ArgsModel = SimArgs | UhdArgs | SoapyArgs | UsbArgs
_BY_DRIVER: dict[str, type[ArgsModel]] = {"sim": SimArgs, "uhd": UhdArgs, "soapy": SoapyArgs, "usb": UsbArgs}


def args_model(driver: str) -> type[ArgsModel]:
    """The args model of a driver name (the rig schema allows only these)."""
    return _BY_DRIVER[driver]


def _text(v: object) -> str:
    """A device arg as UHD/SoapySDR markup writes it (true/false lower case)."""
    return "true" if v is True else "false" if v is False else str(v)
