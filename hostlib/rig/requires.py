"""A case's `requires:` against a rig's device entry: None, or the SKIP reason."""
from __future__ import annotations

from typing import Any

__all__ = ["unmet_requirement"]


def unmet_requirement(case: Any, device: Any) -> str | None:
    """Why `device` cannot give what `case.requires` asks (a SKIP reason), or None."""
    req = dict(getattr(case, "requires", None) or {})
    alias = getattr(device, "alias", "?")
    channels = req.get("channels")
    if channels and channels > device.channels:
        return f"case requires {channels} channels, device {alias!r} has {device.channels}"
    missing = [d for d in req.get("directions", ()) if d not in device.directions]
    if missing:
        return (f"case requires direction {', '.join(missing)}, device {alias!r} has "
                f"{', '.join(device.directions)}")
    rate = req.get("rate_sps")
    if rate and rate > device.max_rate_sps:
        return f"case requires {rate:.6g} S/s, device {alias!r} is limited to {device.max_rate_sps:.6g} S/s"
    wanted = req.get("transports", ())
    if wanted and not any(t in device.transports for t in wanted):
        return (f"case requires transport {' or '.join(wanted)}, device {alias!r} has "
                f"{', '.join(device.transports)}")
    return None
