"""Human views of a CaseResult: the one-line summary and the verdict table.

    PASS rx udp 10.0 MS/s: 10.00 MS/s (100.0%), 0 missing, 0 O, 0 U, p99 0.21 ms
"""
from __future__ import annotations

import io
import math
from typing import Any, TypeGuard

from rich import box
from rich.console import Console, Group, JustifyMethod
from rich.table import Table
from rich.text import Text

from ..metrics import lookup_metric
from ..units import format_quantity
from .record import CaseResult, Verdict

_STYLE = {Verdict.PASS: "bold green", Verdict.MARGINAL: "bold dark_orange", Verdict.FAIL: "bold red",
          Verdict.SKIP: "bold yellow", Verdict.ERROR: "bold magenta"}


def _finite(v: Any) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _rate(v: Any, digits: int) -> str:
    if not _finite(v):
        return "-"
    for name, scale in (("GS/s", 1e9), ("MS/s", 1e6), ("kS/s", 1e3)):
        # Decided on the printed value one unit down: 999.999 MS/s would print as
        # "1000.00 MS/s", so it reads 1.00 GS/s; 999.4 MS/s stays 999.40 MS/s.
        if round(abs(v) / scale * 1000, digits) >= 1000:
            return f"{v / scale:.{digits}f} {name}"
    return f"{v:.{digits}f} S/s"


def _count(v: Any) -> str:
    if not _finite(v):
        return "-"
    # Counts read as whole numbers, even large or derived ones (samples_expected).
    return f"{v:.0f}" if float(v).is_integer() or abs(v) >= 1e4 else f"{v:.4g}"


def format_metric(name: str, value: Any) -> str:
    """A metric value in the unit a person reads it in (ms, MS/s, MB/s, plain counts)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if not _finite(value):
        return str(value)
    metric = lookup_metric(name) if name else None
    dim = metric.dimension if metric else ""
    if dim == "count":
        return _count(value)
    if dim == "time":
        return f"{value * 1e3:.3g} ms" if abs(value) < 1 else f"{value:.3f} s"
    if dim == "rate":
        if metric is not None and metric.name == "frames_per_s":  # a rate of frames, not of samples
            return _rate(value, 2).replace("S/s", "frames/s")
        return _rate(value, 2)
    if dim == "ratio":
        return f"{value:.6g}"
    if dim in ("data_rate", "percent", "frequency"):
        return format_quantity(value, dim)
    return f"{value:.6g}"


def _head(result: CaseResult) -> str:
    case = result.case
    transport = getattr(getattr(case, "transport", None), "kind", "?")
    return f"{getattr(case, 'direction', '?')} {transport} {_rate(getattr(case, 'rate_sps', None), 1)}"


def summary_line(result: CaseResult) -> str:
    """One line: verdict, what ran, what was measured (or why nothing was)."""
    verdict = Verdict(result.verdict)
    head = f"{verdict.label} {_head(result)}"
    if verdict is Verdict.SKIP:
        reason = _one_line(result.message or result.error)
        # The engine stores the summary as the message; summarising it again must not
        # repeat "SKIP rx udp ...:" in front of it.
        return reason if reason.startswith(head + ":") else f"{head}: {reason}"
    if verdict is Verdict.ERROR:
        text = result.error or result.message or "unknown error"
        return f"ERROR ({result.kind}) {_head(result)}: {_one_line(text)}"
    m = result.metrics
    if verdict.passed and not _limits_delivery(result):
        # A measuring case (e.g. the reference sweeps) passes on integrity alone, or on
        # nothing; say so, so that "PASS ... 52% ... missing" never reads as a clean stream.
        what = "integrity only, rate and loss measured" if result.thresholds else "no thresholds, measured only"
        head = f"{verdict.label} ({what}) {_head(result)}"
    parts = []
    thr, ratio = m.get("throughput_sps"), m.get("throughput_ratio")
    parts.append(_rate(thr, 2) + (f" ({ratio * 100:.1f}%)" if _finite(ratio) else ""))
    parts.append(f"{_count(m.get('missing_frames'))} missing")
    parts.append(f"{_count(m.get('overruns'))} O")
    parts.append(f"{_count(m.get('underruns'))} U")
    if _finite(m.get("pattern_errors")) and m["pattern_errors"]:
        parts.append(f"{_count(m['pattern_errors'])} pattern errors")
    if _finite(m.get("latency_p99_s")):
        parts.append(f"p99 {m['latency_p99_s'] * 1e3:.2f} ms")
    line = f"{head}: {', '.join(parts)}"
    failed = [t for t in result.thresholds if not getattr(t, "passed", True)]
    marginal = [t for t in result.thresholds if getattr(t, "passed", False) and getattr(t, "marginal", False)]
    if marginal and verdict is Verdict.MARGINAL:  # which limit it came close to
        line += "; marginal: " + "; ".join(
            f"{threshold_label(t)} (measured {format_metric(getattr(t, 'metric', ''), getattr(t, 'measured', None))})"
            for t in marginal
        )
    if failed:
        line += "; failed: " + "; ".join(
            f"{threshold_label(t)} (measured {format_metric(getattr(t, 'metric', ''), getattr(t, 'measured', None))})"
            for t in failed
        )
    return line


# Thresholds on any of these make a PASS a statement about delivery, not only integrity.
DELIVERY_METRICS = frozenset({
    "throughput_sps", "throughput_msps", "throughput_Bps", "throughput_ratio", "frames_per_s",
    "missing_frames", "dropped_samples", "overruns", "underruns", "seq_errors", "drop_ratio",
})


def _limits_delivery(result: CaseResult) -> bool:
    # rx+tx thresholds are named '<leg>.<metric>'
    return bool({str(getattr(t, "metric", "")).rsplit(".", 1)[-1] for t in result.thresholds} & DELIVERY_METRICS)


def message_line(result: CaseResult) -> str:
    """The result's one-line message as the engine wrote it (with its host-limited and
    warning notes), or the summary line when nothing wrote one."""
    return _one_line(result.message) or summary_line(result)


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def _field(t: Any, key: str) -> Any:
    """A threshold's field: a ThresholdResult's attribute, or a key of its evidence dict."""
    return t.get(key) if isinstance(t, dict) else getattr(t, key, None)


def threshold_label(t: Any) -> str:
    """'throughput_sps >= 99.9% of rate': ThresholdResult.text is the condition without the metric."""
    metric = str(_field(t, "metric") or "")
    text = str((t.get("text") if isinstance(t, dict) else getattr(t, "text", t)) or "")
    return text if not metric or text.startswith(metric) else f"{metric} {text}"


THRESHOLD_COLUMNS = ("threshold", "measured", "limit", "margin", "result")


def threshold_row(t: Any) -> tuple[str, str, str, str, str]:
    """THRESHOLD_COLUMNS of one threshold (a ThresholdResult or its evidence dict), each
    value in its metric's unit; the result is PASS or FAIL, with " (marginal)" when close."""
    metric = str(_field(t, "metric") or "")
    status = "PASS" if _field(t, "passed") else "FAIL"
    if _field(t, "marginal"):
        status += " (marginal)"
    return (threshold_label(t), format_metric(metric, _field(t, "measured")),
            format_metric(metric, _field(t, "limit")), format_metric(metric, _field(t, "margin")), status)


def threshold_rows(result: CaseResult) -> list[tuple[str, str, str, str, str]]:
    """threshold_row per threshold of the result."""
    return [threshold_row(t) for t in result.thresholds]


def render_verdict(result: CaseResult) -> Group:
    """A rich renderable: the threshold table, then the one-line summary."""
    # The title is Text, not markup: a sweep point's "[decimation=2, ...]" must stay visible.
    name = getattr(result.case, "test_name", None)
    table = Table(title=Text(name) if name else None, box=box.SIMPLE_HEAD, title_justify="left")
    justify: dict[str, JustifyMethod] = {"threshold": "left", "result": "left"}
    for column in THRESHOLD_COLUMNS:
        table.add_column(column, justify=justify.get(column, "right"))
    for text, measured, limit, margin, status in threshold_rows(result):
        style = _STYLE[Verdict.FAIL if status == "FAIL" else Verdict.MARGINAL if "marginal" in status else Verdict.PASS]
        table.add_row(text, measured, limit, margin, Text(status, style=style))
    summary = Text(message_line(result), style=_STYLE[Verdict(result.verdict)])
    return Group(table, summary) if result.thresholds else Group(summary)


def verdict_text(result: CaseResult, width: int = 120) -> str:
    """render_verdict as plain text (logs, tests)."""
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False).print(render_verdict(result))
    return buf.getvalue()
