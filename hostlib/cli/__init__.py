"""`hilrig` command line: run, validate, sim, results.

Exit codes: 0 all PASS/SKIP, 1 a threshold FAILed, 2 config error,
3 infrastructure error, 4 device error, 130 interrupted.
"""
from __future__ import annotations

import argparse
import signal
import sys

from .._exceptions import HilrigError


def _interrupt_on_sigterm() -> None:
    # A killed run (SIGTERM) unwinds like Ctrl-C, so drivers close and the
    # simulator is reaped; results already measured are on disk already.
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hilrig", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run YAML cases on a rig, with live progress and a verdict table")
    run.add_argument("paths", nargs="+", help="case files or folders")
    run.add_argument("--rig", help="rig file or name (default: $HILRIG_RIG, else rigs/sim.yaml)")
    run.add_argument("--case", help="run only tests whose name matches this glob")
    run.add_argument("--outbox", help="outbox folder (default: the rig file's results.outbox)")

    val = sub.add_parser("validate", help="check YAML cases; exit 2 on any error")
    val.add_argument("paths", nargs="+")

    sim = sub.add_parser("sim", help="start the simulator and print what it says about itself")
    sim.add_argument("--binary", help="path of hilrig-sim (default: the built one)")

    from .results import add_parser as add_results_parser
    add_results_parser(sub)
    from .rig import add_parser as add_rig_parser
    add_rig_parser(sub)
    from .report import add_parsers as add_report_parsers
    add_report_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _interrupt_on_sigterm()
    try:
        if args.command == "run":
            from .run import run_command
            return run_command(args)
        if args.command == "results":
            from .results import results_command
            return results_command(args)
        if args.command in ("report", "trends"):
            from .report import report_command
            return report_command(args)
        if args.command == "rig":
            from .rig import rig_command
            return rig_command(args)
        if args.command == "validate":
            from ..dsl import validate_command
            return validate_command(args.paths)
        if args.command == "sim":
            from ..drivers.sim import SimProcess
            sim = SimProcess(args.binary)
            try:
                print(sim.request("hello"))
                print(f"binary: {sim.binary}")
            finally:
                sim.close()
            return 0
    except HilrigError as exc:
        print(f"hilrig: {type(exc).__name__}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("hilrig: interrupted; results measured so far are in the outbox", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
