"""A run as the reports read it: the evidence file (hostlib.results.schema), one typed model.

Reports never import the engine: they read what a run wrote, so a report can be
made on another machine, later, from the evidence file alone.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

from pydantic import JsonValue

from .._exceptions import ConfigError
from ..results.migrate import evidence_from_doc, load_evidence
from ..results.schema import (
    CaseRecord,
    EvidenceRun,
    MetricValues,
    ResultRecord,
    RigSnapshot,
    ThresholdResult,
    Verdict,
)
from ..verdicts import VERDICT_ORDER


def finite(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class CaseView:
    """One case (or sweep point) of a run: its evidence record and its place in the run."""

    record: ResultRecord
    index: int

    @property
    def test_name(self) -> str:
        return self.record.test_name

    @property
    def name(self) -> str:
        """The case's name without the sweep point (all points of a sweep share it)."""
        return self.record.case.name

    @property
    def case(self) -> CaseRecord:
        return self.record.case

    @property
    def verdict(self) -> Verdict:
        return self.record.verdict

    @property
    def label(self) -> str:
        """'PASS', 'PASS (marginal)', 'FAIL', 'ERROR (device)', 'SKIP'."""
        return self.record.label

    @property
    def failure(self) -> bool:
        return self.record.verdict.failure

    @property
    def metrics(self) -> dict[str, float]:
        return {k: v for k, v in self.record.metrics.items() if v is not None}

    @property
    def thresholds(self) -> list[ThresholdResult]:
        return self.record.thresholds

    @property
    def series(self) -> list[MetricValues]:
        return self.record.series

    @property
    def sweep_point(self) -> dict[str, JsonValue]:
        return self.record.case.sweep_point

    @property
    def message(self) -> str:
        return " ".join(self.record.message.split())

    @property
    def anchor(self) -> str:
        return f"case-{self.index}"


@dataclass
class RunView:
    """A run's evidence file, read."""

    path: Path | None
    evidence: EvidenceRun
    cases: list[CaseView] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.evidence.run_id

    @property
    def rig(self) -> RigSnapshot:
        return self.evidence.rig

    @property
    def versions(self) -> dict[str, str | None]:
        return self.evidence.versions

    @property
    def places(self) -> list[str]:
        """The lab places the run's cases ran on, in order of first appearance (none: a local run)."""
        return list(dict.fromkeys(c.record.place for c in self.cases if c.record.place))

    def across_places(self) -> list[tuple[str, dict[str, CaseView]]]:
        """The same case on each place, side by side: (test name, {place: case}), in run order."""
        rows: dict[str, dict[str, CaseView]] = {}
        for c in self.cases:
            if c.record.place:
                rows.setdefault(c.test_name, {})[c.record.place] = c
        return list(rows.items())

    def place_versions(self) -> dict[str, list[str]]:
        """Per place, what its devices reported of themselves ("uhd 4.6.0", "hilrig-sim 0.9"),
        each distinct line once: the firmware and driver versions a regression is read against."""
        out: dict[str, list[str]] = {}
        for c in self.cases:
            if c.record.place:
                lines = out.setdefault(c.record.place, [])
                for key, value in c.record.device_versions.items():
                    line = f"{key} {value}"
                    if line not in lines:
                        lines.append(line)
        return out

    def tally(self) -> list[tuple[Verdict, int]]:
        """(verdict, count) with FAIL and ERROR first; verdicts with no case left out."""
        counts = {v: 0 for v in VERDICT_ORDER}
        for c in self.cases:
            counts[c.verdict] += 1
        return [(v, n) for v, n in counts.items() if n]


def run_view(evidence: EvidenceRun, path: Path | None = None) -> RunView:
    return RunView(path, evidence, [CaseView(c, i) for i, c in enumerate(evidence.cases)])


def run_from_doc(doc: JsonValue, path: Path | None = None) -> RunView:
    """A run from a parsed evidence document (any format hilrig reads)."""
    return run_view(evidence_from_doc(doc, str(path or "evidence")), path)


def load_run(path: str | Path) -> RunView:
    """Read one evidence file; a missing, malformed or unknown file is a ConfigError naming it."""
    return run_view(load_evidence(path), Path(path))


def evidence_files(evidence_dir: str | Path) -> list[Path]:
    """Evidence files of a folder, oldest run first (run ids sort by start time)."""
    d = Path(evidence_dir)
    return sorted(d.glob("*.json")) if d.is_dir() else []


def find_run(spec: str | None, evidence_dir: str | Path) -> Path:
    """A run given as a path, a run id (or a unique prefix of one) in evidence_dir, or
    the newest run there (no spec)."""
    files = evidence_files(evidence_dir)
    if spec:
        p = Path(spec)
        if p.suffix == ".json" or p.exists():
            if not p.is_file():
                raise ConfigError(f"{spec}: no such evidence file")
            return p
        hits = [f for f in files if f.stem == spec] or [f for f in files if f.stem.startswith(spec)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise ConfigError(f"run {spec!r}: no evidence file {spec}.json in {evidence_dir}"
                              + (f" (newest: {files[-1].stem})" if files else " (the folder has none)"))
        raise ConfigError(f"run {spec!r} is ambiguous in {evidence_dir}: " + ", ".join(f.stem for f in hits[:5]))
    if not files:
        raise ConfigError(f"no evidence files in {evidence_dir}: run the suite first (make run) or give a file")
    return files[-1]
