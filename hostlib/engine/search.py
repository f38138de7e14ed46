"""A rate search case (`search:` in the YAML, docs/dsl.md "Rate search").

The candidates (decimation or interpolation values) are ordered from the lowest rate
to the highest. Each step runs one candidate for `step_s` through the ordinary
engine (run_case: open, stream, stop, verdict) with the case's thresholds as the pass
rule; a bisection over the candidates assumes that a rate which holds makes every
lower one hold. A step that FAILs is run once more before it counts (STEP_TRIES): one
short step on a shared host can lose frames to a descheduled thread, and the bisection
would carry that one transient down to every rate above it. The best candidate is
then confirmed over the case's duration (a FAIL tried once more, as a step is); if it
does not hold there, each lower candidate in turn, down to the lowest: on a host that
stalls for longer than the device's FIFO holds (a busy VM), a rate a short step held can
still overflow over the duration, and the answer is then the highest rate that did hold.
The confirmation run is the case's result, with max_rate_sps / max_throughput_Bps /
search_divider / search_steps beside its metrics and every step in `result.steps`.
No candidate holding is a FAIL naming the rates tried.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from ..dsl.case import Case, SearchSpec, default_timeout_s
from ..results.record import CaseResult, Verdict
from ..results.schema import SearchStep
from ..units import format_quantity
from .measure import bytes_per_tick, legs_of

STEP_TRIES = 2      # a failing step or confirmation is tried again once before it counts


def step_count(n_candidates: int) -> int:
    """Steps a bisection over n candidates takes at most."""
    return max(1, math.ceil(math.log2(n_candidates + 1)))


def _spec(case: Case) -> SearchSpec:
    if case.search is None:
        raise ValueError(f"{case.location}: {case.test_name} is not a rate search case")
    return case.search


def estimated_seconds(case: Case, overhead_s: float) -> float:
    """Wall time of a search case: its steps and one confirmation (more if a step is
    retried or a confirmation fails)."""
    spec = _spec(case)
    run = float(case.warmup_s) + overhead_s
    return step_count(len(spec.values)) * (run + spec.step_s) + run + float(case.duration_s)


def data_rate_Bps(case: Case, rate_sps: float) -> float:
    """Payload bytes per second of a rate, all the case's directions together."""
    return rate_sps * bytes_per_tick(case) * len(legs_of(case))


def candidate(case: Case, value: int, duration_s: float) -> Case:
    """The case run at one candidate for duration_s (an ordinary case: no search).
    loopback / rx+tx set both dividers: one rate for both (validated equal)."""
    spec = _spec(case)
    decimation = value if spec.key == "decimation" or case.decimation is not None else None
    interpolation = value if spec.key == "interpolation" or case.interpolation is not None else None
    return dataclasses.replace(case, decimation=decimation, interpolation=interpolation,
                               rate_sps=case.master_clock_hz / value, duration_s=duration_s, search=None,
                               timeout_s=default_timeout_s(duration_s, case.warmup_s))


def run_search(case: Case, run_one: Callable[[Case], CaseResult], say: Callable[[str], None]) -> CaseResult:
    """Search, confirm, and return the confirmation's result (or the step that ended it)."""
    spec = _spec(case)
    values = spec.values
    steps: list[SearchStep] = []
    planned = step_count(len(values))

    def attempt(value: int, duration_s: float, phase: str) -> CaseResult:
        c = candidate(case, value, duration_s)
        label = (f"search {case.test_name}: {phase} {len(steps) + 1} "
                 f"({'of ~' + str(planned + 1) if phase != 'confirm' else 'over ' + format(duration_s, 'g') + ' s'}): "
                 f"{spec.key} {value} = {format_quantity(c.rate_sps, 'rate')} "
                 f"({data_rate_Bps(c, c.rate_sps) / 1e6:.2f} MB/s)")
        say(label + " ...")
        r = run_one(c)
        steps.append({"step": len(steps) + 1, "phase": phase, "key": spec.key, "value": value,
                      "rate_sps": c.rate_sps, "throughput_Bps": r.metrics.get("throughput_Bps"),
                      "verdict": r.verdict, "passed": r.verdict.passed, "message": r.message})
        say(f"{label}: {r.verdict.label}")
        return r

    # Bisection: values[:good+1] hold, values[bad:] do not (as far as the steps show).
    good, bad = -1, len(values)
    last: CaseResult | None = None
    while bad - good > 1:
        mid = (good + bad) // 2
        last = attempt(values[mid], spec.step_s, "step")
        for _ in range(STEP_TRIES - 1):
            if last.verdict is not Verdict.FAIL:
                break
            last = attempt(values[mid], spec.step_s, "retry")
        if last.verdict.passed:
            good = mid
        elif last.verdict in (Verdict.ERROR, Verdict.SKIP):
            return _finish(case, last, steps, None, f"the search stopped at {spec.key} {values[mid]}")
        else:
            bad = mid
    confirmed: CaseResult | None = None
    for index in range(good, -1, -1):
        tried = attempt(values[index], float(case.duration_s), "confirm")
        for _ in range(STEP_TRIES - 1):
            if tried.verdict is not Verdict.FAIL:
                break
            tried = attempt(values[index], float(case.duration_s), "confirm")
        last = tried
        if tried.verdict.passed:
            confirmed = tried
            break
        if tried.verdict in (Verdict.ERROR, Verdict.SKIP):
            break
    assert last is not None
    return _finish(case, last, steps, confirmed, "")


def _divider(case: Case, key: str) -> int:
    value = case.decimation if key == "decimation" else case.interpolation
    return int(value or 0)


def _finish(case: Case, last: CaseResult, steps: list[SearchStep], confirmed: CaseResult | None,
            why: str) -> CaseResult:
    spec = _spec(case)
    result = confirmed or last
    result.case = dataclasses.replace(result.case, test_name=case.test_name, name=case.name, search=spec)
    result.steps = steps
    tried = ", ".join(f"{s['key']} {s['value']} ({format_quantity(float(s['rate_sps'] or 0), 'rate')}) "
                      f"{s['verdict']}" for s in steps)
    if result.verdict in (Verdict.ERROR, Verdict.SKIP):
        result.message = f"{why or 'the search stopped'}: {result.message} (tried: {tried})"
        return result
    rate = result.case.rate_sps if confirmed else 0.0
    result.metrics.update({
        "max_rate_sps": rate, "max_throughput_Bps": data_rate_Bps(case, rate),
        "search_divider": float(_divider(result.case, spec.key) if confirmed else 0),
        "search_steps": float(len(steps)),
    })
    if confirmed:
        result.message = (f"max rate {format_quantity(rate, 'rate')} ({spec.key} {_divider(result.case, spec.key)}, "
                          f"{data_rate_Bps(case, rate) / 1e6:.2f} MB/s) held over {case.duration_s:g} s; "
                          f"tried: {tried}; {result.message}")
    else:
        result.verdict = Verdict.FAIL
        result.message = f"FAIL: no rate held its thresholds (tried: {tried}); last: {result.message}"
    return result
