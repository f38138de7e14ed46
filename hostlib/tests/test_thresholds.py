"""Threshold grammar (no eval), units by metric dimension, evaluation and margins."""
import math

import pytest

from hostlib.dsl import ThresholdError, parse_threshold
from hostlib.dsl.thresholds import PARAMS
from hostlib.verdicts import Op, Verdict
from hostlib.tests import factories


def make_case(rate_sps=10e6, frame_bytes=8000, channels=1, duration_s=2.0):
    return factories.make_case(rate_sps=rate_sps, frame_bytes=frame_bytes, channels=channels,
                               duration_s=duration_s, warmup_s=0.0)


def test_percent_of_rate_pass_with_margin():
    th = parse_threshold("throughput", ">= 99.9% of rate")
    assert th.metric == "throughput_sps"
    case = make_case(rate_sps=10e6)
    r = th.evaluate({"throughput_sps": 9.998e6}, case.threshold_params())
    assert r.passed and not r.marginal
    assert math.isclose(r.limit, 9.99e6)
    assert math.isclose(r.margin, 8e3)
    line = r.line()
    assert line.startswith("throughput_sps 9.998e+06 >= 9.99e+06 (99.9% of rate) margin +8000")
    assert line.endswith("PASS")


def test_fail_gives_negative_margin():
    th = parse_threshold("throughput", ">= 99.9% of rate")
    r = th.evaluate({"throughput_sps": 9.0e6}, make_case(rate_sps=10e6).threshold_params())
    assert not r.passed
    assert math.isclose(r.margin, -0.99e6)
    assert r.line().endswith("FAIL")


def test_limit_follows_the_case():
    th = parse_threshold("throughput", ">= 50% of rate")
    assert th.evaluate({}, make_case(rate_sps=1e6).threshold_params()).limit == 0.5e6
    assert th.evaluate({}, make_case(rate_sps=25e6).threshold_params()).limit == 12.5e6
    spf = parse_threshold("dropped_samples", "<= 100% of samples_per_frame")
    params = make_case(frame_bytes=8000, channels=2).threshold_params()
    assert spf.evaluate({}, params).limit == (8000 - 48) // 8


def test_case_gives_every_parameter_a_percentage_may_name():
    assert set(make_case().threshold_params()) == set(PARAMS)


def test_a_threshold_result_keeps_operator_leg_and_verdict_as_data():
    th = parse_threshold("throughput", {"limit": ">=99% of rate", "marginal": ">= 99.9% of rate"})
    r = th.evaluate({"throughput_sps": 9.95e6}, make_case(rate_sps=10e6).threshold_params(), leg="tx")
    assert (r.op, r.leg, r.verdict, r.relative_to, r.limit_text) == (Op.GE, "tx", Verdict.MARGINAL, "rate", "99% of rate")
    assert r.label == "tx.throughput_sps >= 99% of rate"
    assert r.line().startswith("tx.throughput_sps 9.95e+06 >= 9.9e+06 (99% of rate) margin +5e+04 PASS (marginal)")


@pytest.mark.parametrize("metric, text, measured, passed, margin", [
    ("latency_p99", "< 2 ms", 1.5e-3, True, 0.5e-3),
    ("latency_p99", "< 2 ms", 2e-3, False, 0.0),
    ("latency_p99", "<= 2 ms", 2e-3, True, 0.0),
    ("missing_frames", "== 0", 0, True, 0.0),  # margin +0, never -0 (it is printed)
    ("missing_frames", "== 0", 3, False, -3.0),
    ("overruns", "!= 0", 2, True, 2.0),
    ("overruns", "> 1", 1, False, 0.0),
    ("throughput_ratio", ">= 99.9%", 0.9995, True, 0.0005),
    ("throughput", ">= 10 MSPS", 9.99e6, False, -1e4),
    ("host_cpu", "< 80%", 45.0, True, 35.0),
    ("throughput_bytes", ">= 1 Gbit/s", 200e6, True, 75e6),
])
def test_ops_units_and_margins(metric, text, measured, passed, margin):
    th = parse_threshold(metric, text)
    r = th.evaluate({th.metric: measured}, make_case().threshold_params())
    assert r.passed is passed
    assert math.isclose(r.margin, margin, abs_tol=1e-12)


def test_missing_metric_fails_with_message():
    r = parse_threshold("overruns", "== 0").evaluate({"missing_frames": 0}, make_case().threshold_params())
    assert not r.passed and r.measured is None
    assert "not measured" in r.note and "overruns" in r.line()


def test_metric_given_by_alias_in_results():
    r = parse_threshold("latency_p99_s", "< 2 ms").evaluate({"latency_p99": 1e-3}, make_case().threshold_params())
    assert r.passed


def test_nan_measurement_fails():
    r = parse_threshold("latency_p99", "< 2 ms").evaluate({"latency_p99_s": float("nan")}, make_case().threshold_params())
    assert not r.passed


def test_marginal_band():
    th = parse_threshold("throughput", {"limit": ">= 99% of rate", "marginal": ">= 99.9% of rate"})
    case = make_case(rate_sps=10e6)
    inside = th.evaluate({"throughput_sps": 9.995e6}, case.threshold_params())
    assert inside.passed and not inside.marginal
    close = th.evaluate({"throughput_sps": 9.95e6}, case.threshold_params())
    assert close.passed and close.marginal and "marginal" in close.line()
    out = th.evaluate({"throughput_sps": 9.8e6}, case.threshold_params())
    assert not out.passed and not out.marginal


@pytest.mark.parametrize("metric, spec, words", [
    ("throughput", ">= 99.9% of rat", ["unknown parameter", "'rate'"]),
    ("throughput", "=> 10", ["does not parse", ">="]),
    ("throughput", ">= ten", ["does not parse"]),
    ("throughput", "99%", ["does not parse"]),
    ("throughput", ">= 10 MHz and < 20 MHz", ["does not parse"]),
    ("throughput", "__import__('os')", ["does not parse"]),
    ("latency_p99", "< 2 MHz", ["unit does not fit", "time"]),
    ("latency_p99", "< 1% of rate", ["time", "rate"]),
    ("missing_frames", "== 0 ms", ["count", "plain number"]),
    ("droped_samples", "== 0", ["unknown metric", "dropped_samples"]),
    ("overruns", 0, ["not a comparison"]),
    ("throughput", {"limit": ">= 99% of rate", "marginl": ">= 1"}, ["marginl", "allowed: limit, marginal"]),
    ("throughput", {"marginal": ">= 99% of rate"}, ["needs 'limit'"]),
    ("throughput", {"limit": ">= 99% of rate", "marginal": "<= 1"}, ["same way"]),
])
def test_parse_errors_say_what_is_allowed(metric, spec, words):
    with pytest.raises(ThresholdError) as e:
        parse_threshold(metric, spec)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_exact_hit_margin_prints_without_minus():
    r = parse_threshold("missing_frames", "== 0").evaluate({"missing_frames": 0}, make_case().threshold_params())
    assert "margin +0 PASS" in r.line()
