"""pytest front-end: `pytest testcases/` collects every YAML case and sweep point as a test.

Registered as the pytest11 entry point `hilrig` (pyproject.toml), thin over
hostlib.session.RunSession like the CLI and the Robot library: same expansion,
same test names, same outbox/evidence/InfluxDB results.

* Which YAML files: those under a folder that holds `hilrig.robot` (testcases/),
  or any YAML file when `--hilrig-cases` is given (a lab's own folder).
* Names: the item name is the case's test name, so one sweep point is
  `pytest "testcases/sweeps/udp_frame_size.yaml::RX UDP frame size [transport.frame_bytes=4000]"`
  or `--case "<exact name or * glob>"`.
* Tags are markers (`-m smoke`, `-m "not reference"`, `-k smoke`); a tag's
  characters other than letters, digits and _ become _ (`transport:shm` -> `transport_shm`).
* `--rig NAME|PATH` (else $HILRIG_RIG, else rigs/sim.yaml); `--require-devices`.
* Verdicts: PASS and PASS (marginal) pass (marginal ones are listed at the end),
  FAIL fails and ERROR is a pytest error, both with the one-line summary, SKIP skips. A run in which no
  case executed exits 5 (pytest's "no tests collected", hilrig's "nothing tested").
* At the end: the tally, the outbox and evidence files and the HTML run report
  (`hilrig report: results/reports/<run_id>.html`), written by the run session.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .results.record import EXIT_NOTHING_TESTED, Verdict
from .results.verdict import message_line
from .selection import Selection, case_tags

if TYPE_CHECKING:
    from .dsl.case import Case

_SESSION_KEY = pytest.StashKey[Any]()
_ITEMS_KEY = pytest.StashKey[int]()
_MARKERS_KEY = pytest.StashKey[set]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hilrig", "hilrig YAML cases")
    group.addoption("--rig", dest="hilrig_rig", default=None,
                    help="hilrig rig file or name (default: $HILRIG_RIG, else rigs/sim.yaml)")
    group.addoption("--require-devices", dest="hilrig_require_devices", action="store_true",
                    help="a device the rig lists but that is not attached fails the case")
    group.addoption("--case", dest="hilrig_case", action="append", default=[],
                    help="hilrig test name, exact with its [sweep point], or a * glob (repeatable)")
    group.addoption("--place", dest="hilrig_place", default=None,
                    help="run the cases on this lab place (labgrid; docs/scale-out.md)")
    group.addoption("--place-tags", dest="hilrig_place_tags", default=None,
                    help="run on a lab place with these: driver=sim,channels>=2,max_rate>=61.44 MS/s")
    group.addoption("--place-timeout", dest="hilrig_place_timeout", type=float, default=None,
                    help="seconds to wait for the place before every case ERRORs (default 600)")
    group.addoption("--lease", dest="hilrig_lease", type=float, default=None,
                    help="the place's lease in seconds (default 90)")
    group.addoption("--coordinator", dest="hilrig_coordinator", default=None,
                    help="labgrid coordinator HOST:PORT (default $LG_COORDINATOR, else 127.0.0.1:20408)")
    group.addoption("--hilrig-cases", dest="hilrig_cases", action="store_true",
                    help="collect every YAML file as hilrig cases (a folder without hilrig.robot)")


def marker_name(tag: str) -> str:
    return re.sub(r"\W", "_", tag)


def _is_case_file(path: Path, config: pytest.Config) -> bool:
    if path.suffix not in (".yaml", ".yml"):
        return False
    if config.getoption("hilrig_cases"):
        return True
    return any((d / "hilrig.robot").is_file() for d in path.parents)


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    if _is_case_file(file_path, parent.config):
        return YamlCaseFile.from_parent(parent, path=file_path)
    return None


class YamlCaseFile(pytest.File):
    def collect(self):
        from ._exceptions import ConfigError
        from .dsl.loader import load_file

        cases, issues = load_file(self.path)
        if issues:
            yield LoadErrorItem.from_parent(self, name="load hilrig cases", text=str(ConfigError(issues)))
            return
        selection = Selection.of(names=self.config.getoption("hilrig_case"))
        for case in cases:
            if selection.name_matches(case.test_name):
                yield CaseItem.from_parent(self, name=case.test_name, case=case)


class LoadErrorItem(pytest.Item):
    # labgrid's pytest plugin (installed with hilrig's lab extra) reads every item's fixturenames.
    fixturenames: tuple[str, ...] = ()

    def __init__(self, *, text: str, **kw):
        super().__init__(**kw)
        self.text = text

    def runtest(self) -> None:
        raise CaseFailed(self.text)

    def repr_failure(self, excinfo, style=None):
        return str(excinfo.value)

    def reportinfo(self):
        return self.path, None, self.name


class CaseFailed(Exception):
    """A FAIL or ERROR verdict (or a load error): reported as its one-line summary."""


class CaseItem(pytest.Item):
    fixturenames: tuple[str, ...] = ()   # as LoadErrorItem: labgrid's pytest plugin reads it

    def __init__(self, *, case: Case, **kw):
        super().__init__(**kw)
        self.case = case
        known = self.config.stash.setdefault(_MARKERS_KEY, set())
        for tag in case_tags(case):
            name = marker_name(tag)
            if name not in known:  # registered, so -m and --strict-markers know it
                known.add(name)
                self.config.addinivalue_line("markers", f"{name}: hilrig tag {tag}")
            self.add_marker(name)

    def setup(self) -> None:
        # The case runs in setup, so that an ERROR (the case could not be measured) is
        # pytest's own "error" outcome and a FAIL (the device missed a threshold) its "failed".
        result = self.result = _session(self.config).run(self.case)
        self.user_properties.append(("verdict", result.verdict.value))
        if result.kind:
            self.user_properties.append(("error_kind", result.kind.value))
        if result.verdict is Verdict.SKIP:
            pytest.skip(message_line(result))
        if result.verdict is Verdict.ERROR:
            raise CaseFailed(message_line(result))

    def runtest(self) -> None:
        if not self.result.verdict.passed:
            raise CaseFailed(message_line(self.result))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo, style=None):
        # pytest formats a failure in setup with this one: an ERROR is its summary, no traceback.
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self):
        return self.path, self.case.source_line - 1, self.name


def _session(config: pytest.Config):
    session = config.stash.get(_SESSION_KEY, None)
    if session is None:
        from .session import RunSession

        reporter = config.pluginmanager.get_plugin("terminalreporter")

        def say(line: str) -> None:
            if reporter is None:
                print(line)
                return
            reporter.ensure_newline()
            reporter.write_line(line)

        from .lab.place import place_request

        place = place_request(config.getoption("hilrig_place"), config.getoption("hilrig_place_tags"),
                              timeout_s=config.getoption("hilrig_place_timeout"),
                              coordinator=config.getoption("hilrig_coordinator"),
                              lease_s=config.getoption("hilrig_lease"))
        session = RunSession(config.getoption("hilrig_rig"),
                             require_devices=config.getoption("hilrig_require_devices"), say=say, place=place)
        session.open()
        config.stash[_SESSION_KEY] = session
    return session


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[_ITEMS_KEY] = sum(isinstance(i, CaseItem) for i in session.items)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    run = session.config.stash.get(_SESSION_KEY, None)
    if run is None:
        return
    run.selected = session.config.stash.get(_ITEMS_KEY, 0)
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        run.finish(report=False)  # Ctrl-C: no waiting on a server or on plots; the next run ships it
    else:
        run.close()  # evidence, run row, release, HTML report, ship
    if run.nothing_tested and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = EXIT_NOTHING_TESTED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    run = config.stash.get(_SESSION_KEY, None)
    if run is None:
        return
    terminalreporter.section("hilrig")
    for result in run.results:
        if result.verdict in (Verdict.MARGINAL, Verdict.ERROR):
            terminalreporter.write_line(f"{result.verdict.label}: {result.case.test_name}: {message_line(result)}")
    terminalreporter.write_line(f"hilrig: {run.tally()}")
    terminalreporter.write_line(f"hilrig results: {run.result_paths()}")
    if run.report_line():
        terminalreporter.write_line(run.report_line())
    if run.nothing_tested:
        terminalreporter.write_line(run.nothing_tested_reason(), red=True)
