"""The `sim` driver: the loopback simulator `hilrig-sim` as a device.

The simulator is a separate process, like a real radio: it paces in real time,
overflows when the host is slow and can inject faults. This driver starts it,
talks to it over JSON lines on its stdin/stdout (docs/architecture.md), and
always reaps it. The host side of the stream (receiver, sender, pattern check)
is the native core, the same code every other driver uses.
"""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from typing import TypedDict, cast

from .._exceptions import ConfigError, DeviceError, InfrastructureError
from .._installed import find_executable
from .._process import ControlledProcess
from ..counters import DeviceStats, Snapshot
from ..dsl.case import Case
from ..link.netns import entered
from ..link.session import LinkEnds
from ..rig.args import SimArgs
from ..rig.inventory import DeviceEntry
from ..rig.probe import Found, Probe
from ..transports import agreed_config, agreed_endpoint, sim_config, stream_config
from ..transports.config import Json, SimJson, StreamJson, UsbLink, UsbTransport
from ..transports.usb import MAX_PACKET_BYTES
from ._native_facade import Endpoint, HostRx, NativeRx, NativeTx, NativeUsb, RfCapture, usb_geometry_problems
from .base import Driver, Watchdog, register_driver

CONTROL_TIMEOUT_S = 10.0


class SimAnswer(TypedDict, total=False):
    """One answer on the simulator's control channel (hilrig-sim, sim/main.cpp)."""

    ok: bool
    error: str
    version: str             # hello
    firmware: str
    image: str
    fpga_version: str
    rtl_git_hash: str
    config: dict[str, Json]         # configure: the config as the simulator parsed it (to_json)
    fault_plan: dict[str, object]
    endpoint: Endpoint
    stats: DeviceStats       # stats, stop


def find_sim_binary() -> str:
    """$HILRIG_SIM_BIN, then the package's own hostlib/bin/hilrig-sim (installed by the
    wheel; a link to build/bin/hilrig-sim in the dev tree), then PATH."""
    path, why = find_executable("hilrig-sim", "HILRIG_SIM_BIN")
    if path is None:
        raise InfrastructureError(f"simulator binary {why}; build it with `make build` or install the package "
                                  "with `pip install .`")
    return path


class SimProcess(ControlledProcess):
    """One running hilrig-sim and its control channel; its failures are the device's."""

    def __init__(self, binary: str | None = None, extra_args: list[str] | None = None,
                 prefix: list[str] | None = None):
        """prefix: a command the simulator runs under (`ip netns exec <ns>`: the device
        side of an emulated link); it must exec the simulator, so the pid stays its own."""
        self.binary = binary or find_sim_binary()
        super().__init__([*(prefix or []), self.binary, *(extra_args or [])], "simulator hilrig-sim", DeviceError,
                         InfrastructureError)

    def request(self, cmd: str, timeout_s: float = CONTROL_TIMEOUT_S,
                watchdog: Callable[[], None] | None = None, fields: Mapping[str, object] | None = None) -> SimAnswer:
        return cast(SimAnswer, self._request(cmd, timeout_s, watchdog, fields))


@register_driver
class SimDriver(Driver):
    """Drives hilrig-sim through the native host streams."""

    name = "sim"

    def __init__(self, device: DeviceEntry):
        super().__init__(device)
        self.args = self.args_as(SimArgs)
        self.sim: SimProcess | None = None
        self.rx: HostRx | None = None   # the native RxStream, or a flowgraph with its face (host: gnuradio)
        self.tx: NativeTx | None = None
        self.usb: NativeUsb | None = None  # transport usb: the host's UsbEngine over the simulator's link (docs/usb.md)
        self._direction = "rx"
        self.effective_config: dict[str, Json] = {}
        self.fault_plan: dict[str, object] = {}
        self.case: Case | None = None
        self._hello: SimAnswer = {}
        self._device_stats: DeviceStats = {}   # the simulator's last answered stats
        self.link: LinkEnds | None = None       # across an emulated link: where each side runs

    @classmethod
    def probe(cls) -> Probe:
        out = Probe()
        try:
            out.found.append(Found("sim", {"binary": find_sim_binary()}))
        except InfrastructureError as exc:
            out.problems.append(str(exc))
        return out

    @classmethod
    def attached(cls, entry: DeviceEntry, found: Probe) -> list[Found]:
        """An entry that names its own binary (args.binary) is attached while that file is
        an executable; else any simulator the probe found is it."""
        args = entry.args
        if isinstance(args, SimArgs) and args.binary:
            return [Found("sim", {"binary": args.binary})] if os.access(args.binary, os.X_OK) else []
        return super().attached(entry, found)

    @property
    def _running(self) -> SimProcess:
        """The simulator process open() started; DeviceError before open or after close."""
        if self.sim is None:
            raise DeviceError("simulator hilrig-sim is not running (the sim driver is not open)")
        return self.sim

    def describe(self) -> str:
        return self.sim.describe() if self.sim is not None else "simulator hilrig-sim"

    def place_on_link(self, ends: LinkEnds) -> None:
        """The simulator runs in the device's namespace (`ip netns exec`), the host
        streams' sockets are made in the host's (hostlib.link.netns.entered)."""
        self.link = ends

    def _host_side(self) -> contextlib.AbstractContextManager[None]:
        """Where the host streams make their sockets: the link's host namespace, or here."""
        return entered(self.link.host_netns) if self.link is not None else contextlib.nullcontext()

    def open(self) -> None:
        firmware = self.device.firmware   # rtl: the RTL of firmware/rtl as the device core
        prefix = ["ip", "netns", "exec", self.link.device_netns] if self.link is not None else None
        self.sim = SimProcess(self.args.binary, ["--firmware", firmware] if firmware else None, prefix)
        self._hello = self.sim.request("hello")

    def versions(self) -> dict[str, str]:
        hello = self._hello
        out = {"hilrig-sim": str(hello.get("version", "?"))}
        if hello.get("firmware") == "rtl":
            out[str(hello.get("image"))] = f"{hello.get('fpga_version')} (rtl {hello.get('rtl_git_hash')})"
        return out

    def configure(self, case: Case, rx_dest: Endpoint | None = None) -> None:
        """rx_dest: the endpoint of a host receiver that is not this driver's own
        RxStream (a GNU Radio rig_source, gr_blocks/); the simulator sends RX there."""
        self.case = case
        sim_cfg = sim_config(case, self.device.fifo_frames)
        if self.link is not None:
            # The simulator listens (TX) at its own end of the link; RX goes to rx_dest.
            sim_cfg["transport"] = {**sim_cfg["transport"], "host": self.link.device_addr}
        cfg = stream_config(case)
        kind, direction = case.transport.kind, case.direction
        self._direction = direction
        if kind == "usb":
            return self._configure_usb(case, sim_cfg, cfg)
        # rx+tx: the host's receiver and sender are the ones of rx and of tx, beside each other.
        def leg_cfg(leg: str) -> dict[str, object]:
            return {**cfg, "direction": leg} if direction == "rx+tx" else dict(cfg)

        if direction in ("rx", "loopback", "rx+tx"):
            # The host receiver exists first, so the simulator knows where to send.
            if rx_dest is None:
                if case.host == "gnuradio":
                    from .flowgraph import FlowgraphRx  # the host side as a flowgraph

                    self.rx = FlowgraphRx(leg_cfg("rx"), case)
                else:
                    with self._host_side():
                        self.rx = NativeRx(leg_cfg("rx"), case.location)
                rx_dest = self.rx.endpoint()
                agreed_endpoint(case.stream, rx_dest, "the host receiver")
            sim_cfg["rx_dest"] = rx_dest
        answer = self._running.request("configure", fields=sim_cfg)
        # What the simulator runs with (to_json of its parsed config) and where its
        # faults sit: the agreement test and the evidence read these.
        self.effective_config = agreed_config(sim_cfg, answer.get("config", {}))
        self.fault_plan = answer.get("fault_plan", {})
        if direction in ("tx", "loopback", "rx+tx"):
            dest = answer.get("endpoint")
            if not dest:
                raise DeviceError(f"simulator gave no TX endpoint for a {kind} {direction} stream")
            agreed_endpoint(case.stream, dest, "the simulator")
            with self._host_side():
                self.tx = NativeTx({**leg_cfg("tx"), "dest": dest}, case.location)

    def _configure_usb(self, case: Case, sim_cfg: SimJson, cfg: StreamJson) -> None:
        """The simulator makes the USB link's shared channel; the host's UsbEngine
        (N transfers x S bytes in flight) submits into it, the simulator's bus model
        completes them."""
        link = case.transport
        if not isinstance(link, UsbTransport):
            raise ConfigError(f"{case.location}: transport {link.kind} is not the simulator's usb link")
        mps = MAX_PACKET_BYTES["high" if link.link is UsbLink.USB2 else "super"]
        directions = 1 if case.direction in ("rx", "tx") else 2
        problems = usb_geometry_problems(
            {"kind": "usb", "transfer_bytes": link.transfer_bytes, "transfers": link.transfers},
            int(case.frame_bytes), mps, directions, 1 << 62)   # no usbfs here: the link is the simulator's
        if problems:
            raise ConfigError(f"{case.location}: transport on the simulator's {link.link} link: " + "; ".join(problems))
        answer = self._running.request("configure", fields=sim_cfg)
        self.effective_config = agreed_config(sim_cfg, answer.get("config", {}))
        self.fault_plan = answer.get("fault_plan", {})
        endpoint = answer.get("endpoint") or {}
        if endpoint.get("kind") != "usb":
            raise DeviceError(f"simulator gave no usb link endpoint (got {endpoint})")
        self.usb = NativeUsb({**cfg, "transport": {**cfg["transport"], "sim": endpoint}}, case.location,
                             InfrastructureError)

    def start(self) -> int:
        if self.usb is not None:
            # RX: the host's IN transfers are queued before the device starts producing.
            in_first = self._direction in ("rx", "rx+tx")
            if in_first:
                self.usb.start()
            started_ns = time.monotonic_ns()
            self._running.request("start")
            if not in_first:
                self.usb.start()
            return started_ns
        if self.rx is not None:
            self.rx.start()
        started_ns = time.monotonic_ns()
        self._running.request("start")
        if self.tx is not None:
            self.tx.start()
        return started_ns

    def _snapshot(self, device_stats: DeviceStats) -> Snapshot:
        self._device_stats = device_stats
        if self.usb is not None:
            stats = self.usb.stats()
            if stats.get("error"):
                raise DeviceError(str(stats.get("error")))
            rx = self._direction in ("rx", "loopback", "rx+tx")
            return Snapshot(host_rx=stats.get("rx", {}) if rx else {},
                            host_tx=stats.get("tx", {}) if self._direction != "rx" else {},
                            device={**device_stats, **stats.get("usb", {})})
        return Snapshot(
            host_rx=self.rx.stats() if self.rx is not None else {},
            host_tx=self.tx.stats() if self.tx is not None else {},
            device=device_stats,
        )

    def host_snapshot(self) -> Snapshot:
        """The host's counters with the simulator's last answered ones: a stopped
        simulator answers nothing, the host's own counters still tell."""
        return self._snapshot(self._device_stats)

    def poll(self, watchdog: Watchdog | None = None) -> Snapshot:
        if self.usb is not None:
            error = self.usb.error()
            if error:  # the engine saw the device go (or a transfer fail) first
                raise DeviceError(error)
        answer = self._running.request("stats", watchdog=watchdog)
        return self._snapshot(answer.get("stats", {}))

    def _rx_eob(self) -> bool:
        if self.usb is not None:
            return bool(self.usb.stats().get("rx", {}).get("eob_received"))
        return self.rx is not None and bool(self.rx.stats().get("eob_received"))

    def _await_eob(self) -> None:
        """Let the end-of-burst frame arrive, briefly; a lost EOB is not worth a hang."""
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline and not self._rx_eob():
            time.sleep(0.005)

    def stop(self) -> Snapshot:
        if self.usb is not None:
            if self._direction == "rx":
                # The device ends its stream (the last frame flagged EOB, in a short transfer),
                # then the host cancels its IN transfers.
                final = self._running.request("stop")
                self._await_eob()
                self.usb.stop()
            else:
                # The host's last OUT transfer carries EOB; the device takes it, then stops
                # (rx+tx, loopback: the host's IN transfers end with it, after the window).
                self.usb.stop()
                final = self._running.request("stop")
            return self._snapshot(final.get("stats", {}))
        if self.tx is not None:
            self.tx.stop()
        final = self._running.request("stop")
        if self.rx is not None:
            self._await_eob()
            self.rx.stop()
        return self._snapshot(final.get("stats", {}))

    def arm_capture(self) -> None:
        if not isinstance(self.rx, NativeRx):   # validation keeps RF cases to the native receiver
            raise ConfigError(f"{self.case.location if self.case else 'sim'}: an RF capture needs the native receiver")
        self.rx.arm_capture()

    def capture(self) -> RfCapture | None:
        return self.rx.capture() if isinstance(self.rx, NativeRx) else None

    def close(self) -> None:
        streams: list[HostRx | NativeTx | NativeUsb | None] = [self.tx, self.rx, self.usb]
        for stream in streams:
            if stream is not None:
                try:
                    stream.stop()
                except Exception:  # noqa: BLE001  close never raises: cleanup must go on
                    pass
        self.tx = self.rx = self.usb = None
        if self.sim is not None:
            self.sim.close()
            self.sim = None
