"""A study case's rows (docs/long-link.md "The study"): what the run measured, the link's
own counters, the models of hostlib.link.models that apply to its link and transport,
and the lab's figure it names (tag `lab:<key>`). The CLI, the evidence (`study`) and the
report show them."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ..link.models import (
    CUBIC_BETA,
    CUBIC_C,
    MATHIS_C,
    TCP_MSS_BYTES,
    UDP_IP_HEADER_BYTES,
    cubic_bps,
    lab_figure,
    mathis_bps,
    paced_received_ratio,
    tcp_window_bytes,
    window_limited_bps,
    wire_time_s,
)
from ..link.spec import LinkSpec
from ..results.schema import BlockCount, StudyRow

__all__ = ["study_rows"]


def _mbit(bps: float) -> str:
    return "unbounded" if math.isinf(bps) else f"{bps / 1e6:.3g} Mbit/s"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3g} us"


def _row(what: str, how: str, received: str, *, ratio: float | None = None,
         rate_bps: float | None = None) -> StudyRow:
    return StudyRow(what=what, how=how, received=received, ratio=ratio, rate_bps=rate_bps)


def _measured(metrics: Mapping[str, float], blocks: Sequence[BlockCount], block_frames: int,
              payload_bytes: int, transport: str) -> StudyRow:
    """What the run received: the complete blocks' received / sent (the lab's measure);
    without a complete block, the block so far (the frames below the highest one received:
    not those still crossing the link when the stream stopped, a whole one-way delay's
    worth on a long link); without blocks, the whole stream. And the payload rate. tcp
    loses nothing (what is not received yet is in the sockets): its rate alone."""
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
    elif sent_so_far := sum(b["sent"] for b in blocks):
        ratio = sum(b["received"] for b in blocks) / sent_so_far
        how = f"frames received / sent below the highest received ({sent_so_far} sent; no complete block)"
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
