"""`hilrig lab janitor`: free the places whose holder stopped beating.

For every place with a hilrig lease (hostlib.lab.lease) whose heartbeat is older than
the lease (the holder's own, or `--lease` when given), the janitor releases the place
with labgrid's release-from: the coordinator releases it only if that same holder still
holds it, so a place that changed hands since the janitor looked is left alone. Places
without a lease (taken with labgrid-client by a person) and places whose holder beats
are never touched. A stale lease on a place that is no longer held (the coordinator
restarted, which forgets acquisitions) is cleared. Run it from cron or a systemd timer
on any host that reaches the coordinator (docs/scale-out.md).
"""
from __future__ import annotations

import datetime as _dt
import enum
from dataclasses import dataclass

from .._exceptions import LabError
from .coordinator import LabClient
from .lease import lease_of, utc_now

__all__ = ["JanitorAction", "Outcome", "sweep"]


class Outcome(enum.StrEnum):
    RELEASED = "released"        # stale lease, same holder: released from it
    CLEARED = "cleared"          # stale lease on a place nobody holds: lease removed
    ALIVE = "alive"              # heartbeat within the lease: left alone
    CHANGED_HANDS = "changed hands"  # held by someone else than the lease says: left alone
    FAILED = "failed"            # the coordinator refused


@dataclass(frozen=True)
class JanitorAction:
    place: str
    outcome: Outcome
    holder: str
    age_s: float
    lease_s: float
    detail: str = ""

    def line(self) -> str:
        return (f"{self.place}: {self.outcome} (holder {self.holder}, heartbeat {self.age_s:.1f} s old, "
                f"lease {self.lease_s:g} s)" + (f": {self.detail}" if self.detail else ""))


def sweep(lab: LabClient, lease_s: float | None = None, now: _dt.datetime | None = None) -> list[JanitorAction]:
    """One pass over every place with a lease."""
    actions = []
    # A set_comment below runs only after the place is seen free again with our stale lease
    # still on it; a holder that took the place in between rewrites its own lease with its
    # next heartbeat (every lease/6), so a cleared comment never outlives one beat.
    for place in lab.places():
        lease = lease_of(place.comment)
        if lease is None:
            continue
        limit = lease_s if lease_s is not None else lease.lease_s
        age = lease.age_s(now or utc_now())

        def act(outcome: Outcome, detail: str = "", *, name: str = place.name, holder: str = lease.holder,
                age_s: float = age, limit_s: float = limit) -> JanitorAction:
            return JanitorAction(name, outcome, holder, age_s, limit_s, detail)

        if age <= limit:
            actions.append(act(Outcome.ALIVE))
            continue
        try:
            if place.holder == lease.holder:
                lab.release(place.name, from_holder=lease.holder)
                if lab.place(place.name).holder is not None:   # someone took it in between
                    actions.append(act(Outcome.CHANGED_HANDS, "held again after release-from"))
                    continue
                lab.set_comment(place.name, lease.comment_before)
                _cancel_reservations(lab, lease.holder, place.name)
                actions.append(act(Outcome.RELEASED))
            elif place.holder is None:
                lab.set_comment(place.name, lease.comment_before)
                _cancel_reservations(lab, lease.holder, place.name)
                actions.append(act(Outcome.CLEARED, "not held (the coordinator forgot it, or the holder died "
                                                    "before acquiring)"))
            else:
                actions.append(act(Outcome.CHANGED_HANDS, f"held by {place.holder}"))
        except LabError as exc:
            actions.append(act(Outcome.FAILED, str(exc)))
    return actions


def _cancel_reservations(lab: LabClient, holder: str, place: str) -> None:
    """The dead holder's reservations allocated to `place`: a run killed between acquiring the
    place and cancelling its reservation leaves one, which would keep the place from every
    other run until labgrid drops it, unpolled, after 60 s."""
    for reservation in lab.reservations():
        if reservation.owner == holder and place in reservation.allocated:
            lab.cancel_reservation(reservation.token)
