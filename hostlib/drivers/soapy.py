"""The `soapy` driver: any SoapySDR device through the SoapySDR C++ API (native core).

The streaming loops and every counter live in C++ (hostlib/native/src/soapy_driver.cpp):
readStream/writeStream return codes and flags and readStreamStatus become the sim
path's counter names (docs/drivers.md). The simulator is a SoapySDR device too
(module `driver=hilrig`, built into build/soapy-modules): this driver puts that
directory on SOAPY_SDR_PLUGIN_PATH for its own process before SoapySDR loads modules.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any

from .._exceptions import DeviceAbsent, DeviceError, InfrastructureError
from .base import Driver, Snapshot, register_driver
from .sim import native

# Rig `args` keys that configure this driver rather than the SoapySDR device.
DRIVER_KEYS = ("check_pattern", "frequency_hz")
RATE_TOLERANCE = 1e-6   # relative; a coerced rate further off than this is not the case's rate


def args_string(args: dict[str, Any], serial: str | None = None) -> str:
    """{"driver": "hilrig"} -> "driver=hilrig" (SoapySDR/UHD markup), driver keys left out."""
    items = {k: v for k, v in (args or {}).items() if k not in DRIVER_KEYS}
    if serial and "serial" not in items:
        items["serial"] = serial
    return ",".join(f"{k}={'true' if v is True else 'false' if v is False else v}" for k, v in items.items())


def ensure_plugin_path() -> str | None:
    """Add the build's module directory to SOAPY_SDR_PLUGIN_PATH (for this process and
    its children); SoapySDR reads it once, when it first loads modules."""
    nat = native()
    module_dir = getattr(nat, "SOAPY_MODULE_DIR", None)
    if not module_dir:
        return None
    parts = [p for p in os.environ.get("SOAPY_SDR_PLUGIN_PATH", "").split(":") if p]
    if module_dir not in parts:
        os.environ["SOAPY_SDR_PLUGIN_PATH"] = ":".join([module_dir, *parts])
    return module_dir


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


@register_driver
class SoapyDriver(Driver):
    name = "soapy"

    def __init__(self, device: Any):
        super().__init__(device)
        self.radio = None
        self.case = None
        self.configured: dict = {}
        self._info: dict = {}

    def _args(self) -> str:
        args = dict(getattr(self.device, "args", {}) or {})
        if args.get("driver") == "hilrig" and "sim_binary" not in args:
            # The module runs the same simulator binary as the sim driver would.
            from .sim import find_sim_binary
            args["sim_binary"] = find_sim_binary()
        return args_string(args, getattr(self.device, "serial", None))

    def open(self) -> None:
        nat = native()
        if not getattr(nat, "HAVE_SOAPY", False):
            raise InfrastructureError("hostlib._native was built without SoapySDR (apt-get install libsoapysdr-dev; make build)")
        ensure_plugin_path()
        args = self._args()
        if not nat.SoapyRadio.enumerate(args):
            raise DeviceAbsent(f"no SoapySDR device matching {args!r}")
        try:
            self.radio = nat.SoapyRadio(args)
        except RuntimeError as exc:
            raise DeviceError(f"SoapySDR device {args!r} did not open: {exc}") from exc
        self._info = self.radio.info()

    def versions(self) -> dict[str, str]:
        out = {"soapysdr": str(self._info.get("soapysdr", "?")),
               "soapy_driver": str(self._info.get("driver_key", "?"))}
        if self.configured:
            out["rate_sps_requested"] = repr(self.configured.get("rate_sps_requested"))
            out["rate_sps_coerced"] = repr(self.configured.get("rate_sps"))
        return out

    def stream_args(self, case: Any) -> dict[str, Any]:
        """Stream args from the case: its transport (which the hilrig module uses for the
        simulator link; other modules ignore keys they do not know), faults, then the
        case's own stream_args, which win."""
        t = case.transport
        sa: dict[str, Any] = {"WIRE": case.sample_format, "transport": t.kind, "frame_bytes": t.frame_bytes}
        opts = dict(t.options or {})
        if t.kind == "udp":
            sa["socket_buffer_bytes"] = opts.get("socket_buffer_bytes", 4 * 1024 * 1024)
        elif t.kind == "shm":
            sa["slots"] = opts.get("slots", 256)
        fifo = getattr(case, "fifo_frames", None) or getattr(self.device, "fifo_frames", None)
        if fifo:
            sa["fifo_frames"] = fifo
        faults = dict(getattr(case, "faults", None) or {})
        if faults:
            sa["fault_seed"] = faults.get("seed", 1)
            for k in ("drop_frames", "corrupt_samples", "duplicate_frames", "reorder_frames"):
                sa[k] = faults.get(k, 0)
        sa.update(getattr(case, "stream_args", None) or {})
        return {k: str(v) for k, v in sa.items()}

    def configure(self, case: Any) -> None:
        self.case = case
        args = getattr(self.device, "args", {}) or {}
        cfg = {"direction": case.direction, "channels": int(case.channels), "sample_format": case.sample_format,
               "rate_sps": float(case.rate_sps), "master_clock_hz": float(case.master_clock_hz),
               "stream_args": self.stream_args(case),
               "check_pattern": bool(args.get("check_pattern", args.get("driver") == "hilrig"))}
        if "frequency_hz" in args:
            cfg["frequency_hz"] = float(args["frequency_hz"])
        try:
            self.configured = self.radio.configure(cfg)
        except (RuntimeError, ValueError) as exc:
            raise DeviceError(f"SoapySDR device {self._args()!r} refused the configuration: {exc}") from exc
        rate_checked(case, self.configured, f"SoapySDR device {self._args()!r}")

    def start(self) -> int:
        started = time.monotonic_ns()
        try:
            self.radio.start()
        except RuntimeError as exc:
            raise DeviceError(f"SoapySDR device {self._args()!r} did not start: {exc}") from exc
        return started

    def _snapshot(self) -> Snapshot:
        stats = self.radio.stats()
        device: dict[str, Any] = {}
        sim = stats.get("sensors", {}).get("sim_stats")
        if sim:
            try:
                device = json.loads(sim)  # the hilrig module: the simulator's own counters
            except ValueError:
                device = {}
        return split_stats(self.case, stats, device)

    def poll(self) -> Snapshot:
        return self._snapshot()

    def stop(self) -> Snapshot:
        self.radio.stop()
        return self._snapshot()

    def close(self) -> None:
        radio, self.radio = self.radio, None
        if radio is not None:
            try:
                radio.stop()
            except Exception:  # noqa: BLE001  close never raises
                pass
            del radio
