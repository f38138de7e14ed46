"""A case's `requires:` against a rig's device entry: None, or the SKIP reason."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from hostlib.dsl.case import Case

__all__ = ["DeviceCapabilities", "Fit", "unmet_requirement"]


@dataclass(frozen=True)
class Fit:
    """Whether a device can run a case; `why_not` is the SKIP reason when it cannot."""

    why_not: str | None = None

    def __bool__(self) -> bool:
        return self.why_not is None


class DeviceCapabilities(Protocol):
    """What a rig's device entry declares it can give."""

    @property
    def alias(self) -> str: ...
    @property
    def channels(self) -> int: ...
    @property
    def max_rate_sps(self) -> float: ...
    @property
    def directions(self) -> tuple[str, ...]: ...
    @property
    def transports(self) -> tuple[str, ...]: ...


def unmet_requirement(case: Case, device: DeviceCapabilities) -> str | None:
    """Why `device` cannot give what `case.requires` asks (a SKIP reason), or None."""
    req = case.requires
    alias = device.alias
    if req.channels and req.channels > device.channels:
        return f"case requires {req.channels} channels, device {alias!r} has {device.channels}"
    missing = [d for d in req.directions if d not in device.directions]
    if missing:
        return (f"case requires direction {', '.join(missing)}, device {alias!r} has "
                f"{', '.join(device.directions)}")
    if req.rate_sps and req.rate_sps > device.max_rate_sps:
        return (f"case requires {req.rate_sps:.6g} S/s, device {alias!r} is limited to "
                f"{device.max_rate_sps:.6g} S/s")
    if req.transports and not any(t in device.transports for t in req.transports):
        return (f"case requires transport {' or '.join(req.transports)}, device {alias!r} has "
                f"{', '.join(device.transports)}")
    return None
