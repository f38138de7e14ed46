"""python -m hostlib.bench.soak  (make soak; not part of make test).

For UDP and shm: find the simulator's zero-loss rate (2 s runs up a ladder of
decimations of a 1 GHz clock, the highest rate with no missing frame, overrun or
pattern error), then stream at 80 % of it for SOAK_S seconds (default 600) and
watch this process and the simulator: RSS and open file descriptors must stay flat
(growth after the first tenth of the run at most SOAK_RSS_MIB MiB and 0 fds), loss
must be 0. One table; the exit status is 1 if any row fails.

Environment: SOAK_S (600), SOAK_ONLY=udp|shm, SOAK_RSS_MIB (16).
"""
from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..dsl import load_cases
from ..engine import run_case
from ..rig import load_rig

REPO = Path(__file__).resolve().parents[2]
CLOCK_HZ = 1e9
LADDER = (1000, 400, 200, 100, 50, 25, 16, 10, 8, 5, 4, 2, 1)   # decimations: 1 MS/s .. 1 GS/s
FRAME_BYTES = {"udp": 8000, "shm": 65584}
LOSS = ("missing_frames", "overruns", "pattern_errors", "dropped_samples")


def _case(kind: str, decimation: int | None, duration_s: float, rate_sps: float | None = None):
    clock = f"{CLOCK_HZ / 1e6:g} MHz" if rate_sps is None else f"{rate_sps * 4 / 1e6:.6f} MHz"
    text = textwrap.dedent(f"""\
        name: soak {kind}
        device: dut
        direction: rx
        master_clock: {clock}
        decimation: {decimation or 4}
        transport: {{kind: {kind}, frame_bytes: {FRAME_BYTES[kind]}}}
        warmup: 200 ms
        duration: {duration_s} s
        timeout: {duration_s + 60} s
        """)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    try:
        return load_cases([f.name])[0]
    finally:
        os.unlink(f.name)


def _lossless(metrics: dict) -> bool:
    return bool(metrics.get("samples_received")) and all(metrics.get(k, 1) == 0 for k in LOSS)


def zero_loss_rate(kind: str, rig) -> float:
    best = 0.0
    for decimation in LADDER:
        r = run_case(_case(kind, decimation, 2.0), rig, run_id="soak-search")
        if r.error is None and _lossless(r.metrics):
            best = CLOCK_HZ / decimation
        else:
            break
    return best


def _proc_rss_fds(pid: int) -> tuple[float, int]:
    rss_kib = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kib = int(line.split()[1])
    return rss_kib / 1024, len(os.listdir(f"/proc/{pid}/fd"))


def _children(name: str = "hilrig-sim") -> list[int]:
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == me and stat[stat.index("(") + 1:stat.rindex(")")] == name:
                found.append(int(entry.name))
    return found


@dataclass
class Watch:
    """RSS (MiB) and fds of this process and the simulator, once a second."""
    samples: list[tuple[float, float, int, float, int]] = field(default_factory=list)

    def __call__(self, row: dict) -> None:
        rss, fds = _proc_rss_fds(os.getpid())
        sims = _children()
        srss, sfds = _proc_rss_fds(sims[0]) if sims else (0.0, 0)
        self.samples.append((row["t_s"], rss, fds, srss, sfds))

    def growth(self) -> tuple[float, int, float, int]:
        """Growth from the end of the first tenth of the run to its end."""
        if len(self.samples) < 3:
            return 0.0, 0, 0.0, 0
        first = self.samples[max(1, len(self.samples) // 10)]
        last = self.samples[-1]
        return last[1] - first[1], last[2] - first[2], last[3] - first[3], last[4] - first[4]


def main() -> int:
    soak_s = float(os.environ.get("SOAK_S", "600"))
    rss_limit = float(os.environ.get("SOAK_RSS_MIB", "16"))
    kinds = [k for k in ("udp", "shm") if os.environ.get("SOAK_ONLY", k) == k]
    rig = load_rig(REPO / "rigs" / "sim.yaml")
    console = Console(width=max(Console().width, 170))
    table = Table(title=f"make soak: {soak_s:g} s at 80 % of the zero-loss rate (simulator, RX)")
    for col in ("link", "zero-loss rate", "soak rate", "window", "samples", "missing", "O", "pattern",
                "host RSS MiB (start->end)", "sim RSS MiB", "fds host/sim", "verdict"):
        table.add_column(col)
    failed = False
    for kind in kinds:
        console.print(f"[{kind}] searching the zero-loss rate ...")
        best = zero_loss_rate(kind, rig)
        if not best:
            table.add_row(kind, "none", "-", "-", "-", "-", "-", "-", "-", "-", "-", "FAIL (no lossless rate)")
            failed = True
            continue
        rate = 0.8 * best
        console.print(f"[{kind}] zero-loss {best / 1e6:g} MS/s; soaking {soak_s:g} s at {rate / 1e6:g} MS/s ...")
        watch = Watch()
        t0 = time.monotonic()
        r = run_case(_case(kind, None, soak_s, rate_sps=rate), rig, run_id="soak", progress=watch)
        m = r.metrics
        d_rss, d_fds, d_srss, d_sfds = watch.growth()
        first, last = (watch.samples[0], watch.samples[-1]) if watch.samples else ((0,) * 5, (0,) * 5)
        ok = (r.error is None and _lossless(m) and d_rss <= rss_limit and d_srss <= rss_limit
              and d_fds <= 0 and d_sfds <= 0)
        failed |= not ok
        table.add_row(
            kind, f"{best / 1e6:g} MS/s", f"{rate / 1e6:g} MS/s", f"{m.get('duration_s', time.monotonic() - t0):.0f} s",
            f"{m.get('samples_received', 0):.4g}",
            f"{m.get('missing_frames', '-'):g}" if "missing_frames" in m else "-",
            f"{m.get('overruns', 0):g}", f"{m.get('pattern_errors', 0):g}",
            f"{first[1]:.1f}->{last[1]:.1f} ({d_rss:+.1f})", f"{first[3]:.1f}->{last[3]:.1f} ({d_srss:+.1f})",
            f"{first[2]}->{last[2]} / {first[4]}->{last[4]}",
            "PASS" if ok else f"FAIL {r.error or ''}".strip())
    console.print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
