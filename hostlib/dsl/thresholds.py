"""Pass/fail thresholds: `metric: "<op> <value> [unit]"` or `"<op> <pct>% of <param>"`.

Parsed by one regular expression, never eval. The limit is resolved when evaluated,
against the case's parameters passed as data (Case.threshold_params(): a percentage
of the case's own rate, duration, ...), so a sweep point's thresholds follow its own.

    throughput: ">= 99.9% of rate"
    latency_p99: "< 2 ms"
    missing_frames: "== 0"
    throughput: {limit: ">= 99% of rate", marginal: ">= 99.9% of rate"}

`marginal` is an optional stricter expression: a result that meets `limit` but
not `marginal` passes and is flagged marginal (close to failing).
"""
from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from hostlib import metrics as _metrics
from hostlib._exceptions import ThresholdError, UnitError
from hostlib.units import _NUMBER, allowed_units, unit_scale
from hostlib.verdicts import Op, ThresholdResult, Verdict

__all__ = ["PARAMS", "Threshold", "ThresholdError", "ThresholdResult", "parse_threshold"]

# The case parameters a percentage may refer to, and their dimensions. Their values come
# with each evaluation (Case.threshold_params() gives exactly these names).
PARAMS: dict[str, str] = {
    "rate": "rate",
    "master_clock": "frequency",
    "duration": "time",
    "channels": "count",
    "frame_bytes": "count",
    "samples_per_frame": "count",
}

_EXPR = re.compile(
    rf"""^\s*(?P<op>>=|<=|==|!=|>|<)\s*
         (?P<num>{_NUMBER})\s*
         (?:(?P<pct>%)\s*of\s+(?P<param>[A-Za-z_][A-Za-z0-9_]*)
           |(?P<unit>[A-Za-zµ/%]+))?
         \s*$""",
    re.VERBOSE,
)
_SYNTAX_HELP = ('expected "<op> <number> [unit]" or "<op> <number>% of <param>" with op one of '
                ">=, >, <=, <, ==, != and param one of " + ", ".join(PARAMS)
                + ' (e.g. ">= 99.9% of rate", "< 2 ms", "== 0")')


def _compatible(metric_dim: str, param_dim: str) -> bool:
    # Samples per second and hertz are both 1/s: "throughput >= 50% of master_clock" is meaningful.
    if metric_dim == param_dim:
        return True
    return {metric_dim, param_dim} == {"rate", "frequency"}


@dataclass(frozen=True)
class _Expr:
    op: Op
    number: float          # as written (99.9 for "99.9% of rate")
    scale: float           # unit scale, or 0.01 for a percentage of a param
    param: str | None      # case parameter for "% of <param>"
    rhs: str               # the limit as written after the operator: "99.9% of rate", "2 ms"

    @property
    def text(self) -> str:
        return f"{self.op} {self.rhs}"

    def limit(self, params: Mapping[str, float]) -> float:
        if self.param is None:
            return self.number * self.scale
        if self.param not in params:
            raise ThresholdError(f"{self.text!r} refers to the case's {self.param}; no value given for it")
        return self.number * 0.01 * params[self.param]


def _parse_expr(text: object, metric: _metrics.Metric) -> _Expr:
    if not isinstance(text, str):
        # YAML turns `== 0` into a string but a bare `0` into an int: say what form is wanted.
        raise ThresholdError(f"{text!r} is not a comparison; {_SYNTAX_HELP}")
    m = _EXPR.match(text)
    if not m:
        raise ThresholdError(f"{text!r} does not parse; {_SYNTAX_HELP}")
    op, number = Op(m.group("op")), float(m.group("num"))
    rhs = text.strip()[len(m.group("op")):].strip()
    if not math.isfinite(number):
        raise ThresholdError(f"{text!r}: the value is not a finite number")
    param = m.group("param")
    if param is not None:
        if param not in PARAMS:
            close = difflib.get_close_matches(param, list(PARAMS), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ThresholdError(f"{text!r}: unknown parameter '{param}'{hint} "
                                 f"(allowed after '% of': {', '.join(PARAMS)})")
        pdim = PARAMS[param]
        if not _compatible(metric.dimension, pdim):
            raise ThresholdError(
                f"{text!r}: {metric.name} is a {metric.dimension.replace('_', ' ')} but "
                f"{param} is a {pdim}; a percentage of {param} cannot limit it")
        return _Expr(op, number, 0.01, param, rhs)
    unit = m.group("unit")
    if unit is None:
        return _Expr(op, number, 1.0, None, rhs)
    if metric.name == "frames_per_s" and unit.endswith("frames/s"):
        unit = unit[: -len("frames/s")] + "S/s"  # "29.6 kframes/s", as hilrig prints it
    try:
        scale = unit_scale(unit, metric.dimension)
    except UnitError as e:
        if unit == "%":  # a percentage of what? of the case's rate, usually
            fits = [p for p, dim in PARAMS.items() if _compatible(metric.dimension, dim)]
            example = f"{op} {m.group('num')}% of {fits[0]}" if fits and fits[0] in ("rate", "duration") else None
            raise ThresholdError(
                f"{text!r}: a percentage needs what it is a percentage of"
                + (f"; write \"{example}\"" if example else "")
                + (f" (allowed after '% of' for {metric.name}: {', '.join(fits)})" if fits else "")) from None
        raise ThresholdError(f"{text!r}: unit does not fit {metric.name} "
                             f"(a {metric.dimension.replace('_', ' ')}): {e}") from None
    return _Expr(op, number, scale, None, rhs)


@dataclass(frozen=True)
class Threshold:
    """One parsed threshold. `metric` is the canonical name from hostlib.metrics."""

    metric: str
    text: str                      # the limit expression as written
    marginal_text: str | None
    _limit: _Expr
    _marginal: _Expr | None
    written_as: str = ""           # the metric key as written in the YAML (maybe an alias)
    leg: str | None = None         # rx+tx: the stream it judges ("rx" | "tx"); None = every stream

    @property
    def op(self) -> Op:
        return self._limit.op

    @property
    def dimension(self) -> str:
        return _metrics.METRICS[self.metric].dimension

    @property
    def label(self) -> str:
        """'throughput_sps >= 99.9% of rate', 'tx.throughput_sps ...' for a threshold on one leg."""
        return f"{self.leg}.{self.metric} {self.text}" if self.leg else f"{self.metric} {self.text}"

    def evaluate(self, metrics: Mapping[str, float], params: Mapping[str, float], *,
                 leg: str | None = None) -> ThresholdResult:
        """Judge `metrics` (one run's, or one leg's, keyed by canonical name or alias).
        `params`: the case parameters a percentage refers to (Case.threshold_params());
        `leg`: the stream these metrics belong to, recorded in the result."""
        measured = metrics.get(self.metric)
        if measured is None:
            # Accept results keyed by an alias too; the registry defines them all.
            for alias in _metrics.METRICS[self.metric].aliases:
                if alias in metrics:
                    measured = metrics[alias]
                    break
        limit = self._limit.limit(params)
        verdict, margin, note = Verdict.FAIL, None, ""
        if measured is None:
            note = f"metric {self.metric} was not measured in this run"
        elif math.isnan(measured := float(measured)):
            note = f"metric {self.metric} is NaN (not measurable in this run)"
        else:
            margin = self.op.margin(measured, limit)
            if self.op.holds(measured, limit):
                verdict = Verdict.PASS
                if self._marginal is not None:
                    mlimit = self._marginal.limit(params)
                    if not self._marginal.op.holds(measured, mlimit):
                        verdict = Verdict.MARGINAL
                        note = f"inside limit but outside marginal band {self.marginal_text!r} ({mlimit:.6g})"
        return ThresholdResult(metric=self.metric, leg=leg, op=self.op, limit_text=self._limit.rhs,
                               relative_to=self._limit.param, measured=measured, limit=limit, margin=margin,
                               verdict=verdict, note=note)


def parse_threshold(metric_name: str, spec: object) -> Threshold:
    """Parse one `thresholds:` entry. Raises ThresholdError with what is allowed."""
    metric = _metrics.lookup_metric(metric_name) if isinstance(metric_name, str) else None
    if metric is None:
        close = difflib.get_close_matches(str(metric_name), _metrics.metric_names(), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ThresholdError(f"unknown metric {metric_name!r}{hint} (metrics: {', '.join(_metrics.METRICS)})")
    marginal_text = None
    if isinstance(spec, dict):
        unknown = set(spec) - {"limit", "marginal"}
        if unknown:
            raise ThresholdError(f"unknown key(s) {', '.join(sorted(map(str, unknown)))} in threshold; "
                                 "allowed: limit, marginal")
        if "limit" not in spec:
            raise ThresholdError("a threshold mapping needs 'limit' (and optionally 'marginal')")
        limit_text, marginal_text = spec["limit"], spec.get("marginal")
    else:
        limit_text = spec
    try:
        limit = _parse_expr(limit_text, metric)
    except ThresholdError:
        # "freq_error: <= 0.1 ppm": written in the unit of the metric's relative form.
        relative = _metrics.METRICS[metric.relative] if metric.relative else None
        if relative is None:
            raise
        try:
            limit = _parse_expr(limit_text, relative)
        except ThresholdError:
            raise ThresholdError(f"{limit_text!r}: {metric.name} takes a {metric.dimension} "
                                 f"({', '.join(allowed_units(metric.dimension))}), or a {relative.dimension} "
                                 f"({', '.join(allowed_units(relative.dimension))}) for {relative.name}") from None
        metric = relative
    marginal = None
    if marginal_text is not None:
        marginal = _parse_expr(marginal_text, metric)
        same_way = (limit.op.lower_bound and marginal.op.lower_bound) or (limit.op.upper_bound
                                                                          and marginal.op.upper_bound)
        if not same_way:
            raise ThresholdError(f"marginal {marginal_text!r} must compare the same way as limit "
                                 f"{limit_text!r} (both >=/> or both <=/<)")
        marginal_text = marginal.text
    return Threshold(metric.name, limit.text, marginal_text, limit, marginal, str(metric_name))
