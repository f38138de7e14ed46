"""Nights of results for the trend report: the rig's InfluxDB, else its outbox history.

A night is a run (run ids sort by start time). Rows are `hilrig_case` points: tags
(testcase, verdict, sweep_...) and fields (metrics, run_id), as written by
hostlib/results/lineprotocol.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class History:
    source: str
    runs: list[str]                      # run ids, oldest first
    rows: dict[str, list[dict[str, Any]]]  # run id -> case rows

    def series(self) -> dict[str, list[dict | None]]:
        """testcase -> one row per run (None where the run did not have that case)."""
        names: dict[str, None] = {}
        by_run = {}
        for run in self.runs:
            by_run[run] = {str(r.get("testcase")): r for r in self.rows.get(run, [])}
            for name in by_run[run]:
                names.setdefault(name, None)
        return {name: [by_run[run].get(name) for run in self.runs] for name in names}


def load_history(rig: Any, *, nights: int, outbox: str | Path | None = None) -> History:
    """The last `nights` runs of the rig: from InfluxDB when the rig names one (and no
    outbox folder is given), else from the outbox files (pending, sent, rejected)."""
    from ..cli.results import rows_from_influx, rows_from_outbox
    from ..results import results_dirs
    from ..results.influx import InfluxTarget

    target = None if outbox else InfluxTarget.from_rig(rig)
    if target is not None:
        runs = rows_from_influx(target, rig_name=rig.name, run_id=None, last=nights)
        source = target.describe()
    else:
        folder = Path(outbox) if outbox else results_dirs(rig)[0]
        runs = rows_from_outbox(folder, run_id=None, last=nights)
        runs = {k: [r for r in v if r.get("rig", rig.name) == rig.name] for k, v in runs.items()}
        runs = {k: v for k, v in runs.items() if v}
        source = f"outbox {folder}"
    return History(source, sorted(runs), runs)


def load_bench_history(rig: Any, *, nights: int, outbox: str | Path | None = None) -> History:
    """The last `nights` bench runs (`make bench`: `bench-<run_id>.lp`, measurement hilrig_bench)
    from the outbox folders (pending, sent, rejected): shipped or not, the files stay there.
    One "case" per bench row and size: `bench <row> <size> B`."""
    from ..bench.record import BENCH_MEASUREMENT
    from ..results import results_dirs

    folder = Path(outbox) if outbox else results_dirs(rig)[0]
    runs: dict[str, list[dict[str, Any]]] = {}
    for path, p in outbox_points(folder, BENCH_MEASUREMENT, "bench-*.lp"):
        tags, fields = p["tags"], p["fields"]
        run = str(fields.get("run_id") or path.stem.removeprefix("bench-"))
        runs.setdefault(run, []).append({**tags, **fields, "time": p["time"],
                                         "testcase": f"bench {tags.get('row')} {tags.get('size_bytes')} B"})
    keep = sorted(runs)[-nights:]
    return History(f"bench files in {folder}", keep, {k: runs[k] for k in keep})


def outbox_points(outbox_dir: Path, measurement: str, pattern: str = "*.lp"):
    """(file, parsed point) for every `measurement` line of the outbox files (pending, sent
    and rejected); a partial last line of a killed writer is passed over."""
    from line_protocol_parser import LineFormatError, parse_line

    from ..results.influx import REJECTED_DIR, SENT_DIR

    for d in (outbox_dir, outbox_dir / SENT_DIR, outbox_dir / REJECTED_DIR):
        for path in sorted(d.glob(pattern)) if d.is_dir() else ():
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.startswith(measurement + ","):
                    continue
                try:
                    yield path, parse_line(line)
                except LineFormatError:
                    continue
