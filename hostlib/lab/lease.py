"""Leases: what a run that holds a place says about itself, where every host sees it.

labgrid never expires an acquired place: a run killed with `kill -9`, or a cancelled CI
job, leaves it held until someone kicks it. So while a run holds a place it keeps a
lease record in the place's comment on the coordinator (the one service every host of
the lab reaches): the place, holder, host, pid, run id, since when, and a heartbeat
rewritten every `heartbeat_s`. `hilrig lab janitor` frees a place whose heartbeat is
older than its lease (hostlib.lab.janitor).

The record is written before the place is acquired and removed after it is released,
so a place hilrig holds always has one. A comment a person had written is kept in the
record and put back at release. Hosts compare heartbeat times: their clocks must agree
to well within a lease (NTP), as a lab's hosts' do.
"""
from __future__ import annotations

import datetime as _dt
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._exceptions import LabError
from .coordinator import LabClient

__all__ = ["LEASE_PREFIX", "Heartbeat", "LeaseRecord", "lease_of"]

log = logging.getLogger("hilrig.lab.lease")

LEASE_PREFIX = "hilrig-lease "
HEARTBEATS_PER_LEASE = 6   # a lease survives several lost heartbeats before it counts as dead


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


class LeaseRecord(BaseModel):
    """A holder's lease on one place, as the place's comment carries it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    place: str
    holder: str                  # `host/user` as labgrid records the place's holder
    host: str
    pid: int
    run_id: str
    since: _dt.datetime          # when the place was taken
    heartbeat: _dt.datetime      # the holder's last sign of life
    lease_s: float = Field(gt=0)
    comment_before: str = ""     # the comment the place had before; put back at release

    def age_s(self, now: _dt.datetime | None = None) -> float:
        return ((now or utc_now()) - self.heartbeat).total_seconds()

    def expired(self, lease_s: float | None = None, now: _dt.datetime | None = None) -> bool:
        """Older than `lease_s` (default: the holder's own lease)."""
        return self.age_s(now) > (lease_s if lease_s is not None else self.lease_s)

    def comment(self) -> str:
        return LEASE_PREFIX + self.model_dump_json()

    def who(self) -> str:
        return f"{self.holder} (hilrig run {self.run_id}, pid {self.pid} on {self.host})"


def lease_of(comment: str) -> LeaseRecord | None:
    """The lease in a place's comment, or None (no lease, or a person's own comment)."""
    if not comment.startswith(LEASE_PREFIX):
        return None
    try:
        return LeaseRecord.model_validate_json(comment[len(LEASE_PREFIX):])
    except ValidationError:
        log.warning("a place comment starts like a hilrig lease but is not one: %.80s", comment)
        return None


def new_lease(place: str, holder: str, run_id: str, lease_s: float, comment_before: str) -> LeaseRecord:
    now = utc_now()
    before = lease_of(comment_before)
    return LeaseRecord(place=place, holder=holder, host=socket.gethostname(), pid=os.getpid(), run_id=run_id,
                       since=now, heartbeat=now, lease_s=lease_s,
                       # a dead holder's record is no person's comment: keep what it kept
                       comment_before=before.comment_before if before is not None else comment_before)


@dataclass
class Heartbeat:
    """Rewrites a lease's heartbeat every `interval_s` on the lab client's loop while the
    run's own thread runs cases. A failed write (coordinator gone) is counted and said
    once; the lease then ages, and the janitor may free the place after the run."""

    lab: LabClient
    record: LeaseRecord
    interval_s: float
    say: Callable[[str], None]
    beats: int = 0
    failures: int = 0
    last_problem: str = ""
    _stop: Callable[[], None] | None = field(default=None, repr=False)

    def write_now(self) -> None:
        """The first write, in the caller's thread: it must land before the place is acquired."""
        self.record = self.record.model_copy(update={"heartbeat": utc_now()})
        self.lab.set_comment(self.record.place, self.record.comment())
        self.beats += 1

    def start(self) -> None:
        self._stop = self.lab.every(self.interval_s, self._beat)

    async def _beat(self) -> None:
        record = self.record.model_copy(update={"heartbeat": utc_now()})
        try:
            await self.lab.write_comment(record.place, record.comment())
        except Exception as exc:  # noqa: BLE001  a lost heartbeat never stops the run; it is counted and told
            self.failures += 1
            problem = f"{type(exc).__name__}: {exc}"
            if problem != self.last_problem:
                self.say(f"hilrig lab: heartbeat of place {record.place} failed ({problem}); "
                         "the run goes on, the lease ages")
            self.last_problem = problem
            return
        self.record = record
        self.beats += 1

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None

    def clear(self) -> None:
        """Put back the comment the place had before (after the place is released), unless
        the comment is no longer our lease (the janitor cleared it, or the next holder's
        lease is there already: it is never overwritten)."""
        try:
            mine = lease_of(self.lab.place(self.record.place).comment)
            if mine is not None and mine.holder == self.record.holder:
                self.lab.set_comment(self.record.place, self.record.comment_before)
        except LabError as exc:
            self.say(f"hilrig lab: the lease of place {self.record.place} stays until the janitor clears it ({exc})")
