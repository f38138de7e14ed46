"""The native core's RF half against the reference: the analyzer on the shared captures
(docs/vectors/rf, which the C++ gtests read too) and on fresh captures, the channel model
sample by sample without noise and statistically with it."""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from hostlib.reference import gen_rf_vectors as gen
from hostlib.reference.rf import Channel, analyze_tone, tone

native = pytest.importorskip("hostlib._native", reason="build the native core first (make build)")

RF_DIR = Path(__file__).resolve().parents[2] / "docs" / "vectors" / "rf"
INDEX = json.loads((RF_DIR / "index.json").read_text())
TOL = INDEX["tolerance"]
DB_FIELDS = ("power_dbfs", "snr_db", "sinad_db", "sfdr_dbc", "thd_dbc", "image_dbc", "dc_dbfs", "noise_dbfs")
FS_HZ = 1e6


def _ids(v: dict) -> str:
    return str(v["name"])


# The fine frequency search stops within 1e-7 bins of its maximum (reference.rf, golden
# section): the same code on another CPU or numpy sums in another order, and its
# comparisons near the flat top can end anywhere in that interval.
SEARCH_BINS = 1e-7


def assert_figures_agree(got: dict, want: dict, n: int, fs_hz: float, scale: float = 1.0,
                         freq_bins: float | None = None) -> None:
    """got within the vectors' tolerances (times scale; the frequency within freq_bins when given) of want;
    None/inf both mean 'no such component'."""
    bin_hz = fs_hz / n
    freq_bound = TOL["freq_bins"] * scale if freq_bins is None else freq_bins
    assert abs(got["freq_hz"] - want["freq_hz"]) / bin_hz <= freq_bound, (got, want)
    for key in DB_FIELDS:
        g, w = got[key], want[key]
        if w is None or not math.isfinite(w):
            assert g is None or not math.isfinite(g), (key, g, w)
        else:
            assert abs(g - w) <= TOL["db"] * scale, (key, g, w)
    assert abs(got["iq_gain_db"] - want["iq_gain_db"]) <= TOL["iq_gain_db"] * scale
    assert abs(got["iq_phase_deg"] - want["iq_phase_deg"]) <= TOL["iq_phase_deg"] * scale
    assert got["n"] == want["n"]


def test_the_index_is_what_the_generator_writes() -> None:
    assert [v["name"] for v in INDEX["vectors"]] == [c.name for c in gen.CAPTURES]
    assert INDEX["tolerance"] == gen.TOLERANCE
    for c, v in zip(gen.CAPTURES, INDEX["vectors"], strict=True):
        assert {k: v[k] for k in gen.metadata(c)} == json.loads(json.dumps(gen.metadata(c)))
        stored = gen.read_capture(RF_DIR / v["file"], v["datatype"])
        again = c.channel.apply(c.signal(), FS_HZ)
        lsb = 1 / gen.CI16_FULL_SCALE if c.datatype == "ci16_le" else 1e-6
        assert np.max(np.abs(stored - again)) <= lsb, c.name     # the stored noise is the seed's


@pytest.mark.parametrize("vec", INDEX["vectors"], ids=_ids)
@pytest.mark.parametrize("impl", ["reference", "native"])
def test_analyzer_reproduces_the_vectors_figures(vec: dict, impl: str) -> None:
    x = gen.read_capture(RF_DIR / vec["file"], vec["datatype"])
    if impl == "reference":
        got = gen.figures(analyze_tone(x, vec["fs_hz"]))
        # the same code, other numpy or CPU: the figures to rounding, the frequency to its search's stop
        assert_figures_agree(got, vec["expected"], vec["n"], vec["fs_hz"], scale=1e-3, freq_bins=2 * SEARCH_BINS)
    else:
        assert_figures_agree(native.analyze_tone(x, vec["fs_hz"]), vec["expected"], vec["n"], vec["fs_hz"])


@pytest.mark.parametrize("seed", range(6))
def test_native_and_reference_agree_on_fresh_random_captures(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.choice([4096, 8192, 1 << 15]))
    freq_hz = float(rng.uniform(0.02, 0.45) * FS_HZ * rng.choice([-1, 1]))
    amplitude = float(rng.uniform(0.1, 0.9))
    channel = Channel(gain_db=float(rng.uniform(-6, 0)), snr_db=float(rng.uniform(10, 70)),
                      iq_gain_db=float(rng.uniform(-0.5, 0.5)), iq_phase_deg=float(rng.uniform(-3, 3)),
                      dc_offset=complex(*rng.uniform(-0.01, 0.01, 2)), c3=float(rng.uniform(-0.05, 0.05)),
                      seed=seed)
    x = channel.apply(tone(n, freq_hz, FS_HZ, amplitude, float(rng.uniform(0, 6.28))), FS_HZ)
    want = gen.figures(analyze_tone(x, FS_HZ))
    assert_figures_agree(native.analyze_tone(x, FS_HZ), want, n, FS_HZ)


def _native_channel(c: Channel) -> object:
    return native.RfChannel(**dataclasses.asdict(c))


def test_native_channel_without_noise_is_the_reference_sample_by_sample() -> None:
    c = Channel(gain_db=-2.0, c3=-0.02, iq_gain_db=0.4, iq_phase_deg=-1.5, cfo_hz=321.0, dc_offset=0.003 - 0.001j)
    x = tone(1 << 14, FS_HZ * 0.2, FS_HZ, 0.6, 0.4)
    assert np.max(np.abs(_native_channel(c).apply(x, FS_HZ) - c.apply(x, FS_HZ))) <= 1e-12
    assert np.max(np.abs(native.rf_tone(1 << 14, FS_HZ * 0.2, FS_HZ, 0.6, 0.4) - x)) <= 1e-9


def test_native_channel_truth_is_the_references() -> None:
    c = Channel(gain_db=-1.0, c3=-0.03, iq_gain_db=0.2, iq_phase_deg=1.0, cfo_hz=50.0, dc_offset=0.01j, snr_db=33.0)
    assert _native_channel(c).tone_truth(1e5, 0.5) == pytest.approx(dataclasses.asdict(c.tone_truth(1e5, 0.5)),
                                                                     rel=1e-12)
    assert _native_channel(Channel()).tone_truth(1e5, 0.5)["image_dbc"] is None


@pytest.mark.parametrize("snr_db", [10.0, 40.0])
def test_native_channel_noise_gives_the_asked_snr_to_both_analyzers(snr_db: float) -> None:
    n, freq_hz = 1 << 16, FS_HZ * 0.1234567
    x = tone(n, freq_hz, FS_HZ, 0.5)
    for seed in range(4):
        y = _native_channel(Channel(snr_db=snr_db, seed=seed)).apply(x, FS_HZ)
        assert abs(analyze_tone(y, FS_HZ).snr_db - snr_db) <= 0.3
        assert abs(native.analyze_tone(y, FS_HZ)["snr_db"] - snr_db) <= 0.3
    same = _native_channel(Channel(snr_db=snr_db, seed=7))
    assert np.array_equal(same.apply(x, FS_HZ), same.apply(x, FS_HZ))


def test_native_analyzer_refuses_what_it_cannot_analyze() -> None:
    with pytest.raises(ValueError, match="fewer than"):
        native.analyze_tone(np.ones(10, dtype=complex), FS_HZ)
    with pytest.raises(ValueError, match="1-D"):
        native.analyze_tone(np.ones((2, 100), dtype=complex), FS_HZ)


def test_native_figures_are_the_reference_dataclasses_fields() -> None:
    from hostlib.reference.rf import ToneAnalysis, ToneTruth

    x = tone(4096, FS_HZ * 0.1, FS_HZ)
    assert ToneAnalysis(**native.analyze_tone(x, FS_HZ)).n == 4096
    assert ToneTruth(**native.RfChannel().tone_truth(1e5, 0.5)).freq_hz == 1e5


def test_native_and_reference_agree_with_other_tones_set_aside() -> None:
    """A multitone's other tones set aside from the noise (analyze_tone's aside_hz): both
    implementations take the same bins out, and the noise no longer holds those tones."""
    [vec] = [v for v in INDEX["vectors"] if v["name"] == "multitone_clean_ci16"]
    x = gen.read_capture(RF_DIR / vec["file"], vec["datatype"])
    others = [f for f, _ in vec["signal"]["tones"][1:]]
    ref = dataclasses.asdict(analyze_tone(x, FS_HZ, others))
    got = native.analyze_tone(x, FS_HZ, others)
    assert_figures_agree(got, ref, len(x), FS_HZ)
    assert ref["snr_db"] > analyze_tone(x, FS_HZ).snr_db + 40   # the -20 dBc tone was the "noise"
    assert ref["sfdr_dbc"] == pytest.approx(20.0, abs=0.01)     # and stays the largest spur


def test_the_analyzers_segments_are_the_references() -> None:
    from hostlib.reference import rf

    assert (native.RF_TONE_SEGMENT_SAMPLES, native.RF_COARSE_SEGMENTS, native.RF_MEDIUM_BLOCK) == \
        (rf.TONE_SEGMENT_SAMPLES, rf.COARSE_SEGMENTS, rf.MEDIUM_BLOCK)
    assert rf.segment_starts(3 * 65536 + 4321, 65536) == [0, 45131, 90262, 135393]


@pytest.mark.parametrize("seed", range(3))
def test_native_and_reference_agree_on_captures_longer_than_a_segment(seed: int) -> None:
    """Welch-averaged segments, the medium search and the whole capture's fit: the same
    figures from both, with a second tone set aside as a multitone's would be."""
    rng = np.random.default_rng(2000 + seed)
    n = [65537, 3 * 65536 + 4321, 9 * 65536 + 11][seed]
    freq_hz = float(rng.uniform(0.02, 0.45) * FS_HZ * rng.choice([-1, 1]))
    other_hz = float(rng.uniform(-0.45, 0.45) * FS_HZ)
    amplitude = float(rng.uniform(0.1, 0.9))
    channel = Channel(gain_db=float(rng.uniform(-6, 0)), snr_db=float(rng.uniform(10, 70)),
                      iq_gain_db=float(rng.uniform(-0.5, 0.5)), iq_phase_deg=float(rng.uniform(-3, 3)),
                      dc_offset=complex(*rng.uniform(-0.01, 0.01, 2)), c3=float(rng.uniform(-0.05, 0.05)),
                      cfo_hz=float(rng.uniform(-500, 500)), seed=seed)
    signal = tone(n, freq_hz, FS_HZ, amplitude, float(rng.uniform(0, 6.28))) + tone(n, other_hz, FS_HZ, amplitude / 10)
    x = channel.apply(signal, FS_HZ)
    want = gen.figures(analyze_tone(x, FS_HZ, [other_hz]))
    assert_figures_agree(native.analyze_tone(x, FS_HZ, [other_hz]), want, n, FS_HZ)
    assert abs(want["freq_hz"] - channel.tone_truth(freq_hz, amplitude).freq_hz) < FS_HZ / n   # the right bin
