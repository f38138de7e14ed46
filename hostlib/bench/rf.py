"""RF rows of the bench: the native tone analyzer, channel and stream-rate signal source
beside the Python reference (numpy, the way a lab script would do it) on the same
samples, in CPU seconds of this process (both run on one core; a loaded machine
stretches wall time, not CPU time). Each side is the best of `repeats` runs, the peer
measured in the same run. The issue's marks, in the rows' limit column: a 1 s capture at
10 MS/s analyzed in <= 0.2 s, the channel with every impairment on generating >= 100 MS/s
sc16 (the simulator's stream-rate path: rf::SignalSource frame by frame)."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

from ..reference.rf import Channel, analyze_tone, quantize, tone
from .record import BenchRow

Row = tuple[str, str, str, str, str, str, str, str, str]
FS_HZ = 10e6
SC16_BYTES = 4          # what a sample of the stream's format weighs: the rows' B/s are of sc16
ANALYZER_MARK_S = 0.2   # per 1 s capture at 10 MS/s
CHANNEL_MARK_SPS = 100e6
SAMPLES_PER_FRAME = 2000  # an 8000-byte sc16 payload


def _best_cpu_s(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(max(1, repeats)):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def rows(n: int = 10_000_000, repeats: int = 5, peer_repeats: int = 1) -> list[tuple[Row, BenchRow]]:
    """The analyzer row, the channel row (complex128 in and out) and the stream source row
    (sc16 frames). `peer_repeats` for the reference, whose analyzer takes ~30 s a run."""
    from .. import _native

    # The analyzer's capture: every impairment on but the CFO beside the cubic and imbalance (docs/rf.md).
    capture_channel = Channel(gain_db=-1.0, snr_db=60.0, iq_gain_db=0.2, iq_phase_deg=1.0,
                              dc_offset=0.001 + 0.002j, c3=-0.01, seed=1)
    # The channel rows: every impairment on: the CFO, the timing stage and phase noise too.
    channel = dataclasses.replace(capture_channel, cfo_hz=1234.5, sco_ppm=25.0, delay_samples=0.37,
                                  phase_noise_hz=10.0)
    f_hz = FS_HZ * 0.1234567
    x = tone(n, f_hz, FS_HZ, 0.5)
    capture = _native.RfChannel(**dataclasses.asdict(capture_channel)).apply(x, FS_HZ)
    rig_an_s = _best_cpu_s(lambda: _native.analyze_tone(capture, FS_HZ), repeats)
    peer_an_s = _best_cpu_s(lambda: analyze_tone(capture, FS_HZ), peer_repeats)

    native_channel = _native.RfChannel(**dataclasses.asdict(channel))
    rig_ch_s = _best_cpu_s(lambda: native_channel.apply(x, FS_HZ), repeats)
    peer_ch_s = _best_cpu_s(lambda: channel.apply(x, FS_HZ), peer_repeats)

    frames = max(1, n // SAMPLES_PER_FRAME)
    stream_n = frames * SAMPLES_PER_FRAME
    source = _native.RfSignalSource([(f_hz, 0.5, 0.0)], native_channel, FS_HZ)
    # Into one array, written once before the clock: the simulator fills reused frame
    # buffers, and a fresh 40 MB array's first-touch page faults would be counted instead.
    frames_out = np.zeros(2 * stream_n, dtype=np.int16)
    rig_src_s = _best_cpu_s(lambda: source.fill_frames(0, frames, SAMPLES_PER_FRAME, into=frames_out), repeats)
    # The same in numpy: the tone, the channel, sc16 rails interleaved.

    def numpy_sc16() -> np.ndarray:
        y = quantize(channel.apply(tone(stream_n, f_hz, FS_HZ, 0.5), FS_HZ), 16) * 32767
        return np.stack([y.real, y.imag], axis=1).astype(np.int16).ravel()
    peer_src_s = _best_cpu_s(numpy_sc16, peer_repeats)

    size = f"{n / 1e6:g} MS"
    best = f", best of {repeats} (peer {peer_repeats})"
    label_an = f"RF tone analyzer, {n / FS_HZ:g} s at 10 MS/s{best}"
    label_ch = f"RF channel, all impairments, complex128{best}"
    label_src = f"RF signal source, all impairments, sc16 frames{best}"
    rig_sps, peer_sps = n / rig_ch_s, n / peer_ch_s
    src_sps, peer_src_sps = stream_n / rig_src_s, stream_n / peer_src_s
    an_mark = ANALYZER_MARK_S * n / FS_HZ  # the mark scales with the capture's length
    return [
        ((label_an, size, f"{rig_an_s:.3f} s CPU", "-", "reference (numpy)", f"{peer_an_s:.2f} s CPU",
          f"{rig_an_s / peer_an_s:.4f}", f"<= {an_mark:.3g} s ({_met(rig_an_s <= an_mark)})",
          f"{rig_an_s / an_mark:.2f}"),
         BenchRow(label_an, n * SC16_BYTES, peer="reference (numpy)", ratio=rig_an_s / peer_an_s,
                  rig_s=rig_an_s, peer_s=peer_an_s, limit=f"<= {an_mark:.3g} s CPU",
                  limit_ratio=rig_an_s / an_mark)),
        ((label_ch, size, f"{rig_sps / 1e6:.1f} MS/s", "-", "reference (numpy)", f"{peer_sps / 1e6:.1f} MS/s",
          f"{rig_sps / peer_sps:.2f}", "-", "-"),
         BenchRow(label_ch, n * SC16_BYTES, rig_sps * SC16_BYTES, peer="reference (numpy)",
                  peer_Bps=peer_sps * SC16_BYTES, ratio=rig_sps / peer_sps)),
        ((label_src, f"{stream_n / 1e6:g} MS", f"{src_sps / 1e6:.1f} MS/s", "-", "reference (numpy) + quantize",
          f"{peer_src_sps / 1e6:.1f} MS/s", f"{src_sps / peer_src_sps:.2f}",
          f">= {CHANNEL_MARK_SPS / 1e6:g} MS/s sc16 ({_met(src_sps >= CHANNEL_MARK_SPS)})",
          f"{src_sps / CHANNEL_MARK_SPS:.2f}"),
         BenchRow(label_src, stream_n * SC16_BYTES, src_sps * SC16_BYTES, peer="reference (numpy) + quantize",
                  peer_Bps=peer_src_sps * SC16_BYTES, ratio=src_sps / peer_src_sps,
                  limit=f">= {CHANNEL_MARK_SPS / 1e6:g} MS/s sc16", limit_Bps=CHANNEL_MARK_SPS * SC16_BYTES,
                  limit_ratio=src_sps / CHANNEL_MARK_SPS)),
    ]
