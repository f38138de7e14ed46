"""Load a rig inventory file with the same error quality as case files (file, line, field, hint)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator
from ruamel.yaml.comments import CommentedMap

from hostlib._exceptions import ConfigError, ConfigIssue
from hostlib._installed import packaged_rig
from hostlib.dsl.schema import MAX_RATE_SPS, NonEmpty, quantity
from hostlib.dsl.yamlsrc import dotted, line_of, load_yaml, pydantic_issues, to_plain
from hostlib.rig.args import USB_ARG_HINTS, ArgsModel, RadioArgs, UsbArgs, args_model
from hostlib.rig.requires import Fit, unmet_requirement

if TYPE_CHECKING:  # pragma: no cover
    from hostlib.dsl.case import Case

__all__ = ["DeviceEntry", "Rig", "default_rig_path", "load_rig", "resolve_rig_path"]

DEFAULT_RIG = "sim"


@dataclass(frozen=True)
class DeviceEntry:
    alias: str
    driver: str                         # "sim" | "uhd" | "soapy" | "usb"
    args: ArgsModel                     # the driver's args (hostlib.rig.args), typed by `driver`
    serial: str | None
    channels: int                       # most channels the device streams at once
    max_rate_sps: float                 # highest sample rate the device (and its link) supports
    directions: tuple[str, ...]         # subset of rx, tx, loopback
    transports: tuple[str, ...]         # subset of udp, shm
    fifo_frames: int | None = None      # device FIFO depth in frames (simulator), None = driver default
    firmware: str | None = None         # sim: the device core, "model" (C++) or "rtl" (firmware/rtl in Verilator)
    line: int | None = None             # where the entry is written
    loopback: dict[str, str] = field(default_factory=dict)  # attached cabling (port -> port)

    def describe_match(self) -> str:
        """What identifies the device in messages: its args and serial as written."""
        want = ", ".join(f"{k}={v}" for k, v in self.args.given().items())
        if self.serial:
            want += (", " if want else "") + f"serial={self.serial}"
        return want or "(any)"

    def unsupported_reason(self, case: Case) -> str | None:
        """Why this device cannot run `case` (a SKIP reason), or None if it can. The
        engine SKIPs with this reason before it opens anything."""
        if case.host == "gnuradio":
            # The flowgraph's source is the device's: rig_source (sim: udp, tcp, shm),
            # soapy.source (soapy), usrp_source (uhd); a libusb board has no GNU Radio source.
            if self.driver not in ("sim", "soapy", "uhd"):
                return f"host: gnuradio has no GNU Radio source for device {self.alias!r} (driver {self.driver})"
            if self.driver == "sim" and case.transport.kind not in ("udp", "tcp", "shm"):
                return (f"host: gnuradio on the simulator: rig_source has no {case.transport.kind} transport "
                        "(udp, tcp, shm)")
        if case.signal is not None:
            reason = self._rf_reason()
            if reason:
                return reason
        if case.channels > self.channels:
            return f"case needs {case.channels} channels, device {self.alias!r} has {self.channels}"
        # rx+tx needs a device that does both (or lists rx+tx itself).
        wanted = ("rx", "tx") if case.direction == "rx+tx" and "rx+tx" not in self.directions else (case.direction,)
        if any(d not in self.directions for d in wanted):
            return (f"device {self.alias!r} does not support direction {case.direction} "
                    f"(has {', '.join(self.directions)})")
        # A UHD radio streams over its own link (usb, 10 GbE); the case's transport
        # only sizes its frames, so the kind is not compared (docs/drivers.md).
        if self.driver != "uhd" and case.transport.kind not in self.transports:
            return (f"device {self.alias!r} does not support transport {case.transport.kind} "
                    f"(has {', '.join(self.transports)})")
        if self.driver == "sim" and case.direction == "loopback" and case.transport.kind == "tcp":
            return "the simulator loops back over udp, shm or usb, not tcp (tcp: rx, tx, rx+tx)"
        if case.rate_sps > self.max_rate_sps:
            return (f"device {self.alias!r} is limited to {self.max_rate_sps:g} S/s, "
                    f"the case rate is {case.rate_sps:g} S/s")
        return None

    def _rf_reason(self) -> str | None:
        """Why this device cannot run an RF case (its signal: generated and received with
        a known channel), or None. The simulator's C++ device core generates it; a radio
        needs a signal source: a declared TX->RX loopback or an external generator."""
        if self.driver == "sim":
            if self.firmware == "rtl":
                return (f"device {self.alias!r} runs the RTL device core (firmware: rtl), which sends the counter "
                        "pattern only; an RF case needs the simulator's C++ core (firmware: model)")
            return None
        if not self.loopback:
            return (f"an RF case needs a signal at the receiver: device {self.alias!r} (driver {self.driver}) declares "
                    "no TX->RX loopback (loopback: in the rig file) and no external generator; the simulator "
                    "generates it")
        cabling = ", ".join(f"{k}->{v}" for k, v in self.loopback.items())
        return (f"an RF case over device {self.alias!r}'s loopback ({cabling}) "
                f"needs its TX leg to send the signal, which the {self.driver} driver does not do yet; "
                "the simulator generates it")

    def can_run(self, case: Case) -> Fit:
        """Whether this device can run `case`: what it streams (direction, channels,
        transport, rate, host side) and what the case `requires:`. The engine SKIPs with
        `why_not` before it opens anything; `hilrig validate --rig` reports the same."""
        return Fit(self.unsupported_reason(case) or unmet_requirement(case, self))


@dataclass(frozen=True)
class Rig:
    name: str
    file: str
    devices: dict[str, DeviceEntry]
    results: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    require_devices: bool = False       # a listed device that is not attached fails the case (hardware rigs)


class _DeviceModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    driver: Literal["sim", "uhd", "soapy", "usb"]
    args: dict[str, object] = Field(default_factory=dict)   # typed per driver by load_rig (hostlib.rig.args)
    serial: NonEmpty | None = None
    channels: Annotated[int, Field(strict=True, ge=1, le=255)] = 1
    max_rate: Annotated[float, quantity("rate", minimum=0, exclusive=True, maximum=MAX_RATE_SPS, what=" S/s")]
    directions: list[Literal["rx", "tx", "loopback", "rx+tx"]] = Field(default=["rx", "tx", "loopback"],
                                                               min_length=1)
    # udp/tcp/shm: the simulator's host links; usb/pcie: a radio's own link (docs/drivers.md)
    transports: list[Literal["udp", "tcp", "shm", "usb", "pcie"]] = Field(default=["udp", "shm"], min_length=1)
    loopback: dict[str, str] = Field(default_factory=dict)   # attached cabling, e.g. {TX/RX: RX2}
    fifo_frames: Annotated[int, Field(strict=True, ge=1, le=1_000_000)] | None = None
    # sim only: the simulator's device core; rtl = firmware/rtl/loopback_top as a Verilator
    # model (hilrig-sim --firmware rtl, docs/firmware.md "RTL in the loop")
    firmware: Literal["model", "rtl"] | None = None

    @model_validator(mode="after")
    def _firmware_is_sim_only(self) -> _DeviceModel:
        if self.firmware is not None and self.driver != "sim":
            raise ValueError(f"firmware: {self.firmware} selects the simulator's device core; "
                             f"a {self.driver} device runs what is flashed on it (hilrig rig check compares it)")
        return self

    @model_validator(mode="after")
    def _usb_entry(self) -> _DeviceModel:
        """driver: usb: a device to look for, transports default [usb]."""
        if self.driver != "usb":
            return self
        if not self.args.get("vid_pid") and not self.serial:
            raise ValueError("a usb device needs args.vid_pid ('VVVV:PPPP', as lsusb shows it) or serial, or both")
        if "transports" not in self.model_fields_set:
            self.transports = ["usb"]
        if self.transports != ["usb"]:
            raise ValueError(f"a usb device streams over usb only; transports: [usb] (got {self.transports})")
        return self


def _device_args(file: str, tree: CommentedMap, alias: str, model: _DeviceModel) -> tuple[ArgsModel | None,
                                                                                       list[ConfigIssue]]:
    """A device's args as its driver's model, or the issues (file:line of each key)."""
    cls = args_model(model.driver)
    where = ("devices", alias, "args")
    if issubclass(cls, RadioArgs):
        refused = cls.refused_keys(model.args)
        if refused:
            return None, [ConfigIssue(file, line_of(tree, (*where, key)), dotted((*where, key)), why)
                          for key, why in refused.items()]
    try:
        return cls.model_validate(model.args), []
    except ValidationError as e:
        issues = pydantic_issues(e, cls, file, tree, prefix=where)
        return None, [ConfigIssue(i.file, i.line, i.field, _usb_hint(i.field, i.message) if cls is UsbArgs
                                  else i.message) for i in issues]


def _usb_hint(field: str, message: str) -> str:
    key = field.rsplit(".", 1)[-1]
    return f"{USB_ARG_HINTS[key]} ({message})" if key in USB_ARG_HINTS else message


# Keys that would put a secret into the (committed) rig file; the hint says what to write instead.
INLINE_SECRETS = {"token": "token_env: VARIABLE or token_file: PATH",
                  "password": "password_env: VARIABLE or password_file: PATH"}
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"), Field(strict=True)]


class _InfluxModel(BaseModel):
    """results.influxdb: where the outbox ships to (docs/results.md). Secrets come from the
    environment or a file named here, never from the YAML itself."""
    model_config = ConfigDict(extra="forbid")
    url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s/]+(/\S*)?$"), Field(strict=True)]
    api: Literal["v1", "v2"]
    database: NonEmpty | None = None          # v1
    retention_policy: NonEmpty | None = None  # v1, optional (server default otherwise)
    org: NonEmpty | None = None               # v2
    bucket: NonEmpty | None = None            # v2
    username: NonEmpty | None = None
    password_env: EnvName | None = None
    password_file: NonEmpty | None = None
    token_env: EnvName | None = None
    token_file: NonEmpty | None = None
    tls_verify: Annotated[bool, Field(strict=True)] = True
    ca_file: NonEmpty | None = None
    timeout: Annotated[float, quantity("time", minimum=0, exclusive=True, what=" s", maximum=3600.0)] = 10.0
    batch_lines: Annotated[int, Field(strict=True, ge=1, le=100_000)] = 5000

    @model_validator(mode="after")
    def _consistent(self) -> _InfluxModel:
        problems = []
        if self.api == "v1" and not self.database:
            problems.append("api v1 needs database (and optionally retention_policy)")
        if self.api == "v2" and not (self.org and self.bucket):
            problems.append("api v2 needs org and bucket")
        if self.password_env and self.password_file:
            problems.append("give password_env or password_file, not both")
        if self.token_env and self.token_file:
            problems.append("give token_env or token_file, not both")
        if (self.password_env or self.password_file) and not self.username:
            problems.append("a password needs username")
        if self.api == "v1" and (self.token_env or self.token_file):
            problems.append("api v1 authenticates with username and password_env/password_file")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class _ResultsModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    outbox: NonEmpty = "results/outbox"        # always on
    evidence: NonEmpty | None = None
    influxdb: _InfluxModel | None = None       # optional: ship the outbox there after every run


class _RigModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: NonEmpty
    description: str = ""
    devices: dict[NonEmpty, _DeviceModel] = Field(min_length=1)
    results: _ResultsModel = Field(default_factory=_ResultsModel)
    # true on a hardware bench: a listed device that is not attached is an ERROR (device), not a SKIP
    require_devices: Annotated[bool, Field(strict=True)] = False


def load_rig(path: str | Path) -> Rig:
    """Parse and validate a rig file; ConfigError listing every issue (with lines) if it is wrong."""
    file = str(path)
    if not Path(path).exists():
        raise ConfigError(ConfigIssue(file, None, "", f"no such rig file; {_known_rigs_hint()}"))
    src, issues = load_yaml(path)
    if src is None:
        raise ConfigError(issues)
    tree = src.tree
    if not isinstance(tree, CommentedMap):
        raise ConfigError(ConfigIssue(file, 1, "", "a rig file is a mapping with name, devices and results"))
    secret_issues = _inline_secret_issues(file, tree)
    try:
        m = _RigModel.model_validate(to_plain(tree))
    except ValidationError as e:
        raise ConfigError(sorted(secret_issues + [i for i in pydantic_issues(e, _RigModel, file, tree)
                                                  if i.field not in {s.field for s in secret_issues}],
                                 key=lambda i: (i.line or 0, i.field))) from None
    if secret_issues:
        raise ConfigError(secret_issues)
    devices = {}
    arg_issues: list[ConfigIssue] = []
    for alias, d in m.devices.items():
        args, issues = _device_args(file, tree, alias, d)
        arg_issues += issues
        if args is None:
            continue
        devices[alias] = DeviceEntry(
            alias=alias, driver=d.driver, args=args, serial=d.serial, channels=d.channels,
            max_rate_sps=d.max_rate, directions=tuple(dict.fromkeys(d.directions)),
            transports=tuple(dict.fromkeys(d.transports)), fifo_frames=d.fifo_frames, firmware=d.firmware,
            loopback=dict(d.loopback),
            line=line_of(tree, ("devices", alias)))
    if arg_issues:
        raise ConfigError(sorted(arg_issues, key=lambda i: (i.line or 0, i.field)))
    results = m.results.model_dump()
    if results["evidence"] is None:
        del results["evidence"]
    if results["influxdb"] is not None:
        results["influxdb"]["line"] = line_of(tree, ("results", "influxdb"))  # for use-time errors
    return Rig(name=m.name, file=file, devices=devices, results=results, description=m.description,
               require_devices=m.require_devices)


def _known_rigs_hint() -> str:
    # The rigs a bare name can reach (resolve_rig_path): ./rigs/ and those the package carries.
    names = sorted({p.stem for p in (Path.cwd() / "rigs").glob("*.yaml")}
                   | {p.stem for p in packaged_rig("*").parent.glob("*.yaml")})
    return (f"rigs by name: {', '.join(names)} (rigs/<name>.yaml), or give a path" if names
            else "give the path of a rig file")


def _inline_secret_issues(file: str, tree: CommentedMap) -> list[ConfigIssue]:
    """A token or password written into the rig file is refused (the file is committed)."""
    section = tree.get("results")
    influx = section.get("influxdb") if isinstance(section, CommentedMap) else None
    if not isinstance(influx, CommentedMap):
        return []
    return [ConfigIssue(file, line_of(tree, ("results", "influxdb", key)), f"results.influxdb.{key}",
                        f"secrets never go into a rig file (it is committed and copied into evidence); "
                        f"write {hint}")
            for key, hint in INLINE_SECRETS.items() if key in influx]


def resolve_rig_path(name_or_path: str | Path) -> Path:
    """A path (anything with a '/' or a .yaml/.yml suffix, or an existing file) as
    given; a name: rigs/<name>.yaml in the current directory (a lab's checkout), else
    the rig of that name the package carries (the simulator's), else the former, so
    that the error names where it was looked for."""
    text = str(name_or_path)
    p = Path(text)
    if "/" in text or p.suffix in (".yaml", ".yml") or p.exists():
        return p
    local = Path.cwd() / "rigs" / f"{text}.yaml"
    packaged = packaged_rig(text)
    return packaged if not local.exists() and packaged.is_file() else local


def default_rig_path(name_or_path: str | Path | None = None) -> Path:
    """The rig file: `name_or_path` if given (e.g. --rig), else $HILRIG_RIG (a path, or a
    name resolved as above), else the rig named "sim"."""
    if name_or_path:
        return resolve_rig_path(name_or_path)
    env = os.environ.get("HILRIG_RIG", "").strip()
    return resolve_rig_path(env or DEFAULT_RIG)
