"""An RF case's metrics: the native tone or modulation analyzer on the capture, beside the
channel's analytic truth (docs/rf.md "RF metrics").

A tone or multitone: the strongest tone is the one analyzed (the other tones' lobes set
aside from its noise): its measured figures become the RF metrics (freq_error_hz, snr_db,
...). A modulation: EVM, MER, bit errors, the carrier offset, the symbol timing and the
SCO found, and the recovered constellation for the evidence (rf_constellation,
rf_constellation_ideal). The channel's truth becomes the injected_* metrics next to them,
so the evidence and the outbox hold both.
The capture's averaged spectrum (the core's, at most RF_SPECTRUM_BINS bins) and, for a
tone, where the analyzer found it, its image, DC and the harmonics go into the evidence as
well: the report plots them from there (docs/rf.md "Seeing it").
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .._exceptions import DeviceError
from ..drivers._native_facade import RfCapture
from ..dsl.case import Case
from ..results.schema import RfMarker, RfSpectrum
from ..transports import native
from ..transports.config import RfChannel, RfModulation, RfTone, Signal

__all__ = ["RF_SPECTRUM_BINS", "RfOutcome", "analyze_rf", "injected_modem_truth", "injected_truth", "modem_ber",
           "others_hz", "rf_markers", "rf_metrics", "rf_spectrum"]

# The report's spectrum: Welch segments of this many samples (fewer for a shorter capture),
# so the evidence holds at most this many bins per RF case.
RF_SPECTRUM_BINS = 2048
HARMONICS = (2, 3, 4, 5)   # the analyzer's, at +-k*f (docs/rf.md "The tone analyzer")

Points = list[tuple[float, float]]


@dataclass
class RfOutcome:
    """What an RF case's capture gave: its metrics, and for a modulation the recovered
    constellation (at most 2048 payload symbols) and the scheme's ideal points, each
    [i, q] on the ideal constellation's scale (unit average power)."""
    metrics: dict[str, float]
    constellation: Points = field(default_factory=list)
    constellation_ideal: Points = field(default_factory=list)


def _native_channel(c: RfChannel):
    return native().RfChannel(gain_db=c.gain_db, snr_db=c.snr_db, cfo_hz=c.cfo_hz, iq_gain_db=c.iq_gain_db,
                              iq_phase_deg=c.iq_phase_deg, dc_offset=complex(c.dc_i, c.dc_q), c3=c.c3, seed=c.seed,
                              sco_ppm=c.sco_ppm, delay_samples=c.delay_samples, phase_noise_hz=c.phase_noise_hz)


def _received_hz(c: RfChannel, freq_hz: float) -> float:
    """Where a sent tone lands: the receiver's clock fast by sco reads f / (1 + sco), then the CFO."""
    return freq_hz / (1 + c.sco_ppm * 1e-6) + c.cfo_hz


def _injected_timing(c: RfChannel) -> dict[str, float]:
    """The timing and phase noise stages' values, where on (the evidence's record of them)."""
    given = {"injected_sco_ppm": c.sco_ppm, "injected_delay_samples": c.delay_samples,
             "injected_phase_noise_hz": c.phase_noise_hz}
    return {k: v for k, v in given.items() if v}


def _db(power: float) -> float:
    return 10 * math.log10(power) if power > 0 else -math.inf


def others_hz(signal: Signal) -> list[float]:
    """Where the signal's other tones (and their images) sit after the CFO: what the
    analyzer sets aside from the noise when it measures the strongest tone."""
    main = _strongest(signal)
    return [s * _received_hz(signal.channel, t.frequency_hz) for t in signal.tones if t is not main for s in (1, -1)]


def _strongest(signal: Signal) -> RfTone:
    return max(signal.tones, key=lambda t: t.amplitude)


def injected_truth(signal: Signal, rate_sps: float) -> dict[str, float]:
    """The channel's truth for the signal's strongest tone, in the metrics' names; an
    impairment that is off leaves its metric out. A multitone: the other tones are
    components beside the analyzed one (SFDR's truth is the strongest of them, or the
    image, whichever is larger); its SNR truth is the injected SNR times the tone's share
    of the signal's power (the noise is relative to all of it), stated without a cubic
    (which mixes the tones); its THD truth is not stated. The frequency's truth is
    f / (1 + sco) + cfo - f (the SCO's part -f·sco for small sco); under phase noise the
    SNR's truth is the mean over walks for the capture at rate_sps (its skirt reaches the
    noise bins: docs/rf.md "Phase noise"), stated for a single tone."""
    from ..reference.rf import ToneTruth  # numpy: only when an RF case runs

    main = _strongest(signal)
    c = signal.channel
    truth = ToneTruth(**_native_channel(c).tone_truth(main.frequency_hz, main.amplitude, rate_sps,
                                                      signal.capture_samples))
    eps = c.sco_ppm * 1e-6   # f / (1 + eps) - f = -f eps / (1 + eps): exactly the CFO without an SCO
    out: dict[str, float] = {"injected_freq_error_hz": c.cfo_hz - main.frequency_hz * (eps / (1 + eps)),
                             "injected_tone_power_dbfs": truth.power_dbfs, **_injected_timing(c)}
    others = [_db(t.amplitude ** 2 / main.amplitude ** 2) for t in signal.tones if t is not main]
    spurs = [x for x in (truth.image_dbc, truth.spur_dbc if not others else None) if x is not None] + others
    if spurs:
        out["injected_sfdr_dbc"] = -max(spurs)
    if truth.image_dbc is not None:
        out["injected_iq_image_dbc"] = truth.image_dbc
    if truth.dc_dbfs is not None:
        out["injected_dc_offset_dbfs"] = truth.dc_dbfs
    if not others:
        if truth.snr_db is not None:
            out["injected_snr_db"] = truth.snr_db
        if truth.spur_dbc is not None:
            out["injected_thd_dbc"] = truth.spur_dbc
    elif c.snr_db is not None and c.c3 == 0 and not c.phase_noise_hz:
        # Without a cubic the tones (and their images) add in power: sum of gain^2 a_k^2 (1 + g^2) / 2
        # (|mu|^2 + |nu|^2 = (1 + g^2) / 2 for a Q rail gain g), the tone's own part |mu|^2 gain^2 a^2.
        g2 = 10 ** (c.iq_gain_db / 10)
        total_dbfs = _db(10 ** (c.gain_db / 10) * sum(t.amplitude ** 2 for t in signal.tones) * (1 + g2) / 2)
        out["injected_snr_db"] = c.snr_db + truth.power_dbfs - total_dbfs
    return out


def _q(x: float) -> float:
    """The Gaussian tail Q(x) = erfc(x / sqrt 2) / 2."""
    return 0.5 * math.erfc(x / math.sqrt(2))


def modem_ber(scheme: str, snr_symbol: float) -> float:
    """The AWGN bit error ratio of Gray-mapped square M-QAM at a linear symbol SNR Es/N0:
    (4 / log2 M)(1 - 1/sqrt M) Q(sqrt(3 log2 M / (M - 1) * Eb/N0)), Eb/N0 = Es/N0 / log2 M;
    for QPSK (M = 4) exactly Q(sqrt(2 Eb/N0))."""
    m = {"qpsk": 4, "16qam": 16, "64qam": 64}[scheme]
    k = math.log2(m)
    ebn0 = snr_symbol / k
    return (4 / k) * (1 - 1 / math.sqrt(m)) * _q(math.sqrt(3 * k / (m - 1) * ebn0))


def injected_modem_truth(signal: Signal, rate_sps: float, capture_samples: int) -> dict[str, float]:
    """The channel's truth for a modulated signal (docs/rf.md "Modulated signals"): the
    carrier offset, the delay and the SCO (0 when off: the analyzer measures both), and
    without a cubic or a DC offset the EVM that AWGN, the IQ image and phase noise give
    after an ideal matched filter at the right instants, and the BER of that symbol SNR:

        EVM^2 = P (|mu|^2 + |nu|^2) / (|mu|^2 A^2 snr) + |nu|^2 / |mu|^2 + 2 (1 - exp(-v/2)),
        v = 2 pi linewidth / fs * T / 15

    P the sent samples' mean power (amplitude^2 for symbols of unit power), A = amplitude *
    sqrt(sps) the symbols' amplitude after the unit-energy matched filter (which keeps the
    per-sample noise variance: the symbol SNR is sps times the per-sample SNR), snr the
    channel's per-sample SNR over the band fs, mu and nu the IQ imbalance's (the image
    nu*conj(x) is uncorrelated with the symbols and adds as noise), v the mean-square of the
    Wiener phase less the line (frequency and phase) the analyzer fits over the capture's
    T samples (hostlib.reference.rf.phase_noise_evm2). The SCO scales the baseband only: the
    carrier offset's truth stays the CFO. The analyzer follows the timing stage's delay and
    drift, so they add nothing to the EVM."""
    mod = signal.modulation
    assert mod is not None
    c = signal.channel
    out = {"injected_freq_error_hz": c.cfo_hz, "injected_delay_samples": c.delay_samples,
           "injected_sco_ppm": c.sco_ppm, **_injected_timing(c)}
    if c.c3 != 0 or c.dc_i != 0 or c.dc_q != 0:
        return out
    import numpy as np  # only when an RF case runs

    from ..reference.rf import phase_noise_evm2

    frame = native().rf_modem_frame(mod.scheme, mod.samples_per_symbol, mod.rolloff, mod.amplitude,
                                    mod.payload_seed)
    sent_power = float(np.mean(np.abs(frame["samples"]) ** 2))
    g, phi = 10 ** (c.iq_gain_db / 20), math.radians(c.iq_phase_deg)
    mu = (1 + g * complex(math.cos(phi), -math.sin(phi))) / 2
    nu = (1 - g * complex(math.cos(phi), math.sin(phi))) / 2
    image = abs(nu) ** 2 / abs(mu) ** 2
    noise = 0.0
    if c.snr_db is not None:
        a2 = mod.amplitude ** 2 * mod.samples_per_symbol
        noise = sent_power * (abs(mu) ** 2 + abs(nu) ** 2) / (abs(mu) ** 2 * a2 * 10 ** (c.snr_db / 10))
    evm2 = noise + image
    if c.phase_noise_hz:
        evm2 += phase_noise_evm2(c.phase_noise_hz, rate_sps, capture_samples)
    if evm2 > 0:
        out["injected_evm_rms_pct"] = 100 * math.sqrt(evm2)
        out["injected_ber"] = modem_ber(mod.scheme, 1 / evm2)
    return out


def _modem_outcome(case: Case, capture: RfCapture, mod: RfModulation) -> RfOutcome:
    signal = case.signal
    assert signal is not None
    a = native().analyze_modulation(capture.samples, case.rate_sps, mod.scheme, mod.samples_per_symbol,
                                    mod.rolloff, mod.amplitude, mod.payload_seed, capture.start_tick)
    ideal = native().rf_modem_frame(mod.scheme, mod.samples_per_symbol, mod.rolloff, mod.amplitude,
                                    mod.payload_seed)["constellation"]
    metrics = {
        "evm_rms_pct": a["evm_rms_pct"],
        "evm_peak_pct": a["evm_peak_pct"],
        "evm_rms_db": a["evm_rms_db"],
        "mer_db": a["mer_db"],
        "ber": a["ber"],
        "bit_errors": float(a["bit_errors"]),
        "symbols": float(a["symbols"]),
        "freq_error_hz": a["cfo_hz"],
        "timing_offset_samples": a["timing_offset_samples"],
        "sco_ppm": a["sco_ppm"],
        "freq_search_hz": native().rf_modem_cfo_reach_hz(case.rate_sps, mod.samples_per_symbol),
        "rf_capture_samples": float(len(capture.samples)),
        "rf_capture_restarts": float(capture.restarts),
        **injected_modem_truth(signal, case.rate_sps, len(capture.samples)),
    }
    return RfOutcome(metrics, [(float(v.real), float(v.imag)) for v in a["constellation"]],
                     [(float(v.real), float(v.imag)) for v in ideal])


def analyze_rf(case: Case, capture: RfCapture | None) -> RfOutcome:
    """An RF case's outcome from its capture: a modulation's figures and constellation, or
    a tone's figures (rf_metrics). A capture that never completed: DeviceError."""
    signal = case.signal
    assert signal is not None
    if signal.modulation is None or capture is None:
        return RfOutcome(rf_metrics(case, capture))
    return _modem_outcome(case, capture, signal.modulation)


def rf_metrics(case: Case, capture: RfCapture | None) -> dict[str, float]:
    """The RF metrics of `case` from its capture, with the injected truth. A capture
    that never completed (the stream ended or kept losing frames) is the device's
    failure to deliver the signal: DeviceError."""
    signal = case.signal
    assert signal is not None
    if capture is None:
        raise DeviceError(f"{case.location}: the RF capture of {signal.capture_samples} consecutive samples did not "
                          "complete within the window (frames lost, or the stream ended)")
    from ..reference.rf import ToneAnalysis  # numpy: only when an RF case runs

    a = ToneAnalysis(**native().analyze_tone(capture.samples, case.rate_sps, others_hz(signal)))
    main = _strongest(signal)
    error_hz = a.freq_hz - main.frequency_hz
    return {
        "freq_error_hz": error_hz,
        "freq_error_ppm": error_hz / abs(main.frequency_hz) * 1e6 if main.frequency_hz else math.nan,
        "tone_power_dbfs": a.power_dbfs,
        "snr_db": a.snr_db,
        "sinad_db": a.sinad_db,
        "sfdr_dbc": a.sfdr_dbc,
        "thd_dbc": a.thd_dbc,
        "iq_image_dbc": a.image_dbc,
        "dc_offset_dbfs": a.dc_dbfs,
        "rf_capture_samples": float(len(capture.samples)),
        "rf_capture_restarts": float(capture.restarts),
        **injected_truth(signal, case.rate_sps),
    }


def rf_spectrum(capture: RfCapture, fs_hz: float) -> RfSpectrum:
    """The capture's averaged spectrum as the evidence keeps it (the core's Welch average over
    the 4-term Blackman-Harris window, docs/rf.md "Seeing it"), -fs/2 first, without markers."""
    import numpy as np  # only when an RF case runs

    n = len(capture.samples)
    bins = min(RF_SPECTRUM_BINS, 1 << (n.bit_length() - 1))   # the largest power of two the capture holds
    got = native().rf_spectrum(capture.samples, bins)
    power = np.fft.fftshift(got["power"])
    with np.errstate(divide="ignore"):
        dbfs = np.round(10 * np.log10(power), 2)
    return {"fs_hz": fs_hz, "capture_samples": n, "bins": bins, "segments": int(got["segments"]),
            "window": "4-term Blackman-Harris", "enbw_bins": float(got["enbw_bins"]),
            "power_dbfs": [float(v) if math.isfinite(v) else None for v in dbfs], "markers": []}


def fold_hz(freq_hz: float, fs_hz: float) -> float:
    """Where a frequency lands in the sampled band [-fs/2, fs/2)."""
    return (freq_hz + fs_hz / 2) % fs_hz - fs_hz / 2


def rf_markers(signal: Signal, metrics: dict[str, float], fs_hz: float) -> list[RfMarker]:
    """What the spectrum plot marks, from the measured figures: the analyzed tone (its
    measured frequency and power), its image at -f and DC (the analyzer's powers), the
    harmonics at +-k*f and a multitone's other tones (their powers read off the spectrum)."""
    main = _strongest(signal)
    f = main.frequency_hz + metrics["freq_error_hz"]
    tone_dbfs = metrics["tone_power_dbfs"]
    image = metrics.get("iq_image_dbc", -math.inf)

    def finite_or_none(v: float) -> float | None:
        return v if math.isfinite(v) else None

    out: list[RfMarker] = [
        {"what": "tone", "freq_hz": fold_hz(f, fs_hz), "power_dbfs": finite_or_none(tone_dbfs)},
        {"what": "image", "freq_hz": fold_hz(-f, fs_hz), "power_dbfs": finite_or_none(tone_dbfs + image)},
        {"what": "DC", "freq_hz": 0.0, "power_dbfs": finite_or_none(metrics.get("dc_offset_dbfs", -math.inf))},
    ]
    out += [{"what": f"harmonic {sign * k}", "freq_hz": fold_hz(sign * k * f, fs_hz),
             "power_dbfs": None} for k in HARMONICS for sign in (1, -1)]
    out += [{"what": f"tone {i}", "freq_hz": fold_hz(_received_hz(signal.channel, t.frequency_hz), fs_hz),
             "power_dbfs": None}
            for i, t in enumerate((t for t in signal.tones if t is not main), start=2)]
    return out
