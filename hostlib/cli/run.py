"""`hilrig run`: run cases from the shell through the run session, with live progress,
a verdict table per case and a tally at the end. The exit code is the session's."""
from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.text import Text

from ..dsl import load_cases
from ..dsl.case import Case
from ..results import render_verdict
from ..results.record import Verdict
from ..results.verdict import STYLE, render_blocks, render_study
from ..selection import Selection
from ..session import RunSession
from .lab import place_request_of
from .validate import estimated_seconds


def stats_line(row: dict[str, float]) -> str:
    """'9.998 MS/s 40.0 MB/s lost 0/12345 frames O 0 U 0': counted as the verdict counts; a
    paced sender adds its achieved period (p50/p99 so far) and the datagrams it sent late
    catching up, a tcp stream its connection's RTT, congestion window and retransmits."""
    lost = row.get("total_missing_frames", row.get("missing_frames", 0))
    total = row.get("total_frames", 0)
    return (f"{row['throughput_sps'] / 1e6:9.3f} MS/s {row.get('throughput_Bps', 0) / 1e6:8.1f} MB/s"
            f"  lost {lost:.0f}/{total:.0f} frames"
            f"  O {row.get('total_overruns', row.get('overruns', 0)):.0f}"
            f"  U {row.get('total_underruns', row.get('underruns', 0)):.0f}"
            + (f"  pattern errors {row['total_pattern_errors']:.0f}" if row.get("total_pattern_errors") else "")
            + (f"  paced p50/p99 {row['pacing_period_p50_s'] * 1e6:.1f}/{row['pacing_period_p99_s'] * 1e6:.1f} us"
               if "pacing_period_p50_s" in row else "")
            + (f" late {row['pacing_sent_late']:.0f}" if row.get("pacing_sent_late") else "")
            + (f"  tcp rtt {row['tcp_rtt_s'] * 1e3:.3f} ms cwnd {row['tcp_cwnd_segments']:.0f}"
               f" retrans {row['tcp_retransmits']:.0f}" if "tcp_rtt_s" in row else ""))


class LiveProgress:
    """One rich progress bar per case over its measured window (a line a second when not a
    terminal). Names are printed as text, never as markup: `[decimation=2]` stays visible."""

    def __init__(self, console: Console):
        self.console = console
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def start(self, case: Case) -> None:
        if not self.console.is_terminal:
            return
        self.progress = Progress(
            TextColumn("  {task.description}"), BarColumn(bar_width=24), TaskProgressColumn(),
            TextColumn("{task.fields[stats]}"), TextColumn("left"), TimeRemainingColumn(),
            console=self.console, transient=True)
        self.progress.start()
        self.task = self.progress.add_task(escape(f"{case.duration_s:g} s"), total=float(case.duration_s),
                                           stats="waiting for data")

    def __call__(self, row: dict[str, float]) -> None:
        if self.progress is None or self.task is None:
            left = max(row.get("window_s", 0.0) - row["t_s"], 0.0)
            self.console.print(f"  t={row['t_s']:5.1f} s {stats_line(row)}  {left:4.1f} s left",
                               highlight=False, markup=False)
            return
        self.progress.update(self.task, completed=min(row["t_s"], row.get("window_s", row["t_s"])),
                             stats=escape(stats_line(row)))

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def run_command(args: argparse.Namespace) -> int:
    console = Console()
    selection = Selection.of(names=args.case, include=args.include, exclude=args.exclude)
    cases = load_cases(args.paths)
    session = RunSession(args.rig, require_devices=args.require_devices, outbox_dir=args.outbox,
                         say=lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True),
                         place=place_request_of(args))
    chosen = session.select(cases, selection)
    if not chosen:
        console.print(Text(f"nothing was tested: no case of {len(cases)} selected by {selection.describe()}",
                           style="bold red"))
        return session.exit_code
    est = estimated_seconds(chosen, session.rig)
    live = LiveProgress(console)
    with session:
        where = f"place {session.held_place.name}, " if session.held_place is not None else ""
        console.print(Text(f"run {session.run_id} on {where}rig {session.rig.name} ({session.rig_path}): "
                           f"{len(chosen)} of {len(cases)} test(s), about {est:.0f} s"
                           + (", devices required" if session.require_devices else "")))
        for number, case in enumerate(chosen, 1):
            console.print(Text.assemble((f"[{number}/{len(chosen)}] ", "dim"), (case.test_name, "bold"),
                                        (f"  ({case.source_file}:{case.source_line})", "dim")))
            live.start(case)
            try:
                result = session.run(case, progress=live)
            finally:
                live.stop()
            console.print(render_verdict(result))
            if result.blocks:
                console.print(render_blocks(result.blocks))
            if result.study:
                console.print(render_study(result.study))
    # After the session closed: the evidence is final and the HTML report written from it.
    console.print(Text(session.tally(), style="bold"))
    console.print(Text(f"results: {session.result_paths()}"), highlight=False)
    if report_line := session.report_line():
        console.print(Text(report_line), highlight=False, soft_wrap=True)
    if session.nothing_tested:
        console.print(Text(session.nothing_tested_reason(), style=STYLE[Verdict.FAIL]))
    return session.exit_code
