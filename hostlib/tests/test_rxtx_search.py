"""`direction: rx+tx` (RX and TX at once, each leg with its own counters and
thresholds) and rate search cases (`search:`), docs/dsl.md; on the simulator over
udp, shm and the USB 2 link."""
from __future__ import annotations

import textwrap

import pytest

from hostlib._exceptions import ConfigError
from hostlib.dsl import load_cases, validate_paths
from hostlib.engine import run_case
from hostlib.engine.search import estimated_seconds, run_search, step_count
from hostlib.results.record import CaseResult, Verdict
from hostlib.results.lineprotocol import result_lines
from hostlib.selection import Selection
from hostlib.tests.conftest import requires_native

RXTX = """
name: rxtx {kind}
device: dut
direction: rx+tx
master_clock: 64 MHz
decimation: {decimation}
transport: {transport}
fifo_frames: 256
warmup: 100 ms
duration: {duration}
thresholds:
  pattern_errors: "== 0"
  rx: {{missing_frames: "== 0", throughput: ">= 95% of rate", overruns: "== 0"}}
  # (underruns are measured per leg too; not judged here: the device's TX clock starts at its
  # first frame, and a simulator descheduled in that first millisecond on a loaded box underruns)
  tx: {{throughput: "{tx_throughput}", missing_frames: "== 0"}}
"""
TRANSPORTS = {
    "udp": "{kind: udp, frame_bytes: 8000}",
    "shm": "{kind: shm, frame_bytes: 8000}",
    "usb": "{kind: usb, link: usb2, frame_bytes: 8192, transfer_bytes: 16 KiB, buffer_bytes: 1 MiB}",
}


def rxtx_case(write_case, kind, decimation=16, tx_throughput=">= 95% of rate", duration="0.6 s"):
    [case] = write_case(RXTX.format(kind=kind, decimation=decimation, transport=TRANSPORTS[kind],
                                    tx_throughput=tx_throughput, duration=duration))
    return case


# ----------------------------------------------------------------------------- the language

def test_rxtx_thresholds_are_per_leg(write_case):
    case = rxtx_case(write_case, "udp")
    assert case.direction == "rx+tx" and case.legs == ("rx", "tx")
    by_leg = sorted((t.leg or "both", t.metric) for t in case.thresholds)
    assert by_leg == [("both", "pattern_errors"), ("rx", "missing_frames"), ("rx", "overruns"),
                      ("rx", "throughput_sps"), ("tx", "missing_frames"), ("tx", "throughput_sps")]


def _issues(tmp_path, text):
    path = tmp_path / "bad.yaml"
    path.write_text(textwrap.dedent(text))
    _, issues = validate_paths([path])
    return [(i.line, i.field, i.message) for i in issues]


BASE = """\
name: x
device: dut
direction: {direction}
master_clock: 64 MHz
transport: {{kind: udp}}
duration: 1 s
"""


def test_rxtx_and_search_mistakes_are_located(tmp_path):
    issues = _issues(tmp_path, BASE.format(direction="rx") + "decimation: 8\nthresholds:\n  rx: {overruns: \"== 0\"}\n")
    assert issues == [(9, "thresholds.rx", issues[0][2])] and "applies to direction rx+tx" in issues[0][2]
    issues = _issues(tmp_path, BASE.format(direction="rx+tx") + "decimation: 8\nthresholds:\n"
                     "  overruns: \"== 0\"\n  rx: {overruns: \"== 1\"}\n")
    assert len(issues) == 1 and issues[0][:2] == (10, "thresholds.rx.overruns") and "same metric" in issues[0][2]
    issues = _issues(tmp_path, BASE.format(direction="tx") + "search: {decimation: [16, 8]}\n")
    assert any(i[:2] == (7, "search.decimation") and "not decimation" in i[2] for i in issues), issues
    issues = _issues(tmp_path, BASE.format(direction="rx") + "decimation: 8\nsearch: {decimation: [16, 8]}\n")
    assert issues[0][:2] == (7, "decimation") and "leave decimation out" in issues[0][2]
    issues = _issues(tmp_path, BASE.format(direction="rx+tx") + "decimation: 8\nfaults: {drop_frames: 2}\n")
    assert issues[0][:2] == (8, "faults") and "one stream" in issues[0][2]
    issues = _issues(tmp_path, BASE.format(direction="rx") + "search: {decimation: [16, 8], step: 2 s}\n")
    assert issues[0][:2] == (7, "search.step") and "longer than the confirmation run" in issues[0][2]


def test_search_candidates_run_from_the_lowest_rate(write_case):
    [case] = write_case(BASE.format(direction="rx+tx") + "search: {decimation: {from: 6, to: 16}, step: 200 ms}\n")
    assert case.search.key == "decimation" and case.search.values == tuple(range(16, 5, -1))
    assert case.decimation == 6 and case.rate_sps == 64e6 / 6   # the case's rate: the highest candidate
    assert step_count(11) == 4
    assert estimated_seconds(case, 1.0) == pytest.approx(4 * (1.0 + 0.2) + 1.0 + 1.0)


def scripted_search(case, holds):
    """run_search with each candidate's verdict given by holds(divider, phase_s): the
    search's own rule (which rates it tries, in which order), apart from how a rate fares."""
    tried: list[tuple[int, float]] = []

    def run_one(c):
        tried.append((c.decimation, float(c.duration_s)))
        verdict = Verdict.PASS if holds(c.decimation, float(c.duration_s)) else Verdict.FAIL
        return CaseResult(case=c, rig_name="r", device="dut", driver="sim", run_id="t", started_utc="",
                          ended_utc="", verdict=verdict, metrics={"throughput_Bps": 1.0})
    return run_search(case, run_one, say=lambda line: None), tried


def test_a_confirmation_that_fails_goes_down_every_lower_rate(write_case):
    # Steps (0.2 s) hold up to decimation 8; over the duration (1 s) only 14 and below
    # hold, as on a host that stalls longer than the FIFO once a second.
    [case] = write_case(BASE.format(direction="rx") + "search: {decimation: [16, 14, 12, 10, 8, 6], step: 200 ms}\n")
    result, tried = scripted_search(case, lambda d, s: d >= (8 if s < 0.5 else 14))
    confirms = [d for d, s in tried if s == 1.0]
    assert confirms == [8, 8, 10, 10, 12, 12, 14], tried     # a FAIL is tried once more
    assert result.verdict is Verdict.PASS and result.metrics["search_divider"] == 14
    assert result.metrics["max_rate_sps"] == 64e6 / 14 and "held over 1 s" in result.message


def test_a_search_whose_every_confirmation_fails_is_a_fail(write_case):
    [case] = write_case(BASE.format(direction="rx") + "search: {decimation: [16, 12, 8], step: 200 ms}\n")
    result, tried = scripted_search(case, lambda d, s: s < 0.5)
    assert [d for d, s in tried if s == 1.0] == [8, 8, 12, 12, 16, 16], tried
    assert result.verdict is Verdict.FAIL and result.metrics["max_rate_sps"] == 0
    assert "no rate held" in result.message


def test_grid_cases_run_only_when_asked_for(write_case):
    [case] = write_case(BASE.format(direction="rx") + "decimation: 8\ntags: [grid]\n")
    assert not Selection().matches(case) and not Selection.of(include="transport:udp").matches(case)
    assert Selection.of(include="grid").matches(case) and Selection.of(names="x").matches(case)


# ----------------------------------------------------------------------------- on the simulator

@requires_native
@pytest.mark.parametrize("kind", ["udp", "shm", "usb"])
def test_rxtx_streams_both_directions_with_their_own_counters(write_case, sim_rig, kind):
    case = rxtx_case(write_case, kind)
    result = run_case(case, sim_rig, run_id="t")
    m, legs_m = result.metrics, result.legs
    assert result.verdict == "PASS", result.message
    assert sorted(legs_m) == ["rx", "tx"] and not any("." in name for name in m)   # the leg is a field
    for leg in ("rx", "tx"):
        assert legs_m[leg]["throughput_sps"] == pytest.approx(4e6, rel=0.1), (leg, legs_m)   # 16.3 MB/s each way
        assert legs_m[leg]["frames_received"] > 150 and legs_m[leg]["pattern_errors"] == 0
    assert m["throughput_Bps"] == pytest.approx(legs_m["rx"]["throughput_Bps"] + legs_m["tx"]["throughput_Bps"])
    assert sorted((t.leg, t.metric) for t in result.thresholds) == [
        ("rx", "missing_frames"), ("rx", "overruns"), ("rx", "pattern_errors"), ("rx", "throughput_sps"),
        ("tx", "missing_frames"), ("tx", "pattern_errors"), ("tx", "throughput_sps")]
    assert result.to_record().legs["tx"]["throughput_sps"] == legs_m["tx"]["throughput_sps"]
    lines = result_lines(result)
    legs = [line for line in lines if line.startswith("hilrig_case,") and "leg_of=rx+tx" in line]
    assert len(legs) == 2 and "direction=rx," in legs[0] and "direction=tx," in legs[1]
    assert ",throughput_sps=" in legs[0] and "verdict=PASS" in legs[1]


@requires_native
def test_rxtx_verdict_is_the_worse_leg(write_case, sim_rig):
    result = run_case(rxtx_case(write_case, "shm", tx_throughput=">= 150% of rate", duration="0.4 s"),
                      sim_rig, run_id="t")
    assert result.verdict == "FAIL" and "tx.throughput_sps" in result.message, result.message
    failed = {(t.leg, t.metric) for t in result.thresholds if not t.passed}
    assert failed == {("tx", "throughput_sps")}
    assert len(result.failed) == 1 and result.failed[0].startswith("tx.throughput_sps >= 150% of rate (measured ")
    legs = [line for line in result_lines(result) if "leg_of=rx+tx" in line]
    assert "verdict=PASS" in legs[0] and "verdict=FAIL" in legs[1]


@requires_native
def test_usb2_rxtx_shares_one_bus(write_case, sim_rig):
    # 64 MHz / 6 = 42.7 MB/s each way fits USB 2 alone (53.248 MB/s) but not twice:
    # IN and OUT share the one half-duplex bus, so together they stay under its ceiling.
    case = rxtx_case(write_case, "usb", decimation=6, duration="0.6 s")
    result = run_case(case, sim_rig, run_id="t")
    m = result.metrics
    assert result.verdict == "FAIL", result.message
    # TX counts what the device played, which may include what its FIFO held at the
    # window's start (filled over the bus before it): at most that on top of the bus.
    fifo_bytes = int(case.fifo_frames or 0) * case.frame_bytes
    assert m["throughput_Bps"] < 53.248e6 + fifo_bytes / m["duration_s"]
    assert m["throughput_Bps"] < 0.75 * 2 * 42.7e6     # not both legs at their rate
    assert result.legs["rx"]["throughput_Bps"] > 10e6 and result.legs["tx"]["throughput_Bps"] > 10e6


SEARCH = """
name: search {name}
device: dut
direction: rx
master_clock: 64 MHz
transport: {{kind: usb, link: usb2, frame_bytes: 8192, transfer_bytes: 16 KiB, buffer_bytes: 2 MiB}}
fifo_frames: 256
warmup: 50 ms
duration: 0.6 s
search: {{decimation: [16, 8, 6, 4], step: 250 ms}}
thresholds:
  throughput: "{throughput}"
  missing_frames: "== 0"
  overruns: "== 0"
"""


@requires_native
@pytest.mark.serial  # a rate search: which steps hold depends on the CPU it gets
def test_search_finds_the_highest_rate_that_holds(write_case, sim_rig):
    # USB 2 carries 53.248 MB/s: decimation 6 (42.7 MB/s) fits, 4 (64 MB/s) cannot.
    [case] = write_case(SEARCH.format(name="usb2", throughput=">= 97% of rate"))
    said: list[str] = []
    result = run_case(case, sim_rig, run_id="t", say=said.append)
    assert result.verdict == "PASS", result.message
    assert result.metrics["max_rate_sps"] == 64e6 / 6 and result.metrics["search_divider"] == 6
    assert result.metrics["max_throughput_Bps"] == pytest.approx(64e6 / 6 * 4)
    steps_seen = [(s["value"], s["phase"], s["passed"]) for s in result.steps]
    # A step that fails on a busy machine is retried: judge each rate by its last try.
    # 8 and 6 hold, 4 fails twice (a step and its retry), and 6 is confirmed at the end.
    last_try = {value: passed for value, phase, passed in steps_seen if phase != "confirm"}
    assert last_try == {8: True, 6: True, 4: False}, steps_seen
    assert [v for v, _, _ in steps_seen if v == 4] == [4, 4] and steps_seen[-1] == (6, "confirm", True), steps_seen
    assert [v for v, phase, _ in steps_seen if phase == "step"] == [8, 6, 4], steps_seen
    assert result.case.test_name == "search usb2" and result.case.rate_sps == 64e6 / 6
    assert any("decimation 4 = 16 MS/s" in line and "FAIL" in line for line in said), said
    steps = [line for line in result_lines(result) if line.startswith("hilrig_search_step,")]
    assert len(steps) == len(result.steps) and "phase=confirm" in steps[-1]


@requires_native
@pytest.mark.serial  # a rate search: which steps hold depends on the CPU it gets
def test_a_search_where_nothing_holds_fails_naming_the_rates(write_case, sim_rig):
    [case] = write_case(SEARCH.format(name="none", throughput=">= 101% of rate"))
    result = run_case(case, sim_rig, run_id="t")
    assert result.verdict == "FAIL" and result.error is None
    assert "no rate held" in result.message and "decimation 16 (4 MS/s) FAIL" in result.message, result.message
    # a short step may pass where the confirmation over the duration does not
    assert result.metrics["max_rate_sps"] == 0 and result.steps[-1]["passed"] is False


def test_load_cases_refuses_a_broken_search(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(BASE.format(direction="rx") + "search: {decimation: [8]}\n")
    with pytest.raises(ConfigError, match="at least two candidates"):
        load_cases([path])


def test_the_run_report_shows_the_usb_table_beside_the_published_one(tmp_path):
    from pathlib import Path

    from hostlib.reports import write_run_report
    from hostlib.results.evidence import Evidence
    from hostlib.results.record import CaseResult

    repo = Path(__file__).resolve().parents[2]
    cases = [c for c in load_cases([repo / "testcases" / "reference" / "usb2_table.yaml"])
             if c.test_name in ("USB2 table rx+tx 16 KiB x 2 MiB", "USB2 table RX 4 KiB x 32 KiB")]
    assert len(cases) == 2
    evidence = Evidence(tmp_path, "20261123T000000Z-abcdef")
    for case, divider, verdict in ((cases[0], 12, "PASS"), (cases[1], 0, "FAIL")):
        rate = 64e6 / divider if divider else 0.0
        evidence.add(CaseResult(case=case, rig_name="sim", device="dut", driver="sim", run_id="R",
                                started_utc="2026-11-23T00:00:00+00:00", ended_utc="2026-11-23T00:00:05+00:00",
                                verdict=verdict, metrics={"max_rate_sps": rate, "search_divider": float(divider),
                                                          "max_throughput_Bps": rate * 4 * len(case.legs)}))
    html = write_run_report(evidence.finish(), tmp_path / "r.html").read_text()
    table = html[html.index('id="usb-table"'):]
    # rx+tx at decimation 12: 5.33 MS/s x 4 bytes x 2 directions = 42.7 MB/s, beside the published 36.57
    assert "42.7 (12)" in table and "36.57" in table and "42.67" in table and "1.17" in table
    assert "0.0 (none)" in table and 'class="cellfail"' in table   # the search where nothing held
