"""Pass/fail thresholds: `metric: "<op> <value> [unit]"` or `"<op> <pct>% of <param>"`.

Parsed by one regular expression, never eval. The limit is resolved against the
case when evaluated (a percentage of the case's own rate, duration, ...), so a
sweep point's thresholds follow its own parameters.

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
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hostlib import metrics as _metrics
from hostlib.units import _NUMBER, UnitError, format_quantity, unit_scale

if TYPE_CHECKING:  # pragma: no cover
    from hostlib.dsl.case import Case

__all__ = ["PARAMS", "Threshold", "ThresholdError", "ThresholdResult", "parse_threshold"]


class ThresholdError(ValueError):
    """A threshold that does not parse or does not fit its metric."""


_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt,
    "==": operator.eq, "!=": operator.ne,
}

# Case parameters a percentage may refer to: name -> (dimension, getter).
PARAMS: dict[str, tuple[str, Callable[[Case], float]]] = {
    "rate": ("rate", lambda c: c.rate_sps),
    "master_clock": ("frequency", lambda c: c.master_clock_hz),
    "duration": ("time", lambda c: c.duration_s),
    "channels": ("count", lambda c: float(c.channels)),
    "frame_bytes": ("count", lambda c: float(c.frame_bytes)),
    "samples_per_frame": ("count", lambda c: float(c.samples_per_frame)),
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
    op: str
    number: float          # as written (99.9 for "99.9% of rate")
    scale: float           # unit scale, or 0.01 for a percentage of a param
    param: str | None      # case parameter for "% of <param>"
    text: str

    def limit(self, case: Case | None) -> float:
        if self.param is None:
            return self.number * self.scale
        if case is None:
            raise ThresholdError(f"{self.text!r} refers to the case's {self.param}; no case given")
        return self.number * 0.01 * PARAMS[self.param][1](case)


def _parse_expr(text: object, metric: _metrics.Metric) -> _Expr:
    if not isinstance(text, str):
        # YAML turns `== 0` into a string but a bare `0` into an int: say what form is wanted.
        raise ThresholdError(f"{text!r} is not a comparison; {_SYNTAX_HELP}")
    m = _EXPR.match(text)
    if not m:
        raise ThresholdError(f"{text!r} does not parse; {_SYNTAX_HELP}")
    op, number = m.group("op"), float(m.group("num"))
    if not math.isfinite(number):
        raise ThresholdError(f"{text!r}: the value is not a finite number")
    param = m.group("param")
    if param is not None:
        if param not in PARAMS:
            close = difflib.get_close_matches(param, list(PARAMS), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ThresholdError(f"{text!r}: unknown parameter '{param}'{hint} "
                                 f"(allowed after '% of': {', '.join(PARAMS)})")
        pdim = PARAMS[param][0]
        if not _compatible(metric.dimension, pdim):
            raise ThresholdError(
                f"{text!r}: {metric.name} is a {metric.dimension.replace('_', ' ')} but "
                f"{param} is a {pdim}; a percentage of {param} cannot limit it")
        return _Expr(op, number, 0.01, param, text.strip())
    unit = m.group("unit")
    if unit is None:
        return _Expr(op, number, 1.0, None, text.strip())
    if metric.name == "frames_per_s" and unit.endswith("frames/s"):
        unit = unit[: -len("frames/s")] + "S/s"  # "29.6 kframes/s", as hilrig prints it
    try:
        scale = unit_scale(unit, metric.dimension)
    except UnitError as e:
        if unit == "%":  # a percentage of what? of the case's rate, usually
            fits = [p for p, (dim, _) in PARAMS.items() if _compatible(metric.dimension, dim)]
            example = f"{op} {m.group('num')}% of {fits[0]}" if fits and fits[0] in ("rate", "duration") else None
            raise ThresholdError(
                f"{text!r}: a percentage needs what it is a percentage of"
                + (f"; write \"{example}\"" if example else "")
                + (f" (allowed after '% of' for {metric.name}: {', '.join(fits)})" if fits else "")) from None
        raise ThresholdError(f"{text!r}: unit does not fit {metric.name} "
                             f"(a {metric.dimension.replace('_', ' ')}): {e}") from None
    return _Expr(op, number, scale, None, text.strip())


def _margin(op: str, measured: float, limit: float) -> float:
    """How far inside (+) or outside (-) the limit `measured` is, in the metric's unit."""
    if op in (">=", ">"):
        return measured - limit
    if op in ("<=", "<"):
        return limit - measured
    if op == "==":
        return -abs(measured - limit) + 0.0   # + 0.0: an exact hit is 0, not -0
    return abs(measured - limit)  # "!="


@dataclass(frozen=True)
class ThresholdResult:
    metric: str
    text: str
    measured: float | None
    limit: float | None
    margin: float | None
    passed: bool
    marginal: bool
    message: str = ""

    @property
    def verdict(self) -> str:
        if not self.passed:
            return "FAIL"
        return "PASS (marginal)" if self.marginal else "PASS"

    def line(self) -> str:
        """One human line: 'throughput_sps 9.998e+06 >= 9.99e+06 (99.9% of rate) margin +8e+03 PASS'."""
        if self.measured is None or self.limit is None:
            return f"{self.metric} {self.text}: {self.message or 'not measured'} {self.verdict}"
        op = re.match(r"(>=|<=|==|!=|>|<)", self.text.strip())
        op_s = op.group(1) if op else "?"
        detail = ""
        if "% of" in self.text:
            detail = f" ({self.text.strip()[len(op_s):].strip()})"
        margin = f" margin {self.margin:+.4g}" if self.margin is not None else ""
        extra = f" [{self.message}]" if self.message else ""
        return f"{self.metric} {self.measured:.6g} {op_s} {self.limit:.6g}{detail}{margin} {self.verdict}{extra}"

    __str__ = line


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
    def op(self) -> str:
        return self._limit.op

    @property
    def dimension(self) -> str:
        return _metrics.METRICS[self.metric].dimension

    def limit_value(self, case: Case | None = None) -> float:
        """The limit in the metric's base unit for `case`."""
        return self._limit.limit(case)

    def evaluate(self, metrics: dict[str, float], case: Case | None = None) -> ThresholdResult:
        measured = metrics.get(self.metric)
        if measured is None:
            # Accept results keyed by an alias too; the registry defines them all.
            for alias in _metrics.METRICS[self.metric].aliases:
                if alias in metrics:
                    measured = metrics[alias]
                    break
        limit = self._limit.limit(case)
        if measured is None:
            return ThresholdResult(self.metric, self.text, None, limit, None, False, False,
                                   f"metric {self.metric} was not measured in this run")
        measured = float(measured)
        if math.isnan(measured):
            return ThresholdResult(self.metric, self.text, measured, limit, None, False, False,
                                   f"metric {self.metric} is NaN (not measurable in this run)")
        passed = _OPS[self.op](measured, limit)
        margin = _margin(self.op, measured, limit)
        marginal = False
        message = ""
        if passed and self._marginal is not None:
            mlimit = self._marginal.limit(case)
            if not _OPS[self._marginal.op](measured, mlimit):
                marginal = True
                message = f"inside limit but outside marginal band {self.marginal_text!r} ({mlimit:.6g})"
        return ThresholdResult(self.metric, self.text, measured, limit, margin, passed, marginal, message)

    def describe(self, case: Case | None = None) -> str:
        """'throughput_sps >= 9.99 MS/s (99.9% of rate)' for logs."""
        try:
            lim = format_quantity(self._limit.limit(case), self.dimension)
        except ThresholdError:
            return f"{self.metric} {self.text}"
        return f"{self.metric} {self.op} {lim} ({self.text})"


def parse_threshold(metric_name: str, spec: Any) -> Threshold:
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
    limit = _parse_expr(limit_text, metric)
    marginal = None
    if marginal_text is not None:
        marginal = _parse_expr(marginal_text, metric)
        lower = {">=", ">"}
        upper = {"<=", "<"}
        if not ((limit.op in lower and marginal.op in lower) or (limit.op in upper and marginal.op in upper)):
            raise ThresholdError(f"marginal {marginal_text!r} must compare the same way as limit "
                                 f"{limit_text!r} (both >=/> or both <=/<)")
        marginal_text = marginal.text
    return Threshold(metric.name, limit.text, marginal_text, limit, marginal, str(metric_name))
