"""The host side of a case as a GNU Radio flowgraph (`host: gnuradio`, docs/gnuradio.md).

    source (chosen by the device) -> [the lab's chain, `flowgraph:`] -> pattern_check

The source is the device's: gr-hilrig's `rig_source` for the simulator (driver sim),
GNU Radio's `soapy.source` for a SoapySDR device (driver soapy, the simulator too
through the module driver=hilrig), `uhd.usrp_source` for a USRP (driver uhd).
`source_spec_*` say which block with which arguments (data: the tests read them);
`make_source` makes it. pattern_check's counts are the case's pattern_errors and
dropped_samples: the flowgraph's check is what the verdict is about.

Two faces, so that each driver keeps its own control flow:
- `FlowgraphRx` has the native RxStream's face (endpoint, start, stop, stats): the sim
  driver uses it in place of RxStream; frame counters are rig_source's (the core's
  RxChecker, the same keys as RxStream's).
- `FlowgraphRadio` has the native radio's face (start, stop, stats with rx/tx/sensors):
  the soapy and uhd drivers use it in place of SoapyRadio/UhdRadio. Frame counters are
  the device's own where it reports them (the hilrig module's `rx_stats` sensor: the
  core's RxChecker in the module), else the check's arrival counters (buffers, first
  and last sample times), and `sim_stats` is the simulator's.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Protocol

from .._exceptions import ConfigError, DeviceError, InfrastructureError
from ..counters import RxCounters
from ..dsl.case import Case
from ._native_facade import Endpoint, RadioStats
from .lab_chain import LabChain, load_chain

BYTES_PER_ITEM = {"sc16": 4, "sc8": 2, "fc32": 8}
FLOWGRAPH_DRAIN_S = 5.0   # the longest a flowgraph whose source saw EOB may take to drain


class RigSource(Protocol):
    """gr-hilrig's rig_source: the core's receiver as a GNU Radio block."""

    def endpoint(self) -> Endpoint: ...
    def stats(self) -> RxCounters: ...


class SensorSource(Protocol):
    """A device source that reports sensors (gr-soapy's source)."""

    def list_sensors(self) -> list[str]: ...
    def read_sensor(self, key: str) -> str: ...


Param = str | int | float | bool | list[str] | list[int] | dict[str, object]


def _gr() -> ModuleType:
    try:
        from gnuradio import gr, hilrig  # noqa: F401  hilrig: pattern_check is needed in every flowgraph
    except ImportError as exc:
        raise InfrastructureError(
            f"host: gnuradio needs GNU Radio and gr-hilrig (make build installs gr_blocks/): {exc}") from None
    return gr


@dataclass(frozen=True)
class SourceSpec:
    """Which block receives the device's stream: its GRC id, make() arguments by name,
    and the set_* calls made before the flowgraph starts (rates, clock, tuning)."""

    block: str                      # hilrig_rig_source | soapy_source | uhd_usrp_source
    cpu_format: str                 # sc16 | sc8 | fc32: the items it outputs
    channels: int
    params: dict[str, Param]
    settings: dict[str, float] = field(default_factory=dict)
    rate_sps: float = 0.0           # the rate asked (rig_source takes it as given)


def source_spec_rig(cfg: Mapping[str, object], cpu_format: str) -> SourceSpec:
    """rig_source for the stream config `cfg` (hostlib.transports.stream_config): its
    socket buffer and ring are the config's (resolved by rate; rig_source's own
    resolution of them changes nothing)."""
    t = cfg["transport"]
    if not isinstance(t, dict):
        raise ConfigError(f"stream config has no transport section: {dict(cfg)}")
    # udp: host:port to bind; shm: "" (the ring is created here, the simulator opens it)
    address = f"{t.get('host') or '127.0.0.1'}:{_int(t.get('port'))}" if t["kind"] in ("udp", "tcp") else ""
    rate = cfg["rate_sps"]
    rate_sps = float(rate) if isinstance(rate, (int, float)) else 0.0
    return SourceSpec("hilrig_rig_source", cpu_format, _int(cfg["channels"]), {
        "transport": str(t["kind"]), "address": address, "frame_bytes": _int(cfg["frame_bytes"]),
        "ring_slots": _int(t.get("slots")), "socket_buffer_bytes": _int(t.get("socket_buffer_bytes")),
        "stop_on_eob": True, "rate_sps": rate_sps}, rate_sps=rate_sps)


def _int(value: object) -> int:
    """A config number (0 when unset)."""
    return int(value) if isinstance(value, (int, float)) else 0


def source_spec_soapy(case: Case, device_args: str, stream_args: dict[str, str], cpu_format: str,
                      frequency_hz: float | None = None) -> SourceSpec:
    """GNU Radio's soapy.source (gr-soapy 3.10): the device args and stream args the
    native soapy driver would use; type sc16/sc8/fc32 = SoapySDR CS16/CS8/CF32. The
    master clock is a device arg (master_clock_rate=, SoapySDR's convention: the hilrig
    module and SoapyUHD read it): gr-soapy's set_master_clock_rate refuses any rate
    outside the ranges a device lists, and the module lists none."""
    settings: dict[str, float] = {"sample_rate": float(case.rate_sps)}
    if frequency_hz is not None:
        settings["frequency"] = float(frequency_hz)
    return SourceSpec("soapy_source", cpu_format, int(case.channels), {
        "device": device_args, "type": cpu_format, "nchan": int(case.channels),
        "dev_args": f"master_clock_rate={float(case.master_clock_hz)!r}",
        "stream_args": ",".join(f"{k}={v}" for k, v in stream_args.items()),
        "tune_args": [""], "other_settings": [""]}, settings)


def source_spec_uhd(case: Case, device_args: str, cpu_format: str, frequency_hz: float | None = None) -> SourceSpec:
    """gr-uhd's usrp_source: the device args the native uhd driver would use (rig args,
    the case's usb frame args and transport_args), stream args cpu/otw format and channels."""
    settings: dict[str, float] = {"clock_rate": float(case.master_clock_hz), "samp_rate": float(case.rate_sps)}
    if frequency_hz is not None:
        settings["center_freq"] = float(frequency_hz)
    args = ",".join(f"{k}={v}" for k, v in case.stream_args.items())
    return SourceSpec("uhd_usrp_source", cpu_format, int(case.channels), {
        "device_addr": device_args,
        "stream_args": {"cpu_format": cpu_format, "otw_format": case.sample_format,
                        "channels": list(range(int(case.channels))), "args": args}}, settings)


def make_source(spec: SourceSpec):
    """The block of `spec`, made and set up (rates, clock, tuning)."""
    p, s = spec.params, spec.settings
    if spec.block == "hilrig_rig_source":
        from gnuradio import hilrig

        return hilrig.rig_source(spec.cpu_format, spec.channels, p["transport"], p["address"], p["frame_bytes"],
                                 p["ring_slots"], p["socket_buffer_bytes"], p["stop_on_eob"], p["rate_sps"])
    if spec.block == "soapy_source":
        from gnuradio import soapy

        src = soapy.source(p["device"], p["type"], p["nchan"], p["dev_args"], p["stream_args"],
                           p["tune_args"], p["other_settings"])
        for ch in range(spec.channels):
            src.set_sample_rate(ch, s["sample_rate"])
            if "frequency" in s:
                src.set_frequency(ch, s["frequency"])
        return src
    if spec.block == "uhd_usrp_source":
        from gnuradio import uhd

        stream_args = p["stream_args"]
        if not isinstance(stream_args, dict):
            raise ValueError(f"usrp_source stream_args {stream_args!r} is not a mapping")
        src = uhd.usrp_source(p["device_addr"], uhd.stream_args(**stream_args))
        src.set_clock_rate(s["clock_rate"])
        src.set_samp_rate(s["samp_rate"])
        for ch in range(spec.channels):
            if "center_freq" in s:
                src.set_center_freq(s["center_freq"], ch)
        return src
    raise ValueError(f"no GNU Radio source block {spec.block!r}")


def coerced_rate_sps(spec: SourceSpec, source: object) -> float:
    """The rate the device took (it may coerce what was asked)."""
    if spec.block == "soapy_source":
        return float(getattr(source, "get_sample_rate")(0))  # noqa: B009  an untyped GNU Radio block
    if spec.block == "uhd_usrp_source":
        return float(getattr(source, "get_samp_rate")())  # noqa: B009
    return spec.rate_sps


def formats_for(case: Case) -> tuple[LabChain | None, str, str]:
    """The lab's chain (None without `flowgraph:`) and the cpu formats of the source's
    output and of pattern_check's input: the chain's pads decide, else the case's format."""
    spec = case.flowgraph
    if not spec:
        return None, case.sample_format, case.sample_format
    chain = load_chain(spec, int(case.channels), case.sample_format)
    return chain, chain.in_format, chain.out_format


class Flowgraph:
    """source -> [chain] -> pattern_check, one connection per channel."""

    def __init__(self, source: object, channels: int, check_format: str, chain: LabChain | None = None):
        gr = _gr()
        from gnuradio import hilrig

        self.source, self.chain = source, chain
        self.check = hilrig.pattern_check(check_format, channels, stats_interval_s=0)
        self.tb = gr.top_block("hilrig case host")
        for ch in range(channels):
            if chain is None:
                self.tb.connect((source, ch), (self.check, ch))
            else:
                self.tb.connect((source, ch), (chain.block, ch))
                self.tb.connect((chain.block, ch), (self.check, ch))
        self._cpu0 = self._cpu_ns = 0
        self.running = False

    def start(self) -> None:
        self._cpu0 = time.process_time_ns()
        self.tb.start()
        self.running = True

    def stop(self) -> None:
        if self.running:
            self.tb.stop()
            self.tb.wait()
            self._cpu_ns = time.process_time_ns() - self._cpu0
            self.running = False

    def finish(self, timeout_s: float) -> None:
        """Lets the flowgraph end on its own (its source returned WORK_DONE at the stream's
        EOB): GNU Radio then runs every block until its input is used up, so all the source
        produced reaches the check, however late a busy machine schedules the blocks (a
        stop() instead drops what is still in their buffers). Stopped after timeout_s."""
        if not self.running:
            return
        guard = threading.Timer(timeout_s, self.tb.stop)
        guard.start()
        try:
            self.tb.wait()
        finally:
            guard.cancel()
        self._cpu_ns = time.process_time_ns() - self._cpu0
        self.running = False

    def counts(self) -> RxCounters:
        """The check's counts under the case's names, and the receive CPU."""
        c = self.check
        return {
            # GNU Radio runs a thread per block; the process's CPU time stands for the
            # receive thread's (the Python side sleeps while the flowgraph runs).
            "thread_cpu_ns": (time.process_time_ns() - self._cpu0) if self.running else self._cpu_ns,
            "pattern_errors": c.pattern_errors(), "dropped_samples": c.missing_samples(),
            "flowgraph_samples": c.samples(), "flowgraph_gaps": c.gaps()}

    def arrivals(self, bytes_per_tick: int) -> RxCounters:
        """What reached the check and when, for a source that counts no frames: its
        buffers (work calls) stand for frames, the check's clock for arrival times."""
        c = self.check
        return {"frames_received": c.buffers(), "payload_bytes_received": c.samples(0) * bytes_per_tick,
                "first_frame_ns": c.first_sample_ns(), "last_frame_ns": c.last_sample_ns(),
                "missing_frames": None, "overruns": None, "seq_errors": None}


class FlowgraphRx:
    """rig_source -> [chain] -> pattern_check with RxStream's face, for the sim driver."""

    def __init__(self, cfg: Mapping[str, object], case: Case | None = None):
        fmt = str(cfg["sample_format"])
        chain, src_fmt, check_fmt = formats_for(case) if case is not None else (None, fmt, fmt)
        self.spec = source_spec_rig(cfg, src_fmt)
        self.source: RigSource = make_source(self.spec)
        self.graph = Flowgraph(self.source, self.spec.channels, check_fmt, chain)

    def endpoint(self) -> Endpoint:
        return dict(self.source.endpoint())

    def start(self) -> None:
        self.graph.start()

    def stop(self) -> None:
        if self.source.stats().get("eob_received"):
            self.graph.finish(FLOWGRAPH_DRAIN_S)
        else:
            self.graph.stop()

    def stats(self) -> RxCounters:
        s: RxCounters = {**self.source.stats()}
        s["rig_source_pattern_errors"] = s.get("pattern_errors") or 0
        s.update(self.graph.counts())
        s["warnings"] = []
        return s


class FlowgraphRadio:
    """soapy.source / usrp_source -> [chain] -> pattern_check with the native radio's face
    (start, stop, stats -> {rx, tx, sensors, device_error}), for the soapy and uhd drivers."""

    def __init__(self, spec: SourceSpec, case: Case, chain: LabChain | None, check_format: str):
        _gr()
        self.spec, self.case = spec, case
        try:
            source = make_source(spec)
        except ValueError as exc:   # std::invalid_argument: the device refused an argument
            raise ConfigError(f"{case.location}: {spec.block} refused the case's stream: {exc}") from None
        except RuntimeError as exc:
            raise DeviceError(f"{spec.block} could not open the device: {exc}") from None
        self.source: SensorSource = source
        self.graph = Flowgraph(source, spec.channels, check_format, chain)
        self.rate_sps = coerced_rate_sps(spec, source)
        self._sensors = self._list_sensors()
        self._final: RadioStats | None = None

    def configured(self) -> dict[str, float]:
        return {"rate_sps": self.rate_sps, "rate_sps_requested": float(self.case.rate_sps)}

    def _list_sensors(self) -> list[str]:
        try:
            return list(self.source.list_sensors())
        except (AttributeError, RuntimeError, ValueError):
            return []

    def _read(self, key: str) -> str | None:
        if key not in self._sensors:
            return None
        try:
            return str(self.source.read_sensor(key))
        except (RuntimeError, ValueError) as exc:
            raise DeviceError(f"{self.spec.block}: reading sensor {key} failed: {exc}") from None

    def start(self) -> None:
        self.graph.start()

    def _live(self) -> RadioStats:
        tick_bytes = BYTES_PER_ITEM[self.case.sample_format] * int(self.case.channels)
        rx = self.graph.arrivals(tick_bytes)
        # The device's own receive accounting where it has one (the hilrig module's
        # rx_stats: the core's RxChecker over the frames it received): its frame
        # counters replace the check's arrival counters.
        device_rx = self._read("rx_stats")
        if device_rx:
            parsed = json.loads(device_rx)
            if parsed:
                rx = {**parsed, "device_pattern_errors": parsed.get("pattern_errors")}
        rx = {**rx, **self.graph.counts(), "warnings": []}
        sensors = {k: v for k in ("sim_stats",) if (v := self._read(k)) is not None}
        return {"rx": rx, "tx": {}, "sensors": sensors, "device_error": None}

    def stats(self) -> RadioStats:
        if self._final is not None:
            return self._final
        return self._live()

    def stop(self) -> None:
        if not self.graph.running:
            return
        # gr-soapy closes its stream in stop(): the device's receive counters are read
        # first; the check's once the flowgraph has drained, and the simulator's once
        # it has stopped (what it sent in all).
        rx = self._live()["rx"]
        self.graph.stop()
        rx.update(self.graph.counts())
        sensors = {k: v for k in ("sim_stats",) if (v := self._read(k)) is not None}
        self._final = {"rx": rx, "tx": {}, "sensors": sensors, "device_error": None}
