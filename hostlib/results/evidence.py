"""The evidence bundle of a run: one JSON file, `<evidence dir>/<run_id>.json`.

Holds what is needed to judge a result later without the machine it ran on:
run id, start/end, the rig file as it was, versions, and per case the resolved
case, metrics, thresholds (measured, limit, margin, passed), the per-second
series, verdict and message. Rewritten atomically after every case, so a run
that is killed keeps every case finished before the kill.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from .._exceptions import InfrastructureError
from ..verdicts import VERDICT_ORDER
from ._fsio import replace_durable
from .record import CaseResult, iso_utc, utc_now
from .schema import EvidenceRun, RigSnapshot
from .versions import versions as _versions


def rig_snapshot(rig_path: str | Path | None, rig_name: str | None = None) -> RigSnapshot:
    """The rig file's text and hash (what the run used, even if the file changes later)."""
    if rig_path is None:
        return RigSnapshot(name=rig_name)
    path = Path(rig_path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return RigSnapshot(name=rig_name, path=str(path.resolve()), error=f"cannot read {path}: {exc}")
    return RigSnapshot(name=rig_name, path=str(path.resolve()), sha256=hashlib.sha256(data).hexdigest(),
                       text=data.decode("utf-8", errors="replace"))


class Evidence:
    """The evidence file of one run, rewritten after every case (hostlib.results.schema)."""

    def __init__(self, directory: str | Path, run_id: str, *, rig_path: str | Path | None = None,
                 rig_name: str | None = None, versions: dict[str, str | None] | None = None):
        self.directory = Path(directory)
        self.path = self.directory / f"{run_id}.json"
        self.run = EvidenceRun(run_id=run_id, started_utc=iso_utc(utc_now()), rig=rig_snapshot(rig_path, rig_name),
                               versions=versions if versions is not None else _versions())

    def add(self, result: CaseResult) -> Path:
        """Add one case and rewrite the file."""
        self.run = self.run.model_copy(update={"cases": [*self.run.cases, result.to_record()],
                                               "ended_utc": iso_utc(result.ended_utc)})
        return self.write()

    def finish(self, *, nothing_tested: bool = False) -> Path:
        """Stamp the run's end and its tally (cases by verdict) and write the file a last time.
        `nothing_tested`: no case was selected, or every selected case SKIPped."""
        verdicts = [c.verdict for c in self.run.cases]
        tally = {v: verdicts.count(v) for v in VERDICT_ORDER}
        self.run = self.run.model_copy(update={"ended_utc": iso_utc(utc_now()), "tally": tally,
                                               "nothing_tested": nothing_tested})
        return self.write()

    def write(self) -> Path:
        text = self.run.model_dump_json(indent=1) + "\n"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            replace_durable(self.path, text)
        except OSError as exc:
            raise InfrastructureError(f"cannot write the evidence file {self.path}: {exc}") from exc
        return self.path
