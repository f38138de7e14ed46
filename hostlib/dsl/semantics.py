"""Checks across the fields of one schema-valid case: direction and dividers, frame
geometry, transport knobs, faults, timeout, search, thresholds (docs/dsl.md).

Each problem is (path of the field, message); the loader turns paths into lines.
"""
from __future__ import annotations

import copy
import dataclasses
import difflib
from typing import Literal

from pydantic import ValidationError

from hostlib.dsl.case import (
    BYTES_PER_SAMPLE,
    DEFAULT_TIMEOUT_MARGIN_S,
    FRAME_HEADER_BYTES,
    SearchSpec,
    YamlValue,
    default_timeout_s,
)
from hostlib.dsl.faults import fault_fit
from hostlib.dsl.schema import MAX_FRAME_BYTES, MAX_RATE_SPS, MIN_RATE_SPS, CaseModel, PacingModel, SearchRangeModel
from hostlib.dsl.thresholds import Threshold, ThresholdError, parse_threshold
from hostlib.dsl.yamlsrc import Path_, dotted
from hostlib.transports import stream_defaults
from hostlib.transports.config import FAULT_INJECTIONS
from hostlib.transports.usb import USB_KNOBS, usb_transfers
from hostlib.units import format_quantity

__all__ = ["Err", "Semantics", "at_highest_candidate", "search_spec", "semantic", "semantic_after_repair"]

Err = tuple[Path_, str]
_UDP_KNOBS = ("host", "port", "socket_buffer", "gso", "gro", "busy_poll", "pacing")
_TCP_KNOBS = ("host", "port", "socket_buffer", "write_bytes", "congestion", "nodelay")
_SHM_KNOBS = ("slots", "publish")
_KNOBS = {"udp": _UDP_KNOBS, "tcp": _TCP_KNOBS, "shm": _SHM_KNOBS, "usb": USB_KNOBS}
# What the kernel offers (root may set any of these) and allows everyone.
CONGESTION_AVAILABLE = "/proc/sys/net/ipv4/tcp_available_congestion_control"
CONGESTION_ALLOWED = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"


# Linux's congestion controls (net/ipv4/tcp_*.c): a kernel may lack any of them (not
# built, module not loaded), so a case naming one runs where it exists and SKIPs
# elsewhere (congestion_unavailable); a name outside this list is a typo, refused.
LINUX_CONGESTION = ("reno", "cubic", "bbr", "bic", "cdg", "dctcp", "highspeed", "htcp", "hybla", "illinois",
                    "lp", "nv", "scalable", "vegas", "veno", "westwood", "yeah")


def _congestion_names() -> tuple[list[str], list[str]] | None:
    """(available, allowed without root) on this host; None when it does not say."""
    try:
        with open(CONGESTION_AVAILABLE) as f:
            available = f.read().split()
        with open(CONGESTION_ALLOWED) as f:
            allowed = f.read().split()
    except OSError:
        return None
    return available, allowed


def congestion_unavailable(name: str) -> str | None:
    """Why this host's kernel cannot run congestion control `name` (None: it can, or
    the host does not say): the SKIP reason of a case that asks for it."""
    names = _congestion_names()
    if names is None or name in names[0]:
        return None
    available, allowed = names
    return (f"congestion control '{name}' is not in this kernel: available {' '.join(available)} "
            f"({CONGESTION_AVAILABLE}), allowed without root {' '.join(allowed)} ({CONGESTION_ALLOWED})")


def _congestion_error(name: str) -> str | None:
    """Why `name` is no congestion control (None: this kernel has it, or it is one of
    Linux's that this kernel lacks: the case SKIPs when it runs): with the names this
    kernel has and a "did you mean"."""
    names = _congestion_names()
    why = congestion_unavailable(name)
    if names is None or why is None or name in LINUX_CONGESTION:
        return None
    close = difflib.get_close_matches(name, names[0], n=1, cutoff=0.5)
    return (f"did you mean '{close[0]}'? " if close else "") + why


def _pacing_errors(pacing: PacingModel, gso: bool | None) -> list[Err]:
    """One pacing key, and no GSO beside it (a paced stream sends datagram by datagram)."""
    given = [k for k in ("gap", "period", "rate") if k in pacing.model_fields_set]
    errs: list[Err] = []
    if not given:
        errs.append((("transport", "pacing"), "give one of gap, period, rate (e.g. {gap: 4 us})"))
    for extra in given[1:]:
        errs.append((("transport", "pacing", extra), f"pacing takes one of gap, period, rate; "
                     f"'{given[0]}' is already given"))
    if gso:
        errs.append((("transport", "gso"), "gso: true cannot pace: a paced stream sends one datagram at a time "
                     "(GSO is off while pacing)"))
    return errs


@dataclasses.dataclass(frozen=True)
class Semantics:
    """What the cross-field checks found: the problems, and what a clean case resolves to."""
    errors: list[Err]
    thresholds: list[Threshold]
    divider: int | None       # decimation or interpolation: rate = master_clock / divider
    timeout_s: float


_SEARCH_KEYS: dict[str, tuple[Literal["decimation", "interpolation"], ...]] = {
    "rx": ("decimation",), "tx": ("interpolation",),
    "loopback": ("decimation", "interpolation"), "rx+tx": ("decimation", "interpolation")}


def _divider(m: CaseModel, key: Literal["decimation", "interpolation"]) -> int | None:
    return m.decimation if key == "decimation" else m.interpolation


_DIVIDERS: tuple[Literal["decimation", "interpolation"], ...] = ("decimation", "interpolation")


def _search_values(m: CaseModel, key: Literal["decimation", "interpolation"]) -> list[int] | SearchRangeModel | None:
    if m.search is None:
        return None
    return m.search.decimation if key == "decimation" else m.search.interpolation


def search_spec(m: CaseModel) -> tuple[SearchSpec | None, list[Err]]:
    """`search:` resolved: its divider and the candidates from the lowest rate to the highest."""
    if m.search is None:
        return None, []
    given = [k for k in _DIVIDERS if _search_values(m, k) is not None]
    allowed = _SEARCH_KEYS[m.direction]
    example = f"e.g. search: {{{allowed[0]}: [16, 14, 12, 10, 8, 6]}} or {{{allowed[0]}: {{from: 16, to: 6}}}}"
    if len(given) != 1:
        return None, [(("search",), f"a search varies one divider ({' or '.join(allowed)} for a {m.direction} case); "
                       + example)]
    key = given[0]
    if key not in allowed:
        return None, [(("search", key), f"a {m.direction} case sets its rate with {' or '.join(allowed)}, "
                       f"not {key}; " + example)]
    if _divider(m, key) is not None:
        return None, [((key,), f"the search sets {key}; leave {key} out of the case (the search tries "
                       "each candidate)")]
    raw = _search_values(m, key)
    if raw is None:
        return None, []
    if isinstance(raw, list):
        if len(set(raw)) != len(raw):
            return None, [(("search", key), "each candidate once: a value is listed twice")]
        values = sorted(raw, reverse=True)
    else:
        lo, hi = sorted((raw.start, raw.end))
        values = list(range(hi, lo - 1, -1))
    if len(values) < 2:
        return None, [(("search", key), "a search needs at least two candidates (one value is a plain case)")]
    errs: list[Err] = []
    for v in (values[0], values[-1]):
        rate = m.master_clock / v
        if not MIN_RATE_SPS <= rate <= MAX_RATE_SPS:
            errs.append((("search", key), f"candidate {key} {v}: master_clock / {v} = "
                         f"{format_quantity(rate, 'rate')} is outside {format_quantity(MIN_RATE_SPS, 'rate')}.."
                         f"{format_quantity(MAX_RATE_SPS, 'rate')}"))
    if m.search.step > m.duration:
        errs.append((("search", "step"), f"step {m.search.step:g} s is longer than the confirmation run "
                     f"(duration {m.duration:g} s); steps are the short part of a search"))
    return (None if errs else SearchSpec(key, tuple(values), float(m.search.step))), errs


def at_highest_candidate(m: CaseModel) -> CaseModel:
    """A search case as its checks and its Case see it: at the highest candidate rate."""
    key = next((k for k in _DIVIDERS if _search_values(m, k) is not None), None)
    raw = _search_values(m, key) if key is not None else None
    if key is None or raw is None or _divider(m, key) is not None:
        return m
    highest = min(raw) if isinstance(raw, list) else min(raw.start, raw.end)
    return m.model_copy(update={key: highest})


def semantic(m: CaseModel) -> Semantics:
    """Checks across fields (direction vs divider, frame size vs format, thresholds)."""
    errs: list[Err] = []
    search_errs = search_spec(m)[1]
    errs += search_errs
    m = at_highest_candidate(m)   # the other checks (rate bounds, faults, frame geometry) see the highest rate
    if m.host == "gnuradio" and m.direction != "rx":
        errs.append((("host",), "host: gnuradio runs the receive side as a flowgraph; "
                     f"it supports direction rx, not {m.direction}"))
    # direction decides which divider sets the rate: a device decimates what it receives
    # (RX) and interpolates what it transmits (TX); loopback does both at one rate.
    factor = None
    if m.direction == "rx":
        if m.interpolation is not None:
            errs.append((("interpolation",), "interpolation applies to tx and loopback cases; "
                         "an rx case sets decimation (rate = master_clock / decimation)"))
        if m.decimation is None:
            errs.append((("decimation",), "an rx case needs decimation (rate = master_clock / decimation)"))
        factor = m.decimation
    elif m.direction == "tx":
        if m.decimation is not None:
            errs.append((("decimation",), "decimation applies to rx and loopback cases; "
                         "a tx case sets interpolation (rate = master_clock / interpolation)"))
        if m.interpolation is None:
            errs.append((("interpolation",), "a tx case needs interpolation (rate = master_clock / interpolation)"))
        factor = m.interpolation
    else:
        if m.decimation is None and m.interpolation is None:
            errs.append((("decimation",), f"a {m.direction} case needs decimation (or interpolation): "
                         "rate = master_clock / decimation"))
        elif (m.decimation is not None and m.interpolation is not None
              and m.decimation != m.interpolation):
            errs.append((("interpolation",), f"{m.direction} runs TX and RX at one rate: interpolation "
                         f"{m.interpolation} must equal decimation {m.decimation} (or give only one)"))
        factor = m.decimation if m.decimation is not None else m.interpolation

    # transport: knobs of the other kind are a mistake, not something to ignore silently.
    t = m.transport
    own = _KNOBS[t.kind]
    given = t.model_dump(exclude_none=True)
    others = dict.fromkeys(k for kind, knobs in _KNOBS.items() if kind != t.kind for k in knobs if k not in own)
    for knob in others:
        if knob in given:
            errs.append((("transport", knob), f"'{knob}' is not a {t.kind} setting; "
                         f"{t.kind} takes: frame_bytes, {', '.join(own)}"))
    if t.congestion is not None and t.kind == "tcp":
        why = _congestion_error(t.congestion)
        if why:
            errs.append((("transport", "congestion"), why))
    if t.pacing is not None and t.kind == "udp":
        errs.extend(_pacing_errors(t.pacing, t.gso))
        if m.direction == "rx":
            errs.append((("transport", "pacing"), "pacing paces the host's UDP send (tx, loopback, rx+tx); "
                         "an rx stream's sender is the device"))
    bps = BYTES_PER_SAMPLE[m.format]
    unit = bps * m.channels
    min_frame = FRAME_HEADER_BYTES + unit
    fb = t.frame_bytes
    fpath = ("transport", "frame_bytes")
    udp_max = stream_defaults()["udp_max_frame_bytes"]   # the core's (largest IPv4 UDP payload)
    if t.kind == "udp" and fb > udp_max:
        errs.append((fpath, f"{fb} bytes does not fit one UDP datagram; udp frame_bytes must be "
                     f"{min_frame}..{udp_max - (udp_max - FRAME_HEADER_BYTES) % unit} "
                     f"(the 48-byte header plus a multiple of {unit} bytes)"))
    elif t.kind in ("shm", "tcp") and fb > MAX_FRAME_BYTES:
        errs.append((fpath, f"{fb} bytes is larger than the {MAX_FRAME_BYTES} bytes allowed for a "
                     f"{'shm slot' if t.kind == 'shm' else 'tcp frame'}"))
    elif fb < min_frame:
        errs.append((fpath, f"{fb} bytes cannot hold the 48-byte header and one {m.format} sample on "
                     f"{m.channels} channel(s); the smallest frame_bytes is {min_frame}"))
    elif (fb - FRAME_HEADER_BYTES) % unit:
        lo = fb - (fb - FRAME_HEADER_BYTES) % unit
        errs.append((fpath, f"payload {fb - FRAME_HEADER_BYTES} bytes (frame_bytes {fb} - 48 header) is not a "
                     f"multiple of {unit} ({m.format}: {bps} bytes x {m.channels} channel(s)); "
                     f"valid frame_bytes are 48 + k*{unit}, nearest {lo} or {lo + unit}"))
    if t.kind == "usb":
        errs.extend((("transport", knob), msg)
                    for knob, msg in usb_transfers(t.transfer_bytes, t.transfers, t.buffer_bytes)[1])
    if factor is not None:
        rate = m.master_clock / factor
        divider = "decimation" if m.direction == "rx" or m.decimation is not None else "interpolation"
        if not MIN_RATE_SPS <= rate <= MAX_RATE_SPS:
            errs.append(((divider,), f"sample rate master_clock / {divider} = {format_quantity(rate, 'rate')} "
                         f"is outside {format_quantity(MIN_RATE_SPS, 'rate')}.."
                         f"{format_quantity(MAX_RATE_SPS, 'rate')}"))
        elif fb >= min_frame and not (fb - FRAME_HEADER_BYTES) % unit:
            errs += _fault_errors(m, rate, (fb - FRAME_HEADER_BYTES) // unit)
    if t.kind == "udp" and t.socket_buffer is not None and t.socket_buffer < fb:
        errs.append((("transport", "socket_buffer"), f"socket_buffer {t.socket_buffer} bytes cannot hold "
                     f"one {fb}-byte frame"))

    timeout = m.timeout if m.timeout is not None else default_timeout_s(m.duration, m.warmup)
    if m.timeout is not None and m.timeout <= m.duration + m.warmup:
        errs.append((("timeout",), f"timeout {m.timeout:g} s would end the run before duration + warmup "
                     f"({m.duration + m.warmup:g} s); give more or leave it out "
                     f"(default duration + warmup + {DEFAULT_TIMEOUT_MARGIN_S:g} s)"))

    if m.direction == "rx+tx":
        injected = [k for k, v in m.faults.given().items() if v and k in FAULT_INJECTIONS]
        if injected:
            errs.append((("faults",), f"{', '.join(injected)}: faults are injected on one stream; an rx+tx case "
                         "has two (run the fault case as rx or tx; die_after_ms applies)"))
    thresholds, threshold_errs = _thresholds(m)
    return Semantics(errs + threshold_errs, thresholds, factor, timeout)


def _thresholds(m: CaseModel) -> tuple[list[Threshold], list[Err]]:
    """`thresholds:`; an rx+tx case may also hold per-direction blocks `rx: {...}` and
    `tx: {...}` (a plain metric key judges both directions)."""
    errs: list[Err] = []
    thresholds: list[Threshold] = []
    seen: dict[tuple[str | None, str], str] = {}   # (leg, metric) -> key as written
    entries: list[tuple[Path_, str | None, str, object]] = []
    for key, spec in m.thresholds.items():
        if key in ("rx", "tx") and isinstance(spec, dict) and not ({"limit", "marginal"} & set(spec)):
            if m.direction != "rx+tx":
                errs.append((("thresholds", key), f"a per-direction block ({key}: {{...}}) applies to direction "
                             f"rx+tx; a {m.direction} case lists its metrics directly"))
                continue
            if not spec:
                errs.append((("thresholds", key), f"'{key}' needs metric thresholds, e.g. {key}: "
                             "{throughput: \">= 99% of rate\", missing_frames: \"== 0\"}"))
            entries += [(("thresholds", key, k), key, k, v) for k, v in spec.items()]
        else:
            entries.append((("thresholds", key), None, key, spec))
    for path, leg, key, spec in entries:
        try:
            th = parse_threshold(key, spec)
        except ThresholdError as e:
            errs.append((path, str(e)))
            continue
        clash = [seen.get((lg, th.metric)) for lg in ((leg, None) if leg else (None, "rx", "tx"))]
        other = next((c for c in clash if c is not None), None)
        if other is not None:
            errs.append((path, f"{dotted(path)!r} and {other!r} judge the same metric ({th.metric}) of the same "
                         "stream; give one threshold per metric (use limit/marginal for a band)"))
            continue
        seen[(leg, th.metric)] = dotted(path)
        thresholds.append(dataclasses.replace(th, leg=leg) if leg else th)
    return thresholds, errs


def _fault_errors(m: CaseModel, rate_sps: float, samples_per_frame: int) -> list[Err]:
    """A case asking for more faults than its run can place is refused (never silently short)."""
    faults = m.faults.given()
    run_s = m.duration + m.warmup
    fit = fault_fit(faults, rate_sps=rate_sps, samples_per_frame=samples_per_frame, run_s=run_s)
    if fit.fits:
        return []
    need_s = fit.frames_needed * samples_per_frame / rate_sps
    return [(("faults",), f"the faults take {fit.faulted_frames} frame(s), but a {run_s:g} s run (duration + warmup) "
             f"at {format_quantity(rate_sps, 'rate')} carries {fit.frames_in_run} frames of {samples_per_frame} "
             "samples, "
             f"which places at most {fit.placeable_max} (faults sit on frame 16 + 4j, j among max(2 x faults, 32) "
             f"places; docs/dsl.md); ask for at most {fit.placeable_max} or run at least {need_s:.3g} s")]


# A schema error in one field makes checks that read it meaningless: these are
# the checks (by path prefix) each field feeds.
_DEPENDS = {
    "decimation": ("interpolation",),
    "interpolation": ("decimation",),
    "format": ("transport",),
    "channels": ("transport",),
    "transport": ("transport",),
    "master_clock": ("decimation", "interpolation", "faults"),
    "faults": ("faults",),
    "duration": ("timeout", "faults"),
    "warmup": ("timeout", "faults"),
    "search": ("search", "decimation", "interpolation"),
    "direction": ("decimation", "interpolation", "search"),
}
_PLACEHOLDERS: dict[str, YamlValue] = {"name": "?", "device": "?", "direction": "loopback", "master_clock": "1 GHz",
                 "duration": "1 s", "transport": {"kind": "udp"}}


def semantic_after_repair(data: dict[str, YamlValue], schema_errs: list[Err]) -> list[Err]:
    """Semantic errors of the fields the schema accepted, so a file's errors come all at once.

    Fields that failed the schema are replaced by defaults or placeholders; checks that
    depend on a replaced field are not reported (they would describe the placeholder).
    """
    repaired = copy.deepcopy(data)
    suppressed: set[str] = set()
    for loc, _ in schema_errs:
        if not loc:
            return []
        top = str(loc[0])
        suppressed.add(top)
        suppressed.update(_DEPENDS.get(top, ()))
        if len(loc) == 1 and top not in CaseModel.model_fields:
            # An unknown key that is a typo of a field: don't also report that field as missing.
            for close in difflib.get_close_matches(top, list(CaseModel.model_fields), n=1, cutoff=0.6):
                suppressed.add(close)
                suppressed.update(_DEPENDS.get(close, ()))
        nested = repaired.get(top)
        if len(loc) >= 2 and isinstance(nested, dict) and top in ("transport", "faults"):
            nested.pop(str(loc[1]), None)
        else:
            repaired.pop(top, None)
    for key, value in _PLACEHOLDERS.items():
        if key not in repaired:
            repaired[key] = copy.deepcopy(value)
    transport = repaired.get("transport")
    if not isinstance(transport, dict) or "kind" not in transport:
        repaired["transport"] = {"kind": "udp"}
        suppressed.add("transport")
    try:
        m = CaseModel.model_validate(repaired)
    except ValidationError:
        return []
    return [(path, msg) for path, msg in semantic(m).errors if str(path[0]) not in suppressed]

