"""From metrics and thresholds to a verdict and a one-line message."""
from __future__ import annotations

from typing import Any


def judge(case: Any, result: Any) -> None:
    """Fill result.thresholds, result.verdict and result.message."""
    result.thresholds = [t.evaluate(result.metrics, case) for t in case.thresholds]
    failed = [t for t in result.thresholds if not t.passed]
    if case.direction in ("rx", "loopback") and not result.metrics.get("samples_received"):
        result.verdict = "FAIL"
        result.message = "FAIL no samples received"
        return
    result.verdict = "FAIL" if failed else "PASS"
    result.message = summary_line(case, result, failed)


def summary_line(case: Any, result: Any, failed: list) -> str:
    m = result.metrics
    rate_msps = case.rate_sps / 1e6
    parts = [
        f"{result.verdict} {case.direction} {case.transport.kind} {rate_msps:.6g} MS/s:",
        f"{m.get('throughput_sps', 0) / 1e6:.4g} MS/s ({100 * m.get('throughput_ratio', 0):.2f}%),",
        f"{m.get('missing_frames', 0):.0f} missing, {m.get('overruns', 0):.0f} O, "
        f"{m.get('underruns', 0):.0f} U, {m.get('pattern_errors', 0):.0f} pattern errors",
    ]
    if "latency_p99_s" in m:
        parts[-1] += f", p99 {m['latency_p99_s'] * 1e3:.3g} ms"
    if failed:
        parts.append("| failed: " + "; ".join(getattr(t, "text", t.metric) for t in failed))
    return " ".join(parts)
