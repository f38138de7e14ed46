"""RTL in the loop beside the C++ simulator (make bench, BENCH_ONLY=rtl): RX sc16 over shm
in the RTL image's frames (1040 bytes, 248 samples), every sample checked by the host's
RxStream. The highest clean rate of each device core of the sim rig (`rtl`: the Verilator
model of firmware/rtl/loopback_top, clocked at rate x decimation 1 = one sample per clock;
`dut`: the C++ core), found in the same run by the bench's search (hostlib/bench/search.py).
Clean: no missing frame, no pattern error, no overflow, no model pause, and >= 99 % of the
rate's samples received."""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..drivers.sim import SimDriver
from ..dsl import load_cases
from ..rig import load_rig
from .record import BenchRow
from .search import zero_loss_rate

FRAME_BYTES = 1040          # the RTL image's frame (firmware/images.yaml hilrig-loopback-rtl)
SAMPLES_PER_FRAME = 248
REPO = Path(__file__).resolve().parents[2]
# The searches' upper bounds: the rtl device's max_rate in rigs/sim.yaml (the model runs
# up to ~20 M clocks per CPU second, one sample per clock; the first window is at half,
# the 10 MS/s target), and twice the 1.28 GS/s the C++ core has held in these frames.
RTL_CEILING_SPS = 20e6
CPP_CEILING_SPS = 2.56e9

CASE = """
name: bench {alias} RX {rate:g} S/s
device: {alias}
direction: rx
master_clock: {rate:g} Hz
decimation: 1
transport: {{kind: shm, frame_bytes: {frame_bytes}}}
duration: {seconds:g} s
thresholds: {{missing_frames: "== 0"}}
"""


@dataclass
class Trial:
    rate_sps: float
    checked_sps: float          # samples the host received and checked, per second
    ok: bool                    # clean: nothing lost, >= 99 % of the rate checked
    model_cycles_per_s: float   # 0 for the C++ core
    model_cycles_per_cpu_s: float  # per second of CPU time of the thread clocking it (the model's own speed)
    detail: str


def trial(alias: str, rate_sps: float, seconds: float) -> Trial:
    rig = load_rig(REPO / "rigs" / "sim.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.yaml"
        path.write_text(CASE.format(alias=alias, rate=rate_sps, frame_bytes=FRAME_BYTES, seconds=seconds))
        [case] = load_cases([path])
    driver = SimDriver(rig.devices[alias])
    driver.open()
    try:
        driver.configure(case)
        driver.start()
        time.sleep(seconds)
        final = driver.stop()
    finally:
        driver.close()
    rx, dev = final.host_rx, final.device
    # Over the stream as the host saw it: first to last frame received (every one checked).
    span_s = max(float(rx.get("last_frame_ns", 0)) - float(rx.get("first_frame_ns", 0)), 1.0) / 1e9
    checked_sps = float(rx.get("frames_received", 0)) * SAMPLES_PER_FRAME / span_s
    cycles_per_s = float(dev.get("rtl_cycles", 0)) / span_s
    cpu_s = float(dev.get("rtl_thread_cpu_ns", 0)) / 1e9
    cycles_per_cpu_s = float(dev.get("rtl_cycles", 0)) / cpu_s if cpu_s else 0.0
    counts = (("missing", rx.get("missing_frames", 0)), ("pattern_err", rx.get("pattern_errors", 0)),
              ("overflow", dev.get("overflow_frames", 0)), ("pauses", dev.get("rtl_pauses", 0)))
    bad: dict[str, object] = {k: v for k, v in counts if v}
    ok = not bad and checked_sps >= 0.99 * rate_sps
    if not bad and not ok:
        bad["received"] = f"{checked_sps / rate_sps:.1%}"
    detail = " ".join(f"{k}={v}" for k, v in bad.items())
    return Trial(rate_sps, checked_sps, ok, cycles_per_s, cycles_per_cpu_s, detail)


def rows(window_s: float) -> list[tuple[tuple, BenchRow]]:
    """(table row, BenchRow) for __main__."""
    seconds = max(2.0, 2 * window_s)
    rtl_found = zero_loss_rate(lambda rate, s: trial("rtl", rate, s), RTL_CEILING_SPS, seconds)
    cpp_found = zero_loss_rate(lambda rate, s: trial("dut", rate, s), CPP_CEILING_SPS, seconds / 2)
    rtl, cpp = rtl_found.outcome, cpp_found.outcome

    def show(t: Trial | None, last: Trial | None, rtl_core: bool) -> str:
        if t is None:
            if last is None:
                return "none clean"
            return f"none clean (at {last.rate_sps / 1e6:g} MS/s: {last.checked_sps / 1e6:.2f} MS/s {last.detail})"
        text = f"{t.checked_sps / 1e6:6.2f} MS/s checked at {t.rate_sps / 1e6:g} MS/s"
        if rtl_core:
            text += (f", model {t.model_cycles_per_s / 1e6:.2f} M cycles/s "
                     f"({t.model_cycles_per_cpu_s / 1e6:.1f} M per CPU s)")
        return text

    ratio = rtl.checked_sps / cpp.checked_sps if rtl and cpp else None
    row = ("RTL in the loop RX sc16 shm, checked", f"{FRAME_BYTES} B", show(rtl, rtl_found.last, True), "-",
           "C++ sim core, same frames", show(cpp, cpp_found.last, False), f"{ratio:.3f}" if ratio else "n/a")
    data = BenchRow(row="RTL in the loop RX sc16 shm, checked", size_bytes=FRAME_BYTES,
                    rig_Bps=rtl.checked_sps * 4 if rtl else None,
                    rig_fps=rtl.checked_sps / SAMPLES_PER_FRAME if rtl else None,
                    peer="C++ sim core, same frames", peer_Bps=cpp.checked_sps * 4 if cpp else None,
                    peer_fps=cpp.checked_sps / SAMPLES_PER_FRAME if cpp else None, ratio=ratio)
    return [(row, data)]


if __name__ == "__main__":
    for r, _ in rows(1.0):
        print(" | ".join(str(x) for x in r))
