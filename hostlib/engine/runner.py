"""Run one resolved case (or sweep point) on a rig and return its CaseResult.

open -> configure -> start -> [wait for first data] -> warm-up -> measure
(one poll a second, progress callback) -> stop -> verdict. The driver is closed
on every path: success, failure, timeout, Ctrl-C, a device that vanished.
"""
from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable

from .._exceptions import (
    ConfigError,
    CongestionUnavailable,
    DeviceAbsent,
    DeviceError,
    DeviceNotAttached,
    DeviceSilent,
    HilrigError,
    InfrastructureError,
)
from ..counters import Snapshot, counter
from ..drivers import Driver, driver_class
from ..dsl.case import DEFAULT_TIMEOUT_MARGIN_S, Case
from ..dsl.semantics import congestion_unavailable
from ..link.report import data_side, link_metrics
from ..link.session import LinkEnds, LinkSession
from ..results.record import CaseResult, ErrorKind, Verdict, iso_utc, utc_now
from ..results.verdict import summary_line
from ..rig.inventory import DeviceEntry, Rig
from ..rig.lock import DeviceLock
from ..transports.config import TcpTransport, UdpTransport
from . import measure
from .rf import analyze_rf, rf_markers, rf_spectrum
from .search import run_search
from .silence import SilenceWatch, watched_poll
from .verdict import judge

Progress = Callable[[dict[str, float]], None]   # a live display: measure.progress_row once a second

FIRST_DATA_TIMEOUT_S = 5.0
SENDER_SETTLE_INTERVAL_S = 0.05   # how often a host sender's lead is looked at before the window
SENDER_SETTLE_MAX_S = 2.0         # the longest a window waits for the sender to run at the rate
DEFAULT_LOCK_TIMEOUT_S = 600.0


def _utc_now() -> str:
    return iso_utc(utc_now())


def _check_device(case: Case, rig: Rig) -> DeviceEntry:
    """The rig's entry for the case's device, or DeviceAbsent saying why not."""
    device = rig.devices.get(case.device)
    if device is None:
        raise DeviceAbsent(
            f"rig {rig.name!r} has no device {case.device!r} (it has: {', '.join(sorted(rig.devices)) or 'none'})"
        )
    reason = device.can_run(case).why_not
    if reason:
        raise DeviceAbsent(reason)
    return device


def _reference_duration(case: Case) -> Case:
    """Cases tagged `reference` run short by default; $HILRIG_REFERENCE_DURATION
    (seconds) lengthens them for the nightly reference run (docs/performance.md)."""
    value = os.environ.get("HILRIG_REFERENCE_DURATION")
    if not value or "reference" not in case.tags:
        return case
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigError(f"HILRIG_REFERENCE_DURATION={value!r}: must be a number of seconds") from None
    timeout_s = max(case.timeout_s, seconds + case.warmup_s + DEFAULT_TIMEOUT_MARGIN_S)
    return dataclasses.replace(case, duration_s=seconds, timeout_s=timeout_s)


def _lock_for(case: Case, device: DeviceEntry) -> DeviceLock | None:
    """The device's lock (hostlib.rig.lock), held from open to close; None for the
    simulator, which every run starts for itself (nothing is shared), unless the rig
    entry sets args.lock: true. Wait: $HILRIG_LOCK_TIMEOUT seconds (default 600)."""
    if device.driver == "sim" and not device.args.lock:
        return None
    timeout_s = float(os.environ.get("HILRIG_LOCK_TIMEOUT", "") or DEFAULT_LOCK_TIMEOUT_S)
    return DeviceLock(device, case=case.test_name, timeout_s=timeout_s).acquire()


def _over_link(case: Case, ends: LinkEnds) -> Case:
    """The case as the driver runs it across an emulated link: the host receiver listens
    on the link's host address (in its namespace), where the device sends."""
    transport = case.stream.transport
    if not isinstance(transport, (UdpTransport, TcpTransport)):   # validation keeps links to udp and tcp
        raise ConfigError(f"{case.location}: link: transport {transport.kind} does not cross a network")
    stream = dataclasses.replace(case.stream, transport=dataclasses.replace(transport, host=ends.host_addr))
    return dataclasses.replace(case, stream=stream)


def _has_data(case: Case, snap: Snapshot) -> bool:
    return all(measure.received_frames(measure.leg_case(case, leg), snap) > 0 for leg in measure.legs_of(case))


def run_case(
    case: Case,
    rig: Rig,
    *,
    run_id: str,
    progress: Progress | None = None,
    require_devices: bool = False,
    say: Callable[[str], None] | None = None,
) -> CaseResult:
    """Run `case` on `rig`. Never raises for a device or threshold problem: the
    verdict says it (ERROR / FAIL / SKIP). Ctrl-C propagates after cleanup.

    `require_devices`: a device the rig lists but that is not attached is an
    ERROR (device) instead of a SKIP (a nightly on an unplugged bench goes red).
    `say`: the front-end's console, where a rate search tells which step it runs."""
    if case.search is None:
        return _run_one(case, rig, run_id=run_id, progress=progress, require_devices=require_devices)
    try:
        case = _reference_duration(case)   # lengthens the confirmation, never the steps
    except ConfigError:
        return _run_one(case, rig, run_id=run_id, progress=progress, require_devices=require_devices)
    return run_search(case, lambda c: _run_one(c, rig, run_id=run_id, progress=progress,
                                               require_devices=require_devices, reference=False),
                      say or (lambda line: None))


def _run_one(case: Case, rig: Rig, *, run_id: str, progress: Progress | None,
             require_devices: bool, reference: bool = True) -> CaseResult:
    started_utc = _utc_now()
    result = CaseResult(
        case=case, rig_name=rig.name, device=case.device, driver="", run_id=run_id,
        started_utc=started_utc, ended_utc=started_utc, verdict=Verdict.ERROR, message="",
        metrics={}, thresholds=[], series=[], error=None,
    )
    driver: Driver | None = None
    lock: DeviceLock | None = None
    link: LinkSession | None = None
    try:
        if reference:  # a bad $HILRIG_REFERENCE_DURATION is this case's ERROR
            case = result.case = _reference_duration(case)
        device = _check_device(case, rig)
        result.driver = device.driver
        driver = driver_class(device.driver, where=f"{rig.file}: device {case.device}: ")(device)
        run = case
        transport = case.stream.transport
        why = congestion_unavailable(transport.congestion) if isinstance(transport, TcpTransport) \
            and transport.congestion else None
        if why:   # a Linux congestion control this kernel lacks (bbr not built): SKIP naming it
            raise CongestionUnavailable(why)
        if case.link is not None:
            link = LinkSession(case.link)
            driver.place_on_link(link.ends)   # a driver that cannot: SKIP before anything is built
            link.open()                       # no root or no TUN here: SKIP with the reason
            link.start_delay_probes()         # netem keeps no delay histogram: measured by probes
            run = _over_link(case, link.ends)
            result.link = {"realisation": link.realisation, "why": link.why, **case.link.to_json()}
        lock = _lock_for(case, device)
        try:
            driver.open()
        except DeviceNotAttached:
            raise
        except DeviceAbsent as exc:  # a driver's "not found": the listed device is not attached
            raise DeviceNotAttached(str(exc)) from exc
        driver.configure(run)   # a UHD device opens here: it knows its versions after
        result.device_versions = driver.versions()
        _stream(run, driver, result, progress, link)
        judge(case, result)
    except DeviceNotAttached as exc:
        if require_devices:
            result.set_error(ErrorKind.DEVICE, f"required device not attached: {exc}")
        else:
            result.set_skip(str(exc))
        result.message = summary_line(result)
    except DeviceAbsent as exc:
        result.set_skip(str(exc))
        result.message = summary_line(result)
    except DeviceError as exc:
        if link is not None and not link.alive():   # the stream died with the link, not the device
            result.set_error(ErrorKind.INFRASTRUCTURE, f"{link.describe_death()} (then: {exc})")
        else:
            result.set_error(ErrorKind.DEVICE, str(exc))
        result.message = summary_line(result)
    except ConfigError as exc:
        result.set_error(ErrorKind.CONFIG, str(exc))
        result.message = summary_line(result)
    except HilrigError as exc:  # InfrastructureError (and the base class): the rig stopped it
        result.set_error(ErrorKind.INFRASTRUCTURE, str(exc))
        result.message = summary_line(result)
    finally:
        if driver is not None:
            driver.close()
        if link is not None:
            link.close()
        if lock is not None:
            lock.release()
        result.ended_utc = _utc_now()
    _expected_error(case, result)
    return result


def _expected_error(case: Case, result: CaseResult) -> None:
    """`expect_error: <kind>`: the case tests that the rig notices a failure (the
    simulator dying mid-run): ERROR of that kind is its PASS, anything else its FAIL."""
    want = case.expect_error
    if not want or result.verdict == Verdict.SKIP:
        return
    got = f"{result.verdict.label}" + (f" ({result.kind})" if result.verdict == Verdict.ERROR else "")
    if result.verdict == Verdict.ERROR and result.kind == want:
        text = result.error or ""
        result.verdict, result.error, result.error_kind = Verdict.PASS, None, None
        result.message = f"PASS: ERROR ({want}) as expected: {text}"
    else:
        detail = f": {result.error}" if result.error else ""
        result.verdict, result.error, result.error_kind = Verdict.FAIL, None, None
        result.message = f"FAIL: expected ERROR ({want}), the run ended {got}{detail}"


def _stream(case: Case, driver: Driver, result: CaseResult, progress: Progress | None,
            link: LinkSession | None = None) -> None:
    timeout_s = float(case.timeout_s)
    watch = SilenceWatch(case)
    rcv0 = measure.udp_rcvbuf_errors()
    started_ns = driver.start()
    deadline_ns = started_ns + int(timeout_s * 1e9)

    def overdue() -> None:
        if time.monotonic_ns() > deadline_ns:
            raise DeviceError(f"case did not finish within its timeout of {timeout_s:g} s")

    # The window starts at the first data after warm-up, so start-up latency
    # never counts against throughput (it is reported as time_to_first_sample_s).
    snap = watched_poll(driver, watch)
    first_deadline = time.monotonic() + min(FIRST_DATA_TIMEOUT_S, timeout_s)
    while not _has_data(case, snap):
        if time.monotonic() > first_deadline:
            raise DeviceError(f"no data within {FIRST_DATA_TIMEOUT_S:g} s of starting the stream")
        time.sleep(0.001)
        snap = watched_poll(driver, watch)
    if case.warmup_s > 0:
        time.sleep(case.warmup_s)
        snap = watched_poll(driver, watch)
    snap = _sender_settled(case, driver, watch, snap, overdue)
    snap = _receiver_caught_up(case, driver, watch, snap, overdue)
    window_start = prev = snap
    if case.signal is not None:
        driver.arm_capture()   # the capture is the window's first samples
    link0 = link.stats() if link is not None else None
    cpu0 = measure.cpu_seconds()
    ticks0 = measure.cpu_busy_ticks()
    end_ns = window_start.taken_ns + int(case.duration_s * 1e9)
    next_ns = window_start.taken_ns + 1_000_000_000
    window_end = window_start
    while True:
        now = time.monotonic_ns()
        wake_ns = min(next_ns, end_ns)
        if wake_ns > now:
            time.sleep((wake_ns - now) / 1e9)
        overdue()
        if link is not None:
            link.check()
        try:
            cur = watched_poll(driver, watch)
        except DeviceSilent as exc:
            # What was measured before the silence is kept; the window ends when the
            # silence was noticed, so longest_gap_s holds the silence itself.
            if isinstance(exc.snapshot, Snapshot):
                result.metrics, result.legs = measure.measure_legs(case, measure.Run(
                    started_ns, window_start, exc.snapshot, exc.snapshot, measure.cpu_seconds() - cpu0, None,
                    (ticks0, measure.cpu_busy_ticks())))
            raise
        window_end = cur
        if cur.taken_ns >= next_ns or cur.taken_ns >= end_ns:
            row = measure.series_row(case, prev, cur, window_start.taken_ns)
            result.series.append(row)
            if progress is not None:
                progress(measure.progress_row(case, row, cur))
            prev = cur
            next_ns += 1_000_000_000
        if cur.taken_ns >= end_ns:
            break
    cpu_s = measure.cpu_seconds() - cpu0
    ticks1 = measure.cpu_busy_ticks()
    link1 = link.stats() if link is not None else None
    final = driver.stop()
    rcv1 = measure.udp_rcvbuf_errors()
    rcvbuf = (rcv1 - rcv0) if (rcv0 is not None and rcv1 is not None and case.transport.kind == "udp") else None
    result.metrics, result.legs = measure.measure_legs(
        case, measure.Run(started_ns, window_start, window_end, final, cpu_s, rcvbuf, (ticks0, ticks1)))
    if case.signal is not None:
        # The capture and its spectrum are kept before the analysis, so that an analysis
        # that fails still leaves them (the run session saves a failure's capture as SigMF).
        capture = result.rf_capture = driver.capture()
        if capture is not None:
            result.rf_spectrum = rf_spectrum(capture, case.rate_sps)
        rf = analyze_rf(case, capture)
        result.metrics.update(rf.metrics)
        result.rf_constellation, result.rf_constellation_ideal = rf.constellation, rf.constellation_ideal
        if result.rf_spectrum is not None and case.signal.modulation is None:
            result.rf_spectrum["markers"] = rf_markers(case.signal, rf.metrics, case.rate_sps)
    if link is not None and case.link is not None and link0 is not None and link1 is not None:
        window_s = (window_end.taken_ns - window_start.taken_ns) / 1e9
        result.metrics.update(link_metrics(case.link, link0, link1, window_s, data_side(case.direction)))
    result.warnings = measure.host_warnings(final)
    congestion = measure.tcp_congestion(case, final)
    if congestion:
        result.transport_info["tcp_congestion"] = congestion
    result.blocks = measure.blocks(case, final)
    result.study = measure.study(case, result.metrics, result.blocks, congestion or "")
    overcount = measure.overcounted(case, result.metrics, result.legs, window_start, window_end, final)
    if overcount and any(t.metric in measure.THROUGHPUT_METRICS for t in case.thresholds):
        # A throughput threshold cannot pass on samples that were not the window's: the
        # rig's own accounting is wrong, not the device and not the case, so it is an
        # infrastructure error (the metrics stay in the result, as measured).
        raise InfrastructureError(overcount)
    if overcount:   # nothing is judged on it: said beside the result
        result.warnings.append(overcount)


def _receiver_caught_up(case: Case, driver: Driver, watch: SilenceWatch, snap: Snapshot,
                        overdue: Callable[[], None]) -> Snapshot:
    """An RX window starts once the host receiver keeps pace with the stream: frames that
    piled up while it was held back before the window (a host stall during start-up or
    warm-up leaves them in the socket buffer, the ring, a flowgraph's buffers) would be
    drained inside the window and counted as rate. Pace is the receiver's progress
    through the stream's sequence (frames received plus those it found missing, so a
    lossy stream keeps pace too); the window starts where the first interval that
    advanced by the rate began (within two deliveries and 5 %: neither draining a
    backlog, which goes at CPU speed, nor stalled), so a receiver that keeps pace from
    the start loses nothing of its window; after SENDER_SETTLE_MAX_S it starts
    anyway (the throughput ceiling judges it)."""
    if case.direction != "rx":
        return snap

    def progress_frames(s: Snapshot) -> float:
        return counter(s.host_rx, "frames_received") + counter(s.host_rx, "missing_frames")

    delivery = measure.frames_per_delivery(case)
    frames_per_s = case.rate_sps / case.samples_per_frame
    interval_s = max(SENDER_SETTLE_INTERVAL_S, 10 * delivery / frames_per_s)
    deadline = time.monotonic() + SENDER_SETTLE_MAX_S
    while time.monotonic() < deadline:
        time.sleep(interval_s)
        overdue()
        prev, snap = snap, watched_poll(driver, watch)
        advanced = progress_frames(snap) - progress_frames(prev)
        due = frames_per_s * (snap.taken_ns - prev.taken_ns) / 1e9
        if abs(advanced - due) <= 2 * delivery + 0.05 * due:   # the polls' own timing aside
            return prev   # the interval from here on went at the rate: nothing was draining
    return snap


def _sender_settled(case: Case, driver: Driver, watch: SilenceWatch, snap: Snapshot,
                    overdue: Callable[[], None]) -> Snapshot:
    """A window that counts what the host's sender delivered (measure.fed_by_host:
    loopback, or TX on a device that does not report what its sample clock played)
    starts once the sender runs at the rate: a sender that fills a device FIFO and its transfers in flight
    at bus speed first (USB) delivers that lead on top of the rate, and a window that
    counted it would report more than was asked. The window starts at the first
    snapshot where the sender's lead has stopped growing and is as large as it has been
    (within one delivery; a sender descheduled at the window's start would make up its
    lead inside the window); after SENDER_SETTLE_MAX_S it starts anyway (the
    throughput ceiling judges it)."""
    if not measure.fed_by_host(case, snap):
        return snap
    delivery = measure.frames_per_delivery(case)
    interval_s = max(SENDER_SETTLE_INTERVAL_S, 10 * delivery * case.samples_per_frame / float(case.rate_sps))
    lead = measure.sender_lead_frames(case, snap)
    most = lead
    deadline = time.monotonic() + SENDER_SETTLE_MAX_S
    while time.monotonic() < deadline:
        time.sleep(interval_s)
        overdue()
        snap = watched_poll(driver, watch)
        before, lead = lead, measure.sender_lead_frames(case, snap)
        most = max(most, lead)
        if lead - before <= delivery and lead >= most - delivery:
            break
    return snap
