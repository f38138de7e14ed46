"""The modulation reference: QPSK / 16QAM / 64QAM frames and their analyzer (docs/rf.md
"Modulated signals"), in numpy, written for clarity. The native core (hostlib/native/rf/
modulation.cpp) is the same waveform and the same estimators; the shared vectors in
docs/vectors/rf hold the two together.

The frame (one period of the stream; the stream repeats it without a gap):
- preamble: 127 symbols, the m-sequence of x^7 + x^6 + 1 (Fibonacci LFSR, state all ones,
  new bit = s6 xor s5), bit b -> (1 - 2b)(1 + j)/sqrt 2;
- payload: 897 symbols of PRBS-23 (x^23 + x^18 + 1, state ((seed * 0x9E3779B97F4A7C15 mod 2^64)
  >> 41) mod (2^23 - 1) + 1), each
  symbol's bits MSB first: the first half Gray-code the I rail's level, the second half Q's;
  levels 2i - (L - 1), L = sqrt M, scaled to unit average power;
- shaping: a root-raised-cosine over 16 symbols (16 sps + 1 taps, unit energy), applied
  circularly to the symbols times amplitude * sqrt(sps) (so the samples' mean power is
  amplitude^2): symbol k peaks at sample k * sps of the period.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .rf import TIMING_TAPS, timing_taps

__all__ = [
    "FRAME_SYMBOLS",
    "PAYLOAD_SYMBOLS",
    "PREAMBLE_SYMBOLS",
    "RRC_SPAN_SYMBOLS",
    "SCHEMES",
    "ModemAnalysis",
    "ModemFrame",
    "analyze_modulation",
    "constellation",
    "min_modem_samples",
    "modem_frame",
    "prbs23",
    "preamble_symbols",
    "rrc_taps",
]

SCHEMES = {"qpsk": 2, "16qam": 4, "64qam": 6}   # bits per symbol
PREAMBLE_SYMBOLS = 127
FRAME_SYMBOLS = 1024
PAYLOAD_SYMBOLS = FRAME_SYMBOLS - PREAMBLE_SYMBOLS
RRC_SPAN_SYMBOLS = 16
SEGMENT_SYMBOLS = 31            # the preamble correlated in 4 segments of 31 symbols
SEGMENTS = 4
# The carrier candidates of the preamble search: offsets c / (2 * SEGMENT_SYMBOLS) cycles a
# symbol, |c| <= CARRIER_CANDIDATES, one wrap of the coarse estimate apart; the nearest one
# leaves less than a wrap, which the coarse estimate then measures.
CARRIER_CANDIDATES = 7
CARRIER_SEARCH_CYCLES = 1e-3    # the fine search: +-this many cycles per symbol about the coarse CFO
TIMING_BLOCK_SYMBOLS = 64       # the fractional timing: each block its own gain and phase
TIMING_TOLERANCE_SAMPLES = 1e-5
MAX_CONSTELLATION_POINTS = 2048


def _gray_decode(g: int) -> int:
    b = 0
    while g:
        b ^= g
        g >>= 1
    return b


def _rail(scheme: str) -> tuple[int, float]:
    """Levels per rail and the rails' scale (mean power 2(M - 1)/3 made 1)."""
    m = 1 << SCHEMES[scheme]
    return 1 << (SCHEMES[scheme] // 2), math.sqrt(2 * (m - 1) / 3)


def constellation(scheme: str) -> np.ndarray:
    """The scheme's points indexed by the symbol's bits (MSB first: I's bits, then Q's)."""
    half = SCHEMES[scheme] // 2
    levels, norm = _rail(scheme)

    def level(bits: int) -> float:
        return (2.0 * _gray_decode(bits) - (levels - 1)) / norm

    return np.array([complex(level(v >> half), level(v & ((1 << half) - 1))) for v in range(1 << SCHEMES[scheme])])


def preamble_symbols() -> np.ndarray:
    state, out = 0x7F, []
    for _ in range(PREAMBLE_SYMBOLS):
        bit = ((state >> 6) ^ (state >> 5)) & 1
        state = ((state << 1) | bit) & 0x7F
        out.append(1 - 2 * bit)
    return np.array(out, dtype=np.complex128) * (1 + 1j) / math.sqrt(2)


def prbs23(seed: int, count: int) -> np.ndarray:
    # the seed spread over the state's bits: a small seed would start the register nearly empty
    state = (((seed * 0x9E3779B97F4A7C15) % (1 << 64)) >> 41) % ((1 << 23) - 1) + 1
    out = np.empty(count, dtype=np.uint8)
    for i in range(count):
        bit = ((state >> 22) ^ (state >> 17)) & 1
        state = ((state << 1) | bit) & 0x7FFFFF
        out[i] = bit
    return out


def rrc_taps(sps: int, rolloff: float) -> np.ndarray:
    """The root-raised-cosine, 16 sps + 1 taps, unit energy."""
    a = rolloff
    t = (np.arange(RRC_SPAN_SYMBOLS * sps + 1) - RRC_SPAN_SYMBOLS * sps // 2) / sps
    h = np.empty_like(t)
    for i, ti in enumerate(t):
        if ti == 0:
            h[i] = 1 - a + 4 * a / math.pi
        elif abs(abs(4 * a * ti) - 1) < 1e-12:
            h[i] = a / math.sqrt(2) * ((1 + 2 / math.pi) * math.sin(math.pi / (4 * a))
                                       + (1 - 2 / math.pi) * math.cos(math.pi / (4 * a)))
        else:
            h[i] = ((math.sin(math.pi * ti * (1 - a)) + 4 * a * ti * math.cos(math.pi * ti * (1 + a)))
                    / (math.pi * ti * (1 - (4 * a * ti) ** 2)))
    return h / math.sqrt(float(np.sum(h * h)))


@dataclass(frozen=True)
class ModemFrame:
    symbols: np.ndarray   # FRAME_SYMBOLS: preamble then payload
    bits: np.ndarray      # the payload's bits
    samples: np.ndarray   # one period, FRAME_SYMBOLS * sps


def modem_frame(scheme: str, sps: int, rolloff: float, amplitude: float, payload_seed: int) -> ModemFrame:
    m = SCHEMES[scheme]
    bits = prbs23(payload_seed, PAYLOAD_SYMBOLS * m)
    values = bits.reshape(-1, m).astype(np.int64) @ (1 << np.arange(m - 1, -1, -1))
    symbols = np.concatenate([preamble_symbols(), constellation(scheme)[values]])
    h = rrc_taps(sps, rolloff)
    period, half = FRAME_SYMBOLS * sps, len(h) // 2
    up = np.zeros(period, dtype=np.complex128)
    up[::sps] = symbols * amplitude * math.sqrt(sps)
    # circular convolution: sample n = sum_j h[j] up[n - j + half]
    samples = np.zeros(period, dtype=np.complex128)
    for j, hj in enumerate(h):
        samples += hj * np.roll(up, j - half)
    return ModemFrame(symbols, bits, samples)


def min_modem_samples(sps: int) -> int:
    return (2 * FRAME_SYMBOLS + RRC_SPAN_SYMBOLS) * sps


@dataclass(frozen=True)
class ModemAnalysis:
    evm_rms_pct: float
    evm_peak_pct: float
    evm_rms_db: float
    mer_db: float
    ber: float
    bit_errors: int
    bits: int
    symbols: int
    cfo_hz: float
    phase_rad: float
    gain_db: float
    preamble_sample: int
    timing_offset_samples: float   # stream symbol j at received tick (j sps + it)(1 + sco), wrapped to [-P/2, P/2)
    sco_ppm: float
    constellation: np.ndarray


def _golden_max(f: Callable[[float], float], lo: float, hi: float, tolerance: float) -> float:
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


def _interpolate(y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """y read at the instants t by the channel's interpolator (rf.timing_taps): inputs
    floor(t) - 15 .. floor(t) + 16."""
    base = np.floor(t)
    h = timing_taps(t - base)
    idx = base.astype(np.int64)[:, None] - (TIMING_TAPS // 2 - 1) + np.arange(TIMING_TAPS)[None, :]
    taken = y[idx]
    return np.sum(h * taken.real, axis=1) + 1j * np.sum(h * taken.imag, axis=1)


def analyze_modulation(x: np.ndarray, fs_hz: float, scheme: str, sps: int, rolloff: float, amplitude: float,
                       payload_seed: int, start_tick: int = 0) -> ModemAnalysis:
    """EVM, MER and bit errors of a capture of the modulated signal (docs/rf.md "The
    modulation analyzer"): preamble timing to a whole sample, coarse carrier from the
    preamble's segments, the timing to a fraction of a sample per segment (data-aided) and
    its line over the capture, the matched filter's output read on that line, the ML carrier
    over every known symbol, gain and phase by least squares, then the payload's figures.
    start_tick: the stream tick of the capture's first sample (timing_offset_samples only)."""
    x = np.asarray(x, dtype=np.complex128)
    n = len(x)
    if n < min_modem_samples(sps):
        raise ValueError(f"{n} samples: fewer than two frames ({min_modem_samples(sps)})")
    frame = modem_frame(scheme, sps, rolloff, amplitude, payload_seed)
    h = rrc_taps(sps, rolloff)
    half, period = len(h) // 2, FRAME_SYMBOLS * sps
    y = np.convolve(x, h, mode="same")   # h is symmetric: y[t] = sum_j h[j] x[t + j - half]

    # 1. timing to a whole sample and the carrier candidate: the preamble's correlation, as the
    # power of 4 segments summed, its symbols turned back by each candidate's offset (c k / 62
    # cycles at symbol k: exact phases); the first maximum over candidates, then starts
    k = np.arange(SEGMENTS * SEGMENT_SYMBOLS)
    taus = np.arange(half, half + period)
    products = y[taus[:, None] + k[None, :] * sps] * np.conj(frame.symbols[k])[None, :]
    wrap_steps = 2 * SEGMENT_SYMBOLS
    best_power, tau0, candidate, c = -1.0, half, 0, np.zeros(SEGMENTS, dtype=np.complex128)
    for cand in range(-CARRIER_CANDIDATES, CARRIER_CANDIDATES + 1):
        turn = np.exp(-2j * math.pi * ((cand * k) % wrap_steps) / wrap_steps)
        segs = (products * turn[None, :]).reshape(len(taus), SEGMENTS, SEGMENT_SYMBOLS).sum(axis=2)
        power = np.sum(np.abs(segs) ** 2, axis=1)
        at = int(np.argmax(power))
        if power[at] > best_power:
            best_power, tau0, candidate, c = float(power[at]), int(taus[at]), cand, segs[at]
    # 2. coarse carrier: the candidate's offset and the phase advance from segment to segment left
    coarse = (candidate / (wrap_steps * sps)
              + float(np.angle(np.sum(c[1:] * np.conj(c[:-1])))) / (2 * math.pi * SEGMENT_SYMBOLS * sps))

    # 3. turned back by the coarse CFO, matched-filtered where the filter fits (zero elsewhere);
    # the nominal instants first + k sps on tau0's grid within it
    cycles = coarse * np.arange(n)
    xd = x * np.exp(-2j * math.pi * (cycles - np.floor(cycles)))
    yd = np.convolve(xd, h, mode="same")
    yd[:half] = 0
    yd[n - half:] = 0
    first = half + (tau0 - half) % sps
    nominal = -(-(n - half - first) // sps)
    k0 = (tau0 - first) // sps
    ks = np.arange(nominal)
    sent_all = frame.symbols[(ks - k0) % FRAME_SYMBOLS]

    def reads_filtered(t: float) -> bool:   # the interpolator's inputs floor(t) - 15 .. floor(t) + 16
        base = math.floor(t)
        return base - (TIMING_TAPS // 2 - 1) >= half and base + TIMING_TAPS // 2 < n - half

    # 4. the fraction: per segment the offset delta maximising sum over blocks of
    # |sum r s*|^2 / sum |s|^2 less sum |r|^2 (minus the error left after each block's own
    # gain: 0 at the true instants without noise), searched half a symbol either side of the
    # segment before's (the segment's symbols whose reads stay on filtered samples over that
    # span), then the line through the segments'
    segment_count = max(2, nominal // FRAME_SYMBOLS)
    reach = sps / 2
    centre, offset, previous = [], [], 0.0
    for j in range(segment_count):
        lo, hi = j * nominal // segment_count, (j + 1) * nominal // segment_count
        start, stop = previous - reach, previous + reach
        while lo < hi and not reads_filtered(first + lo * sps + start):
            lo += 1
        while hi > lo and not reads_filtered(first + (hi - 1) * sps + stop):
            hi -= 1
        if hi - lo < TIMING_BLOCK_SYMBOLS:
            continue    # the capture's edge: too few symbols to time
        seg_t = (first + ks[lo:hi] * sps).astype(float)
        seg_s = sent_all[lo:hi]
        starts = np.arange(0, hi - lo, TIMING_BLOCK_SYMBOLS)
        block_sent = np.add.reduceat(np.abs(seg_s) ** 2, starts)

        def fit(delta: float, seg_t: np.ndarray = seg_t, seg_s: np.ndarray = seg_s, starts: np.ndarray = starts,
                block_sent: np.ndarray = block_sent) -> float:
            r = _interpolate(yd, seg_t + delta)
            sums = np.add.reduceat(r * np.conj(seg_s), starts)
            return float(np.sum(np.abs(sums) ** 2 / block_sent) - np.sum(np.abs(r) ** 2))

        previous = _golden_max(fit, start, stop, TIMING_TOLERANCE_SAMPLES)
        offset.append(previous)
        centre.append((lo + hi - 1) / 2)
    cen, off = np.array(centre), np.array(offset)
    sxx = float(np.sum((cen - cen.mean()) ** 2))
    slope = float(np.sum((cen - cen.mean()) * (off - off.mean()))) / sxx if sxx > 0 else 0.0
    intercept = float(off.mean()) - slope * float(cen.mean())

    # 5. the symbols read on the line where the reads are all filtered samples
    t_all = first + ks * sps + intercept + slope * ks
    whole = np.floor(t_all)
    keep = (whole - (TIMING_TAPS // 2 - 1) >= half) & (whole + TIMING_TAPS // 2 < n - half)
    index = ((ks - k0) % FRAME_SYMBOLS)[keep]
    r = _interpolate(yd, t_all[keep])
    sent = frame.symbols[index]
    z = r * np.conj(sent)
    count = len(r)
    m = np.arange(count)

    # 6. fine carrier: max |sum z exp(-j w k)| on a quarter-bin grid, then golden section
    def magnitude(w: float) -> float:
        return float(np.abs(np.sum(z * np.exp(-1j * w * m))))

    bin_w = 2 * math.pi / count
    step, reach = bin_w / 4, 2 * math.pi * CARRIER_SEARCH_CYCLES
    grid = np.arange(-reach, reach + step / 2, step)
    w_best = float(grid[int(np.argmax([magnitude(float(w)) for w in grid]))])
    w = _golden_max(magnitude, w_best - step, w_best + step, 1e-7 * bin_w)
    total = np.sum(z * np.exp(-1j * w * m))
    gain = abs(total) / float(np.sum(np.abs(sent) ** 2))
    phase = float(np.angle(total))

    # 7. the payload's figures
    payload = index >= PREAMBLE_SYMBOLS
    v = (r * np.exp(-1j * (w * m + phase)) / gain)[payload]
    s = sent[payload]
    err = np.abs(v - s) ** 2
    levels, norm = _rail(scheme)

    def rail_index(u: np.ndarray) -> np.ndarray:
        return np.clip(np.rint((u * norm + (levels - 1)) / 2), 0, levels - 1).astype(np.int64)

    ii, qi = rail_index(v.real), rail_index(v.imag)
    decided = ((2 * ii - (levels - 1)) + 1j * (2 * qi - (levels - 1))) / norm
    bps = SCHEMES[scheme]
    got = ((ii ^ (ii >> 1)) << (bps // 2)) | (qi ^ (qi >> 1))
    got_bits = (got[:, None] >> np.arange(bps - 1, -1, -1)[None, :]) & 1
    p = (index[payload] - PREAMBLE_SYMBOLS) * bps
    want_bits = frame.bits[p[:, None] + np.arange(bps)[None, :]]
    bit_errors = int(np.sum(got_bits != want_bits))
    evm = math.sqrt(float(np.mean(err)))
    # the line in the channel's terms: a preamble (k0) at stream tick (m P + D)(1 + eps)
    eps = slope / sps
    timing_offset = (start_tick % period - start_tick * (eps / (1 + eps))
                     + (first + k0 * sps + intercept + slope * k0) / (1 + eps))
    timing_offset -= period * math.floor(timing_offset / period + 0.5)
    decided_error = float(np.sum(np.abs(v - decided) ** 2))
    return ModemAnalysis(
        evm_rms_pct=100 * evm, evm_peak_pct=100 * math.sqrt(float(np.max(err))),
        evm_rms_db=20 * math.log10(evm) if evm > 0 else -math.inf,
        mer_db=10 * math.log10(float(np.sum(np.abs(decided) ** 2)) / decided_error) if decided_error > 0 else math.inf,
        ber=bit_errors / (len(v) * bps), bit_errors=bit_errors, bits=len(v) * bps, symbols=len(v),
        cfo_hz=(coarse + w / (2 * math.pi * sps)) * fs_hz, phase_rad=phase,
        gain_db=20 * math.log10(gain / (amplitude * math.sqrt(sps))), preamble_sample=tau0,
        timing_offset_samples=timing_offset, sco_ppm=eps * 1e6,
        constellation=v[:MAX_CONSTELLATION_POINTS])
