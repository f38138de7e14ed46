"""The spsc row group: the lab's SPSC study on hilrig's ring (`hilrig-bench spsc`).

Two threads, a request ring and a response ring, a client keeping QD requests in
flight; every publish strategy of the ring and Boost.Lockfree's spsc_queue, min and
median Mops/s (requests answered per second) of N interleaved runs, beside the seed's
published minimums (24-byte payload, 3 s runs, on the lab's machine); one-way latency
at QD 1 and the cache-line ping-pong bound measured in the same run.
"""
from __future__ import annotations

import statistics
from typing import Protocol

from rich.table import Table

PAYLOADS = (24, 256, 8192)
QDS = (1, 32, 256)

# The seed's table (min Mops/s of 3 s runs, 24-byte payload): our strategy -> the
# lab's row it corresponds to, and its figures at QD 1, 32, 256.
SEED: dict[str, tuple[str, tuple[float, float, float]]] = {
    "batched": ("index, batched publish", (0.94, 51.0, 63.7)),
    "immediate": ("index, immediate publish", (1.23, 21.2, 17.8)),
    "lamport": ("Lamport", (1.22, 46.5, 61.9)),
    "flag": ("FastForward", (3.68, 40.0, 38.3)),
    "adaptive": ("adaptive (generation in slot)", (4.90, 38.35, 41.40)),
}
SEED_OTHERS = "seed's other rows: per-slot validity flag 4.77 / 18.0 / 17.9, rtrb 5.16 / 26.0 / 26.3 (QD 1 / 32 / 256)"


def same_run_ratio(runs: list[float], peer_runs: list[float]) -> float:
    """Median over k of runs[k] / peer_runs[k]: run k of every queue ran back to back, so
    a ratio within one k compares queues under the same placement of the VM's vCPUs,
    which on a shared host moves the absolute figures 2-4x from one second to the next."""
    ratios = [a / b for a, b in zip(runs, peer_runs, strict=True) if b > 0]
    return statistics.median(ratios) if ratios else 0.0


def best_runs(rows: list[dict]) -> list[float]:
    """Per run k, the best strategy's Mops/s (Boost excluded)."""
    strategies = [row["mops_runs"] for row in rows if row["queue"] != "boost"]
    return [max(at_k) for at_k in zip(*strategies, strict=True)]


def table(results: list[dict]) -> tuple[Table, list[str]]:
    """The strategy table of `hilrig-bench spsc` results (one per payload), and notes."""
    t = Table(title="SPSC request/response (hilrig-bench spsc): Mops/s = requests answered per second; "
                    "/best and /boost: median over runs k of this queue's run k / the peer's run k")
    for col in ("payload", "QD", "queue", "min Mops/s", "median", "seed min (24 B)", "/best", "/boost"):
        t.add_column(col, justify="left" if col in ("payload", "queue") else "right")
    notes: list[str] = []
    for r in results:
        rows = r["rows"]
        for qd in sorted({row["qd"] for row in rows}):
            at = [row for row in rows if row["qd"] == qd]
            best = best_runs(at)
            boost: list[float] = next((row["mops_runs"] for row in at if row["queue"] == "boost"), [])
            for row in at:
                seed = SEED.get(row["queue"])
                seed_s = (f"{seed[1][QDS.index(qd)]:.2f}" if seed and row["payload_bytes"] == 24 and qd in QDS
                          else "-")
                errors = f" ({row['errors']} ERRORS)" if row["errors"] else ""
                t.add_row(f"{row['payload_bytes']} B", str(qd), row["queue"] + errors, f"{row['mops_min']:.2f}",
                          f"{row['mops_median']:.2f}", seed_s,
                          f"{same_run_ratio(row['mops_runs'], best):.2f}" if row["queue"] != "boost" else "-",
                          f"{same_run_ratio(row['mops_runs'], boost):.2f}" if boost else "-")
        notes.append(f"{rows[0]['payload_bytes']} B, QD 1 one-way latency p50/p99 ns: " + ", ".join(
            f"{lat['queue']} {lat['one_way_p50_ns']:.0f}/{lat['one_way_p99_ns']:.0f}" for lat in r["latency"]))
        qd1 = [row for row in rows if row["qd"] == 1]
        if qd1 and r["qd1_bound_mops"] > 0:
            notes.append(f"{rows[0]['payload_bytes']} B, cache-line ping-pong "
                         f"{r['pingpong_one_way_ns']:.0f} ns one way "
                         f"= QD 1 bound {r['qd1_bound_mops']:.2f} Mops/s; QD 1 median / bound: " + ", ".join(
                             f"{row['queue']} {row['mops_median'] / r['qd1_bound_mops']:.2f}" for row in qd1))
    notes.append(SEED_OTHERS)
    return t, notes


class Native(Protocol):
    """hostlib.bench.__main__.native: one hilrig-bench subcommand, its JSON."""
    def __call__(self, cmd: str, *, timeout_s: float = 120, **kw: object) -> dict: ...


def run(native: Native, runs: int, seconds: float) -> list[dict]:
    """One `hilrig-bench spsc` per payload (each prints its own JSON)."""
    budget_s = 60 + 2 * 6 * len(QDS) * runs * (seconds + 0.05)
    return [native("spsc", payload=p, runs=runs, seconds=seconds, timeout_s=budget_s) for p in PAYLOADS]
