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
from typing import Any

from .._exceptions import DeviceAbsent, DeviceError, InfrastructureError
from .._installed import packaged_soapy_modules
from ..transports import native
from .base import register_driver
from .radio import RadioDriver, args_string, radio_config, rate_checked


def ensure_plugin_path() -> str | None:
    """Add the module's directory to SOAPY_SDR_PLUGIN_PATH (for this process and its
    children): the package's hostlib/soapy_modules when installed from a wheel, else
    the build's; SoapySDR reads it once, when it first loads modules."""
    packaged = packaged_soapy_modules()
    module_dir = str(packaged) if packaged else getattr(native(), "SOAPY_MODULE_DIR", None)
    if not module_dir:
        return None
    parts = [p for p in os.environ.get("SOAPY_SDR_PLUGIN_PATH", "").split(":") if p]
    if module_dir not in parts:
        os.environ["SOAPY_SDR_PLUGIN_PATH"] = ":".join([module_dir, *parts])
    return module_dir



@register_driver
class SoapyDriver(RadioDriver):
    name = "soapy"
    library = "SoapySDR"

    def __init__(self, device: Any):
        super().__init__(device)
        self._last_sim_stats: dict = {}   # the simulator's last answered counters (driver=hilrig)

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
            raise InfrastructureError("hostlib._native was built without SoapySDR "
                                      "(apt-get install libsoapysdr-dev; make build)")
        ensure_plugin_path()
        args = self._args()
        if not nat.SoapyRadio.enumerate(args):
            raise DeviceAbsent(f"no SoapySDR device matching {args!r}")
        try:
            self.radio = nat.SoapyRadio(args)
        except RuntimeError as exc:
            raise DeviceError(f"SoapySDR device {args!r} did not open: {exc}") from exc
        self._info = self.radio.info()

    def describe(self) -> str:
        return self._args()

    def versions(self) -> dict[str, str]:
        return {"soapysdr": str(self._info.get("soapysdr", "?")),
                "soapy_driver": str(self._info.get("driver_key", "?")), **self.rate_versions()}

    def stream_args(self, case: Any) -> dict[str, Any]:
        """Stream args from the case: its transport (which the hilrig module uses for the
        simulator link; other modules ignore keys they do not know), faults, then the
        case's own stream_args, which win."""
        t = case.transport
        sa: dict[str, Any] = {"WIRE": case.sample_format, "transport": t.kind, "frame_bytes": case.frame_bytes}
        opts = vars(t)   # the effective transport config (hostlib.transports.config)
        if t.kind == "udp":
            sa["socket_buffer_bytes"] = opts["socket_buffer_bytes"]   # complete: the loader filled the core's default
        elif t.kind == "shm":
            sa["slots"] = opts["slots"]
        fifo = getattr(case, "fifo_frames", None) or getattr(self.device, "fifo_frames", None)
        if fifo:
            sa["fifo_frames"] = fifo
        faults = case.faults.to_json()
        # The module's stream args for the fault keys (hilrig::stream_args(): seed and
        # window_frames get a fault_ prefix); unset keys keep the core's defaults.
        for k, v in faults.items():
            sa[f"fault_{k}" if k in ("seed", "window_frames") else k] = v
        sa.update(getattr(case, "stream_args", None) or {})
        return {k: str(v) for k, v in sa.items()}

    def configure(self, case: Any) -> None:
        self.case = case
        if getattr(case, "host", "native") == "gnuradio":
            return self._configure_flowgraph(case)
        # The simulator behind driver=hilrig sends the counter pattern: check it by default.
        simulated = self._simulated()
        try:
            self.configured = self.radio.configure(radio_config(case, self.device, self.stream_args(case), simulated))
        except (RuntimeError, ValueError) as exc:
            raise DeviceError(f"SoapySDR device {self._args()!r} refused the configuration: {exc}") from exc
        rate_checked(case, self.configured, f"SoapySDR device {self._args()!r}")

    def _configure_flowgraph(self, case: Any) -> None:
        """host: gnuradio: GNU Radio's soapy.source opens the device with the same device
        and stream args, in front of pattern_check (hostlib/drivers/flowgraph.py)."""
        from .flowgraph import FlowgraphRadio, formats_for, source_spec_soapy

        chain, source_format, check_format = formats_for(case)
        native_radio, self.radio = self.radio, None
        del native_radio  # the flowgraph's source opens the device itself: the native one lets it go
        frequency = (getattr(self.device, "args", {}) or {}).get("frequency_hz")
        spec = source_spec_soapy(case, self._args(), self.stream_args(case), source_format, frequency)
        self.radio = FlowgraphRadio(spec, case, chain, check_format)
        self.configured = self.radio.configured()
        rate_checked(case, self.configured, f"SoapySDR device {self._args()!r} (GNU Radio soapy source)")

    def device_stats(self, stats: dict) -> dict:
        """The hilrig module reports the simulator's own counters as a sensor; a
        simulator whose status cannot be read any more has died (DeviceError); one that
        does not answer in time keeps its last counters (the silence bound judges it)."""
        sensors = stats.get("sensors", {})
        sim = sensors.get("sim_stats")
        if not sim:
            if self._simulated() and sensors.get("error"):
                raise DeviceError(f"SoapySDR device {self._args()!r}: its simulator is gone: {sensors['error']}")
            return {}
        try:
            counters = json.loads(sim)
        except ValueError:
            raise DeviceError(f"SoapySDR device {self._args()!r} reported unreadable sim_stats: "
                              f"{sim[:200]!r}") from None
        if "unanswered_ms" in counters:
            # alive but not answering (stopped): the last counters stand, the silence bound judges
            return self._last_sim_stats
        self._last_sim_stats = counters
        return counters

    def _simulated(self) -> bool:
        return (getattr(self.device, "args", {}) or {}).get("driver") == "hilrig"

