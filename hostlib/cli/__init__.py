"""`hilrig` command line: run, validate, sim, results, rig, lab, completion.

Exit codes (from hostlib.results.record.Verdict / ErrorKind; README "Exit codes"):
0 every case PASS / PASS (marginal) / SKIP with at least one executed, 1 a threshold
FAILed, 2 config error, 3 infrastructure error, 4 device error, 5 nothing was tested
(no case selected, or every selected case SKIPped), 130 interrupted.
"""
from __future__ import annotations

import argparse
import logging
import signal
import sys

from .._exceptions import HilrigError

log = logging.getLogger("hilrig.cli")


def _interrupt_on_sigint_and_sigterm() -> None:
    """A killed run (SIGTERM) unwinds like Ctrl-C, so drivers close and the simulator is
    reaped; results already measured are on disk already. SIGINT is handled whatever
    the process inherited: Python leaves SIGINT ignored when it was ignored at exec (a
    script's background job; a fork while another thread of the parent sat in glibc's
    system(), which ignores SIGINT process-wide), and such a run streamed on through
    every `kill -INT`."""
    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        log.info("SIGINT was %s when hilrig started; hilrig handles it (exit 130, results kept)",
                 "ignored" if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else "not Python's")
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, handler)
    stopping = {signal.SIGINT, signal.SIGTERM}
    if was_blocked := stopping & signal.pthread_sigmask(signal.SIG_UNBLOCK, stopping):
        names = sorted(signal.Signals(s).name for s in was_blocked)
        log.info("hilrig started with %s blocked; unblocked", ", ".join(names))


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(prog="hilrig", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"hilrig {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log what hilrig does (-v info, -vv debug) on stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run YAML cases on a rig, with live progress and a verdict table")
    run.add_argument("paths", nargs="+", help="case files or folders")
    run.add_argument("--rig", help="rig file or name (default: $HILRIG_RIG, else rigs/sim.yaml)")
    _add_selection(run)
    run.add_argument("--require-devices", action="store_true",
                     help="a device the rig lists but that is not attached is an ERROR, not a SKIP")
    run.add_argument("--outbox", help="outbox folder (default: the rig file's results.outbox)")
    from .lab import add_place_options
    add_place_options(run)

    val = sub.add_parser("validate", help="check YAML cases (exit 2 on any error); with --rig also "
                                          "against a rig, with the estimated run time")
    val.add_argument("paths", nargs="+")
    val.add_argument("--rig", help="also check the selection against this rig (name or path)")
    _add_selection(val)

    comp = sub.add_parser("completion", help="print a shell completion script: "
                                             "eval \"$(hilrig completion bash)\"")
    comp.add_argument("shell", choices=["bash", "zsh"])

    sim = sub.add_parser("sim", help="start the simulator and print what it says about itself")
    sim.add_argument("--binary", help="path of hilrig-sim (default: the built one)")

    from .results import add_parser as add_results_parser
    add_results_parser(sub)
    from .rig import add_parser as add_rig_parser
    add_rig_parser(sub)
    from .report import add_parsers as add_report_parsers
    add_report_parsers(sub)
    from .lab import add_parser as add_lab_parser
    add_lab_parser(sub)
    return parser


def _add_selection(p: argparse.ArgumentParser) -> None:
    p.add_argument("--case", action="append", metavar="NAME",
                   help="a test name, exact with its [sweep point] brackets, or a glob with * and ? "
                        "(repeatable)")
    p.add_argument("-i", "--include", action="append", metavar="TAGS",
                   help="tag expression as Robot writes it: smoke, transport:*, rxANDudp, "
                        "'rx OR tx', sweepNOTreference (repeatable: any)")
    p.add_argument("-e", "--exclude", action="append", metavar="TAGS",
                   help="leave out cases matching this tag expression (repeatable)")


def main(argv: list[str] | None = None) -> int:
    raw = sys.argv[1:] if argv is None else argv
    if raw[:2] == ["lab", "exporter"] and not {"-h", "--help"} & set(raw[2:3]):
        # labgrid-exporter's own options (-c, -n, --hostname ...) pass through untouched
        from ..lab.exporter import main as exporter_main
        return exporter_main(raw[2:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbose:
        from rich.console import Console
        from rich.logging import RichHandler

        logging.basicConfig(level=logging.DEBUG if args.verbose > 1 else logging.INFO, format="%(message)s",
                            handlers=[RichHandler(console=Console(stderr=True), show_path=False)])
    _interrupt_on_sigint_and_sigterm()
    try:
        if args.command == "completion":
            from .completion import completion_script
            print(completion_script(parser, args.shell))
            return 0
        if args.command == "run":
            from .run import run_command
            return run_command(args)
        if args.command == "results":
            from .results import results_command
            return results_command(args)
        if args.command in ("report", "trends"):
            from .report import report_command
            return report_command(args)
        if args.command == "lab":
            from .lab import lab_command
            return lab_command(args)
        if args.command == "rig":
            from .rig import rig_command
            return rig_command(args)
        if args.command == "validate":
            from .validate import validate_command
            code = validate_command(args.paths)
            if code == 0 and (args.rig or args.case or args.include or args.exclude):
                from .validate import validate_against_rig
                code = validate_against_rig(args)
            return code
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
