"""The models beside the long-link study's tables (docs/long-link.md "The study"): what
a stream across a link should carry, computed from the case's link spec, and the lab's
published figures the study reproduces.

* paced UDP into a slower link: received / sent = min(1, period / wire time), the wire
  time being one datagram's IP packet at the link's rate (the link carries one datagram
  per wire time of the one per period offered); then the link's random loss.
* window-limited TCP: window / RTT (the window is the smaller of what the sender may
  keep unacknowledged and what the receiver advertises).
* loss-limited TCP (Mathis, Semke, Mahdavi, Ott 1997): MSS / RTT * C / sqrt(p), C ~ 1.22;
  Reno's (AIMD) response to a random loss p.
* loss-limited CUBIC (RFC 8312 / RFC 9438 section 5.1): an average window of
  (C (3 + beta) / (4 (1 - beta)))^(1/4) (RTT / p)^(3/4) segments, C 0.4, beta 0.7, and
  never below Reno's (its Reno-friendly region). bbr does not back off on a random
  loss: neither is its bound.

Rates are bits per second, times seconds, sizes bytes. hostlib.engine.study turns a case
and its metrics into the rows the CLI, the evidence and the report show (a case names the
lab's figure with the tag `lab:<key>`, a key of LAB_FIGURES).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CUBIC_BETA", "CUBIC_C", "LAB_FIGURES", "LAB_TAG", "MATHIS_C", "TCP_MSS_BYTES", "UDP_IP_HEADER_BYTES",
           "LabFigure", "cubic_bps", "lab_figure", "mathis_bps", "paced_received_ratio",
           "tcp_window_bytes", "window_limited_bps", "wire_time_s"]

UDP_IP_HEADER_BYTES = 28     # IPv4 (20) + UDP (8): a datagram's IP packet is its payload + 28
TCP_MSS_BYTES = 1448         # a 1500-byte MTU less IPv4 (20), TCP (20) and the timestamp option (12)
MATHIS_C = 1.22              # sqrt(3/2): periodic loss, delayed ACKs off (the paper's constant)
CUBIC_C = 0.4                # RFC 9438: the cubic function's scale, segments / s^3
CUBIC_BETA = 0.7             # RFC 9438: the window after a loss, x beta
LAB_TAG = "lab:"             # a case's tag `lab:<key>` names its row of LAB_FIGURES


def wire_time_s(packet_bytes: float, rate_bps: float) -> float:
    """How long one packet occupies a link of rate_bps (bits of IP packet per second)."""
    if rate_bps <= 0:
        raise ValueError(f"rate_bps must be > 0, got {rate_bps}")
    return packet_bytes * 8 / rate_bps


def paced_received_ratio(period_s: float, wire_s: float, loss: float = 0.0) -> float:
    """received / sent for datagrams sent every period_s into a link that takes wire_s
    each, its queue full (the long-run share: a queue only delays the first drops),
    then lost with probability `loss`."""
    if period_s <= 0 or wire_s <= 0:
        raise ValueError(f"period_s and wire_s must be > 0, got {period_s}, {wire_s}")
    return min(1.0, period_s / wire_s) * (1.0 - loss)


def window_limited_bps(window_bytes: float, rtt_s: float) -> float:
    """A window's worth of bytes per round trip."""
    if rtt_s <= 0:
        raise ValueError(f"rtt_s must be > 0, got {rtt_s}")
    return window_bytes * 8 / rtt_s


def mathis_bps(mss_bytes: float, rtt_s: float, loss: float) -> float:
    """Loss-limited TCP (Mathis): MSS / RTT * C / sqrt(p); infinite without loss."""
    if rtt_s <= 0:
        raise ValueError(f"rtt_s must be > 0, got {rtt_s}")
    if loss <= 0:
        return math.inf
    return mss_bytes * 8 / rtt_s * MATHIS_C / math.sqrt(loss)


def cubic_bps(mss_bytes: float, rtt_s: float, loss: float) -> float:
    """Loss-limited CUBIC: its average window for a random loss p (RFC 9438 5.1), or
    Reno's (Mathis) where that is larger (the Reno-friendly region); infinite without loss."""
    if rtt_s <= 0:
        raise ValueError(f"rtt_s must be > 0, got {rtt_s}")
    if loss <= 0:
        return math.inf
    window_segments = (CUBIC_C * (3 + CUBIC_BETA) / (4 * (1 - CUBIC_BETA))) ** 0.25 * (rtt_s / loss) ** 0.75
    return max(window_segments * mss_bytes * 8 / rtt_s, mathis_bps(mss_bytes, rtt_s, loss))


def tcp_window_bytes(sndbuf_bytes: float, rcvbuf_bytes: float) -> float:
    """The window two granted socket buffers allow: half of the smaller one (getsockopt
    reports twice the usable size, the other half being the kernel's bookkeeping)."""
    return min(sndbuf_bytes, rcvbuf_bytes) / 2


@dataclass(frozen=True)
class LabFigure:
    """One row of the lab's published study (sender -> receiver, 10 s runs)."""

    path: str                     # same host | LAN, 1 GbE, RTT ~0.5 ms | WAN, RTT ~250 ms, ~500 Mbit/s
    sender: str                   # as they wrote it
    received: str                 # as they wrote it
    rate_bps: float | None = None   # their received rate, where given
    ratio: float | None = None      # their received / sent, where given


LAB_FIGURES: dict[str, LabFigure] = {
    "same-host-udp-unpaced": LabFigure("same host", "UDP unpaced", "2.27 GB/s, 99.7 %", 2.27e9 * 8, 0.997),
    "same-host-tcp": LabFigure("same host", "TCP", "6.23 Gbit/s", 6.23e9),
    "lan-udp-gap-4us": LabFigure("LAN, 1 GbE, RTT ~0.5 ms", "UDP gap 4 us (period ~13 us)",
                                 "879 Mbit/s, 100 % in every 100 k block", 879e6, 1.0),
    "lan-udp-gap-3us": LabFigure("LAN, 1 GbE, RTT ~0.5 ms", "UDP gap 3 us", "929 Mbit/s, 100 %", 929e6, 1.0),
    "lan-udp-gap-2us": LabFigure("LAN, 1 GbE, RTT ~0.5 ms", "UDP gap 2 us", "936 Mbit/s, 96.4 % (blocks 94.7-98.7 %)",
                                 936e6, 0.964),
    "lan-udp-gap-1us": LabFigure("LAN, 1 GbE, RTT ~0.5 ms", "UDP gap 1 us", "92.2 % (blocks 89.6-95.7 %)",
                                 None, 0.922),
    "lan-udp-unpaced": LabFigure("LAN, 1 GbE, RTT ~0.5 ms", "UDP unpaced", "49.2 % (blocks 39-44 %)", None, 0.492),
    "lan-tcp": LabFigure("LAN, 1 GbE, RTT ~0.5 ms", "TCP, 512 KiB writes", "940 Mbit/s", 940e6),
    "wan-tcp": LabFigure("WAN, RTT ~250 ms, uplink ~500 Mbit/s", "TCP, 512 KiB writes",
                         "~1 MB/s (8.3 Mbit/s), unsteady second to second", 8.3e6),
    "wan-udp-gap-4us": LabFigure("WAN, RTT ~250 ms, uplink ~500 Mbit/s", "UDP gap 4 us (~880 Mbit/s offered)",
                                 "~50 % (blocks 43-64 %), 435 Mbit/s", 435e6, 0.50),
    "wan-udp-gap-161us": LabFigure("WAN, RTT ~250 ms, uplink ~500 Mbit/s", "UDP gap 161 us (~53 Mbit/s offered)",
                                   "100 %, 52.7 Mbit/s", 52.7e6, 1.0),
}


def lab_figure(tags: Sequence[str]) -> tuple[str, LabFigure] | None:
    """The lab's figure a case names (tag `lab:<key>`); None without one. An unknown key
    is a KeyError (the DSL refuses it at the tag's line first)."""
    for tag in tags:
        if tag.startswith(LAB_TAG):
            key = tag[len(LAB_TAG):]
            return key, LAB_FIGURES[key]
    return None
