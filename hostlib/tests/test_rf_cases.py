"""RF cases end to end: YAML signal:/channel: -> the simulator generating the signal
through its channel at stream rate -> the host's capture -> the native analyzer ->
metrics beside the injected truth -> thresholds. The real simulator process, no mocks.

Bounds (docs/rf.md "Accuracy", 2^16 samples): SNR within 0.3 dB of the injected, image
and SFDR within 1 dB, the spur (THD) within 1 dB at 40 dB SNR (2 dB at 30 dB), frequency
within 4 x the Cramér-Rao bound of one estimate, the tone's power within 0.05 dB, DC within
0.1 dB at 40 dB SNR (0.4 dB at 30 dB).
"""
from __future__ import annotations

import json
import math

import pytest

from hostlib.engine import run_case
from hostlib.reference.rf import crb_freq_hz
from hostlib.results.record import Verdict

from .conftest import requires_native

IMPAIRED = """
name: RF impaired {name}
device: dut
direction: rx
master_clock: 200 MHz
decimation: 200
transport: {{kind: {kind}, frame_bytes: 8000}}
duration: 300 ms
signal: {{kind: tone, frequency: -123.4567 kHz, amplitude: 0.5}}
channel:
  gain: -1 dB
  cfo: 1.2 kHz
  iq_imbalance: {{gain: 0.3 dB, phase: 1 deg}}
  cubic: -0.05
  dc: {{i: 0.003, q: -0.002}}
  snr: {snr} dB
  seed: {seed}
thresholds:
  snr: "{snr_limit}"
  missing_frames: "== 0"
"""


@requires_native
@pytest.mark.parametrize("kind, snr, seed", [("udp", 30, 7), ("shm", 40, 8)])
def test_rf_case_measures_the_injected_truth(kind, snr, seed, write_case, sim_rig, tmp_path):
    [case] = write_case(IMPAIRED.format(name=kind, kind=kind, snr=snr, seed=seed, snr_limit=f">= {snr - 1} dB"))
    result = run_case(case, sim_rig, run_id="rf")
    m = result.metrics
    assert result.verdict == Verdict.PASS, (result.message, m)
    assert f"({snr:.2f} dB)" in result.message and "freq error 1.2 kHz (1.2 kHz)" in result.message  # beside the truth
    assert m["rf_capture_samples"] == 65536 and m["rf_capture_restarts"] == 0
    assert m["injected_snr_db"] == snr
    assert abs(m["snr_db"] - m["injected_snr_db"]) <= 0.3, m
    crb = crb_freq_hz(snr, 65536, case.rate_sps)
    assert m["injected_freq_error_hz"] == 1200.0
    assert abs(m["freq_error_hz"] - m["injected_freq_error_hz"]) <= 4 * crb, (m["freq_error_hz"], crb)
    assert m["freq_error_ppm"] == pytest.approx(m["freq_error_hz"] / 123456.7 * 1e6)
    assert abs(m["tone_power_dbfs"] - m["injected_tone_power_dbfs"]) <= 0.05, m
    assert abs(m["iq_image_dbc"] - m["injected_iq_image_dbc"]) <= 1.0, m
    # The cubic's spur at -3f, 52 dB below the tone: within 0.3 dB at 40 dB SNR (20 seeds of the
    # reference), up to 1 dB off at 30 dB, where the noise in its lobe is 16 dB below it.
    assert abs(m["thd_dbc"] - m["injected_thd_dbc"]) <= (1.0 if snr >= 40 else 2.0), m
    assert abs(m["sfdr_dbc"] - m["injected_sfdr_dbc"]) <= 1.0, m          # the image is the largest
    # DC 49 dB below full scale: within 0.05 dB at 40 dB SNR, 0.16 dB at 30 dB (10 seeds, docs/rf.md)
    assert abs(m["dc_offset_dbfs"] - m["injected_dc_offset_dbfs"]) <= (0.1 if snr >= 40 else 0.4), m
    assert m["missing_frames"] == 0 and "pattern_errors" not in m          # the payload is not the counter
    # The truth travels beside the measured figure into the record the sinks write.
    record = json.loads(json.dumps(result.to_dict()))
    assert record["metrics"]["injected_snr_db"] == snr and "snr_db" in record["metrics"]


@requires_native
def test_a_threshold_the_truth_violates_fails(write_case, sim_rig):
    """SNR injected at 20 dB, asked for >= 22 dB: the measured value cannot reach it."""
    [case] = write_case(IMPAIRED.format(name="fail", kind="udp", snr=20, seed=3, snr_limit=">= 22 dB"))
    result = run_case(case, sim_rig, run_id="rf")
    assert result.verdict == Verdict.FAIL, result.message
    [snr] = [t for t in result.thresholds if t.metric == "snr_db"]
    assert snr.verdict == Verdict.FAIL and abs(snr.measured - 20) <= 0.3 and snr.limit == 22
    assert "snr_db" in result.message


BASE = """
name: rf
device: dut
direction: rx
master_clock: 200 MHz
decimation: 200
transport: {kind: udp}
duration: 300 ms
"""


@pytest.mark.parametrize("tail, line, field, says", [
    ("signal: {kind: tone, frequncy: 1 kHz}\n", 8, "signal.frequncy", "frequency"),
    ("signal: {kind: tone, frequency: 1 kHz}\nchannel: {snr: 30 dBc}\n", 9, "channel.snr", "dB"),
    ("signal: {kind: tone, frequency: 600 kHz}\n", 8, "signal.frequency", "outside the band"),
    ("signal: {kind: tone, frequency: 1 kHz, amplitude: 2}\n", 8, "signal.amplitude", "full scale"),
    ("signal:\n  kind: multitone\n  tones:\n    - {frequency: 1 kHz}\n    - {frequency: 2 kHz, amplitude: -3 dBm}\n",
     12, "signal.tones.1.amplitude", "dBFS"),
    ("signal: {kind: tone, frequency: 1 kHz, capture: 1000000}\n", 8, "signal.capture", "longer than"),
    ("channel: {snr: 30 dB}\n", 8, "channel", "signal"),
    ("signal: {kind: tone, frequency: 1 kHz}\nchannel:\n  iq_imbalance: {gain: 0.3 dB, phase: 60 deg}\n", 10,
     "channel.iq_imbalance.phase", "45"),
    # the capture keeps one channel: a 2-channel RF case would PASS on channel 0 alone
    ("channels: 2\nsignal: {kind: tone, frequency: 1 kHz}\n", 8, "channels", "one channel"),
])
def test_a_wrong_signal_or_channel_field_is_a_file_line_error(tmp_path, tail, line, field, says):
    from hostlib.dsl import validate_paths

    path = tmp_path / "rf.yaml"
    path.write_text(BASE.lstrip("\n") + tail)
    cases, issues = validate_paths([path])
    assert cases == []
    assert [(i.line, i.field) for i in issues] == [(line, field)], issues
    assert says in issues[0].message and str(path) in str(issues[0])


def test_an_rf_case_on_a_radio_without_a_signal_source_skips_with_the_reason(write_case, sim_rig):
    from hostlib.rig.inventory import DeviceEntry

    [case] = write_case(BASE + "signal: {kind: tone, frequency: 1 kHz}\n")
    dut = sim_rig.devices["dut"]
    radio = DeviceEntry(alias="usrp", driver="uhd", args=dut.args, serial=None, channels=1, max_rate_sps=1e9,
                        directions=("rx",), transports=("udp",))
    assert "declares no TX->RX loopback" in (radio.can_run(case).why_not or "")
    cabled = DeviceEntry(alias="usrp", driver="uhd", args=dut.args, serial=None, channels=1, max_rate_sps=1e9,
                         directions=("rx",), transports=("udp",), loopback={"TX/RX": "RX2"})
    assert "TX leg" in (cabled.can_run(case).why_not or "")
    assert dut.can_run(case).why_not is None
    assert math.isfinite(case.signal.tones[0].frequency_hz)


@requires_native
@pytest.mark.parametrize("fmt, limit_db", [("sc8", 43.8)])
def test_a_clean_tone_is_limited_by_the_sample_format_alone(fmt, limit_db, write_case, sim_rig):
    """No channel: the only noise is the format's quantisation, A^2 / (delta^2 / 6) with
    delta = 1 / 127 for sc8 (docs/rf.md "Accuracy": 43.8 dB at -6 dBFS; sc16 92.1 dB is
    testcases/rf/tone_clean.yaml)."""
    [case] = write_case(BASE + f"format: {fmt}\nsignal: {{kind: tone, frequency: 123.4567 kHz, amplitude: -6 dBFS}}\n")
    result = run_case(case, sim_rig, run_id="rf")
    m = result.metrics
    assert result.verdict == Verdict.PASS, result.message
    assert abs(m["snr_db"] - limit_db) <= 0.5, m["snr_db"]
    assert "injected_snr_db" not in m and m["injected_tone_power_dbfs"] == pytest.approx(-6.0, abs=1e-9)


def test_a_frequency_error_threshold_in_ppm_judges_the_relative_metric():
    from hostlib.dsl.thresholds import ThresholdError, parse_threshold

    ppm = parse_threshold("freq_error", {"limit": "<= 0.1 ppm", "marginal": "<= 0.01 ppm"})
    assert (ppm.metric, ppm.written_as, ppm.marginal_text) == ("freq_error_ppm", "freq_error", "<= 0.01 ppm")
    assert parse_threshold("freq_error", "<= 2 kHz").metric == "freq_error_hz"
    with pytest.raises(ThresholdError, match="frequency .* or a ppm"):
        parse_threshold("freq_error", "<= 3 dB")


MULTITONE = BASE + """signal:
  kind: multitone
  tones: [{frequency: 123.4567 kHz, amplitude: -6 dBFS}, {frequency: -210.9876 kHz, amplitude: -26 dBFS}]
channel: {gain: -2 dB, cfo: 300 Hz, iq_imbalance: {gain: 0.3 dB, phase: 1 deg}, snr: 30 dB, seed: 5}
"""


@requires_native
def test_a_multitone_is_measured_on_its_strongest_tone_beside_its_truth(write_case, sim_rig):
    """The other tone is set aside from the noise (its lobe and its image's) and is the
    largest spur: SNR's truth is the tone's share of the power the noise is relative to."""
    [case] = write_case(MULTITONE)
    m = run_case(case, sim_rig, run_id="rf").metrics
    assert abs(m["snr_db"] - m["injected_snr_db"]) <= 0.3, m
    assert m["injected_snr_db"] == pytest.approx(30 - 0.0432, abs=0.01)      # 10 log10(1 / 1.01)
    assert abs(m["sfdr_dbc"] - m["injected_sfdr_dbc"]) <= 0.1 and m["injected_sfdr_dbc"] == pytest.approx(20)
    assert abs(m["freq_error_hz"] - 300) <= 0.01 and abs(m["tone_power_dbfs"] - m["injected_tone_power_dbfs"]) <= 0.05
