"""The resolved link spec: what an emulated network link between the device and the
host does to each packet, per direction, in SI units (docs/long-link.md).

`up` carries what the device sends to the host (an RX stream's frames), `down` what
the host sends to the device. Both realisations take this one spec: hilrig-link (the
core's link model; `core_json` gives its keys) and tc netem + tbf (hostlib.link.netem).
A leaf: imports nothing of hostlib, so the DSL can build it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

__all__ = ["DEFAULT_QUEUE_BYTES", "LinkDirection", "LinkSide", "LinkSpec"]

LinkSide = Literal["up", "down"]

# The core's LinkSpec::kDefaultQueueBytes: Linux's default txqueuelen (1000) x 1500 bytes.
DEFAULT_QUEUE_BYTES = 1_500_000


@dataclass(frozen=True)
class LinkDirection:
    rate_bps: float = 0.0          # bits per second of IP packets on the wire; 0 = unlimited
    delay_s: float = 0.0           # one-way delay
    jitter_s: float = 0.0          # +- uniform around the delay, the link's order kept
    queue_bytes: int = DEFAULT_QUEUE_BYTES   # drop-tail limit ahead of the rate
    loss: float = 0.0              # Bernoulli loss probability per packet
    burst_p: float = 0.0           # Gilbert-Elliott good -> bad per packet; 0 = no bursts
    burst_r: float = 1.0           # Gilbert-Elliott bad -> good per packet (mean burst 1/r)
    burst_loss_bad: float = 1.0    # loss probability in the bad state
    burst_loss_good: float = 0.0   # loss probability in the good state
    reorder: float = 0.0           # probability a packet skips the delay (overtakes those in flight)
    duplicate: float = 0.0         # probability a packet is delivered twice

    @property
    def burst_loss_rate(self) -> float:
        """The Gilbert-Elliott chain's long-run loss probability."""
        if self.burst_p <= 0:
            return 0.0
        bad = self.burst_p / (self.burst_p + self.burst_r)
        return bad * self.burst_loss_bad + (1 - bad) * self.burst_loss_good

    @property
    def expected_loss(self) -> float:
        """The probability a packet is lost, Bernoulli and bursts together (independent)."""
        return 1 - (1 - self.loss) * (1 - self.burst_loss_rate)


@dataclass(frozen=True)
class LinkSpec:
    up: LinkDirection
    down: LinkDirection
    seed: int = 1                  # up draws from seed, down from seed + 1

    def direction(self, side: LinkSide) -> LinkDirection:
        return self.up if side == "up" else self.down

    def core_json(self, side: LinkSide) -> dict[str, float | int]:
        """The core's keys (hilrig/link/link_model.hpp LinkSpec) for one direction."""
        d = self.direction(side)
        return {
            "rate_bps": d.rate_bps, "delay_ns": round(d.delay_s * 1e9), "jitter_ns": round(d.jitter_s * 1e9),
            "queue_bytes": d.queue_bytes, "loss": d.loss, "burst_p": d.burst_p, "burst_r": d.burst_r,
            "burst_loss_bad": d.burst_loss_bad, "burst_loss_good": d.burst_loss_good, "reorder": d.reorder,
            "duplicate": d.duplicate, "seed": self.seed + (1 if side == "down" else 0),
        }

    def to_json(self) -> dict[str, JsonValue]:
        """For the evidence: both directions in SI units and the seed."""
        return {"up": dataclasses.asdict(self.up), "down": dataclasses.asdict(self.down), "seed": self.seed}
