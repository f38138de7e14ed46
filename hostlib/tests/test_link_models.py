"""The long-link study's models against hand-computed values, and the rows a study case
shows (hostlib.link.models)."""
from __future__ import annotations

import io
import math

import pytest
from rich.console import Console

from hostlib._exceptions import ConfigError
from hostlib.engine.study import study_rows
from hostlib.link.models import (
    LAB_FIGURES,
    cubic_bps,
    lab_figure,
    mathis_bps,
    paced_received_ratio,
    tcp_window_bytes,
    window_limited_bps,
    wire_time_s,
)
from hostlib.link.spec import LinkDirection, LinkSpec
from hostlib.results.schema import BlockCount
from hostlib.tests.conftest import requires_native

BLOCK = 100_000


def test_wire_time_of_a_1430_byte_datagram() -> None:
    # 1430 + 28 = 1458 bytes = 11 664 bits: 11.664 us at 1 Gbit/s, 23.328 us at 500 Mbit/s.
    assert wire_time_s(1458, 1e9) == pytest.approx(11.664e-6)
    assert wire_time_s(1458, 500e6) == pytest.approx(23.328e-6)
    assert wire_time_s(1458, 100e6) == pytest.approx(116.64e-6)
    with pytest.raises(ValueError):
        wire_time_s(1458, 0)


def test_paced_udp_into_a_slower_link() -> None:
    # The lab's WAN row: a ~13 us period into 500 Mbit/s (23.328 us a datagram): 13 / 23.328.
    assert paced_received_ratio(13e-6, 23.328e-6) == pytest.approx(0.557270, rel=1e-5)
    # Twice the link rate: half of it; slower than the link: all of it.
    assert paced_received_ratio(11.664e-6, 23.328e-6) == pytest.approx(0.5)
    assert paced_received_ratio(167e-6, 23.328e-6) == 1.0
    assert paced_received_ratio(23.328e-6, 23.328e-6) == 1.0
    # 1 % random loss after the queue: 0.5 * 0.99.
    assert paced_received_ratio(11.664e-6, 23.328e-6, loss=0.01) == pytest.approx(0.495)
    with pytest.raises(ValueError):
        paced_received_ratio(0, 1e-6)


def test_window_limited_tcp() -> None:
    # 2 MiB a round trip of 250 ms: 2 097 152 * 8 / 0.25 = 67 108 864 bit/s.
    assert window_limited_bps(2 * 2**20, 0.25) == pytest.approx(67_108_864)
    # The granted buffers (getsockopt doubles): half the smaller one is the window.
    assert tcp_window_bytes(8 * 2**20, 6 * 2**20) == 3 * 2**20
    with pytest.raises(ValueError):
        window_limited_bps(1, 0)


def test_mathis_loss_limited_tcp() -> None:
    # 1448 * 8 / 0.25 = 46 336 bit/s per segment-per-RTT; * 1.22 / sqrt(1e-4) = * 122.
    assert mathis_bps(1448, 0.25, 1e-4) == pytest.approx(5_652_992)
    # A LAN: 0.5 ms RTT, 0.01 %: 1448 * 8 / 0.0005 * 122 = 2.826 Gbit/s.
    assert mathis_bps(1448, 0.0005, 1e-4) == pytest.approx(2_826_496_000)
    assert math.isinf(mathis_bps(1448, 0.25, 0.0))


def test_cubic_loss_limited() -> None:
    # (0.4 x 3.7 / 1.2)^(1/4) = 1.05383; (0.25 / 5e-5)^(3/4) = 5000^0.75 = 594.604: 626.61 segments
    # a round trip: 626.61 x 1448 x 8 / 0.25 = 29.03 Mbit/s (Reno's, Mathis: 7.99 Mbit/s).
    assert cubic_bps(1448, 0.25, 5e-5) == pytest.approx(29.034e6, rel=1e-3)
    assert mathis_bps(1448, 0.25, 5e-5) == pytest.approx(7.9945e6, rel=1e-3)
    # At a LAN's 0.5 ms and 1 % loss CUBIC is below Reno: the Reno-friendly region gives Reno's.
    assert cubic_bps(1448, 0.0005, 0.01) == pytest.approx(mathis_bps(1448, 0.0005, 0.01))
    assert math.isinf(cubic_bps(1448, 0.25, 0.0))


def _blocks(*received: int, last_sent: int = 0) -> list[BlockCount]:
    out = [BlockCount(first_seq=i * BLOCK, received=r, sent=BLOCK) for i, r in enumerate(received)]
    if last_sent:
        out.append(BlockCount(first_seq=len(received) * BLOCK, received=last_sent, sent=last_sent))
    return out


def _wan(rate_bps: float = 500e6, loss: float = 0.0) -> LinkSpec:
    d = LinkDirection(rate_bps=rate_bps, delay_s=0.125, loss=loss)
    return LinkSpec(up=d, down=d)


def test_study_rows_paced_udp_over_the_wan() -> None:
    metrics = {"frames_per_s": 40_000.0, "pacing_period_p50_s": 13e-6, "frames_sent": 300_000.0,
               "link_packets_in": 1000.0, "link_dropped_queue": 400.0, "link_dropped_loss": 10.0,
               "link_rate_Bps": 62.5e6}
    rows = study_rows(spec=_wan(), side="down", transport="udp", frame_bytes=1430, pacing_period_s=0.0,
                      tags=("long-link", "lab:wan-udp-gap-4us"), metrics=metrics,
                      blocks=_blocks(50_000, 60_000, last_sent=1234), block_frames=BLOCK)
    assert [r["what"] for r in rows] == ["measured (this run)", "the link's counters (window)",
                                         "model: UDP into a slower link", "lab's figure (wan-udp-gap-4us)"]
    measured, counted, model, lab = rows
    # The emulator's view: 1000 in, 410 dropped; 62.5 MB/s out.
    assert counted["ratio"] == pytest.approx(0.59) and counted["rate_bps"] == pytest.approx(500e6)
    # Only the complete blocks count: (50 000 + 60 000) / 200 000; 40 000 frames/s of 1430 bytes.
    assert measured["ratio"] == pytest.approx(0.55)
    assert measured["rate_bps"] == pytest.approx(40_000 * 1430 * 8)
    assert "50.0-60.0 %" in measured["how"]
    # The achieved period (no configured one): 13 / 23.328, and its payload rate.
    assert model["ratio"] == pytest.approx(0.557270, rel=1e-5)
    assert model["rate_bps"] == pytest.approx(0.557270 * 1430 * 8 / 13e-6, rel=1e-5)
    assert "achieved p50" in model["how"]
    assert lab["ratio"] == 0.5 and lab["rate_bps"] == 435e6


def test_study_rows_without_a_complete_block_leave_out_the_frames_still_on_the_link() -> None:
    # A 6 s run at 0.95x of a 100 Mbit/s WAN: 26 625 sent, 26 089 received, the other 536 (125 ms
    # of them) still crossing the link when the stream stopped; every frame below them arrived.
    metrics = {"frames_per_s": 4286.0, "frames_sent": 26_625.0, "frames_received": 26_089.0}
    rows = study_rows(spec=_wan(rate_bps=100e6), side="down", transport="udp", frame_bytes=1430,
                      pacing_period_s=122.8e-6, tags=(), metrics=metrics, blocks=_blocks(last_sent=26_089),
                      block_frames=BLOCK)
    assert rows[0]["ratio"] == 1.0 and "no complete block" in rows[0]["how"]
    # Without blocks (a receiver that keeps none), the whole stream.
    rows = study_rows(spec=_wan(rate_bps=100e6), side="down", transport="udp", frame_bytes=1430,
                      pacing_period_s=122.8e-6, tags=(), metrics=metrics, blocks=[], block_frames=BLOCK)
    assert rows[0]["ratio"] == pytest.approx(26_089 / 26_625) and "over the stream" in rows[0]["how"]


def test_study_rows_configured_period_and_loss() -> None:
    rows = study_rows(spec=_wan(loss=0.001), side="down", transport="udp", frame_bytes=1430,
                      pacing_period_s=46.656e-6, tags=(), metrics={"frames_per_s": 1.0}, blocks=[],
                      block_frames=BLOCK)
    model = rows[1]
    assert model["ratio"] == pytest.approx(0.999)   # half the link rate: all of it, less the loss
    assert "(configured)" in model["how"]
    # The sender's own count over the window, when there is one: a pacer stretched to a mean of
    # 17.496 us (11.664 asked) into 23.328 us: 0.75 of it, less the loss.
    rows = study_rows(spec=_wan(loss=0.001), side="down", transport="udp", frame_bytes=1430,
                      pacing_period_s=11.664e-6, tags=(), metrics={"sent_frames_per_s": 1 / 17.496e-6},
                      blocks=[], block_frames=BLOCK)
    assert rows[1]["ratio"] == pytest.approx(0.75 * 0.999)
    assert "achieved mean; 11.7 us configured" in rows[1]["how"]


def test_study_rows_tcp_bounds() -> None:
    # reno on the WAN with 0.01 % loss, 4 MiB granted each side: window 2 MiB / 250 ms = 67.1 Mbit/s,
    # Mathis 5.65 Mbit/s: the smallest bound is Mathis.
    metrics = {"frames_per_s": 500.0, "tcp_sndbuf_bytes": 4.0 * 2**20, "tcp_rcvbuf_bytes": 4.0 * 2**20}
    rows = study_rows(spec=_wan(loss=1e-4), side="up", transport="tcp", frame_bytes=8000, pacing_period_s=0.0,
                      tags=("lab:wan-tcp",), metrics=metrics, blocks=[], block_frames=BLOCK, congestion="reno")
    by = {r["what"]: r for r in rows}
    assert by["model: window-limited TCP"]["rate_bps"] == pytest.approx(67_108_864)
    assert by["model: loss-limited TCP (Mathis)"]["rate_bps"] == pytest.approx(5_652_992)
    assert by["link rate (TCP payload)"]["rate_bps"] == pytest.approx(500e6 * 1448 / 1500)
    assert by["model: the smallest bound"]["rate_bps"] == pytest.approx(5_652_992)
    assert "model: loss-limited CUBIC (RFC 9438)" not in by
    # cubic: its own response bounds it (1e-4: (0.25 / 1e-4)^0.75 = 353.55 x 1.05383 = 372.58
    # segments a round trip = 17.26 Mbit/s), not Reno's.
    rows = study_rows(spec=_wan(loss=1e-4), side="up", transport="tcp", frame_bytes=8000, pacing_period_s=0.0,
                      tags=(), metrics=metrics, blocks=[], block_frames=BLOCK, congestion="cubic")
    by = {r["what"]: r for r in rows}
    assert by["model: loss-limited CUBIC (RFC 9438)"]["rate_bps"] == pytest.approx(17.26e6, rel=1e-3)
    assert by["model: the smallest bound"]["rate_bps"] == pytest.approx(17.26e6, rel=1e-3)
    # bbr does not back off on random loss: the window is its bound.
    rows = study_rows(spec=_wan(loss=1e-4), side="up", transport="tcp", frame_bytes=8000, pacing_period_s=0.0,
                      tags=(), metrics=metrics, blocks=[], block_frames=BLOCK, congestion="bbr")
    by = {r["what"]: r for r in rows}
    assert by["model: the smallest bound"]["rate_bps"] == pytest.approx(67_108_864)
    assert "not a bound" in by["model: loss-limited TCP (Mathis)"]["how"]


def test_no_rows_without_a_link_or_a_lab_figure() -> None:
    assert study_rows(spec=None, side="up", transport="udp", frame_bytes=1430, pacing_period_s=0.0, tags=("x",),
                      metrics={}, blocks=[], block_frames=BLOCK) == []
    rows = study_rows(spec=None, side="down", transport="udp", frame_bytes=1430, pacing_period_s=0.0,
                      tags=("lab:same-host-udp-unpaced",), metrics={"frames_sent": 10.0, "frames_received": 9.0},
                      blocks=[], block_frames=BLOCK)
    assert [r["what"] for r in rows] == ["measured (this run)", "lab's figure (same-host-udp-unpaced)"]
    assert rows[0]["ratio"] == pytest.approx(0.9)


def test_lab_figures_are_the_issue_table() -> None:
    assert len(LAB_FIGURES) == 11
    assert lab_figure(("a", "lab:lan-tcp")) == ("lan-tcp", LAB_FIGURES["lan-tcp"])
    assert lab_figure(("a",)) is None
    assert LAB_FIGURES["wan-udp-gap-161us"].rate_bps == 52.7e6


@requires_native
def test_an_unknown_lab_tag_is_refused_at_its_line(write_case) -> None:
    with pytest.raises(ConfigError) as err:
        write_case("name: x\ndevice: dut\ndirection: rx\nformat: sc8\nmaster_clock: 100 MHz\n"
                   "decimation: 100\ntransport: {kind: udp}\nduration: 1 s\ntags:\n  - study\n"
                   "  - lab:lan-udp-gap-5us\n")
    text = str(err.value)
    assert ":11" in text and "no lab figure 'lan-udp-gap-5us'" in text and "lab:lan-udp-gap-4us" in text


@requires_native
def test_tcp_crosses_a_link(write_case) -> None:
    (case,) = write_case("name: x\ndevice: dut\ndirection: tx\nformat: sc8\nmaster_clock: 100 MHz\n"
                         "interpolation: 100\ntransport: {kind: tcp, congestion: cubic}\nduration: 1 s\n"
                         "link: {rate: 100 Mbit/s, delay: 10 ms}\n")
    assert case.link is not None and case.link.down.rate_bps == 100e6


@requires_native
def test_a_congestion_control_this_kernel_lacks_is_a_skip_naming_it(write_case, sim_rig, tmp_path,
                                                                    monkeypatch) -> None:
    from hostlib.dsl import semantics
    from hostlib.engine import run_case

    available = tmp_path / "available"
    available.write_text("reno cubic\n")
    monkeypatch.setattr(semantics, "CONGESTION_AVAILABLE", str(available))
    (case,) = write_case("name: x\ndevice: dut\ndirection: rx\nmaster_clock: 100 MHz\ndecimation: 100\n"
                         "transport: {kind: tcp, congestion: bbr}\nduration: 1 s\n")
    result = run_case(case, sim_rig, run_id="test")
    assert result.label == "SKIP"
    assert result.error is not None and "congestion control 'bbr' is not in this kernel" in result.error
    assert "available reno cubic" in result.error
    # A name that is no congestion control at all stays a config error at its line.
    with pytest.raises(ConfigError, match="did you mean 'cubic'"):
        write_case("name: x\ndevice: dut\ndirection: rx\nmaster_clock: 100 MHz\ndecimation: 100\n"
                   "transport: {kind: tcp, congestion: cubc}\nduration: 1 s\n")


def test_the_study_is_outside_make_test_and_make_run_but_in_make_study() -> None:
    from hostlib.dsl import load_cases
    from hostlib.tests.conftest import REPO

    makefile = (REPO / "Makefile").read_text()
    robot_lines = [line for line in makefile.splitlines() if "bin/robot " in line]
    test_robot = next(line for line in robot_lines if "results/robot-ci" in line)
    run = next(line for line in robot_lines if "$(ROBOT_OUT)" in line)
    study = next(line for line in robot_lines if "results/study" in line)
    assert "--exclude study" in test_robot and "--exclude study" in run and "--include $(STUDY_TAG)" in study
    assert "STUDY_TAG ?= study" in makefile
    cases = load_cases([REPO / "testcases" / "reference"])
    in_suite = [c for c in cases if c.test_name.startswith("long link") and "study" not in c.tags]
    # At most one short representative study case stays in the default suite.
    assert len(in_suite) == 1 and in_suite[0].duration_s + in_suite[0].warmup_s <= 2.5, in_suite
    assert sum("study" in c.tags for c in cases) >= 40


@requires_native
def test_the_short_study_case_shows_its_models_in_the_cli_evidence_and_report(sim_rig) -> None:
    """The one study case in make test's suite: an unpaced sender into 100 Mbit/s (116.64 us
    a datagram): the model says what share of its achieved rate the link carries, the
    link's queue drops the rest."""
    from hostlib.dsl import load_cases
    from hostlib.engine import run_case
    from hostlib.link.netns import unavailable
    from hostlib.reports.html import case_log_html
    from hostlib.results.verdict import render_study
    from hostlib.tests.conftest import REPO

    if why := unavailable():
        pytest.skip(why)
    (case,) = [c for c in load_cases([REPO / "testcases" / "reference" / "long_link_lan.yaml"])
               if c.name == "long link LAN scaled UDP unpaced short"]
    result = run_case(case, sim_rig, run_id="test")
    assert result.label == "PASS", (result.message, result.metrics)
    by = {r["what"]: r for r in result.study}
    model = by["model: UDP into a slower link"]
    m = result.metrics
    # The sender's achieved mean period (its own count over the window) against the 116.64 us
    # wire time.
    assert m["sent_frames_per_s"] > 0 and model["ratio"] is not None
    assert model["ratio"] == pytest.approx(min(1.0, 1 / m["sent_frames_per_s"] / 116.64e-6), rel=1e-4)
    # What entered the link less what its queue dropped is the model's share once the queue is
    # full (the window may start before it is: then a little more got through).
    counted = by["the link's counters (window)"]
    assert counted["ratio"] is not None and model["ratio"] - 0.03 <= counted["ratio"] <= model["ratio"] + 0.06, \
        result.study
    assert by["measured (this run)"]["ratio"] is not None and by["measured (this run)"]["ratio"] < 0.97
    # The evidence, the CLI's table and the HTML (Robot's log and the run report).
    assert result.to_dict()["study"] == result.study
    text = io.StringIO()
    Console(file=text, width=200, color_system=None).print(render_study(result.study))
    assert "model: UDP into a slower link" in text.getvalue() and "min(1, period " in text.getvalue()
    html = case_log_html(result, plots_inline=False)
    assert '<table class="study"' in html and "model: UDP into a slower link" in html


def test_the_link_benchs_pcap_reader_and_period_quantiles() -> None:
    """make bench's pacer rows time datagrams from tcpdump's pcap (nanosecond or microsecond
    stamps); the period quantiles are the gaps between consecutive packets."""
    import struct

    from hostlib.bench.link import pcap_times_ns, period_quantiles

    def pcap(magic: int, stamps: list[tuple[int, int]]) -> bytes:
        out = struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, 101)
        for sec, frac in stamps:
            out += struct.pack("<IIII", sec, frac, 3, 3) + b"abc"
        return out

    assert pcap_times_ns(pcap(0xA1B23C4D, [(1, 5), (2, 7)])) == [1_000_000_005, 2_000_000_007]
    assert pcap_times_ns(pcap(0xA1B2C3D4, [(1, 5)])) == [1_000_005_000]   # microsecond stamps
    assert pcap_times_ns(b"") == []
    # 200 packets 10 us apart, every 50th gap 1 ms: p50 10 us, p99 1 ms.
    times, t = [], 0
    for i in range(200):
        t += 1_000_000 if i % 50 == 49 else 10_000
        times.append(t)
    assert period_quantiles(times) == (10e-6, 1e-3)
    assert period_quantiles(times[:50]) is None   # too few to say


def test_the_sink_rows_period_error() -> None:
    """make bench's pacers into a sink are judged by |gap - period|; their rate leaves out
    pauses over 1 ms (iperf 2 repeats its last datagram for seconds)."""
    from hostlib.bench.link import period_errors

    # 2 us asked: 180 gaps on time, 18 a catch-up burst 1 us short, 1 pause of 0.5 s.
    gaps = [2_000] * 180 + [1_000] * 18 + [500_000_000]
    times = [0]
    for g in gaps:
        times.append(times[-1] + g)
    got = period_errors(times, 2_000)
    assert got is not None
    p50, p99, rate = got
    assert p50 == 0.0 and p99 == 1e-6    # the catch-up gaps are the worst 10 %; the pause is one
    assert rate == pytest.approx(198 / ((180 * 2_000 + 18 * 1_000) / 1e9))
    assert period_errors(times[:50], 2_000) is None
