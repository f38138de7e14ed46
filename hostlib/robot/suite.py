"""The shipped Robot suite file: one listed test per YAML case and sweep point.

Robot applies `--test`, `--include`, `--exclude` and `--rerunfailed` to the tests a
suite file lists, before any library or listener code runs. So that plain
`robot testcases/` takes them like any Robot suite, testcases/hilrig.robot lists
every case by its test name and tags; HilrigLibrary binds each listed test to its
YAML case when the run starts (the YAML stays the one source of what a case does).

    python -m hostlib.robot.suite testcases/            # rewrite testcases/hilrig.robot
    python -m hostlib.robot.suite --check testcases/    # exit 1 if it is not current

A placeholder test heads the list: when Robot's selection leaves it in (no
`--test`/`--include`), it stands in for YAML cases added since the file was written,
which the listener then adds (with a warning to regenerate).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from ..dsl.case import Case
from ..selection import case_tags

__all__ = ["PLACEHOLDER_NAME", "PLACEHOLDER_TAG", "RUN_KEYWORD", "SUITE_FILE", "check_suite", "listable",
           "listed_names", "suite_text"]

SUITE_FILE = "hilrig.robot"
PLACEHOLDER_NAME = "Hilrig Cases"
PLACEHOLDER_TAG = "hilrig:placeholder"
RUN_KEYWORD = "Run Hilrig Case"
REGENERATE = "python -m hostlib.robot.suite"

_HEAD = """\
*** Settings ***
Documentation     hilrig YAML cases: one Robot test per case and sweep point under this directory.
...
...               Written by `{regenerate} <dir>` from the YAML (a test checks it is current);
...               HilrigLibrary binds each test to its YAML case when the run starts, so Robot's
...               own --test, --include, --exclude and --rerunfailed select cases as in any suite.
...
...               Rig: --variable RIG:<name or path> (or $HILRIG_RIG), default rigs/sim.yaml.
...               Select also with --variable "CASE:<exact test name or a * glob>",
...               --variable "TAG:<tag expression>", --variable EXCLUDE:<tag expression>.
...               --variable REQUIRE_DEVICES:true fails a test whose listed device is not attached.
Library           hostlib.robot.HilrigLibrary


*** Test Cases ***
{placeholder}
    [Documentation]    Stands in for YAML cases added since this file was written (the listener adds them).
    [Tags]    {tag}
    Fail    HilrigLibrary did not bind the YAML cases (is hostlib importable and the library a listener?)
"""

# A name Robot would read differently from one data cell: a variable, a backslash,
# two spaces in a row, a tab or newline, a leading `#`, spaces at either end.
_NOT_ONE_CELL = re.compile(r"[$@&%]\{|\\|  |[\t\n]|^#|^\s|\s$")


def listable(test_name: str) -> bool:
    """The name reads back exactly as one Robot cell, so the suite file can list it."""
    return not _NOT_ONE_CELL.search(test_name)


def suite_text(cases: Sequence[Case]) -> str:
    """The suite file listing `cases` in the loader's order. A case whose name Robot
    cannot read back as written is left to the placeholder (named in a comment)."""
    parts = [_HEAD.format(regenerate=REGENERATE, placeholder=PLACEHOLDER_NAME, tag=PLACEHOLDER_TAG)]
    for case in cases:
        if not all(listable(text) for text in (case.test_name, *case_tags(case))):
            parts.append(f"\n# not listed, the placeholder adds it (its name or a tag is not one Robot cell): "
                         f"{case.test_name!r}\n")
            continue
        tags = "    ".join(case_tags(case))
        parts.append(f"\n{case.test_name}\n    [Tags]    {tags}\n    {RUN_KEYWORD}\n")
    return "".join(parts)


def listed_names(path: Path) -> set[str]:
    """The test names a suite file lists (whatever Robot's --include/--exclude kept of them)."""
    from robot.api import get_model
    from robot.parsing.model.blocks import TestCaseSection

    return {test.name for section in get_model(str(path)).sections if isinstance(section, TestCaseSection)
            for test in section.body if getattr(test, "name", None)}


def check_suite(directory: Path) -> str | None:
    """Why `directory`/hilrig.robot is not what the YAML under it gives, or None."""
    from ..dsl import load_cases

    path = directory / SUITE_FILE
    want = suite_text(load_cases([directory]))
    if not path.exists():
        return f"{path} is missing; write it with `{REGENERATE} {directory}`"
    if path.read_text() != want:
        return f"{path} does not list the YAML cases under {directory} as they are; rewrite it with " \
               f"`{REGENERATE} {directory}`"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    from ..dsl import load_cases

    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="the folder of YAML cases (e.g. testcases/)")
    parser.add_argument("--check", action="store_true", help="only check that the suite file is current")
    args = parser.parse_args(argv)
    if args.check:
        problem = check_suite(args.directory)
        print(problem or f"{args.directory / SUITE_FILE} is current")
        return 1 if problem else 0
    path = args.directory / SUITE_FILE
    path.write_text(suite_text(load_cases([args.directory])))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
