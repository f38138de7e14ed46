"""The RF reference: tones, a seeded channel with known impairments, and a tone analyzer
whose estimates are checked against the injected truth (docs/rf.md).

The native core's analyzer and channel model are judged against this one through the
shared vectors; it is written for clarity, not speed (numpy, one capture at a time).

Conventions (complex baseband, full scale 1.0: an sc16 sample of 32767 is 1.0):
- a tone is A·exp(j(2π f n / fs + θ)); its power is A² (0 dBFS at A = 1);
- powers in dB are of the complex signal over the whole band fs;
- the channel applies, in this order: the receiver's sampling instants (sample-clock
  offset and fractional delay, `timing`), the LO's phase noise (a Wiener phase), gain,
  carrier frequency offset (the LO's, before
  the baseband's impairments), per-rail third-order nonlinearity (I + c3·I³,
  Q + c3·Q³), IQ imbalance (Q rail gain g and skew φ), DC offset, then complex white
  Gaussian noise at the SNR asked for, relative to
  the power of the signal that reaches the noise (so `snr_db` is the SNR the analyzer
  should find).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Channel", "ToneAnalysis", "ToneTruth", "analyze_tone", "crb_freq_hz", "multitone", "phase_noise_evm2",
           "phase_noise_snr_db", "quantize", "timing", "timing_taps", "tone"]

# Bins either side of a tone's (or DC's) peak that hold its main lobe in the
# 4-term Blackman-Harris window (main lobe ±4 bins; one more for an off-bin tone).
LOBE_BINS = 5
HARMONICS = (2, 3, 4, 5)   # harmonics (±k·f, folded into the band) that THD and SNR set aside
# A capture longer than this is read as Welch-averaged segments of this many samples (the
# coarse peak and the residual's spectrum); the frequency and the sine fit stay the whole
# capture's. At most this long, the capture is one segment: one transform of all of it.
TONE_SEGMENT_SAMPLES = 1 << 16
COARSE_SEGMENTS = 8                         # the coarse peak's segments, spread over the capture
MEDIUM_BLOCK = TONE_SEGMENT_SAMPLES // 16   # the medium search's block sums (samples)


def tone(n: int, freq_hz: float, fs_hz: float, amplitude: float = 0.5, phase_rad: float = 0.0) -> np.ndarray:
    t = np.arange(n)
    return (amplitude * np.exp(1j * (2 * np.pi * freq_hz / fs_hz * t + phase_rad))).astype(np.complex128)


def multitone(n: int, tones: Sequence[tuple[float, float]], fs_hz: float) -> np.ndarray:
    """Samples 0..n-1 of the sum of tones A_k·exp(j·2π f_k n / fs), tones as (frequency_hz,
    amplitude): the simulator's signal before its channel. Each tone's phase is reduced to
    one cycle before the exponential, as the core does (rf::tones_at)."""
    t = np.arange(n)
    x = np.zeros(n, dtype=np.complex128)
    for freq_hz, amplitude in tones:
        cycles = freq_hz / fs_hz * t
        x += amplitude * np.exp(2j * np.pi * (cycles - np.floor(cycles)))
    return x


def quantize(x: np.ndarray, bits: int) -> np.ndarray:
    """What a signed `bits`-bit sample format keeps of x (round to nearest, saturate)."""
    full = 2 ** (bits - 1) - 1
    rails = [np.clip(np.round(r * full), -full - 1, full) / full for r in (x.real, x.imag)]
    return rails[0] + 1j * rails[1]


# The timing stage's interpolator (rf/timing.hpp): a Kaiser-windowed sinc of TIMING_TAPS taps,
# tabulated at TIMING_PHASES + 1 fractions of a sample, blended linearly between two rows.
TIMING_TAPS = 32
TIMING_PHASES = 256
TIMING_BETA = 8.0


@functools.cache
def _timing_table() -> np.ndarray:
    mu = np.arange(TIMING_PHASES + 1)[:, None] / TIMING_PHASES
    d = (np.arange(TIMING_TAPS)[None, :] - (TIMING_TAPS // 2 - 1)) - mu   # tap's distance from the instant
    u = d / (TIMING_TAPS / 2)
    w = np.where(np.abs(u) >= 1, 0.0, np.i0(TIMING_BETA * np.sqrt(np.clip(1 - u * u, 0, None))) / np.i0(TIMING_BETA))
    h = np.sinc(d) * w
    return h / h.sum(axis=1, keepdims=True)


def timing_taps(mu: np.ndarray) -> np.ndarray:
    """The interpolator's taps (one row per fraction mu in [0, 1]) for inputs base - 15 .. base + 16."""
    table = _timing_table()
    pos = np.asarray(mu, dtype=float) * TIMING_PHASES
    row = np.minimum(pos.astype(np.int64), TIMING_PHASES - 1)
    frac = (pos - row)[..., None]
    return table[row] + frac * (table[row + 1] - table[row])


def timing(x: np.ndarray, sco_ppm: float, delay_samples: float, first: int = 0) -> np.ndarray:
    """Output n (n = first .. first + len(x) - 1 of the stream; x holds stream samples first ..)
    is x read at t_n = n / (1 + sco_ppm·1e-6) - delay_samples, x zero outside the block: the
    core's TimingStage, the same arithmetic. A receiver clock fast by sco_ppm reads a tone at
    f / (1 + sco_ppm·1e-6); a delay D turns it by -2π f D / fs."""
    n = np.arange(first, first + len(x), dtype=np.int64)
    eps = sco_ppm * 1e-6
    s = n.astype(float) * (eps / (1 + eps)) + delay_samples
    q = np.floor(s)
    base = n - q.astype(np.int64) - 1
    h = timing_taps(1.0 - (s - q))
    idx = base[:, None] - (TIMING_TAPS // 2 - 1) + np.arange(TIMING_TAPS)[None, :] - first
    inside = (idx >= 0) & (idx < len(x))
    taken = np.where(inside, x[np.clip(idx, 0, max(len(x) - 1, 0))], 0)
    return np.sum(h * taken.real, axis=1) + 1j * np.sum(h * taken.imag, axis=1)


def phase_noise_snr_db(linewidth_hz: float, fs_hz: float, n: int, snr_db: float | None) -> float:
    """The tone analyzer's mean SNR under a Wiener phase over a capture of n samples (the core's
    rf::phase_noise_snr_db): the tone keeps e^(-v) of its power coherently (v = D·n/15, D =
    2π·linewidth/fs), and the field's spectrum (1 - r²)/(1 - 2r·cos ω + r²), r = e^(-D/2),
    beyond the analyzer's lobe of ±(LOBE_BINS + 1/2) bins (of its segment) reaches the noise bins."""
    d = 2 * math.pi * linewidth_hz / fs_hz
    r = math.exp(-d / 2)
    half_lobe = 2 * math.pi * (LOBE_BINS + 0.5) / min(n, TONE_SEGMENT_SAMPLES)
    beyond = 1 - 2 / math.pi * math.atan((1 + r) / (1 - r) * math.tan(half_lobe / 2))
    awgn = 10 ** (-snr_db / 10) if snr_db is not None else 0.0
    return _db(math.exp(-d * n / 15) / (awgn + beyond))


def phase_noise_evm2(linewidth_hz: float, fs_hz: float, span_samples: float) -> float:
    """The mean-square error a Wiener phase of 3 dB linewidth adds to unit-power symbols once an
    estimator has taken out the best line (frequency and phase) over span_samples: the walk
    less its least-squares line has mean-square D·T/15 (D = 2π·linewidth/fs per sample, T the
    span), and E|e^(jθ) - 1|² = 2(1 - e^(-var/2))."""
    var = 2 * math.pi * linewidth_hz / fs_hz * span_samples / 15
    return 2 * (1 - math.exp(-var / 2))


@dataclass(frozen=True)
class ToneTruth:
    """What the channel did to a tone, in the analyzer's terms."""

    freq_hz: float
    power_dbfs: float
    snr_db: float | None       # None: no noise added
    image_dbc: float | None    # the IQ imbalance's image, relative to the tone
    spur_dbc: float | None     # the nonlinearity's spur (at -3f), relative to the tone
    dc_dbfs: float | None


@dataclass(frozen=True)
class Channel:
    """Impairments with known values; `seed` fixes the noise."""

    gain_db: float = 0.0
    snr_db: float | None = None
    cfo_hz: float = 0.0
    iq_gain_db: float = 0.0        # Q rail gain relative to I
    iq_phase_deg: float = 0.0      # Q rail skew from 90°
    dc_offset: complex = 0j
    c3: float = 0.0                # per-rail cubic coefficient
    seed: int = 0
    sco_ppm: float = 0.0           # the receiver's sample clock fast by this much (timing)
    delay_samples: float = 0.0     # a fractional delay (timing)
    phase_noise_hz: float = 0.0    # the LO's 3 dB linewidth: a Wiener phase of step variance 2π·lw/fs

    def _iq(self) -> tuple[complex, complex]:
        """y = mu·x + nu·conj(x) for the IQ imbalance (I kept, Q = g(Q cos φ - I sin φ))."""
        g, phi = 10 ** (self.iq_gain_db / 20), math.radians(self.iq_phase_deg)
        return (1 + g * np.exp(-1j * phi)) / 2, (1 - g * np.exp(1j * phi)) / 2

    def apply(self, x: np.ndarray, fs_hz: float) -> np.ndarray:
        y = x
        if self.sco_ppm or self.delay_samples:
            y = timing(y, self.sco_ppm, self.delay_samples)
        if self.phase_noise_hz:   # numpy's generator: the core's walk is the same process, not the same draws
            rng_pn = np.random.default_rng([self.seed, 1])
            step = math.sqrt(2 * math.pi * self.phase_noise_hz / fs_hz)
            y = y * np.exp(1j * np.cumsum(step * rng_pn.standard_normal(len(y))))
        y = y * 10 ** (self.gain_db / 20)
        if self.cfo_hz:   # the LO's offset comes before the baseband's impairments
            y = y * np.exp(2j * np.pi * self.cfo_hz / fs_hz * np.arange(len(y)))
        if self.c3:
            y = (y.real + self.c3 * y.real ** 3) + 1j * (y.imag + self.c3 * y.imag ** 3)
        mu, nu = self._iq()
        y = mu * y + nu * np.conj(y)
        y = y + self.dc_offset
        if self.snr_db is not None:
            noise_var = np.mean(np.abs(y - self.dc_offset) ** 2) / 10 ** (self.snr_db / 10)
            rng = np.random.default_rng(self.seed)
            y = y + math.sqrt(noise_var / 2) * (rng.standard_normal(len(y)) + 1j * rng.standard_normal(len(y)))
        return y

    def tone_truth(self, freq_hz: float, amplitude: float, fs_hz: float = 0.0, capture_samples: int = 0) -> ToneTruth:
        """The analyzer's figures for a tone through this channel, from the model alone; under
        phase noise the SNR is the mean over walks for a capture of capture_samples at fs_hz
        (phase_noise_snr_db), not stated without them."""
        a = amplitude * 10 ** (self.gain_db / 20)
        # Per-rail cubic on a tone: x·(1 + 3·c3·a²/4) plus c3·a³/4 at -3f.
        main = a * (1 + 0.75 * self.c3 * a * a)
        spur = abs(self.c3) * a ** 3 / 4
        mu, nu = self._iq()
        tone_amp, image_amp = abs(mu) * main, abs(nu) * main
        dc = abs(self.dc_offset)
        return ToneTruth(
            freq_hz=freq_hz / (1 + self.sco_ppm * 1e-6) + self.cfo_hz, power_dbfs=_db(tone_amp ** 2),
            snr_db=(self.snr_db if not self.phase_noise_hz
                    else phase_noise_snr_db(self.phase_noise_hz, fs_hz, capture_samples, self.snr_db)
                    if fs_hz > 0 and capture_samples > 0 else None),
            image_dbc=_db(image_amp ** 2 / tone_amp ** 2) if image_amp > 0 else None,
            spur_dbc=_db((abs(mu) * spur) ** 2 / tone_amp ** 2) if spur > 0 else None,
            dc_dbfs=_db(dc * dc) if dc > 0 else None)


@dataclass(frozen=True)
class ToneAnalysis:
    freq_hz: float
    power_dbfs: float
    snr_db: float          # tone / noise, harmonics, image, spurs and DC set aside
    sinad_db: float        # tone / everything else but DC
    sfdr_dbc: float        # tone / the largest other component (spur, image, harmonic)
    thd_dbc: float         # harmonics 2..5 / tone
    image_dbc: float       # the tone's image at -f / tone
    dc_dbfs: float
    iq_gain_db: float      # the imbalance that explains the image (Q rail gain, skew)
    iq_phase_deg: float
    noise_dbfs: float      # noise power over the band
    n: int


def blackman_harris(n: int) -> np.ndarray:
    a = (0.35875, 0.48829, 0.14128, 0.01168)
    k = 2 * np.pi * np.arange(n) / n
    return a[0] - a[1] * np.cos(k) + a[2] * np.cos(2 * k) - a[3] * np.cos(3 * k)


def _db(power: float) -> float:
    return 10 * math.log10(power) if power > 0 else -math.inf


def _dtft(x: np.ndarray, omega: float) -> complex:
    return complex(np.dot(x, np.exp(-1j * omega * np.arange(len(x)))))


def _golden_max(f: Callable[[float], float], lo: float, hi: float, tolerance: float) -> float:
    """The maximum of a unimodal f on [lo, hi], by golden-section search."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = f(a), f(b)
    while hi - lo > tolerance:
        if fa >= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = f(b)
    return (lo + hi) / 2


def _lobe(center: int, n: int) -> list[int]:
    return [(center + d) % n for d in range(-LOBE_BINS, LOBE_BINS + 1)]


def segment_starts(n: int, size: int) -> list[int]:
    """Where the analyzer's segments of `size` samples start: ⌈n/size⌉ of them spread evenly
    from the capture's start to its end (the last ends at n), so every sample is in one."""
    count = -(-n // size)
    return [k * (n - size) // (count - 1) for k in range(count)] if count > 1 else [0]


def _medium_omega(xc: np.ndarray, omega0: float, segment: int) -> float:
    """A long capture's periodogram maximum to a quarter of its own bin, within ±0.75 of a
    segment's bin about omega0: the capture mixed down by omega0 and summed in blocks of
    MEDIUM_BLOCK, whose transform (zero-padded to 4 times its length or more) samples the periodogram near
    omega0 (times the block's sinc, 0.4 % down at the edges)."""
    n, d = len(xc), MEDIUM_BLOCK
    blocks = -(-n // d)
    y = np.zeros(blocks * d, dtype=np.complex128)
    y[:n] = xc * np.exp(-1j * omega0 * np.arange(n))
    sums = y.reshape(blocks, d).sum(axis=1)
    size = 1 << (4 * blocks - 1).bit_length()
    power = np.abs(np.fft.fft(sums, size)) ** 2
    q_max = 3 * d * size // (4 * segment)     # ±0.75 of a segment's bin
    qs = np.arange(-q_max, q_max + 1)
    q = int(qs[np.argmax(power[qs % size])])
    return omega0 + 2 * np.pi * q / (d * size)


def analyze_tone(x: np.ndarray, fs_hz: float, aside_hz: Sequence[float] = ()) -> ToneAnalysis:
    """The figures of a capture holding one dominant tone (docs/rf.md "Tone").
    `aside_hz`: other components known to be there (a multitone's other tones): their
    lobes are set aside from the noise, as the harmonics' are (they stay spurs for SFDR).

    1. coarse: the largest bin of the Blackman-Harris spectrum outside DC;
    2. fine: the maximum of the rectangular periodogram within 0.75 bin of it (the
       maximum-likelihood frequency of a tone in white noise);
    3. a least-squares fit of the tone, its image (-f) and DC at that frequency, taken
       out of the capture (a sine fit, as IEEE 1241 does for ADCs): the residual holds
       the noise, harmonics and spurs with no leakage of the tone into them;
    4. the residual's windowed spectrum: noise as the mean over the bins outside the
       harmonics' lobes (white noise: the same in every bin), harmonics and the largest
       spur as their lobes' power less the noise under them.

    A capture longer than TONE_SEGMENT_SAMPLES: the spectra of steps 1 and 4 are Welch's
    averages over segments of that size (step 1 over COARSE_SEGMENTS of them), and a
    medium search (_medium_omega) between steps 1 and 2 takes the coarse peak to a
    quarter of the whole capture's bin, where step 2's search starts.
    """
    n = len(x)
    size = min(n, TONE_SEGMENT_SAMPLES)
    w = blackman_harris(size)
    sw2 = float(np.sum(w * w))
    step = 2 * np.pi / n              # the whole capture's bin: the frequency's
    segment_step = 2 * np.pi / size   # a segment's: the spectra's
    starts = segment_starts(n, size)

    def spectrum_of(v: np.ndarray, at: Sequence[int]) -> np.ndarray:   # mean over bins = per-sample power
        return np.mean([np.abs(np.fft.fft(v[s:s + size] * w)) ** 2 for s in at], axis=0) / sw2

    picked = min(len(starts), COARSE_SEGMENTS)
    coarse = spectrum_of(x, [starts[i * (len(starts) - 1) // (picked - 1)] for i in range(picked)]
                         if picked > 1 else starts)
    coarse[_lobe(0, size)] = 0
    peak = int(np.argmax(coarse))
    omega0 = segment_step * (peak if peak < size // 2 else peak - size)
    xc = x - np.mean(x)
    if size < n:
        omega0 = _medium_omega(xc, omega0, size)
    # ±0.75 bin: the true peak is within half a bin of the coarse one, and the rectangular
    # main lobe (zeros one bin either side of it) fills the interval but for a sliver.
    omega = _golden_max(lambda om: abs(_dtft(xc, om)), omega0 - 0.75 * step, omega0 + 0.75 * step, 1e-7 * step)
    t = np.arange(n)
    basis = np.stack([np.exp(1j * omega * t), np.exp(-1j * omega * t), np.ones(n)], axis=1)
    (a_tone, a_image, a_dc), *_ = np.linalg.lstsq(basis, x, rcond=None)
    residual = x - basis @ np.array([a_tone, a_image, a_dc])
    spectrum = spectrum_of(residual, starts)

    def bin_of(om: float) -> int:
        return round(om / segment_step) % size

    harmonic_bins = {(k, s): _lobe(bin_of(s * k * omega), size) for k in HARMONICS for s in (1, -1)}
    aside = {b for bins in harmonic_bins.values() for b in bins} | set(_lobe(0, size)) | set(_lobe(peak, size)) \
        | set(_lobe(bin_of(-omega), size)) | {b for f in aside_hz for b in _lobe(bin_of(2 * np.pi * f / fs_hz), size)}
    noise_var = float(np.mean(np.delete(spectrum, sorted(aside))))

    def power_in(bins: list[int]) -> float:
        """A component's power: its lobe's bins, less the noise under them (white)."""
        return max(float(np.sum(spectrum[bins])) / size - noise_var * len(bins) / size, 0.0)

    tone_power, image_power = abs(a_tone) ** 2, abs(a_image) ** 2
    harmonic_power = sum(power_in(bins) for bins in harmonic_bins.values())
    spur_power = max(image_power, power_in(_lobe(int(np.argmax(spectrum)), size)))
    r = a_image / np.conj(a_tone)                              # nu / conj(mu)
    g_e = (1 - r) / (1 + r)                                    # g·exp(jφ)
    return ToneAnalysis(
        freq_hz=omega / (2 * np.pi) * fs_hz, power_dbfs=_db(tone_power),
        snr_db=_db(tone_power / noise_var),
        sinad_db=_db(tone_power / (float(np.mean(spectrum)) + image_power)),
        sfdr_dbc=_db(tone_power / spur_power) if spur_power > 0 else math.inf,
        thd_dbc=_db(harmonic_power / tone_power), image_dbc=_db(image_power / tone_power),
        dc_dbfs=_db(abs(a_dc) ** 2), iq_gain_db=20 * math.log10(abs(g_e)),
        iq_phase_deg=math.degrees(float(np.angle(g_e))), noise_dbfs=_db(noise_var), n=n)


def crb_freq_hz(snr_db: float, n: int, fs_hz: float) -> float:
    """The Cramér-Rao bound on the standard deviation of a complex tone's frequency
    estimate in white noise: var(ω) >= 6 / (SNR·N·(N²-1))."""
    snr = 10 ** (snr_db / 10)
    return math.sqrt(6 / (snr * n * (n * n - 1))) * fs_hz / (2 * np.pi)
