"""Reserve, lock, release: how a run gets a place from the lab and always gives it back.

    held = hold_place(PlaceRequest(coordinator, terms=parse_place_tags("channels>=2")), run_id, say)
    try:
        ... run cases on held.devices ...
    finally:
        for line in held.release(): say(line)

The places that fit the request (hostlib.lab.place) and are available now (every
match answered by an online exporter, every device found by its exporter's probe)
are the candidates. The run makes one labgrid reservation per candidate (filter:
the place's name and the plain tags asked for), so labgrid's own queue decides who
is next on each place; the first allocated wins and the others are cancelled. The
lease is written, the place acquired and checked again: a place whose exporter left
between allocation and acquisition is released, skipped, and the reservation retried
without it, as is one whose rig host (hostlib.lab.remote) cannot be reached. Past
the deadline the run gets PlaceUnavailable naming the holder, since when, and our
queue position.
"""
from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .._exceptions import LabError, PlaceUnavailable, RigHostError
from ..rig.inventory import DeviceEntry, Rig, load_rig
from .coordinator import CALL_TIMEOUT_S, LabClient, PlaceState, ReservationView, Scheduling
from .lease import HEARTBEATS_PER_LEASE, Heartbeat, lease_of, new_lease
from .place import Capabilities, PlaceRequest, exported_device
from .remote import RigHost

__all__ = ["HeldPlace", "hold_place", "place_devices"]

POLL_S = 0.2   # how often the reservations are polled while waiting (labgrid drops one unpolled for 60 s)


@dataclass
class HeldPlace:
    """A place this run holds: its devices, its lease, and how to give it back."""

    lab: LabClient
    name: str
    holder: str
    exporters: tuple[str, ...]
    devices: dict[str, DeviceEntry]
    rig_name: str
    waited_s: float
    heartbeat: Heartbeat
    tags: dict[str, str] = field(default_factory=dict)   # the place's labgrid tags
    runs_on: RigHost | None = None   # the rig host that runs the cases; None: this host
    released: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def rig_host(self) -> str:
        return ",".join(self.exporters)

    def release(self) -> list[str]:
        """Stop the heartbeat, release the place (only if we still hold it), clear the lease,
        close the connection. Never raises: lines to tell (a release that failed, and what
        frees the place then)."""
        if self.released:
            return []
        self.released = True
        self.heartbeat.stop()
        lines = []
        try:
            self.lab.release(self.name, from_holder=self.holder)
            self.heartbeat.clear()
        except LabError as exc:
            lines.append(f"hilrig lab: releasing place {self.name} failed ({exc}); `hilrig lab janitor` frees it "
                         f"once its lease ({self.heartbeat.record.lease_s:g} s) has passed")
        if self.heartbeat.failures:
            lines.append(f"hilrig lab: {self.heartbeat.failures} heartbeat(s) of place {self.name} failed "
                         f"({self.heartbeat.last_problem})")
        self.lab.close()
        self.problems = lines
        return lines

    def __enter__(self) -> HeldPlace:
        return self

    def __exit__(self, *exc: object) -> None:
        for line in self.release():
            self.heartbeat.say(line)


def place_devices(place: PlaceState) -> tuple[str, dict[str, DeviceEntry], RigHost | None]:
    """The rig-file devices a place's resources name: (rig name, devices by alias, the rig
    host that runs the cases when its exporter says so). A rig host's rig files are read
    there (RigHostError when it cannot be reached)."""
    exported = [exported_device(r.params, f"place {place.name}: {r.exporter}/{r.name}") for r in place.devices]
    hosts = {(d.ssh, d.hilrig, d.checkout) for d in exported}
    if len(hosts) > 1:
        raise LabError(f"place {place.name}: its devices name different rig hosts "
                       f"({', '.join(sorted(h[0] or 'here' for h in hosts))}); a place is one rig host's")
    ssh, hilrig, checkout = hosts.pop() if hosts else ("", "", "")
    host = RigHost(ssh, tuple(shlex.split(hilrig)), checkout, {d.device: d.rig for d in exported}) if ssh else None
    rigs: dict[str, Rig] = {}
    devices = {}
    for device in exported:
        if device.rig not in rigs:
            rigs[device.rig] = host.fetch_rig(device.rig) if host is not None else load_rig(device.rig)
        rig = rigs[device.rig]
        if device.device not in rig.devices:
            raise LabError(f"place {place.name}: rig file {device.rig} has no device {device.device!r} "
                           f"(its exporter publishes it)")
        devices[device.device] = rig.devices[device.device]
    names = sorted({rig.name for rig in rigs.values()})
    return "+".join(names), devices, host


def capabilities(place: PlaceState) -> Capabilities:
    return Capabilities.of(exported_device(r.params, f"place {place.name}: {r.exporter}/{r.name}")
                           for r in place.devices)


def why_not(place: PlaceState, request: PlaceRequest) -> str | None:
    """Why the place does not fit the request (whether or not it is free), or None."""
    if request.name is not None and place.name != request.name:
        return "another name"
    for term in request.terms:
        why = term.why_not(capabilities(place), place.tags)
        if why:
            return why
    return None


def hold_place(request: PlaceRequest, run_id: str, say: Callable[[str], None],
               before_acquire: Callable[[str], None] | None = None) -> HeldPlace:
    """Reserve, lease and acquire a place that fits `request` before its deadline.
    PlaceUnavailable when none could be had (naming holder, since, queue position);
    LabError when the coordinator cannot be reached. `before_acquire(place)` runs between
    allocation and acquisition (a test stops an exporter there)."""
    started = time.monotonic()
    deadline = started + request.timeout_s
    # A coordinator that does not answer within a lease is as good as gone for this run.
    lab = LabClient(request.coordinator, user_suffix=run_id, timeout_s=min(CALL_TIMEOUT_S, request.lease_s))
    tokens: dict[str, str] = {}
    skipped: dict[str, str] = {}
    try:
        while True:
            places = lab.places()
            fitting = [p for p in places if why_not(p, request) is None]
            if not fitting:
                raise PlaceUnavailable(_none_fits(request, places, lab.address), place=request.name)
            candidates = [p for p in fitting if p.available and p.name not in skipped]
            if not candidates:
                raise PlaceUnavailable(_none_available(request, fitting, skipped), place=fitting[0].name)
            for place in candidates:
                if place.name not in tokens:
                    tokens[place.name] = lab.reserve(request.labgrid_filter(place.name)).token
            for name in [n for n in tokens if n not in {p.name for p in candidates}]:
                lab.cancel_reservation(tokens.pop(name))
            views = {name: lab.poll_reservation(token) for name, token in tokens.items()}
            allocated = [name for name, view in views.items() if view.state is Scheduling.ALLOCATED]
            if allocated:
                name = allocated[0]
                for other in [n for n in tokens if n != name]:
                    lab.cancel_reservation(tokens.pop(other))
                held = _take(lab, request, next(p for p in candidates if p.name == name), run_id, say,
                             started, before_acquire)
                if isinstance(held, str):   # its exporter left after the allocation: try the others
                    skipped[name] = held
                    say(f"hilrig lab: place {name} skipped: {held}; trying the others")
                    _cancel_quietly(lab, tokens.pop(name))
                    continue
                try:
                    lab.cancel_reservation(tokens.pop(name))  # held now: the reservation has done its work
                except BaseException:
                    held.release()   # never handed over: released here, whatever ended the wait
                    raise
                return held
            if time.monotonic() >= deadline:
                raise _timed_out(request, lab, candidates, tokens, time.monotonic() - started)
            time.sleep(min(POLL_S, max(deadline - time.monotonic(), 0.0)))
    except BaseException:
        for token in tokens.values():
            _cancel_quietly(lab, token)
        lab.close()
        raise


def _cancel_quietly(lab: LabClient, token: str) -> None:
    try:
        lab.cancel_reservation(token)
    except LabError:
        pass  # an unpolled reservation expires in labgrid after 60 s by itself


def _take(lab: LabClient, request: PlaceRequest, place: PlaceState, run_id: str, say: Callable[[str], None],
          started: float, before_acquire: Callable[[str], None] | None) -> HeldPlace | str:
    """Lease, acquire and check one allocated place; why not, when it cannot be taken
    (its exporter is gone)."""
    heartbeat_s = request.heartbeat_s or request.lease_s / HEARTBEATS_PER_LEASE
    heartbeat = Heartbeat(lab, new_lease(place.name, lab.holder, run_id, request.lease_s, place.comment),
                          heartbeat_s, say)
    heartbeat.write_now()   # before acquiring: a place hilrig holds always carries a lease
    if before_acquire is not None:
        before_acquire(place.name)
    try:
        lab.acquire(place.name)
    except LabError as exc:
        heartbeat.clear()
        return f"acquiring failed: {exc}"
    try:
        now = lab.place(place.name)
        why = now.why_unavailable()
        if why is not None or now.holder != lab.holder:
            lab.release(place.name, from_holder=lab.holder)
            heartbeat.clear()
            return why or f"held by {now.holder} after acquiring"
        try:
            rig_name, devices, rig_host = place_devices(now)
        except RigHostError as exc:   # its rig host cannot be reached: as an exporter that left
            lab.release(place.name, from_holder=lab.holder)
            heartbeat.clear()
            return str(exc)
        heartbeat.start()
        return HeldPlace(lab=lab, name=place.name, holder=lab.holder,
                         exporters=tuple(sorted({r.exporter for r in now.resources})), devices=devices,
                         rig_name=rig_name, waited_s=time.monotonic() - started, heartbeat=heartbeat, tags=now.tags,
                         runs_on=rig_host)
    except BaseException:
        # Acquired but not yet handed over (Ctrl-C lands here as readily as anywhere): no
        # one else knows to release it, so release it now, then let the exception go on.
        heartbeat.stop()
        try:
            lab.release(place.name, from_holder=lab.holder)
            heartbeat.clear()
        except LabError:
            pass  # the lease just written lets the janitor free it
        raise


def _none_fits(request: PlaceRequest, places: list[PlaceState], address: str) -> str:
    if not places:
        return f"no place for {request.describe()}: the coordinator {address} has no places"
    reasons = "; ".join(f"{p.name}: {why_not(p, request)}" for p in places if request.name in (None, p.name))
    return f"no place fits {request.describe()}" + (f" ({reasons})" if reasons else
                                                    f" (places: {', '.join(p.name for p in places)})")


def _none_available(request: PlaceRequest, fitting: list[PlaceState], skipped: dict[str, str]) -> str:
    reasons = "; ".join(f"place {p.name}: {skipped.get(p.name) or p.why_unavailable()}" for p in fitting)
    return f"no place for {request.describe()} is available: {reasons}"


def _timed_out(request: PlaceRequest, lab: LabClient, candidates: list[PlaceState], tokens: dict[str, str],
               waited_s: float) -> PlaceUnavailable:
    """The deadline error: for each candidate, who holds it since when, and where we stand."""
    reservations = lab.reservations()
    parts = []
    first_holder: str | None = None
    first_since: str | None = None
    first_position: int | None = None
    for place in lab.places():
        if place.name not in tokens:
            continue
        lease = lease_of(place.comment)
        if lease is not None:
            holder, since = lease.who(), lease.since.isoformat(timespec="seconds")
        elif place.holder:
            holder, since = place.holder, _iso(place.changed_epoch_s)
        else:
            owner = next((r.owner for r in reservations if place.name in r.allocated), "another reservation")
            holder, since = f"a reservation of {owner}", _iso(place.changed_epoch_s)
        position, waiting = _queue_position(place, tokens[place.name], reservations)
        parts.append(f"place {place.name} is held by {holder} (since {since}); we are number {position} "
                     f"of {waiting} waiting for it")
        if first_holder is None:
            first_holder, first_since, first_position = holder, since, position
    text = (f"no place for {request.describe()} within {request.timeout_s:g} s (waited {waited_s:.1f} s): "
            + ("; ".join(parts) or f"{len(candidates)} candidate(s), none allocated"))
    return PlaceUnavailable(text, place=candidates[0].name if candidates else request.name, holder=first_holder,
                            since_utc=first_since, queue_position=first_position)


def _queue_position(place: PlaceState, token: str, reservations: list[ReservationView]) -> tuple[int, int]:
    """(our position, how many wait) in labgrid's order (priority, then age) among the
    waiting reservations whose filter this place meets."""
    tags = {**place.tags, "name": place.name}
    waiting = sorted((r for r in reservations if r.state is Scheduling.WAITING
                      and all(tags.get(k) == v for k, v in r.filters.items())),
                     key=lambda r: (-r.prio, r.created_epoch_s))
    tokens = [r.token for r in waiting]
    return (tokens.index(token) + 1 if token in tokens else len(tokens) + 1), len(tokens)


def _iso(epoch_s: float) -> str:
    import datetime as _dt

    return _dt.datetime.fromtimestamp(epoch_s, _dt.UTC).isoformat(timespec="seconds")
