"""The evidence bundle of a run: one JSON file, `<evidence dir>/<run_id>.json`.

Holds what is needed to judge a result later without the machine it ran on:
run id, start/end, the rig file as it was, versions, and per case the resolved
case, metrics, thresholds (measured, limit, margin, passed), the per-second
series, verdict and message. Rewritten atomically after every case, so a run
that is killed keeps every case finished before the kill.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .._exceptions import InfrastructureError
from ._fsio import replace_durable
from .record import CaseResult, iso_utc, utc_now
from .versions import versions as _versions


def rig_snapshot(rig_path: str | Path | None, rig_name: str | None = None) -> dict:
    """The rig file's text and hash (what the run used, even if the file changes later)."""
    snap: dict[str, Any] = {"name": rig_name, "path": None, "sha256": None, "text": None}
    if rig_path is not None:
        path = Path(rig_path)
        snap["path"] = str(path.resolve())
        try:
            data = path.read_bytes()
        except OSError as exc:
            snap["error"] = f"cannot read {path}: {exc}"
        else:
            snap["sha256"] = hashlib.sha256(data).hexdigest()
            snap["text"] = data.decode("utf-8", errors="replace")
    return snap


class Evidence:
    def __init__(self, directory: str | Path, run_id: str, *, rig_path: str | Path | None = None,
                 rig_name: str | None = None, versions: dict | None = None):
        self.directory = Path(directory)
        self.path = self.directory / f"{run_id}.json"
        self.doc: dict[str, Any] = {
            "format": "hilrig-evidence/1",
            "run_id": run_id,
            "started_utc": iso_utc(utc_now()),
            "ended_utc": None,
            "rig": rig_snapshot(rig_path, rig_name),
            "versions": versions if versions is not None else _versions(),
            "cases": [],
        }

    def add(self, result: CaseResult) -> Path:
        """Add one case and rewrite the file."""
        self.doc["cases"].append(result.to_dict())
        self.doc["ended_utc"] = iso_utc(result.ended_utc)
        return self.write()

    def finish(self) -> Path:
        """Stamp the run's end and write the file a last time."""
        self.doc["ended_utc"] = iso_utc(utc_now())
        return self.write()

    def write(self) -> Path:
        text = json.dumps(self.doc, indent=1, allow_nan=False, ensure_ascii=False) + "\n"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            replace_durable(self.path, text)
        except OSError as exc:
            raise InfrastructureError(f"cannot write the evidence file {self.path}: {exc}") from exc
        return self.path
