"""The outbox: line-protocol files waiting to be shipped to InfluxDB.

One file per run, `<outbox>/<run_id>.lp`. Each case result is appended as soon
as it is measured and fsynced (file and directory), so a run that is killed
loses nothing it already measured. A sink that ships a file to a server later
moves it out of the outbox; whatever is still there is pending.

A running run holds an advisory lock (flock) on its file from `hold()` until
`release()`; the shipper (hostlib.results.influx) skips locked files, so a file
is never shipped half-written. The kernel drops the lock when the process dies,
so the file of a killed run is shipped by the next run or `hilrig results push`.
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from influxdb_client import Point

from .._exceptions import InfrastructureError
from ._fsio import append_durable, fsync_dir
from .lineprotocol import result_lines, run_point
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

    def hold(self, run_id: str) -> RunLock:
        """Mark `run_id` as running (its file must not be shipped yet) until .release()."""
        return RunLock(self.file_for(run_id))

    def append_run_summary(self, run_id: str, rig_name: str, verdicts: list[str],
                           started_utc, ended_utc, *, place: str | None = None) -> Path:
        """Append the run's `hilrig_run` row (counts by verdict) to its file, durably."""
        return self.append_points(run_id, [run_point(run_id, rig_name, verdicts, started_utc, ended_utc,
                                                     git_sha=self.git_sha, place=place)])

    def append_points(self, run_id: str, points: list[Point]) -> Path:
        """Append rows of the run's own (its `hilrig_run` row, `hilrig_place` rows) durably."""
        text = "".join(line + "\n" for line in (p.to_line_protocol() for p in points) if line)
        target = self.file_for(run_id)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            append_durable(target, text)
        except OSError as exc:
            raise InfrastructureError(f"cannot write the result outbox {target}: {exc}") from exc
        return target


def is_active(path: Path) -> bool:
    """True when a running run holds `path` (its lock is taken), so it may still grow."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops our probe lock
    return False


class RunLock:
    """An exclusive flock on a run's outbox file for as long as the run writes to it."""

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # O_CLOEXEC (Python's default) keeps the lock out of child processes such as hilrig-sim.
            self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise InfrastructureError(f"cannot take the outbox file {self.path}: {exc}") from exc

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()
