"""Load a rig inventory file with the same error quality as case files (file, line, field, hint)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ruamel.yaml.comments import CommentedMap

from hostlib._exceptions import ConfigError, ConfigIssue
from hostlib.dsl.schema import NonEmpty, quantity
from hostlib.dsl.yamlsrc import line_of, load_yaml, pydantic_issues, to_plain

if TYPE_CHECKING:  # pragma: no cover
    from hostlib.dsl.case import Case

__all__ = ["DeviceEntry", "Rig", "default_rig_path", "load_rig", "resolve_rig_path", "REPO_ROOT"]

REPO_ROOT = Path(__file__).resolve().parents[2]
DRIVERS = ("sim", "uhd", "soapy")


@dataclass(frozen=True)
class DeviceEntry:
    alias: str
    driver: str                         # "sim" | "uhd" | "soapy"
    args: dict[str, Any]                # driver arguments (UHD/Soapy device args, sim options)
    serial: str | None
    channels: int                       # most channels the device streams at once
    max_rate_sps: float                 # highest sample rate the device (and its link) supports
    directions: tuple[str, ...]         # subset of rx, tx, loopback
    transports: tuple[str, ...]         # subset of udp, shm
    fifo_frames: int | None = None      # device FIFO depth in frames (simulator), None = driver default
    line: int | None = None             # where the entry is written

    def unsupported_reason(self, case: "Case") -> str | None:
        """Why this device cannot run `case` (a SKIP reason), or None if it can."""
        if case.direction not in self.directions:
            return f"device {self.alias!r} does not support direction {case.direction} (has {', '.join(self.directions)})"
        if case.transport.kind not in self.transports:
            return (f"device {self.alias!r} does not support transport {case.transport.kind} "
                    f"(has {', '.join(self.transports)})")
        if case.channels > self.channels:
            return f"case needs {case.channels} channels, device {self.alias!r} has {self.channels}"
        if case.rate_sps > self.max_rate_sps:
            return (f"case rate {case.rate_sps:.6g} S/s is above device {self.alias!r} "
                    f"maximum {self.max_rate_sps:.6g} S/s")
        return None


@dataclass(frozen=True)
class Rig:
    name: str
    file: str
    devices: dict[str, DeviceEntry]
    results: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    def device(self, alias: str) -> DeviceEntry | None:
        return self.devices.get(alias)


class _DeviceModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    driver: Literal["sim", "uhd", "soapy"]
    args: dict[str, Any] = Field(default_factory=dict)
    serial: NonEmpty | None = None
    channels: Annotated[int, Field(strict=True, ge=1, le=255)] = 1
    max_rate: Annotated[float, quantity("rate", minimum=0, exclusive=True)]
    directions: list[Literal["rx", "tx", "loopback"]] = Field(default_factory=lambda: ["rx", "tx", "loopback"],
                                                               min_length=1)
    transports: list[Literal["udp", "shm"]] = Field(default_factory=lambda: ["udp", "shm"], min_length=1)
    fifo_frames: Annotated[int, Field(strict=True, ge=1, le=1_000_000)] | None = None


class _ResultsModel(BaseModel):
    # Sinks beyond the outbox (InfluxDB ...) come with later issues; accept their sections as mappings.
    model_config = ConfigDict(extra="allow")
    outbox: NonEmpty = "results/outbox"


class _RigModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: NonEmpty
    description: str = ""
    devices: dict[NonEmpty, _DeviceModel] = Field(min_length=1)
    results: _ResultsModel = Field(default_factory=_ResultsModel)


def load_rig(path: str | Path) -> Rig:
    """Parse and validate a rig file; ConfigError listing every issue (with lines) if it is wrong."""
    file = str(path)
    src, issues = load_yaml(path)
    if src is None:
        raise ConfigError(issues)
    tree = src.tree
    if not isinstance(tree, CommentedMap):
        raise ConfigError(ConfigIssue(file, 1, "", "a rig file is a mapping with name, devices and results"))
    try:
        m = _RigModel.model_validate(to_plain(tree))
    except ValidationError as e:
        raise ConfigError(sorted(pydantic_issues(e, _RigModel, file, tree),
                                 key=lambda i: (i.line or 0, i.field))) from None
    devices = {}
    for alias, d in m.devices.items():
        devices[alias] = DeviceEntry(
            alias=alias, driver=d.driver, args=dict(d.args), serial=d.serial, channels=d.channels,
            max_rate_sps=d.max_rate, directions=tuple(dict.fromkeys(d.directions)),
            transports=tuple(dict.fromkeys(d.transports)), fifo_frames=d.fifo_frames,
            line=line_of(tree, ("devices", alias)))
    return Rig(name=m.name, file=file, devices=devices, results=m.results.model_dump(),
               description=m.description)


def resolve_rig_path(name_or_path: str | Path) -> Path:
    """'sim' -> <repo>/rigs/sim.yaml; anything with a '/' or a .yaml/.yml suffix is a path."""
    text = str(name_or_path)
    p = Path(text)
    if "/" in text or p.suffix in (".yaml", ".yml") or p.exists():
        return p
    return REPO_ROOT / "rigs" / f"{text}.yaml"


def default_rig_path(name_or_path: str | Path | None = None) -> Path:
    """The rig file: `name_or_path` if given (e.g. --rig), else $HILRIG_RIG (a path, or a
    name resolved to rigs/<name>.yaml), else rigs/sim.yaml."""
    if name_or_path:
        return resolve_rig_path(name_or_path)
    env = os.environ.get("HILRIG_RIG", "").strip()
    return resolve_rig_path(env) if env else REPO_ROOT / "rigs" / "sim.yaml"
