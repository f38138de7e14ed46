"""The bench table as data: JSON (results/bench/<run_id>.json) and line protocol
(measurement `hilrig_bench`, into the rig's outbox so it ships with the results).

One BenchRow per table row: absolute figures of the rig and of its peer measured in
the same run, and their ratio; and the limit the row is judged against (what this
machine can do at most on that path, measured in the same run) and rig / limit.
Tags: `row` (what was measured), `size_bytes`, `peer`, `limit`, `host`; float fields
`rig_Bps`, `rig_fps`, `rig_cpu_percent`, `peer_Bps`, `peer_fps`, `ratio` (rig / peer),
`limit_Bps`, `limit_ratio` (rig / limit), `rig_s`, `peer_s` (a row that times
something), string fields `run_id`, `git_sha` (docs/reports.md).
"""
from __future__ import annotations

import json
import math
import socket
from dataclasses import asdict, dataclass
from pathlib import Path

BENCH_MEASUREMENT = "hilrig_bench"


@dataclass
class BenchRow:
    row: str
    size_bytes: int
    rig_Bps: float | None = None
    rig_fps: float | None = None
    rig_cpu_percent: float | None = None
    peer: str = ""
    peer_Bps: float | None = None
    peer_fps: float | None = None
    ratio: float | None = None
    limit: str = ""
    limit_Bps: float | None = None
    limit_ratio: float | None = None
    rig_s: float | None = None     # a time row (the lab rows): the rig's seconds
    peer_s: float | None = None    # ... and the peer's, measured in the same run


def _clean(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def bench_lines(rows: list[BenchRow], *, run_id: str, time_ns: int, git_sha: str | None = None,
                host: str | None = None) -> list[str]:
    """Line protocol, one point per row, all at the bench's end time (one row per tag set)."""
    from influxdb_client import Point, WritePrecision

    host = host or socket.gethostname()
    out = []
    for r in rows:
        p = Point(BENCH_MEASUREMENT).tag("host", host).tag("row", r.row).tag("size_bytes", str(r.size_bytes))
        if r.peer:
            p = p.tag("peer", r.peer)
        if r.limit:
            p = p.tag("limit", r.limit)
        for name in ("rig_Bps", "rig_fps", "rig_cpu_percent", "peer_Bps", "peer_fps", "ratio", "limit_Bps",
                     "limit_ratio", "rig_s", "peer_s"):
            v = _clean(getattr(r, name))
            if v is not None:
                p = p.field(name, float(v))
        p = p.field("run_id", run_id).field("git_sha", git_sha or "").time(time_ns, WritePrecision.NS)
        out.append(p.to_line_protocol())
    return out


def write_bench_results(rows: list[BenchRow], *, run_id: str, time_ns: int, json_dir: Path, outbox_dir: Path,
                        git_sha: str | None = None, meta: dict | None = None) -> tuple[Path, Path]:
    """results/bench/<run_id>.json and <outbox>/bench-<run_id>.lp; returns both paths."""
    json_dir.mkdir(parents=True, exist_ok=True)
    outbox_dir.mkdir(parents=True, exist_ok=True)
    doc = {"format": "hilrig-bench/1", "run_id": run_id, "time_ns": time_ns, "git_sha": git_sha,
           "meta": meta or {}, "rows": [{k: (_clean(v) if isinstance(v, float) else v) for k, v in asdict(r).items()}
                                        for r in rows]}
    jpath = json_dir / f"{run_id}.json"
    jpath.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    lpath = outbox_dir / f"bench-{run_id}.lp"
    lpath.write_text("\n".join(bench_lines(rows, run_id=run_id, time_ns=time_ns, git_sha=git_sha)) + "\n")
    return jpath, lpath
