"""hilrig's one client of the lab's labgrid coordinator.

labgrid's own ClientSession (labgrid.remote.client) speaks the gRPC protocol: it keeps
a stream open on which the coordinator names us (`host/user`, the holder it records
on a place we acquire) and pushes every place and resource change. It is asyncio; a
LabClient runs it on an event loop in a thread of its own, so the run's thread calls
plain methods with a timeout each, and a heartbeat can run on that loop while cases run.

Everything leaves this module as typed views (PlaceState, ResourceState,
ReservationView): labgrid's objects stay inside.
"""
from __future__ import annotations

import asyncio
import enum
import getpass
import logging
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TypeVar

import grpc
from labgrid.remote.client import ClientSession
from labgrid.remote.client import Error as LabgridError
from labgrid.remote.common import ResourceMatch
from labgrid.remote.generated import labgrid_coordinator_pb2 as pb
from labgrid.remote.generated import labgrid_coordinator_pb2_grpc

from .._exceptions import LabError
from .place import RESOURCE_CLASS, default_coordinator

__all__ = ["LabClient", "PlaceState", "ReservationView", "ResourceState", "Scheduling", "default_coordinator"]

log = logging.getLogger("hilrig.lab")

T = TypeVar("T")
CALL_TIMEOUT_S = 10.0


class Scheduling(enum.Enum):
    """A labgrid reservation's state (labgrid.remote.common.ReservationState)."""

    WAITING = 0
    ALLOCATED = 1
    ACQUIRED = 2
    EXPIRED = 3
    INVALID = 4


@dataclass(frozen=True)
class ResourceState:
    exporter: str
    group: str
    cls: str
    name: str
    available: bool
    acquired_by: str | None                       # the place that holds it
    params: dict[str, str | int | float | bool]   # what the exporter publishes (labgrid's extra dropped)


@dataclass(frozen=True)
class PlaceState:
    """A place as the coordinator holds it, with the resources its matches find now."""

    name: str
    tags: dict[str, str]
    comment: str
    holder: str | None           # `host/user` of the client that acquired it
    reservation: str | None      # the token of the reservation it is allocated to
    changed_epoch_s: float       # the coordinator's clock at the place's last change
    matches: tuple[str, ...]     # exporter/group/cls[/name] patterns
    resources: tuple[ResourceState, ...] = ()
    unmatched: tuple[str, ...] = ()   # patterns no resource answers: their exporter is gone

    @property
    def devices(self) -> tuple[ResourceState, ...]:
        return tuple(r for r in self.resources if r.cls == RESOURCE_CLASS)

    @property
    def available(self) -> bool:
        """Every match answered by a resource, and every resource available (its exporter's poll)."""
        return bool(self.resources) and not self.unmatched and all(r.available for r in self.resources)

    def why_unavailable(self) -> str | None:
        if self.unmatched:
            exporters = sorted({m.split("/", 1)[0] for m in self.unmatched})
            return f"exporter {', '.join(exporters)} is offline (no resource answers {', '.join(self.unmatched)})"
        if not self.resources:
            return "the place has no resources (no match)"
        down = [f"{r.exporter}/{r.name} ({r.params.get('unavailable') or 'its exporter finds no device'})"
                for r in self.resources if not r.available]
        return f"unavailable: {', '.join(down)}" if down else None


@dataclass(frozen=True)
class ReservationView:
    token: str
    owner: str
    state: Scheduling
    filters: dict[str, str]
    allocated: tuple[str, ...]   # the places allocated to it
    prio: float
    created_epoch_s: float


@dataclass
class _Loop:
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self.loop.run_forever, name="hilrig-lab", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        if self.loop.is_closed():   # stopped already: closing a client twice is allowed
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if self.thread is not None:
            self.thread.join(timeout=5)
        if not self.loop.is_running():
            self.loop.close()


class _Session(ClientSession):
    """labgrid's session, naming us `host/user` with the user we give (a run names itself
    uniquely, so that labgrid's release-from can tell two runs of one user apart)."""

    holder_user = ""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        # The coordinator knows a client by its connection (one session per peer): gRPC would
        # share one connection between two sessions of a process (a run and its janitor, a
        # test's holders), so each session gets a connection of its own. Keepalive as labgrid's.
        self.channel = grpc.aio.insecure_channel(target=self.address, options=[
            ("grpc.keepalive_time_ms", 7500), ("grpc.keepalive_timeout_ms", 10000),
            ("grpc.http2.ping_timeout_ms", 10000), ("grpc.http2.max_pings_without_data", 0),
            ("grpc.use_local_subchannel_pool", 1)])
        self.stub = labgrid_coordinator_pb2_grpc.CoordinatorStub(self.channel)

    def getuser(self) -> str:
        return self.holder_user or super().getuser()


def holder_name(user_suffix: str = "") -> tuple[str, str]:
    """(host, user) as this process shows itself to the coordinator ($LG_HOSTNAME and
    $LG_USERNAME as labgrid-client reads them), the user with `+suffix` when given."""
    host = os.environ.get("LG_HOSTNAME", socket.gethostname())
    try:
        user = os.environ.get("LG_USERNAME") or getpass.getuser()
    except (KeyError, OSError):  # no passwd entry in a container: the uid will do
        user = str(os.getuid())
    return host, f"{user}+{user_suffix}" if user_suffix else user


class LabClient:
    """A connection to the coordinator: `with LabClient("127.0.0.1:20408") as lab: lab.places()`.

    `user_suffix` makes the holder name unique (a run passes its run id). Every call
    waits at most `timeout_s` and raises LabError naming the coordinator."""

    def __init__(self, address: str | None = None, *, user_suffix: str = "", timeout_s: float = CALL_TIMEOUT_S):
        self.address = address or default_coordinator()
        self.timeout_s = timeout_s
        self.host, self.user = holder_name(user_suffix)
        self._loop = _Loop()
        self._loop.start()
        self._session: _Session | None = None
        try:
            self._session = self._call(self._start(), what="connect")
        except BaseException:
            self._loop.stop()
            raise

    @property
    def holder(self) -> str:
        """How the coordinator names us on a place we hold: `host/user`."""
        return f"{self.host}/{self.user}"

    async def _start(self) -> _Session:
        session = _Session(address=self.address, loop=self._loop.loop)
        session.holder_user = self.user
        await session.start()
        return session

    def _call(self, coro: Coroutine[None, None, T], *, what: str, timeout_s: float | None = None) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop.loop)
        try:
            return future.result(timeout=timeout_s or self.timeout_s)
        except TimeoutError:
            future.cancel()
            raise LabError(f"labgrid coordinator {self.address}: no answer to {what} within "
                           f"{timeout_s or self.timeout_s:g} s") from None
        except grpc.RpcError as exc:
            raise LabError(f"labgrid coordinator {self.address}: {what}: {_details(exc)}") from None
        except LabgridError as exc:   # labgrid's own ("Could not connect to coordinator")
            raise LabError(f"labgrid coordinator {self.address}: {what}: {exc}") from None

    @property
    def session(self) -> _Session:
        if self._session is None:
            raise LabError(f"labgrid coordinator {self.address}: not connected")
        return self._session

    @property
    def connected(self) -> bool:
        return self._session is not None and not self._session.stopping.is_set()

    def _synced(self) -> Awaitable[bool]:
        return self.session.sync_with_coordinator()

    # ------------------------------------------------------------------ reading

    def places(self) -> list[PlaceState]:
        """Every place, with the resources its matches find now, sorted by name."""
        async def snapshot() -> list[PlaceState]:
            if not await self._synced():
                raise LabError(f"labgrid coordinator {self.address}: the connection closed")
            return self._views()
        return self._call(snapshot(), what="list places")

    def place(self, name: str) -> PlaceState:
        for place in self.places():
            if place.name == name:
                return place
        raise LabError(f"labgrid coordinator {self.address}: no place {name!r}")

    def _views(self) -> list[PlaceState]:
        session = self.session
        resources: list[tuple[tuple[str, str, str, str], ResourceState]] = []
        for exporter, groups in session.resources.items():
            for group, entries in groups.items():
                for name, entry in entries.items():
                    if "cls" not in entry.data:   # deleted: its exporter left
                        continue
                    path = (exporter, group, entry.cls, name)
                    params = {k: v for k, v in entry.args.items() if isinstance(v, (str, int, float, bool))}
                    resources.append((path, ResourceState(exporter, group, entry.cls, name, bool(entry.avail),
                                                          entry.acquired or None, params)))
        out = []
        for name, place in sorted(session.places.items()):
            mine = tuple(r for path, r in resources if place.hasmatch(path))
            paths = [path for path, _ in resources]
            unmatched = tuple(str(m) for m in place.matches if not any(m.ismatch(p) for p in paths))
            out.append(PlaceState(name=name, tags={str(k): str(v) for k, v in place.tags.items()},
                                  comment=str(place.comment or ""), holder=place.acquired or None,
                                  reservation=place.reservation or None, changed_epoch_s=float(place.changed),
                                  matches=tuple(str(m) for m in place.matches), resources=mine,
                                  unmatched=unmatched))
        return out

    def reservations(self) -> list[ReservationView]:
        async def get() -> list[ReservationView]:
            response = await self.session.stub.GetReservations(pb.GetReservationsRequest())
            return [_reservation(r) for r in response.reservations]
        return self._call(get(), what="list reservations")

    # ------------------------------------------------------------------ reserving and holding

    def reserve(self, filters: dict[str, str], prio: float = 0.0) -> ReservationView:
        """A labgrid reservation for a place matching `filters`; the coordinator schedules it
        at once (allocated when such a place is free) and on every release after."""
        async def create() -> ReservationView:
            request = pb.CreateReservationRequest(filters={"main": pb.Reservation.Filter(filter=filters)}, prio=prio)
            return _reservation((await self.session.stub.CreateReservation(request)).reservation)
        return self._call(create(), what=f"reserve {filters}")

    def poll_reservation(self, token: str) -> ReservationView:
        """The reservation now (polling also keeps it: labgrid drops one unpolled for 60 s)."""
        async def poll() -> ReservationView:
            response = await self.session.stub.PollReservation(pb.PollReservationRequest(token=token))
            return _reservation(response.reservation)
        return self._call(poll(), what=f"poll reservation {token}")

    def cancel_reservation(self, token: str) -> None:
        async def cancel() -> None:
            await self.session.stub.CancelReservation(pb.CancelReservationRequest(token=token))
        self._call(cancel(), what=f"cancel reservation {token}")

    def acquire(self, place: str) -> None:
        async def acquire() -> None:
            await self.session.stub.AcquirePlace(pb.AcquirePlaceRequest(placename=place))
            await self._synced()
        self._call(acquire(), what=f"acquire place {place}")

    def release(self, place: str, *, from_holder: str | None = None) -> None:
        """Release a place; with `from_holder` only if that holder still holds it (labgrid's
        release-from: race-free, a place someone else took since is left alone)."""
        async def release() -> None:
            request = (pb.ReleasePlaceRequest(placename=place, fromuser=from_holder) if from_holder
                       else pb.ReleasePlaceRequest(placename=place))
            await self.session.stub.ReleasePlace(request)
            await self._synced()
        self._call(release(), what=f"release place {place}")

    def set_comment(self, place: str, comment: str) -> None:
        async def comment_() -> None:
            await self.session.stub.SetPlaceComment(pb.SetPlaceCommentRequest(placename=place, comment=comment))
        self._call(comment_(), what=f"write the comment of place {place}")

    # ------------------------------------------------------------------ setting places up

    def ensure_place(self, place: str, matches: list[str], tags: dict[str, str]) -> None:
        """Create the place if it is new, add missing matches, set the tags (idempotent)."""
        existing = {p.name: p for p in self.places()}

        async def setup() -> None:
            stub = self.session.stub
            if place not in existing:
                await stub.AddPlace(pb.AddPlaceRequest(name=place))
            have = set(existing[place].matches) if place in existing else set()
            for pattern in matches:
                if str(ResourceMatch.fromstr(pattern)) not in have:
                    await stub.AddPlaceMatch(pb.AddPlaceMatchRequest(placename=place, pattern=pattern))
            await stub.SetPlaceTags(pb.SetPlaceTagsRequest(placename=place, tags=tags))
            await self._synced()
        self._call(setup(), what=f"set up place {place}")

    # ------------------------------------------------------------------ periodic work

    def every(self, interval_s: float, work: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        """Run `work` on the client's loop every `interval_s` until the returned stop() is
        called (a heartbeat: it runs while the calling thread runs cases)."""
        async def repeat() -> None:
            while True:
                await asyncio.sleep(interval_s)
                await work()
        task = asyncio.run_coroutine_threadsafe(repeat(), self._loop.loop)

        def stop() -> None:
            task.cancel()
        return stop

    async def write_comment(self, place: str, comment: str) -> None:
        """set_comment, as a coroutine for work on the client's loop (every())."""
        await self.session.stub.SetPlaceComment(pb.SetPlaceCommentRequest(placename=place, comment=comment))

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        """Close the stream and the loop; never raises (the coordinator may be gone)."""
        session, self._session = self._session, None
        if session is not None:
            async def stop() -> None:
                await session.stop()
                await session.close()
            try:
                asyncio.run_coroutine_threadsafe(stop(), self._loop.loop).result(timeout=self.timeout_s)
            except Exception as exc:  # noqa: BLE001  closing a connection to a coordinator that went away
                log.debug("closing the coordinator connection: %s", exc)
        self._loop.stop()

    def __enter__(self) -> LabClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _details(exc: grpc.RpcError) -> str:
    if isinstance(exc, grpc.aio.AioRpcError):
        return f"{exc.details()} ({exc.code().name})"
    return str(exc)


def _reservation(msg: pb.Reservation) -> ReservationView:
    filters = {str(k): str(v) for k, v in msg.filters["main"].filter.items()} if "main" in msg.filters else {}
    allocated = tuple(str(p) for p in msg.allocations["main"].split(",") if p) if "main" in msg.allocations else ()
    return ReservationView(token=msg.token, owner=msg.owner, state=Scheduling(msg.state), filters=filters,
                           allocated=allocated, prio=float(msg.prio), created_epoch_s=float(msg.created))


def now_s() -> float:
    """Wall-clock seconds: what labgrid's `changed`/`created` stamps are compared with."""
    return time.time()
