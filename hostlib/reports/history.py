"""Nights of results for the trend report: the rig's InfluxDB, else its outbox history.

A night is a run (run ids sort by start time). Rows are `hilrig_case` points: tags
(testcase, verdict, sweep_...) and fields (metrics, run_id), as written by
hostlib/results/lineprotocol.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..results.influx import InfluxTarget
from ..results.paths import results_dirs
from ..results.query import Row, Runs, outbox_points, rows_from_influx, rows_from_outbox

if TYPE_CHECKING:  # pragma: no cover
    from ..rig import Rig


@dataclass
class History:
    source: str
    runs: list[str]                      # run ids, oldest first
    rows: Runs                           # run id -> case rows

    def series(self) -> dict[str, list[Row | None]]:
        """testcase -> one row per run (None where the run did not have that case). A lab
        run's case is its own series per place (`<testcase> @ <place>`): a nightly across
        rigs is one run per place, and one place is never judged against another's nights."""
        names: dict[str, None] = {}
        by_run: dict[str, dict[str, Row]] = {}
        for run in self.runs:
            by_run[run] = {series_name(r): r for r in self.rows.get(run, [])}
            for name in by_run[run]:
                names.setdefault(name, None)
        return {name: [by_run[run].get(name) for run in self.runs] for name in names}


def series_name(row: Row) -> str:
    """The trend series of a case row: its test name, and its place when it ran on one."""
    place = row.get("place")
    return f"{row.get('testcase')} @ {place}" if place else str(row.get("testcase"))


def load_history(rig: Rig, *, nights: int, outbox: str | Path | None = None) -> History:
    """The last `nights` runs of the rig: from InfluxDB when the rig names one (and no
    outbox folder is given), else from the outbox files (pending, sent, rejected)."""
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


def load_bench_history(rig: Rig, *, nights: int, outbox: str | Path | None = None) -> History:
    """The last `nights` bench runs (`make bench`: `bench-<run_id>.lp`, measurement hilrig_bench)
    from the outbox folders (pending, sent, rejected): shipped or not, the files stay there.
    One "case" per bench row and size: `bench <row> <size> B`."""
    from ..bench.record import BENCH_MEASUREMENT

    folder = Path(outbox) if outbox else results_dirs(rig)[0]
    runs: Runs = {}
    for path, row, time_ns in outbox_points(folder, BENCH_MEASUREMENT, "bench-*.lp"):
        run = str(row.get("run_id") or path.stem.removeprefix("bench-"))
        runs.setdefault(run, []).append({**row, "time": time_ns,
                                         "testcase": f"bench {row.get('row')} {row.get('size_bytes')} B"})
    keep = sorted(runs)[-nights:]
    return History(f"bench files in {folder}", keep, {k: runs[k] for k in keep})
