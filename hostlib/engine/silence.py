"""The silence bound: a device that sends (RX) or accepts (TX) nothing mid-run is dead
or stuck, and the case ends as ERROR (device) (docs/drivers.md). One rule for every
driver, applied here, on every poll of every driver: `watched_poll`.
"""
from __future__ import annotations

import time

from .._exceptions import DeviceSilent
from ..counters import Snapshot
from ..drivers.base import Driver
from ..dsl.case import Case
from .measure import frames_per_delivery

# A device that sends nothing for this long mid-run (after its first frame, before its
# end of burst) is dead or stuck.
SILENCE_LIMIT_S = 1.0
SILENCE_LIMIT_FRAMES = 10   # ... or this many frame periods, when that is longer
SILENCE_CONFIRM_S = 0.05    # the second look at a silence, after the host's own threads have had time to run


def silence_limit_s(case: Case) -> float:
    """How long a stream may stay silent mid-run before the device counts as dead:
    derived from the interval at which a live stream delivers, so a slow stream (low
    rate, large frames) is never flagged. Over USB a packed IN transfer completes only
    when full, so the delivery unit is the transfer (docs/usb.md), not the frame."""
    frame_period_s = case.samples_per_frame / float(case.rate_sps)
    return max(SILENCE_LIMIT_S, SILENCE_LIMIT_FRAMES * frames_per_delivery(case) * frame_period_s)


def silence_error(case: Case, snap: Snapshot, limit_s: float | None = None) -> str | None:
    """What went quiet and for how long, when a started stream has been silent longer
    than silence_limit_s (RX: no frame received before end of burst; TX: no send
    accepted by the device); None while the stream is alive."""
    limit_s = silence_limit_s(case) if limit_s is None else limit_s
    sides: list[tuple[str, int | None]] = []
    if case.direction in ("rx", "loopback", "rx+tx") and not snap.host_rx.get("eob_received"):
        sides.append(("received no samples", snap.host_rx.get("last_frame_ns")))
    if case.direction in ("tx", "loopback", "rx+tx"):
        sides.append(("accepted no samples", snap.host_tx.get("last_send_ns")))
    for what, last_ns in sides:
        if last_ns and snap.taken_ns - int(last_ns) > limit_s * 1e9:
            silent_s = (snap.taken_ns - int(last_ns)) / 1e9
            return (f"{what} for {silent_s:.2f} s mid-run (a live device is silent at most "
                    f"{limit_s:g} s: max({SILENCE_LIMIT_S:g} s, {SILENCE_LIMIT_FRAMES} frame periods))")
    return None


class SilenceWatch:
    """silence_error, confirmed by a second look: a silence counts only when a later
    check (at least SILENCE_CONFIRM_S on) still sees the same last frame. A machine-wide
    stall freezes the host's receiver as well as the check, and when both run again the
    receiver drains the backlog at once: that is a busy host, not a silent device."""

    def __init__(self, case: Case):
        self.case = case
        self.limit_s = silence_limit_s(case)
        self._suspect: tuple[int | None, int | None] | None = None

    @property
    def suspect(self) -> bool:
        """A silence was seen once and awaits its second look."""
        return self._suspect is not None

    def check(self, snap: Snapshot) -> str | None:
        silent = silence_error(self.case, snap, self.limit_s)
        if not silent:
            self._suspect = None
            return None
        mark = (snap.host_rx.get("last_frame_ns"), snap.host_tx.get("last_send_ns"))
        if self._suspect != mark:
            self._suspect = mark
            return None
        return silent


def watched_poll(driver: Driver, watch: SilenceWatch) -> Snapshot:
    """driver.poll() under the silence bound: DeviceSilent (with the counters at that
    moment) when the stream is silent. While the driver waits on its device (a stopped
    simulator answers nothing), the watch judges the host's own counters."""
    def watchdog() -> None:
        snap = driver.host_snapshot()
        silent = watch.check(snap)
        if silent:
            raise DeviceSilent(f"{driver.describe()} {silent}", snapshot=snap)

    def poll() -> Snapshot:
        asked_ns = time.monotonic_ns()
        snap = driver.poll(watchdog)
        snap.asked_ns = asked_ns
        return snap

    snap = poll()
    silent = watch.check(snap)
    if watch.suspect and not silent:
        time.sleep(SILENCE_CONFIRM_S)   # the second look (a busy host is not a silent device)
        snap = poll()
        silent = watch.check(snap)
    if silent:
        raise DeviceSilent(f"{driver.describe()} {silent}", snapshot=snap)
    return snap
