"""The channel's timing (sample-clock offset, fractional delay) and phase-noise stages:
the reference against the core (sample for sample where deterministic, statistically for
the seeded walk), the DSL's fields with their units, bounds and file:line errors, and an
RF case through the simulator measuring the SCO's frequency shift beside its truth
(docs/rf.md "Timing" and "Phase noise")."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from hostlib.engine import run_case
from hostlib.reference.rf import Channel, crb_freq_hz, multitone, phase_noise_evm2, timing, tone
from hostlib.results.record import Verdict
from hostlib.transports.config import RfChannel, Signal

from .conftest import requires_native
from .test_rf_cases import BASE

FS_HZ = 1e6


def _native():
    return pytest.importorskip("hostlib._native", reason="build the native core first (make build)")


def test_the_reference_timing_reads_a_tone_at_the_fractional_instant():
    n, f, ppm, delay = 4096, 0.2 * FS_HZ, 25.0, 0.37
    y = timing(tone(n, f, FS_HZ, 0.5), ppm, delay)
    t = np.arange(n) / (1 + ppm * 1e-6) - delay
    want = 0.5 * np.exp(2j * np.pi * f / FS_HZ * t)
    mid = slice(64, n - 64)    # away from the block's edges (zero outside it)
    err_db = 10 * np.log10(np.sum(np.abs(y[mid] - want[mid]) ** 2) / np.sum(np.abs(want[mid]) ** 2))
    assert err_db < -80, err_db


@pytest.mark.parametrize("ch", [
    Channel(sco_ppm=50.0, delay_samples=2.37, gain_db=-2.0),
    Channel(sco_ppm=-300.0, delay_samples=0.5, cfo_hz=1234.5, c3=-0.03, iq_gain_db=0.3, iq_phase_deg=1.0,
            dc_offset=0.01 - 0.002j),
    Channel(delay_samples=17.999),
])
def test_the_core_timing_stage_is_the_references_sample_for_sample(ch):
    native = _native()
    x = multitone(6000, [(0.1234567 * FS_HZ, 0.5), (-0.31 * FS_HZ, 0.1)], FS_HZ)
    want = ch.apply(x, FS_HZ)
    got = native.RfChannel(**dataclasses.asdict(ch)).apply(x, FS_HZ)
    assert np.max(np.abs(got - want)) <= 1e-12


@pytest.mark.parametrize("impl", ["reference", "native"])
def test_phase_noise_is_a_wiener_phase_of_the_asked_linewidth(impl):
    """Increments of variance 2 pi lw / fs; field correlation exp(-pi lw k / fs) at lag k."""
    lw, n = 300.0, 1 << 16
    step2 = 2 * math.pi * lw / FS_HZ
    for seed in range(5):
        ch = Channel(phase_noise_hz=lw, seed=seed)
        x = np.full(n, 0.5 + 0j)
        y = ch.apply(x, FS_HZ) if impl == "reference" else _native().RfChannel(**dataclasses.asdict(ch)).apply(x, FS_HZ)
        assert np.allclose(np.abs(y), 0.5, atol=1e-12)
        var = np.mean(np.angle(y[1:] / y[:-1]) ** 2)
        assert abs(var / step2 - 1) < 5 * math.sqrt(2 / n), (seed, var / step2)
        lag = 100
        r = np.mean(y[lag:] * np.conj(y[:-lag])) / 0.25
        assert abs(r.real - math.exp(-math.pi * lw * lag / FS_HZ)) < 0.03


def test_the_phase_noise_truth_is_the_detrended_walks_mean_square():
    # v = (2 pi lw / fs) T / 15: 0.1 Hz over 2^16 samples at 1 MS/s is 2.74e-3 rad^2.
    assert phase_noise_evm2(0.1, FS_HZ, 1 << 16) == pytest.approx(2 * (1 - math.exp(-2.745e-3 / 2)), rel=1e-3)
    assert phase_noise_evm2(0.0, FS_HZ, 1 << 16) == 0.0


def test_the_tone_truth_under_sco_reads_f_over_one_plus_sco():
    ch = Channel(sco_ppm=20.0, cfo_hz=100.0, snr_db=30.0)
    t = ch.tone_truth(100e3, 0.5)
    assert t.freq_hz == pytest.approx(100e3 / (1 + 20e-6) + 100.0) and t.freq_hz - 100e3 - 100 < 0
    assert t.snr_db == 30.0 and Channel(phase_noise_hz=1.0, snr_db=30.0).tone_truth(1e5, 0.5).snr_db is None


def test_the_tone_truth_under_phase_noise_is_the_cores_and_falls_with_the_linewidth():
    # 1 Hz at 1 MS/s over 2^16: the skirt beyond +-5.5 bins is -24.2 dB of the tone, the coherent share -0.12 dB.
    snrs = []
    for lw in (0.3, 1.0, 3.0):
        c = Channel(phase_noise_hz=lw, snr_db=30.0)
        t = c.tone_truth(1e5, 0.5, FS_HZ, 1 << 16)
        assert t.snr_db == pytest.approx(_native().RfChannel(phase_noise_hz=lw, snr_db=30.0).tone_truth(
            1e5, 0.5, FS_HZ, 1 << 16)["snr_db"], abs=1e-9)
        snrs.append(t.snr_db)
    assert snrs[0] < 30.0 and snrs[1] == pytest.approx(23.07, abs=0.02) and snrs[2] < snrs[1]


def test_the_stream_config_carries_the_new_fields_and_reads_older_ones():
    c = RfChannel(sco_ppm=2.5, delay_samples=0.37, phase_noise_hz=12.0)
    s = Signal(tones=(), channel=c, capture_samples=65536)
    assert Signal.from_json(s.to_json()).channel == c
    old = s.to_json()
    for k in ("sco_ppm", "delay_samples", "phase_noise_hz"):
        del old["channel"][k]    # type: ignore[index, misc]
    assert Signal.from_json(old).channel == RfChannel()


def test_the_dsl_reads_sco_delay_and_phase_noise_with_units(write_case):
    [case] = write_case(BASE + "signal: {kind: tone, frequency: 100 kHz}\n"
                        "channel: {sco: 2 ppm, delay: 0.37 samples, phase_noise: {linewidth: 5 Hz}}\n")
    c = case.signal.channel
    assert (c.sco_ppm, c.delay_samples, c.phase_noise_hz) == (2.0, 0.37, 5.0)


def test_phase_noise_given_as_a_level_at_an_offset_is_the_walk_whose_density_passes_there(write_case):
    """A datasheet's -80 dBc/Hz at 10 kHz: the Wiener phase with L(f) = linewidth / (2 pi f^2)
    through that point, linewidth = 2 pi (10 kHz)^2 10^-8 = 6.28 Hz."""
    [case] = write_case(BASE + "signal: {kind: tone, frequency: 100 kHz}\n"
                        "channel: {phase_noise: {level: -80 dBc/Hz, offset: 10 kHz}}\n")
    lw = case.signal.channel.phase_noise_hz
    assert lw == pytest.approx(2 * math.pi * 1e8 * 1e-8)
    assert 10 * math.log10(lw / (2 * math.pi * 10e3 ** 2)) == pytest.approx(-80.0)
    # 20 dB a decade: the same walk from a point a decade further out.
    [far] = write_case(BASE + "signal: {kind: tone, frequency: 100 kHz}\n"
                       "channel: {phase_noise: {level: -100 dBc/Hz, offset: 100 kHz}}\n")
    assert far.signal.channel.phase_noise_hz == pytest.approx(lw)


@pytest.mark.parametrize("tail, line, field, says", [
    ("channel: {sco: 2}\n", 9, "channel.sco", "ppm"),
    ("channel: {sco: 2 Hz}\n", 9, "channel.sco", "ppm"),
    ("channel: {sco: 2000 ppm}\n", 9, "channel.sco", "1000"),
    ("channel: {delay: 0.37}\n", 9, "channel.delay", "samples"),
    ("channel: {delay: -1 samples}\n", 9, "channel.delay", "at least 0"),
    ("channel:\n  phase_noise: {linewidth: 20 kHz}\n", 10, "channel.phase_noise.linewidth", "0.01 of"),
    ("channel:\n  phase_noise: {linewidth: 3 dB}\n", 10, "channel.phase_noise.linewidth", "Hz"),
    ("channel:\n  phase_noise: {level: -80}\n", 10, "channel.phase_noise.level", "dBc/Hz"),
    ("channel:\n  phase_noise: {level: -80 dBc/Hz}\n", 10, "channel.phase_noise", "offset"),
    ("channel:\n  phase_noise: {offset: 10 kHz}\n", 10, "channel.phase_noise", "level"),
    ("channel:\n  phase_noise: {linewidth: 5 Hz, level: -80 dBc/Hz}\n", 10, "channel.phase_noise.level", "not both"),
    ("channel:\n  phase_noise: {level: -20 dBc/Hz, offset: 100 kHz}\n", 10, "channel.phase_noise.level", "0.01 of"),
    ("channel:\n  phase_noise: {level: -80 dBc/Hz, offset: 0 Hz}\n", 10, "channel.phase_noise.offset", "greater"),
])
def test_a_wrong_timing_or_phase_noise_field_is_a_file_line_error(tmp_path, tail, line, field, says):
    from hostlib.dsl import validate_paths

    path = tmp_path / "rf.yaml"
    path.write_text(BASE.lstrip("\n") + "signal: {kind: tone, frequency: 1 kHz}\n" + tail)
    cases, issues = validate_paths([path])
    assert cases == []
    assert [(i.line, i.field) for i in issues][:1] == [(line, field)], issues
    assert says in str(issues), issues


@requires_native
def test_a_modulated_case_refuses_an_sco_its_analyzer_cannot_follow(tmp_path):
    from hostlib.dsl import validate_paths

    path = tmp_path / "rf.yaml"
    path.write_text(BASE.lstrip("\n") + "signal: {kind: qpsk, symbol_rate: 250 kHz}\nchannel: {sco: 500 ppm}\n")
    cases, issues = validate_paths([path])
    assert cases == [] and [(i.line, i.field) for i in issues][:1] == [(9, "channel.sco")], issues
    assert "at most 200 ppm" in str(issues), issues
    path.write_text(BASE.lstrip("\n") + "signal: {kind: qpsk, symbol_rate: 250 kHz}\nchannel: {sco: -150 ppm}\n")
    assert validate_paths([path])[1] == []


SCO_CASE = BASE + """signal: {kind: tone, frequency: 200 kHz, amplitude: -6 dBFS}
channel: {sco: 25 ppm, delay: 0.37 samples, cfo: 300 Hz, snr: 30 dB, seed: %d}
"""


@requires_native
@pytest.mark.parametrize("seed", [3, 4])
def test_an_sco_case_measures_the_shifted_tone_beside_its_truth(seed, write_case, sim_rig):
    """Through the simulator: the tone read at 200 kHz / (1 + 25 ppm) + 300 Hz (5 Hz low),
    found within 4 x the Cramer-Rao bound of one estimate; the injected values recorded."""
    [case] = write_case(SCO_CASE % seed)
    result = run_case(case, sim_rig, run_id="rf")
    m = result.metrics
    assert result.verdict == Verdict.PASS, (result.message, m)
    assert m["injected_freq_error_hz"] == pytest.approx(200e3 / (1 + 25e-6) - 200e3 + 300)
    assert (m["injected_sco_ppm"], m["injected_delay_samples"]) == (25.0, 0.37)
    crb = crb_freq_hz(30.0, 65536, case.rate_sps)
    assert abs(m["freq_error_hz"] - m["injected_freq_error_hz"]) <= 4 * crb, (m["freq_error_hz"], crb)
    assert abs(m["snr_db"] - m["injected_snr_db"]) <= 0.3, m


def test_sco_delay_and_the_linewidth_are_sweepable(write_case):
    cases = write_case(BASE + "signal: {kind: tone, frequency: 100 kHz}\n"
                       "channel: {sco: 1 ppm, phase_noise: {linewidth: 1 Hz}}\n"
                       "sweep:\n  channel.sco: [1 ppm, -5 ppm]\n  channel.delay: [0 samples, 0.5 samples]\n"
                       "  channel.phase_noise.linewidth: [2 Hz]\n")
    got = sorted((c.signal.channel.sco_ppm, c.signal.channel.delay_samples, c.signal.channel.phase_noise_hz)
                 for c in cases)
    assert got == [(-5.0, 0.0, 2.0), (-5.0, 0.5, 2.0), (1.0, 0.0, 2.0), (1.0, 0.5, 2.0)]


@requires_native
def test_the_modem_truth_adds_the_phase_noise_and_leaves_out_what_it_cannot_state():
    from hostlib.engine.rf import injected_modem_truth
    from hostlib.transports.config import RfModulation

    mod = RfModulation(scheme="qpsk", samples_per_symbol=4, rolloff=0.35, amplitude=0.25, payload_seed=5)

    def truth(**channel: float) -> dict[str, float]:
        return injected_modem_truth(Signal(tones=(), modulation=mod, channel=RfChannel(snr_db=25.0, **channel),
                                           capture_samples=65536), FS_HZ, 65536)

    awgn = truth()["injected_evm_rms_pct"]
    with_pn = truth(phase_noise_hz=0.05, delay_samples=3.0)
    assert with_pn["injected_evm_rms_pct"] == pytest.approx(
        100 * math.sqrt((awgn / 100) ** 2 + phase_noise_evm2(0.05, FS_HZ, 65536)))
    assert (with_pn["injected_phase_noise_hz"], with_pn["injected_delay_samples"]) == (0.05, 3.0)
    for timing in ({"sco_ppm": 2.0}, {"delay_samples": 0.37}):   # the analyzer follows them: the AWGN's EVM
        t = truth(**timing)
        assert t["injected_evm_rms_pct"] == awgn and t["injected_freq_error_hz"] == 0.0
        assert (t["injected_sco_ppm"], t["injected_delay_samples"]) == (timing.get("sco_ppm", 0.0),
                                                                        timing.get("delay_samples", 0.0))
    for off in ({"c3": 0.1}, {"dc_i": 0.01}):
        t = truth(**off)
        assert "injected_evm_rms_pct" not in t and t["injected_freq_error_hz"] == 0.0
