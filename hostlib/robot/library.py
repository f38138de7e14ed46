"""HilrigLibrary: the Robot Framework face of hilrig (a keyword library and a listener v3),
thin over hostlib.session.RunSession.

Three ways the YAML cases become Robot tests, one test per case and sweep point:

* `robot testcases/` (no options): testcases/hilrig.robot lists every case by test
  name and tags (written by `python -m hostlib.robot.suite testcases/`, hostlib.robot.suite).
  Robot's own `--test`, `--include`, `--exclude` and `--rerunfailed` select among them
  as in any suite; when the run starts this listener binds each listed test to its
  YAML case (a listed name with no case fails, naming the fix).
* A placeholder test (tag hilrig:placeholder) stands in for cases the file does not
  list: a thin suite of only the placeholder expands every case under its folder,
  and the shipped file's placeholder adds cases written after it (when Robot's
  selection left the placeholder in).
* `robot --parser hostlib.robot.YamlParser DIR/` (a lab's own folder of YAML, no
  .robot file needed): every YAML file is a suite whose tests exist before Robot
  filters.

Variables select too, with hostlib.selection (the rules of `hilrig run` and pytest):
      --variable "CASE:<exact name, brackets and all, or a * glob>"
      --variable "TAG:<tag expression>"   (AND / OR / NOT, globs; INCLUDE is the same)
      --variable "EXCLUDE:<tag expression>"
Robot's `--include`/`--exclude` (from ${OPTIONS}) join them. A case tagged `grid` runs
only when asked for: by an include naming it, or by Robot's `--test`/`--rerunfailed`.

RIG: a rig name (rigs/<name>.yaml) or a path; else $HILRIG_RIG; else rigs/sim.yaml.
PLACE:<name> or PLACE_TAGS:<terms> runs on a lab place (docs/scale-out.md), reserved when the
run starts and released at its end; PLACE_TIMEOUT:<s>, LEASE:<s>, COORDINATOR:<host:port>.
REQUIRE_DEVICES:true: a device the rig lists but that is not attached fails the test
(ERROR (device)); the rig file's `require_devices: true` does the same.

Every test gets a `verdict:<pass|marginal|fail|error|skip>` tag (report.html counts
them per tag) and `error:<kind>` on an ERROR. A run in which no case executed ends
with a failing test "Nothing Was Tested".
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from robot.api import logger
from robot.api.deco import keyword
from robot.libraries.BuiltIn import BuiltIn

from .._exceptions import ConfigError, HilrigError
from ..dsl.case import Case
from ..lab.place import PlaceRequest, place_request
from ..reports.tables import KEY_METRICS
from ..results.record import CaseResult, Verdict
from ..results.verdict import format_metric, message_line
from ..selection import Selection, case_tags
from .suite import PLACEHOLDER_TAG, REGENERATE, RUN_KEYWORD, SUITE_FILE, listed_names

if TYPE_CHECKING:
    from ..session import RunSession

NOTHING_TESTED = "Nothing Was Tested"

# Cases behind the generated tests, by index (the keyword's argument); the YAML
# parser fills it while Robot builds the suites, the listener while it expands.
CASES: list[Case] = []
LOAD_ERRORS: list[str] = []


def resolve_rig_path(value: str | None) -> Path:
    """RIG value -> rig file: a name (rigs/<name>.yaml) or a path; empty -> $HILRIG_RIG -> rigs/sim.yaml."""
    from ..rig import default_rig_path

    return Path(default_rig_path((value or "").strip() or None))


def _variable(name: str, default: object = "") -> object:
    value = BuiltIn().get_variable_value(f"${{{name}}}")
    return default if value is None else value


def _robot_tags(option: str) -> list[str]:
    """Robot's own --include or --exclude patterns (`${OPTIONS}`)."""
    options = BuiltIn().get_variable_value("${OPTIONS}")
    return [str(t) for t in options[option]] if options else []


def _seconds(name: str) -> float | None:
    text = str(_variable(name)).strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"--variable {name}:{text}: give a number of seconds") from None


def _place_request() -> PlaceRequest | None:
    """PLACE / PLACE_TAGS (+ PLACE_TIMEOUT, LEASE, COORDINATOR): the lab place to run on."""
    return place_request(str(_variable("PLACE")), str(_variable("PLACE_TAGS")), timeout_s=_seconds("PLACE_TIMEOUT"),
                         coordinator=str(_variable("COORDINATOR")), lease_s=_seconds("LEASE"))


def _truthy(value: object) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def add_case_test(suite, case: Case):
    """One test calling `Run Hilrig Case <index>`, named and tagged like the case."""
    test = suite.tests.create(name=case.test_name, tags=case_tags(case), lineno=case.source_line)
    bind_case(test, case)
    return test


def bind_case(test, case: Case) -> None:
    """The test runs `case`: its body becomes `Run Hilrig Case <index>`."""
    CASES.append(case)
    test.metadata["source"] = f"{case.source_file}:{case.source_line}"
    test.body.clear()
    test.body.create_keyword(name=RUN_KEYWORD, args=[str(len(CASES) - 1)])


def _listed(test) -> bool:
    """A test the suite file lists by name: its body is `Run Hilrig Case` with no argument."""
    return len(test.body) == 1 and getattr(test.body[0], "name", None) == RUN_KEYWORD and not test.body[0].args


def add_load_error_test(suite, text: str, where: str):
    """A broken case or rig file fails loudly with its file:line text, never an empty green suite."""
    LOAD_ERRORS.append(text)
    test = suite.tests.create(name="Load hilrig cases", tags=["hilrig:load-error"],
                              doc=f"Loading the cases under {where} failed.")
    test.body.create_keyword(name="Report Hilrig Load Error", args=[str(len(LOAD_ERRORS) - 1)])
    return test


def _case_of(test) -> Case | None:
    for step in test.body:
        if getattr(step, "name", None) == RUN_KEYWORD and step.args:
            return CASES[int(step.args[0])]
    return None


def _execution_order(suite):
    """Tests in the order Robot runs them: child suites first, then the suite's own tests."""
    for child in suite.suites:
        yield from _execution_order(child)
    yield from suite.tests


class HilrigLibrary:
    """Runs hilrig YAML cases as Robot tests. Keyword: `Run Hilrig Case`."""

    ROBOT_LIBRARY_SCOPE = "GLOBAL"
    ROBOT_LISTENER_API_VERSION = 3
    ROBOT_AUTO_KEYWORDS = False  # listener methods must not become keywords

    def __init__(self) -> None:
        self.ROBOT_LIBRARY_LISTENER = self
        self.session: RunSession | None = None  # opened when the run starts
        self._prepared = False
        self._last_test_id: str | None = None
        self._last_suite_id: str | None = None
        self._selection = Selection()
        self._logged_result: CaseResult | None = None  # the running test's, logged at its end

    # ---------------------------------------------------------------- listener v3

    def start_suite(self, data, result) -> None:
        if self._prepared:
            return
        self._prepared = True  # the whole run is prepared once, at the first suite that imports us
        root = data
        while root.parent is not None:
            root = root.parent
        try:
            self._prepare(root)
        except (HilrigError, ImportError) as exc:
            add_load_error_test(data, str(exc), str(data.source or Path.cwd()))
            return
        tests = list(_execution_order(root))
        hilrig_tests = [t for t in tests if _case_of(t) is not None]
        if not hilrig_tests:
            if not any("hilrig:load-error" in t.tags for t in tests):  # a load error says enough
                test = data.tests.create(name=NOTHING_TESTED, tags=["hilrig:run-check"])
                test.body.create_keyword(name="Fail", args=[f"nothing was tested: no case selected by "
                                                            f"{self._selection.describe()}"])
            return
        self._last_test_id = hilrig_tests[-1].id
        self._last_suite_id = hilrig_tests[-1].parent.id
        if self.session is None:  # never: _prepare made it
            return
        self.session.selected = len(hilrig_tests)
        self.session.open()  # only a run with tests holds an outbox file
        logger.console(f"hilrig: run {self.session.run_id}, rig {self.session.rig_path}, "
                       f"{len(hilrig_tests)} case(s), selection: {self._selection.describe()}"
                       + (", devices required" if self.session.require_devices else ""))

    def _prepare(self, root) -> None:
        """Expand placeholders and apply the variable and ${OPTIONS} selection everywhere."""
        from ..session import RunSession

        include = [str(_variable("TAG")), str(_variable("INCLUDE")), *_robot_tags("include")]
        exclude = [str(_variable("EXCLUDE")), *_robot_tags("exclude")]
        self._selection = Selection.of(names=str(_variable("CASE")), include=include, exclude=exclude)
        self.session = RunSession(resolve_rig_path(str(_variable("RIG"))),
                                  require_devices=_truthy(_variable("REQUIRE_DEVICES", "false")),
                                  say=logger.console, place=_place_request())
        # Tests the YAML parser made already exist: then a placeholder suite stands down.
        parsed = any(_case_of(t) is not None for t in _execution_order(root))
        for suite in list(_suites(root)):
            self._prepare_suite(suite, parsed)

    def _prepare_suite(self, suite, parsed: bool) -> None:
        tests = list(suite.tests)
        placeholder = any(PLACEHOLDER_TAG in t.tags for t in tests)
        if placeholder or any(_listed(t) for t in tests):
            suite.tests = [t for t in tests if PLACEHOLDER_TAG not in t.tags]
            if not parsed:  # else the YAML parser made the tests already; the placeholder stands down
                self._bind_suite(suite, placeholder)
            return
        chosen = [t for t in tests if (c := _case_of(t)) is None or self._selection.matches(c)]
        if len(chosen) != len(tests):
            suite.tests = chosen

    def _bind_suite(self, suite, placeholder: bool) -> None:
        """Bind the listed tests Robot selected to their YAML cases; with the placeholder
        still in (Robot selected nothing away), add the cases the file does not list."""
        from ..dsl import load_cases

        suite_dir = Path(suite.source).parent if suite.source else Path.cwd()
        listed = [t for t in suite.tests if _listed(t)]
        try:
            cases = load_cases([suite_dir])
        except HilrigError as exc:
            suite.tests = [t for t in suite.tests if not _listed(t)]
            add_load_error_test(suite, str(exc), str(suite_dir))
            return
        by_name = {c.test_name: c for c in cases}
        selection = self._selection
        if not placeholder:  # Robot's --test/--include/--rerunfailed chose these by name
            selection = dataclasses.replace(selection, names=selection.names or tuple(t.name for t in listed))
        keep = []
        for test in suite.tests:
            case = by_name.get(test.name) if _listed(test) else None
            if _listed(test) and case is None:
                test.body.clear()
                test.body.create_keyword(name="Fail", args=[
                    f"{SUITE_FILE} lists {test.name!r} but no YAML case under {suite_dir} has that name; "
                    f"rewrite the suite file: {REGENERATE} {suite_dir}"])
            elif case is not None:
                if not selection.matches(case):
                    continue
                bind_case(test, case)
            keep.append(test)
        suite.tests = keep
        # Against the file, not the tests Robot kept: a case its --exclude left out is listed.
        in_file = listed_names(Path(suite.source)) if suite.source else {t.name for t in listed}
        unlisted = [c for c in cases if c.test_name not in in_file]
        if placeholder:
            for case in selection.apply(unlisted):
                add_case_test(suite, case)
        if unlisted and (listed or not placeholder):
            logger.warn(f"hilrig: {len(unlisted)} YAML case(s) under {suite_dir} are not listed in {SUITE_FILE} "
                        f"(e.g. {unlisted[0].test_name!r}); Robot's --test/--include cannot select them: "
                        f"{REGENERATE} {suite_dir}")

    def end_test(self, data, result) -> None:
        case_result, self._logged_result = self._logged_result, None
        if case_result is not None:
            # Logged by the listener at the test's end, Robot puts it in the test's own body:
            # visible when the test is opened, not inside the collapsed `Run Hilrig Case`.
            evidence = self.session.evidence if self.session is not None else None
            _log_case(case_result, evidence.directory if evidence is not None else None)
        if data.id != self._last_test_id or self.session is None:
            return
        if self.session.nothing_tested:
            test = data.parent.tests.create(name=NOTHING_TESTED, tags=["hilrig:run-check"])
            test.body.create_keyword(name="Fail", args=[self.session.nothing_tested_reason()])

    def end_suite(self, data, result) -> None:
        if data.id != self._last_suite_id or self.session is None:
            return
        session, self.session = self.session, None
        log_file = _variable("LOG FILE", "NONE")
        if str(log_file).upper() != "NONE":  # the run report links Robot's log.html
            session.report_links["Robot log"] = Path(str(log_file))
        session.close()  # evidence, run row, release, HTML report, ship (printed by `say`)
        if session.results and session.run_id and session.outbox and session.evidence:
            result.metadata["hilrig evidence"] = str(session.evidence.path)
            result.metadata["hilrig outbox"] = str(session.outbox.file_for(session.run_id))
        if session.report_path is not None:  # Robot renders [target|text] metadata as a link
            result.metadata["hilrig report"] = f"[{session.report_path.resolve().as_uri()}|{session.report_path.name}]"
        logger.console(f"hilrig: {session.tally()}\nhilrig results: {session.result_paths()}"
                       + (f"\n{session.report_line()}" if session.report_line() else ""))

    # ---------------------------------------------------------------- keywords

    @keyword("Report Hilrig Load Error")
    def report_load_error(self, index: str) -> None:
        """Fails with the error that stopped the cases from loading."""
        raise AssertionError(LOAD_ERRORS[int(index)])

    @keyword(RUN_KEYWORD)
    def run_hilrig_case(self, index: str) -> None:
        """Runs the expanded case number `index` on the rig; records it in the outbox and evidence.

        PASS passes; PASS (marginal) passes with tag `verdict:marginal`; a threshold FAIL
        fails with the one-line summary; a device the rig lacks is SKIPped; an ERROR fails
        with a message starting `ERROR (<kind>)` and tags `verdict:error`, `error:<kind>`.
        """
        if self.session is None:
            raise AssertionError("the hilrig run is not open (was the library imported as a listener?)")
        result = self.session.run(CASES[int(index)])
        self._logged_result = result
        if result.place:   # a lab run: report.html's statistics by tag count each place's tests
            BuiltIn().set_tags(f"place:{result.place}")
        self._report(result)

    # ---------------------------------------------------------------- helpers

    def _report(self, result: CaseResult) -> None:
        builtin = BuiltIn()
        verdict = result.verdict
        builtin.set_test_metadata("verdict", verdict.label)
        builtin.set_test_metadata("run_id", result.run_id)
        # The key metrics only (every metric is in the evidence and the outbox): the test's
        # header in log.html stays short, the case's view below it shows them first.
        for name in KEY_METRICS:
            if name in result.metrics:
                builtin.set_test_metadata(name, format_metric(name, result.metrics[name]))
        summary = message_line(result)
        builtin.set_test_message(summary)
        tags = [verdict.tag] + ([f"error:{result.kind.value}"] if result.kind else [])
        builtin.set_tags(*tags)
        if verdict.passed:
            return
        if verdict is Verdict.SKIP:
            builtin.skip(summary)
        raise AssertionError(summary)


def _log_case(result: CaseResult, evidence_dir: Path | None) -> None:
    """The case in log.html: key metrics, thresholds, per-second plot, an RF case's plots
    and its SigMF recording (in the run's `evidence_dir`) (hostlib.reports)."""
    from ..reports import case_log_html

    try:
        logger.info(case_log_html(result, evidence_dir=evidence_dir), html=True)
    except Exception as exc:  # noqa: BLE001  the log's view of a case never changes its verdict
        logger.warn(f"hilrig: the case's HTML view failed ({type(exc).__name__}: {exc}); "
                    f"the result is in the evidence file")


def _suites(root):
    yield root
    for child in root.suites:
        yield from _suites(child)


class YamlParser:
    """Robot parser for a folder of hilrig YAML cases: `robot --parser hostlib.robot.YamlParser DIR/`.

    Each YAML file becomes a suite with one test per case and sweep point, built
    before Robot filters, so `--test`, `--include` and `--exclude` work as for any
    Robot test. The tests use HilrigLibrary, which runs them through the run session.
    """

    extension = ("yaml", "yml")

    def parse(self, source: Path, defaults):
        from robot.running import TestSuite

        from ..dsl.loader import load_file

        suite = TestSuite(name=TestSuite.name_from_source(source, (".yaml", ".yml")), source=source)
        suite.resource.imports.library("hostlib.robot.HilrigLibrary")
        cases, issues = load_file(source)
        if issues:
            add_load_error_test(suite, str(ConfigError(issues)), str(source))
            return suite
        for case in cases:
            add_case_test(suite, case)
        return suite
