"""`hilrig results push|show`: ship the outbox now; print a run's results (InfluxDB or outbox)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._exceptions import ConfigError
from ..results import CASE_MEASUREMENT, results_dirs
from ..results.influx import InfluxTarget, ship_outbox
from ..rig import default_rig_path, load_rig

RUN_ID = re.compile(r"^[0-9A-Za-z_.-]+$")
# Columns of the table, in order: (field, heading); the rest stays in the database.
COLUMNS = (("throughput_sps", "MS/s"), ("throughput_ratio", "ratio"), ("missing_frames", "missing"),
           ("overruns", "O"), ("underruns", "U"), ("latency_p99_s", "p99 ms"))


def add_parser(sub) -> None:
    res = sub.add_parser("results", help="ship the outbox to InfluxDB, or show the results of runs")
    rsub = res.add_subparsers(dest="results_command", required=True)
    push = rsub.add_parser("push", help="ship every finished run in the outbox to the rig's InfluxDB now")
    push.add_argument("--rig", help="rig file or name (default: $HILRIG_RIG, else rigs/sim.yaml)")
    show = rsub.add_parser("show", help="print the results of runs, from InfluxDB (or the outbox without one)")
    show.add_argument("--rig", help="rig file or name (default: $HILRIG_RIG, else rigs/sim.yaml)")
    which = show.add_mutually_exclusive_group()
    which.add_argument("--run", metavar="ID", help="one run id (e.g. 20261121T210000Z-3f9a1c)")
    which.add_argument("--last", metavar="N", type=int, default=1, help="the last N runs of this rig (default 1)")
    exp = rsub.add_parser("export", help="export runs from the evidence files: one row per case/point, CSV or JSON")
    exp.add_argument("--rig", help="rig file or name: its evidence folder (default: $HILRIG_RIG, else rigs/sim.yaml)")
    exp.add_argument("--evidence", help="evidence folder (default: the rig file's results.evidence)")
    ewhich = exp.add_mutually_exclusive_group()
    ewhich.add_argument("--run", metavar="ID", action="append", help="a run id, prefix or evidence file (repeatable)")
    ewhich.add_argument("--last", metavar="N", type=int, default=1, help="the last N runs (default 1)")
    exp.add_argument("--format", choices=("csv", "json"), default="csv", help="csv (default) or json")
    exp.add_argument("--output", "-o", help="file to write (default: standard output)")


def results_command(args) -> int:
    rig_path = default_rig_path(args.rig)
    rig = load_rig(rig_path)
    outbox_dir, evidence_dir = results_dirs(rig)
    if args.results_command == "export":
        return export_command(args, Path(args.evidence) if args.evidence else evidence_dir)
    target = InfluxTarget.from_rig(rig)
    console = Console()
    if not console.is_terminal:  # piped or captured: do not squeeze the table into 80 columns
        console = Console(width=200)
    if args.results_command == "push":
        if target is None:
            console.print(f"hilrig results: {rig_path} names no InfluxDB (results.influxdb); "
                          f"results stay in the outbox {outbox_dir}", highlight=False, markup=False)
            return 0
        report = ship_outbox(outbox_dir, target)
        for line in report.lines():
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        return report.exit_code()
    if args.run is not None and not RUN_ID.match(args.run):
        raise ConfigError(f"--run {args.run!r}: a run id has letters, digits, '-', '_' and '.' only")
    if args.last < 1:
        raise ConfigError(f"--last {args.last}: give 1 or more")
    if target is None:
        source = f"outbox {outbox_dir}"
        runs = rows_from_outbox(outbox_dir, run_id=args.run, last=args.last)
    else:
        source = target.describe()
        runs = rows_from_influx(target, rig_name=rig.name, run_id=args.run, last=args.last)
    if not runs:
        what = f"run {args.run}" if args.run else f"runs of rig {rig.name}"
        console.print(f"no results for {what} in {source}", highlight=False, markup=False)
        return 1
    for run_id, rows in runs.items():
        console.print(_table(run_id, rows, source))
    return 0


# ------------------------------------------------------------------------- sources

def _case_row(tags: dict, fields: dict, time_ns: int) -> dict:
    return {**tags, **fields, "time": time_ns}


def rows_from_outbox(outbox_dir: Path, *, run_id: str | None, last: int) -> dict[str, list[dict]]:
    """Case rows by run id from the outbox files (pending, sent and rejected)."""
    from ..reports.history import outbox_points

    runs: dict[str, list[dict]] = {}
    for path, point in outbox_points(Path(outbox_dir), CASE_MEASUREMENT):
        row = _case_row(point["tags"], point["fields"], point["time"])
        runs.setdefault(str(row.get("run_id", path.stem)), []).append(row)
    return _select(runs, run_id, last)


def _select(runs: dict[str, list[dict]], run_id: str | None, last: int) -> dict[str, list[dict]]:
    for rows in runs.values():
        rows.sort(key=lambda r: r["time"])
    if run_id is not None:
        return {run_id: runs[run_id]} if run_id in runs else {}
    # Run ids start with the UTC start time, so they sort by time.
    return {k: runs[k] for k in sorted(runs)[-last:]}


def rows_from_influx(target: InfluxTarget, *, rig_name: str, run_id: str | None, last: int) -> dict[str, list[dict]]:
    client = target.client()
    try:
        if target.api == "v1":
            return _select(_influxql_runs(client, rig_name, run_id), run_id, last)
        return _select(_flux_runs(client, target, rig_name, run_id), run_id, last)
    finally:
        client.close()


def _influxql_runs(client, rig_name: str, run_id: str | None) -> dict[str, list[dict]]:
    # run_id is a field (not a tag: it would grow the series index by one entry per run).
    where = f"\"run_id\" = '{run_id}'" if run_id else f"\"rig\" = '{_ql_string(rig_name)}'"
    runs: dict[str, list[dict]] = {}
    for series in client.influxql(f'SELECT * FROM "{CASE_MEASUREMENT}" WHERE {where} GROUP BY *'):
        tags = {k: v for k, v in (series.get("tags") or {}).items() if v}
        for values in series.get("values") or []:
            row = dict(zip(series["columns"], values, strict=True))
            t = row.pop("time")
            row = _case_row(tags, {k: v for k, v in row.items() if v is not None}, t)
            runs.setdefault(str(row.get("run_id")), []).append(row)
    return runs


def _ql_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _flux_runs(client, target: InfluxTarget, rig_name: str, run_id: str | None) -> dict[str, list[dict]]:
    where = f'r.run_id == "{run_id}"' if run_id else f'r.rig == "{_flux_string(rig_name)}"'
    flux = (f'from(bucket: "{_flux_string(target.bucket)}") |> range(start: 1970-01-01T00:00:00Z) '
            f'|> filter(fn: (r) => r._measurement == "{CASE_MEASUREMENT}") '
            f'|> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value") '
            f'|> filter(fn: (r) => {where})')
    runs: dict[str, list[dict]] = {}
    for rec in client.flux_rows(flux):
        t = rec.get("_time")
        row = {k: v for k, v in rec.items() if not k.startswith("_") and k not in ("result", "table")
               and v is not None}
        row["time"] = int(t.timestamp() * 1e9) if t is not None else 0
        runs.setdefault(str(row.get("run_id")), []).append(row)
    return runs


def _flux_string(text: str | None) -> str:
    return (text or "").replace("\\", "\\\\").replace('"', '\\"')


# ------------------------------------------------------------------------- view

def _num(row: dict, key: str) -> str:
    value = row.get(key)
    if not isinstance(value, (int, float)):
        return ""
    if key == "throughput_sps":
        return f"{value / 1e6:.3f}"
    if key == "latency_p99_s":
        return f"{value * 1e3:.3f}"
    if key == "throughput_ratio":
        return f"{value:.4f}"
    return f"{value:.0f}"


def _table(run_id: str, rows: list[dict[str, Any]], source: str) -> Table:
    verdicts = [str(r.get("verdict", "")) for r in rows]
    counts = ", ".join(f"{verdicts.count(v)} {v}" for v in ("PASS", "MARGINAL", "FAIL", "ERROR", "SKIP")
                       if v in verdicts)
    rig = rows[0].get("rig", "") if rows else ""
    sha = rows[0].get("git_sha", "") if rows else ""
    table = Table(title=Text(f"run {run_id} on rig {rig} ({counts}) from {source}"),
                  caption=f"git {sha}" if sha else None, title_justify="left")
    table.add_column("testcase", no_wrap=True)
    table.add_column("verdict")
    for _, heading in COLUMNS:
        table.add_column(heading, justify="right")
    table.add_column("why (not PASS)", overflow="fold")
    styles = {"PASS": "green", "MARGINAL": "dark_orange", "FAIL": "red", "ERROR": "magenta", "SKIP": "yellow"}
    for row in rows:
        verdict = str(row.get("verdict", ""))
        label = "PASS (marginal)" if verdict == "MARGINAL" else verdict
        table.add_row(Text(str(row.get("testcase", ""))), Text(label, style=styles.get(verdict, "")),
                      *[_num(row, key) for key, _ in COLUMNS],
                      Text(_why(row) if verdict != "PASS" else ""))
    return table


def _why(row: dict) -> str:
    """The part of the summary line that says what went wrong (the numbers are in the columns)."""
    message = str(row.get("message", ""))
    if "; failed: " in message:
        return message.split("; failed: ", 1)[1]
    if "; marginal: " in message:  # which limit a marginal pass came close to
        return "marginal: " + message.split("; marginal: ", 1)[1]
    return str(row.get("error") or "") or message


# ------------------------------------------------------------------------- export

def export_command(args, evidence_dir: Path) -> int:
    """`hilrig results export`: rows of the chosen runs' evidence files as CSV or JSON."""
    import sys

    from ..reports.export import rows, to_csv, to_json
    from ..reports.model import evidence_files, find_run, load_run

    if args.run:
        paths = [find_run(spec, evidence_dir) for spec in args.run]
    else:
        if args.last < 1:
            raise ConfigError(f"--last {args.last}: give 1 or more")
        paths = evidence_files(evidence_dir)[-args.last:]
        if not paths:
            raise ConfigError(f"no evidence files in {evidence_dir}: run the suite first (make run)")
    columns, data = rows(load_run(p) for p in paths)
    text = to_csv(columns, data) if args.format == "csv" else to_json(columns, data)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"hilrig results export: {len(data)} rows from {len(paths)} run(s) -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
