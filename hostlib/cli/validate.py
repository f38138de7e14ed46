"""`hilrig validate --rig RIG`: the selected cases against one rig, before anything runs."""
from __future__ import annotations

from ..dsl import load_cases
from ..results.record import EXIT_NOTHING_TESTED
from ..rig import default_rig_path, load_rig
from ..rig.requires import unmet_requirement
from ..selection import Selection, estimated_seconds


def rig_problem(case, rig) -> str | None:
    """Why `rig` would SKIP `case` (device alias, direction, transport, rate, requires), or None."""
    device = rig.devices.get(case.device)
    if device is None:
        return f"rig {rig.name!r} has no device {case.device!r} (it has: {', '.join(sorted(rig.devices))})"
    return device.unsupported_reason(case) or unmet_requirement(case, device)


def validate_against_rig(args) -> int:
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
