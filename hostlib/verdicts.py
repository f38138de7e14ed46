"""The closed outcome types, below every layer that judges or records: a case's
Verdict and an ERROR's ErrorKind, a threshold's comparison Op and its judged
ThresholdResult. The DSL judges thresholds, the engine gives verdicts, results
record them and views render them; all of them import these from here.
"""
from __future__ import annotations

import enum
import operator
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["VERDICT_ORDER", "ErrorKind", "Op", "ThresholdResult", "Verdict"]


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


class ThresholdResult(BaseModel):
    """One threshold judged on one run (rx+tx: on one leg's metrics).

    The limit as written is `op` and `limit_text` ("99.9% of rate", "2 ms", "0");
    `relative_to` names the case parameter of a percentage. `note` says why a threshold
    was not measurable, or which marginal band a marginal pass missed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
