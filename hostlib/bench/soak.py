"""python -m hostlib.bench.soak  (make soak; not part of make test).

For UDP and shm: find the simulator's zero-loss rate, then stream at 80 % of it for
SOAK_S seconds (default 600) and watch this process and the simulator: RSS and open
file descriptors must stay flat (growth after the first tenth of the run at most
SOAK_RSS_MIB MiB and 0 fds), loss must be 0. One table; the exit status is 1 if any
row fails.

The zero-loss rate: 2 s runs up a ladder of decimations of a 1 GHz clock find the
highest lossless rung (no missing frame, overrun or pattern error); a 2 s window
misses rare losses, so that rung must then stay lossless over SOAK_CONFIRM_S (20 s)
twice (confirm, then re-check); a rung that loses in either is dropped and the next
lower one confirmed the same way. The table says which rate was used and why.

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

from ..dsl import load_cases
from ..engine import run_case
from ..rig import load_rig

REPO = Path(__file__).resolve().parents[2]
CLOCK_HZ = 1e9
LADDER = (1000, 400, 200, 100, 50, 25, 16, 10, 8, 5, 4, 2, 1)   # decimations: 1 MS/s .. 1 GS/s
FRAME_BYTES = {"udp": 8000, "shm": 65584}
LOSS = ("missing_frames", "overruns", "pattern_errors", "dropped_samples")
LADDER_S = 2.0
CONFIRM_RUNS = 2      # confirm, then re-check
SOAK_SHARE = 0.8      # the soak runs at this share of the confirmed zero-loss rate


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


def _loss_text(r) -> str:
    """What a run lost (or why it ended), in a few words."""
    if r.error:
        return f"ERROR {r.error}"
    m = r.metrics
    return ", ".join(f"{m[k]:g} {k}" for k in ("missing_frames", "overruns", "pattern_errors") if k in m)


def _rate_text(rate_sps: float) -> str:
    return f"{rate_sps / 1e6:g} MS/s"


@dataclass
class Search:
    """The zero-loss rate of one link and how it was found."""
    rate_sps: float = 0.0
    steps: list[str] = field(default_factory=list)
    ladder_top_sps: float = 0.0    # the highest rung lossless over LADDER_S
    rungs_dropped: int = 0         # rungs above the result that lost in a confirm run
    confirm_s: float = 0.0

    def why(self) -> str:
        """One line for the table: which rate and why."""
        if not self.ladder_top_sps:
            return f"no rung lossless over {LADDER_S:g} s"
        text = f"{LADDER_S:g} s ladder lossless to {_rate_text(self.ladder_top_sps)}"
        if self.rungs_dropped:
            text += f"; {self.rungs_dropped} rung(s) lost over {self.confirm_s:g} s"
        if self.rate_sps:
            return text + f"; {_rate_text(self.rate_sps)} lossless {CONFIRM_RUNS} x {self.confirm_s:g} s"
        return text + "; none confirmed"


def zero_loss_rate(kind: str, rig, confirm_s: float, say=print) -> Search:
    """Ladder at LADDER_S, then confirm the best rung over confirm_s, CONFIRM_RUNS times;
    step down a rung on any loss."""
    found = Search(confirm_s=confirm_s)
    passed: list[int] = []
    for decimation in LADDER:
        r = run_case(_case(kind, decimation, LADDER_S), rig, run_id="soak-search")
        if r.error is None and _lossless(r.metrics):
            passed.append(decimation)
            continue
        found.steps.append(f"{LADDER_S:g} s ladder: {_rate_text(CLOCK_HZ / decimation)} lost ({_loss_text(r)})")
        break
    if passed:
        found.ladder_top_sps = CLOCK_HZ / passed[-1]
        found.steps.insert(0, f"{LADDER_S:g} s ladder: lossless up to {_rate_text(found.ladder_top_sps)}")
    for decimation in reversed(passed):
        rate = CLOCK_HZ / decimation
        say(f"{kind}: confirming {_rate_text(rate)} over {CONFIRM_RUNS} x {confirm_s:g} s ...")
        for run in range(CONFIRM_RUNS):
            r = run_case(_case(kind, decimation, confirm_s), rig, run_id="soak-confirm")
            if r.error is not None or not _lossless(r.metrics):
                found.steps.append(f"{confirm_s:g} s confirm #{run + 1}: {_rate_text(rate)} lost ({_loss_text(r)})")
                found.rungs_dropped += 1
                break
        else:
            found.rate_sps = rate
            found.steps.append(f"{confirm_s:g} s x {CONFIRM_RUNS}: {_rate_text(rate)} lossless")
            break
    return found


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
    loads: list[float] = field(default_factory=list)   # 1-minute load average: the machine is shared

    def __call__(self, row: dict) -> None:
        rss, fds = _proc_rss_fds(os.getpid())
        sims = _children()
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
                        f"zero-loss = {LADDER_S:g} s ladder, then {CONFIRM_RUNS} x {confirm_s:g} s lossless)")
    for col in ("link", "zero-loss rate (why)", "soak rate", "window", "samples", "missing", "O", "pattern",
                "host RSS MiB (start->end)", "sim RSS MiB", "fds host/sim", "load 1 min (start/max)", "verdict"):
        table.add_column(col)
    failed = False
    for kind in kinds:
        console.print(f"{kind}: searching the zero-loss rate (load {_load()}) ...")
        search = zero_loss_rate(kind, rig, confirm_s, say=console.print)
        how = search.why()
        for step in search.steps:
            console.print(f"{kind}:   {step}")
        if not search.rate_sps:
            table.add_row(kind, f"none ({how})", *("-",) * 10, "FAIL (no lossless rate)")
            failed = True
            continue
        best = search.rate_sps
        rate = SOAK_SHARE * best
        load0 = _load()
        console.print(f"{kind}: zero-loss {_rate_text(best)}; soaking {soak_s:g} s at {_rate_text(rate)} "
                      f"(load {load0}) ...")
        watch = Watch()
        t0 = time.monotonic()
        r = run_case(_case(kind, None, soak_s, rate_sps=rate), rig, run_id="soak", progress=watch)
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
