"""`hilrig results push|show`: ship the outbox now; print a run's results (InfluxDB or outbox)."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._exceptions import ConfigError
from ..results import results_dirs
from ..results.influx import InfluxTarget, ship_outbox
from ..results.query import Row, rows_from_influx, rows_from_outbox
from ..results.verdict import STYLE
from ..rig import default_rig_path, load_rig
from ..verdicts import Verdict

RUN_ID = re.compile(r"^[0-9A-Za-z_.-]+$")
# Columns of the table, in order: (field, heading); the rest stays in the database.
COLUMNS = (("throughput_sps", "MS/s"), ("throughput_ratio", "ratio"), ("missing_frames", "missing"),
           ("overruns", "O"), ("underruns", "U"), ("latency_p99_s", "p99 ms"))
LAST_HELP = "the last run; --last N: the last N runs"


def add_last_option(parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup) -> None:
    """`--last` (the last run) or `--last N` (the last N runs): one meaning, one spelling on
    every command that selects runs. Read it with last_runs(args)."""
    parser.add_argument("--last", metavar="N", nargs="?", const=1, default=None, type=int, help=LAST_HELP)


def last_runs(args: argparse.Namespace) -> int | None:
    """How many of the last runs `--last [N]` asks for; None when it was not given."""
    if args.last is not None and args.last < 1:
        raise ConfigError(f"--last {args.last}: give 1 or more")
    return args.last


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    res = sub.add_parser("results", help="ship the outbox to InfluxDB, or show the results of runs")
    rsub = res.add_subparsers(dest="results_command", required=True)
    push = rsub.add_parser("push", help="ship every finished run in the outbox to the rig's InfluxDB now")
    push.add_argument("--rig", help="rig file or name (default: $HILRIG_RIG, else rigs/sim.yaml)")
    show = rsub.add_parser("show", help="print the results of runs, from InfluxDB (or the outbox without one)")
    show.add_argument("--rig", help="rig file or name (default: $HILRIG_RIG, else rigs/sim.yaml)")
    which = show.add_mutually_exclusive_group()
    which.add_argument("--run", metavar="ID", help="one run id (e.g. 20261121T210000Z-3f9a1c)")
    add_last_option(which)
    exp = rsub.add_parser("export", help="export runs from the evidence files: one row per case/point, CSV or JSON")
    exp.add_argument("--rig", help="rig file or name: its evidence folder (default: $HILRIG_RIG, else rigs/sim.yaml)")
    exp.add_argument("--evidence", help="evidence folder (default: the rig file's results.evidence)")
    ewhich = exp.add_mutually_exclusive_group()
    ewhich.add_argument("--run", metavar="ID", action="append", help="a run id, prefix or evidence file (repeatable)")
    add_last_option(ewhich)
    exp.add_argument("--format", choices=("csv", "json"), default="csv", help="csv (default) or json")
    exp.add_argument("--output", "-o", help="file to write (default: standard output)")


def results_command(args: argparse.Namespace) -> int:
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
    last = last_runs(args) or 1
    if target is None:
        source = f"outbox {outbox_dir}"
        runs = rows_from_outbox(outbox_dir, run_id=args.run, last=last)
    else:
        source = target.describe()
        runs = rows_from_influx(target, rig_name=rig.name, run_id=args.run, last=last)
    if not runs:
        what = f"run {args.run}" if args.run else f"runs of rig {rig.name}"
        console.print(f"no results for {what} in {source}", highlight=False, markup=False)
        return 1
    for run_id, rows in runs.items():
        console.print(_table(run_id, rows, source))
    return 0


# ------------------------------------------------------------------------- view

def _num(row: Row, key: str) -> str:
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


def _verdict(row: Row) -> Verdict | None:
    try:
        return Verdict(str(row.get("verdict", "")))
    except ValueError:
        return None


def _table(run_id: str, rows: list[Row], source: str) -> Table:
    verdicts = [_verdict(r) for r in rows]
    counts = ", ".join(f"{verdicts.count(v)} {v.value}" for v in Verdict if v in verdicts)
    rig = rows[0].get("rig", "") if rows else ""
    sha = rows[0].get("git_sha", "") if rows else ""
    table = Table(title=Text(f"run {run_id} on rig {rig} ({counts}) from {source}"),
                  caption=f"git {sha}" if sha else None, title_justify="left")
    table.add_column("testcase", no_wrap=True)
    table.add_column("verdict")
    for _, heading in COLUMNS:
        table.add_column(heading, justify="right")
    table.add_column("why (not PASS)", overflow="fold")
    for row, verdict in zip(rows, verdicts, strict=True):
        label = Text(verdict.label, style=STYLE[verdict]) if verdict else Text(str(row.get("verdict", "")))
        table.add_row(Text(str(row.get("testcase", ""))), label, *[_num(row, key) for key, _ in COLUMNS],
                      Text(_why(row) if verdict is not Verdict.PASS else ""))
    return table


def _why(row: Row) -> str:
    """Why a case is not PASS, from the row's own fields (the numbers are in the columns)."""
    if row.get("failed"):
        return str(row["failed"])
    if row.get("marginal"):  # which limit a marginal pass came close to
        return f"marginal: {row['marginal']}"
    return str(row.get("error") or row.get("message") or "")


# ------------------------------------------------------------------------- export

def export_command(args: argparse.Namespace, evidence_dir: Path) -> int:
    """`hilrig results export`: rows of the chosen runs' evidence files as CSV or JSON."""
    import sys

    from ..reports.export import rows, to_csv, to_json
    from ..reports.model import evidence_files, find_run, load_run

    if args.run:
        paths = [find_run(spec, evidence_dir) for spec in args.run]
    else:
        paths = evidence_files(evidence_dir)[-(last_runs(args) or 1):]
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
