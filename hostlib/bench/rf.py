"""RF rows of the bench: the native tone analyzer and channel beside the Python reference
(numpy, the way a lab script would do it) on the same samples, in CPU seconds of the
calling thread's process (both run on one core; a loaded machine stretches wall time,
not CPU time). The issue's marks: a 1 s capture at 10 MS/s analyzed in <= 0.2 s, the
channel with every impairment on at >= 100 MS/s."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

from ..reference.rf import Channel, analyze_tone, tone
from .record import BenchRow

Row = tuple[str, str, str, str, str, str, str]
FS_HZ = 10e6
SC16_BYTES = 4          # what a sample of the stream's format weighs: the rows' B/s are of sc16


def _cpu_s(fn: Callable[[], object]) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def rows(n: int = 10_000_000) -> list[tuple[Row, BenchRow]]:
    from .. import _native

    # Every impairment on but the CFO beside the cubic and imbalance (docs/rf.md).
    channel = Channel(gain_db=-1.0, snr_db=60.0, iq_gain_db=0.2, iq_phase_deg=1.0, dc_offset=0.001 + 0.002j,
                      c3=-0.01, seed=1)
    x = tone(n, FS_HZ * 0.1234567, FS_HZ, 0.5)
    native_channel = _native.RfChannel(**dataclasses.asdict(channel))
    y: list[np.ndarray] = []
    rig_ch_s = _cpu_s(lambda: y.append(native_channel.apply(x, FS_HZ)))
    peer_ch_s = _cpu_s(lambda: channel.apply(x, FS_HZ))
    capture = y[0]
    rig_an_s = _cpu_s(lambda: _native.analyze_tone(capture, FS_HZ))
    peer_an_s = _cpu_s(lambda: analyze_tone(capture, FS_HZ))
    size = f"{n / 1e6:g} MS"
    label_an, label_ch = f"RF tone analyzer, {n / FS_HZ:g} s at 10 MS/s", "RF channel, all impairments"
    rig_sps, peer_sps = n / rig_ch_s, n / peer_ch_s
    return [
        ((label_an, size, f"{rig_an_s:.2f} s CPU", "-", "reference (numpy)", f"{peer_an_s:.2f} s CPU",
          f"{rig_an_s / peer_an_s:.3f}"),
         BenchRow(label_an, n * SC16_BYTES, peer="reference (numpy)", ratio=rig_an_s / peer_an_s,
                  rig_s=rig_an_s, peer_s=peer_an_s)),
        ((label_ch, size, f"{rig_sps / 1e6:.1f} MS/s", "-", "reference (numpy)", f"{peer_sps / 1e6:.1f} MS/s",
          f"{rig_sps / peer_sps:.2f}"),
         BenchRow(label_ch, n * SC16_BYTES, rig_sps * SC16_BYTES, peer="reference (numpy)",
                  peer_Bps=peer_sps * SC16_BYTES, ratio=rig_sps / peer_sps)),
    ]
