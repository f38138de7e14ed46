"""Load YAML case files into resolved Cases: schema, semantics, thresholds, sweeps.

A file holds one case (a mapping), a list of cases, or a mapping with a
`cases:` list. Every problem of a file is collected (with its line) before
anything is returned; a file with any problem yields no case at all.
"""
from __future__ import annotations

import copy
import dataclasses
import difflib
import itertools
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from hostlib._exceptions import ConfigError, ConfigIssue
from hostlib.dsl.case import BYTES_PER_SAMPLE, FRAME_HEADER_BYTES, Case, SearchSpec, TransportSpec
from hostlib.dsl.faults import fault_fit
from hostlib.dsl.schema import MAX_RATE_SPS, MIN_RATE_SPS, SWEEP_KEYS, CaseModel
from hostlib.dsl.thresholds import ThresholdError, parse_threshold
from hostlib.dsl.yamlsrc import dotted, line_of, load_yaml, pydantic_errors, to_plain
from hostlib.transports import default_shm_slots, stream_defaults, udp_defaults
from hostlib.transports.usb import USB_KNOBS, usb_options
from hostlib.units import format_quantity

__all__ = [
    "DEFAULT_TIMEOUT_MARGIN_S",
    "find_case_files",
    "load_cases",
    "load_file",
    "validate_command",
    "validate_paths",
]

SHM_MAX_FRAME_BYTES = 64 * 1024**2   # a slot larger than this is a typo, not a test
DEFAULT_TIMEOUT_MARGIN_S = 30.0      # default timeout = duration + warmup + this
_UDP_KNOBS = ("host", "port", "socket_buffer", "gso", "gro", "busy_poll")
_SHM_KNOBS = ("slots",)
_KNOBS = {"udp": _UDP_KNOBS, "shm": _SHM_KNOBS, "usb": USB_KNOBS}
_ALIASES = {"frame_bytes": "frame_size"}   # canonical -> alias, for finding lines

Err = tuple[tuple[Any, ...], str]


# ----------------------------------------------------------------------------- files

def find_case_files(paths: Iterable[str | Path]) -> tuple[list[Path], list[ConfigIssue]]:
    """Expand files and directories (recursive *.yaml / *.yml), sorted, no duplicates."""
    files: list[Path] = []
    issues: list[ConfigIssue] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(q for q in path.rglob("*") if q.suffix in (".yaml", ".yml") and q.is_file())
            if not found:
                issues.append(ConfigIssue(str(path), None, "", "directory holds no *.yaml or *.yml case files"))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            issues.append(ConfigIssue(str(path), None, "", "no such file or directory"))
    seen: set[Path] = set()
    unique = []
    for f in files:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique, issues


def _case_nodes(file: str, tree: Any) -> tuple[list[CommentedMap], list[ConfigIssue]]:
    layout = "a case (mapping), a list of cases, or a mapping with a 'cases:' list"
    if tree is None:
        return [], [ConfigIssue(file, 1, "", f"file is empty; expected {layout}")]
    if isinstance(tree, CommentedMap) and "cases" in tree:
        extra = [k for k in tree if k != "cases"]
        issues = [ConfigIssue(file, line_of(tree, (k,)), str(k),
                              "a file with 'cases:' holds nothing else at top level; put the field inside each case")
                  for k in extra]
        items = tree["cases"]
        if not isinstance(items, CommentedSeq) or not items:
            return [], [*issues, ConfigIssue(file, line_of(tree, ("cases",)), "cases",
                                             "'cases' must be a non-empty list of case mappings")]
        tree = items
    if isinstance(tree, CommentedMap):
        return [tree], []
    if isinstance(tree, CommentedSeq):
        nodes, issues = [], []
        for i, item in enumerate(tree):
            if isinstance(item, CommentedMap):
                nodes.append(item)
            else:
                issues.append(ConfigIssue(file, line_of(tree, (i,)), f"[{i}]",
                                          f"list item is a {type(item).__name__}, expected a case mapping"))
        if not tree:
            issues.append(ConfigIssue(file, 1, "", f"empty list; expected {layout}"))
        return nodes, issues
    return [], [ConfigIssue(file, 1, "", f"expected {layout}, found a {type(tree).__name__}")]


# ----------------------------------------------------------------------------- one case

def _set_dotted(data: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    cur = data
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value


def _fmt_value(v: Any) -> str:
    return v if isinstance(v, str) else repr(v)


def _resolve(data: dict, file: str, line: int, point: dict[str, Any]) -> tuple[Case | None, list[Err]]:
    """Validate one fully applied case dict; return the Case or every problem found."""
    try:
        m = CaseModel.model_validate(data)
    except ValidationError as e:
        schema_errs = pydantic_errors(e, CaseModel)
        return None, schema_errs + _semantic_after_repair(data, schema_errs)
    errs, thresholds, factor, timeout = _semantic(m)
    flowgraph, flowgraph_err = _flowgraph_path(m, file)
    errs += flowgraph_err
    if errs or factor is None:  # a missing divider is always among the errors
        return None, errs
    search, _ = _search_spec(m)
    if search is not None and getattr(m, search.key) is None:
        m = m.model_copy(update={search.key: search.values[-1]})   # the case's rate: the highest candidate
    t = m.transport
    fb = t.frame_bytes
    if t.kind == "udp":
        options = udp_defaults()
        if t.host is not None:
            options["host"] = t.host
        if t.port is not None:
            options["port"] = t.port
        if t.socket_buffer is not None:
            options["socket_buffer_bytes"] = t.socket_buffer
        for knob in ("gso", "gro", "busy_poll"):
            if getattr(t, knob) is not None:
                options[knob] = getattr(t, knob)
    elif t.kind == "usb":
        options, _ = usb_options(t.transfer_bytes, t.transfers, t.buffer_bytes, t.link)
    else:
        options = {"slots": t.slots if t.slots is not None else default_shm_slots(fb)}

    label = ", ".join(f"{k}={_fmt_value(v)}" for k, v in point.items())
    test_name = f"{m.name} [{label}]" if point else m.name
    case = Case(
        name=m.name, test_name=test_name, source_file=file, source_line=line,
        device=m.device, direction=m.direction, channels=m.channels, sample_format=m.format,
        master_clock_hz=m.master_clock, decimation=m.decimation, interpolation=m.interpolation,
        rate_sps=m.master_clock / factor,
        transport=TransportSpec(t.kind, fb, options),
        duration_s=m.duration, warmup_s=m.warmup, pattern=m.pattern,
        thresholds=tuple(thresholds), tags=tuple(m.tags), timeout_s=timeout,
        faults=m.faults.model_dump(), sweep_point=dict(point), raw=data, fifo_frames=m.fifo_frames,
        requires=_requires(m), stream_args=dict(m.stream_args),
        transport_args=(m.transport_args.model_dump(exclude_none=True) if m.transport_args else {}),
        host=m.host, expect_error=m.expect_error, flowgraph=flowgraph, search=search,
    )
    return case, []


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


def _requires(m: CaseModel) -> dict[str, Any]:
    """`requires:` in SI with plural keys (lists even when written as one value)."""
    r = m.requires
    if r is None:
        return {}
    out: dict[str, Any] = {}
    if r.channels is not None:
        out["channels"] = r.channels
    if r.direction is not None:
        out["directions"] = tuple(r.direction)
    if r.rate is not None:
        out["rate_sps"] = r.rate
    if r.transport is not None:
        out["transports"] = tuple(r.transport)
    return out


_SEARCH_KEYS = {"rx": ("decimation",), "tx": ("interpolation",),
                "loopback": ("decimation", "interpolation"), "rx+tx": ("decimation", "interpolation")}


def _search_spec(m: CaseModel) -> tuple[SearchSpec | None, list[Err]]:
    """`search:` resolved: its divider and the candidates from the lowest rate to the highest."""
    if m.search is None:
        return None, []
    given = [k for k in ("decimation", "interpolation") if getattr(m.search, k) is not None]
    allowed = _SEARCH_KEYS[m.direction]
    example = f"e.g. search: {{{allowed[0]}: [16, 14, 12, 10, 8, 6]}} or {{{allowed[0]}: {{from: 16, to: 6}}}}"
    if len(given) != 1:
        return None, [(("search",), f"a search varies one divider ({' or '.join(allowed)} for a {m.direction} case); "
                       + example)]
    key = given[0]
    if key not in allowed:
        return None, [(("search", key), f"a {m.direction} case sets its rate with {' or '.join(allowed)}, "
                       f"not {key}; " + example)]
    if getattr(m, key) is not None:
        return None, [((key,), f"the search sets {key}; leave {key} out of the case (the search tries "
                       "each candidate)")]
    raw = getattr(m.search, key)
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


def _semantic(m: CaseModel) -> tuple[list[Err], list, int | None, float]:
    """Checks across fields (direction vs divider, frame size vs format, thresholds)."""
    errs: list[Err] = []
    search_errs = _search_spec(m)[1]
    errs += search_errs
    key = next((k for k in ("decimation", "interpolation") if m.search and getattr(m.search, k) is not None), None)
    if key is not None and getattr(m, key) is None:
        # The other checks (rate bounds, faults, frame geometry) see the highest candidate.
        raw = getattr(m.search, key)
        highest = min(raw) if isinstance(raw, list) else min(raw.start, raw.end)
        m = m.model_copy(update={key: highest})
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
    for knob in (k for kind, knobs in _KNOBS.items() if kind != t.kind for k in knobs):
        if getattr(t, knob) is not None:
            errs.append((("transport", knob), f"'{knob}' is not a {t.kind} setting; "
                         f"{t.kind} takes: frame_bytes, {', '.join(own)}"))
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
    elif t.kind == "shm" and fb > SHM_MAX_FRAME_BYTES:
        errs.append((fpath, f"{fb} bytes is larger than the {SHM_MAX_FRAME_BYTES} bytes allowed for a shm slot"))
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
                    for knob, msg in usb_options(t.transfer_bytes, t.transfers, t.buffer_bytes, t.link)[1])
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

    timeout = m.timeout if m.timeout is not None else m.duration + m.warmup + DEFAULT_TIMEOUT_MARGIN_S
    if m.timeout is not None and m.timeout <= m.duration + m.warmup:
        errs.append((("timeout",), f"timeout {m.timeout:g} s would end the run before duration + warmup "
                     f"({m.duration + m.warmup:g} s); give more or leave it out "
                     f"(default duration + warmup + {DEFAULT_TIMEOUT_MARGIN_S:g} s)"))

    if m.direction == "rx+tx":
        injected = [k for k, v in m.faults.model_dump().items() if v and k not in ("seed", "die_after_ms")]
        if injected:
            errs.append((("faults",), f"{', '.join(injected)}: faults are injected on one stream; an rx+tx case "
                         "has two (run the fault case as rx or tx; die_after_ms applies)"))
    thresholds, threshold_errs = _thresholds(m)
    return errs + threshold_errs, thresholds, factor, timeout


def _thresholds(m: CaseModel) -> tuple[list, list[Err]]:
    """`thresholds:`; an rx+tx case may also hold per-direction blocks `rx: {...}` and
    `tx: {...}` (a plain metric key judges both directions)."""
    errs: list[Err] = []
    thresholds: list = []
    seen: dict[tuple[str | None, str], str] = {}   # (leg, metric) -> key as written
    entries: list[tuple[tuple, str | None, Any, Any]] = []
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
    faults = m.faults.model_dump()
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
_PLACEHOLDERS = {"name": "?", "device": "?", "direction": "loopback", "master_clock": "1 GHz",
                 "duration": "1 s", "transport": {"kind": "udp"}}


def _semantic_after_repair(data: dict, schema_errs: list[Err]) -> list[Err]:
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
        if len(loc) >= 2 and isinstance(repaired.get(top), dict) and top in ("transport", "faults"):
            repaired[top].pop(loc[1], None)
        else:
            repaired.pop(top, None)
    for key, value in _PLACEHOLDERS.items():
        if key not in repaired:
            repaired[key] = copy.deepcopy(value)
    if not isinstance(repaired.get("transport"), dict) or "kind" not in repaired["transport"]:
        repaired["transport"] = {"kind": "udp"}
        suppressed.add("transport")
    try:
        m = CaseModel.model_validate(repaired)
    except ValidationError:
        return []
    errs, _, _, _ = _semantic(m)
    return [(path, msg) for path, msg in errs if str(path[0]) not in suppressed]



def _sweep(file: str, node: CommentedMap, raw: Any) -> tuple[list[tuple[str, list, int]], list[ConfigIssue]]:
    """Validated sweep axes: (canonical dotted key, values, line)."""
    issues: list[ConfigIssue] = []
    axes: list[tuple[str, list, int]] = []
    if raw is None:
        return axes, issues
    if not isinstance(raw, dict) or not raw:
        return axes, [ConfigIssue(file, line_of(node, ("sweep",)), "sweep",
                                  "sweep must be a mapping of case field to a list of values, "
                                  "e.g. {decimation: [20, 10], transport.frame_bytes: [1400, 8000]}")]
    for key, values in raw.items():
        kline = line_of(node, ("sweep", key))
        field = f"sweep.{key}"
        canonical = "transport.frame_bytes" if key == "transport.frame_size" else str(key)
        if key not in SWEEP_KEYS:
            close = difflib.get_close_matches(str(key), SWEEP_KEYS, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'? " if close else ""
            issues.append(ConfigIssue(file, kline, field, f"'{key}' is not a case field a sweep can vary; "
                                      f"{hint}sweepable: {', '.join(SWEEP_KEYS)}"))
        elif not isinstance(values, list) or not values:
            issues.append(ConfigIssue(file, kline, field, "needs a non-empty list of values, e.g. [20, 10, 4]"))
        elif any(isinstance(v, (dict, list)) for v in values):
            issues.append(ConfigIssue(file, kline, field, "sweep values must be plain values (numbers or strings)"))
        elif len({repr(v) for v in values}) != len(values):
            dup = sorted({_fmt_value(v) for v in values if values.count(v) > 1})
            issues.append(ConfigIssue(file, kline, field, f"value(s) {', '.join(dup)} listed twice; "
                                      "each sweep point must be distinct"))
        elif any(a[0] == canonical for a in axes):
            issues.append(ConfigIssue(file, kline, field, f"{canonical} is swept twice (frame_size is an alias "
                                      "of frame_bytes)"))
        else:
            axes.append((canonical, list(values), kline))
    return axes, issues


def _expand_case(file: str, node: CommentedMap) -> tuple[list[Case], list[ConfigIssue]]:
    plain = to_plain(node)
    case_line = line_of(node, ()) if node else 1
    issues: list[ConfigIssue] = []
    tr = plain.get("transport")
    if isinstance(tr, dict) and "frame_size" in tr:
        if "frame_bytes" in tr:
            issues.append(ConfigIssue(file, line_of(node, ("transport", "frame_size")), "transport.frame_size",
                                      "give frame_bytes or its alias frame_size, not both"))
            tr.pop("frame_size")
        else:
            tr["frame_bytes"] = tr.pop("frame_size")
    axes, sweep_issues = _sweep(file, node, plain.pop("sweep", None))
    issues += sweep_issues
    keys = [a[0] for a in axes]
    key_line = {a[0]: a[2] for a in axes}
    sweep_line = line_of(node, ("sweep",))
    points = [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(a[1] for a in axes))] or [{}]

    results: list[tuple[dict, Case | None, list[Err]]] = []
    for point in points:
        data = copy.deepcopy(plain)
        for k, v in point.items():
            _set_dotted(data, k, v)
        case, errs = _resolve(data, file, case_line, point)
        results.append((point, case, errs))

    # An error every point shares is the base case's error: say it once, at its own line.
    # One only some points have is a bad combination: name the point and the sweep line.
    counts: dict[tuple, int] = {}
    for _, _, errs in results:
        for path, msg in dict.fromkeys(errs):
            counts[(path, msg)] = counts.get((path, msg), 0) + 1
    reported: set[tuple] = set()
    for point, _, errs in results:
        for path, msg in errs:
            field = dotted(path)
            swept = next((k for k in keys if field == k or field.startswith(k + ".")), None)
            own_line = line_of(node, path, _ALIASES)
            if counts[(path, msg)] == len(points):
                if (path, msg) in reported:
                    continue
                reported.add((path, msg))
                line = key_line[swept] if swept and len(points) > 1 else own_line
                issues.append(ConfigIssue(file, line, field, msg))
            else:
                label = ", ".join(f"{k}={_fmt_value(v)}" for k, v in point.items())
                line = key_line[swept] if swept else sweep_line
                where = "" if swept or own_line == line else f" ({field} is at line {own_line})"
                issues.append(ConfigIssue(file, line, field, f"sweep point [{label}]: {msg}{where}"))
    if issues:
        return [], issues
    return [c for _, c, _ in results if c is not None], []


def load_file(path: str | Path) -> tuple[list[Case], list[ConfigIssue]]:
    """All cases of one file, or no case and every issue of the file. Never raises:
    a problem this loader did not foresee still comes back as an issue of the file."""
    try:
        return _load_file(path)
    except Exception as exc:  # noqa: BLE001  the last net: a located error, never a traceback
        return [], [ConfigIssue(str(path), None, "", f"{UNFORESEEN}: {type(exc).__name__}: {exc}")]


UNFORESEEN = "hilrig could not check this file (please report it)"


def _load_file(path: str | Path) -> tuple[list[Case], list[ConfigIssue]]:
    file = str(path)
    src, issues = load_yaml(path)
    if src is None:
        return [], issues
    nodes, issues = _case_nodes(file, src.tree)
    cases: list[Case] = []
    for node in nodes:
        got, node_issues = _expand_case(file, node)
        cases += got
        issues += node_issues
    if issues:
        return [], sorted(issues, key=lambda i: (i.line or 0, i.field))
    return cases, []


# ----------------------------------------------------------------------------- public API

def validate_paths(paths: Sequence[str | Path] | str | Path) -> tuple[list[Case], list[ConfigIssue]]:
    """Every case of every file, and every issue (across files) instead of raising."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files, issues = find_case_files(paths)
    per_file: list[tuple[str, list[Case], list[ConfigIssue]]] = []
    for f in files:
        cases, file_issues = load_file(f)
        per_file.append((str(f), cases, file_issues))
    # Robot runs cases by name, results are keyed by it: a test name must be unique.
    first: dict[str, Case] = {}
    for i, (file, cases, _file_issues) in enumerate(per_file):
        dups = []
        for c in cases:
            prev = first.get(c.test_name)
            if prev is not None:
                dups.append(ConfigIssue(file, c.source_line, "name",
                                        f"test name {c.test_name!r} is already used at {prev.location}; "
                                        "every case and sweep point needs a unique name"))
            else:
                first[c.test_name] = c
        if dups:
            # dict.fromkeys: one issue per duplicated name even if several points clash.
            per_file[i] = (file, [], list(dict.fromkeys(dups)))
    all_cases: list[Case] = []
    for _, cases, file_issues in per_file:
        all_cases += cases
        issues += file_issues
    return all_cases, issues


def load_cases(paths: Sequence[str | Path] | str | Path) -> list[Case]:
    """Every case (sweeps expanded) of the files/directories; ConfigError with all issues if any."""
    cases, issues = validate_paths(paths)
    if issues:
        raise ConfigError(issues)
    return cases


def validate_command(paths: Sequence[str], out=None) -> int:
    """`hilrig validate`: print every issue as file:line: field: message; 0 if clean, 2 if not."""
    out = out or sys.stdout
    if not paths:
        paths = ["testcases"]
    cases, issues = validate_paths(list(paths))
    for issue in issues:
        print(str(issue), file=out)
    if issues:
        bad_files = len({i.file for i in issues})
        print(f"FAILED: {len(issues)} problem(s) in {bad_files} file(s); nothing will run until they are fixed",
              file=out)
        return ConfigError.exit_code
    defs = {(c.source_file, c.source_line) for c in cases}
    swept = [c for c in cases if c.sweep_point]
    sweeps = {(c.source_file, c.source_line) for c in swept}
    files = {c.source_file for c in cases}
    print(f"OK: {len(files)} file(s), {len(defs)} case(s), {len(sweeps)} sweep(s) with {len(swept)} point(s), "
          f"{len(cases)} run(s) in total", file=out)
    for c in cases:
        print(f"  {c.test_name}: {c.direction} {c.transport.kind} {format_quantity(c.rate_sps, 'rate')} "
              f"x{c.channels} frame {c.transport.frame_bytes} B, {c.duration_s:g} s{_search_note(c)}  ({c.location})",
              file=out)
    searches = [c for c in cases if c.search is not None]
    if searches:
        from hostlib.selection import estimated_seconds  # the engine's own estimate (sim set-up per run)
        print(f"  {len(searches)} rate search(es): about {estimated_seconds(searches):.0f} s on the simulator",
              file=out)
    return 0


def _search_note(c: Case) -> str:
    """', search decimation 16..6 (6 candidates, <=3 steps of 0.5 s, ~7 s)' for validate's run list."""
    if c.search is None:
        return ""
    from hostlib.engine.search import estimated_seconds, step_count
    s = c.search
    return (f", search {s.key} {s.values[0]}..{s.values[-1]} ({len(s.values)} candidates, "
            f"<={step_count(len(s.values))} steps of {s.step_s:g} s, then confirmed; "
            f"~{estimated_seconds(c, 1.0):.0f} s)")
