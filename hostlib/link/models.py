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

Rates are bits per second, times seconds, sizes bytes. `study_rows` turns a case and its
metrics into the rows the CLI, the evidence and the report show: measured, the models,
and the lab's figure (a case names it with the tag `lab:<key>`, a key of LAB_FIGURES).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..results.schema import BlockCount, StudyRow
from .spec import LinkSpec

__all__ = ["CUBIC_BETA", "CUBIC_C", "LAB_FIGURES", "LAB_TAG", "MATHIS_C", "TCP_MSS_BYTES", "UDP_IP_HEADER_BYTES",
           "LabFigure", "cubic_bps", "lab_figure", "mathis_bps", "paced_received_ratio", "study_rows",
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


def _mbit(bps: float) -> str:
    return "unbounded" if math.isinf(bps) else f"{bps / 1e6:.3g} Mbit/s"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} us"


def _row(what: str, how: str, received: str, *, ratio: float | None = None,
         rate_bps: float | None = None) -> StudyRow:
    return StudyRow(what=what, how=how, received=received, ratio=ratio, rate_bps=rate_bps)


def _measured(metrics: Mapping[str, float], blocks: Sequence[BlockCount], block_frames: int,
              payload_bytes: int, transport: str) -> StudyRow:
    """What the run received: the complete blocks' received / sent (the lab's measure),
    or over the whole stream when no block is complete, and the payload rate. tcp loses
    nothing (what is not received yet is in the sockets): its rate alone."""
    rate_bps = metrics.get("frames_per_s", 0.0) * payload_bytes * 8
    if transport == "tcp":
        return _row("measured (this run)", "frames received over the window x frame bytes", _mbit(rate_bps),
                    rate_bps=rate_bps)
    full = [b for b in blocks if b["sent"] == block_frames]
    sent = sum(b["sent"] for b in full)
    if sent:
        ratio = sum(b["received"] for b in full) / sent
        per_block = [b["received"] / b["sent"] for b in full]
        how = (f"{len(full)} complete block(s) of {full[0]['sent']}: {100 * min(per_block):.1f}-"
               f"{100 * max(per_block):.1f} %")
    else:
        sent_all = metrics.get("frames_sent", 0.0)
        ratio = metrics.get("frames_received", 0.0) / sent_all if sent_all else 0.0
        how = f"frames received / sent over the stream ({metrics.get('frames_sent', 0):.0f} sent)"
    return _row("measured (this run)", how, f"{_mbit(rate_bps)}, {100 * ratio:.1f} %", ratio=ratio,
                rate_bps=rate_bps)


def _link_counted(metrics: Mapping[str, float]) -> StudyRow | None:
    """The emulator's own view over the window: what entered the link, what it dropped
    (queue, loss) and delivered; datagrams the sender sent beyond what entered were lost
    ahead of the link (the emulator did not read them in time)."""
    n_in = metrics.get("link_packets_in")
    if not n_in:
        return None
    q, lost = metrics.get("link_dropped_queue", 0.0), metrics.get("link_dropped_loss", 0.0)
    ratio = 1 - (q + lost) / n_in
    rate_bps = metrics.get("link_rate_Bps", 0.0) * 8
    return _row("the link's counters (window)", f"{n_in:.0f} packets in, {q:.0f} dropped by the queue, {lost:.0f} "
                f"by loss; IP bytes out", f"{_mbit(rate_bps)} IP, {100 * ratio:.1f} % of what entered",
                ratio=ratio, rate_bps=rate_bps)


def _paced_udp(spec: LinkSpec, side: str, frame_bytes: int, period_s: float, period_how: str) -> StudyRow:
    d = spec.down if side == "down" else spec.up
    wire = wire_time_s(frame_bytes + UDP_IP_HEADER_BYTES, d.rate_bps)
    loss = d.expected_loss
    ratio = paced_received_ratio(period_s, wire, loss)
    rate_bps = ratio * frame_bytes * 8 / period_s
    how = f"min(1, period {_us(period_s)} {period_how} / wire {_us(wire)})"
    if loss:
        how += f" x (1 - loss {loss:.3g})"
    return _row("model: UDP into a slower link", how, f"{_mbit(rate_bps)}, {100 * ratio:.1f} %",
                ratio=ratio, rate_bps=rate_bps)


def _tcp(spec: LinkSpec, side: str, metrics: Mapping[str, float], congestion: str) -> list[StudyRow]:
    d = spec.down if side == "down" else spec.up
    back = spec.up if side == "down" else spec.down
    rtt = d.delay_s + back.delay_s
    rows: list[StudyRow] = []
    link_bps = d.rate_bps * TCP_MSS_BYTES / (TCP_MSS_BYTES + 52) if d.rate_bps else math.inf
    sndbuf, rcvbuf = metrics.get("tcp_sndbuf_bytes"), metrics.get("tcp_rcvbuf_bytes")
    bounds = [link_bps]
    if rtt > 0 and sndbuf and rcvbuf:
        window = tcp_window_bytes(sndbuf, rcvbuf)
        w_bps = window_limited_bps(window, rtt)
        bounds.append(w_bps)
        rows.append(_row("model: window-limited TCP", f"window {window / 2**20:.3g} MiB (half the smaller granted "
                         f"buffer) / RTT {rtt * 1e3:.3g} ms", _mbit(w_bps), rate_bps=w_bps))
    loss = d.expected_loss
    if rtt > 0 and loss > 0:
        # Which loss response bounds this sender: Reno's (Mathis) for reno and the others,
        # CUBIC's for cubic, none for bbr (it does not back off on a random loss).
        not_bound = f"; {congestion} does not back off on random loss: not a bound"
        m_bps = mathis_bps(TCP_MSS_BYTES, rtt, loss)
        if congestion not in ("bbr", "cubic"):
            bounds.append(m_bps)
        rows.append(_row("model: loss-limited TCP (Mathis)",
                         f"MSS {TCP_MSS_BYTES} B / RTT {rtt * 1e3:.3g} ms x {MATHIS_C} / sqrt(p {loss:.3g})"
                         + (not_bound if congestion == "bbr" else "; Reno's response" if congestion == "cubic"
                            else ""), _mbit(m_bps), rate_bps=m_bps))
        if congestion in ("cubic", "bbr"):
            c_bps = cubic_bps(TCP_MSS_BYTES, rtt, loss)
            if congestion == "cubic":
                bounds.append(c_bps)
            rows.append(_row("model: loss-limited CUBIC (RFC 9438)",
                             f"({CUBIC_C} x {3 + CUBIC_BETA:g} / (4 x {1 - CUBIC_BETA:.1f}))^(1/4) x (RTT / p)^(3/4) "
                             f"segments a round trip, at least Reno's" + (not_bound if congestion == "bbr" else ""),
                             _mbit(c_bps), rate_bps=c_bps))
    if d.rate_bps:
        rows.append(_row("link rate (TCP payload)", f"{_mbit(d.rate_bps)} x {TCP_MSS_BYTES} / "
                         f"{TCP_MSS_BYTES + 52} (headers)", _mbit(link_bps), rate_bps=link_bps))
    if len(rows) > 1:
        best = min(bounds)
        rows.append(_row("model: the smallest bound", f"{congestion or 'the default'} congestion control",
                         _mbit(best), rate_bps=best))
    return rows


def study_rows(*, spec: LinkSpec | None, side: str, transport: str, frame_bytes: int, pacing_period_s: float,
               tags: Sequence[str], metrics: Mapping[str, float], blocks: Sequence[BlockCount],
               block_frames: int, congestion: str = "") -> list[StudyRow]:
    """Measured, the models that apply, then the lab's figure; [] when the case neither
    crosses a link nor names a lab figure. side: the link direction the frames cross;
    pacing_period_s: the configured period (0: paced by gap, or unpaced). The paced-UDP
    model takes the achieved mean period (1 / sent_frames_per_s, what the link was
    offered; unpaced senders too), else the configured one, else the achieved p50."""
    named = lab_figure(tags)
    if spec is None and named is None:
        return []
    rows = [_measured(metrics, blocks, block_frames, frame_bytes, transport)]
    if (counted := _link_counted(metrics)) is not None:
        rows.append(counted)
    d = None if spec is None else (spec.down if side == "down" else spec.up)
    if spec is not None and d is not None and d.rate_bps and transport == "udp":
        # The period the sender achieved over the window (its own count): what the link was
        # offered, which a busy host's pacer can stretch beyond the configured one.
        sent_per_s = metrics.get("sent_frames_per_s", 0.0)
        asked = f"; {_us(pacing_period_s)} configured" if pacing_period_s > 0 else ""
        if sent_per_s > 0:
            rows.append(_paced_udp(spec, side, frame_bytes, 1 / sent_per_s, f"(achieved mean{asked})"))
        elif pacing_period_s > 0:
            rows.append(_paced_udp(spec, side, frame_bytes, pacing_period_s, "(configured)"))
        elif metrics.get("pacing_period_p50_s"):
            rows.append(_paced_udp(spec, side, frame_bytes, metrics["pacing_period_p50_s"], "(achieved p50)"))
    if spec is not None and transport == "tcp":
        rows.extend(_tcp(spec, side, metrics, congestion))
    if named is not None:
        key, lab = named
        rows.append(_row(f"lab's figure ({key})", f"{lab.path}; {lab.sender}", lab.received, ratio=lab.ratio,
                         rate_bps=lab.rate_bps))
    return rows
