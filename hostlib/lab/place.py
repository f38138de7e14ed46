"""What a place offers and what a run asks of one.

A place is a labgrid place whose resources are hilrig devices (one `HilrigDevice`
resource per rig-file device, published by `hilrig lab exporter`). Each resource's
parameters are an `ExportedDevice`: the rig file and alias it comes from and what the
device offers. A place's `Capabilities` are those of its devices together.

A run asks with `--place NAME` or `--place-tags TERMS`: comma-separated terms, each
`key=value` or, for a number, `key>=value` (also `>`, `<=`, `<`). Keys that name a
capability (`CAPABILITY_KEYS`: driver, radio, channels, max_rate, transport, direction,
firmware, rig) are judged by hilrig on the devices the exporter publishes now, since
labgrid's tags hold one exact value each (`channels>=2`, `max_rate>=61.44 MS/s`,
`transport=usb3`); any other key is a labgrid tag the place must carry as written
(`bench=b1`), and goes into labgrid's reservation filter too.
"""
from __future__ import annotations

import enum
import os
import re
import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from .._exceptions import ConfigError, ConfigIssue, UnitError
from ..rig.args import RadioArgs, UsbArgs
from ..rig.images import load_images, manifest_path
from ..rig.inventory import DeviceEntry
from ..units import format_quantity, parse_quantity

__all__ = ["CAPABILITY_KEYS", "RESOURCE_CLASS", "Capabilities", "ExportedDevice", "PlaceRequest", "RunsOn", "Term",
           "parse_place_tags"]

# The labgrid resource class of a hilrig device (exporter config, place matches).
RESOURCE_CLASS = "HilrigDevice"
# labgrid's rules for tag keys and values (labgrid.remote.common.TAG_KEY / TAG_VAL).
TAG_KEY = re.compile(r"^[a-z][a-z0-9_]+$")
TAG_VALUE = re.compile(r"^[a-z0-9_]*$")

# A lab's defaults (docs/scale-out.md): how long a run waits for a place, and how long a
# holder's heartbeat may be silent before `hilrig lab janitor` frees its place.
DEFAULT_PLACE_TIMEOUT_S = 600.0
DEFAULT_LEASE_S = 90.0
DEFAULT_COORDINATOR = "127.0.0.1:20408"   # labgrid's own default port, on this host only


def default_coordinator() -> str:
    """$LG_COORDINATOR (labgrid's own variable), else labgrid's port on this host."""
    return os.environ.get("LG_COORDINATOR", "").strip() or DEFAULT_COORDINATOR


def _split_list(value: object) -> object:
    # labgrid carries scalars only: a list travels as "a,b,c".
    return tuple(v for v in value.split(",") if v) if isinstance(value, str) else value


Names = Annotated[tuple[str, ...], BeforeValidator(_split_list)]


def firmware_image(entry: DeviceEntry) -> str:
    """The image the lab's manifest (firmware/images.yaml, `hilrig rig check`) says this
    device runs, as `image@version`; a simulator's device core (rtl) when no manifest
    is here; "" for a device no image applies to. What a device actually ran is in
    each result's device_versions."""
    manifest = manifest_path()
    if manifest is not None:
        image = next((im for im in load_images(manifest) if im.applies_to(entry)), None)
        if image is not None:
            return f"{image.image}@{image.version}"
    return entry.firmware or ""


class ExportedDevice(BaseModel):
    """One hilrig device as its exporter publishes it (a labgrid resource's parameters)."""

    model_config = ConfigDict(extra="ignore", frozen=True)  # labgrid adds its own keys (extra)
    rig: str = Field(min_length=1)        # the rig file on the rig host (absolute)
    device: str = Field(min_length=1)     # the device's alias there
    driver: str
    radio: str                            # b200, hilrig, sim ... (what a technician calls the radio)
    channels: int = Field(ge=1)
    max_rate_sps: float = Field(gt=0)
    transports: Names                     # the device's links; usb2/usb3 for a usb board's speed
    directions: Names
    firmware: str = ""                    # image@version (firmware_image); "" when none is known
    probe_interval_s: float = Field(default=1.0, gt=0)
    # Where runs open the device (hostlib.lab.remote): "" runs where the client is; else
    # the ssh destination of the rig host, the hilrig command and the checkout there.
    ssh: str = ""
    hilrig: str = ""
    checkout: str = ""

    @classmethod
    def of(cls, rig_file: str, entry: DeviceEntry, probe_interval_s: float = 1.0,
           runs_on: RunsOn | None = None) -> ExportedDevice:
        transports = list(entry.transports)
        if isinstance(entry.args, UsbArgs):
            transports.append("usb3" if entry.args.speed == "super" else "usb2")
        radio = entry.driver
        if isinstance(entry.args, RadioArgs):
            radio = str(entry.args.get("type") or entry.args.get("driver") or entry.driver)
        return cls(rig=rig_file, device=entry.alias, driver=entry.driver, radio=radio, channels=entry.channels,
                   max_rate_sps=entry.max_rate_sps, transports=tuple(transports), directions=entry.directions,
                   firmware=firmware_image(entry), probe_interval_s=probe_interval_s,
                   **(runs_on.params() if runs_on is not None else {}))

    def params(self) -> dict[str, str | int | float]:
        """The labgrid resource parameters (scalars only)."""
        return {"rig": self.rig, "device": self.device, "driver": self.driver, "radio": self.radio,
                "channels": self.channels, "max_rate_sps": self.max_rate_sps,
                "transports": ",".join(self.transports), "directions": ",".join(self.directions),
                "firmware": self.firmware, "probe_interval_s": self.probe_interval_s,
                **({"ssh": self.ssh, "hilrig": self.hilrig, "checkout": self.checkout} if self.ssh else {})}


@dataclass(frozen=True)
class RunsOn:
    """A rig host that runs its place's cases itself (exporter-config --ssh): how a client
    reaches it and runs hilrig there. Defaults are the exporting host's own."""

    ssh: str                   # [user@]host or a Host of the lab's ssh config; never a password
    hilrig: str = ""           # default: this interpreter, `python -m hostlib`
    checkout: str = ""         # default: the working directory

    def params(self) -> dict[str, str]:
        return {"ssh": self.ssh, "hilrig": self.hilrig or shlex.join([sys.executable, "-m", "hostlib"]),
                "checkout": self.checkout or os.getcwd()}


def exported_device(params: Mapping[str, object], where: str) -> ExportedDevice:
    """A resource's parameters as an ExportedDevice; ConfigError naming the resource."""
    try:
        return ExportedDevice.model_validate(dict(params))
    except ValidationError as exc:
        raise ConfigError(ConfigIssue("", None, where, f"not a hilrig device: {exc.errors()[0]['msg']}")) from None


@dataclass(frozen=True)
class Capabilities:
    """What a place's devices offer together."""

    drivers: frozenset[str]
    radios: frozenset[str]
    channels: int
    max_rate_sps: float
    transports: frozenset[str]
    directions: frozenset[str]
    firmware: frozenset[str]
    rigs: frozenset[str]

    @classmethod
    def of(cls, devices: Iterable[ExportedDevice]) -> Capabilities:
        ds = list(devices)
        return cls(drivers=frozenset(d.driver for d in ds), radios=frozenset(d.radio for d in ds),
                   channels=max((d.channels for d in ds), default=0),
                   max_rate_sps=max((d.max_rate_sps for d in ds), default=0.0),
                   transports=frozenset(t for d in ds for t in d.transports),
                   directions=frozenset(x for d in ds for x in d.directions),
                   firmware=frozenset(d.firmware for d in ds if d.firmware),
                   rigs=frozenset(_tag_value(d.rig.rsplit("/", 1)[-1].removesuffix(".yaml")) for d in ds))

    def tags(self) -> dict[str, str]:
        """The labgrid tags `hilrig lab register` sets: one value per key, lists joined by _."""
        return {"driver": _joined(self.drivers), "radio": _joined(self.radios), "channels": str(self.channels),
                "max_rate": str(round(self.max_rate_sps)), "transport": _joined(self.transports),
                "direction": _joined(self.directions), "firmware": _joined(self.firmware), "rig": _joined(self.rigs)}

    def values(self, key: str) -> frozenset[str]:
        return {"driver": self.drivers, "radio": self.radios, "transport": self.transports,
                "direction": self.directions, "firmware": self.firmware, "rig": self.rigs}[key]

    def number(self, key: str) -> float:
        return float(self.channels) if key == "channels" else self.max_rate_sps


def _tag_value(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_")


def _joined(values: frozenset[str]) -> str:
    return "_".join(sorted(_tag_value(v) for v in values))


class Op(enum.StrEnum):
    EQ = "="
    GE = ">="
    GT = ">"
    LE = "<="
    LT = "<"


NUMERIC_KEYS = ("channels", "max_rate")
SET_KEYS = ("driver", "radio", "transport", "direction", "firmware", "rig")
CAPABILITY_KEYS = (*SET_KEYS, *NUMERIC_KEYS)
_TERM = re.compile(r"^\s*(?P<key>[a-z][a-z0-9_]*)\s*(?P<op>>=|<=|=|>|<)\s*(?P<value>.+?)\s*$")


@dataclass(frozen=True)
class Term:
    """One term of --place-tags: a capability predicate, or a labgrid tag as written."""

    key: str
    op: Op
    text: str                   # the value as written
    number: float | None = None  # channels / max_rate, in their unit (S/s for max_rate)

    @property
    def capability(self) -> bool:
        return self.key in CAPABILITY_KEYS

    def __str__(self) -> str:
        return f"{self.key}{self.op}{self.text}"

    def why_not(self, caps: Capabilities, tags: Mapping[str, str]) -> str | None:
        """Why a place with these capabilities and labgrid tags does not fit, or None."""
        if self.key in NUMERIC_KEYS and self.number is not None:
            have = caps.number(self.key)
            ok = {Op.EQ: have == self.number, Op.GE: have >= self.number, Op.GT: have > self.number,
                  Op.LE: have <= self.number, Op.LT: have < self.number}[self.op]
            shown = format_quantity(have, "rate") if self.key == "max_rate" else f"{have:g}"
            return None if ok else f"{self.key} is {shown}, not {self.op} {self.text}"
        if self.key in SET_KEYS:
            have_set = caps.values(self.key)
            offered = ", ".join(sorted(have_set)) or "none"
            return None if self.text in have_set else f"{self.key} {self.text} not offered ({offered})"
        have_tag = tags.get(self.key)
        return None if have_tag == self.text else f"tag {self.key}={have_tag or '(none)'}, not {self.text}"


def parse_place_tags(text: str, option: str = "--place-tags") -> tuple[Term, ...]:
    """'driver=sim,channels>=2,max_rate>=61.44 MS/s' -> terms; ConfigError naming the term."""
    terms = []
    for raw in (part for part in text.split(",") if part.strip()):
        m = _TERM.match(raw)
        if not m:
            raise ConfigError(ConfigIssue("", None, option, f"{raw.strip()!r} is not key=value or key>=number"))
        key, op, value = m.group("key"), Op(m.group("op")), m.group("value")
        number = None
        if key in NUMERIC_KEYS:
            try:
                number = parse_quantity(value, "rate") if key == "max_rate" else float(value)
            except (UnitError, ValueError):
                raise ConfigError(ConfigIssue("", None, option, f"{raw.strip()!r}: {key} takes a number"
                                              + (" with a rate unit (61.44 MS/s)" if key == "max_rate" else "")
                                              )) from None
        elif op is not Op.EQ:
            raise ConfigError(ConfigIssue("", None, option, f"{raw.strip()!r}: only channels and max_rate compare "
                                          f"with {op}; {key} takes ="))
        elif key not in CAPABILITY_KEYS and not (TAG_KEY.match(key) and TAG_VALUE.match(value)):
            raise ConfigError(ConfigIssue("", None, option, f"{raw.strip()!r}: a labgrid tag is lower-case "
                                          "letters, digits and _ (key at least 2 characters)"))
        terms.append(Term(key, op, value, number))
    if not terms:
        raise ConfigError(ConfigIssue("", None, option, "give at least one term: key=value or key>=number"))
    return tuple(terms)


@dataclass(frozen=True)
class PlaceRequest:
    """What a run asks of the lab: a place by name or by terms, within a deadline."""

    coordinator: str                 # labgrid coordinator HOST:PORT
    name: str | None = None
    terms: tuple[Term, ...] = ()
    timeout_s: float = DEFAULT_PLACE_TIMEOUT_S
    lease_s: float = DEFAULT_LEASE_S
    heartbeat_s: float | None = None  # None: a sixth of the lease

    def describe(self) -> str:
        return f"place {self.name}" if self.name else f"a place with {','.join(str(t) for t in self.terms)}"

    def labgrid_filter(self, place: str) -> dict[str, str]:
        """The reservation filter for one candidate: its name and the plain tags asked for."""
        return {"name": place, **{t.key: t.text for t in self.terms if not t.capability}}


def place_request(place: str | None, place_tags: str | None, *, timeout_s: float | None = None,
                  coordinator: str | None = None, lease_s: float | None = None) -> PlaceRequest | None:
    """The request the front-ends build from their options (hilrig run --place/--place-tags,
    Robot's PLACE/PLACE_TAGS, pytest's --place/--place-tags); None for a local run."""
    place = (place or "").strip() or None
    tags_text = (place_tags or "").strip()
    if place is None and not tags_text:
        return None
    if timeout_s is not None and timeout_s < 0:
        raise ConfigError(ConfigIssue("", None, "--place-timeout", f"{timeout_s:g} s: give 0 or more seconds"))
    if lease_s is not None and lease_s <= 0:
        raise ConfigError(ConfigIssue("", None, "--lease", f"{lease_s:g} s: give a positive number of seconds"))
    return PlaceRequest(coordinator=(coordinator or "").strip() or default_coordinator(), name=place,
                        terms=parse_place_tags(tags_text) if tags_text else (),
                        timeout_s=DEFAULT_PLACE_TIMEOUT_S if timeout_s is None else timeout_s,
                        lease_s=DEFAULT_LEASE_S if lease_s is None else lease_s)
