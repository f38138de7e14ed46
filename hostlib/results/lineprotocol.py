"""CaseResult -> InfluxDB line protocol (schema in docs/results.md).

Serialization (escaping of measurement, tag keys/values, field keys and string
values; ns timestamps) is done by the official client's `Point`, which needs no
server. This module only decides the schema and keeps field types stable:

* every numeric field is written as a float (a metric that is 0 in one run and
  0.5 in the next must not flip between integer and float, which InfluxDB
  rejects as a field type conflict). `Point` writes whole floats without ".0"
  (`overruns=0`); in line protocol an unsuffixed number *is* a float, integers
  carry an `i` suffix, which we never emit.
* `passed` is a float, 1.0 or 0.0, so mean(passed) is a pass rate.
* NaN/inf cannot be written in line protocol; such a metric is left out of that
  row (Point drops it), absent rather than wrong.
* string fields have CR/LF replaced by spaces so each record stays one line.
"""
from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence

from influxdb_client import Point, WritePrecision

from .record import CaseResult, Verdict, to_datetime, to_ns

CASE_MEASUREMENT = "hilrig_case"
SERIES_MEASUREMENT = "hilrig_series"
SEARCH_MEASUREMENT = "hilrig_search_step"   # one row per step of a rate search
RUN_MEASUREMENT = "hilrig_run"
BLOCK_MEASUREMENT = "hilrig_block"          # received / sent per 100 000 sequence numbers


def _one_line(text: str | None) -> str:
    return " ".join((text or "").splitlines())


def _float(value: float | int | None) -> float | None:
    if value is None:
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def _common_tags(result: CaseResult) -> dict[str, str]:
    case = result.case
    return {
        "rig": result.rig_name,
        "device": result.device or case.device,
        "driver": result.driver,
        "transport": case.transport.kind,
        "direction": case.direction,
        "testcase": case.test_name,
        # a lab run's place and rig host (Point drops empty tags: a local run has none)
        "place": result.place or "",
        "rig_host": result.rig_host or "",
    }


def _metric_fields(p: Point, metrics: Mapping[str, float]) -> None:
    for name, measured in metrics.items():
        f = _float(measured)
        if f is not None:
            p.field(name, f)


def case_point(result: CaseResult, *, git_sha: str | None = None) -> Point:
    """The `hilrig_case` row of one result, stamped with its end time."""
    p = Point(CASE_MEASUREMENT)
    tags = _common_tags(result)
    tags["verdict"] = result.verdict.value  # PASS | MARGINAL | FAIL | ERROR | SKIP
    tags.update(_sweep_tags(result))
    for key, value in tags.items():
        p.tag(key, value)  # empty values are dropped by Point (line protocol forbids them)
    _metric_fields(p, result.metrics)
    p.field("passed", 1.0 if result.verdict.passed else 0.0)  # MARGINAL is a pass
    # duration_s is the measured window (a metric); wall_s is the whole run incl. set-up.
    wall_s = (to_datetime(result.ended_utc) - to_datetime(result.started_utc)).total_seconds()
    p.field("wall_s", float(wall_s))
    for name, number in (("rate_sps", result.case.rate_sps), ("requested_duration_s", result.case.duration_s)):
        f = _float(number)
        if f is not None:
            p.field(name, f)
    p.field("run_id", result.run_id)
    p.field("git_sha", git_sha or "")
    p.field("message", _one_line(result.message))
    # "<kind>: <text>" for an ERROR, as before the kind became a type (the schema is stable).
    error = f"{result.kind.value}: {result.error or ''}" if result.kind else result.error
    p.field("error", _one_line(error))
    # Why the verdict is not PASS, as data: one reason per failed check / missed marginal band.
    p.field("failed", _one_line("; ".join(result.failed)))
    p.field("marginal", _one_line("; ".join(result.marginal)))
    p.time(to_ns(result.ended_utc), WritePrecision.NS)
    return p


def _sweep_tags(result: CaseResult) -> dict[str, str]:
    return {f"sweep_{k}": str(v) for k, v in result.case.sweep_point.items()}


def series_points(result: CaseResult) -> list[Point]:
    """One `hilrig_series` row per second of the measured window."""
    tags = _common_tags(result) | _sweep_tags(result)
    start_ns = to_ns(result.started_utc)
    points = []
    for row in result.series:
        t_s = _float(row.get("t_s"))
        if t_s is None:
            continue
        p = Point(SERIES_MEASUREMENT)
        for key, value in tags.items():
            p.tag(key, value)
        _metric_fields(p, row)
        p.field("run_id", result.run_id)
        # Stamped at run start + t_s: t_s counts from the window start, which is
        # within a few seconds of started_utc; ordering and spacing are exact.
        p.time(start_ns + round(t_s * 1e9), WritePrecision.NS)
        points.append(p)
    return points


def leg_points(result: CaseResult) -> list[Point]:
    """rx+tx: one more `hilrig_case` row per direction, tagged direction=rx|tx and
    leg_of=rx+tx, with that leg's metrics (result.legs) and its own verdict from its thresholds."""
    points = []
    for leg, metrics in result.legs.items():
        if not metrics:
            continue
        mine = [t for t in result.thresholds if t.leg == leg]
        verdict = result.verdict
        if verdict.passed or (verdict is Verdict.FAIL and all(t.passed for t in mine)):
            verdict = Verdict.MARGINAL if any(t.marginal for t in mine) else Verdict.PASS
        p = Point(CASE_MEASUREMENT)
        tags = _common_tags(result) | {"direction": leg, "leg_of": "rx+tx", "verdict": verdict.value}
        for key, value in (tags | _sweep_tags(result)).items():
            p.tag(key, value)
        _metric_fields(p, metrics)
        p.field("passed", 1.0 if verdict.passed else 0.0)
        rate = _float(result.case.rate_sps)
        if rate is not None:
            p.field("rate_sps", rate)
        p.field("run_id", result.run_id)
        p.time(to_ns(result.ended_utc), WritePrecision.NS)
        points.append(p)
    return points


def search_points(result: CaseResult) -> list[Point]:
    """A rate search: one `hilrig_search_step` row per step tried (phase step|confirm),
    stamped a microsecond apart after the case's start so each keeps its row."""
    tags = _common_tags(result) | _sweep_tags(result)
    start_ns = to_ns(result.started_utc)
    points = []
    for i, step in enumerate(result.steps):
        p = Point(SEARCH_MEASUREMENT)
        for key, value in (tags | {"phase": step["phase"], "verdict": Verdict(step["verdict"]).value}).items():
            p.tag(key, value)
        for name, number in (("step", step["step"]), ("value", step["value"]), ("rate_sps", step["rate_sps"]),
                             ("throughput_Bps", step["throughput_Bps"])):
            f = _float(number)
            if f is not None:
                p.field(name, f)
        p.field("passed", 1.0 if step["passed"] else 0.0)
        p.field("key", step["key"])
        p.field("message", _one_line(step["message"]))
        p.field("run_id", result.run_id)
        p.time(start_ns + 1000 * i, WritePrecision.NS)
        points.append(p)
    return points


def block_points(result: CaseResult) -> list[Point]:
    """One `hilrig_block` row per block of 100 000 sequence numbers at the receiver (the
    lab's table), stamped a microsecond apart after the case's start."""
    tags = _common_tags(result) | _sweep_tags(result)
    start_ns = to_ns(result.started_utc)
    points = []
    for i, block in enumerate(result.blocks):
        p = Point(BLOCK_MEASUREMENT)
        for key, value in tags.items():
            p.tag(key, value)
        p.field("first_seq", float(block["first_seq"]))
        p.field("received", float(block["received"]))
        p.field("sent", float(block["sent"]))
        p.field("received_ratio", block["received"] / block["sent"] if block["sent"] else 0.0)
        p.field("run_id", result.run_id)
        p.time(start_ns + 1000 * i, WritePrecision.NS)
        points.append(p)
    return points


def result_lines(result: CaseResult, *, git_sha: str | None = None) -> list[str]:
    """Every line-protocol line for one result: the case row, its direction rows (rx+tx),
    its search steps, its blocks, then its series."""
    points = [case_point(result, git_sha=git_sha), *leg_points(result), *search_points(result),
              *block_points(result), *series_points(result)]
    return [line for line in (p.to_line_protocol() for p in points) if line]


def run_point(run_id: str, rig_name: str, verdict_names: Sequence[str], started_utc: str | _dt.datetime,
              ended_utc: str | _dt.datetime, *, git_sha: str | None = None, place: str | None = None) -> Point:
    """The `hilrig_run` summary row of a whole run, stamped with its end time."""
    p = Point(RUN_MEASUREMENT)
    if rig_name:
        p.tag("rig", rig_name)
    if place:
        p.tag("place", place)
    verdicts = [Verdict(v) for v in verdict_names]
    passed = sum(v.passed for v in verdicts)
    p.field("cases", float(len(verdicts)))
    p.field("passed", float(passed))  # PASS and MARGINAL: both are passes
    p.field("marginal", float(verdicts.count(Verdict.MARGINAL)))
    for verdict, name in ((Verdict.FAIL, "failed"), (Verdict.SKIP, "skipped"), (Verdict.ERROR, "errors")):
        p.field(name, float(verdicts.count(verdict)))
    p.field("pass_ratio", passed / len(verdicts) if verdicts else 0.0)
    p.field("wall_s", float((to_datetime(ended_utc) - to_datetime(started_utc)).total_seconds()))
    p.field("run_id", run_id)
    p.field("git_sha", git_sha or "")
    p.time(to_ns(ended_utc), WritePrecision.NS)
    return p
