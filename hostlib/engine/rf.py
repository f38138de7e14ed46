"""An RF case's metrics: the native tone analyzer on the capture, beside the channel's
analytic truth (docs/rf.md "RF metrics").

The strongest tone of the signal is the one analyzed (the other tones' lobes set aside
from its noise): its measured figures become the RF metrics (freq_error_hz, snr_db, ...),
the channel's truth for it the injected_* metrics next to them, so the evidence and the
outbox hold both.
"""
from __future__ import annotations

import math

from .._exceptions import DeviceError
from ..drivers._native_facade import RfCapture
from ..dsl.case import Case
from ..transports import native
from ..transports.config import RfChannel, RfTone, Signal

__all__ = ["injected_truth", "others_hz", "rf_metrics"]


def _native_channel(c: RfChannel):
    return native().RfChannel(gain_db=c.gain_db, snr_db=c.snr_db, cfo_hz=c.cfo_hz, iq_gain_db=c.iq_gain_db,
                              iq_phase_deg=c.iq_phase_deg, dc_offset=complex(c.dc_i, c.dc_q), c3=c.c3, seed=c.seed)


def _db(power: float) -> float:
    return 10 * math.log10(power) if power > 0 else -math.inf


def others_hz(signal: Signal) -> list[float]:
    """Where the signal's other tones (and their images) sit after the CFO: what the
    analyzer sets aside from the noise when it measures the strongest tone."""
    main = _strongest(signal)
    cfo = signal.channel.cfo_hz
    return [s * (t.frequency_hz + cfo) for t in signal.tones if t is not main for s in (1, -1)]


def _strongest(signal: Signal) -> RfTone:
    return max(signal.tones, key=lambda t: t.amplitude)


def injected_truth(signal: Signal) -> dict[str, float]:
    """The channel's truth for the signal's strongest tone, in the metrics' names; an
    impairment that is off leaves its metric out. A multitone: the other tones are
    components beside the analyzed one (SFDR's truth is the strongest of them, or the
    image, whichever is larger); its SNR truth is the injected SNR times the tone's share
    of the signal's power (the noise is relative to all of it), stated without a cubic
    (which mixes the tones); its THD truth is not stated."""
    from ..reference.rf import ToneTruth  # numpy: only when an RF case runs

    main = _strongest(signal)
    c = signal.channel
    truth = ToneTruth(**_native_channel(c).tone_truth(main.frequency_hz, main.amplitude))
    out: dict[str, float] = {"injected_freq_error_hz": c.cfo_hz, "injected_tone_power_dbfs": truth.power_dbfs}
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
    elif c.snr_db is not None and c.c3 == 0:
        # Without a cubic the tones (and their images) add in power: sum of gain^2 a_k^2 (1 + g^2) / 2
        # (|mu|^2 + |nu|^2 = (1 + g^2) / 2 for a Q rail gain g), the tone's own part |mu|^2 gain^2 a^2.
        g2 = 10 ** (c.iq_gain_db / 10)
        total_dbfs = _db(10 ** (c.gain_db / 10) * sum(t.amplitude ** 2 for t in signal.tones) * (1 + g2) / 2)
        out["injected_snr_db"] = c.snr_db + truth.power_dbfs - total_dbfs
    return out


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
        **injected_truth(signal),
    }
