"""From metrics and thresholds to a verdict; the message is the results' summary line."""
from __future__ import annotations

from typing import Any

from ..results.record import Verdict
from ..results.verdict import summary_line


def judge(case: Any, result: Any) -> None:
    """Fill result.thresholds, result.verdict and result.message."""
    result.thresholds = [t.evaluate(result.metrics, case) for t in case.thresholds]
    failed = any(not t.passed for t in result.thresholds)
    if case.direction in ("rx", "loopback") and not result.metrics.get("samples_received"):
        # A receiver that saw nothing never passes, thresholds or not.
        failed = True
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
