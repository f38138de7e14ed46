"""From metrics and thresholds to a verdict; the message is the results' summary line."""
from __future__ import annotations

import dataclasses
from typing import Any

from ..results.record import Verdict
from ..results.verdict import summary_line
from .measure import leg_case, leg_metrics


def judge(case: Any, result: Any) -> None:
    """Fill result.thresholds, result.verdict and result.message."""
    result.thresholds = evaluate_thresholds(case, result.metrics)
    failed = any(not t.passed for t in result.thresholds)
    if case.direction in ("rx", "loopback") and not result.metrics.get("samples_received"):
        # A receiver that saw nothing never passes, thresholds or not.
        failed = True
    if case.direction == "rx+tx" and not all(leg_metrics(result.metrics, leg).get("samples_received")
                                             for leg in ("rx", "tx")):
        failed = True  # each direction's receiver must have seen its stream
    if failed:
        result.verdict = Verdict.FAIL
    elif any(t.marginal for t in result.thresholds):
        result.verdict = Verdict.MARGINAL  # a pass, close to failing: said everywhere, not only here
    else:
        result.verdict = Verdict.PASS
    result.message = summary_line(result)
    # Say so when the rig itself was the limit, rather than leaving the loss on the device.
    if result.metrics.get("host_limited"):
        result.message = f"host-limited: rig CPU saturated; {result.message}"
    for warning in getattr(result, "warnings", None) or []:
        result.message += f"; warning: {warning}"


def evaluate_thresholds(case: Any, metrics: dict[str, float]) -> list[Any]:
    """Every threshold against the run's metrics. rx+tx: a threshold judges each leg it
    names (a plain one both) on that leg's own metrics, reported as '<leg>.<metric>';
    so the case's verdict is the worse of its two directions."""
    if case.direction != "rx+tx":
        return [t.evaluate(metrics, case) for t in case.thresholds]
    out = []
    for leg in ("rx", "tx"):
        view, leg_view = leg_metrics(metrics, leg), leg_case(case, leg)
        for t in case.thresholds:
            if t.leg in (None, leg):
                r = t.evaluate(view, leg_view)
                out.append(dataclasses.replace(r, metric=f"{leg}.{r.metric}"))
    return out
