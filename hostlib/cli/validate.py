"""`hilrig validate`: every issue of the case files, the runs they make, and with
`--rig RIG` the selected cases against one rig with the estimated run time."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from .._exceptions import ConfigError
from ..dsl import Case, load_cases, validate_paths
from ..engine.search import estimated_seconds as search_seconds
from ..engine.search import step_count
from ..results.record import EXIT_NOTHING_TESTED
from ..rig import default_rig_path, load_rig
from ..rig.inventory import Rig
from ..selection import Selection
from ..transports.config import ShmTransport, TcpTransport, UdpTransport
from ..units import format_quantity

__all__ = ["SETUP_OVERHEAD_S", "estimated_seconds", "rig_problem", "validate_against_rig", "validate_command"]

# What a case costs beyond its measured window: driver open, simulator start, first data,
# stop and drain (measured on the sim rig: 0.3-0.8 s; a USRP's open adds a few seconds).
SETUP_OVERHEAD_S = {"sim": 1.0, "soapy": 2.0, "uhd": 5.0}


def estimated_seconds(cases: Sequence[Case], rig: Rig | None = None) -> float:
    """Wall time the cases take on `rig` (the simulator's set-up when None): warm-up +
    duration + set-up per case; a rate search, its steps and its confirmation."""
    total = 0.0
    for case in cases:
        entry = rig.devices.get(case.device) if rig is not None else None
        overhead = SETUP_OVERHEAD_S.get(entry.driver if entry is not None else "sim", 1.0)
        if case.search is not None:
            total += search_seconds(case, overhead)
        else:
            total += case.warmup_s + case.duration_s + overhead
    return total


def validate_command(paths: Sequence[str], out: TextIO | None = None) -> int:
    """Print every issue as file:line: field: message; 0 if clean, 2 if not."""
    out = out or sys.stdout
    cases, issues = validate_paths(list(paths))
    for issue in issues:
        print(str(issue), file=out)
    if issues:
        bad_files = len({i.file for i in issues})
        print(f"FAILED: {len(issues)} problem(s) in {bad_files} file(s); nothing will run until they are fixed",
              file=out)
        return ConfigError.exit_code
    defs = {(c.source_file, c.source_line) for c in cases}
    swept = [c for c in cases if c.sweep_point]
    sweeps = {(c.source_file, c.source_line) for c in swept}
    files = {c.source_file for c in cases}
    print(f"OK: {len(files)} file(s), {len(defs)} case(s), {len(sweeps)} sweep(s) with {len(swept)} point(s), "
          f"{len(cases)} run(s) in total", file=out)
    for c in cases:
        print(f"  {c.test_name}: {c.direction} {c.transport.kind} {format_quantity(c.rate_sps, 'rate')} "
              f"x{c.channels} frame {c.frame_bytes} B{_link_note(c)}, {c.duration_s:g} s{_search_note(c)}  "
              f"({c.location})",
              file=out)
    searches = [c for c in cases if c.search is not None]
    if searches:
        print(f"  {len(searches)} rate search(es): about {estimated_seconds(searches):.0f} s on the simulator",
              file=out)
    return 0


def _link_note(c: Case) -> str:
    """What the link opens with, as the case resolved it (sized by rate): ', socket buffer
    4194304 B' | ', ring 256 slots' | ', 16 x 16384 B transfers'."""
    t = c.transport
    if isinstance(t, (UdpTransport, TcpTransport)):
        return f", socket buffer {t.socket_buffer_bytes} B"
    if isinstance(t, ShmTransport):
        return f", ring {t.slots} slots"
    return f", {t.transfers} x {t.transfer_bytes} B transfers"


def _search_note(c: Case) -> str:
    """', search decimation 16..6 (6 candidates, <=3 steps of 0.5 s, ~7 s)' for the run list."""
    if c.search is None:
        return ""
    s = c.search
    return (f", search {s.key} {s.values[0]}..{s.values[-1]} ({len(s.values)} candidates, "
            f"<={step_count(len(s.values))} steps of {s.step_s:g} s, then confirmed; "
            f"~{search_seconds(c, SETUP_OVERHEAD_S['sim']):.0f} s)")


def rig_problem(case: Case, rig: Rig) -> str | None:
    """Why `rig` would SKIP `case` (device alias, direction, transport, rate, requires), or None."""
    device = rig.devices.get(case.device)
    if device is None:
        return f"rig {rig.name!r} has no device {case.device!r} (it has: {', '.join(sorted(rig.devices))})"
    return device.can_run(case).why_not


def validate_against_rig(args: argparse.Namespace) -> int:
    rig_path = default_rig_path(args.rig)
    rig = load_rig(rig_path)
    selection = Selection.of(names=args.case, include=args.include, exclude=args.exclude)
    cases = load_cases(args.paths)
    chosen = selection.apply(cases)
    runnable = []
    for case in chosen:
        problem = rig_problem(case, rig)
        if problem:
            print(f"{case.source_file}:{case.source_line}: {case.test_name}: would SKIP: {problem}")
        else:
            runnable.append(case)
    est = estimated_seconds(runnable, rig)
    print(f"rig {rig.name} ({rig_path}): {len(chosen)} of {len(cases)} case(s) selected by "
          f"{selection.describe()}; {len(runnable)} would run, {len(chosen) - len(runnable)} would SKIP; "
          f"estimated run time {est:.0f} s ({est / 60:.1f} min)")
    if not runnable:
        print("nothing would be tested")
        return EXIT_NOTHING_TESTED
    return 0
