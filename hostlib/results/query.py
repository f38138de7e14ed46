"""Reading results back: case rows by run from the outbox files or the rig's InfluxDB.

A row is one `hilrig_case` point as written by hostlib.results.lineprotocol: its tags
(testcase, verdict, sweep_...), its fields (metrics, run_id, message, failed, marginal,
error) and `time` (ns). Used by `hilrig results show` and the trend report.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .influx import REJECTED_DIR, SENT_DIR, InfluxTarget, _Client
from .lineprotocol import CASE_MEASUREMENT

# One point read back: tags are strings, fields floats (metrics), strings or booleans.
Value = str | float | int | bool
Row = dict[str, Value]
Runs = dict[str, list[Row]]


def outbox_points(outbox_dir: Path, measurement: str, pattern: str = "*.lp") -> Iterator[tuple[Path, Row, int]]:
    """(file, tags and fields, time in ns) for every `measurement` line of the outbox files
    (pending, sent and rejected); a partial last line of a killed writer is passed over."""
    from line_protocol_parser import LineFormatError, parse_line

    for d in (outbox_dir, outbox_dir / SENT_DIR, outbox_dir / REJECTED_DIR):
        for path in sorted(d.glob(pattern)) if d.is_dir() else ():
            for line in path.read_text(encoding="utf-8").splitlines():
                if not line.startswith(measurement + ","):
                    continue
                try:
                    point = parse_line(line)
                except LineFormatError:
                    continue
                yield path, {**point["tags"], **point["fields"]}, int(point["time"])


def rows_from_outbox(outbox_dir: Path, *, run_id: str | None, last: int) -> Runs:
    """Case rows by run id from the outbox files (pending, sent and rejected)."""
    runs: Runs = {}
    for path, row, time_ns in outbox_points(Path(outbox_dir), CASE_MEASUREMENT):
        row["time"] = time_ns
        runs.setdefault(str(row.get("run_id", path.stem)), []).append(row)
    return select_runs(runs, run_id, last)


def select_runs(runs: Runs, run_id: str | None, last: int) -> Runs:
    """The run `run_id`, or the `last` runs (run ids start with the UTC start time, so
    they sort by time); each run's rows in time order."""
    for rows in runs.values():
        rows.sort(key=lambda r: r["time"])
    if run_id is not None:
        return {run_id: runs[run_id]} if run_id in runs else {}
    return {k: runs[k] for k in sorted(runs)[-last:]}


def rows_from_influx(target: InfluxTarget, *, rig_name: str, run_id: str | None, last: int) -> Runs:
    """Case rows by run id from the rig's InfluxDB (v1: InfluxQL, v2: Flux)."""
    client = target.client()
    try:
        if target.api == "v1":
            return select_runs(_influxql_runs(client, rig_name, run_id), run_id, last)
        return select_runs(_flux_runs(client, target, rig_name, run_id), run_id, last)
    finally:
        client.close()


def _influxql_runs(client: _Client, rig_name: str, run_id: str | None) -> Runs:
    # run_id is a field (not a tag: it would grow the series index by one entry per run).
    where = f"\"run_id\" = '{_ql_string(run_id)}'" if run_id else f"\"rig\" = '{_ql_string(rig_name)}'"
    runs: Runs = {}
    for series in client.influxql(f'SELECT * FROM "{CASE_MEASUREMENT}" WHERE {where} GROUP BY *'):
        tags = {k: v for k, v in (series.get("tags") or {}).items() if v}
        for values in series.get("values") or []:
            fields = dict(zip(series["columns"], values, strict=True))
            row: Row = {**tags, **{k: v for k, v in fields.items() if v is not None}}
            runs.setdefault(str(row.get("run_id")), []).append(row)
    return runs


def _ql_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _flux_runs(client: _Client, target: InfluxTarget, rig_name: str, run_id: str | None) -> Runs:
    where = f'r.run_id == "{_flux_string(run_id)}"' if run_id else f'r.rig == "{_flux_string(rig_name)}"'
    flux = (f'from(bucket: "{_flux_string(target.bucket)}") |> range(start: 1970-01-01T00:00:00Z) '
            f'|> filter(fn: (r) => r._measurement == "{CASE_MEASUREMENT}") '
            f'|> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value") '
            f'|> filter(fn: (r) => {where})')
    runs: Runs = {}
    for rec in client.flux_rows(flux):
        t = rec.get("_time")
        row: Row = {k: v for k, v in rec.items() if not k.startswith("_") and k not in ("result", "table")
                    and v is not None}
        row["time"] = int(t.timestamp() * 1e9) if t is not None else 0
        runs.setdefault(str(row.get("run_id")), []).append(row)
    return runs


def _flux_string(text: str | None) -> str:
    return (text or "").replace("\\", "\\\\").replace('"', '\\"')
