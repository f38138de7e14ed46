"""The nightly trend report: per case and key metric a line over nights, regression flags
from the robust gate (hostlib/reports/detection.py), one HTML file."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

from ..results.query import Row
from ..results.verdict import format_metric
from .detection import Flag, RobustGate
from .history import History
from .model import finite

# Key metrics trended, and whether a rise is good.
TREND_METRICS = (
    ("throughput_sps", True), ("throughput_ratio", True), ("frames_per_s", True), ("throughput_Bps", True),
    ("missing_frames", False), ("drop_ratio", False), ("latency_p99_s", False),
    # hilrig_bench rows (make bench): the rig's own speed and its ratio to the peer
    ("ratio", True), ("rig_Bps", True),
)
SHOWN_AS = {"rig_Bps": "throughput_Bps"}  # bench fields formatted like the metric of the same unit


@dataclass
class Trend:
    testcase: str
    metric: str
    higher_is_better: bool
    values: list[float | None]
    flag: Flag | None = None
    since_run: str = ""

    def line(self) -> str:
        f = self.flag
        if f is None:
            return f"{self.testcase}: {self.metric} not flagged"
        rel = f"{f.relative * 100:+.1f} %" if f and f.baseline else ""
        unit = SHOWN_AS.get(self.metric, self.metric)
        return (f"REGRESSION {self.testcase}: {self.metric} {format_metric(unit, f.baseline)} -> "
                f"{format_metric(unit, f.recent)} ({rel}) since night {self.since_run}")

    def sparkline(self, width: int = 160, height: int = 28) -> str:
        """A small inline SVG polyline (no matplotlib: one per case and metric)."""
        pts = [(i, v) for i, v in enumerate(self.values) if finite(v)]
        if len(pts) < 2:
            return ""
        lo, hi = min(v for _, v in pts), max(v for _, v in pts)
        span = (hi - lo) or 1.0
        n = max(len(self.values) - 1, 1)
        xy = " ".join(f"{i / n * (width - 4) + 2:.1f},{height - 2 - (v - lo) / span * (height - 4):.1f}"
                      for i, v in pts)
        mark = ""
        if self.flag is not None:
            x = self.flag.since / n * (width - 4) + 2
            mark = f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{height}" stroke="red" stroke-width="1.5"/>'
        return (f'<svg class="spark" width="{width}" height="{height}" role="img" aria-label="trend {self.testcase} '
                f'{self.metric}"><polyline fill="none" stroke="#1f77b4" stroke-width="1.2" points="{xy}"/>{mark}</svg>')


@dataclass
class TrendAnalysis:
    history: History
    trends: list[Trend] = field(default_factory=list)
    gate: RobustGate = field(default_factory=RobustGate)
    runs_of: dict[str, list[str]] = field(default_factory=dict)  # testcase -> its nights (bench rows have their own)

    def merge(self, other: TrendAnalysis) -> TrendAnalysis:
        """Another history's trends (the bench's nights) in the same report."""
        self.trends += other.trends
        self.runs_of.update(other.runs_of)
        return self

    @property
    def regressions(self) -> list[Trend]:
        return [t for t in self.trends if t.flag is not None]

    def summary_lines(self) -> list[str]:
        lines = [t.line() for t in self.regressions]
        if not lines:
            lines.append(f"no regression in {len(self.trends)} case/metric trends over {len(self.history.runs)} nights")
        return lines


def _number(row: Row | None, metric: str) -> float | None:
    value = row.get(metric) if row is not None else None
    return float(value) if finite(value) else None


def analyse(history: History, gate: RobustGate | None = None) -> TrendAnalysis:
    gate = gate or RobustGate()
    out = TrendAnalysis(history, gate=gate)
    for testcase, rows in history.series().items():
        for metric, higher in TREND_METRICS:
            values = [_number(r, metric) for r in rows]
            present = [(i, v) for i, v in enumerate(values) if v is not None]
            if not present:
                continue
            trend = Trend(testcase, metric, higher, values)
            flag = gate.flag([v for _, v in present], higher)
            if flag is not None:
                # indexes into the nights, not into the nights that had the case
                trend.flag = Flag(present[flag.night][0], present[flag.since][0], flag.baseline, flag.recent,
                                  flag.threshold)
                trend.since_run = history.runs[trend.flag.since]
            out.trends.append(trend)
        out.runs_of[testcase] = history.runs
    return out


def write_trend_report(analysis: TrendAnalysis, output: str | Path) -> Path:
    from . import plots
    from .html import environment, write_text_atomic

    flagged = []
    for t in analysis.regressions:
        flagged.append({"trend": t, "line": t.line(),
                        "plot": plots.trend_plot(f"{t.testcase}: {t.metric}",
                                                 analysis.runs_of.get(t.testcase, analysis.history.runs), t.values,
                                                 t.flag.since if t.flag else None,
                                                 t.flag.baseline if t.flag else None)})
    by_case: dict[str, list[Trend]] = {}
    for t in analysis.trends:
        by_case.setdefault(t.testcase, []).append(t)
    text = environment().get_template("trends.html.j2").render(
        analysis=analysis, flagged=flagged, by_case=by_case, runs=analysis.history.runs,
        source=analysis.history.source, format_metric=format_metric, gate=analysis.gate,
        generated=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))
    return write_text_atomic(Path(output), text)
