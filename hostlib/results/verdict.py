"""Human views of a CaseResult: the one-line summary and the verdict table.

    PASS rx udp 10.0 MS/s: 10.00 MS/s (100.0%), 0 missing, 0 O, 0 U, p99 0.21 ms
"""
from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TypeGuard

from rich import box
from rich.console import Console, Group, JustifyMethod
from rich.table import Table
from rich.text import Text

from ..metrics import lookup_metric
from ..units import format_quantity
from ..verdicts import ThresholdResult, Verdict
from .record import CaseResult
from .schema import BlockCount, StudyRow

STYLE = {Verdict.PASS: "bold green", Verdict.MARGINAL: "bold dark_orange", Verdict.FAIL: "bold red",
          Verdict.SKIP: "bold yellow", Verdict.ERROR: "bold magenta"}


def _finite(v: object) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _rate(v: object, digits: int) -> str:
    if not _finite(v):
        return "-"
    for name, scale in (("GS/s", 1e9), ("MS/s", 1e6), ("kS/s", 1e3)):
        # Decided on the printed value one unit down: 999.999 MS/s would print as
        # "1000.00 MS/s", so it reads 1.00 GS/s; 999.4 MS/s stays 999.40 MS/s.
        if round(abs(v) / scale * 1000, digits) >= 1000:
            return f"{v / scale:.{digits}f} {name}"
    return f"{v:.{digits}f} S/s"


def _count(v: object) -> str:
    if not _finite(v):
        return "-"
    # Counts read as whole numbers, even large or derived ones (samples_expected).
    return f"{v:.0f}" if float(v).is_integer() or abs(v) >= 1e4 else f"{v:.4g}"


def format_metric(name: str, value: object) -> str:
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
    if dim in ("data_rate", "percent", "frequency", "db", "dbc", "dbfs", "ppm"):
        return format_quantity(value, dim)
    return f"{value:.6g}"


def _head(result: CaseResult) -> str:
    case = result.case
    return f"{case.direction} {case.transport.kind} {_rate(case.rate_sps, 1)}"


def summary_line(result: CaseResult) -> str:
    """One line: verdict, what ran, what was measured (or why nothing was), and why the
    verdict is not PASS (result.failed, result.marginal)."""
    verdict = result.verdict
    head = f"{verdict.label} {_head(result)}"
    if verdict is Verdict.SKIP:
        return f"{head}: {_one_line(result.error or result.message)}"
    if verdict is Verdict.ERROR:
        text = result.error or result.message or "unknown error"
        return f"{result.label} {_head(result)}: {_one_line(text)}"
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
    link = _link_part(m)
    if link:
        parts.append(link)
    rf = _rf_part(m)
    if rf:
        parts.append(rf)
    line = f"{head}: {', '.join(parts)}"
    if result.marginal and verdict is Verdict.MARGINAL:  # which limit it came close to
        line += "; marginal: " + "; ".join(result.marginal)
    if result.failed:
        line += "; failed: " + "; ".join(result.failed)
    return line


def _link_part(m: dict[str, float]) -> str:
    """An emulated link's delivered figures beside its configured ones (docs/long-link.md):
    'link delay p50 25.7 ms (25 ms), loss 0.51% (0.50%), 8.2 MB/s (62.5 MB/s)'."""
    if not _finite(m.get("link_configured_delay_s")):
        return ""
    out = []
    if _finite(m.get("link_delay_p50_s")):
        out.append(f"delay p50 {m['link_delay_p50_s'] * 1e3:.3g} ms ({m['link_configured_delay_s'] * 1e3:.3g} ms)")
    if _finite(m.get("link_loss_ratio")):
        out.append(f"loss {m['link_loss_ratio'] * 100:.2f}% ({m['link_configured_loss'] * 100:.2f}%)")
    if _finite(m.get("link_rate_Bps")):
        limit = m.get("link_configured_rate_Bps", 0.0)
        out.append(f"{m['link_rate_Bps'] / 1e6:.3g} MB/s" + (f" ({limit / 1e6:.3g} MB/s)" if limit else ""))
    if _finite(m.get("link_dropped_queue")) and m["link_dropped_queue"]:
        out.append(f"{_count(m['link_dropped_queue'])} dropped by its queue")
    return "link " + ", ".join(out) if out else "link (configured only)"


def _rf_part(m: dict[str, float]) -> str:
    """An RF case's figures beside the injected truth (docs/rf.md):
    'rf snr 30.02 dB (30.00), freq error 1.2 kHz (1.2 kHz), sfdr 34.24 dBc (34.27)'; a
    modulation: 'rf evm 3.18% (3.16%), ber 0 (6.9e-220), freq error 2.5 kHz (2.5 kHz)'."""
    fields: tuple[tuple[str, str], ...]
    if _finite(m.get("evm_rms_pct")):
        fields = (("evm_rms_pct", "evm"), ("ber", "ber"), ("freq_error_hz", "freq error"))
    elif _finite(m.get("snr_db")):
        fields = (("snr_db", "snr"), ("freq_error_hz", "freq error"), ("sfdr_dbc", "sfdr"), ("iq_image_dbc", "image"))
    else:
        return ""
    out = []
    for name, label in fields:
        if not _finite(m.get(name)):
            continue
        truth = m.get(f"injected_{name}")
        show = _hz if name == "freq_error_hz" else (lambda v, n=name: f"{v:.2g}" if n == "ber" else format_metric(n, v))
        out.append(f"{label} {show(m[name])}" + (f" ({show(truth)})" if _finite(truth) else ""))
    return "rf " + ", ".join(out)


def _hz(v: float) -> str:
    """A frequency error: '1.2 kHz', '-5.79e-05 Hz', '0 Hz'."""
    return f"{v / 1e3:.4g} kHz" if abs(v) >= 1e3 else f"{v:.3g} Hz"


def threshold_reason(t: ThresholdResult) -> str:
    """Why a threshold failed or was marginal: 'throughput_sps >= 99.9% of rate (measured 9.10 MS/s)'."""
    return f"{t.label} (measured {format_metric(t.metric, t.measured)})"


# Thresholds on any of these make a PASS a statement about delivery, not only integrity.
DELIVERY_METRICS = frozenset({
    "throughput_sps", "throughput_msps", "throughput_Bps", "throughput_ratio", "frames_per_s",
    "missing_frames", "dropped_samples", "overruns", "underruns", "seq_errors", "drop_ratio",
})


def _limits_delivery(result: CaseResult) -> bool:
    return bool({t.metric for t in result.thresholds} & DELIVERY_METRICS)


def message_line(result: CaseResult) -> str:
    """The result's one-line message as the engine wrote it (with its host-limited and
    warning notes), or the summary line when nothing wrote one."""
    return _one_line(result.message) or summary_line(result)


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


THRESHOLD_COLUMNS = ("threshold", "measured", "limit", "margin", "result")


def threshold_row(t: ThresholdResult) -> tuple[str, str, str, str, str]:
    """THRESHOLD_COLUMNS of one threshold, each value in its metric's unit; the result is
    its verdict's label (PASS, PASS (marginal), FAIL)."""
    return (t.label, format_metric(t.metric, t.measured), format_metric(t.metric, t.limit),
            format_metric(t.metric, t.margin), t.verdict.label)


def render_verdict(result: CaseResult) -> Group:
    """A rich renderable: the threshold table, then the one-line summary."""
    # The title is Text, not markup: a sweep point's "[decimation=2, ...]" must stay visible.
    table = Table(title=Text(result.case.test_name), box=box.SIMPLE_HEAD, title_justify="left")
    justify: dict[str, JustifyMethod] = {"threshold": "left", "result": "left"}
    for column in THRESHOLD_COLUMNS:
        table.add_column(column, justify=justify.get(column, "right"))
    for t in result.thresholds:
        text, measured, limit, margin, status = threshold_row(t)
        table.add_row(text, measured, limit, margin, Text(status, style=STYLE[t.verdict]))
    summary = Text(message_line(result), style=STYLE[result.verdict])
    return Group(table, summary) if result.thresholds else Group(summary)


BLOCK_COLUMNS = ("block", "sequence numbers", "received", "sent", "received %")


def block_rows(blocks: Sequence[BlockCount]) -> list[tuple[str, str, str, str, str]]:
    """The lab's table: one row per block of sequence numbers at the receiver."""
    return [(str(i), f"{b['first_seq']}..{b['first_seq'] + b['sent'] - 1}", str(b["received"]), str(b["sent"]),
             f"{100.0 * b['received'] / b['sent']:.1f}" if b["sent"] else "-") for i, b in enumerate(blocks)]


def render_blocks(blocks: Sequence[BlockCount]) -> Table:
    """block_rows as a rich table (the CLI's, after the verdict)."""
    table = Table(title="received / sent per block", box=box.SIMPLE_HEAD, title_justify="left")
    for column in BLOCK_COLUMNS:
        table.add_column(column, justify="right")
    for row in block_rows(blocks):
        table.add_row(*row)
    return table


STUDY_COLUMNS = ("", "how", "received")


def study_table_rows(rows: Sequence[StudyRow]) -> list[tuple[str, str, str]]:
    """A study case's table: measured, the models from its link spec, the lab's figure."""
    return [(r["what"], r["how"], r["received"]) for r in rows]


def render_study(rows: Sequence[StudyRow]) -> Table:
    """study_table_rows as a rich table (the CLI's, after the blocks)."""
    table = Table(title="measured, models, the lab's figure", box=box.SIMPLE_HEAD, title_justify="left")
    for column in STUDY_COLUMNS:
        table.add_column(column, justify="left")
    for row in study_table_rows(rows):
        table.add_row(*(Text(v) for v in row))   # Text, not markup: formulas hold brackets
    return table


def verdict_text(result: CaseResult, width: int = 120) -> str:
    """render_verdict as plain text (logs, tests)."""
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False).print(render_verdict(result))
    return buf.getvalue()
