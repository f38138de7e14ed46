"""`hilrig rig probe` / `hilrig rig check`: every driver asked what is attached
(Driver.probe), and each rig device matched by its own driver (Driver.attached)."""
from __future__ import annotations

from .._exceptions import HilrigError
from ..rig.inventory import DeviceEntry, Rig
from ..rig.probe import CheckRow, Found, Probe
from .base import registered_drivers

__all__ = ["check_device", "check_rig", "found_by_alias", "probe_all", "probe_device"]


def probe_all() -> Probe:
    """Ask every driver's library; a missing library is a problem line, never an exception."""
    out = Probe()
    for cls in registered_drivers():
        out.add(cls.probe())
    return out


def check_rig(rig: Rig, found: Probe) -> list[CheckRow]:
    """One row per rig device: is a matching device attached?"""
    return [check_device(entry, found) for _, entry in sorted(rig.devices.items())]


def check_device(entry: DeviceEntry, found: Probe) -> CheckRow:
    """Is the device of one rig entry among `found` (its driver matches it)?"""
    from . import driver_class

    cls = driver_class(entry.driver)
    try:
        hits = cls.attached(entry, found)
        why = ""
    except HilrigError as exc:   # the library cannot be asked (not built in, no permission)
        hits, why = [], f": {exc}"
    if hits:
        return CheckRow(entry.alias, entry.driver, True, hits[0].line(), hits[0])
    return CheckRow(entry.alias, entry.driver, False,
                    f"no {entry.driver} device matching {entry.describe_match()}{why}")


def probe_device(entry: DeviceEntry) -> CheckRow:
    """Ask only the entry's own driver whether its device is attached now (a lab exporter's
    availability poll: UHD find, SoapySDR enumerate, USB VID:PID, the simulator binary)."""
    from . import driver_class

    return check_device(entry, driver_class(entry.driver).probe())


def found_by_alias(rows: list[CheckRow]) -> dict[str, Found]:
    """The attached device of each rig device that has one (for the image check)."""
    return {r.alias: r.found for r in rows if r.found is not None}
