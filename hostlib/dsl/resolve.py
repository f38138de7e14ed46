"""One case's plain data (a sweep point applied) -> a Case, or every problem found.

The stream config crosses into the core here, once: the case's partial config
(what the YAML said, rate and geometry derived) is completed and checked by the
core (hostlib.transports.resolve_stream) and the Case carries the result.
"""
from __future__ import annotations

import difflib
import re
from pathlib import Path

from pydantic import ValidationError

from hostlib.dsl.case import Case, Requirements, SweepValue, YamlValue
from hostlib.dsl.rf import rf_signal
from hostlib.dsl.schema import CaseModel, LinkDirectionModel, LinkModel, TransportModel
from hostlib.dsl.semantics import Err, at_highest_candidate, search_spec, semantic, semantic_after_repair
from hostlib.dsl.yamlsrc import pydantic_errors
from hostlib.link.spec import DEFAULT_QUEUE_BYTES, LinkDirection, LinkSide, LinkSpec
from hostlib.transports import resolve_faults, resolve_stream, stream_defaults
from hostlib.transports.config import Json, JsonObject, Signal
from hostlib.transports.usb import usb_transfers

__all__ = ["fmt_value", "resolve_case"]

# The YAML's transport knob -> the core's key, where they differ.
_CORE_KEY = {"socket_buffer": "socket_buffer_bytes"}
_YAML_KEY = {v: k for k, v in _CORE_KEY.items()}
_NOT_CORE = ("kind", "frame_bytes", "transfer_bytes", "transfers", "buffer_bytes", "pacing")


def fmt_value(v: YamlValue) -> str:
    return v if isinstance(v, str) else repr(v)


def resolve_case(data: dict[str, YamlValue], file: str, line: int,
                 point: dict[str, SweepValue]) -> tuple[Case | None, list[Err]]:
    """Validate one fully applied case dict; return the Case or every problem found."""
    try:
        m = CaseModel.model_validate(data)
    except ValidationError as e:
        schema_errs = pydantic_errors(e, CaseModel)
        return None, schema_errs + semantic_after_repair(data, schema_errs)
    checked = semantic(m)
    flowgraph, flowgraph_err = _flowgraph_path(m, file)
    link, link_errs = _link_spec(m)
    signal, rf_errs = rf_signal(m, m.master_clock / checked.divider if checked.divider else None)
    if m.signal is not None and "pattern" in m.model_fields_set:
        rf_errs.append((("pattern",), "an RF case's payload is its signal: give signal: or pattern:, not both"))
    errs = checked.errors + flowgraph_err + link_errs + rf_errs + _lab_tag_errors(m)
    if errs or checked.divider is None:  # a missing divider is always among the errors
        return None, errs
    search, _ = search_spec(m)
    m = at_highest_candidate(m)   # a search case's rate: its highest candidate
    rate_sps = m.master_clock / checked.divider
    try:
        stream = resolve_stream(_partial_stream(m, rate_sps, signal))
        faults = resolve_faults(m.faults.given())
    except ValueError as e:   # what the core's parser refuses, at the field it came from
        return None, [_core_error(str(e), m)]
    label = ", ".join(f"{k}={fmt_value(v)}" for k, v in point.items())
    case = Case(
        name=m.name, test_name=f"{m.name} [{label}]" if point else m.name, source_file=file, source_line=line,
        device=m.device, direction=m.direction, channels=m.channels, sample_format=m.format,
        master_clock_hz=m.master_clock, decimation=m.decimation, interpolation=m.interpolation,
        rate_sps=rate_sps, stream=stream, duration_s=m.duration, warmup_s=m.warmup,
        thresholds=tuple(checked.thresholds), tags=tuple(m.tags), timeout_s=checked.timeout_s, faults=faults,
        sweep_point=dict(point), raw=data, fifo_frames=m.fifo_frames, requires=_requires(m),
        stream_args=dict(m.stream_args),
        transport_args=dict(m.transport_args.model_dump(exclude_none=True)) if m.transport_args else {},
        transport_given=tuple(k for k in TransportModel.model_fields if k in m.transport.model_fields_set),
        host=m.host, expect_error=m.expect_error, flowgraph=flowgraph, search=search, link=link,
    )
    return case, []


def _partial_stream(m: CaseModel, rate_sps: float, signal: Signal | None = None) -> JsonObject:
    """What the case says of its stream, in the core's keys; the core fills the rest."""
    t = m.transport
    transport: dict[str, Json] = {"kind": t.kind}
    for knob, value in t.model_dump(exclude_none=True, mode="json").items():
        if knob not in _NOT_CORE:
            transport[_CORE_KEY.get(knob, knob)] = value
    if t.pacing is not None:
        transport["pacing"] = dict(t.pacing.core_json())
    if t.kind == "usb":
        transport.update(usb_transfers(t.transfer_bytes, t.transfers, t.buffer_bytes)[0])
    return {"direction": m.direction, "channels": m.channels, "sample_format": m.format, "rate_sps": rate_sps,
            "frame_bytes": t.frame_bytes, "pattern": "signal" if signal else m.pattern,
            "signal": signal.to_json() if signal else None, "transport": transport}


def _core_error(message: str, m: CaseModel) -> Err:
    """'stream config.transport.slots: must be ...' -> (("transport", "slots"), message)."""
    where, _, what = message.partition(": ")
    parts = where.split(".")[1:] if "." in where else []
    if parts and re.fullmatch(r"[a-z_]+", parts[-1]):
        parts[-1] = _YAML_KEY.get(parts[-1], parts[-1])
        if parts == ["transport", "publish"] and m.transport.publish is not None:
            names = stream_defaults()["ring_publish_names"]
            close = difflib.get_close_matches(m.transport.publish, names, n=1, cutoff=0.5)
            what = f"did you mean '{close[0]}'? {what}" if close else what
        return tuple(parts), what
    return (), message


_LINK_KEYS = tuple(LinkDirectionModel.model_fields)


def _link_direction(top: LinkModel, own: LinkDirectionModel | None) -> LinkDirection:
    """One direction: its own keys over the link's top-level ones, in SI (rate in bit/s)."""
    given = {k: getattr(top, k) for k in _LINK_KEYS if getattr(top, k) is not None}
    if own is not None:
        given.update({k: getattr(own, k) for k in _LINK_KEYS if getattr(own, k) is not None})
    burst = given.get("burst_loss")
    return LinkDirection(
        rate_bps=given.get("rate", 0.0) * 8, delay_s=given.get("delay", 0.0), jitter_s=given.get("jitter", 0.0),
        queue_bytes=given.get("queue", DEFAULT_QUEUE_BYTES), loss=given.get("loss", 0.0),
        burst_p=burst.p if burst else 0.0, burst_r=burst.r if burst else 1.0,
        burst_loss_bad=burst.loss_bad if burst else 1.0, burst_loss_good=burst.loss_good if burst else 0.0,
        reorder=given.get("reorder", 0.0), duplicate=given.get("duplicate", 0.0))


def _lab_tag_errors(m: CaseModel) -> list[Err]:
    """A tag `lab:<key>` names a row of the lab's published figures (hostlib.link.models)."""
    from hostlib.link.models import LAB_FIGURES, LAB_TAG

    errs: list[Err] = []
    for i, tag in enumerate(m.tags):
        key = tag[len(LAB_TAG):] if tag.startswith(LAB_TAG) else None
        if key is not None and key not in LAB_FIGURES:
            near = difflib.get_close_matches(key, list(LAB_FIGURES), n=1)
            hint = f"; did you mean {LAB_TAG}{near[0]}?" if near else f"; one of: {', '.join(LAB_FIGURES)}"
            errs.append((("tags", i), f"no lab figure {key!r}{hint}"))
    return errs


def _link_spec(m: CaseModel) -> tuple[LinkSpec | None, list[Err]]:
    """`link:` as a LinkSpec, or the problems (at the field that causes them)."""
    top = m.link
    if top is None:
        return None, []
    errs: list[Err] = []
    if m.transport.kind not in ("udp", "tcp"):
        errs.append((("link",), f"a link carries a network transport (udp, tcp); transport {m.transport.kind} "
                     "never leaves the host"))
    if m.host != "native":
        errs.append((("link",), "a link case needs host: native (the host receiver runs in the link's "
                     "host namespace)"))
    sides: dict[LinkSide, LinkDirectionModel | None] = {"up": top.up, "down": top.down}
    spec = LinkSpec(up=_link_direction(top, top.up), down=_link_direction(top, top.down),
                    seed=top.seed if top.seed is not None else 1)
    for side, own in sides.items():
        d = spec.direction(side)
        if d.reorder > 0 and d.delay_s == 0:
            at = ("link", side, "reorder") if own is not None and own.reorder is not None else ("link", "reorder")
            errs.append((at, f"reorder needs a delay in the {side} direction: a reordered packet skips the "
                         "delay and overtakes those in flight (give link.delay)"))
        if d.jitter_s > d.delay_s:
            at = ("link", side, "jitter") if own is not None and own.jitter is not None else ("link", "jitter")
            errs.append((at, f"jitter {d.jitter_s:g} s is more than the {side} delay {d.delay_s:g} s; "
                         "the delay varies by +- jitter and cannot go below 0"))
    return spec, errs


def _flowgraph_path(m: CaseModel, file: str) -> tuple[str | None, list[Err]]:
    """`flowgraph:` resolved against the case file's folder (kept ":Class" suffix)."""
    if m.flowgraph is None:
        return None, []
    if m.host != "gnuradio":
        return None, [(("flowgraph",), "a lab's flowgraph is the host side of the stream: it needs host: gnuradio")]
    path, sep, cls = m.flowgraph.partition(".py:")
    path = path + ".py" if sep else path
    resolved = (Path(file).parent / path).resolve()
    if resolved.suffix not in (".grc", ".py"):
        return None, [(("flowgraph",), f"{m.flowgraph!r} is not a .grc or .py file (optionally .py:ClassName)")]
    if not resolved.is_file():
        return None, [(("flowgraph",), f"flowgraph file {resolved} not found (paths are relative to the case file)")]
    return str(resolved) + (f":{cls}" if sep else ""), []


def _requires(m: CaseModel) -> Requirements:
    """`requires:` in SI with plural keys (lists even when written as one value)."""
    r = m.requires
    if r is None:
        return Requirements()
    return Requirements(channels=r.channels, directions=tuple(r.direction or ()), rate_sps=r.rate,
                        transports=tuple(r.transport or ()))
