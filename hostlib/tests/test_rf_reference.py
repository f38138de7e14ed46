"""The RF reference's estimators against the truth its channel injected, over many seeds
(the accuracy docs/rf.md states)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hostlib.reference.rf import Channel, analyze_tone, crb_freq_hz, quantize, tone

FS_HZ = 1e6
N = 1 << 16                       # the capture size the accuracy is stated for
FREQ_HZ = FS_HZ * 0.1234567       # off any bin
AMPLITUDE = 0.5                   # -6 dBFS


@pytest.mark.parametrize("snr_db", [10, 20, 30, 40])
def test_snr_within_0p3_db_of_the_injected(snr_db: float) -> None:
    x = tone(N, FREQ_HZ, FS_HZ, AMPLITUDE)
    errors = [analyze_tone(Channel(snr_db=snr_db, seed=seed).apply(x, FS_HZ), FS_HZ).snr_db - snr_db
              for seed in range(8)]
    assert max(abs(e) for e in errors) <= 0.3, errors


def test_frequency_error_within_twice_the_cramer_rao_bound() -> None:
    n, snr_db, seeds = 4096, 20.0, 200
    cfo_hz = 123.4
    x = tone(n, FREQ_HZ, FS_HZ, AMPLITUDE)
    truth = Channel(cfo_hz=cfo_hz).tone_truth(FREQ_HZ, AMPLITUDE).freq_hz
    errors = np.array([analyze_tone(Channel(snr_db=snr_db, cfo_hz=cfo_hz, seed=s).apply(x, FS_HZ), FS_HZ).freq_hz
                       - truth for s in range(seeds)])
    rms = float(np.sqrt(np.mean(errors ** 2)))
    assert rms <= 2 * crb_freq_hz(snr_db, n, FS_HZ), (rms, crb_freq_hz(snr_db, n, FS_HZ))
    assert abs(float(np.mean(errors))) <= 3 * crb_freq_hz(snr_db, n, FS_HZ) / math.sqrt(seeds) + 1e-9


@pytest.mark.parametrize("spur_dbc", [-40.0, -60.0])
def test_sfdr_within_1_db_of_the_injected_nonlinearity(spur_dbc: float) -> None:
    # per-rail cubic: the spur at -3f is c3·a³/4 against a·(1 + 3·c3·a²/4)
    c3 = -10 ** (spur_dbc / 20) * 4 / AMPLITUDE ** 2 / 1.0   # first order; the truth is exact
    channel = Channel(c3=c3, snr_db=80.0, seed=3)
    truth = channel.tone_truth(FREQ_HZ, AMPLITUDE)
    got = analyze_tone(channel.apply(tone(N, FREQ_HZ, FS_HZ, AMPLITUDE), FS_HZ), FS_HZ)
    assert truth.spur_dbc is not None
    assert abs(got.sfdr_dbc - (-truth.spur_dbc)) <= 1.0, (got.sfdr_dbc, truth.spur_dbc)
    assert abs(got.thd_dbc - truth.spur_dbc) <= 1.0, (got.thd_dbc, truth.spur_dbc)   # -3f is the 3rd harmonic


def test_image_and_iq_imbalance_within_1_db_of_the_injected() -> None:
    channel = Channel(iq_gain_db=0.5, iq_phase_deg=2.0, snr_db=60.0, seed=5)
    truth = channel.tone_truth(FREQ_HZ, AMPLITUDE)
    got = analyze_tone(channel.apply(tone(N, FREQ_HZ, FS_HZ, AMPLITUDE), FS_HZ), FS_HZ)
    assert truth.image_dbc is not None
    assert abs(got.image_dbc - truth.image_dbc) <= 1.0, (got.image_dbc, truth.image_dbc)
    assert abs(got.sfdr_dbc + truth.image_dbc) <= 1.0       # the image is the largest other component
    assert abs(got.iq_gain_db - 0.5) <= 0.02 and abs(got.iq_phase_deg - 2.0) <= 0.1, got


def test_dc_offset_and_power() -> None:
    channel = Channel(dc_offset=0.01 + 0.0j, gain_db=-3.0, snr_db=50.0, seed=1)
    truth = channel.tone_truth(FREQ_HZ, AMPLITUDE)
    got = analyze_tone(channel.apply(tone(N, FREQ_HZ, FS_HZ, AMPLITUDE), FS_HZ), FS_HZ)
    assert truth.dc_dbfs is not None
    assert abs(got.dc_dbfs - truth.dc_dbfs) <= 0.1 and abs(got.power_dbfs - truth.power_dbfs) <= 0.05, got


@pytest.mark.parametrize("bits", [16, 8])
def test_a_clean_channel_is_limited_by_the_sample_formats_quantisation(bits: int) -> None:
    """Round-to-nearest on each rail adds Δ²/12 per rail (Δ = 1/(2^(bits-1)-1)): the
    SNR of a tone of amplitude A is A² / (Δ²/6)."""
    delta = 1 / (2 ** (bits - 1) - 1)
    limit_db = 10 * math.log10(AMPLITUDE ** 2 / (delta ** 2 / 6))
    got = analyze_tone(quantize(tone(N, FREQ_HZ, FS_HZ, AMPLITUDE), bits), FS_HZ)
    assert abs(got.snr_db - limit_db) <= 0.5, (got.snr_db, limit_db)


def test_every_impairment_at_once_keeps_its_truth() -> None:
    """The CFO is the LO's, before the baseband's cubic and IQ imbalance: their spur and
    image follow the offset tone, where the analyzer looks for them."""
    channel = Channel(gain_db=-1.0, cfo_hz=-500.0, c3=-0.02, iq_gain_db=0.3, iq_phase_deg=1.5,
                      dc_offset=0.003 - 0.002j, snr_db=50.0, seed=7)
    truth = channel.tone_truth(FREQ_HZ, AMPLITUDE)
    got = analyze_tone(channel.apply(tone(N, FREQ_HZ, FS_HZ, AMPLITUDE), FS_HZ), FS_HZ)
    assert truth.spur_dbc is not None and truth.image_dbc is not None and truth.dc_dbfs is not None
    assert abs(got.snr_db - 50.0) <= 0.3, got
    assert abs(got.freq_hz - truth.freq_hz) <= 0.01, got
    assert abs(got.thd_dbc - truth.spur_dbc) <= 1.0 and abs(got.image_dbc - truth.image_dbc) <= 1.0, (got, truth)
    assert abs(got.dc_dbfs - truth.dc_dbfs) <= 0.1, got


@pytest.mark.parametrize("snr_db", [10, 40])
def test_a_capture_longer_than_a_segment_keeps_the_snr_and_frequency(snr_db: float) -> None:
    """Welch-averaged segments for the spectra, the whole capture for the frequency and fit."""
    n = 3 * N + 4321
    x = tone(n, FREQ_HZ, FS_HZ, AMPLITUDE)
    for seed in range(2):
        got = analyze_tone(Channel(snr_db=snr_db, seed=seed).apply(x, FS_HZ), FS_HZ)
        assert abs(got.snr_db - snr_db) <= 0.3, (seed, got.snr_db)
        assert abs(got.freq_hz - FREQ_HZ) <= 3 * crb_freq_hz(snr_db, n, FS_HZ), (seed, got.freq_hz - FREQ_HZ)
