"""The result record of one case (or sweep point) run: CaseResult, and JSON helpers.

The engine fills a CaseResult (it is mutable on purpose: the engine sets the
driver, metrics and verdict as the run proceeds); the sinks (outbox line
protocol, evidence JSON, Robot, CLI) only read it.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import math
import secrets
from pathlib import PurePath
from typing import Any, overload


class ErrorKind(enum.StrEnum):
    """Why a case could not be measured (an ERROR verdict); each kind has its exit code."""

    INFRASTRUCTURE = "infrastructure"  # the rig stopped the run: sim binary, port, lock, disk, server
    DEVICE = "device"                  # the device (or simulator) failed, vanished or is required but absent
    CONFIG = "config"                  # the case or its environment is wrong (nothing was streamed)

    @property
    def exit_code(self) -> int:
        return {ErrorKind.CONFIG: 2, ErrorKind.INFRASTRUCTURE: 3, ErrorKind.DEVICE: 4}[self]


class Verdict(enum.StrEnum):
    """The closed set of outcomes of one case (or sweep point).

    A StrEnum, so it is written as its value wherever results are text (the outbox
    `verdict` tag, evidence JSON, Robot tags); nothing parses it back but Verdict(value).
    MARGINAL is a pass whose measurement met a threshold's limit but not its marginal band.
    """

    PASS = "PASS"
    MARGINAL = "MARGINAL"
    FAIL = "FAIL"
    ERROR = "ERROR"
    SKIP = "SKIP"

    @property
    def passed(self) -> bool:
        return self in (Verdict.PASS, Verdict.MARGINAL)

    @property
    def executed(self) -> bool:
        """The case was measured (or tried to be): everything but SKIP."""
        return self is not Verdict.SKIP

    @property
    def label(self) -> str:
        """How people read it: 'PASS (marginal)' for MARGINAL."""
        return "PASS (marginal)" if self is Verdict.MARGINAL else self.value

    @property
    def tag(self) -> str:
        """The Robot tag / pytest marker: verdict:pass, verdict:marginal, verdict:error ..."""
        return f"verdict:{self.value.lower()}"


# Exit codes of a run (hilrig run, the pytest plugin's session status; README "Exit codes").
EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_NOTHING_TESTED = 5   # no case selected, or every selected case SKIPped
EXIT_INTERRUPTED = 130


def exit_code(verdict: Verdict, error_kind: ErrorKind | None = None) -> int:
    """0 PASS/MARGINAL/SKIP, 1 FAIL, ERROR by kind: 2 config, 3 infrastructure, 4 device."""
    if verdict is Verdict.FAIL:
        return EXIT_FAIL
    if verdict is Verdict.ERROR:
        return (error_kind or ErrorKind.INFRASTRUCTURE).exit_code
    return EXIT_PASS


@dataclasses.dataclass
class CaseResult:
    """What one run of one resolved case produced (docs/architecture.md)."""

    case: Any  # hostlib.dsl.Case
    rig_name: str
    device: str  # the case's device alias
    driver: str  # driver name from the rig file ("sim", "uhd", ...); "" if never reached
    run_id: str
    started_utc: str | _dt.datetime  # ISO 8601 with offset, or an aware datetime
    ended_utc: str | _dt.datetime
    verdict: Verdict
    message: str = ""  # one line
    metrics: dict[str, float] = dataclasses.field(default_factory=dict)
    thresholds: list[Any] = dataclasses.field(default_factory=list)  # ThresholdResult
    series: list[dict] = dataclasses.field(default_factory=list)  # one row a second: t_s + metrics
    error: str | None = None  # what went wrong (ERROR), without its kind
    error_kind: ErrorKind | None = None  # set exactly when verdict is ERROR
    # A rate search (hostlib.engine.search): one dict per step tried, in order:
    # {step, phase ("step" | "retry" | "confirm"), key, value, rate_sps, throughput_Bps, verdict, message}.
    steps: list[dict] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)  # the host's (e.g. rmem_max), in the message

    def __post_init__(self) -> None:
        # A closed type: "PASS" becomes Verdict.PASS, anything unknown is a ValueError.
        self.verdict = Verdict(self.verdict)
        if self.error_kind is not None:
            self.error_kind = ErrorKind(self.error_kind)

    def set_error(self, kind: ErrorKind, text: str) -> None:
        self.verdict, self.error_kind, self.error = Verdict.ERROR, ErrorKind(kind), text

    @property
    def kind(self) -> ErrorKind | None:
        """The error kind of an ERROR verdict (infrastructure when none was given), else None."""
        if self.verdict is not Verdict.ERROR:
            return None
        return self.error_kind or ErrorKind.INFRASTRUCTURE

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def exit_code(self) -> int:
        return exit_code(self.verdict, self.kind)


    def to_dict(self) -> dict:
        """A JSON-ready dict (NaN/inf become None, so the JSON stays standard)."""
        return {
            "test_name": getattr(self.case, "test_name", None),
            "case": case_to_dict(self.case),
            "rig_name": self.rig_name,
            "device": self.device,
            "driver": self.driver,
            "run_id": self.run_id,
            "started_utc": iso_utc(self.started_utc),
            "ended_utc": iso_utc(self.ended_utc),
            "verdict": self.verdict.value,
            "message": self.message,
            "error": self.error,
            "error_kind": self.kind.value if self.kind else None,
            "metrics": jsonable(self.metrics),
            "thresholds": [threshold_to_dict(t) for t in self.thresholds],
            "series": jsonable(self.series),
            "steps": jsonable(self.steps),
        }


# Fields of hostlib.dsl.Case that are derived from the YAML (raw holds the YAML itself).
_CASE_FIELDS = (
    "name", "test_name", "source_file", "source_line", "device", "direction", "channels",
    "sample_format", "master_clock_hz", "decimation", "interpolation", "rate_sps", "transport", "frame_bytes",
    "duration_s", "warmup_s", "pattern", "tags", "timeout_s", "faults", "sweep_point",
)


def case_to_dict(case: Any) -> dict:
    """Resolved case: the derived fields plus `raw` (the resolved YAML) and threshold texts."""
    if case is None:
        return {}
    out = {name: jsonable(getattr(case, name, None)) for name in _CASE_FIELDS}
    out["thresholds"] = [getattr(t, "text", str(t)) for t in getattr(case, "thresholds", ()) or ()]
    out["raw"] = jsonable(getattr(case, "raw", None))
    return out


def threshold_to_dict(t: Any) -> dict:
    return {
        "metric": getattr(t, "metric", None),
        "text": getattr(t, "text", str(t)),
        "measured": jsonable(getattr(t, "measured", None)),
        "limit": jsonable(getattr(t, "limit", None)),
        "margin": jsonable(getattr(t, "margin", None)),
        "passed": bool(getattr(t, "passed", False)),
        "marginal": bool(getattr(t, "marginal", False)),
        "message": getattr(t, "message", "") or "",
    }


def jsonable(obj: Any) -> Any:
    """Plain JSON types from dataclasses, tuples, paths, datetimes; NaN/inf -> None."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, _dt.datetime):
        return iso_utc(obj)
    if isinstance(obj, PurePath):
        return str(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if hasattr(obj, "__dict__"):  # SimpleNamespace and plain objects
        return {k: jsonable(v) for k, v in vars(obj).items() if not k.startswith("_")}
    try:  # numpy scalars and the like
        return jsonable(float(obj))
    except (TypeError, ValueError):
        return str(obj)


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def to_datetime(value: str | _dt.datetime) -> _dt.datetime:
    """An aware UTC datetime from an ISO string or a datetime (naive means UTC)."""
    if isinstance(value, str):
        value = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.UTC)
    return value.astimezone(_dt.UTC)


@overload
def iso_utc(value: str | _dt.datetime) -> str: ...
@overload
def iso_utc(value: None) -> None: ...
def iso_utc(value: str | _dt.datetime | None) -> str | None:
    if value is None:
        return None
    return to_datetime(value).isoformat(timespec="milliseconds")


def to_ns(value: str | _dt.datetime) -> int:
    """Nanoseconds since the Unix epoch (line protocol timestamps), exact to the microsecond."""
    delta = to_datetime(value) - _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def new_run_id(now: _dt.datetime | None = None) -> str:
    """A run id that sorts by start time and does not collide: 20261121T210000Z-3f9a1c."""
    now = to_datetime(now) if now is not None else utc_now()
    return f"{now:%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
