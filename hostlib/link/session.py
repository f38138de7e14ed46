"""One emulated link for one case: two network namespaces (the device's and the host's),
joined by the realisation this host has, torn down on every exit path.

The realisation is chosen automatically: tc netem + tbf on a veth pair where the kernel
has netem and the spec fits it (hostlib.link.netem), else hilrig-link over TUN devices
(hostlib.link.emulator). $HILRIG_LINK=emulator|netem forces one. Both namespaces carry
the same addresses (each pair is its own network), so links of parallel runs never meet.
Names carry this process's pid: the janitor (netns.sweep_stale, run at every open)
removes what a killed run left behind.
"""
from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import subprocess
from dataclasses import dataclass
from types import TracebackType

from .._exceptions import InfrastructureError, LinkError, LinkUnavailable
from .emulator import LinkEmulator, LinkStats
from .netem import TC_TIMEOUT_S, netem_unsupported, qdisc_stats, setup_commands, spec_unfit
from .netns import add_netns, delete_netns, ip, sweep_stale, tun_name, unavailable
from .probe import DelayProbe
from .spec import LinkSpec

__all__ = ["DEVICE_ADDR", "HOST_ADDR", "LinkEnds", "LinkSession", "choose_realisation"]

DEVICE_ADDR = "10.201.0.1"
HOST_ADDR = "10.201.0.2"
PREFIX_LEN = 30
TUN_TXQUEUELEN = 10000   # the kernel's queue in front of the emulator's reader: its own queue is the link's
_ids = itertools.count()


@dataclass(frozen=True)
class LinkEnds:
    """Where each side of the link is: the device side (the simulator) in device_netns
    at device_addr, the host side (its receivers) in host_netns at host_addr."""
    device_netns: str
    host_netns: str
    device_addr: str = DEVICE_ADDR
    host_addr: str = HOST_ADDR


def choose_realisation(spec: LinkSpec) -> tuple[str, str]:
    """("netem" | "hilrig-link", why): $HILRIG_LINK, else netem where the kernel has it and
    the spec fits it, else the emulator."""
    forced = os.environ.get("HILRIG_LINK", "")
    if forced in ("emulator", "hilrig-link"):
        return "hilrig-link", "HILRIG_LINK=emulator"
    if forced == "netem":
        return "netem", "HILRIG_LINK=netem"
    if forced:
        raise InfrastructureError(f"HILRIG_LINK={forced!r}: allowed: emulator, netem (or unset: automatic)")
    missing = netem_unsupported()
    if missing:
        return "hilrig-link", missing
    unfit = spec_unfit(spec)
    if unfit:
        return "hilrig-link", unfit
    return "netem", "the kernel has netem"


class LinkSession:
    """`with LinkSession(spec) as link:` namespaces built, the link running; link.ends says
    where each side goes. LinkUnavailable (a SKIP) when this host cannot build one."""

    def __init__(self, spec: LinkSpec):
        self.spec = spec
        n, pid = next(_ids), os.getpid()
        self.ends = LinkEnds(f"hilrig-{pid}-{n}-dev", f"hilrig-{pid}-{n}-host")
        self.devices = (tun_name(pid, n, "dev"), tun_name(pid, n, "host"))
        self.realisation = ""
        self.why = ""
        self.emulator: LinkEmulator | None = None
        self.effective: dict[str, object] = {}
        self.final: LinkStats | None = None
        self.probes: dict[str, DelayProbe] = {}   # netem: the one-way delay, per direction

    def __enter__(self) -> LinkSession:
        return self.open()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def open(self) -> LinkSession:
        reason = unavailable()
        if reason:
            raise LinkUnavailable(reason)
        sweep_stale()
        self.realisation, self.why = choose_realisation(self.spec)
        try:
            add_netns(self.ends.device_netns)
            add_netns(self.ends.host_netns)
            if self.realisation == "netem":
                self._open_netem()
            else:
                self._open_emulator()
        except BaseException:
            self.close()
            raise
        return self

    def _open_emulator(self) -> None:
        emu = self.emulator = LinkEmulator()
        emu.request("hello")
        e = self.ends
        self.effective = emu.configure(self.spec, (e.device_netns, self.devices[0]), (e.host_netns, self.devices[1]))
        try:
            for ns, dev, addr in ((e.device_netns, self.devices[0], e.device_addr),
                                  (e.host_netns, self.devices[1], e.host_addr)):
                ip("-n", ns, "addr", "add", f"{addr}/{PREFIX_LEN}", "dev", dev)
                ip("-n", ns, "link", "set", dev, "txqueuelen", str(TUN_TXQUEUELEN), "up")
        except InfrastructureError as exc:
            raise LinkError(f"link emulator hilrig-link: setting up its TUN devices: {exc}") from exc
        emu.request("start")

    def _open_netem(self) -> None:
        e = self.ends
        for cmd in setup_commands(self.spec, e.device_netns, self.devices[0], e.device_addr,
                                  e.host_netns, self.devices[1], e.host_addr, PREFIX_LEN):
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=TC_TIMEOUT_S, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise LinkError(f"netem link: `{' '.join(cmd)}` failed: {exc}") from exc
            if done.returncode != 0:
                raise LinkError(f"netem link: `{' '.join(cmd)}` failed: {done.stderr.strip()}")
        self.effective = {"up": dataclasses.asdict(self.spec.up), "down": dataclasses.asdict(self.spec.down)}

    def start_delay_probes(self) -> None:
        """On netem, start measuring each direction's one-way delay with probes (probe.py):
        tc keeps no delay histogram. hilrig-link measures its own: nothing to start."""
        if self.realisation != "netem" or self.probes:
            return
        e = self.ends
        self.probes = {"up": DelayProbe(e.device_netns, e.device_addr, e.host_netns, e.host_addr),
                       "down": DelayProbe(e.host_netns, e.host_addr, e.device_netns, e.device_addr)}
        for probe in self.probes.values():
            probe.start()

    def alive(self) -> bool:
        return self.emulator is None or self.emulator.alive()

    def describe_death(self) -> str:
        """What happened to the emulator, for an ERROR message."""
        if self.emulator is None:
            return "the netem link is gone"
        return f"{self.emulator.describe_exit()}: the emulated link died mid-case"

    def check(self) -> None:
        """LinkError naming hilrig-link when the emulator is gone."""
        if not self.alive():
            raise LinkError(self.describe_death())

    def stats(self) -> LinkStats:
        """What the link did so far: the emulator's report, or on netem the qdiscs' counters
        of each end (netem.direction_stats) and, once started, the probes' delays."""
        if self.emulator is None:
            if self.realisation != "netem":
                return {}
            e = self.ends
            stats = LinkStats(up=qdisc_stats(e.device_netns, self.devices[0]),
                              down=qdisc_stats(e.host_netns, self.devices[1]))
            up_delay = self.probes["up"].histogram() if "up" in self.probes else None
            down_delay = self.probes["down"].histogram() if "down" in self.probes else None
            if up_delay is not None:
                stats["up"]["delay_ns"] = up_delay
            if down_delay is not None:
                stats["down"]["delay_ns"] = down_delay
            return stats
        self.check()
        return self.emulator.stats()

    def close(self) -> None:
        """Stops the emulator (keeping its final report), removes both namespaces and
        whatever still runs in them. Never raises: cleanup must go on."""
        for probe in self.probes.values():
            with contextlib.suppress(Exception):
                probe.stop()
        if self.emulator is not None:
            if self.emulator.alive():
                with contextlib.suppress(Exception):
                    self.final = self.emulator.stop()
            self.emulator.close()
        for ns in (self.ends.device_netns, self.ends.host_netns):
            with contextlib.suppress(Exception):
                delete_netns(ns)
