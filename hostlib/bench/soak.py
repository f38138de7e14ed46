"""python -m hostlib.bench.soak  (make soak; not part of make test).

For UDP and shm: find the simulator's zero-loss rate, then stream at 80 % of it for
SOAK_S seconds (default 600) and watch this process and the simulator: RSS and open
file descriptors must stay flat (growth after the first tenth of the run at most
SOAK_RSS_MIB MiB and 0 fds), loss must be 0. One table; the exit status is 1 if any
row fails.

The zero-loss rate: the bench's search (hostlib/bench/search.py) with 2 s windows,
halving down from the simulator's 1 GS/s and then bisecting, finds the highest lossless
rate (no missing frame, overrun or pattern error); a 2 s window misses rare losses, so
that rate must then stay lossless over SOAK_CONFIRM_S (20 s) twice (confirm, then
re-check); a rate that loses in either is dropped for 90 %, 80 %, 70 %, then halvings
of it, confirmed the same way. The table says which rate was used and why.

Environment: SOAK_S (600; e.g. SOAK_S=60 for a short check of the tool),
SOAK_CONFIRM_S (20), SOAK_ONLY=udp|shm, SOAK_RSS_MIB (16).
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

from .._process import processes
from ..dsl import load_cases
from ..engine import run_case
from ..rig import load_rig
from .search import Found, zero_loss_rate

REPO = Path(__file__).resolve().parents[2]
CLOCK_HZ = 1e9        # the simulator's clock: the search's upper bound (decimation 1)
FRAME_BYTES = {"udp": 8000, "shm": 65584}
LOSS = ("missing_frames", "overruns", "pattern_errors", "dropped_samples")
SEARCH_S = 2.0        # the search's windows
CONFIRM_RUNS = 2      # confirm, then re-check
SOAK_SHARE = 0.8      # the soak runs at this share of the confirmed zero-loss rate


def _case(kind: str, duration_s: float, rate_sps: float):
    text = textwrap.dedent(f"""\
        name: soak {kind}
        device: dut
        direction: rx
        master_clock: {rate_sps * 4 / 1e6:.6f} MHz
        decimation: 4
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


def _loss_text(r) -> str:
    """What a run lost (or why it ended), in a few words."""
    if r.error:
        return f"ERROR {r.error}"
    m = r.metrics
    return ", ".join(f"{m[k]:g} {k}" for k in ("missing_frames", "overruns", "pattern_errors") if k in m)


def _rate_text(rate_sps: float) -> str:
    return f"{rate_sps / 1e6:.4g} MS/s"


@dataclass(frozen=True)
class Trial:
    """One search or confirm run: lossless or what it lost."""
    ok: bool
    loss: str = ""


def find_rate(kind: str, rig, confirm_s: float, say=print) -> Found[Trial]:
    """The bench's search at SEARCH_S, confirmed over confirm_s CONFIRM_RUNS times."""
    def run_at(rate_sps: float, seconds: float) -> Trial:
        say(f"{kind}:   {_rate_text(rate_sps)} over {seconds:g} s ...")
        r = run_case(_case(kind, seconds, rate_sps), rig, run_id="soak-search")
        ok = r.error is None and _lossless(r.metrics)
        return Trial(ok, "" if ok else _loss_text(r))

    return zero_loss_rate(run_at, CLOCK_HZ, SEARCH_S, confirm_s=confirm_s, confirm_runs=CONFIRM_RUNS)


def why(found: Found[Trial], confirm_s: float) -> str:
    """One line for the table: which rate and why."""
    top = max((w.rate for w in found.windows if w.phase == "search" and w.outcome.ok), default=0.0)
    if not top:
        return f"nothing lossless over {SEARCH_S:g} s"
    text = f"{SEARCH_S:g} s search lossless to {_rate_text(top)}"
    dropped = len({w.rate for w in found.windows if w.phase == "confirm" and not w.outcome.ok})
    if dropped:
        text += f"; {dropped} rate(s) lost over {confirm_s:g} s"
    if found.rate:
        return text + f"; {_rate_text(found.rate)} lossless {CONFIRM_RUNS} x {confirm_s:g} s"
    return text + "; none confirmed"


def _proc_rss_fds(pid: int) -> tuple[float, int]:
    rss_kib = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kib = int(line.split()[1])
    return rss_kib / 1024, len(os.listdir(f"/proc/{pid}/fd"))


@dataclass
class Watch:
    """RSS (MiB) and fds of this process and the simulator, once a second."""
    samples: list[tuple[float, float, int, float, int]] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)   # 1-minute load average: the machine is shared

    def __call__(self, row: dict) -> None:
        rss, fds = _proc_rss_fds(os.getpid())
        sims = sorted(processes("hilrig-sim", parent=os.getpid()))
        srss, sfds = _proc_rss_fds(sims[0]) if sims else (0.0, 0)
        self.samples.append((row["t_s"], rss, fds, srss, sfds))
        self.loads.append(os.getloadavg()[0])

    def growth(self) -> tuple[float, int, float, int]:
        """Growth from the end of the first tenth of the run to its end."""
        if len(self.samples) < 3:
            return 0.0, 0, 0.0, 0
        first = self.samples[max(1, len(self.samples) // 10)]
        last = self.samples[-1]
        return last[1] - first[1], last[2] - first[2], last[3] - first[3], last[4] - first[4]


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main() -> int:
    soak_s = float(os.environ.get("SOAK_S", "600"))
    confirm_s = float(os.environ.get("SOAK_CONFIRM_S", "20"))
    rss_limit = float(os.environ.get("SOAK_RSS_MIB", "16"))
    kinds = [k for k in ("udp", "shm") if os.environ.get("SOAK_ONLY", k) == k]
    rig = load_rig(REPO / "rigs" / "sim.yaml")
    console = Console(width=max(Console().width, 200))
    table = Table(title=f"make soak: {soak_s:g} s at {SOAK_SHARE:.0%} of the zero-loss rate (simulator, RX; "
                        f"zero-loss = {SEARCH_S:g} s search, then {CONFIRM_RUNS} x {confirm_s:g} s lossless)")
    for col in ("link", "zero-loss rate (why)", "soak rate", "window", "samples", "missing", "O", "pattern",
                "host RSS MiB (start->end)", "sim RSS MiB", "fds host/sim", "load 1 min (start/max)", "verdict"):
        table.add_column(col)
    failed = False
    for kind in kinds:
        console.print(f"{kind}: searching the zero-loss rate (load {_load()}) ...")
        found = find_rate(kind, rig, confirm_s, say=console.print)
        how = why(found, confirm_s)
        for w in found.windows:
            console.print(f"{kind}:   {w.seconds:g} s {w.phase}: {_rate_text(w.rate)} "
                          + ("lossless" if w.outcome.ok else f"lost ({w.outcome.loss})"))
        if not found.rate:
            table.add_row(kind, f"none ({how})", *("-",) * 10, "FAIL (no lossless rate)")
            failed = True
            continue
        best = found.rate
        rate = SOAK_SHARE * best
        load0 = _load()
        console.print(f"{kind}: zero-loss {_rate_text(best)}; soaking {soak_s:g} s at {_rate_text(rate)} "
                      f"(load {load0}) ...")
        watch = Watch()
        t0 = time.monotonic()
        r = run_case(_case(kind, soak_s, rate), rig, run_id="soak", progress=watch)
        m = r.metrics
        d_rss, d_fds, d_srss, d_sfds = watch.growth()
        first, last = (watch.samples[0], watch.samples[-1]) if watch.samples else ((0,) * 5, (0,) * 5)
        ok = (r.error is None and _lossless(m) and d_rss <= rss_limit and d_srss <= rss_limit
              and d_fds <= 0 and d_sfds <= 0)
        failed |= not ok
        verdict = "PASS" if ok else f"FAIL {r.error or ''}".strip()
        if m.get("host_limited"):
            verdict += " (host-limited: rig CPU saturated)"
        window = f"{m.get('duration_s', time.monotonic() - t0):.0f} s"
        table.add_row(
            kind, f"{_rate_text(best)} ({how})", _rate_text(rate), window,
            f"{m.get('samples_received', 0):.4g}", f"{m['missing_frames']:g}" if "missing_frames" in m else "-",
            f"{m.get('overruns', 0):g}", f"{m.get('pattern_errors', 0):g}",
            f"{first[1]:.1f}->{last[1]:.1f} ({d_rss:+.1f})", f"{first[3]:.1f}->{last[3]:.1f} ({d_srss:+.1f})",
            f"{first[2]}->{last[2]} / {first[4]}->{last[4]}", f"{load0}/{max(watch.loads, default=0.0):.2f}", verdict)
    console.print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
