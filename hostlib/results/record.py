"""The result record of one case (or sweep point) run: CaseResult, and JSON helpers.

The engine fills a CaseResult (it is mutable on purpose: the engine sets the
driver, metrics and verdict as the run proceeds); the sinks (outbox line
protocol, evidence JSON, Robot, CLI) only read it.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import secrets
from collections.abc import Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, overload

from pydantic import JsonValue

from .schema import (
    BlockCount,
    CaseRecord,
    ErrorKind,
    MetricValues,
    ResultRecord,
    RfSpectrum,
    SearchStep,
    StudyRow,
    ThresholdResult,
    TransportRecord,
    Verdict,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..drivers._native_facade import RfCapture
    from ..dsl.case import Case

__all__ = ["EXIT_FAIL", "EXIT_INTERRUPTED", "EXIT_NOTHING_TESTED", "EXIT_PASS", "CaseResult", "ErrorKind",
           "Verdict", "case_record", "exit_code", "iso_utc", "new_run_id", "to_datetime", "to_ns", "utc_now"]


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
    """What one run of one resolved case produced (docs/architecture.md). The evidence
    file holds it as a ResultRecord (hostlib.results.schema), made by to_record()."""

    case: Case
    rig_name: str
    device: str  # the case's device alias
    driver: str  # driver name from the rig file ("sim", "uhd", ...); "" if never reached
    run_id: str
    started_utc: str | _dt.datetime  # ISO 8601 with offset, or an aware datetime
    ended_utc: str | _dt.datetime
    verdict: Verdict
    message: str = ""  # one line
    metrics: dict[str, float] = dataclasses.field(default_factory=dict)
    thresholds: list[ThresholdResult] = dataclasses.field(default_factory=list)
    series: list[dict[str, float]] = dataclasses.field(default_factory=list)  # one row a second: t_s + metrics
    error: str | None = None  # why nothing was measured: an ERROR's text (without its kind), a SKIP's reason
    error_kind: ErrorKind | None = None  # set exactly when verdict is ERROR
    steps: list[SearchStep] = dataclasses.field(default_factory=list)  # a rate search's steps, in order
    blocks: list[BlockCount] = dataclasses.field(default_factory=list)  # received / sent per 100 000 seq
    # A study case (hostlib.link.models): measured beside the models and the lab's figure.
    study: list[StudyRow] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)  # the host's (e.g. rmem_max), in the message
    # What the transport reports of itself as text (tcp_congestion: the congestion control the sender ran).
    transport_info: dict[str, str] = dataclasses.field(default_factory=dict)
    # rx+tx: each leg's own metrics, measured as an rx or a tx case (metrics holds both together).
    legs: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)
    failed: list[str] = dataclasses.field(default_factory=list)    # why FAIL: one line per failed check
    marginal: list[str] = dataclasses.field(default_factory=list)  # why MARGINAL: the bands it missed
    place: str | None = None     # the lab place the case ran on (hostlib.lab), None for a local run
    rig_host: str | None = None  # the exporter(s) whose devices the place has
    # What the opened device reports of itself (its driver's versions(): UHD, the FPGA
    # image, the simulator's build); empty when the device was never opened.
    device_versions: dict[str, str] = dataclasses.field(default_factory=dict)
    # An emulated link (docs/long-link.md): realisation, why, and the configured spec.
    link: dict[str, JsonValue] | None = None
    # An RF case (docs/rf.md "Seeing it"): the capture's averaged spectrum with its markers; a
    # modulated case's received symbols and ideal points; the SigMF recording of a failure's
    # capture (relative to the evidence folder). `rf_capture` is the capture itself, never
    # written to the evidence: the run session saves a FAIL's or ERROR's as SigMF and keeps
    # it on the result, and lets a pass's go once the result is recorded.
    rf_spectrum: RfSpectrum | None = None
    rf_constellation: list[tuple[float, float]] = dataclasses.field(default_factory=list)
    rf_constellation_ideal: list[tuple[float, float]] = dataclasses.field(default_factory=list)
    rf_sigmf: str | None = None
    rf_capture: RfCapture | None = dataclasses.field(default=None, repr=False)

    def __post_init__(self) -> None:
        # A closed type: "PASS" becomes Verdict.PASS, anything unknown is a ValueError.
        self.verdict = Verdict(self.verdict)
        if self.error_kind is not None:
            self.error_kind = ErrorKind(self.error_kind)

    def set_error(self, kind: ErrorKind, text: str) -> None:
        self.verdict, self.error_kind, self.error = Verdict.ERROR, ErrorKind(kind), text

    def set_skip(self, reason: str) -> None:
        """SKIP: nothing was measured, for `reason` (kept in `error`, the why of a verdict
        that measured nothing)."""
        self.verdict, self.error_kind, self.error = Verdict.SKIP, None, reason

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

    @property
    def label(self) -> str:
        """'PASS', 'PASS (marginal)', 'FAIL', 'ERROR (device)', 'SKIP'."""
        return self.verdict.display(self.kind)

    def to_record(self) -> ResultRecord:
        """The evidence file's record of this result (NaN/inf become null)."""
        return ResultRecord(
            test_name=self.case.test_name,
            case=case_record(self.case),
            rig_name=self.rig_name,
            device=self.device,
            driver=self.driver,
            run_id=self.run_id,
            started_utc=iso_utc(self.started_utc),
            ended_utc=iso_utc(self.ended_utc),
            verdict=self.verdict,
            error_kind=self.kind,
            message=self.message,
            error=self.error,
            failed=list(self.failed),
            marginal=list(self.marginal),
            metrics=finite_values(self.metrics),
            legs={leg: finite_values(m) for leg, m in self.legs.items()},
            thresholds=list(self.thresholds),
            series=[finite_values(row) for row in self.series],
            steps=list(self.steps),
            blocks=list(self.blocks),
            study=list(self.study),
            warnings=list(self.warnings),
            transport_info=dict(self.transport_info),
            place=self.place,
            rig_host=self.rig_host,
            device_versions=dict(self.device_versions),
            link=self.link,
            rf_spectrum=self.rf_spectrum,
            rf_constellation=list(self.rf_constellation),
            rf_constellation_ideal=list(self.rf_constellation_ideal),
            rf_sigmf=self.rf_sigmf,
        )

    @classmethod
    def from_record(cls, record: ResultRecord, case: Case) -> CaseResult:
        """The result a record holds, for `case` (the case it was made of, as this host
        resolved it): what a run on another host sent back (hostlib.lab.remote)."""
        return cls(
            case=case, rig_name=record.rig_name, device=record.device, driver=record.driver,
            run_id=record.run_id, started_utc=record.started_utc, ended_utc=record.ended_utc,
            verdict=record.verdict, message=record.message, metrics=_floats(record.metrics),
            thresholds=list(record.thresholds), series=[_floats(row) for row in record.series],
            error=record.error, error_kind=record.error_kind, steps=list(record.steps),
            blocks=list(record.blocks), study=list(record.study), warnings=list(record.warnings),
            legs={leg: _floats(m) for leg, m in record.legs.items()}, failed=list(record.failed),
            marginal=list(record.marginal), place=record.place, rig_host=record.rig_host,
            device_versions=dict(record.device_versions), rf_spectrum=record.rf_spectrum,
            rf_constellation=list(record.rf_constellation), rf_constellation_ideal=list(record.rf_constellation_ideal),
            rf_sigmf=record.rf_sigmf)

    def to_dict(self) -> dict[str, JsonValue]:
        """The record as JSON-ready data (what the evidence file holds for this case)."""
        return self.to_record().model_dump(mode="json")


def finite_values(values: Mapping[str, float]) -> MetricValues:
    """Metric values as JSON holds them: NaN and inf become None."""
    return {k: (float(v) if math.isfinite(v) else None) for k, v in values.items()}


def _floats(values: MetricValues) -> dict[str, float]:
    """finite_values undone: null (a NaN or inf when written) is NaN again."""
    return {k: (math.nan if v is None else float(v)) for k, v in values.items()}


def case_record(case: Case) -> CaseRecord:
    """The resolved case as the evidence file holds it."""
    return CaseRecord(
        name=case.name, test_name=case.test_name, source_file=case.source_file, source_line=case.source_line,
        device=case.device, direction=case.direction, channels=case.channels, sample_format=case.sample_format,
        master_clock_hz=case.master_clock_hz, decimation=case.decimation, interpolation=case.interpolation,
        rate_sps=case.rate_sps,
        transport=TransportRecord(kind=case.transport.kind, frame_bytes=case.frame_bytes,
                                  options={k: v for k, v in case.transport.to_json().items() if k != "kind"}),
        duration_s=case.duration_s, warmup_s=case.warmup_s, pattern=case.pattern, tags=list(case.tags),
        timeout_s=case.timeout_s, faults=case.faults.to_json(),
        sweep_point={k: jsonable(v) for k, v in case.sweep_point.items()},
        thresholds=[f"{t.metric} {t.text}" for t in case.thresholds],
        raw={str(k): jsonable(v) for k, v in case.raw.items()},
    )


def jsonable(obj: object) -> JsonValue:
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
