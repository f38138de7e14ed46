"""The `soapy` driver: any SoapySDR device through the SoapySDR C++ API (native core).

The streaming loops and every counter live in C++ (hostlib/native/radio/soapy_driver.cpp):
readStream/writeStream return codes and flags and readStreamStatus become the sim
path's counter names (docs/drivers.md). The simulator is a SoapySDR device too
(module `driver=hilrig`, built into build/soapy-modules): this driver puts that
directory on SOAPY_SDR_PLUGIN_PATH for its own process before SoapySDR loads modules.
"""
from __future__ import annotations

import json
import os

from .._exceptions import DeviceAbsent, DeviceError, InfrastructureError
from .._installed import packaged_soapy_modules
from ..counters import DeviceStats
from ..dsl.case import Case
from ..rig.inventory import DeviceEntry
from ..rig.probe import Found, Probe
from ..transports import stream_config
from ._native_facade import NativeRadio, RadioStats, have, soapy_enumerate, soapy_module_dir
from .base import register_driver
from .radio import RadioDriver, StreamArgs, args_string, probe_library, radio_config, rate_checked

# What `hilrig rig probe` asks SoapySDR to enumerate: every module, and the simulator's.
PROBE_ARGS = ("", "driver=hilrig")


def ensure_plugin_path() -> str | None:
    """Add the module's directory to SOAPY_SDR_PLUGIN_PATH (for this process and its
    children): the package's hostlib/soapy_modules when installed from a wheel, else
    the build's; SoapySDR reads it once, when it first loads modules."""
    packaged = packaged_soapy_modules()
    module_dir = str(packaged) if packaged else soapy_module_dir()
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

    def __init__(self, device: DeviceEntry):
        super().__init__(device)
        self._last_sim_stats: DeviceStats = {}   # the simulator's last answered counters (driver=hilrig)
        self._native: NativeRadio | None = None  # the SoapyRadio open() made

    @classmethod
    def probe(cls) -> Probe:
        def ask(out: Probe) -> None:
            ensure_plugin_path()
            for args in PROBE_ARGS:
                try:
                    out.add(Probe(found=[Found("soapy", a) for a in soapy_enumerate(args)]))
                except RuntimeError as exc:
                    out.problems.append(f"SoapySDR enumerate {args!r} failed: {exc}")

        return probe_library("SOAPY", "SoapySDR", ask)

    def _args(self) -> str:
        args = self.args.device_args()
        if self._simulated() and "sim_binary" not in args:
            # The module runs the same simulator binary as the sim driver would.
            from .sim import find_sim_binary
            args["sim_binary"] = find_sim_binary()
        return args_string(args, self.device.serial)

    def open(self) -> None:
        if not have("SOAPY"):
            raise InfrastructureError("hostlib._native was built without SoapySDR "
                                      "(apt-get install libsoapysdr-dev; make build)")
        ensure_plugin_path()
        args = self._args()
        if not soapy_enumerate(args):
            raise DeviceAbsent(f"no SoapySDR device matching {args!r}")
        try:
            radio = NativeRadio("soapy", args)
        except RuntimeError as exc:
            raise DeviceError(f"SoapySDR device {args!r} did not open: {exc}") from exc
        self.radio = radio
        self._native = radio
        self._info = radio.info()

    def args_text(self) -> str:
        return self._args()

    def versions(self) -> dict[str, str]:
        return {"soapysdr": str(self._info.get("soapysdr", "?")),
                "soapy_driver": str(self._info.get("driver_key", "?"))}

    def stream_args(self, case: Case) -> StreamArgs:
        """Stream args from the case: its transport (which the hilrig module uses for the
        simulator link; other modules ignore keys they do not know), faults, then the
        case's own stream_args, which win."""
        t = case.transport
        sa: dict[str, object] = {"WIRE": case.sample_format, "transport": t.kind, "frame_bytes": case.frame_bytes}
        transport = stream_config(case)["transport"]   # complete: the core's defaults filled in
        if t.kind in ("udp", "tcp"):
            sa["socket_buffer_bytes"] = transport["socket_buffer_bytes"]
        if t.kind == "tcp":
            # the sender's options: a bool as the module's stream args spell it
            sa["write_bytes"] = transport["write_bytes"]
            sa["congestion"] = transport["congestion"]
            sa["nodelay"] = "true" if transport["nodelay"] else "false"
        elif t.kind == "shm":
            sa["slots"] = transport["slots"]
            sa["publish"] = transport["publish"]
        fifo = case.fifo_frames or self.device.fifo_frames
        if fifo:
            sa["fifo_frames"] = fifo
        # The module's stream args for the fault keys (hilrig::stream_args(): seed and
        # window_frames get a fault_ prefix); unset keys keep the core's defaults.
        for k, v in case.faults.to_json().items():
            sa[f"fault_{k}" if k in ("seed", "window_frames") else k] = v
        sa.update(case.stream_args)
        return {k: str(v) for k, v in sa.items()}

    def configure(self, case: Case) -> None:
        self._case = case
        if case.host == "gnuradio":
            return self._configure_flowgraph(case)
        # The simulator behind driver=hilrig sends the counter pattern: check it by default.
        if self._native is None:
            raise DeviceError(f"SoapySDR device {self._args()!r} is not open")
        try:
            self.configured = self._native.configure(
                radio_config(case, self.args, self.stream_args(case), self._simulated()))
        except (RuntimeError, ValueError) as exc:
            raise DeviceError(f"SoapySDR device {self._args()!r} refused the configuration: {exc}") from exc
        rate_checked(case, self.configured, f"SoapySDR device {self._args()!r}")

    def _configure_flowgraph(self, case: Case) -> None:
        """host: gnuradio: GNU Radio's soapy.source opens the device with the same device
        and stream args, in front of pattern_check (hostlib/drivers/flowgraph.py)."""
        from .flowgraph import FlowgraphRadio, formats_for, source_spec_soapy

        chain, source_format, check_format = formats_for(case)
        # The flowgraph's source opens the device itself: the native one lets it go.
        self.radio = self._native = None
        spec = source_spec_soapy(case, self._args(), self.stream_args(case), source_format, self.args.frequency_hz)
        radio = FlowgraphRadio(spec, case, chain, check_format)
        self.radio = radio
        self.configured = radio.configured()
        rate_checked(case, self.configured, f"SoapySDR device {self._args()!r} (GNU Radio soapy source)")

    def device_stats(self, stats: RadioStats) -> DeviceStats:
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
            counters: DeviceStats = json.loads(sim)
        except ValueError:
            raise DeviceError(f"SoapySDR device {self._args()!r} reported unreadable sim_stats: "
                              f"{sim[:200]!r}") from None
        if "unanswered_ms" in counters:
            # alive but not answering (stopped): the last counters stand, the silence bound judges
            return self._last_sim_stats
        self._last_sim_stats = counters
        return self._last_sim_stats

    def _simulated(self) -> bool:
        return self.args.get("driver") == "hilrig"
