"""`hilrig report` (one run as an offline HTML file, or two runs compared) and `hilrig trends`
(nights of results with regression flags; the detection benchmark)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._exceptions import ConfigError
from .results import add_last_option, last_runs


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rep = sub.add_parser("report", help="write a run's offline HTML report (or compare two runs)")
    rep.add_argument("run", nargs="?", help="run id (or prefix) or evidence JSON file (default: the last run)")
    add_last_option(rep)
    rep.add_argument("--output", "-o", help="HTML file to write (default: results/reports/<run_id>.html; "
                                            "one run only)")
    rep.add_argument("--rig", help="rig file or name: where its evidence folder is "
                                   "(default: $HILRIG_RIG, else rigs/sim.yaml)")
    rep.add_argument("--evidence", help="evidence folder (default: the rig file's results.evidence)")
    rep.add_argument("--compare", nargs=2, metavar=("RUN_A", "RUN_B"),
                     help="compare two runs: per-metric deltas, new failures, fixed failures")

    tr = sub.add_parser("trends",
                        help="trend report over the last nights with regression flags (exit 1 on a regression)")
    tr.add_argument("--rig", help="rig file or name (default: $HILRIG_RIG, else rigs/sim.yaml)")
    tr.add_argument("--nights", type=int, default=30, help="how many of the last runs to read (default 30)")
    tr.add_argument("--output", "-o", help="HTML file (default: results/reports/trends-<rig>.html)")
    tr.add_argument("--outbox", help="read this outbox folder instead of the rig's InfluxDB/outbox")
    tr.add_argument("--benchmark", action="store_true",
                    help="run the seeded detection benchmark (synthetic nights) and print its table")
    tr.add_argument("--seed", type=int, default=1, help="benchmark seed (default 1)")


def _evidence_dir(args: argparse.Namespace) -> Path:
    if args.evidence:
        return Path(args.evidence)
    from ..results import results_dirs
    from ..rig import default_rig_path, load_rig

    return results_dirs(load_rig(default_rig_path(args.rig)))[1]


def report_command(args: argparse.Namespace) -> int:
    if args.command == "trends":
        return trends_command(args)
    from ..reports.model import evidence_files, find_run, load_run

    evidence_dir = _evidence_dir(args)
    if args.compare:
        from ..reports.compare import compare, comparison_text
        from ..reports.html import write_compare_report

        a, b = (load_run(find_run(spec, evidence_dir)) for spec in args.compare)
        cmp = compare(a, b)
        sys.stdout.write(comparison_text(cmp))
        if args.output:
            print(f"comparison: {write_compare_report(cmp, args.output)}")
        return 1 if cmp.new_failures else 0
    last = last_runs(args)
    if args.run and last:
        raise ConfigError("give a run or --last, not both")
    from ..reports.html import write_run_report

    if last and last > 1:
        if args.output:
            raise ConfigError(f"--output names one file; --last {last} writes {last} reports "
                              "(each to results/reports/<run_id>.html)")
        paths = evidence_files(evidence_dir)[-last:]
        if not paths:
            raise ConfigError(f"no evidence files in {evidence_dir}: run the suite first (make run) or give a file")
    else:
        paths = [find_run(args.run, evidence_dir)]  # no run given (or --last): the last one
    for path in paths:
        out = write_run_report(path, args.output)
        run = load_run(path)
        tally = ", ".join(f"{n} {v.label}" for v, n in run.tally()) or "no cases"
        print(f"hilrig report: run {run.run_id} ({tally}): {out}")
    return 0


def trends_command(args: argparse.Namespace) -> int:
    if args.benchmark:
        from ..reports.detection import benchmark_table

        text, ok = benchmark_table(seed=args.seed)
        print(text)
        return 0 if ok else 1
    if args.nights < 3:
        raise ConfigError(f"--nights {args.nights}: give 3 or more")
    from ..reports.history import load_bench_history, load_history
    from ..reports.trends import analyse, write_trend_report
    from ..rig import default_rig_path, load_rig

    rig = load_rig(default_rig_path(args.rig))
    history = load_history(rig, nights=args.nights, outbox=args.outbox)
    analysis = analyse(history).merge(analyse(load_bench_history(rig, nights=args.nights, outbox=args.outbox)))
    out = write_trend_report(analysis, args.output or Path("results/reports") / f"trends-{rig.name}.html")
    for line in analysis.summary_lines():
        print(line)
    print(f"hilrig trends: {len(history.runs)} runs from {history.source}: {out}")
    return 1 if analysis.regressions else 0
