"""The outbox: line-protocol files waiting to be shipped to InfluxDB.

One file per run, `<outbox>/<run_id>.lp`. Each case result is appended as soon
as it is measured and fsynced (file and directory), so a run that is killed
loses nothing it already measured. A sink that ships a file to a server later
moves it out of the outbox; whatever is still there is pending.
"""
from __future__ import annotations

from pathlib import Path

from .._exceptions import InfrastructureError
from ._fsio import append_durable, fsync_dir
from .lineprotocol import result_lines
from .record import CaseResult
from .versions import git_sha as _git_sha


class Outbox:
    def __init__(self, path: str | Path, *, git_sha: str | None = None):
        self.path = Path(path)
        # The sha of the code that measured; looked up once, not per case.
        self.git_sha = git_sha if git_sha is not None else (_git_sha() or "")

    def file_for(self, run_id: str) -> Path:
        return self.path / f"{run_id}.lp"

    def append(self, result: CaseResult) -> Path:
        """Append the result's lines to its run's file, durably; returns the file."""
        if not result.run_id or "/" in result.run_id or result.run_id.startswith("."):
            raise ValueError(f"run_id {result.run_id!r} is not usable as a file name")
        text = "".join(line + "\n" for line in result_lines(result, git_sha=self.git_sha))
        target = self.file_for(result.run_id)
        try:
            if not self.path.is_dir():
                self.path.mkdir(parents=True, exist_ok=True)
                fsync_dir(self.path.parent)
            append_durable(target, text)
        except OSError as exc:
            raise InfrastructureError(f"cannot write the result outbox {target}: {exc}") from exc
        return target

    def pending_files(self) -> list[Path]:
        """The run files not shipped yet, oldest run first (run ids sort by time)."""
        if not self.path.is_dir():
            return []
        return sorted(p for p in self.path.glob("*.lp") if p.is_file())
