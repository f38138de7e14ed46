"""Export runs as rows: one row per case / sweep point, stable column names with units.

Columns, in this order (docs/reports.md): the fixed ones (run_id, rig, testcase, case,
verdict, ...), then `sweep_<axis>` for every sweep axis met, then every metric under
its registry name (hostlib/metrics.py: names carry their unit, `throughput_sps`,
`latency_p99_s`), sorted. A value a case lacks is empty (CSV) or null (JSON).
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable

from pydantic import JsonValue

from ..metrics import lookup_metric
from .model import CaseView, RunView

Row = dict[str, JsonValue]

FIXED_COLUMNS = ("run_id", "rig", "testcase", "case", "verdict", "device", "driver", "direction",
                 "transport", "channels", "frame_bytes", "rate_sps", "started_utc", "ended_utc", "message")

# Units of the fixed numeric columns and of metric dimensions, for the JSON header.
_DIMENSION_UNITS = {"count": "1", "time": "s", "rate": "1/s", "data_rate": "B/s", "ratio": "1",
                    "percent": "%", "frequency": "Hz", "db": "dB", "dbc": "dBc", "dbfs": "dBFS", "ppm": "ppm"}
_FIXED_UNITS = {"channels": "1", "frame_bytes": "B", "rate_sps": "1/s"}


def case_row(run: RunView, case: CaseView) -> Row:
    c, r = case.case, case.record
    row: Row = {
        "run_id": run.run_id,
        "rig": run.rig.name or r.rig_name,
        "testcase": case.test_name,
        "case": case.name,
        "verdict": case.label,
        "device": r.device,
        "driver": r.driver,
        "direction": c.direction,
        "transport": c.transport.kind,
        "channels": c.channels,
        "frame_bytes": c.transport.frame_bytes,
        "rate_sps": c.rate_sps,
        "started_utc": r.started_utc,
        "ended_utc": r.ended_utc,
        "message": case.message,
    }
    for k, v in case.sweep_point.items():
        row[f"sweep_{k}"] = v
    row.update(case.metrics)
    return row


def rows(runs: Iterable[RunView]) -> tuple[list[str], list[Row]]:
    """(columns, rows) over runs, oldest run first."""
    out: list[Row] = []
    sweep_cols: list[str] = []
    metric_cols: set[str] = set()
    for run in runs:
        for case in run.cases:
            r = case_row(run, case)
            out.append(r)
            for k in r:
                if k.startswith("sweep_") and k not in sweep_cols:
                    sweep_cols.append(k)
                elif k not in FIXED_COLUMNS and not k.startswith("sweep_"):
                    metric_cols.add(k)
    return [*FIXED_COLUMNS, *sweep_cols, *sorted(metric_cols)], out


def units(columns: list[str]) -> dict[str, str]:
    out = {}
    for col in columns:
        if col in _FIXED_UNITS:
            out[col] = _FIXED_UNITS[col]
        elif (m := lookup_metric(col)) is not None:
            out[col] = _DIMENSION_UNITS.get(m.dimension, "")
    return out


def to_csv(columns: list[str], data: list[Row]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in data:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})
    return buf.getvalue()


def to_json(columns: list[str], data: list[Row]) -> str:
    doc = {"format": "hilrig-export/1", "columns": columns, "units": units(columns),
           "rows": [{k: r.get(k) for k in columns} for r in data]}
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"
