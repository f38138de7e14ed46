"""Writes docs/vectors/rf/: tone (and multitone) captures through the reference channel, with the channel's
parameters, its analytic truth and the reference analyzer's figures in index.json; and under
`modem_vectors` the modulated signal's captures (hostlib.reference.modem) with the modulation
analyzer's figures.

    python -m hostlib.reference.gen_rf_vectors [--out docs/vectors/rf]

A capture is the channel's output with its noise realisation in it, stored as `ci16_le`
(interleaved int16 I/Q, little-endian, full scale 32767 as in rf.quantize) or `cf32_le`
(interleaved float32 I/Q), the SigMF datatype names. The reference's figures are of the
samples as stored (read back with read_capture), so every implementation that reads the
file analyzes the same samples: the native core's gtests and hostlib/tests/test_rf_native.py
hold it to these figures.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from . import modem
from .rf import Channel, ToneAnalysis, analyze_tone, multitone, quantize, tone

FS_HZ = 1e6
CI16_FULL_SCALE = 32767
# How closely another implementation must reproduce the figures on these samples.
TOLERANCE = {"freq_bins": 1e-6, "db": 0.01, "iq_gain_db": 0.001, "iq_phase_deg": 0.001}


@dataclasses.dataclass(frozen=True)
class Capture:
    name: str
    description: str
    n: int
    freq_hz: float
    amplitude: float
    channel: Channel
    datatype: str          # "ci16_le" | "cf32_le"
    # A multitone: (frequency_hz, amplitude) per tone (freq_hz, amplitude: its strongest);
    # empty: the one tone freq_hz, amplitude.
    tones: tuple[tuple[float, float], ...] = ()

    def signal(self) -> np.ndarray:
        """The samples before the channel."""
        if self.tones:
            return multitone(self.n, self.tones, FS_HZ)
        return tone(self.n, self.freq_hz, FS_HZ, self.amplitude)


def _c3_for_spur(spur_dbc: float, amplitude: float) -> float:
    return -10 ** (spur_dbc / 20) * 4 / amplitude ** 2   # first order: c3·a³/4 against a


CAPTURES = [
    Capture("tone_snr20", "AWGN at 20 dB", 8192, FS_HZ * 0.1234567, 0.5, Channel(snr_db=20.0, seed=1), "ci16_le"),
    Capture("tone_snr40_cfo_gain", "gain -3 dB, CFO 123.4 Hz, AWGN at 40 dB", 8192, FS_HZ * 0.1234567, 0.5,
            Channel(gain_db=-3.0, cfo_hz=123.4, snr_db=40.0, seed=2), "ci16_le"),
    Capture("tone_spur60_cf32", "per-rail cubic for a -60 dBc spur at -3f, AWGN at 80 dB", 16384,
            FS_HZ * 0.0712345, 0.5, Channel(c3=_c3_for_spur(-60.0, 0.5), snr_db=80.0, seed=3), "cf32_le"),
    Capture("tone_iq_dc", "IQ imbalance 0.5 dB / 2 deg, DC 0.01+0.005j, AWGN at 60 dB", 8192, FS_HZ * 0.2345678, 0.5,
            Channel(iq_gain_db=0.5, iq_phase_deg=2.0, dc_offset=0.01 + 0.005j, snr_db=60.0, seed=4), "ci16_le"),
    Capture("tone_clean_ci16", "no impairment: the ci16 quantisation alone", 8192, FS_HZ * 0.1234567, 0.5,
            Channel(), "ci16_le"),
    # No CFO beside the cubic and the imbalance: the channel applies the CFO after them, so it
    # moves their spur and image off -3(f+cfo) and -(f+cfo), where the truth puts them.
    Capture("tone_negative_all", "a negative frequency with gain, cubic, IQ imbalance, DC and AWGN", 8192,
            -FS_HZ * 0.3012345, 0.7,
            Channel(gain_db=-1.0, c3=_c3_for_spur(-45.0, 0.7), iq_gain_db=0.2, iq_phase_deg=-1.0,
                    dc_offset=0.002 - 0.003j, snr_db=50.0, seed=6), "ci16_le"),
    # The simulator's multitone generator (rf::multitone) must give these samples to 1 LSB;
    # the analyzer takes the strongest tone, the others are its largest spurs.
    Capture("multitone_clean_ci16", "three tones (-6, -26, -46 dBFS), no impairment: the ci16 quantisation alone",
            8192, FS_HZ * 0.1234567, 0.5, Channel(), "ci16_le",
            tones=((FS_HZ * 0.1234567, 0.5), (-FS_HZ * 0.2109876, 0.05), (FS_HZ * 0.3456789, 0.005))),
    # The timing stage (SCO and fractional delay): deterministic, so the core's Channel::apply must
    # give these samples to float32's precision (gtest RfTiming.SharedCaptureIsTheCoresTimingStage).
    Capture("multitone_sco_delay_cf32", "three tones read by a clock 50 ppm fast, 2.37 samples late, gain -2 dB, "
            "no noise", 8192, FS_HZ * 0.1234567, 0.5, Channel(gain_db=-2.0, sco_ppm=50.0, delay_samples=2.37),
            "cf32_le", tones=((FS_HZ * 0.1234567, 0.5), (-FS_HZ * 0.2109876, 0.05), (FS_HZ * 0.3456789, 0.005))),
]


@dataclasses.dataclass(frozen=True)
class ModemCapture:
    """A modulated signal's capture: sample `start` of the stream on (the stream repeats
    modem.modem_frame's period), through the channel."""
    name: str
    description: str
    n: int
    start: int
    scheme: str
    samples_per_symbol: int
    rolloff: float
    amplitude: float
    payload_seed: int
    channel: Channel

    def signal(self) -> np.ndarray:
        f = modem.modem_frame(self.scheme, self.samples_per_symbol, self.rolloff, self.amplitude, self.payload_seed)
        return f.samples[(self.start + np.arange(self.n)) % len(f.samples)]


# How closely another implementation must reproduce the modulation analyzer's figures.
MODEM_TOLERANCE = {"evm_pct": 1e-4, "db": 1e-4, "cfo_hz": 1e-3, "phase_rad": 1e-6, "constellation": 1e-6,
                   "timing_samples": 1e-5, "sco_ppm": 1e-3}

MODEM_CAPTURES = [
    # One period of the frame, no impairment: rf::modem_frame must give these samples to 1 LSB.
    ModemCapture("qam16_frame_clean_ci16", "one period of the 16QAM frame (sps 4, rolloff 0.35, -12 dBFS RMS, "
                 "payload seed 7), no impairment", 4096, 0, "16qam", 4, 0.35, 0.25, 7, Channel()),
    ModemCapture("qam16_impaired_ci16", "16QAM from sample 1000 of the stream: gain -2 dB, CFO 3456.7 Hz, IQ "
                 "0.2 dB / 1 deg, AWGN at 25 dB", 16384, 1000, "16qam", 4, 0.35, 0.25, 7,
                 Channel(gain_db=-2.0, cfo_hz=3456.7, iq_gain_db=0.2, iq_phase_deg=1.0, snr_db=25.0, seed=21)),
    ModemCapture("qam64_snr12_sps2_ci16", "64QAM at 2 samples per symbol, rolloff 0.25, CFO -789 Hz, AWGN at "
                 "12 dB: bit errors", 8192, 3333, "64qam", 2, 0.25, 0.25, 123,
                 Channel(cfo_hz=-789.0, snr_db=12.0, seed=22)),
    ModemCapture("qpsk_sco_delay_ci16", "QPSK from sample 500 of the stream through the timing stage: SCO -15 ppm, "
                 "delay 0.37 samples, CFO 1500 Hz, AWGN at 25 dB", 16384, 500, "qpsk", 4, 0.35, 0.25, 31,
                 Channel(sco_ppm=-15.0, delay_samples=0.37, cfo_hz=1500.0, snr_db=25.0, seed=23)),
]


def modem_figures(a: modem.ModemAnalysis) -> dict[str, Any]:
    d = {k: _finite(v) for k, v in dataclasses.asdict(a).items() if k != "constellation"}
    d["constellation_head"] = [[float(v.real), float(v.imag)] for v in a.constellation[:16]]
    return d


def modem_metadata(c: ModemCapture) -> dict[str, Any]:
    ch = dataclasses.asdict(c.channel)
    ch["dc_offset"] = [c.channel.dc_offset.real, c.channel.dc_offset.imag]
    return {"name": c.name, "description": c.description, "file": f"{c.name}.bin", "datatype": "ci16_le",
            "n": c.n, "fs_hz": FS_HZ, "start": c.start,
            "modulation": {"scheme": c.scheme, "samples_per_symbol": c.samples_per_symbol, "rolloff": c.rolloff,
                           "amplitude": c.amplitude, "payload_seed": c.payload_seed},
            "channel": ch}


def encode(x: np.ndarray, datatype: str) -> bytes:
    if datatype == "ci16_le":
        q = quantize(x, 16) * CI16_FULL_SCALE
        rails = np.round(np.stack([q.real, q.imag], axis=1)).astype("<i2")
    elif datatype == "cf32_le":
        rails = np.stack([x.real, x.imag], axis=1).astype("<f4")
    else:
        raise ValueError(f"unknown datatype {datatype!r}")
    return rails.tobytes()


def read_capture(path: Path, datatype: str) -> np.ndarray:
    """The samples of a capture file as complex128 (ci16 over full scale 32767)."""
    if datatype == "ci16_le":
        rails = np.frombuffer(Path(path).read_bytes(), dtype="<i2").astype(np.float64) / CI16_FULL_SCALE
    elif datatype == "cf32_le":
        rails = np.frombuffer(Path(path).read_bytes(), dtype="<f4").astype(np.float64)
    else:
        raise ValueError(f"unknown datatype {datatype!r}")
    return rails[0::2] + 1j * rails[1::2]


def _finite(v: Any) -> Any:
    """JSON has no infinities: a figure that is ±inf (no spur above the noise) is null."""
    return v if not isinstance(v, float) or math.isfinite(v) else None


def figures(a: ToneAnalysis) -> dict[str, Any]:
    return {k: _finite(v) for k, v in dataclasses.asdict(a).items()}


def metadata(c: Capture) -> dict[str, Any]:
    truth = dataclasses.asdict(c.channel.tone_truth(c.freq_hz, c.amplitude))
    ch = dataclasses.asdict(c.channel)
    ch["dc_offset"] = [c.channel.dc_offset.real, c.channel.dc_offset.imag]
    signal: dict[str, Any] = {"kind": "tone", "freq_hz": c.freq_hz, "amplitude": c.amplitude}
    if c.tones:
        signal = {**signal, "kind": "multitone", "tones": [[f, a] for f, a in c.tones]}
    return {"name": c.name, "description": c.description, "file": f"{c.name}.bin", "datatype": c.datatype,
            "n": c.n, "fs_hz": FS_HZ, "signal": signal,
            "channel": ch,
            "truth": {k: _finite(v) for k, v in truth.items()}}


def build(out: Path) -> dict[str, Any]:
    index: dict[str, Any] = {
        "format": "hilrig RF vectors v1: <file> is n complex samples, datatype ci16_le (int16 I,Q; 1.0 = 32767) "
                  "or cf32_le (float32 I,Q); truth: the channel's analytic figures (hostlib.reference.rf.Channel."
                  "tone_truth); expected: hostlib.reference.rf.analyze_tone on the stored samples (null: +-inf); "
                  "see docs/rf.md",
        "tolerance": TOLERANCE, "vectors": []}
    for c in CAPTURES:
        x = c.channel.apply(c.signal(), FS_HZ)
        (out / f"{c.name}.bin").write_bytes(encode(x, c.datatype))
        stored = read_capture(out / f"{c.name}.bin", c.datatype)
        index["vectors"].append(dict(metadata(c), expected=figures(analyze_tone(stored, FS_HZ))))
    index["modem_tolerance"] = MODEM_TOLERANCE
    index["modem_vectors"] = []
    for m in MODEM_CAPTURES:
        x = m.channel.apply(m.signal(), FS_HZ)
        (out / f"{m.name}.bin").write_bytes(encode(x, "ci16_le"))
        stored = read_capture(out / f"{m.name}.bin", "ci16_le")
        entry = modem_metadata(m)
        if m.n >= modem.min_modem_samples(m.samples_per_symbol):
            mod = entry["modulation"]
            entry["expected"] = modem_figures(modem.analyze_modulation(
                stored, FS_HZ, mod["scheme"], mod["samples_per_symbol"], mod["rolloff"], mod["amplitude"],
                mod["payload_seed"]))
        index["modem_vectors"].append(entry)
    return index


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "docs" / "vectors" / "rf"))
    out = Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    index = build(out)
    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    print(f"wrote {len(index['vectors'])} RF captures to {out}")


if __name__ == "__main__":
    main()
