"""The per-run report, export and comparison, from evidence documents (no run needed)."""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from hostlib.cli import main as cli_main
from hostlib.reports.compare import compare, comparison_text
from hostlib.reports.export import rows, to_csv, to_json
from hostlib.reports.html import case_log_html, write_run_report
from hostlib.reports.model import find_run, load_run, run_from_doc
from hostlib.results.migrate import migrate_v1
from hostlib.results.schema import EVIDENCE_FORMAT
from hostlib.verdicts import Op, Verdict
from hostlib.reports.tables import sweeps
from hostlib.tests import report_data as data
from hostlib._exceptions import ConfigError


def write_evidence(folder: Path, doc: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{doc['run_id']}.json"
    path.write_text(json.dumps(doc))
    return path


def test_an_evidence_file_of_an_unknown_format_is_a_clear_error(tmp_path):
    doc = data.evidence()
    doc["format"] = "hilrig-evidence/9"
    path = write_evidence(tmp_path, doc)
    with pytest.raises(ConfigError, match=r"hilrig-evidence/9.*not one this hilrig reads") as e:
        load_run(path)
    assert str(path) in str(e.value)
    doc = data.evidence()
    doc["format"] = EVIDENCE_FORMAT   # format 1 content under the new name: named field by field
    with pytest.raises(ConfigError, match=r"not a valid hilrig-evidence/2 file: cases\.0\.thresholds\.0"):
        run_from_doc(doc)


def test_format_1_is_read_through_one_migration():
    doc = data.evidence()
    rx = doc["cases"][15]
    rx["metrics"].update({"rx.throughput_sps": 4.3e6, "tx.throughput_sps": 4.3e6})
    rx["thresholds"].append({"metric": "tx.latency_p99_s", "text": "< 2 ms", "measured": 1e-3, "limit": 2e-3,
                             "margin": 1e-3, "passed": True, "marginal": True, "message": "close"})
    run = run_from_doc(doc)
    case = run.cases[15].record
    assert case.verdict is Verdict.FAIL and case.legs == {"rx": {"throughput_sps": 4.3e6},
                                                          "tx": {"throughput_sps": 4.3e6}}
    assert "rx.throughput_sps" not in case.metrics
    missing, rate, lat = case.thresholds
    assert (missing.metric, missing.op, missing.limit_text, missing.leg, missing.verdict) == (
        "missing_frames", Op.EQ, "0", None, Verdict.FAIL)
    assert (rate.relative_to, rate.label) == ("rate", "throughput_sps >= 99.9% of rate")
    assert (lat.leg, lat.metric, lat.verdict, lat.note) == ("tx", "latency_p99_s", Verdict.MARGINAL, "close")
    assert case.failed == ["missing_frames == 0 (measured 80)", "throughput_sps >= 99.9% of rate (measured 8.60 MS/s)"]
    assert case.marginal == ["tx.latency_p99_s < 2 ms (measured 1 ms)"]
    assert run.cases[16].record.label == "ERROR (device)"
    assert migrate_v1(data.evidence())["format"] == EVIDENCE_FORMAT


def test_sweep_tables_are_numeric_grids_with_units():
    run = run_from_doc(data.evidence())
    (sweep,) = [s for s in sweeps(run) if s.name == data.SWEEP]
    assert sweep.row_axis == "transport.frame_bytes" and sweep.col_axis == "channels"
    ((fixed, points),) = sweep.facets
    grids = {g.title: g for g in sweep.grids(points)}
    assert list(grids) == ["frames/s", "MS/s", "MB/s", "drop %"]
    g = grids["MB/s"]
    assert g.rows == [1392, 4000, 16000, 32000, 64992]      # numeric, not text order (16000 < 4000 as text)
    assert g.cols == [1, 2, 4]
    for fb in data.FRAME_SIZES:
        for ch in data.CHANNELS:
            m = data.point_metrics(fb, ch)
            assert grids["MB/s"].cell(fb, ch) == f"{m['throughput_Bps'] / 1e6:,.1f}"
            assert grids["frames/s"].cell(fb, ch) == f"{m['frames_per_s']:,.0f}"
            assert grids["MS/s"].cell(fb, ch) == f"{m['throughput_sps'] / 1e6:,.2f}"
            assert grids["drop %"].cell(fb, ch) == f"{m['drop_ratio'] * 100:.3f}"


def test_html_report_has_tally_failures_first_tables_and_plots(tmp_path):
    path = write_evidence(tmp_path / "evidence", data.evidence())
    out = write_run_report(path)
    assert out == tmp_path / "reports" / "20261121T210000Z-aaaaaa.html"
    page = out.read_text()
    tally = re.search(r'<p class="tally" id="tally">(.*?)</p>', page, re.S).group(1)
    assert re.findall(r'data-verdict="([^"]+)">(\d+) ', tally) == [("FAIL", "1"), ("ERROR", "1"), ("PASS", "15"),
                                                                   ("SKIP", "1")]
    # the FAIL case comes first in the case list, the ERROR next
    order = re.findall(r'<section class="case (\w+)"', page)
    assert order[:2] == ["fail", "error"] and order[-1] == "skip"
    assert page.count('class="sweep-table"') == 4
    assert "frame bytes (B) \\ channels" in page
    # offline: no script, no external reference
    assert "<script" not in page and not re.search(r'(src|href)="(https?:)?//|url\((?!#)', page)
    labels = re.findall(r'<svg role="img" aria-label="([^"]+)"', page)
    assert "achieved vs asked rate" in labels and "latency percentiles per case" in labels
    assert any(lb.startswith("sweep UDP reference unlimited") for lb in labels)
    assert "per-second series RX UDP 10 MS/s" in labels
    assert "failure at 2 s" in page                   # the first second with missing frames
    assert "hilrig-sim exited with signal 9" in page
    assert "0123456789abcdef" in page and ">65.5 s<" in page


def test_nothing_tested_is_said(tmp_path):
    doc = data.evidence()
    doc["cases"] = []
    page = write_run_report(write_evidence(tmp_path, doc)).read_text()
    assert "Nothing was tested in this run" in page


def test_case_log_fragment_key_metrics_before_thresholds():
    doc = data.evidence()
    frag = case_log_html(run_from_doc(doc).cases[15].record)  # the failing RX case
    assert frag.index("key-metrics") < frag.index("thresholds") < frag.index("<svg")
    heads = re.findall(r'<th data-metric="([a-z_0-9A-Z]+)"', frag)
    assert heads[:4] == ["throughput_sps", "throughput_ratio", "throughput_Bps", "frames_per_s"]
    assert "86.00 % of 10.00 MS/s" in frag
    assert re.search(r"missing_frames == 0</td><td>80</td><td>0</td><td>-80</td><td class=\"l fail\">FAIL", frag)


def test_export_csv_and_json_one_row_per_point(tmp_path):
    columns, data_rows = rows([run_from_doc(data.evidence())])
    assert len(data_rows) == 18
    assert columns[:5] == ["run_id", "rig", "testcase", "case", "verdict"]
    assert "sweep_transport.frame_bytes" in columns and "throughput_Bps" in columns
    parsed = list(csv.DictReader(io.StringIO(to_csv(columns, data_rows))))
    p = next(r for r in parsed if r["testcase"].endswith("[transport.frame_bytes=4000, channels=2]"))
    assert float(p["throughput_Bps"]) == pytest.approx(data.point_metrics(4000, 2)["throughput_Bps"])
    assert p["sweep_channels"] == "2" and p["verdict"] == "PASS"
    doc = json.loads(to_json(columns, data_rows))
    assert doc["units"]["throughput_Bps"] == "B/s" and doc["units"]["latency_p99_s"] == "s"
    assert doc["rows"][-1]["verdict"] == "SKIP" and doc["rows"][-1]["throughput_sps"] is None
    # through the CLI
    ev = tmp_path / "ev"
    write_evidence(ev, data.evidence("20261120T210000Z-bbbbbb"))
    write_evidence(ev, data.evidence())
    out = tmp_path / "x.json"
    assert cli_main(["results", "export", "--evidence", str(ev), "--last", "2", "--format", "json",
                     "--output", str(out)]) == 0
    assert len(json.loads(out.read_text())["rows"]) == 36


def test_compare_new_and_fixed_failures(tmp_path, capsys):
    doc_a, doc_b = data.evidence("20261120T210000Z-bbbbbb", fail_rx=False), data.evidence()
    a, b = run_from_doc(doc_a), run_from_doc(doc_b)
    cmp = compare(a, b)
    assert [c.testcase for c in cmp.new_failures] == ["RX UDP 10 MS/s"]
    assert compare(b, a).fixed[0].testcase == "RX UDP 10 MS/s"
    rx = next(c for c in cmp.cases if c.testcase == "RX UDP 10 MS/s")
    d = next(d for d in rx.deltas if d.metric == "throughput_sps")
    assert d.delta == pytest.approx(-1.4e6) and d.worse and d.text()[3] == "-14.0 %"
    assert "new failures: 1" in comparison_text(cmp)
    ev = tmp_path / "ev"
    write_evidence(ev, doc_a)
    write_evidence(ev, doc_b)
    html = tmp_path / "cmp.html"
    assert cli_main(["report", "--evidence", str(ev), "--compare", "20261120T", "20261121T",
                     "--output", str(html)]) == 1   # a new failure: non-zero
    assert 'id="new-failures">1 new failures' in html.read_text()
    assert "RX UDP 10 MS/s: PASS -> FAIL  [new failure]" in capsys.readouterr().out


def test_cli_report_last_and_errors(tmp_path, capsys):
    ev = tmp_path / "ev"
    write_evidence(ev, data.evidence())
    assert cli_main(["report", "--evidence", str(ev), "--last", "-o", str(tmp_path / "r.html")]) == 0
    assert "1 FAIL, 1 ERROR, 15 PASS, 1 SKIP" in capsys.readouterr().out
    assert (tmp_path / "r.html").stat().st_size > 10_000
    write_evidence(ev, data.evidence("20261120T210000Z-bbbbbb"))
    assert cli_main(["report", "--evidence", str(ev), "--last", "2"]) == 0   # --last N: the last N runs
    out = capsys.readouterr().out
    assert "run 20261120T210000Z-bbbbbb" in out and "run 20261121T210000Z-aaaaaa" in out
    assert (tmp_path / "reports" / "20261120T210000Z-bbbbbb.html").is_file()
    assert cli_main(["report", "--evidence", str(ev), "nope"]) == 2
    assert "no evidence file nope.json" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="not a hilrig evidence file"):
        bad = tmp_path / "bad.json"
        bad.write_text("[]")
        load_run(bad)
    with pytest.raises(ConfigError, match="no evidence files"):
        find_run(None, tmp_path / "empty")


def test_three_axis_sweep_splits_tables_by_the_third_axis():
    doc = data.evidence()
    extra = []
    for c in doc["cases"][:15]:
        for dec in (1000, 10):
            e = json.loads(json.dumps(c))
            e["case"]["sweep_point"] = {**c["case"]["sweep_point"], "decimation": dec}
            e["test_name"] += f" dec={dec}"
            extra.append(e)
    doc["cases"] = extra
    (sweep,) = sweeps(run_from_doc(doc))
    assert sweep.axes == ["transport.frame_bytes", "channels", "decimation"]
    assert [fixed for fixed, _ in sweep.facets] == [{"decimation": 10}, {"decimation": 1000}]
    assert all(len(points) == 15 for _, points in sweep.facets)


def test_last_is_the_last_run_and_last_n_the_last_n_runs_on_every_command(tmp_path, capsys):
    from hostlib.results import Outbox

    from .factories import judged, make_case, make_rig

    older, newer = "20261120T210000Z-bbbbbb", "20261121T210000Z-aaaaaa"
    ev = tmp_path / "ev"
    for run_id in (older, newer):
        write_evidence(ev, data.evidence(run_id))
    out = tmp_path / "x.json"
    # `--last` alone: the last run (results export demanded a number)
    assert cli_main(["results", "export", "--evidence", str(ev), "--last", "--format", "json", "-o", str(out)]) == 0
    assert {r["run_id"] for r in json.loads(out.read_text())["rows"]} == {newer}
    assert cli_main(["report", "--evidence", str(ev), "--last"]) == 0
    assert f"run {newer}" in capsys.readouterr().out
    # `--last N`: the last N runs (report took no number)
    assert cli_main(["report", "--evidence", str(ev), "--last", "2"]) == 0
    assert f"run {older}" in capsys.readouterr().out
    # results show reads the outbox: the same spelling, the why from the row's own fields
    outbox = tmp_path / "outbox"
    case = make_case("RX lossy", thresholds={"missing_frames": "== 0"})
    for run_id in (older, newer):
        Outbox(outbox, git_sha="").append(judged(case, {"missing_frames": 12.0}, run_id=run_id))
    rig = make_rig(results={"outbox": str(outbox)})
    assert cli_main(["results", "show", "--rig", rig.file, "--last"]) == 0
    shown = capsys.readouterr().out
    assert f"run {newer}" in shown and older not in shown
    assert "missing_frames == 0 (measured 12)" in shown and "10.00 MS/s" not in shown
    assert cli_main(["results", "show", "--rig", rig.file, "--last", "2"]) == 0
    assert f"run {older}" in capsys.readouterr().out
    for command in (["results", "show", "--rig", rig.file], ["results", "export", "--evidence", str(ev)],
                    ["report", "--evidence", str(ev)]):
        assert cli_main([*command, "--last", "0"]) == 2
        assert "--last 0: give 1 or more" in capsys.readouterr().err
