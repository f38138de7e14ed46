"""Modulated RF signals (QPSK/16QAM/64QAM, docs/rf.md "Modulated signals"): the reference's
frame and analyzer, the native core against them on the shared captures
(docs/vectors/rf, index.json "modem_vectors", which the C++ gtests read too), the DSL's
checks, and one case end to end through the real simulator with its constellation in the
evidence. The heavy seed sweep of the EVM against the AWGN theory is the gtest
RfModem.EvmMatchesTheAwgnTheoryOnEverySeed (20 seeds x 3 schemes x 10..40 dB)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from hostlib import ConfigError
from hostlib.engine import run_case
from hostlib.engine.rf import modem_ber
from hostlib.reference import gen_rf_vectors as gen
from hostlib.reference import modem
from hostlib.reference.rf import Channel
from hostlib.results.record import Verdict

from .conftest import requires_native

RF_DIR = Path(__file__).resolve().parents[2] / "docs" / "vectors" / "rf"
INDEX = json.loads((RF_DIR / "index.json").read_text())
TOL = INDEX["modem_tolerance"]
FS_HZ = 1e6


def _stream(f: modem.ModemFrame, start: int, n: int) -> np.ndarray:
    return f.samples[(start + np.arange(n)) % len(f.samples)]


@pytest.mark.parametrize("scheme", ["qpsk", "16qam", "64qam"])
def test_reference_evm_is_the_awgn_theory(scheme):
    """The reference analyzer at 10 and 40 dB per sample (one seed each; the gtest sweeps 20):
    EVM within 0.3 percentage points of sqrt(P / (A^2 snr)), the CFO found, every bit right
    at 40 dB."""
    f = modem.modem_frame(scheme, 4, 0.35, 0.25, 11)
    x = _stream(f, 2345, 1 << 16)
    power = float(np.mean(np.abs(x) ** 2))
    for snr in (10.0, 40.0):
        a = modem.analyze_modulation(Channel(snr_db=snr, cfo_hz=-2500.0, seed=int(snr)).apply(x, FS_HZ), FS_HZ,
                                     scheme, 4, 0.35, 0.25, 11)
        theory = 100 * math.sqrt(power / 10 ** (snr / 10) / (0.25 ** 2 * 4))
        assert abs(a.evm_rms_pct - theory) <= 0.3, (snr, a.evm_rms_pct, theory)
        assert abs(a.cfo_hz + 2500.0) <= 5.0
        assert a.symbols >= 14000 and len(a.constellation) == modem.MAX_CONSTELLATION_POINTS
        if snr == 40.0:
            assert a.bit_errors == 0 and a.mer_db == pytest.approx(-a.evm_rms_db, abs=0.2)


@pytest.mark.parametrize("scheme, snr, delay, sco", [("qpsk", 30.0, 0.37, 20.0), ("16qam", 20.0, 1.5, -20.0)])
def test_reference_follows_a_fractional_delay_and_an_sco(scheme, snr, delay, sco):
    """The reference analyzer under the channel's timing stage (one seed each; the gtest
    RfModem.FractionalDelayAndScoAreFoundAndLeaveTheAwgnEvm sweeps 20): EVM within 0.3
    percentage points of the AWGN theory, the delay and the SCO found (the gtest's bounds)."""
    f = modem.modem_frame(scheme, 4, 0.35, 0.25, 5)
    start, period = 1234, len(f.samples)
    x = _stream(f, start, 4 * period + 64)
    power = float(np.mean(np.abs(x) ** 2))
    y = Channel(snr_db=snr, cfo_hz=700.0, sco_ppm=sco, delay_samples=delay, seed=3).apply(x, FS_HZ)
    a = modem.analyze_modulation(y, FS_HZ, scheme, 4, 0.35, 0.25, 5)
    theory = 100 * math.sqrt(power / 10 ** (snr / 10) / (0.25 ** 2 * 4))
    assert abs(a.evm_rms_pct - theory) <= 0.3, (a.evm_rms_pct, theory)
    # the block starts at the period's sample `start`: the stream's grid is delay - start late
    error = (a.timing_offset_samples - (delay - start) + period / 2) % period - period / 2
    assert abs(error) <= (0.02 if snr == 20 else 0.01), a.timing_offset_samples
    assert abs(a.sco_ppm - sco) <= (2.0 if snr == 20 else 1.0), a.sco_ppm
    assert a.bit_errors == 0 and abs(a.cfo_hz - 700.0) <= 5.0


def test_ber_theory_is_the_gray_approximation():
    # QPSK: Q(sqrt(2 Eb/N0)); at Eb/N0 = 9.6 dB about 1e-5
    ebn0 = 10 ** 0.96
    assert modem_ber("qpsk", 2 * ebn0) == pytest.approx(0.5 * math.erfc(math.sqrt(ebn0)), rel=1e-12)
    assert 0.9e-5 < modem_ber("qpsk", 2 * ebn0) < 1.1e-5
    assert modem_ber("16qam", 10 ** 1.6) > modem_ber("qpsk", 10 ** 1.6)


def test_reference_vectors_are_what_the_generator_writes(tmp_path):
    """The shared captures and their expected figures are the reference's, reproducibly: the
    captures to the byte, the figures to rounding (numpy on another CPU sums in another order)."""
    index = gen.build(tmp_path)
    for want, got in zip(INDEX["modem_vectors"], index["modem_vectors"], strict=True):
        assert (tmp_path / got["file"]).read_bytes() == (RF_DIR / want["file"]).read_bytes()
        expected, again = want.get("expected"), got.get("expected")
        assert (expected is None) == (again is None), want["name"]
        if expected is None:
            continue
        assert again.keys() == expected.keys()
        for key, value in expected.items():
            if isinstance(value, int | type(None)):   # counts and positions: exact
                assert again[key] == value, (want["name"], key)
            else:
                assert np.allclose(again[key], value, rtol=1e-9, atol=1e-12), (want["name"], key, again[key], value)


native = pytest.importorskip("hostlib._native", reason="build the native core first (make build)")


@pytest.mark.parametrize("scheme, sps, rolloff", [("qpsk", 4, 0.35), ("16qam", 2, 0.25), ("64qam", 8, 0.5)])
def test_native_frame_is_the_references(scheme, sps, rolloff):
    want = modem.modem_frame(scheme, sps, rolloff, 0.3, 77)
    got = native.rf_modem_frame(scheme, sps, rolloff, 0.3, 77)
    assert np.array_equal(got["bits"], want.bits)
    assert np.max(np.abs(got["symbols"] - want.symbols)) < 1e-15
    assert np.max(np.abs(got["samples"] - want.samples)) < 1e-12
    assert np.max(np.abs(np.asarray(got["taps"]) - modem.rrc_taps(sps, rolloff))) < 1e-15


@pytest.mark.parametrize("v", [v for v in INDEX["modem_vectors"] if "expected" in v], ids=lambda v: v["name"])
def test_native_analyzer_matches_the_shared_captures(v):
    x = gen.read_capture(RF_DIR / v["file"], v["datatype"])
    mod = v["modulation"]
    a = native.analyze_modulation(x, v["fs_hz"], mod["scheme"], mod["samples_per_symbol"], mod["rolloff"],
                                  mod["amplitude"], mod["payload_seed"])
    e = v["expected"]
    assert (a["preamble_sample"], a["symbols"], a["bit_errors"]) == (e["preamble_sample"], e["symbols"],
                                                                     e["bit_errors"])
    assert abs(a["evm_rms_pct"] - e["evm_rms_pct"]) <= TOL["evm_pct"]
    assert abs(a["evm_peak_pct"] - e["evm_peak_pct"]) <= TOL["evm_pct"]
    assert abs(a["mer_db"] - e["mer_db"]) <= TOL["db"]
    assert abs(a["cfo_hz"] - e["cfo_hz"]) <= TOL["cfo_hz"]
    assert abs(a["timing_offset_samples"] - e["timing_offset_samples"]) <= TOL["timing_samples"]
    assert abs(a["sco_ppm"] - e["sco_ppm"]) <= TOL["sco_ppm"]
    head = np.array(e["constellation_head"])
    got = a["constellation"][: len(head)]
    assert np.max(np.abs(got - (head[:, 0] + 1j * head[:, 1]))) <= TOL["constellation"]


def test_native_analyzer_matches_the_reference_on_a_fresh_capture():
    f = modem.modem_frame("64qam", 4, 0.35, 0.25, 99)
    y = Channel(snr_db=18.0, cfo_hz=3000.0, iq_gain_db=0.3, iq_phase_deg=-1.0, gain_db=-3.0,
                seed=5).apply(_stream(f, 999, 20000), FS_HZ)
    ref = modem.analyze_modulation(y, FS_HZ, "64qam", 4, 0.35, 0.25, 99)
    got = native.analyze_modulation(y, FS_HZ, "64qam", 4, 0.35, 0.25, 99)
    assert got["bit_errors"] == ref.bit_errors and got["bit_errors"] > 0
    assert abs(got["evm_rms_pct"] - ref.evm_rms_pct) <= 1e-6 and abs(got["cfo_hz"] - ref.cfo_hz) <= 1e-4
    g, phi = 10 ** (0.3 / 20), math.radians(-1.0)
    mu = (1 + g * complex(math.cos(phi), -math.sin(phi))) / 2   # the symbols' gain through the IQ imbalance
    assert abs(got["gain_db"] - (-3.0 + 20 * math.log10(abs(mu)))) < 0.02


def test_native_analyzer_matches_the_reference_under_sco_and_delay():
    """The same timing on a capture that starts late in the stream (start_tick): the core's
    delay and SCO are the reference's to the shared captures' tolerances."""
    f = modem.modem_frame("16qam", 2, 0.25, 0.25, 8)
    y = Channel(snr_db=25.0, cfo_hz=-400.0, sco_ppm=-35.0, delay_samples=2.7, seed=9).apply(_stream(f, 0, 9000),
                                                                                         FS_HZ)
    start_tick = 123456789
    ref = modem.analyze_modulation(y, FS_HZ, "16qam", 2, 0.25, 0.25, 8, start_tick)
    got = native.analyze_modulation(y, FS_HZ, "16qam", 2, 0.25, 0.25, 8, start_tick)
    assert abs(got["timing_offset_samples"] - ref.timing_offset_samples) <= TOL["timing_samples"]
    assert abs(got["sco_ppm"] - ref.sco_ppm) <= TOL["sco_ppm"]
    assert abs(got["evm_rms_pct"] - ref.evm_rms_pct) <= TOL["evm_pct"] and got["symbols"] == ref.symbols
    # start_tick moves only the delay: by start_tick * sco / (1 + sco) less whole periods
    base = native.analyze_modulation(y, FS_HZ, "16qam", 2, 0.25, 0.25, 8)
    eps = base["sco_ppm"] * 1e-6
    moved = (base["timing_offset_samples"] + start_tick % len(f.samples) - start_tick * eps / (1 + eps))
    period = len(f.samples)
    assert abs((got["timing_offset_samples"] - moved + period / 2) % period - period / 2) <= 1e-6


@pytest.mark.parametrize("sps", [2, 4, 64])
def test_dsl_reference_and_core_agree_on_the_shortest_capture(sps):
    """The DSL's bound (hostlib/dsl/rf.py) is the core's rf::min_modem_samples and the reference's."""
    from hostlib.dsl.rf import min_modem_samples

    n = min_modem_samples(sps)
    assert n == modem.min_modem_samples(sps)
    f = native.rf_modem_frame("qpsk", sps, 0.35, 0.25, 1)
    x = f["samples"][np.arange(n) % len(f["samples"])]
    assert native.analyze_modulation(x, FS_HZ, "qpsk", sps, 0.35, 0.25, 1)["bit_errors"] == 0
    with pytest.raises(ValueError, match="fewer samples than two frames"):
        native.analyze_modulation(x[:-1], FS_HZ, "qpsk", sps, 0.35, 0.25, 1)


SIGNAL_CASE = """
name: modem {name}
device: dut
direction: rx
master_clock: 200 MHz
decimation: 200
transport: {{kind: udp, frame_bytes: 8000}}
duration: 300 ms
signal: {signal}
"""


@requires_native
@pytest.mark.parametrize("signal, where, says", [
    ("{kind: qpsk, symbol_rate: 300 kHz}", "signal.symbol_rate", "an integer from 2 to 64"),
    ("{kind: 16qam, symbol_rate: 1 MHz}", "signal.symbol_rate", "1 samples per symbol"),
    ("{kind: 64qam}", "signal", "needs symbol_rate"),
    ("{kind: qpsk, symbol_rate: 250 kHz, capture: 8000}", "signal.capture", "at least 8256"),
    ("{kind: qpsk, symbol_rate: 250 kHz, frequency: 1 kHz}", "signal.frequency", "belongs to kind tone"),
    ("{kind: tone, frequency: 1 kHz, rolloff: 0.3}", "signal.rolloff", "belongs to a modulation"),
    # 1 MS/s: the carrier search reaches 8 wraps of 4032 Hz at sps 4 (252 Hz at sps 64), 0.9 of it allowed
    ("{kind: qpsk, symbol_rate: 250 kHz}\nchannel: {cfo: -30 kHz}", "channel.cfo", "at most 29032 Hz"),
    ("{kind: qpsk, symbol_rate: 15625 Hz}\nchannel: {cfo: 1.9 kHz}", "channel.cfo", "at most 1815 Hz"),
])
def test_dsl_refuses_a_bad_modulation_at_its_field(signal, where, says, write_case):
    with pytest.raises(ConfigError) as e:
        write_case(SIGNAL_CASE.format(name="bad", signal=signal))
    text = str(e.value)
    assert says in text and where in text, text


IMPAIRED_16QAM = """
name: modem 16qam e2e
device: dut
direction: rx
master_clock: 200 MHz
decimation: 200
transport: {kind: udp, frame_bytes: 8000}
duration: 300 ms
signal: {kind: 16qam, symbol_rate: 250 kHz, payload_seed: 4}
channel:
  gain: -1 dB
  cfo: 2.2 kHz
  iq_imbalance: {gain: 0.2 dB, phase: 0.5 deg}
  snr: 25 dB
  seed: 12
thresholds:
  evm_rms: "<= 4 %"
  bit_errors: "== 0"
"""


@requires_native
def test_modulated_case_end_to_end_through_the_simulator(write_case, sim_rig):
    """The simulator generates 16QAM through the channel at stream rate; the host's capture
    goes through the native analyzer: EVM within 0.3 percentage points of the truth, the
    CFO found, no bit errors, the constellation in the evidence record."""
    [case] = write_case(IMPAIRED_16QAM)
    result = run_case(case, sim_rig, run_id="modem")
    m = result.metrics
    assert result.verdict == Verdict.PASS, (result.message, m)
    assert abs(m["evm_rms_pct"] - m["injected_evm_rms_pct"]) <= 0.3, m
    assert abs(m["freq_error_hz"] - 2200.0) <= 5.0 and m["injected_freq_error_hz"] == 2200.0
    assert m["freq_search_hz"] == pytest.approx(8 * 1e6 / (62 * 4))   # the carrier search's reach at sps 4
    assert m["bit_errors"] == 0 and m["ber"] == 0 and m["symbols"] >= 14000 and m["rf_capture_restarts"] == 0
    record = json.loads(json.dumps(result.to_dict()))
    points, ideal = record["rf_constellation"], record["rf_constellation_ideal"]
    assert len(points) == 2048 and len(ideal) == 16
    assert np.mean(np.sum(np.array(ideal) ** 2, axis=1)) == pytest.approx(1.0)
    # each recovered point near an ideal one: the error vector is a few % of unit RMS
    dist = np.min(np.abs(np.array(points)[:, None, :] - np.array(ideal)[None, :, :]).sum(axis=2), axis=1)
    assert np.max(dist) < 0.3


SCO_DELAY_QPSK = """
name: modem qpsk sco delay
device: dut
direction: rx
master_clock: 200 MHz
decimation: 200
transport: {kind: udp, frame_bytes: 8000}
duration: 300 ms
signal: {kind: qpsk, symbol_rate: 250 kHz, payload_seed: 6}
channel: {sco: 20 ppm, delay: 0.37 samples, cfo: -1.5 kHz, snr: 25 dB, seed: 14}
thresholds:
  evm_rms: "<= 4 %"
  bit_errors: "== 0"
"""


@requires_native
def test_a_modulated_case_under_sco_and_delay_measures_them_beside_their_truth(write_case, sim_rig):
    """Through the simulator with the timing stage on: the capture starts somewhere in the
    stream (start_tick), the analyzer finds the delay and the SCO the channel injected and
    the EVM is the AWGN's (the truth states it under timing)."""
    [case] = write_case(SCO_DELAY_QPSK)
    result = run_case(case, sim_rig, run_id="modem-timing")
    m = result.metrics
    assert result.verdict == Verdict.PASS, (result.message, m)
    assert (m["injected_sco_ppm"], m["injected_delay_samples"]) == (20.0, 0.37)
    assert abs(m["evm_rms_pct"] - m["injected_evm_rms_pct"]) <= 0.3, m
    assert abs(m["timing_offset_samples"] - m["injected_delay_samples"]) <= 0.02, m
    assert abs(m["sco_ppm"] - m["injected_sco_ppm"]) <= 1.0, m
