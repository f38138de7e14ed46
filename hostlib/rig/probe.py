"""What a library found attached to this host, and one rig device's check row
(`hilrig rig probe`, `hilrig rig check RIG`). Each driver probes for itself
(hostlib.drivers: Driver.probe, Driver.matches); hostlib.drivers.probe asks them all."""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CheckRow", "Found", "Probe"]


@dataclass
class Found:
    kind: str                 # the driver that found it: "uhd" | "soapy" | "sim" | "usb"
    args: dict[str, str]      # what the library reported (type, serial, driver, label ...), as text

    @property
    def serial(self) -> str | None:
        return self.args.get("serial")

    def line(self) -> str:
        return f"{self.kind:5s} " + ", ".join(f"{k}={v}" for k, v in sorted(self.args.items()))


@dataclass
class Probe:
    found: list[Found] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)   # a library that could not be asked, and why

    def add(self, other: Probe) -> None:
        self.found += [f for f in other.found if f not in self.found]
        self.problems += other.problems


@dataclass
class CheckRow:
    alias: str
    driver: str
    ok: bool
    detail: str
    found: Found | None = None   # the attached device that matched
