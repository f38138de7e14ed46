"""The nightly across rigs: the Robot suite once per place, in parallel, with pabot.

One argument file per place (`--name <place>`, `--variable PLACE:<place>`, the tag
`place:<place>`) and
pabot's `--argumentfileN` run every suite once per place; `--processtimeout` kills a
place's run that hangs, so one rig cannot hold the night. Each place's run is an
ordinary hilrig run session (hostlib.session): it reserves its place, tags every result
with the place and rig host, writes the one outbox and ships to the one InfluxDB of
the rig file. A place that is down or cannot be reserved ERRORs its own cases only.
pabot merges the Robot outputs into one output.xml; `hilrig lab nightly` then puts the
night's run reports together into one HTML report, the place as a column
(hostlib.reports.night).

pabot's PabotLib server is not started (`--no-pabotlib`) and its remote "hive" mode is
not used: nothing of the nightly listens on a port.
"""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .._exceptions import ConfigError, ConfigIssue
from ..results import new_run_id
from .place import DEFAULT_PLACE_TIMEOUT_S, default_coordinator

__all__ = ["NightlyOptions", "argument_file", "pabot_command", "read_places_file", "run_nightly"]


@dataclass(frozen=True)
class NightlyOptions:
    places: tuple[str, ...]
    suites: tuple[str, ...] = ("testcases/",)
    coordinator: str | None = None
    rig: str | None = None
    place_timeout_s: float = DEFAULT_PLACE_TIMEOUT_S
    process_timeout_s: float = 4 * 3600.0
    outputdir: Path = Path("results/nightly-lab")
    robot_args: tuple[str, ...] = ()


def read_places_file(path: Path) -> list[str]:
    """One place a line; blank lines and # comments are skipped."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ConfigError(ConfigIssue(str(path), None, "", f"cannot read the places file: {exc.strerror}")) from None
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]


def argument_file(place: str, options: NightlyOptions) -> str:
    """The Robot argument file of one place's run."""
    lines = [f"--name {place}",
             f"--variable PLACE:{place}",
             f"--variable PLACE_TIMEOUT:{options.place_timeout_s:g}",
             f"--variable COORDINATOR:{options.coordinator or default_coordinator()}",
             "--variable REQUIRE_DEVICES:true",
             f"--settag place:{place}"]
    if options.rig:
        lines.append(f"--variable RIG:{options.rig}")
    return "\n".join(lines) + "\n"


def pabot_command(options: NightlyOptions, argfiles: list[Path]) -> list[str]:
    # pabot and the robot it starts are this Python's (the venv's), whatever PATH says.
    command = [sys.executable, "-m", "pabot.pabot", "--no-pabotlib", "--processes", str(max(len(argfiles), 1)),
               "--processtimeout", f"{options.process_timeout_s:g}",
               "--command", sys.executable, "-m", "robot", "--end-command"]
    for number, path in enumerate(argfiles, 1):
        command += [f"--argumentfile{number}", str(path)]
    return [*command, "--outputdir", str(options.outputdir), *options.robot_args, *options.suites]


def run_nightly(options: NightlyOptions, say: Callable[[str], None]) -> tuple[int, str]:
    """Write the argument files and run pabot. Returns pabot's exit code (Robot's: the number
    of failed tests, capped) and the night's id; bad options are a ConfigError. The night's
    one report is the caller's (hostlib.reports.night reads pabot's merged output)."""
    if not options.places:
        raise ConfigError(ConfigIssue("", None, "--places", "name at least one place (or --places-file)"))
    if len(set(options.places)) != len(options.places):
        raise ConfigError(ConfigIssue("", None, "--places", f"a place is named twice: {' '.join(options.places)}"))
    night = new_run_id()
    argdir = options.outputdir / "args"
    argdir.mkdir(parents=True, exist_ok=True)
    argfiles = []
    for place in options.places:
        path = argdir / f"{place}.args"
        path.write_text(argument_file(place, options))
        argfiles.append(path)
    command = pabot_command(options, argfiles)
    say(f"hilrig lab nightly {night}: {len(options.places)} place(s) in parallel: {' '.join(options.places)}")
    say("$ " + " ".join(command))
    return subprocess.call(command), night
