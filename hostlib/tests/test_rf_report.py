"""Seeing an RF case (docs/rf.md "Seeing it"): its spectrum, constellation and sweep curve in
the run report, from the evidence alone, and a failing case's capture as a SigMF recording.

The SigMF and spectrum test is a real run through the run session on the simulator (one
case that FAILs on a threshold its injected truth violates, one that passes); the report it
writes is opened in headless Chromium. The constellation and sweep-curve tests render
evidence built here: the plots read nothing else.
"""
from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

import pytest

from hostlib.reports.html import case_log_html, write_run_report
from hostlib.reports.model import load_run
from hostlib.reports.rf import sweep_truth
from hostlib.reports.tables import sweeps
from hostlib.results.schema import EvidenceRun
from hostlib.tests.conftest import requires_native
from hostlib.tests.test_report_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, open_page

TONE = """\
name: {name}
device: dut
direction: rx
master_clock: 200 MHz
decimation: 200
transport: {{kind: udp, frame_bytes: 8000}}
duration: 200 ms
signal: {{kind: tone, frequency: -123.4567 kHz, amplitude: 0.5, capture: 16384}}
channel:
  cfo: 1.2 kHz
  iq_imbalance: {{gain: 0.3 dB, phase: 1 deg}}
  snr: 20 dB
  seed: 3
thresholds:
  snr: "{snr}"
  sfdr: ">= 30 dBc"
"""


@pytest.fixture(scope="module")
def rf_run(tmp_path_factory):
    """A run of two RF cases through the run session: one FAILs (SNR asked 22 dB of a
    20 dB channel), one passes; the session writes evidence, SigMF and the report."""
    from hostlib.dsl import load_cases
    from hostlib.session import RunSession

    tmp = tmp_path_factory.mktemp("rf-report")
    (tmp / "fail.yaml").write_text(TONE.format(name="RF fails", snr=">= 22 dB"))
    (tmp / "pass.yaml").write_text(TONE.format(name="RF passes", snr=">= 19 dB"))
    rig = tmp / "rig.yaml"
    rig.write_text(textwrap.dedent(f"""\
        name: rf-report
        devices:
          dut: {{driver: sim, channels: 1, max_rate: 10 GS/s}}
        results:
          outbox: {tmp / 'outbox'}
          evidence: {tmp / 'evidence'}
        """))
    said: list[str] = []
    with RunSession(rig, say=said.append) as run:
        results = [run.run(c) for c in load_cases([tmp / "fail.yaml", tmp / "pass.yaml"])]
    return {"tmp": tmp, "run": run, "results": results, "said": said, "evidence": run.evidence.path}


@requires_native
def test_a_failing_rf_case_leaves_a_sigmf_recording_of_what_the_analyzer_saw(rf_run):
    import numpy as np
    import sigmf

    from hostlib.transports import native

    failed, passed = rf_run["results"]
    assert (failed.verdict.value, passed.verdict.value) == ("FAIL", "PASS"), (failed.message, passed.message)
    evidence_dir = rf_run["evidence"].parent
    run_id = rf_run["run"].run_id
    # The recording sits in the run's folder beside its evidence file; the run said where.
    assert failed.rf_sigmf == f"{run_id}/RF-fails.sigmf-meta"
    meta_path = evidence_dir / failed.rf_sigmf
    assert f"hilrig rf: RF fails: capture saved as SigMF {meta_path}" in rf_run["said"]
    assert passed.rf_sigmf is None and passed.rf_capture is None       # a pass keeps no capture
    assert sorted(p.name for p in (evidence_dir / run_id).iterdir()) == ["RF-fails.sigmf-data", "RF-fails.sigmf-meta"]

    recording = sigmf.sigmffile.fromfile(str(meta_path), autoscale=False)   # validates the schema and sha512
    g = recording.get_global_info()
    assert g[sigmf.DATATYPE_KEY] == "ci16_le" and g[sigmf.SAMPLE_RATE_KEY] == 1e6
    assert {"name": "hilrig", "version": "1.0.0", "optional": True} in g[sigmf.EXTENSIONS_KEY]
    assert (g["hilrig:test_name"], g["hilrig:seed"], g["hilrig:verdict"], g["hilrig:run_id"]) == \
        ("RF fails", 3, "FAIL", run_id)
    assert g["hilrig:channel"]["snr_db"] == 20 and g["hilrig:channel"]["cfo_hz"] == 1200
    assert g["hilrig:injected"]["injected_snr_db"] == 20
    assert g["hilrig:measured"]["snr_db"] == failed.metrics["snr_db"]
    assert any(f.startswith("snr_db >= 22 dB") for f in g["hilrig:failed"])
    # The samples are the analyzer's, in the stream's format: int16 over hilrig's full scale 32767.
    raw = recording.read_samples().astype(np.complex128)
    seen = failed.rf_capture.samples
    assert len(raw) == 16384 == len(seen)
    assert np.array_equal(raw, np.round(seen * 32767))
    assert np.max(np.abs(raw / 32767 - seen)) < 1e-15
    again = native().analyze_tone(raw / 32767, 1e6, [])
    assert again["snr_db"] == pytest.approx(failed.metrics["snr_db"], abs=1e-9)


@requires_native
def test_an_rf_case_whose_analysis_fails_after_its_capture_leaves_a_sigmf_recording(tmp_path, monkeypatch):
    """An ERROR keeps the capture as a FAIL does: the capture is taken before the analysis,
    so an analysis that raises (here made to, after the simulator's real capture) still
    leaves the samples it was given, saved as SigMF and named in the evidence."""
    import sigmf

    from hostlib._exceptions import DeviceError
    from hostlib.dsl import load_cases
    from hostlib.engine import runner
    from hostlib.session import RunSession

    def failing_analysis(case, capture):
        assert capture is not None and len(capture.samples) == 16384
        raise DeviceError("the analysis found no tone")

    monkeypatch.setattr(runner, "analyze_rf", failing_analysis)
    (tmp_path / "err.yaml").write_text(TONE.format(name="RF analysis fails", snr=">= 10 dB"))
    rig = tmp_path / "rig.yaml"
    rig.write_text(textwrap.dedent(f"""\
        name: rf-error
        devices:
          dut: {{driver: sim, channels: 1, max_rate: 10 GS/s}}
        results:
          outbox: {tmp_path / 'outbox'}
          evidence: {tmp_path / 'evidence'}
        """))
    said: list[str] = []
    with RunSession(rig, say=said.append) as run:
        [result] = [run.run(c) for c in load_cases([tmp_path / "err.yaml"])]
    assert result.verdict.value == "ERROR" and "the analysis found no tone" in result.message, result.message
    assert result.rf_sigmf == f"{run.run_id}/RF-analysis-fails.sigmf-meta", result.rf_sigmf
    meta_path = run.evidence.path.parent / result.rf_sigmf
    assert f"hilrig rf: RF analysis fails: capture saved as SigMF {meta_path}" in said
    g = sigmf.sigmffile.fromfile(str(meta_path), autoscale=False).get_global_info()
    assert g["hilrig:verdict"] == "ERROR (device)" and g["hilrig:test_name"] == "RF analysis fails"
    evidence = json.loads(run.evidence.path.read_text())
    assert json.dumps(evidence).count("RF-analysis-fails.sigmf-meta") >= 1   # named in the evidence


@requires_native
def test_the_spectrum_in_the_evidence_holds_the_capture_and_the_analyzers_marks(rf_run):
    failed = load_run(rf_run["evidence"]).cases[0].record
    sp = failed.rf_spectrum
    m = failed.metrics
    assert (sp["bins"], sp["segments"], sp["capture_samples"], sp["fs_hz"]) == (2048, 15, 16384, 1e6)
    assert len(sp["power_dbfs"]) == 2048 and sp["enbw_bins"] == pytest.approx(2.004, abs=1e-3)
    marks = {mk["what"]: mk for mk in sp["markers"]}
    tone = marks["tone"]
    assert tone["freq_hz"] == pytest.approx(-123456.7 + m["freq_error_hz"]) and tone["power_dbfs"] == m["tone_power_dbfs"]
    assert marks["image"]["freq_hz"] == pytest.approx(-tone["freq_hz"])
    assert marks["image"]["power_dbfs"] == pytest.approx(m["tone_power_dbfs"] + m["iq_image_dbc"])
    assert marks["harmonic -3"]["freq_hz"] == pytest.approx((3 * 122256.7 + 5e5) % 1e6 - 5e5, abs=5)
    # The tone's bin reads its power, less at most the window's scalloping; the noise per bin
    # is the measured SNR below the tone, less 10 log10(bins / enbw).
    at = round(tone["freq_hz"] / 1e6 * 2048) + 1024
    peak = max(sp["power_dbfs"][at - 1:at + 2])
    assert m["tone_power_dbfs"] - 0.85 <= peak <= m["tone_power_dbfs"] + 0.05
    floor = sorted(v for v in sp["power_dbfs"] if v is not None)[1024]   # the median bin: noise
    want = m["tone_power_dbfs"] - m["snr_db"] + 10 * math.log10(sp["enbw_bins"] / 2048)
    assert abs(floor - want) <= 1.0, (floor, want)   # a median of exponential bins sits 1.6 dB low; 15 averaged


@requires_native
def test_the_report_shows_the_spectrum_truth_and_sigmf_link_in_chromium(rf_run):
    tmp = rf_run["tmp"]
    report = rf_run["run"].report_path
    assert report is not None and report.is_file(), rf_run["said"]
    html = report.read_text()
    run_id = rf_run["run"].run_id
    assert f'href="../evidence/{run_id}/RF-fails.sigmf-meta"' in html
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page, errors = open_page(browser, report)
            first = page.locator("section.case").first
            assert "RF fails" in first.locator("h3").inner_text()
            plot = first.locator("figure.rf-spectrum svg.plot")
            assert plot.get_attribute("aria-label") == "spectrum RF fails" and plot.bounding_box()["width"] > 300
            svg = plot.inner_html()
            assert "snr_db &gt;= 22 dB (FAIL)" in svg and "sfdr_dbc &gt;= 30 dBc (PASS)" in svg   # the limits as lines
            assert "tone " in svg and "image " in svg
            caption = first.locator("figure.rf-spectrum figcaption").inner_text()
            assert "15 segments of 2048 samples" in caption and "Blackman-Harris" in caption
            row = first.locator('table.rf-truth tr[data-metric="snr_db"]').locator("td").all_inner_texts()
            failed = rf_run["results"][0].metrics
            assert row == ["snr_db", f"{failed['snr_db']:.2f} dB", "20.00 dB", f"{failed['snr_db'] - 20:.2f} dB"]
            link = first.locator("p.rf-sigmf a")
            assert link.get_attribute("href") == f"../evidence/{run_id}/RF-fails.sigmf-meta"
            target = (report.parent / link.get_attribute("href")).resolve()
            assert target == (tmp / "evidence" / run_id / "RF-fails.sigmf-meta").resolve() and target.is_file()
            assert page.locator("section.case").nth(1).locator("p.rf-sigmf").count() == 0
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "rf-report.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()
    # Robot's log fragment of the same case: the same figure, the recording as a file link.
    fragment = case_log_html(load_run(rf_run["evidence"]).cases[0].record, evidence_dir=rf_run["evidence"].parent)
    assert 'aria-label="spectrum RF fails"' in fragment
    assert f'href="{(tmp / "evidence" / run_id / "RF-fails.sigmf-meta").resolve().as_uri()}"' in fragment


# ------------------------------------------------------------------ evidence built here

def record(test_name: str, metrics: dict, *, name: str | None = None, sweep_point: dict | None = None,
           verdict: str = "PASS", index: int = 0, **fields) -> dict:
    return {
        "test_name": test_name,
        "case": {"name": name or test_name, "test_name": test_name, "source_file": "testcases/rf/x.yaml",
                 "source_line": 1, "device": "dut", "direction": "rx", "channels": 1, "sample_format": "sc16",
                 "rate_sps": 1e6, "transport": {"kind": "udp", "frame_bytes": 8000}, "duration_s": 0.3,
                 "sweep_point": sweep_point or {}},
        "rig_name": "sim", "device": "dut", "driver": "sim", "run_id": "R",
        "started_utc": f"2026-11-28T01:00:{index:02d}.000+00:00", "ended_utc": f"2026-11-28T01:00:{index:02d}.500+00:00",
        "verdict": verdict, "metrics": metrics, **fields,
    }


def write_run(folder: Path, cases: list[dict]) -> Path:
    doc = {"format": "hilrig-evidence/2", "run_id": "20261128T010000Z-abcdef",
           "started_utc": "2026-11-28T01:00:00.000+00:00", "ended_utc": "2026-11-28T01:01:00.000+00:00",
           "cases": cases}
    path = folder / "evidence" / f"{doc['run_id']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(EvidenceRun.model_validate(doc).model_dump_json())
    return path


def qpsk(n: int, noise: float, seed: int = 1) -> tuple[list[list[float]], list[list[float]]]:
    import numpy as np

    rng = np.random.default_rng(seed)
    ideal = (rng.choice([-1, 1], n) + 1j * rng.choice([-1, 1], n)) / math.sqrt(2)
    rx = ideal + noise * (rng.standard_normal(n) + 1j * rng.standard_normal(n)) / math.sqrt(2)
    return [[z.real, z.imag] for z in rx], [[z.real, z.imag] for z in ideal]


def test_a_constellation_in_the_evidence_is_plotted_with_its_evm(tmp_path):
    rx, ideal = qpsk(3000, 0.05)
    evidence = write_run(tmp_path, [
        record("RF QPSK", {"evm_rms_pct": 5.02, "injected_evm_rms_pct": 5.0},
               rf_constellation=rx, rf_constellation_ideal=ideal),
        record("RF QPSK, points alone", {}, rf_constellation=rx[:100], rf_constellation_ideal=ideal[:100], index=1),
    ])
    html = write_run_report(evidence).read_text()
    figures = re.findall(r'<figure class="rf-constellation">(.*?)</figure>', html, flags=re.S)
    assert len(figures) == 2
    first, second = figures
    assert 'aria-label="constellation RF QPSK"' in first
    caption = re.search(r"<figcaption>(.*?)</figcaption>", first).group(1)
    assert caption == ("3,000 received symbols (2,000 of them drawn) over the 4 ideal points (+). "
                       "EVM 5.02 % RMS (injected: 5.00 %).")
    assert "received" in first and "ideal" in first                    # the legend: both sets drawn
    # Without an EVM metric the caption measures the points against their own ideal points.
    evm = 100 * math.sqrt(sum((a - c) ** 2 + (b - d) ** 2 for (a, b), (c, d) in zip(rx[:100], ideal[:100]))
                          / sum(c * c + d * d for c, d in ideal[:100]))
    assert f"EVM of the points: {evm:.2f} % RMS." in second
    assert "evm_rms_pct" in html and "5.00" in html       # the truth table beside it
    assert 'aria-label="constellation RF QPSK"' in case_log_html(load_run(evidence).cases[0].record)


SNRS = ("10 dB", "20 dB", "30 dB", "40 dB")


def test_a_sweep_of_the_channel_plots_measured_beside_the_truth(tmp_path):
    """The SNR sweep: measured SNR against the swept SNR with the injected beside it; the same
    code plots EVM beside its theory where a sweep has evm_rms_pct and injected_evm_rms_pct."""
    cases = []
    for i, snr in enumerate(SNRS):
        db = float(snr.split()[0])
        cases.append(record(f"RF SNR sweep [channel.snr={snr}]", name="RF SNR sweep", index=i,
                            sweep_point={"channel.snr": snr},
                            metrics={"snr_db": db + 0.01 * (i + 1), "injected_snr_db": db, "tone_power_dbfs": -6.0,
                                     "injected_tone_power_dbfs": -6.0, "frames_per_s": 125.0}))
        theory = 100 * 10 ** (-db / 20)
        cases.append(record(f"RF QPSK sweep [channel.snr={snr}]", name="RF QPSK sweep", index=10 + i,
                            sweep_point={"channel.snr": snr}, verdict="FAIL" if i == 0 else "PASS",
                            metrics={"evm_rms_pct": theory * 1.01, "injected_evm_rms_pct": theory}))
    evidence = write_run(tmp_path, cases[::-1])       # out of order: the table sorts by the swept value
    run = load_run(evidence)
    by_name = {s.name: s for s in sweeps(run)}
    assert sweep_truth(by_name["RF SNR sweep"].facets[0][1]) == ["snr_db"]     # the tone's power did not move
    assert sweep_truth(by_name["RF QPSK sweep"].facets[0][1]) == ["evm_rms_pct"]
    html = write_run_report(evidence).read_text()
    for name, metric, unit in (("RF SNR sweep", "snr_db", " dB"), ("RF QPSK sweep", "evm_rms_pct", "")):
        section = re.search(rf'<section class="sweep" data-sweep="{name}">(.*?)</section>', html, flags=re.S).group(1)
        assert f'aria-label="sweep truth {name}"' in section
        table = re.search(r'<table class="sweep-truth".*?</table>', section, flags=re.S).group(0)
        rows = re.findall(r"<tr(?: class=\"cellfail\")?><th class=\"l\"><a href=\"#case-\d+\">(.*?)</a></th>(.*?)</tr>",
                          table)
        assert [r[0] for r in rows] == list(SNRS)                                      # numeric order
        for (snr, cells), i in zip(rows, range(4)):
            db = float(snr.split()[0])
            values = re.findall(r"<td>(.*?)</td>", cells)
            if metric == "snr_db":
                assert values == [f"{db + 0.01 * (i + 1):.2f} dB", f"{db:.2f} dB", f"{0.01 * (i + 1):.2f} dB"]
            else:
                # evm_rms_pct is a registered metric in % (shown to 2 decimals)
                assert len(values) == 3 and values[0].endswith("%")
                assert float(values[0].rstrip("%")) == pytest.approx(100 * 10 ** (-db / 20) * 1.01, abs=0.006)
        assert ("cellfail" in table) == (name == "RF QPSK sweep")                     # its 10 dB point failed
        svg = re.search(r'<svg role="img" aria-label="sweep truth.*?</svg>', section, flags=re.S).group(0)
        assert "injected (truth)" in svg and "measured" in svg and f"{metric}: measured and injected" in svg
        assert "channel.snr (dB)" in svg
    assert json.loads(evidence.read_text())["cases"][0]["rf_constellation"] == []


@requires_native
def test_an_sc8_capture_is_saved_as_ci8_and_a_recording_that_cannot_be_written_is_an_infrastructure_error(
        write_case, tmp_path):
    import numpy as np
    import sigmf

    from hostlib._exceptions import InfrastructureError
    from hostlib.drivers._native_facade import RfCapture
    from hostlib.results.record import CaseResult, Verdict
    from hostlib.results.sigmf import write_capture_sigmf

    [case] = write_case(TONE.format(name="RF sc8", snr=">= 22 dB") + "format: sc8\n")
    x = np.round(0.5 * np.exp(2j * np.pi * 0.1234567 * np.arange(1000)) * 127) / 127
    result = CaseResult(case=case, rig_name="sim", device="dut", driver="sim", run_id="R",
                        started_utc="2026-11-28T01:00:00Z", ended_utc="2026-11-28T01:00:01Z", verdict=Verdict.FAIL,
                        metrics={"snr_db": math.inf}, rf_capture=RfCapture(samples=x, start_tick=4096, restarts=1))
    meta = write_capture_sigmf(result, tmp_path / "run")
    recording = sigmf.sigmffile.fromfile(str(meta), autoscale=False)
    g = recording.get_global_info()
    assert (g[sigmf.DATATYPE_KEY], g["hilrig:full_scale"], g["hilrig:capture_start_tick"]) == ("ci8", 127, 4096)
    assert g["hilrig:measured"] == {"snr_db": None}                    # not finite: null, the JSON way
    assert np.array_equal(recording.read_samples().astype(np.complex128), np.round(x * 127))
    assert write_capture_sigmf(result, tmp_path / "run").name == "RF-sc8-2.sigmf-meta"   # never over another
    (tmp_path / "file").write_text("")
    with pytest.raises(InfrastructureError, match="cannot write the SigMF recording"):
        write_capture_sigmf(result, tmp_path / "file")
