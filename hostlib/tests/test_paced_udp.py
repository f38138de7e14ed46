"""Paced UDP (transport.pacing): the DSL's errors at their lines, and a paced TX stream
on the simulator rig that achieves its period and holds its rate (no mocks)."""
from __future__ import annotations

import pytest

from hostlib._exceptions import ConfigError
from hostlib.engine import run_case
from hostlib.reports.html import case_log_html
from hostlib.results import result_lines

from .conftest import requires_native

pytestmark = requires_native

CASE = """\
name: paced
device: dut
direction: tx
format: sc8
master_clock: 200 MHz
interpolation: 16
transport:
  kind: udp
  frame_bytes: 1430
  pacing:
{pacing}
duration: 1 s
warmup: 0.2 s
"""


def _errors(write_case, pacing: str) -> str:
    with pytest.raises(ConfigError) as e:
        write_case(CASE.format(pacing=pacing))
    return str(e.value)


def test_pacing_keys_resolve_to_the_cores_ns_and_bps(write_case):
    [gap] = write_case(CASE.format(pacing="    gap: 4 us"))
    assert gap.transport.pacing.gap_ns == 4000 and not gap.transport.gso   # GSO off while pacing
    [rate] = write_case(CASE.format(pacing="    rate: 880 Mbit/s"))
    assert rate.transport.pacing.rate_bps == 880_000_000
    assert rate.transport.to_json()["pacing"] == {"gap_ns": 0, "period_ns": 0, "rate_bps": 880_000_000}


def test_two_pacing_keys_are_an_error_at_the_second_ones_line(write_case):
    text = _errors(write_case, "    gap: 4 us\n    period: 13 us")
    assert "case1.yaml:12" in text and "transport.pacing.period" in text and "'gap' is already given" in text


@pytest.mark.parametrize(("pacing", "line", "expected"), [
    ("    gapp: 4 us", 11, "did you mean 'gap'"),
    ("    gap: 4", 11, "unit"),                        # a bare number is ambiguous: a unit is required
    ("    period: 2 s", 11, "at most"),
    ("    rate: 10 MS/s", 11, "bit/s"),                # a sample rate is not a data rate
])
def test_wrong_pacing_values_name_their_line(write_case, pacing, line, expected):
    text = _errors(write_case, pacing)
    assert f"case1.yaml:{line}" in text and expected in text, text


def test_pacing_an_rx_stream_is_refused(write_case):
    text = CASE.format(pacing="    gap: 4 us").replace("direction: tx", "direction: rx").replace(
        "interpolation: 16", "decimation: 16")
    with pytest.raises(ConfigError, match="an rx stream's sender is the device"):
        write_case(text)


def test_gso_on_with_pacing_is_refused(write_case):
    text = CASE.format(pacing="    gap: 4 us").replace("  frame_bytes: 1430\n", "  frame_bytes: 1430\n  gso: true\n")
    with pytest.raises(ConfigError, match="GSO is off while pacing"):
        write_case(text)


def test_paced_tx_spaces_waiting_datagrams_at_its_period(write_case, sim_rig):
    """A 20 us period at 50 MS/s (a datagram due every 14 us): datagrams are always waiting,
    so the pacer, not the rate clock or the timer's wake-up, sets every period: a median
    near 20 us is the busy-wait at work (a sleep cannot space datagrams below ~50 us). Only
    a preemption's catch-up sends (about 0.1 us apart) fall outside, never half of them."""
    text = CASE.format(pacing="    period: 20 us").replace("interpolation: 16", "interpolation: 4")
    [case] = write_case(text)
    result = run_case(case, sim_rig, run_id="test")
    m = result.metrics
    assert result.error is None, result.message
    assert 19e-6 <= m["pacing_period_p50_s"] <= 26e-6, m
    assert m["pacing_period_p99_s"] >= m["pacing_period_p50_s"]
    assert m["missing_frames"] == 0 and m["pattern_errors"] == 0, m


def test_paced_tx_holds_the_rate_and_reports_its_blocks(write_case, sim_rig):
    """A 20 us period at 12.5 MS/s (a datagram due every 55 us): the rate clock releases the
    due datagrams, the pacer spaces them, never closer than the period but for a
    preemption's catch-up. How many the rate clock releases at once depends on how late
    the sender's sleep wakes, so the median period is between 20 and 55 us by the host."""
    [case] = write_case(CASE.format(pacing="    period: 20 us"))
    result = run_case(case, sim_rig, run_id="test")
    m = result.metrics
    assert result.error is None, result.message
    assert 19e-6 <= m["pacing_period_p50_s"] <= 60e-6, m
    # pacing holds the rate, given the CPU: the pacer busy-waits, so a host whose CPUs
    # were saturated (measured over the window) only has to keep every frame
    assert m["throughput_ratio"] >= 0.98 or m["host_cpu_busy_percent"] >= 95.0, m
    assert m["missing_frames"] == 0 and m["pattern_errors"] == 0, m
    # The lab's table: every block's frames counted once, what was sent of it below seq_end.
    assert result.blocks and result.blocks[0]["first_seq"] == 0
    assert sum(b["received"] for b in result.blocks) == m["frames_received"]
    assert all(b["received"] == b["sent"] for b in result.blocks), result.blocks
    # ... in the evidence, the outbox and the HTML report (Robot's log and the run report).
    assert result.to_dict()["blocks"] == result.blocks
    assert any(line.startswith("hilrig_block,") and "received_ratio=1" in line for line in result_lines(result))
    html = case_log_html(result, plots_inline=False)
    assert '<table class="blocks"' in html and f"<td>{result.blocks[0]['received']}</td>" in html


def test_a_sender_behind_its_schedule_catches_up_and_starts_afresh_when_far_behind(write_case, sim_rig):
    """A 1 ns period is shorter than any send, and the device takes 10 GS/s (the rate clock
    never holds a frame): every datagram after the first finds its slot passed and goes at
    once, and the schedule starts afresh each time the sender is 50 ms behind it."""
    text = CASE.format(pacing="    period: 1 ns").replace("master_clock: 200 MHz", "master_clock: 10 GHz").replace(
        "interpolation: 16", "interpolation: 1").replace("duration: 1 s", "duration: 0.5 s")
    [case] = write_case(text)
    result = run_case(case, sim_rig, run_id="test")
    m = result.metrics
    assert result.error is None, result.message
    assert m["pattern_errors"] == 0 and m["malformed_frames"] == 0, m
    # 0.7 s of sending (warm-up and window), ever further behind: a fresh schedule per 50 ms of it
    assert m["pacing_schedule_restarts"] >= 4, m
    assert m["pacing_sent_late"] >= 0.9 * m["frames_sent"], m


def test_the_live_line_shows_the_achieved_period_and_the_datagrams_sent_late():
    from hostlib.cli.run import stats_line
    row = {"throughput_sps": 1e6, "pacing_period_p50_s": 13e-6, "pacing_period_p99_s": 40e-6, "pacing_sent_late": 12.0}
    assert "paced p50/p99 13.0/40.0 us late 12" in stats_line(row)
    assert "late" not in stats_line({**row, "pacing_sent_late": 0.0})   # on schedule: nothing to say
