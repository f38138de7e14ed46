"""The kernel realisation of a link spec: tc netem (delay, jitter, loss, bursts, reorder,
duplicate) with a tbf child (rate, queue) on each end of a veth pair between the two
namespaces, one direction per end's egress (docs/long-link.md). Chosen automatically
where the kernel has netem (`netem_unsupported` is None) and the spec fits netem;
otherwise the link is hilrig-link's.

netem takes one loss model, so a spec with both `loss` and `burst_loss` in a direction
is hilrig-link's. Its randomness is the kernel's: counts are not fixed by the seed. What
the link did is read back from the qdiscs' own counters (`tc -s -j`, `direction_stats`).
"""
from __future__ import annotations

import functools
import itertools
import json
import os
import subprocess
from collections.abc import Sequence
from typing import TypedDict, cast

from .._exceptions import LinkError
from .emulator import DirectionStats
from .netns import add_netns, delete_netns, ip, unavailable
from .spec import LinkDirection, LinkSpec

__all__ = ["TBF_BURST_S", "direction_stats", "netem_args", "netem_unsupported", "qdisc_stats", "setup_commands",
           "spec_unfit", "tbf_args"]

TBF_BURST_S = 0.001          # tbf's bucket: 1 ms of the rate, at least TBF_MIN_BURST_BYTES
TBF_MIN_BURST_BYTES = 1600   # above one 1500-byte packet: tbf cannot send a packet larger than its bucket
TC_TIMEOUT_S = 10.0
# tbf counts a packet's length on the device, the 14-byte Ethernet header of the veth
# included; a link spec's rate is IP bytes (hilrig-link's): the size table takes it off.
ETHERNET_HEADER_BYTES = 14
_probe_ids = itertools.count()


def _pct(p: float) -> str:
    return f"{p * 100:.6g}%"


def _time(s: float) -> str:
    return f"{s * 1e6:.0f}us"


def netem_args(d: LinkDirection) -> list[str]:
    """The netem options of one direction (after `netem`), empty when netem has nothing
    to do (the tbf alone carries the rate)."""
    args: list[str] = []
    if d.delay_s > 0 or d.jitter_s > 0:
        args += ["delay", _time(d.delay_s)] + ([_time(d.jitter_s)] if d.jitter_s > 0 else [])
    if d.burst_p > 0:
        # netem's gemodel: p, r, 1-h (loss in the bad state), 1-k (loss in the good state)
        args += ["loss", "gemodel", _pct(d.burst_p), _pct(d.burst_r), _pct(d.burst_loss_bad), _pct(d.burst_loss_good)]
    elif d.loss > 0:
        args += ["loss", "random", _pct(d.loss)]
    if d.reorder > 0:
        args += ["reorder", _pct(d.reorder)]
    if d.duplicate > 0:
        args += ["duplicate", _pct(d.duplicate)]
    return args


def tbf_args(d: LinkDirection) -> list[str]:
    """tbf's options for the rate and the drop-tail queue, empty when unlimited."""
    if d.rate_bps <= 0:
        return []
    burst = max(TBF_MIN_BURST_BYTES, round(d.rate_bps / 8 * TBF_BURST_S))
    return ["rate", f"{d.rate_bps:.0f}bit", "burst", str(burst), "limit", str(d.queue_bytes)]


def direction_commands(netns: str, dev: str, d: LinkDirection) -> list[list[str]]:
    """tc commands that make dev's egress in netns behave as direction d: netem at the
    root, tbf as its child (netem's own queue holds what is delayed)."""
    cmds: list[list[str]] = []
    net, rate = netem_args(d), tbf_args(d)
    ip_bytes = ["stab", "overhead", str(-ETHERNET_HEADER_BYTES)]
    if net:
        cmds.append(["tc", "-n", netns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "netem",
                     "limit", "1000000", *net])
        if rate:
            cmds.append(["tc", "-n", netns, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", *ip_bytes,
                         "tbf", *rate])
    elif rate:
        cmds.append(["tc", "-n", netns, "qdisc", "add", "dev", dev, "root", "handle", "10:", *ip_bytes, "tbf", *rate])
    return cmds


class TcQdisc(TypedDict, total=False):
    """One qdisc as `tc -s -j qdisc show` prints it (the keys read here)."""
    kind: str
    handle: str
    parent: str
    root: bool
    bytes: int
    packets: int
    drops: int
    backlog: int
    qlen: int


def direction_stats(qdiscs: Sequence[TcQdisc]) -> DirectionStats:
    """One direction's counters, in hilrig-link's terms, from its end's qdiscs as `tc -s -j
    qdisc show` lists them: what left is the root's count; tbf's drops are its drop-tail
    queue's; netem's drops are its losses plus its child's drops (the kernel counts a
    child's drop at the parent too); what entered is what left, was dropped or is still
    queued. netem's duplicates and reorders are not counted by tc, nor a delay histogram:
    those stay absent. An end without a qdisc of the link's (no rate, no impairment) has
    no counters: {}."""
    mine = {q.get("kind"): q for q in qdiscs if q.get("kind") in ("netem", "tbf")}
    root = next((q for q in qdiscs if q.get("root") and q.get("kind") in ("netem", "tbf")), None)
    if root is None:
        return {}
    tbf_drops = int(mine["tbf"].get("drops", 0)) if "tbf" in mine else 0
    netem_drops = int(mine["netem"].get("drops", 0)) - tbf_drops if "netem" in mine else 0
    packets_out, bytes_out = int(root.get("packets", 0)), int(root.get("bytes", 0))
    return DirectionStats(packets_in=packets_out + tbf_drops + netem_drops + int(root.get("qlen", 0)),
                          packets_out=packets_out, bytes_out=bytes_out, dropped_queue=tbf_drops,
                          dropped_loss=netem_drops)


def qdisc_stats(netns: str, dev: str) -> DirectionStats:
    """direction_stats of dev's egress in netns, read with `tc -s -j`; LinkError naming the
    command when tc fails (the namespace or the device is gone)."""
    cmd = ["tc", "-s", "-j", "-n", netns, "qdisc", "show", "dev", dev]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=TC_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LinkError(f"netem link: `{' '.join(cmd)}` failed: {exc}") from exc
    if done.returncode != 0:
        raise LinkError(f"netem link: `{' '.join(cmd)}` failed: {done.stderr.strip()}")
    try:
        return direction_stats(cast(list[TcQdisc], json.loads(done.stdout or "[]")))
    except (ValueError, TypeError, AttributeError) as exc:
        raise LinkError(f"netem link: `{' '.join(cmd)}` printed what is not a qdisc list: {exc}") from exc


def setup_commands(spec: LinkSpec, device_ns: str, device_dev: str, device_addr: str,
                   host_ns: str, host_dev: str, host_addr: str, prefix_len: int) -> list[list[str]]:
    """Every command (after the two namespaces exist) that builds the link as a veth pair:
    up is the device end's egress, down the host end's."""
    cmds = [
        ["ip", "-n", device_ns, "link", "add", device_dev, "type", "veth", "peer", "name", host_dev, "netns", host_ns],
        ["ip", "-n", device_ns, "addr", "add", f"{device_addr}/{prefix_len}", "dev", device_dev],
        ["ip", "-n", host_ns, "addr", "add", f"{host_addr}/{prefix_len}", "dev", host_dev],
        ["ip", "-n", device_ns, "link", "set", device_dev, "up"],
        ["ip", "-n", host_ns, "link", "set", host_dev, "up"],
    ]
    cmds += direction_commands(device_ns, device_dev, spec.up)
    cmds += direction_commands(host_ns, host_dev, spec.down)
    return cmds


def spec_unfit(spec: LinkSpec) -> str | None:
    """Why netem cannot realise this spec as written (the link is hilrig-link's), or None."""
    for side in ("up", "down"):
        d = spec.up if side == "up" else spec.down
        if d.loss > 0 and d.burst_p > 0:
            return f"{side}: netem takes one loss model, the spec gives loss and burst_loss"
    return None


@functools.cache
def netem_unsupported() -> str | None:
    """Why this kernel cannot run netem (checked once per process on a scratch veth pair
    in a scratch namespace), or None when it can."""
    reason = unavailable()
    if reason:
        return reason
    ns = f"hilrig-{os.getpid()}-{next(_probe_ids)}-probe"
    try:
        add_netns(ns)
        ip("-n", ns, "link", "add", "probe0", "type", "veth", "peer", "name", "probe1")
        try:
            done = subprocess.run(["tc", "-n", ns, "qdisc", "add", "dev", "probe0", "root", "netem", "delay", "1ms"],
                                  capture_output=True, text=True, timeout=TC_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"tc could not run: {exc}"
        if done.returncode != 0:
            return f"the kernel has no netem (tc: {done.stderr.strip() or done.returncode})"
        return None
    except Exception as exc:  # noqa: BLE001  a probe that fails says why, never raises
        return f"netem probe failed: {exc}"
    finally:
        delete_netns(ns)
