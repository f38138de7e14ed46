"""Result record, line protocol, outbox durability, evidence JSON, verdict views.

Cases, thresholds and results are real objects from tests/factories.py (the real
loader, real thresholds evaluated on metrics); the end-to-end tests cover the engine.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hostlib.results import (
    CaseResult,
    Evidence,
    Outbox,
    new_run_id,
    result_lines,
    results_dirs,
    summary_line,
    verdict_text,
)
from hostlib.results.record import ErrorKind, Verdict, to_ns

from .factories import case_result as make_result
from .factories import evaluated, judged, make_case, make_rig

REPO = Path(__file__).resolve().parents[2]

# A test name with every character line protocol must escape in a tag value.
NASTY_NAME = 'RX sweep [decimation=4, transport.frame_bytes=1400] "q" back\\slash'


# --- a small reader of line protocol, to check what we wrote parses back -------------

def _split(text: str, seps: str) -> list[str]:
    """Split on any char of `seps` that is not backslash-escaped and not inside quotes."""
    parts, cur, i, quoted = [], "", 0, False
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            cur += text[i:i + 2]
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        if c in seps and not quoted:
            parts.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    parts.append(cur)
    return parts


def _unescape(s: str) -> str:
    # Line protocol escapes only comma, equals sign and space in names and tag
    # values; any other backslash is a literal character.
    return re.sub(r"\\([, =])", r"\1", s)


def parse_line(line: str):
    """-> (measurement, tags, fields, ts). Fields: float, or str for quoted; ints raise."""
    head, fieldset, ts = _split(line, " ")
    meas, *tag_parts = _split(head, ",")
    tags = {}
    for part in tag_parts:
        k, v = _split(part, "=")
        tags[_unescape(k)] = _unescape(v)
    fields = {}
    for part in _split(fieldset, ","):
        k, v = _split(part, "=")
        if v.startswith('"'):
            assert v.endswith('"'), part
            fields[_unescape(k)] = re.sub(r'\\(["\\])', r"\1", v[1:-1])
        else:
            assert re.fullmatch(r"-?[0-9.]+(e[+-]?[0-9]+)?", v), f"not a float field: {part!r}"
            fields[_unescape(k)] = float(v)
    return _unescape(meas), tags, fields, int(ts)


# --- line protocol -------------------------------------------------------------------

def test_line_protocol_round_trip_with_nasty_names():
    case = make_case(NASTY_NAME, sweep={"decimation": 4, "transport.frame_bytes": 1400})
    result = make_result(case, message='all fine, "really"\nsecond line')
    lines = result_lines(result, git_sha="abc123")
    assert len(lines) == 1 + len(result.series)
    assert all("\n" not in line for line in lines)
    meas, tags, fields, ts = parse_line(lines[0])
    assert meas == "hilrig_case"
    assert tags["testcase"] == NASTY_NAME
    assert tags["sweep_decimation"] == "4" and tags["sweep_transport.frame_bytes"] == "1400"
    assert tags["verdict"] == "PASS" and tags["rig"] == "sim" and tags["transport"] == "udp"
    assert tags["direction"] == "rx" and tags["device"] == "dut" and tags["driver"] == "sim"
    assert fields["message"] == 'all fine, "really" second line'
    assert fields["run_id"] == result.run_id and fields["git_sha"] == "abc123"
    assert fields["throughput_sps"] == 10e6 and fields["latency_p99_s"] == 0.00021
    assert fields["passed"] == 1.0
    assert fields["wall_s"] == pytest.approx(3.25)
    assert ts == to_ns(result.ended_utc) == 1795294803250000000
    s_meas, s_tags, s_fields, s_ts = parse_line(lines[2])
    assert s_meas == "hilrig_series" and s_tags["testcase"] == NASTY_NAME
    assert s_fields["t_s"] == 2.0 and s_fields["missing_frames"] == 3.0
    assert s_ts == to_ns(result.started_utc) + 2_000_000_000


def test_field_types_never_change_between_runs():
    """An int in one run and a float in the next would be a field type conflict in InfluxDB."""
    a = make_result(metrics={"missing_frames": 0, "throughput_ratio": 1, "overruns": 3})
    b = make_result(metrics={"missing_frames": 0.5, "throughput_ratio": 0.75, "overruns": 3.0}, verdict="FAIL")
    for result in (a, b):
        for line in result_lines(result):
            _, fieldset, _ = _split(line, " ")
            for part in _split(fieldset, ","):
                k, v = _split(part, "=")
                assert not re.fullmatch(r"-?\d+i", v), f"integer field {part!r} in {line!r}"
                assert v not in ("true", "false"), f"boolean field {part!r}"
    fa, fb = parse_line(result_lines(a)[0])[2], parse_line(result_lines(b)[0])[2]
    assert fa["passed"] == 1.0 and fb["passed"] == 0.0
    assert fa["overruns"] == fb["overruns"] == 3.0


def test_non_finite_metric_is_left_out_not_written_wrong():
    result = make_result(metrics={"latency_p99_s": float("nan"), "overruns": float("inf"), "missing_frames": 2})
    _, _, fields, _ = parse_line(result_lines(result)[0])
    assert "latency_p99_s" not in fields and "overruns" not in fields
    assert fields["missing_frames"] == 2.0


# --- outbox --------------------------------------------------------------------------

def test_outbox_appends_per_run(tmp_path):
    box = Outbox(tmp_path / "outbox", git_sha="deadbeef")
    assert box.pending_files() == []
    first = box.append(make_result(make_case("case one")))
    second = box.append(make_result(make_case("case two"), verdict="FAIL"))
    other = box.append(make_result(make_case("case one"), run_id="20261122T000000Z-000001"))
    assert first == second == tmp_path / "outbox" / "20261121T210000Z-abcdef.lp"
    assert box.pending_files() == [first, other]
    case_rows = [parse_line(l) for l in first.read_text().splitlines() if l.startswith("hilrig_case")]
    assert [(r[1]["testcase"], r[1]["verdict"]) for r in case_rows] == [("case one", "PASS"), ("case two", "FAIL")]


CRASH_SCRIPT = textwrap.dedent("""
    import sys, time
    from hostlib.tests.factories import case_result as make_result, make_case
    from hostlib.results import Outbox
    box = Outbox({outbox!r}, git_sha="x")
    box.append(make_result(make_case("measured before the kill")))
    print("appended", flush=True)
    time.sleep(60)
    box.append(make_result(make_case("never measured")))
""")


def test_outbox_keeps_what_was_measured_when_killed(tmp_path):
    outbox = tmp_path / "outbox"
    script = CRASH_SCRIPT.format(outbox=str(outbox))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "appended"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    files = Outbox(outbox).pending_files()
    assert len(files) == 1
    rows = [parse_line(l) for l in files[0].read_text().splitlines()]
    names = {r[1]["testcase"] for r in rows}
    assert names == {"measured before the kill"}
    assert files[0].read_text().endswith("\n")


def test_outbox_unwritable_is_an_infrastructure_error(tmp_path):
    from hostlib import InfrastructureError

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(InfrastructureError, match="outbox"):
        Outbox(blocker / "outbox", git_sha="").append(make_result())


# --- evidence ------------------------------------------------------------------------

def test_evidence_rewritten_atomically_after_each_case(tmp_path, monkeypatch):
    rig = tmp_path / "rig.yaml"
    rig.write_text("name: sim\ndevices: {}\n")
    ev = Evidence(tmp_path / "evidence", "20261121T210000Z-abcdef", rig_path=rig, rig_name="sim")
    passing = make_result(make_case("one"), thresholds=[evaluated("throughput_ratio", ">= 0.999", 1.0)])
    path = ev.add(passing)
    doc = json.loads(path.read_text())
    assert doc["run_id"] == "20261121T210000Z-abcdef"
    assert doc["rig"]["text"] == rig.read_text() and doc["rig"]["name"] == "sim"
    assert set(doc["versions"]) >= {"hilrig", "python", "git_sha", "robot"}
    assert [c["test_name"] for c in doc["cases"]] == ["one"]
    assert doc["format"] == "hilrig-evidence/2"
    assert doc["cases"][0]["thresholds"][0] == {
        "metric": "throughput_ratio", "leg": None, "op": ">=", "limit_text": "0.999", "relative_to": None,
        "measured": 1.0, "limit": 0.999, "margin": pytest.approx(0.001), "verdict": "PASS", "note": ""}
    assert doc["cases"][0]["case"]["raw"]["name"] == "one" and doc["cases"][0]["case"]["raw"]["duration"] == "2.0 s"
    assert doc["cases"][0]["series"][1]["missing_frames"] == 3

    # A crash while writing the second version must leave the first one intact.
    import hostlib.results._fsio as fsio

    def boom(*a, **k):
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(fsio.os, "replace", boom)
    with pytest.raises(Exception, match="simulated crash"):
        ev.add(make_result(make_case("two")))
    monkeypatch.undo()
    assert [c["test_name"] for c in json.loads(path.read_text())["cases"]] == ["one"]

    ev.add(make_result(make_case("three"), metrics={"latency_p99_s": float("nan")}))
    doc = json.loads(path.read_text())  # strict JSON: NaN written as null
    assert [c["test_name"] for c in doc["cases"]] == ["one", "two", "three"]
    assert doc["cases"][2]["metrics"]["latency_p99_s"] is None
    assert ev.finish() == path and json.loads(path.read_text())["ended_utc"]


def test_new_run_id_sorts_by_time_and_is_unique():
    import datetime as dt

    t0 = dt.datetime(2026, 11, 21, 21, 0, 0, tzinfo=dt.timezone.utc)
    ids = [new_run_id(t0 + dt.timedelta(seconds=s)) for s in (0, 1, 3600, 86400)]
    assert ids == sorted(ids)
    assert re.fullmatch(r"20261121T210000Z-[0-9a-f]{6}", ids[0])
    assert len({new_run_id(t0) for _ in range(50)}) > 45


def test_results_dirs_from_rig_and_default(tmp_path):
    assert results_dirs(None, cwd=tmp_path) == (tmp_path / "results/outbox", tmp_path / "results/evidence")
    rig = make_rig(results={"outbox": "/srv/hilrig/outbox"})
    assert results_dirs(rig, cwd=tmp_path)[0] == Path("/srv/hilrig/outbox")


# --- verdict views -------------------------------------------------------------------

def test_summary_line_pass_and_fail():
    held = evaluated("missing_frames", "== 0", 0)
    assert summary_line(make_result(thresholds=[held])) == (
        "PASS rx udp 10.0 MS/s: 10.00 MS/s (100.0%), 0 missing, 0 O, 0 U, p99 0.21 ms")
    assert summary_line(make_result()).startswith("PASS (no thresholds, measured only) rx udp")
    failed = judged(make_case(thresholds={"missing_frames": "== 0"}), {
        "throughput_sps": 5e6, "throughput_ratio": 0.5, "missing_frames": 12, "overruns": 2, "underruns": 0})
    assert failed.verdict is Verdict.FAIL and failed.failed == ["missing_frames == 0 (measured 12)"]
    assert summary_line(failed) == failed.message == (
        "FAIL rx udp 10.0 MS/s: 5.00 MS/s (50.0%), 12 missing, 2 O, 0 U; failed: missing_frames == 0 (measured 12)")


@pytest.mark.parametrize("throughput_sps, shown", [(999.9999e6, "1.00 GS/s"), (999.4e6, "999.40 MS/s"),
                                                   (1e9, "1.00 GS/s"), (999.9999e3, "1.00 MS/s")])
def test_summary_rate_unit_follows_the_printed_value(throughput_sps, shown):
    # A rate that rounds up to the next unit is shown in it ("1000.00 MS/s" read oddly
    # beside "1.00 GS/s" in a run of the same case).
    line = summary_line(make_result(metrics={"throughput_sps": throughput_sps, "throughput_ratio": 1.0,
                                             "missing_frames": 0, "overruns": 0, "underruns": 0}))
    assert f": {shown} (" in line, line


def test_summary_line_errors_told_apart():
    dev = make_result(verdict="ERROR", metrics={}, error="hilrig-sim exited with signal 9", error_kind="device")
    infra = make_result(verdict="ERROR", metrics={}, error="port 5000 in use", error_kind=ErrorKind.INFRASTRUCTURE)
    config = make_result(verdict="ERROR", metrics={}, error="HILRIG_REFERENCE_DURATION='x'", error_kind="config")
    skip = make_result(verdict="SKIP", metrics={}, error="rig 'sim' has no device 'x310'")
    assert summary_line(dev) == "ERROR (device) rx udp 10.0 MS/s: hilrig-sim exited with signal 9"
    assert summary_line(infra) == "ERROR (infrastructure) rx udp 10.0 MS/s: port 5000 in use"
    assert summary_line(skip) == "SKIP rx udp 10.0 MS/s: rig 'sim' has no device 'x310'"
    assert dev.kind is ErrorKind.DEVICE and infra.kind is ErrorKind.INFRASTRUCTURE and skip.kind is None
    assert (dev.exit_code, infra.exit_code, config.exit_code, skip.exit_code) == (4, 3, 2, 0)
    # The outbox keeps its "<kind>: <text>" error field; the evidence has the kind as its own key.
    assert 'error="device: hilrig-sim exited with signal 9"' in result_lines(dev)[0]
    assert dev.to_dict()["error"] == "hilrig-sim exited with signal 9" and dev.to_dict()["error_kind"] == "device"
    with pytest.raises(ValueError):
        make_result(verdict="PASSED")  # a closed type: no verdict outside the enum


def test_marginal_is_a_pass_counted_on_its_own():
    from hostlib.results.lineprotocol import run_point

    case = make_case(thresholds={"throughput_sps": {"limit": ">= 99% of rate", "marginal": ">= 99.9% of rate"}})
    marginal = judged(case, {"throughput_sps": 9.95e6, "throughput_ratio": 0.995})
    assert marginal.verdict is Verdict.MARGINAL and marginal.passed and marginal.exit_code == 0
    assert marginal.marginal == ["throughput_sps >= 99% of rate (measured 9.95 MS/s)"] and not marginal.failed
    assert summary_line(marginal).startswith("PASS (marginal) rx udp 10.0 MS/s:")
    assert "; marginal: throughput_sps >= 99% of rate (measured 9.95 MS/s)" in summary_line(marginal)
    line = result_lines(marginal)[0]
    assert ",verdict=MARGINAL " in line and "passed=1," in line
    assert 'marginal="throughput_sps >= 99% of rate (measured 9.95 MS/s)"' in line and 'failed=""' in line
    run = run_point("r1", "sim", [Verdict.PASS, Verdict.MARGINAL, Verdict.FAIL, Verdict.SKIP],
                    "2026-11-21T21:00:00Z", "2026-11-21T21:00:10Z").to_line_protocol()
    assert "marginal=1," in run and "passed=2," in run and "pass_ratio=0.5," in run


def test_verdict_table_lists_each_threshold():
    thresholds = [
        evaluated("throughput_ratio", {"limit": ">= 0.999", "marginal": ">= 0.9999"}, 0.9995),
        evaluated("latency_p99_s", "< 2 ms", 0.0031),
    ]
    case = make_case(thresholds={"throughput_ratio": {"limit": ">= 0.999", "marginal": ">= 0.9999"},
                                 "latency_p99_s": "< 2 ms"})
    result = judged(case, {"throughput_sps": 10e6, "throughput_ratio": 0.9995, "latency_p99_s": 0.0031,
                           "missing_frames": 0, "overruns": 0, "underruns": 0})
    assert result.thresholds == thresholds
    text = verdict_text(result)
    rows = [l for l in text.splitlines()
            if ("latency_p99_s < 2 ms" in l or "throughput_ratio >= 0.999" in l) and not l.startswith("FAIL")]
    assert len(rows) == 2
    assert re.search(r"throughput_ratio >= 0\.999\s+0\.9995\s+0\.999\s+0\.0005\s+PASS \(marginal\)", rows[0])
    assert re.search(r"latency_p99_s < 2 ms\s+3\.1 ms\s+2 ms\s+-1\.1 ms\s+FAIL", rows[1])
    lines = text.splitlines()
    summary_at = [i for i, l in enumerate(lines) if l.startswith("FAIL rx udp 10.0 MS/s: ")]
    assert summary_at and summary_at[0] > lines.index(rows[1]), "summary line after the table"


def test_views_keep_the_engines_message_and_never_repeat_the_skip_head():
    skip = make_result(metrics={})
    skip.set_skip("rig 'sim' has no device 'x310'")
    skip.message = summary_line(skip)  # what the engine stores
    assert summary_line(skip) == "SKIP rx udp 10.0 MS/s: rig 'sim' has no device 'x310'"
    assert verdict_text(skip, width=200).strip() == skip.message
    limited = make_result(verdict="FAIL", metrics={"throughput_sps": 5e6, "throughput_ratio": 0.5,
                                                    "missing_frames": 7, "overruns": 1, "underruns": 0})
    limited.message = "host-limited: rig CPU saturated; " + summary_line(limited) + "; warning: rmem_max caps it"
    text = verdict_text(limited, width=300)
    assert "host-limited: rig CPU saturated;" in text and "warning: rmem_max caps it" in text


def test_frame_rate_is_shown_in_frames_not_samples():
    from hostlib.results import format_metric

    assert format_metric("frames_per_s", 1250.0) == "1.25 kframes/s"
    assert format_metric("throughput_sps", 1250.0) == "1.25 kS/s"


def test_pass_without_delivery_limits_says_it_is_integrity_only():
    """A measuring case (no threshold on rate or loss) must not read like a clean stream."""
    lossy = {"throughput_sps": 5.2e8, "throughput_ratio": 0.52, "missing_frames": 1062993.0,
             "overruns": 0.0, "underruns": 0.0, "pattern_errors": 0.0}
    integrity = [evaluated("pattern_errors", "== 0", 0)]
    line = summary_line(make_result(metrics=lossy, thresholds=integrity))
    assert line.startswith("PASS (integrity only, rate and loss measured) rx udp")
    assert "1062993 missing" in line
    delivery = integrity + [evaluated("missing_frames", "== 0", 0)]
    assert summary_line(make_result(metrics=lossy, thresholds=delivery)).startswith("PASS rx udp")


def test_a_failing_sink_does_not_cost_the_other_its_record(tmp_path):
    from hostlib.results.save import save_result

    class FullDisk:
        def append(self, result):
            raise OSError("No space left on device")

    evidence = Evidence(tmp_path / "evidence", "20261121T210000Z-abcdef", rig_name="sim")
    with pytest.raises(OSError, match="No space"):
        save_result(make_result(), outbox=FullDisk(), evidence=evidence)
    assert len(json.loads(evidence.path.read_text())["cases"]) == 1
