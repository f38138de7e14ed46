"""A run as the reports read it: the evidence JSON (docs/results.md), verdicts read in one place.

Reports never import the engine: they read what a run wrote, so a report can be
made on another machine, later, from the evidence file alone.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from .._exceptions import ConfigError

# Order a technician reads verdicts in: what needs attention first.
VERDICT_ORDER = ("FAIL", "ERROR", "PASS (marginal)", "PASS", "SKIP")


def verdict_of(case: dict) -> str:
    """The verdict of one evidence case as a display label: PASS, PASS (marginal), FAIL,
    ERROR (<kind>) or SKIP. The one place that reads a verdict: it takes today's strings
    ("PASS", "FAIL", "SKIP", "ERROR" + error_kind), a "PASS (marginal)" string or a
    `marginal` flag, and a typed verdict written as a dict ({"outcome": .., "kind": ..}) or
    as its text ("ERROR(device)")."""
    raw = case.get("verdict")
    kind = case.get("error_kind")
    if isinstance(raw, dict):  # a typed verdict serialised as an object
        kind = raw.get("kind") or raw.get("error_kind") or kind
        marginal = bool(raw.get("marginal"))
        raw = raw.get("outcome") or raw.get("verdict") or raw.get("name") or ""
    else:
        marginal = False
    text = str(raw or "").strip()
    upper = text.upper().replace("_", "-")
    m = re.match(r"^ERROR\s*\(?\s*([a-z_-]*)\s*\)?$", text, re.I)
    if m:
        kind = m.group(1) or kind
        return f"ERROR ({kind})" if kind and kind != "other" else "ERROR"
    if upper.startswith("PASS"):
        marginal = marginal or "MARGINAL" in upper or bool(case.get("marginal"))
        return "PASS (marginal)" if marginal else "PASS"
    if upper in ("FAIL", "SKIP"):
        return upper
    return text or "ERROR"


def verdict_group(label: str) -> str:
    """The tally group of a verdict label: FAIL, ERROR, PASS (marginal), PASS or SKIP."""
    return "ERROR" if label.startswith("ERROR") else label


def verdict_rank(label: str) -> int:
    group = verdict_group(label)
    return VERDICT_ORDER.index(group) if group in VERDICT_ORDER else 0


def is_failure(label: str) -> bool:
    return verdict_group(label) in ("FAIL", "ERROR")


def finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass
class CaseView:
    """One case (or sweep point) of a run, from its evidence entry."""

    data: dict
    index: int

    @property
    def test_name(self) -> str:
        return str(self.data.get("test_name") or self.case.get("test_name") or f"case {self.index}")

    @property
    def name(self) -> str:
        """The case's name without the sweep point (all points of a sweep share it)."""
        return str(self.case.get("name") or self.test_name.split(" [", 1)[0])

    @property
    def case(self) -> dict:
        return self.data.get("case") or {}

    @property
    def verdict(self) -> str:
        return verdict_of(self.data)

    @property
    def metrics(self) -> dict[str, float]:
        return {k: v for k, v in (self.data.get("metrics") or {}).items() if finite(v)}

    @property
    def thresholds(self) -> list[dict]:
        return list(self.data.get("thresholds") or [])

    @property
    def series(self) -> list[dict]:
        return list(self.data.get("series") or [])

    @property
    def sweep_point(self) -> dict[str, Any]:
        return dict(self.case.get("sweep_point") or {})

    @property
    def message(self) -> str:
        return " ".join(str(self.data.get("message") or "").split())

    @property
    def anchor(self) -> str:
        return f"case-{self.index}"

    def get(self, key: str) -> Any:
        return self.data.get(key)


@dataclass
class RunView:
    """A run's evidence file, read."""

    path: Path | None
    doc: dict
    cases: list[CaseView] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return str(self.doc.get("run_id") or (self.path.stem if self.path else ""))

    @property
    def rig(self) -> dict:
        return self.doc.get("rig") or {}

    @property
    def versions(self) -> dict:
        return self.doc.get("versions") or {}

    def tally(self) -> list[tuple[str, int]]:
        """(verdict group, count) with FAIL and ERROR first; groups with no case left out."""
        counts: dict[str, int] = {}
        for c in self.cases:
            g = verdict_group(c.verdict)
            counts[g] = counts.get(g, 0) + 1
        return [(g, counts[g]) for g in VERDICT_ORDER if g in counts]


def run_from_doc(doc: dict, path: Path | None = None) -> RunView:
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        where = path or "evidence"
        raise ConfigError(f"{where}: not a hilrig evidence file (no 'cases' list; format "
                          f"{doc.get('format') if isinstance(doc, dict) else type(doc).__name__!r})")
    return RunView(path, doc, [CaseView(c, i) for i, c in enumerate(doc["cases"]) if isinstance(c, dict)])


def load_run(path: str | Path) -> RunView:
    """Read one evidence file; a missing or malformed file is a ConfigError naming it."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such evidence file") from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the evidence file: {exc}") from exc
    return run_from_doc(doc, path)


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
