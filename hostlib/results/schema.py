"""The evidence schema: what a run writes and every reader reads, one typed model.

    EvidenceRun                 one file, <evidence dir>/<run_id>.json, format hilrig-evidence/2
    ├── rig: RigSnapshot        the rig file as it was (text, sha256)
    ├── versions                hilrig, python, git_sha, robot
    └── cases: [ResultRecord]   one per case or sweep point, in run order
        ├── case: CaseRecord    the resolved case (SI units) and its YAML
        ├── verdict: Verdict, error_kind: ErrorKind | None
        ├── failed, marginal    why the verdict is not PASS, one line per reason
        ├── metrics, legs       the case's metrics; rx+tx: each leg's own under legs[leg]
        ├── thresholds: [ThresholdResult]   (leg, operator, limit, margin, verdict)
        └── series, steps       one row a second; a rate search's steps

`hostlib.results.record` writes it (CaseResult.to_record), `hostlib.reports` and
`hilrig results export` read it (load_evidence). Verdicts stay enums until a view
renders them: Verdict.label is the one place that writes "PASS (marginal)".
Files of an older format are read through one explicit migration (hostlib.results.migrate).
"""
from __future__ import annotations

import enum
import operator
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from typing_extensions import TypedDict

EVIDENCE_VERSION = 2
EVIDENCE_FORMAT = f"hilrig-evidence/{EVIDENCE_VERSION}"


class ErrorKind(enum.StrEnum):
    """Why a case could not be measured (an ERROR verdict); each kind has its exit code."""

    INFRASTRUCTURE = "infrastructure"  # the rig stopped the run: sim binary, port, lock, disk, server
    DEVICE = "device"                  # the device (or simulator) failed, vanished or is required but absent
    CONFIG = "config"                  # the case or its environment is wrong (nothing was streamed)

    @property
    def exit_code(self) -> int:
        return {ErrorKind.CONFIG: 2, ErrorKind.INFRASTRUCTURE: 3, ErrorKind.DEVICE: 4}[self]


class Verdict(enum.StrEnum):
    """The closed set of outcomes of one case (or sweep point), and of one threshold
    (PASS, MARGINAL or FAIL).

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
    def failure(self) -> bool:
        """FAIL or ERROR: what a report lists first."""
        return self in (Verdict.FAIL, Verdict.ERROR)

    @property
    def label(self) -> str:
        """How people read it: 'PASS (marginal)' for MARGINAL (the one place that writes it)."""
        return "PASS (marginal)" if self is Verdict.MARGINAL else self.value

    def display(self, kind: ErrorKind | None = None) -> str:
        """The label with an ERROR's kind: 'ERROR (device)'."""
        return f"ERROR ({kind.value})" if self is Verdict.ERROR and kind is not None else self.label

    @property
    def rank(self) -> int:
        """Order a technician reads verdicts in: what needs attention first."""
        return VERDICT_ORDER.index(self)

    @property
    def tag(self) -> str:
        """The Robot tag / pytest marker: verdict:pass, verdict:marginal, verdict:error ..."""
        return f"verdict:{self.value.lower()}"


VERDICT_ORDER = (Verdict.FAIL, Verdict.ERROR, Verdict.MARGINAL, Verdict.PASS, Verdict.SKIP)


class Op(enum.StrEnum):
    """A threshold's comparison: measured <op> limit."""

    GE = ">="
    GT = ">"
    LE = "<="
    LT = "<"
    EQ = "=="
    NE = "!="

    def holds(self, measured: float, limit: float) -> bool:
        return _COMPARE[self](measured, limit)

    @property
    def lower_bound(self) -> bool:
        return self in (Op.GE, Op.GT)

    @property
    def upper_bound(self) -> bool:
        return self in (Op.LE, Op.LT)

    def margin(self, measured: float, limit: float) -> float:
        """How far inside (+) or outside (-) the limit `measured` is, in the metric's unit."""
        if self.lower_bound:
            return measured - limit
        if self.upper_bound:
            return limit - measured
        if self is Op.EQ:
            return -abs(measured - limit) + 0.0   # + 0.0: an exact hit is 0, not -0
        return abs(measured - limit)


_COMPARE: dict[Op, Callable[[float, float], bool]] = {
    Op.GE: operator.ge, Op.GT: operator.gt, Op.LE: operator.le, Op.LT: operator.lt,
    Op.EQ: operator.eq, Op.NE: operator.ne,
}


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ThresholdResult(_Record):
    """One threshold judged on one run (rx+tx: on one leg's metrics).

    The limit as written is `op` and `limit_text` ("99.9% of rate", "2 ms", "0");
    `relative_to` names the case parameter of a percentage. `note` says why a threshold
    was not measurable, or which marginal band a marginal pass missed."""

    metric: str                      # canonical name (hostlib.metrics)
    leg: str | None = None           # rx+tx: the stream it judged ("rx" | "tx"); None: the case
    op: Op
    limit_text: str
    relative_to: str | None = None
    measured: float | None
    limit: float | None
    margin: float | None
    verdict: Literal[Verdict.PASS, Verdict.MARGINAL, Verdict.FAIL]
    note: str = ""

    @property
    def text(self) -> str:
        """The limit expression: '>= 99.9% of rate'."""
        return f"{self.op} {self.limit_text}"

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def marginal(self) -> bool:
        return self.verdict is Verdict.MARGINAL

    @property
    def name(self) -> str:
        """The metric as a reader names it: 'throughput_sps', or 'tx.throughput_sps' on a leg."""
        return f"{self.leg}.{self.metric}" if self.leg else self.metric

    @property
    def label(self) -> str:
        """'tx.throughput_sps >= 99.9% of rate'."""
        return f"{self.name} {self.text}"

    def line(self) -> str:
        """One human line: 'throughput_sps 9.998e+06 >= 9.99e+06 (99.9% of rate) margin +8e+03 PASS'."""
        if self.measured is None or self.limit is None:
            return f"{self.name} {self.text}: {self.note or 'not measured'} {self.verdict.label}"
        detail = f" ({self.limit_text})" if self.relative_to else ""
        margin = f" margin {self.margin:+.4g}" if self.margin is not None else ""
        extra = f" [{self.note}]" if self.note else ""
        return (f"{self.name} {self.measured:.6g} {self.op} {self.limit:.6g}{detail}{margin} "
                f"{self.verdict.label}{extra}")

    __str__ = line


class TransportRecord(_Record):
    kind: str
    frame_bytes: int
    options: dict[str, JsonValue] = Field(default_factory=dict)


class CaseRecord(_Record):
    """The resolved case as it ran (hostlib.dsl.Case): derived fields in SI units, the
    threshold expressions, and `raw`, the resolved YAML."""

    name: str
    test_name: str
    source_file: str
    source_line: int
    device: str
    direction: str
    channels: int
    sample_format: str
    master_clock_hz: float | None = None
    decimation: int | None = None
    interpolation: int | None = None
    rate_sps: float
    transport: TransportRecord
    duration_s: float
    warmup_s: float = 0.0
    pattern: str = ""
    tags: list[str] = Field(default_factory=list)
    timeout_s: float | None = None
    faults: dict[str, int] = Field(default_factory=dict)
    sweep_point: dict[str, JsonValue] = Field(default_factory=dict)
    thresholds: list[str] = Field(default_factory=list)
    raw: dict[str, JsonValue] = Field(default_factory=dict)


class SearchStep(TypedDict):
    """One step of a rate search (hostlib.engine.search), in the order tried."""

    step: int
    phase: str                    # "step" | "retry" | "confirm"
    key: str                      # decimation | interpolation
    value: int
    rate_sps: float
    throughput_Bps: float | None
    verdict: Verdict
    passed: bool
    message: str


# A metric that was not finite (NaN, inf) is written as null: JSON has no NaN.
MetricValues = dict[str, float | None]


class ResultRecord(_Record):
    """One case (or sweep point) of a run, as the evidence file holds it."""

    test_name: str
    case: CaseRecord
    rig_name: str
    device: str
    driver: str
    run_id: str
    started_utc: str
    ended_utc: str
    verdict: Verdict
    error_kind: ErrorKind | None = None
    message: str = ""
    error: str | None = None
    failed: list[str] = Field(default_factory=list)     # why FAIL: one line per failed check
    marginal: list[str] = Field(default_factory=list)   # why MARGINAL: the bands it missed
    metrics: MetricValues = Field(default_factory=dict)
    legs: dict[str, MetricValues] = Field(default_factory=dict)
    thresholds: list[ThresholdResult] = Field(default_factory=list)
    series: list[MetricValues] = Field(default_factory=list)
    steps: list[SearchStep] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def label(self) -> str:
        """'PASS', 'PASS (marginal)', 'FAIL', 'ERROR (device)', 'SKIP'."""
        return self.verdict.display(self.error_kind)

    @property
    def why(self) -> str:
        """What a table shows beside a verdict that is not PASS."""
        if self.failed:
            return "; ".join(self.failed)
        if self.marginal:
            return "marginal: " + "; ".join(self.marginal)
        return self.error or ("" if self.verdict is Verdict.PASS else self.message)


class RigSnapshot(_Record):
    name: str | None = None
    path: str | None = None
    sha256: str | None = None
    text: str | None = None
    error: str | None = None       # why the rig file could not be read


class EvidenceRun(_Record):
    """One run's evidence file."""

    format: Literal["hilrig-evidence/2"] = "hilrig-evidence/2"   # EVIDENCE_FORMAT
    run_id: str
    started_utc: str
    ended_utc: str | None = None
    rig: RigSnapshot = Field(default_factory=RigSnapshot)
    versions: dict[str, str | None] = Field(default_factory=dict)
    cases: list[ResultRecord] = Field(default_factory=list)
    tally: dict[Verdict, int] = Field(default_factory=dict)   # cases by verdict, when the run finished
    nothing_tested: bool = False     # no case was selected, or every selected case SKIPped
