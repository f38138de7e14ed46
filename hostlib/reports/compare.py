"""Two runs side by side: per-metric deltas per case, new failures, fixed failures."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..results.schema import ResultRecord
from ..results.verdict import format_metric
from .model import RunView, finite
from .tables import KEY_LABELS, KEY_METRICS

# Metrics whose rise is good; for the rest (errors, latency, drops) a rise is worse.
HIGHER_IS_BETTER = frozenset({"throughput_sps", "throughput_ratio", "throughput_Bps", "frames_per_s",
                              "throughput_msps", "samples_received", "frames_received"})
COMPARE_METRICS = (*KEY_METRICS, "drop_ratio")


@dataclass
class MetricDelta:
    metric: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return self.b - self.a if self.a is not None and self.b is not None else None

    @property
    def relative(self) -> float | None:
        d = self.delta
        return d / abs(self.a) if d is not None and self.a else None

    @property
    def worse(self) -> bool:
        d = self.delta
        if not d:
            return False
        return d < 0 if self.metric in HIGHER_IS_BETTER else d > 0

    def text(self) -> tuple[str, str, str, str]:
        rel = self.relative
        d = self.delta
        dtext = "" if d is None else ("+" if d > 0 else "") + format_metric(self.metric, d)
        return (format_metric(self.metric, self.a), format_metric(self.metric, self.b), dtext,
                "" if rel is None else f"{rel * 100:+.1f} %")


@dataclass
class CaseComparison:
    testcase: str
    a: ResultRecord | None
    b: ResultRecord | None
    deltas: list[MetricDelta] = field(default_factory=list)

    @property
    def labels(self) -> tuple[str, str]:
        """The two verdicts as read: 'PASS', 'ERROR (device)' ..., '-' where the case is absent."""
        return (self.a.label if self.a else "-", self.b.label if self.b else "-")

    @property
    def change(self) -> str:
        a, b = self.a, self.b
        if a is None:
            return "new case"
        if b is None:
            return "case gone"
        if b.verdict.failure and not a.verdict.failure:
            return "new failure"
        if a.verdict.failure and not b.verdict.failure:
            return "fixed"
        return "" if a.label == b.label else f"{a.label} -> {b.label}"


@dataclass
class Comparison:
    run_a: RunView
    run_b: RunView
    cases: list[CaseComparison]

    def with_change(self, change: str) -> list[CaseComparison]:
        return [c for c in self.cases if c.change == change]

    @property
    def new_failures(self) -> list[CaseComparison]:
        return self.with_change("new failure")

    @property
    def fixed(self) -> list[CaseComparison]:
        return self.with_change("fixed")


def compare(a: RunView, b: RunView) -> Comparison:
    """Cases matched by test name (the sweep point is part of it), in B's order then A's leftovers."""
    cases_a = {c.test_name: c for c in a.cases}
    cases_b = {c.test_name: c for c in b.cases}
    names = list(cases_b) + [n for n in cases_a if n not in cases_b]
    out = []
    for name in names:
        ca, cb = cases_a.get(name), cases_b.get(name)
        cmp = CaseComparison(name, ca.record if ca else None, cb.record if cb else None)
        ma = ca.metrics if ca else {}
        mb = cb.metrics if cb else {}
        for metric in COMPARE_METRICS:
            va, vb = ma.get(metric), mb.get(metric)
            if finite(va) or finite(vb):
                cmp.deltas.append(MetricDelta(metric, va if finite(va) else None, vb if finite(vb) else None))
        out.append(cmp)
    return Comparison(a, b, out)


def comparison_text(cmp: Comparison) -> str:
    """Plain text: new failures, fixed, then per case the key metrics A -> B with deltas."""
    lines = [f"compare {cmp.run_a.run_id} (A) -> {cmp.run_b.run_id} (B)"]
    for title, items in (("new failures", cmp.new_failures), ("fixed failures", cmp.fixed),
                         ("new cases", cmp.with_change("new case")), ("cases gone", cmp.with_change("case gone"))):
        lines.append(f"{title}: {len(items)}")
        lines += [f"  {c.testcase}: {' -> '.join(c.labels)}" for c in items]
    for c in cmp.cases:
        lines.append("")
        lines.append(f"{c.testcase}: {' -> '.join(c.labels)}"
                     + (f"  [{c.change}]" if c.change else ""))
        for d in c.deltas:
            a, b, delta, rel = d.text()
            mark = "  worse" if d.worse else ""
            lines.append(f"  {KEY_LABELS.get(d.metric, d.metric):24s} {a:>14s} -> {b:>14s}  "
                         f"{delta:>14s} {rel:>9s}{mark}")
    return "\n".join(lines) + "\n"
