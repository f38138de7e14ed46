"""What is attached to this host (UHD find, SoapySDR enumerate, the simulator), and
how that compares with a rig file (`hilrig rig probe`, `hilrig rig check RIG`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..drivers.radio import DRIVER_KEYS

__all__ = ["CheckRow", "Found", "check_rig", "probe"]


@dataclass
class Found:
    kind: str                 # "uhd" | "soapy" | "sim"
    args: dict[str, Any]      # what the library reported (type, serial, driver, label ...)

    @property
    def serial(self) -> str | None:
        return self.args.get("serial")

    def line(self) -> str:
        return f"{self.kind:5s} " + ", ".join(f"{k}={v}" for k, v in sorted(self.args.items()))


@dataclass
class Probe:
    found: list[Found] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)   # a library that could not be asked, and why


def probe(soapy_args: tuple[str, ...] = ("", "driver=hilrig")) -> Probe:
    """Ask every library; a missing library is a problem line, never an exception."""
    from ..drivers.sim import find_sim_binary
    from ..drivers.soapy import ensure_plugin_path
    from ..transports import native

    out = Probe()
    try:
        nat = native()
    except Exception as exc:  # noqa: BLE001
        out.problems.append(str(exc))
        nat = None
    if nat is not None and getattr(nat, "HAVE_UHD", False):
        try:
            out.found += [Found("uhd", dict(a)) for a in nat.UhdRadio.find("")]
        except RuntimeError as exc:
            out.problems.append(f"UHD find failed: {exc}")
    elif nat is not None:
        out.problems.append("UHD: hostlib._native was built without libuhd")
    if nat is not None and getattr(nat, "HAVE_SOAPY", False):
        ensure_plugin_path()
        seen = set()
        for args in soapy_args:
            try:
                for a in nat.SoapyRadio.enumerate(args):
                    key = tuple(sorted(a.items()))
                    if key not in seen:
                        seen.add(key)
                        out.found.append(Found("soapy", dict(a)))
            except RuntimeError as exc:
                out.problems.append(f"SoapySDR enumerate {args!r} failed: {exc}")
    elif nat is not None:
        out.problems.append("SoapySDR: hostlib._native was built without libsoapysdr")
    try:
        out.found.append(Found("sim", {"binary": find_sim_binary()}))
    except Exception as exc:  # noqa: BLE001
        out.problems.append(str(exc))
    return out


@dataclass
class CheckRow:
    alias: str
    driver: str
    ok: bool
    detail: str


def _matches(entry: Any, found: Found) -> bool:
    want = {k: str(v) for k, v in (entry.args or {}).items() if k not in DRIVER_KEYS}
    if entry.serial:
        want["serial"] = str(entry.serial)
    return all(str(found.args.get(k)) == v for k, v in want.items() if k not in ("binary",))


def check_rig(rig: Any, found: Probe) -> list[CheckRow]:
    """One row per rig device: is a matching device attached?"""
    rows = []
    for alias, entry in sorted(rig.devices.items()):
        kind = {"uhd": "uhd", "soapy": "soapy", "sim": "sim"}[entry.driver]
        if kind == "sim":
            hits = [f for f in found.found if f.kind == "sim"]
        else:
            hits = [f for f in found.found if f.kind == kind and _matches(entry, f)]
        if hits:
            rows.append(CheckRow(alias, entry.driver, True, hits[0].line()))
        else:
            want = ", ".join(f"{k}={v}" for k, v in (entry.args or {}).items())
            if entry.serial:
                want += (", " if want else "") + f"serial={entry.serial}"
            rows.append(CheckRow(alias, entry.driver, False, f"no {entry.driver} device matching {want or '(any)'}"))
    return rows
