"""`hilrig lab status`: the places at a glance (who holds what, what is unavailable), and
the `hilrig_place` measurement that trends utilisation and reservation waits.

A `hilrig_place` row (docs/results.md) is tagged with the place, its rig host
(exporters) and its labgrid tags as `lg_<key>`, and carries: acquired (1/0), available (1/0), holder, since, heartbeat
age (s, -1 without a lease) and, from a run, reservation_wait_s and held_s.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from influxdb_client import Point, WritePrecision

from .coordinator import LabClient, PlaceState
from .lease import lease_of, utc_now

__all__ = ["PLACE_MEASUREMENT", "PlaceRow", "place_point", "status_rows"]

PLACE_MEASUREMENT = "hilrig_place"


@dataclass(frozen=True)
class PlaceRow:
    name: str
    rig_host: str              # the exporters whose devices the place has
    tags: dict[str, str]
    holder: str | None
    since_utc: str | None
    heartbeat_age_s: float | None
    available: bool
    why_unavailable: str | None
    reserved_by: str | None    # a reservation allocated to it and not yet acquired
    runs_on: str | None = None  # the ssh destination its cases run on (hostlib.lab.remote); None: the client

    def line(self) -> str:
        state = "AVAILABLE" if self.available else "UNAVAILABLE"
        held = "free" if self.holder is None else f"held by {self.holder} since {self.since_utc}"
        if self.holder is not None and self.heartbeat_age_s is not None:
            held += f", heartbeat {self.heartbeat_age_s:.0f} s ago"
        if self.reserved_by:
            held += f", reserved for {self.reserved_by}"
        tags = ",".join(f"{k}={v}" for k, v in sorted(self.tags.items()) if v)
        why = f" ({self.why_unavailable})" if self.why_unavailable else ""
        where = f" cases on ssh {self.runs_on}" if self.runs_on else ""
        return f"{self.name:16s} {state:11s} {held}{why}  [{self.rig_host or '-'}]{where} {tags}"


def _iso(epoch_s: float) -> str:
    return _dt.datetime.fromtimestamp(epoch_s, _dt.UTC).isoformat(timespec="seconds")


def row_of(place: PlaceState, owners: dict[str, str]) -> PlaceRow:
    lease = lease_of(place.comment)
    held_lease = lease if lease is not None and lease.holder == place.holder else None
    since = (held_lease.since.isoformat(timespec="seconds") if held_lease is not None
             else _iso(place.changed_epoch_s) if place.holder else None)
    return PlaceRow(name=place.name, rig_host=",".join(sorted({r.exporter for r in place.resources}
                                                               | {m.split("/", 1)[0] for m in place.unmatched})),
                    tags=place.tags, holder=place.holder, since_utc=since,
                    heartbeat_age_s=held_lease.age_s(utc_now()) if held_lease is not None else None,
                    available=place.available, why_unavailable=place.why_unavailable(),
                    reserved_by=owners.get(place.reservation or "") if place.holder is None else None,
                    runs_on=next((str(r.params["ssh"]) for r in place.devices if r.params.get("ssh")), None))


def status_rows(lab: LabClient) -> list[PlaceRow]:
    owners = {r.token: r.owner for r in lab.reservations()}
    return [row_of(place, owners) for place in lab.places()]


def place_point(row: PlaceRow, *, when: _dt.datetime | None = None, reservation_wait_s: float | None = None,
                held_s: float | None = None, run_id: str = "") -> Point:
    """One `hilrig_place` row."""
    p = Point(PLACE_MEASUREMENT).tag("place", row.name)
    if row.rig_host:
        p.tag("rig_host", row.rig_host)
    for key, tag in row.tags.items():   # the place's labgrid tags: utilisation per driver, radio ...
        p.tag(f"lg_{key}", tag)
    p.field("acquired", 1.0 if row.holder else 0.0)
    p.field("available", 1.0 if row.available else 0.0)
    p.field("holder", row.holder or "")
    p.field("since", row.since_utc or "")
    p.field("heartbeat_age_s", row.heartbeat_age_s if row.heartbeat_age_s is not None else -1.0)
    for name, value in (("reservation_wait_s", reservation_wait_s), ("held_s", held_s)):
        if value is not None:
            p.field(name, float(value))
    if run_id:
        p.field("run_id", run_id)
    p.time(when or utc_now(), WritePrecision.NS)
    return p
