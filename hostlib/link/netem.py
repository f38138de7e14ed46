"""The kernel realisation of a link spec: tc netem (delay, jitter, loss, bursts, reorder,
duplicate) with a tbf child (rate, queue) on each end of a veth pair between the two
namespaces, one direction per end's egress (docs/long-link.md). Chosen automatically
where the kernel has netem (`netem_unsupported` is None) and the spec fits netem;
otherwise the link is hilrig-link's.

netem takes one loss model, so a spec with both `loss` and `burst_loss` in a direction
is hilrig-link's. Its randomness is the kernel's: counts are not fixed by the seed.
"""
from __future__ import annotations

import functools
import itertools
import os
import subprocess

from .netns import add_netns, delete_netns, ip, unavailable
from .spec import LinkDirection, LinkSpec

__all__ = ["TBF_BURST_S", "netem_args", "netem_unsupported", "setup_commands", "spec_unfit", "tbf_args"]

TBF_BURST_S = 0.001          # tbf's bucket: 1 ms of the rate, at least TBF_MIN_BURST_BYTES
TBF_MIN_BURST_BYTES = 1600   # above one 1500-byte packet: tbf cannot send a packet larger than its bucket
TC_TIMEOUT_S = 10.0
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
    if net:
        cmds.append(["tc", "-n", netns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "netem",
                     "limit", "1000000", *net])
        if rate:
            cmds.append(["tc", "-n", netns, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "tbf", *rate])
    elif rate:
        cmds.append(["tc", "-n", netns, "qdisc", "add", "dev", dev, "root", "handle", "10:", "tbf", *rate])
    return cmds


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
