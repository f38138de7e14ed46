"""Network namespaces for an emulated link: named with a hilrig prefix and the owning
process's pid, so that the janitor can remove what a killed run (`kill -9`) left behind
once that pid is gone. The device side (the simulator) runs in one namespace through
`ip netns exec`; the host side enters the other one only while it creates its sockets
(`entered`): a socket stays in the namespace it was made in.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

from .._exceptions import InfrastructureError

__all__ = [
    "NETNS_DIR",
    "PREFIX",
    "add_netns",
    "delete_netns",
    "entered",
    "ip",
    "list_netns",
    "netns_pids",
    "owner_pid",
    "pid_alive",
    "sweep_stale",
    "tun_name",
    "unavailable",
]

NETNS_DIR = Path("/run/netns")
PREFIX = "hilrig"
CLONE_NEWNET = 0x40000000
_NAME = re.compile(rf"^{PREFIX}-(\d+)-\d+-[a-z]+$")
_TUN = re.compile(r"^hl(\d+)\.\d+[a-z]$")
IP_TIMEOUT_S = 10.0


def tun_name(pid: int, n: int, side: str) -> str:
    """A TUN device name (15 characters at most): hl<pid>.<n><side initial>."""
    name = f"hl{pid}.{n}{side[0]}"
    if len(name) > 15:
        raise InfrastructureError(f"TUN device name {name} is longer than the kernel's 15 characters")
    return name


def unavailable() -> str | None:
    """Why this host cannot build an emulated link (the case SKIPs with it), or None."""
    if os.geteuid() != 0:
        return "an emulated link needs root (network namespaces and TUN devices); run as root"
    if not Path("/dev/net/tun").exists():
        return "an emulated link needs TUN devices and this host has no /dev/net/tun"
    if shutil.which("ip") is None:
        return "an emulated link needs iproute2's `ip` (apt install iproute2)"
    return None


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs `ip ARGS`; InfrastructureError with its message when it fails and check is set."""
    try:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=IP_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfrastructureError(f"`ip {' '.join(args)}` failed: {exc}") from exc
    if check and done.returncode != 0:
        raise InfrastructureError(f"`ip {' '.join(args)}` failed: {done.stderr.strip() or done.returncode}")
    return done


def list_netns() -> list[str]:
    """Names of the named network namespaces (/run/netns)."""
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir())
    except OSError:
        return []


def add_netns(name: str) -> None:
    """Creates namespace `name` with its loopback up and IPv6 off (so that the link
    carries only what the case sends: no router solicitations, no MLD reports)."""
    ip("netns", "add", name)
    ip("-n", name, "link", "set", "lo", "up")
    ip("netns", "exec", name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
       "net.ipv6.conf.default.disable_ipv6=1", check=False)


def netns_pids(name: str) -> list[int]:
    done = ip("netns", "pids", name, check=False)
    return [int(p) for p in done.stdout.split() if p.isdigit()]


def delete_netns(name: str) -> None:
    """Kills what still runs in `name` (SIGKILL), then removes it; quiet when it is gone."""
    if name not in list_netns():
        return
    for pid in netns_pids(name):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    ip("netns", "delete", name, check=False)


def owner_pid(name: str) -> int | None:
    """The pid in a hilrig namespace's or TUN device's name, None for other names."""
    m = _NAME.match(name) or _TUN.match(name)
    return int(m.group(1)) if m else None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purpose: it owns nothing any more.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2] != "Z"
    except (OSError, ValueError, IndexError):
        return False


def sweep_stale() -> list[str]:
    """The janitor: removes the hilrig namespaces and TUN devices (in this namespace)
    whose owning pid is dead, and the processes still running in those namespaces.
    Returns what it removed. Never touches a live owner's link."""
    removed: list[str] = []
    for name in list_netns():
        pid = owner_pid(name)
        if pid is not None and not pid_alive(pid):
            delete_netns(name)
            removed.append(f"netns {name}")
    done = ip("-o", "link", "show", check=False)
    for line in done.stdout.splitlines():
        parts = line.split(":")
        if len(parts) < 2:
            continue
        dev = parts[1].strip().split("@")[0]
        pid = owner_pid(dev)
        if pid is not None and not pid_alive(pid):
            ip("link", "delete", dev, check=False)
            removed.append(f"link {dev}")
    return removed


_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int, what: str) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise InfrastructureError(f"cannot enter network namespace {what}: {os.strerror(err)}")


@contextlib.contextmanager
def entered(name: str) -> Iterator[None]:
    """The calling thread in network namespace `name` for the block: sockets made inside
    it (the host streams' receivers) stay there. Back in the thread's own namespace on
    every exit path."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            target = os.open(NETNS_DIR / name, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise InfrastructureError(f"network namespace {name} is gone ({exc})") from exc
        try:
            _setns(target, name)
        finally:
            os.close(target)
        try:
            yield
        finally:
            _setns(own, "of this process (returning)")
    finally:
        os.close(own)
