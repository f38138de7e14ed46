"""HilrigLibrary: the Robot Framework face of hilrig (a keyword library and a listener v3).

Robot reads no YAML, and name/tag filtering (--test, --include) happens before
listeners run. So the thin suite testcases/hilrig.robot holds one placeholder
test tagged `hilrig:placeholder`; in `start_suite` this library replaces it with
one test per YAML case and sweep point found under the suite file's directory,
each calling `Run Hilrig Case`. Selection works through variables applied
during that expansion:

    robot --variable RIG:sim --variable CASE:'RX*udp*' --variable TAG:smoke testcases/

RIG: a rig name (rigs/<name>.yaml) or a path; else $HILRIG_RIG; else the default rig.
CASE: a glob on the test name (case-insensitive). TAG: a glob on any tag.
"""
from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

from robot.api import logger
from robot.api.deco import keyword
from robot.libraries.BuiltIn import BuiltIn

from .._exceptions import ConfigError, HilrigError, InfrastructureError
from ..results.save import save_result
from ..results import Evidence, Outbox, html_tables, new_run_id, results_dirs, summary_line
from ..results.record import CaseResult, iso_utc, utc_now
from ..results.verdict import format_metric, message_line

PLACEHOLDER_TAG = "hilrig:placeholder"


def resolve_rig_path(value: str | None) -> Path:
    """RIG value -> rig file: a name (rigs/<name>.yaml) or a path; empty -> $HILRIG_RIG -> rigs/sim.yaml."""
    from ..rig import default_rig_path

    return Path(default_rig_path((value or "").strip() or None))


def _variable(name: str) -> str:
    value = BuiltIn().get_variable_value("${%s}" % name)
    return "" if value is None else str(value)


def _matches(pattern: str, *texts: str) -> bool:
    pattern = pattern.lower()
    return any(fnmatch.fnmatchcase(t.lower(), pattern) for t in texts)


def case_tags(case: Any) -> list[str]:
    return [
        f"device:{case.device}",
        f"transport:{case.transport.kind}",
        f"direction:{case.direction}",
        *[str(t) for t in (case.tags or ())],
    ]


class HilrigLibrary:
    """Runs hilrig YAML cases as Robot tests. Keyword: `Run Hilrig Case`."""

    ROBOT_LIBRARY_SCOPE = "GLOBAL"
    ROBOT_LISTENER_API_VERSION = 3
    ROBOT_AUTO_KEYWORDS = False  # listener methods must not become keywords

    def __init__(self) -> None:
        self.ROBOT_LIBRARY_LISTENER = self
        self.cases: list[Any] = []
        self.rig: Any = None
        self.rig_path: Path | None = None
        self.run_id: str | None = None
        self.outbox: Outbox | None = None
        self.outbox_file: Path | None = None
        self.evidence: Evidence | None = None
        self.run_lock = None          # flock on the run's outbox file: not shipped while we write it
        self.run_started: str | None = None
        self.verdicts: list[str] = []
        self._load_errors: list[str] = []
        self._expanded: set[str] = set()  # suite ids this library expanded

    # ---------------------------------------------------------------- listener v3

    def start_suite(self, data, result) -> None:
        placeholders = [t for t in data.tests if PLACEHOLDER_TAG in t.tags]
        if not placeholders:
            return
        self._expanded.add(data.id)
        keep = [t for t in data.tests if PLACEHOLDER_TAG not in t.tags]
        where = list(data.tests).index(placeholders[0])
        suite_dir = Path(data.source).parent if data.source else Path.cwd()
        try:
            generated = self._expand(data, suite_dir)
        except (HilrigError, ImportError) as exc:
            # A broken case or rig file fails the suite loudly with the file:line text,
            # rather than leaving an empty (and green) suite.
            self._load_errors.append(str(exc))
            index = len(self._load_errors) - 1
            test = data.tests.create(name="Load hilrig cases", tags=["hilrig:load-error"],
                                     doc=f"Loading the cases under {suite_dir} failed.")
            test.body.create_keyword(name="Report Hilrig Load Error", args=[str(index)])
            generated = [test]
        data.tests = keep[:where] + generated + keep[where:]

    def _expand(self, data, suite_dir: Path) -> list:
        from ..dsl import load_cases
        from ..rig import load_rig

        self.rig_path = resolve_rig_path(_variable("RIG"))
        self.rig = load_rig(self.rig_path)
        cases = load_cases([suite_dir])
        case_glob, tag_glob = _variable("CASE").strip(), _variable("TAG").strip()
        selected = [
            c for c in cases
            if (not case_glob or _matches(case_glob, c.test_name))
            and (not tag_glob or _matches(tag_glob, *case_tags(c)))
        ]
        if not selected:
            raise ConfigError(f"{len(cases)} cases under {suite_dir}, none selected by "
                              f"CASE={case_glob or '*'} TAG={tag_glob or '*'}")
        if self.run_id is None:
            self.run_id = new_run_id()
            outbox_dir, evidence_dir = results_dirs(self.rig)
            self.outbox = Outbox(outbox_dir)
            self.outbox_file = self.outbox.file_for(self.run_id)
            self.run_lock = self.outbox.hold(self.run_id)
            self.run_started = iso_utc(utc_now())
            self.evidence = Evidence(evidence_dir, self.run_id, rig_path=self.rig_path,
                                     rig_name=getattr(self.rig, "name", None))
        logger.console(f"hilrig: run {self.run_id}, rig {self.rig_path}, {len(selected)} of {len(cases)} cases")
        tests = []
        for case in selected:
            index = len(self.cases)
            self.cases.append(case)
            test = data.tests.create(
                name=case.test_name,
                tags=case_tags(case),
                metadata={"source": f"{case.source_file}:{case.source_line}"},
                lineno=case.source_line,
            )
            test.body.create_keyword(name="Run Hilrig Case", args=[str(index)])
            tests.append(test)
        return tests

    def end_suite(self, data, result) -> None:
        if data.id not in self._expanded:
            return
        if self.evidence is not None and self.evidence.doc["cases"]:
            path = self.evidence.finish()
            result.metadata["hilrig evidence"] = str(path)
            result.metadata["hilrig outbox"] = str(self.outbox_file)
            logger.console(f"hilrig results: outbox {self.outbox_file}\n"
                           f"                evidence {path}")
        self._finish_run()

    def _finish_run(self) -> None:
        """Close the run: its hilrig_run summary row, release the file, ship the outbox.
        Shipping problems are printed, never raised: the verdicts are already final."""
        if self.outbox is None or self.run_lock is None:
            return
        from ..results.influx import ship_after_run

        try:
            if self.verdicts:
                self.outbox.append_run_summary(self.run_id, getattr(self.rig, "name", "") or "", self.verdicts,
                                               self.run_started, iso_utc(utc_now()))
        except InfrastructureError as exc:
            logger.console(f"hilrig results: {exc}")
        finally:
            self.run_lock.release()
            self.run_lock = None
        for line in ship_after_run(self.rig, self.outbox.path):
            logger.console(line)

    # ---------------------------------------------------------------- keywords

    @keyword("Report Hilrig Load Error")
    def report_load_error(self, index: str) -> None:
        """Fails with the error that stopped the cases from loading."""
        raise AssertionError(self._load_errors[int(index)])

    @keyword("Run Hilrig Case")
    def run_hilrig_case(self, index: str) -> None:
        """Runs the expanded case number `index` on the rig; records it in the outbox and evidence.

        PASS passes; a threshold FAIL fails with the one-line summary; a device the
        rig lacks is SKIPped; an infrastructure or device error fails with a message
        starting `ERROR (infrastructure)` / `ERROR (device)` and tag `error:<kind>`.
        """
        from .. import engine

        case = self.cases[int(index)]
        started = iso_utc(utc_now())
        try:
            # run_case turns every device, rig and set-up problem into the verdict
            # itself (SKIP / ERROR); what escapes it is a bug.
            result = engine.run_case(case, self.rig, run_id=self.run_id, progress=self._progress(case))
        except Exception as exc:  # a bug: still leave a trace in the results, then let Robot show it
            self._record(self._failed(case, started, "ERROR", f"internal: {type(exc).__name__}: {exc}"))
            raise
        try:
            self._record(result)
        except InfrastructureError as exc:
            BuiltIn().set_tags("error:infrastructure")
            raise AssertionError(f"ERROR (infrastructure) {exc}") from exc
        self._report(result)

    # ---------------------------------------------------------------- helpers

    def _failed(self, case: Any, started: str, verdict: str, error: str | None, message: str = "") -> CaseResult:
        device = (getattr(self.rig, "devices", None) or {}).get(case.device)
        result = CaseResult(
            case=case, rig_name=getattr(self.rig, "name", "") or "", device=case.device,
            driver=getattr(device, "driver", "") or "", run_id=self.run_id or "", started_utc=started,
            ended_utc=iso_utc(utc_now()), verdict=verdict, message=message, error=error,
        )
        result.message = summary_line(result)  # the reason (message) becomes the one-line summary
        return result

    def _record(self, result: CaseResult) -> None:
        self.verdicts.append(result.verdict)
        save_result(result, outbox=self.outbox, evidence=self.evidence)

    def _progress(self, case: Any):
        name = case.test_name if len(case.test_name) <= 40 else case.test_name[:37] + "..."

        def progress(row: dict) -> None:
            parts = [f"{name} t={row.get('t_s', 0):.0f}s"]
            for key, label in (("throughput_sps", ""), ("missing_frames", "miss "), ("overruns", "O "),
                               ("underruns", "U ")):
                if key in row:
                    parts.append(label + format_metric(key, row[key]))
            logger.console("  " + "  ".join(parts))

        return progress

    def _report(self, result: CaseResult) -> None:
        builtin = BuiltIn()
        builtin.set_test_metadata("verdict", result.verdict)
        builtin.set_test_metadata("run_id", result.run_id)
        for name, value in result.metrics.items():
            builtin.set_test_metadata(name, format_metric(name, value))
        logger.info(html_tables(result), html=True)
        summary = message_line(result)
        builtin.set_test_message(summary)
        if result.verdict == "PASS":
            return
        if result.verdict == "SKIP":
            builtin.skip(summary)
        if result.verdict == "ERROR":
            builtin.set_tags(f"error:{result.error_kind}")
        raise AssertionError(summary)
