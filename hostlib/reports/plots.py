"""Plots as inline SVG (matplotlib, imported lazily: it takes about a second to load).

Every function returns an `<svg ...>` element as text, or "" when there is nothing
to plot. Text stays text in the SVG (svg.fonttype none), so a browser can find the
numbers and the labels, and the report stays small.
"""
from __future__ import annotations

import io
import re
from collections.abc import Callable

from pydantic import JsonValue

from .model import CaseView, finite
from .tables import Sweep, axis_label, value_key

_plt = None


def _pyplot():
    global _plt
    if _plt is None:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt

        matplotlib.rcParams.update({
            "svg.fonttype": "none", "svg.hashsalt": "hilrig", "font.size": 9, "axes.grid": True,
            "grid.alpha": 0.3, "figure.dpi": 72, "path.simplify": True,
            "axes.formatter.useoffset": False, "axes.formatter.limits": (-6, 10),
        })
        _plt = plt
    return _plt


def _svg(fig, title: str) -> str:
    plt = _pyplot()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)
    # An accessible name for the figure: the browser test and screen readers find it.
    return re.sub(r"<svg ", f'<svg role="img" aria-label="{_attr(title)}" class="plot" ', text, count=1)


def _attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;"))


def _scaled(metric: str, scale: float) -> Callable[[dict[str, float]], float | None]:
    """The metric times `scale`, None where it is not a finite number."""
    return lambda m: m[metric] * scale if finite(m.get(metric)) else None


def achieved_vs_requested(cases: list[CaseView]) -> str:
    asked = [(c.case.rate_sps, c.metrics.get("throughput_sps"), c) for c in cases]
    pts = [(x, y, c) for x, y, c in asked if finite(x) and finite(y) and x > 0 and y > 0]
    if not pts:
        return ""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ok = [(x, y) for x, y, c in pts if not c.failure]
    bad = [(x, y) for x, y, c in pts if c.failure]
    lo, hi = min(min(x, y) for x, y, _ in pts), max(max(x, y) for x, y, _ in pts)
    ax.plot([lo / 1e6, hi / 1e6], [lo / 1e6, hi / 1e6], color="0.6", lw=1, ls="--", label="achieved = asked")
    if ok:
        ax.scatter([x / 1e6 for x, _ in ok], [y / 1e6 for _, y in ok], s=18, color="tab:green", label="PASS/SKIP")
    if bad:
        ax.scatter([x / 1e6 for x, _ in bad], [y / 1e6 for _, y in bad], s=28, marker="x", color="tab:red",
                   label="FAIL/ERROR")
    if hi / lo > 50:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("asked rate (MS/s)")
    ax.set_ylabel("achieved rate (MS/s)")
    ax.set_title("Achieved vs asked rate, every case")
    ax.legend(loc="upper left", fontsize=8)
    return _svg(fig, "achieved vs asked rate")


def sweep_plot(sweep: Sweep, fixed: dict[str, JsonValue], points: list[CaseView]) -> str:
    """frames/s, MS/s and drop % against the row axis, one line per column-axis value."""
    panels = [("frames_per_s", "frames/s", 1.0), ("throughput_sps", "MS/s", 1e-6), ("drop_ratio", "drop %", 100.0)]
    panels = [p for p in panels if any(p[0] in c.metrics for c in points)]
    numeric_rows = [c for c in points if _is_number(c.sweep_point.get(sweep.row_axis))]
    if not panels or len(numeric_rows) < 2:
        return ""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(3.3 * len(panels), 3.0), squeeze=False)
    for ax, (metric, label, scale) in zip(axes[0], panels, strict=True):
        for col, pts in sweep.series(points, _scaled(metric, scale)):
            if not pts:
                continue
            name = f"{axis_label(sweep.col_axis)} = {col}" if sweep.col_axis else label
            ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", ms=3, label=name)
        xs = sorted({value_key(c.sweep_point[sweep.row_axis])[1] for c in numeric_rows})
        if xs[-1] / max(xs[0], 1e-12) > 20:
            ax.set_xscale("log")
        ax.set_xlabel(axis_label(sweep.row_axis))
        ax.set_ylim(bottom=0)
        ax.set_ylabel(label)
        ax.set_title(label)
    axes[0][0].legend(fontsize=7)
    where = ", ".join(f"{axis_label(k)} = {v}" for k, v in fixed.items())
    fig.suptitle(sweep.name + (f" ({where})" if where else ""), fontsize=10)
    fig.tight_layout()
    return _svg(fig, f"sweep {sweep.name} {where}".strip())


def _is_number(v: JsonValue) -> bool:
    return not isinstance(v, bool) and value_key(v)[0] == 0


def latency_plot(cases: list[CaseView]) -> str:
    """Latency p50 / p99 / max per case (ms), horizontal bars, log scale when wide."""
    rows = [(c.test_name, c.metrics) for c in cases if "latency_p99_s" in c.metrics]
    if not rows:
        return ""
    plt = _pyplot()
    height = 0.9 + 0.22 * len(rows)
    fig, ax = plt.subplots(figsize=(7, min(height, 40)))
    ys = list(range(len(rows)))
    for i, (key, label, color) in enumerate((("latency_p50_s", "p50", "tab:blue"),
                                             ("latency_p99_s", "p99", "tab:orange"),
                                             ("latency_max_s", "max", "tab:red"))):
        vals = [m.get(key, 0.0) * 1e3 for _, m in rows]
        ax.barh([y + (i - 1) * 0.27 for y in ys], vals, height=0.27, color=color, label=label)
    ax.set_yticks(ys, [n if len(n) <= 60 else n[:57] + "..." for n, _ in rows], fontsize=7)
    ax.invert_yaxis()
    vals = [m.get("latency_max_s", m["latency_p99_s"]) for _, m in rows]
    positive = [v for v in vals if v > 0]
    if positive and max(positive) / max(min(positive), 1e-12) > 100:
        ax.set_xscale("log")
    ax.set_xlabel("latency (ms)")
    ax.set_title("Latency percentiles per case")
    ax.legend(fontsize=8, loc="lower right")
    return _svg(fig, "latency percentiles per case")


FAILURE_SERIES_KEYS = ("missing_frames", "overruns", "underruns", "pattern_errors", "seq_errors")


def failure_second(case: CaseView) -> float | None:
    """When a failing case first went wrong: the first second with an error count, else
    the first second below the lowest throughput limit it failed, else None."""
    if not case.failure:
        return None
    for row in case.series:
        if any((row.get(k) or 0.0) > 0 for k in FAILURE_SERIES_KEYS):
            return row.get("t_s")
    ratio_limits = [t.limit for t in case.thresholds if not t.passed
                    and t.metric in ("throughput_sps", "throughput_ratio") and finite(t.limit)]
    rate = case.case.rate_sps
    for row in case.series:
        thr = row.get("throughput_sps")
        if ratio_limits and finite(thr) and finite(rate):
            limits_sps = [lim if lim > 10 else lim * rate for lim in ratio_limits]
            if thr < min(limits_sps):
                return row.get("t_s")
    return None


def series_plot(case: CaseView) -> str:
    """The per-second series of a case: rate (MS/s), missing frames and errors per second,
    latency when recorded; a red line where a failing case first went wrong."""
    series = [r for r in case.series if finite(r.get("t_s"))]
    if len(series) < 2:  # one second (a short sweep point) is in the key metrics already
        return ""
    plt = _pyplot()
    has_latency = any(finite(r.get("latency_p99_s")) for r in series)
    n = 3 if has_latency else 2
    fig, axes = plt.subplots(n, 1, figsize=(6.2, 1.35 * n + 0.5), sharex=True)
    t = [r["t_s"] for r in series]
    ax = axes[0]
    ax.plot(t, [(r.get("throughput_sps") or 0) / 1e6 for r in series], marker=".", color="tab:blue", label="achieved")
    rate = case.case.rate_sps
    if finite(rate):
        ax.axhline(rate / 1e6, color="0.5", ls="--", lw=1, label="asked")
    ax.set_ylabel("MS/s")
    ax.legend(fontsize=7, loc="lower right")
    ax = axes[1]
    colors = ("tab:red", "tab:orange", "tab:purple", "tab:brown", "tab:pink")
    for key, color in zip(FAILURE_SERIES_KEYS, colors, strict=True):
        if any(finite(r.get(key)) for r in series):
            ax.step(t, [r.get(key) or 0 for r in series], where="post", color=color, label=key.replace("_", " "))
    ax.set_ylabel("per second")
    ax.legend(fontsize=6, loc="upper left", ncol=3)
    if has_latency:
        axes[2].plot(t, [(r.get("latency_p99_s") or 0) * 1e3 for r in series], color="tab:green", label="p99")
        axes[2].set_ylabel("latency ms")
    axes[-1].set_xlabel("time in the measured window (s)")
    when = failure_second(case)
    if when is not None:
        for a in axes:
            a.axvline(when, color="red", lw=1.5)
        axes[0].annotate(f"failure at {when:g} s", xy=(when, 0.9), xycoords=("data", "axes fraction"),
                         color="red", fontsize=8, ha="left")
    fig.suptitle(f"{case.test_name}: per second ({case.label})", fontsize=9)
    fig.tight_layout()
    return _svg(fig, f"per-second series {case.test_name}")


def trend_plot(title: str, nights: list[str], values: list[float | None], flag_index: int | None = None,
               baseline: float | None = None) -> str:
    """A metric over nights; the first night of a flagged regression marked in red."""
    pts = [(i, v) for i, v in enumerate(values) if finite(v)]
    if not pts:
        return ""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.2, 1.5))
    ax.plot([i for i, _ in pts], [v for _, v in pts], marker=".", color="tab:blue")
    if baseline is not None:
        ax.axhline(baseline, color="0.5", ls="--", lw=1)
    if flag_index is not None:
        ax.axvline(flag_index, color="red", lw=1.5)
    ticks = list(range(0, len(nights), max(1, len(nights) // 6)))
    ax.set_xticks(ticks, [nights[i][:8] for i in ticks], fontsize=6, rotation=30)
    ax.set_title(title, fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    return _svg(fig, f"trend {title}")
