"""From metrics and thresholds to a verdict, with its reasons as data; the message is
the results' summary line."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..results.record import CaseResult, Verdict
from ..results.verdict import summary_line, threshold_reason
from ..verdicts import ThresholdResult

if TYPE_CHECKING:  # pragma: no cover
    from ..dsl.case import Case


def judge(case: Case, result: CaseResult) -> None:
    """Fill result.thresholds, result.failed / result.marginal (why), result.verdict and
    result.message."""
    result.thresholds = evaluate_thresholds(case, result)
    failed = [threshold_reason(t) for t in result.thresholds if t.verdict is Verdict.FAIL]
    # A receiver that saw nothing never passes, thresholds or not; rx+tx: each direction's
    # receiver must have seen its stream.
    if case.direction in ("rx", "loopback") and not result.metrics.get("samples_received"):
        failed.append("no samples received")
    if case.direction == "rx+tx":
        failed += [f"{leg}: no samples received" for leg in case.legs
                   if not result.legs.get(leg, {}).get("samples_received")]
    result.failed = failed
    result.marginal = [threshold_reason(t) for t in result.thresholds if t.verdict is Verdict.MARGINAL]
    if failed:
        result.verdict = Verdict.FAIL
    elif result.marginal:
        result.verdict = Verdict.MARGINAL  # a pass, close to failing: said everywhere, not only here
    else:
        result.verdict = Verdict.PASS
    result.message = summary_line(result)
    # Say so when the rig itself was the limit, rather than leaving the loss on the device.
    if result.metrics.get("host_limited"):
        result.message = f"host-limited: rig CPU saturated; {result.message}"
    for warning in result.warnings:
        result.message += f"; warning: {warning}"


def evaluate_thresholds(case: Case, result: CaseResult) -> list[ThresholdResult]:
    """Every threshold against the run's metrics. rx+tx: a threshold judges each leg it
    names (a plain one both) on that leg's own metrics (result.legs), the leg recorded
    in its result; so the case's verdict is the worse of its two directions."""
    params = case.threshold_params()
    if case.direction != "rx+tx":
        return [t.evaluate(result.metrics, params) for t in case.thresholds]
    return [t.evaluate(result.legs.get(leg, {}), params, leg=leg)
            for leg in case.legs for t in case.thresholds if t.leg in (None, leg)]
