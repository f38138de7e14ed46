"""`signal:` and `channel:` of an RF case -> the stream's Signal (hostlib.transports.config),
or the problems, each at the field that causes it (docs/dsl.md "RF signal and channel")."""
from __future__ import annotations

from hostlib.dsl.schema import MODULATIONS, CaseModel
from hostlib.dsl.semantics import Err
from hostlib.transports import native
from hostlib.transports.config import RfChannel, RfModulation, RfTone, Signal

__all__ = ["RF_TRANSPORTS", "min_modem_samples", "rf_signal"]

# Where the host keeps a capture: the native receiver (RxStream) of these transports.
RF_TRANSPORTS = ("udp", "tcp", "shm")
DEFAULT_AMPLITUDE = 0.5   # -6 dBFS: room for the channel's gain, DC and noise below full scale
# A modulation's RMS: -12 dBFS, room for the peaks of RRC-shaped 64QAM (about 8 dB above RMS).
DEFAULT_MODULATION_AMPLITUDE = 0.25
DEFAULT_ROLLOFF = 0.35


def min_modem_samples(samples_per_symbol: int) -> int:
    """The shortest capture the modulation analyzer takes (the core's rf::min_modem_samples)."""
    return int(native().rf_min_modem_samples(samples_per_symbol))


def _modulation(m: CaseModel, rate_sps: float) -> tuple[RfModulation | None, list[Err]]:
    s = m.signal
    assert s is not None
    errs: list[Err] = []
    for key in ("frequency", "tones"):
        if getattr(s, key) is not None:
            errs.append((("signal", key), f"a {s.kind} signal has symbol_rate, rolloff, amplitude and payload_seed; "
                         f"{key}: belongs to kind tone or multitone"))
    if s.symbol_rate is None:
        return None, [*errs, (("signal",), f"signal kind {s.kind} needs symbol_rate (e.g. symbol_rate: 250 kHz)")]
    sps = rate_sps / s.symbol_rate
    lo, hi = native().RF_MIN_SAMPLES_PER_SYMBOL, native().RF_MAX_SAMPLES_PER_SYMBOL
    if abs(sps - round(sps)) > 1e-9 * sps or not lo <= round(sps) <= hi:
        return None, [*errs, (("signal", "symbol_rate"), f"{s.symbol_rate:g} Hz gives {sps:g} samples per symbol at "
                              f"{rate_sps:g} S/s: it must be an integer from {lo} to {hi} "
                              f"(symbol_rate = rate / n, e.g. {rate_sps / 4:g} Hz)")]
    sps_int = round(sps)
    if s.capture < min_modem_samples(sps_int):
        errs.append((("signal", "capture"), f"{s.capture} samples hold fewer than two frames of "
                     f"{native().RF_FRAME_SYMBOLS} symbols and the filter's span: at least "
                     f"{min_modem_samples(sps_int)} at {sps_int} samples per symbol"))
    return RfModulation(scheme=s.kind, samples_per_symbol=sps_int,
                        rolloff=s.rolloff if s.rolloff is not None else DEFAULT_ROLLOFF,
                        amplitude=s.amplitude if s.amplitude is not None else DEFAULT_MODULATION_AMPLITUDE,
                        payload_seed=s.payload_seed if s.payload_seed is not None else 1), errs


def _tones(m: CaseModel, rate_sps: float) -> tuple[tuple[RfTone, ...], list[Err]]:
    s = m.signal
    assert s is not None
    errs: list[Err] = []
    nyquist = rate_sps / 2
    for key in ("symbol_rate", "rolloff", "payload_seed"):
        if getattr(s, key) is not None:
            errs.append((("signal", key), f"{key} belongs to a modulation (kind {', '.join(MODULATIONS)})"))
    if s.kind == "tone":
        if s.tones is not None:
            errs.append((("signal", "tones"), "a tone has frequency and amplitude; tones: belongs to kind multitone"))
        if s.frequency is None:
            return (), [*errs, (("signal",), "signal kind tone needs frequency (e.g. frequency: 100 kHz)")]
        given: list[tuple[tuple[str | int, ...], float, float]] = [
            (("signal", "frequency"), s.frequency, s.amplitude if s.amplitude is not None else DEFAULT_AMPLITUDE)]
    else:
        for key in ("frequency", "amplitude"):
            if getattr(s, key) is not None:
                errs.append((("signal", key), f"a multitone gives {key} per tone, under tones:"))
        if not s.tones:
            need = "signal kind multitone needs tones: [{frequency: ..., amplitude: ...}, ...]"
            return (), [*errs, (("signal",), need)]
        given = [(("signal", "tones", i, "frequency"), t.frequency, t.amplitude) for i, t in enumerate(s.tones)]
    for at, freq, _ in given:
        if not -nyquist < freq < nyquist:
            errs.append((at, f"{freq:g} Hz is outside the band of the {rate_sps:g} S/s stream "
                         f"(|frequency| < rate / 2 = {nyquist:g} Hz)"))
    if sum(a for _, _, a in given) > 1:
        errs.append((("signal",), "the tones' amplitudes add up to more than full scale (1.0): the samples would clip"))
    return tuple(RfTone(frequency_hz=f, amplitude=a) for _, f, a in given), errs


def rf_signal(m: CaseModel, rate_sps: float | None) -> tuple[Signal | None, list[Err]]:
    """The case's Signal (None for a counter-pattern case). rate_sps: None when the
    divider is wrong (reported elsewhere): only the checks that need no rate run."""
    if m.signal is None:
        if m.channel is not None:
            return None, [(("channel",), "a channel impairs an RF signal: give signal: too "
                           "(e.g. signal: {kind: tone, frequency: 100 kHz})")]
        return None, []
    errs: list[Err] = []
    if m.direction != "rx":
        errs.append((("signal",), f"an RF signal is generated by the device and analyzed by the host: "
                     f"direction rx, not {m.direction}"))
    if m.host != "native":
        errs.append((("signal",), "an RF case is analyzed by the native receiver: host: native"))
    if m.transport.kind not in RF_TRANSPORTS:
        errs.append((("transport", "kind"), f"an RF case runs over {', '.join(RF_TRANSPORTS)} (the native "
                     f"receiver keeps the capture), not {m.transport.kind}"))
    if m.faults.given().keys() - {"seed"}:
        errs.append((("faults",), "an RF case carries a signal, not the counter pattern: faults are for "
                     "counter-pattern cases"))
    if m.channels != 1:
        # The capture keeps one channel: a PASS would speak for channels it never analyzed.
        errs.append((("channels",), f"an RF case analyzes one channel (the host keeps channel 0's samples), "
                     f"not {m.channels}: give channels: 1, one case per channel to analyze"))
    if rate_sps is None:
        return None, errs
    modulation: RfModulation | None = None
    tones: tuple[RfTone, ...] = ()
    if m.signal.kind in MODULATIONS:
        modulation, more = _modulation(m, rate_sps)
    else:
        tones, more = _tones(m, rate_sps)
    errs += more
    c = m.channel
    if c is not None and not -rate_sps / 2 < c.cfo < rate_sps / 2:
        errs.append((("channel", "cfo"), f"{c.cfo:g} Hz is outside the band of the {rate_sps:g} S/s stream"))
    if modulation is not None and c is not None:
        max_cfo = float(native().rf_max_modem_cfo_hz(rate_sps, modulation.samples_per_symbol))
        if abs(c.cfo) > max_cfo:
            errs.append((("channel", "cfo"), f"{c.cfo:g} Hz of carrier offset is beyond what the modulation analyzer "
                         f"acquires at {modulation.samples_per_symbol} samples per symbol (at most {max_cfo:.0f} Hz "
                         f"either way, about symbol_rate / 8.6: its carrier search's reach)"))
    max_sco = native().RF_MAX_MODEM_SCO_PPM
    if modulation is not None and c is not None and abs(c.sco) > max_sco:
        errs.append((("channel", "sco"), f"{c.sco:g} ppm is beyond what the modulation analyzer's timing follows "
                     f"(at most {max_sco:g} ppm either way; a tone takes up to 1000 ppm)"))
    max_share = native().RF_MAX_LINEWIDTH_OF_RATE
    pn = None if c is None else c.phase_noise
    given = set() if pn is None else pn.model_fields_set
    if pn is not None and "linewidth" in given and given & {"level", "offset"}:
        errs.append((("channel", "phase_noise", sorted(given & {"level", "offset"})[0]),
                     "give the linewidth or a level at an offset, not both"))
    elif pn is not None and "linewidth" not in given and not {"level", "offset"} <= given:
        errs.append((("channel", "phase_noise"), "give the linewidth ({linewidth: 10 Hz}) or a level at an offset "
                     "({level: -80 dBc/Hz, offset: 10 kHz})"))
    elif pn is not None and pn.linewidth_hz > rate_sps * max_share:
        field = "linewidth" if "linewidth" in given else "level"
        errs.append((("channel", "phase_noise", field),
                     f"{pn.linewidth_hz:g} Hz of linewidth is more than {max_share:g} of the {rate_sps:g} S/s "
                     f"stream's rate (at most {rate_sps * max_share:g} Hz: the phase would wander "
                     "0.25 rad a sample)"))
    capture = m.signal.capture
    if capture > m.duration * rate_sps:
        errs.append((("signal", "capture"), f"{capture} samples take {capture / rate_sps:g} s at {rate_sps:g} S/s, "
                     f"longer than the case's duration {m.duration:g} s"))
    if errs or not (tones or modulation):
        return None, errs
    channel = RfChannel() if c is None else RfChannel(
        gain_db=c.gain, snr_db=c.snr, cfo_hz=c.cfo,
        iq_gain_db=c.iq_imbalance.gain if c.iq_imbalance else 0.0,
        iq_phase_deg=c.iq_imbalance.phase if c.iq_imbalance else 0.0,
        dc_i=c.dc.i if c.dc else 0.0, dc_q=c.dc.q if c.dc else 0.0, c3=c.cubic, seed=c.seed,
        sco_ppm=c.sco, delay_samples=c.delay, phase_noise_hz=c.phase_noise.linewidth_hz if c.phase_noise else 0.0)
    return Signal(tones=tones, modulation=modulation, channel=channel, capture_samples=capture), []
