"""`hilrig run`: run cases from the shell with a live progress line and a verdict table."""
from __future__ import annotations

import fnmatch
import sys

from rich.console import Console

from ..dsl import load_cases
from ..engine import run_case
from ..results.save import save_result
from ..results import Evidence, Outbox, new_run_id, render_verdict, results_dirs
from ..results.influx import ship_after_run
from ..results.record import iso_utc, utc_now
from ..rig import default_rig_path, load_rig

EXIT_FOR_VERDICT = {"PASS": 0, "SKIP": 0, "FAIL": 1}


def _progress_printer(console: Console):
    live = console.is_terminal

    def show(row: dict) -> None:
        line = (
            f"  t={row['t_s']:5.1f} s {row['throughput_sps'] / 1e6:9.3f} MS/s ({100 * row['throughput_ratio']:6.2f}%)"
            f" miss {row['missing_frames']:.0f} O {row['overruns']:.0f} U {row['underruns']:.0f}"
            f" pat {row['pattern_errors']:.0f}"
        )
        if live:
            console.file.write("\r" + line)
            console.file.flush()
        else:
            console.print(line, highlight=False)

    return show


def run_command(args) -> int:
    console = Console()
    rig_path = default_rig_path(args.rig)
    rig = load_rig(rig_path)
    cases = load_cases(args.paths)
    if args.case:
        cases = [c for c in cases if fnmatch.fnmatchcase(c.test_name, args.case)]
        if not cases:
            console.print(f"[red]no test matches --case {args.case!r}[/red]")
            return 2
    run_id = new_run_id()
    outbox_dir, evidence_dir = results_dirs(rig)
    outbox = Outbox(args.outbox or outbox_dir)
    evidence = Evidence(evidence_dir, run_id, rig_path=rig_path, rig_name=rig.name)
    console.print(f"run {run_id} on rig {rig.name} ({rig_path}): {len(cases)} test(s)")
    worst = 0
    started = iso_utc(utc_now())
    verdicts: list[str] = []
    run_lock = outbox.hold(run_id)  # the shipper leaves this run's file alone until we release it
    finished = False
    try:
        for case in cases:
            console.print(f"[bold]{case.test_name}[/bold]  ({case.source_file}:{case.source_line})")
            result = run_case(case, rig, run_id=run_id, progress=_progress_printer(console))
            if console.is_terminal:
                console.file.write("\n")
            save_result(result, outbox=outbox, evidence=evidence)
            verdicts.append(result.verdict)
            console.print(render_verdict(result))
            code = EXIT_FOR_VERDICT.get(result.verdict)
            if code is None:  # ERROR
                code = 4 if result.error_kind == "device" else 3
            worst = max(worst, code)
        finished = True
    finally:
        evidence.finish()
        try:
            if verdicts:
                outbox.append_run_summary(run_id, rig.name, verdicts, started, iso_utc(utc_now()))
        finally:
            run_lock.release()
        console.print(f"results: {outbox.file_for(run_id)} (outbox), {evidence.path} (evidence)")
    # Shipping never changes the exit code: the verdicts above are final either way. After an
    # interrupt nothing is shipped (no waiting on a server); the next run or `results push` does it.
    if finished:
        for line in ship_after_run(rig, outbox.path):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    return worst


if __name__ == "__main__":
    sys.exit(run_command(None))
