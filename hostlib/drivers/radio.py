"""What the radio drivers (uhd, soapy) share: device-args markup, the coerced-rate
check, the mapping of native radio stats onto the sim path's counter names, and the
open/configure/start/poll/stop/close skeleton around a native radio object.
"""
from __future__ import annotations

import time
from typing import Any

from .._exceptions import DeviceAbsent, DeviceError, DeviceSilent
from ..engine.measure import SILENCE_CONFIRM_S, SilenceWatch
from .base import Driver, Snapshot

# Rig `args` keys that configure the rig (this driver, the device lock) rather than
# the SoapySDR/UHD device: never passed to the device, never matched when probing.
DRIVER_KEYS = ("check_pattern", "frequency_hz", "lock")
RATE_TOLERANCE = 1e-6   # relative; a coerced rate further off than this is not the case's rate


def args_string(args: dict[str, Any], serial: str | None = None) -> str:
    """{"driver": "hilrig"} -> "driver=hilrig" (SoapySDR/UHD markup), driver keys left out."""
    items = {k: v for k, v in (args or {}).items() if k not in DRIVER_KEYS}
    if serial and "serial" not in items:
        items["serial"] = serial
    return ",".join(f"{k}={'true' if v is True else 'false' if v is False else v}" for k, v in items.items())


def rate_checked(case: Any, configured: dict, what: str) -> None:
    """SKIP (DeviceAbsent) when the device coerced the rate away from the case's."""
    got = float(configured.get("rate_sps", 0.0))
    want = float(case.rate_sps)
    if abs(got - want) > RATE_TOLERANCE * want:
        raise DeviceAbsent(f"{what} cannot run at {want:.9g} S/s: it coerced the rate to {got:.9g} S/s")


def split_stats(case: Any, stats: dict, device: dict) -> Snapshot:
    """Native driver stats -> Snapshot with the sim path's keys (docs/architecture.md)."""
    rx, tx = stats.get("rx", {}), stats.get("tx", {})
    direction = case.direction
    dev = dict(device)
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


def radio_config(case: Any, device: Any, stream_args: dict[str, str], check_pattern_default: bool) -> dict:
    """The native radio's `configure` request (UhdRadio, SoapyRadio): the case's
    stream, the rig entry's driver keys (check_pattern, frequency_hz)."""
    args = getattr(device, "args", {}) or {}
    cfg = {"direction": case.direction, "channels": int(case.channels), "sample_format": case.sample_format,
           "rate_sps": float(case.rate_sps), "master_clock_hz": float(case.master_clock_hz),
           "stream_args": stream_args,
           "check_pattern": bool(args.get("check_pattern", check_pattern_default))}
    if "frequency_hz" in args:
        cfg["frequency_hz"] = float(args["frequency_hz"])
    return cfg


class RadioDriver(Driver):
    """A native radio (nat.UhdRadio / nat.SoapyRadio) driven through one protocol.

    Subclasses open `self.radio` and configure it; this class starts, polls, stops
    and always releases it, and turns the library's errors into DeviceError.
    """

    library = "radio"  # the name used in messages ("UHD", "SoapySDR")

    def __init__(self, device: Any):
        super().__init__(device)
        self.radio: Any = None  # the native UhdRadio / SoapyRadio (untyped), or a FlowgraphRadio (host: gnuradio)
        self.case: Any = None
        self.configured: dict = {}
        self._info: dict = {}
        self._silence: SilenceWatch | None = None

    def describe(self) -> str:
        """How the device is named in messages (its args string)."""
        return args_string(dict(getattr(self.device, "args", {}) or {}), getattr(self.device, "serial", None))

    def rate_versions(self) -> dict[str, str]:
        if not self.configured:
            return {}
        return {"rate_sps_requested": repr(self.configured.get("rate_sps_requested")),
                "rate_sps_coerced": repr(self.configured.get("rate_sps"))}

    def start(self) -> int:
        started = time.monotonic_ns()
        try:
            self.radio.start()
        except RuntimeError as exc:
            raise DeviceError(f"{self.library} device {self.describe()!r} did not start: {exc}") from exc
        return started

    def device_stats(self, stats: dict) -> dict:
        """The device's own counters, when the library reports any (none by default)."""
        return {}

    def _snapshot(self) -> Snapshot:
        stats = self.radio.stats()
        snap = split_stats(self.case, stats, self.device_stats(stats))
        if stats.get("device_error"):
            # A stream error the device reported (readStream/deactivateStream, a UHD
            # error code, an exception out of the library): the device failed.
            raise DeviceError(f"{self.library} device {self.describe()!r}: {stats['device_error']}")
        return snap

    def poll(self) -> Snapshot:
        snap = self._snapshot()
        if self._silence is None:
            self._silence = SilenceWatch(self.case)
        watch = self._silence
        silent = watch.check(snap)
        if watch.suspect and not silent:
            time.sleep(SILENCE_CONFIRM_S)   # the second look (a busy host is not a silent device)
            snap = self._snapshot()
            silent = watch.check(snap)
        if silent:
            raise DeviceSilent(f"{self.library} device {self.describe()!r} {silent}", snapshot=snap)
        return snap

    def stop(self) -> Snapshot:
        self.radio.stop()
        return self._snapshot()

    def close(self) -> None:
        radio, self.radio = self.radio, None
        if radio is not None:
            try:
                radio.stop()
            except Exception:  # noqa: BLE001  close never raises: cleanup must go on
                pass
            del radio
