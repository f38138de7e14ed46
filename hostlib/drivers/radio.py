"""What the radio drivers (uhd, soapy) share: device-args markup, the coerced-rate
check, the mapping of native radio stats onto the sim path's counter names, and the
open/configure/start/poll/stop/close skeleton around a native radio object.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from .._exceptions import DeviceAbsent, DeviceError, InfrastructureError
from ..counters import DeviceStats, Snapshot
from ..dsl.case import Case
from ..rig.args import RadioArgs
from ..rig.inventory import DeviceEntry
from ..rig.probe import Found, Probe
from ._native_facade import Radio, RadioStats, have
from .base import Driver, Watchdog

RATE_TOLERANCE = 1e-6   # relative; a coerced rate further off than this is not the case's rate
StreamArgs = dict[str, str]


def args_string(args: dict[str, str], serial: str | None = None) -> str:
    """{"driver": "hilrig"} -> "driver=hilrig" (SoapySDR/UHD markup)."""
    items = dict(args)
    if serial and "serial" not in items:
        items["serial"] = serial
    return ",".join(f"{k}={v}" for k, v in items.items())


def probe_library(feature: str, library: str, ask: Callable[[Probe], None]) -> Probe:
    """A radio library asked what it finds attached (`ask` fills the probe); a core built
    without it, or one that cannot be loaded, is a problem line."""
    out = Probe()
    try:
        if not have(feature):
            out.problems.append(f"{library}: hostlib._native was built without it")
            return out
        ask(out)
    except InfrastructureError as exc:
        out.problems.append(str(exc))
    return out


def rate_checked(case: Case, configured: dict[str, float], what: str) -> None:
    """SKIP (DeviceAbsent) when the device coerced the rate away from the case's."""
    got = float(configured.get("rate_sps", 0.0))
    want = float(case.rate_sps)
    if abs(got - want) > RATE_TOLERANCE * want:
        raise DeviceAbsent(f"{what} cannot run at {want:.9g} S/s: it coerced the rate to {got:.9g} S/s")


def split_stats(case: Case, stats: RadioStats, device: DeviceStats) -> Snapshot:
    """Native driver stats -> Snapshot with the sim path's keys (docs/architecture.md)."""
    rx, tx = stats.get("rx", {}), stats.get("tx", {})
    direction = case.direction
    dev: DeviceStats = {**device}
    if direction in ("tx", "loopback"):
        # What the API told us about the device's TX side, each under its own name.
        dev["underruns"] = tx.get("underruns", 0)
        dev["tx_seq_errors"] = tx.get("seq_errors", 0)
        if "tx_frames_received" not in dev:
            # A radio does not report what it received; what it accepted is the closest truth.
            dev["tx_frames_received"] = tx.get("frames_sent", 0)
            dev["tx_samples_received"] = tx.get("samples_sent", 0)
            dev["tx_payload_bytes_received"] = tx.get("payload_bytes_sent", 0)
    dev["late_commands"] = rx.get("late_commands", 0) + tx.get("late_commands", 0)
    return Snapshot(host_rx=rx if direction in ("rx", "loopback") else {},
                    host_tx=tx if direction in ("tx", "loopback") else {}, device=dev)


def radio_config(case: Case, args: RadioArgs, stream_args: StreamArgs,
                 check_pattern_default: bool) -> dict[str, object]:
    """The native radio's `configure` request (UhdRadio, SoapyRadio): the case's
    stream, the rig entry's own keys (check_pattern, frequency_hz)."""
    check = args.check_pattern if args.check_pattern is not None else check_pattern_default
    cfg: dict[str, object] = {
        "direction": case.direction, "channels": int(case.channels), "sample_format": case.sample_format,
        "rate_sps": float(case.rate_sps), "master_clock_hz": float(case.master_clock_hz),
        "stream_args": stream_args, "check_pattern": check}
    if args.frequency_hz is not None:
        cfg["frequency_hz"] = float(args.frequency_hz)
    return cfg


class RadioDriver(Driver):
    """A native radio (UhdRadio / SoapyRadio) driven through one protocol.

    Subclasses open `self.radio` and configure it; this class starts, polls, stops
    and always releases it, and turns the library's errors into DeviceError.
    """

    library = "radio"  # the name used in messages ("UHD", "SoapySDR")

    def __init__(self, device: DeviceEntry):
        super().__init__(device)
        self.args = self.args_as(RadioArgs)
        self.radio: Radio | None = None  # the native radio, or a FlowgraphRadio (host: gnuradio)
        self._case: Case | None = None
        self.configured: dict[str, float] = {}
        self._info: dict[str, str] = {}

    @property
    def case(self) -> Case:
        if self._case is None:
            raise DeviceError(f"{self.describe()} is not configured")
        return self._case

    @property
    def _radio(self) -> Radio:
        if self.radio is None:
            raise DeviceError(f"{self.describe()} is not open")
        return self.radio

    @classmethod
    def matches(cls, entry: DeviceEntry, found: Found) -> bool:
        """Every device arg of the entry (and its serial) as the library reported it."""
        if found.kind != cls.name or not isinstance(entry.args, RadioArgs):
            return False
        want = dict(entry.args.device_args())
        if entry.serial:
            want["serial"] = str(entry.serial)
        return all(found.args.get(k) == v for k, v in want.items())

    def args_text(self) -> str:
        """The device's args string, as the library is given it."""
        return args_string(self.args.device_args(), self.device.serial)

    def describe(self) -> str:
        return f"{self.library} device {self.args_text()!r}"

    def start(self) -> int:
        started = time.monotonic_ns()
        try:
            self._radio.start()
        except RuntimeError as exc:
            raise DeviceError(f"{self.describe()} did not start: {exc}") from exc
        return started

    def device_stats(self, stats: RadioStats) -> DeviceStats:
        """The device's own counters, when the library reports any (none by default)."""
        return {}

    def poll(self, watchdog: Watchdog | None = None) -> Snapshot:
        stats = self._radio.stats()
        snap = split_stats(self.case, stats, self.device_stats(stats))
        if stats.get("device_error"):
            # A stream error the device reported (readStream/deactivateStream, a UHD
            # error code, an exception out of the library): the device failed.
            raise DeviceError(f"{self.describe()}: {stats.get('device_error')}")
        return snap

    def stop(self) -> Snapshot:
        self._radio.stop()
        return self.poll()

    def close(self) -> None:
        radio, self.radio = self.radio, None
        if radio is not None:
            try:
                radio.stop()
            except Exception:  # noqa: BLE001  close never raises: cleanup must go on
                pass
            del radio
