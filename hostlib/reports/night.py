"""One report for a night across places: the run sessions of a pabot nightly (one per
place, hostlib.lab.nightly) put together into one evidence file and one HTML report,
the same case on every place side by side (hostlib.reports.html "Across places").

Which runs made the night is read from Robot's merged output.xml: every run session
records its evidence file in its top suite's metadata (`hilrig evidence`).
"""
from __future__ import annotations

from pathlib import Path

from robot.api import ExecutionResult

from .._exceptions import ConfigError
from ..results.migrate import load_evidence
from ..results.schema import EvidenceRun, RigSnapshot
from ..verdicts import VERDICT_ORDER
from .html import render_run_report, write_text_atomic
from .model import run_view

__all__ = ["evidence_of_output", "merge_runs", "write_night_report"]

EVIDENCE_METADATA = "hilrig evidence"


def evidence_of_output(output_xml: Path) -> list[Path]:
    """The evidence files the run sessions behind a Robot output wrote, in run order."""
    try:
        result = ExecutionResult(str(output_xml))
    except Exception as exc:  # noqa: BLE001  Robot's DataError and parse errors: the file is not usable
        raise ConfigError(f"{output_xml}: not a Robot output ({exc})") from None
    found: list[Path] = []

    def visit(suite) -> None:   # a robot.result.TestSuite
        value = suite.metadata.get(EVIDENCE_METADATA)
        if value:
            found.append(Path(str(value)))
        for child in suite.suites:
            visit(child)
    visit(result.suite)
    return list(dict.fromkeys(found))


def merge_runs(runs: list[EvidenceRun], night_id: str) -> EvidenceRun:
    """One evidence document of the runs' cases (each keeps its place and its run id)."""
    cases = [c for run in runs for c in run.cases]
    verdicts = [c.verdict for c in cases]
    started = min((r.started_utc for r in runs), default="")
    ended = max((r.ended_utc or r.started_utc for r in runs), default=started)
    rigs = sorted({r.rig.name for r in runs if r.rig.name})
    return EvidenceRun(run_id=night_id, started_utc=started, ended_utc=ended,
                       rig=RigSnapshot(name=", ".join(rigs) or None),
                       versions=runs[0].versions if runs else {}, cases=cases,
                       tally={v: verdicts.count(v) for v in VERDICT_ORDER},
                       nothing_tested=not any(v.executed for v in verdicts))


def write_night_report(output_xml: Path, out: Path) -> Path:
    """The night's evidence (beside the report, .json) and its HTML report."""
    runs = [load_evidence(p) for p in evidence_of_output(output_xml)]
    night = merge_runs(runs, out.stem)
    evidence = out.with_suffix(".json")
    write_text_atomic(evidence, night.model_dump_json(indent=1) + "\n")
    return write_text_atomic(out, render_run_report(run_view(night, evidence)))
