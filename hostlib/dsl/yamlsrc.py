"""YAML with line numbers, and pydantic errors turned into ConfigIssues at those lines.

ruamel.yaml's round-trip loader keeps the position of every key and item; the
schema is validated on plain data (pydantic v2) and each error location (a path
of keys) is walked back through the ruamel tree to the line the author wrote.
Shared by the case loader (hostlib.dsl) and the rig loader (hostlib.rig).
"""
from __future__ import annotations

import difflib
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Iterable, Sequence, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from hostlib._exceptions import ConfigIssue

__all__ = ["Source", "load_yaml", "line_of", "to_plain", "pydantic_errors", "pydantic_issues", "dotted",
           "unknown_key_message"]

Path_ = tuple[Any, ...]


class Source:
    """One loaded YAML file: its name for messages, its ruamel tree and plain data."""

    def __init__(self, file: str, tree: Any):
        self.file = file
        self.tree = tree

    def line(self, path: Sequence[Any], base: Any = None) -> int:
        return line_of(self.tree if base is None else base, path)


def load_yaml(path: str | Path) -> tuple[Source | None, list[ConfigIssue]]:
    """Parse `path`; on a syntax error return (None, [issue at the error's line])."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return None, [ConfigIssue(file, None, "", f"cannot read: {e}")]
    yaml = YAML(typ="rt")
    try:
        tree = yaml.load(text)
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        what = " ".join(x for x in (e.context, e.problem) if x)
        # ruamel's duplicate-key text is long and multi-line; the first line says it all.
        what = what.splitlines()[0] if what else "invalid YAML"
        hint = ("each key may appear once in a mapping" if "duplicate key" in what
                else "check indentation and that 'key: value' pairs line up")
        return None, [ConfigIssue(file, line, "", f"YAML syntax error: {what} ({hint})")]
    except YAMLError as e:
        return None, [ConfigIssue(file, None, "", f"YAML error: {e}")]
    return Source(file, tree), []


def _key_line(node: Any, key: Any) -> int | None:
    try:
        if isinstance(node, CommentedMap):
            return node.lc.key(key)[0] + 1
        if isinstance(node, CommentedSeq):
            return node.lc.item(key)[0] + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return None


def _node_line(node: Any) -> int | None:
    lc = getattr(node, "lc", None)
    if lc is not None and getattr(lc, "line", None) is not None:
        return lc.line + 1
    return None


def line_of(tree: Any, path: Sequence[Any], aliases: dict[str, str] | None = None) -> int:
    """Line (1-based) of the deepest part of `path` that exists in `tree`.

    A missing key reports the line of the mapping that should hold it, so that
    "missing field" errors point at the case that lacks it.
    """
    aliases = aliases or {}
    node = tree
    line = _node_line(tree) or 1
    for part in path:
        key = part
        if isinstance(node, CommentedMap) and key not in node and aliases.get(key) in node:
            key = aliases[key]
        if isinstance(node, CommentedMap) and key in node:
            line = _key_line(node, key) or line
            node = node[key]
        elif isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node):
            line = _key_line(node, key) or line
            node = node[key]
        else:
            break
    return line


def to_plain(node: Any) -> Any:
    """ruamel tree -> plain dict/list/str/int/float (what pydantic and the Case.raw get)."""
    if isinstance(node, dict):
        return {str(k) if not isinstance(k, (int, float, bool)) else k: to_plain(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [to_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def dotted(path: Iterable[Any]) -> str:
    return ".".join(str(p) for p in path)


def _unwrap(ann: Any) -> Any:
    """Strip Annotated[...] and Optional[...] down to the type that holds the data."""
    while True:
        origin = get_origin(ann)
        if origin is Annotated:
            ann = get_args(ann)[0]
        elif origin in (Union, UnionType):
            rest = [a for a in get_args(ann) if a is not type(None)]
            if len(rest) != 1:
                return ann
            ann = rest[0]
        else:
            return ann


def _model_fields(model: type[BaseModel], path: Sequence[Any]) -> list[str]:
    """Field names of the sub-model at `path` (through dicts and lists), for 'did you mean' hints."""
    cur: Any = model
    for part in path:
        cur = _unwrap(cur)
        if get_origin(cur) in (dict, list):
            cur = get_args(cur)[-1]   # the key or index selects a value of the container
            continue
        fields = getattr(cur, "model_fields", None)
        if not fields or part not in fields:
            return []
        cur = fields[part].annotation
    cur = _unwrap(cur)
    fields = getattr(cur, "model_fields", {})
    return [f.alias or name for name, f in fields.items()]


# Keys people write for a field that has another name here: suggested by meaning, not spelling.
MEANT = {
    "rate": ("decimation", "master_clock"), "sample_rate": ("decimation", "master_clock"),
    "samp_rate": ("decimation", "master_clock"), "samplerate": ("decimation", "master_clock"),
    "sampling_rate": ("decimation", "master_clock"), "bandwidth": ("decimation", "master_clock"),
    "tx_rate": ("interpolation", "master_clock"), "clock": ("master_clock",), "mcr": ("master_clock",),
    "frame_size": ("frame_bytes",), "packet_size": ("frame_bytes",), "datagram_size": ("frame_bytes",),
    "mtu": ("frame_bytes",), "spp": ("frame_bytes",), "time": ("duration",), "length": ("duration",),
    "runtime": ("duration",), "seconds": ("duration",), "warm_up": ("warmup",), "settle": ("warmup",),
    "limits": ("thresholds",), "checks": ("thresholds",), "pass": ("thresholds",), "criteria": ("thresholds",),
    "interface": ("transport",), "link": ("transport",), "nchan": ("channels",), "num_channels": ("channels",),
    "dir": ("direction",), "mode": ("direction",), "radio": ("device",), "dut": ("device",),
    "sample_format": ("format",), "cpu_format": ("format",), "otw_format": ("format",), "labels": ("tags",),
    "fault": ("faults",), "inject": ("faults",), "parameters": ("sweep",), "matrix": ("sweep",),
}


def unknown_key_message(key: str, allowed: list[str]) -> str:
    meant = [k for k in MEANT.get(str(key).lower().replace("-", "_"), ()) if k in allowed]
    close = meant or difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    return f"unknown field '{key}'; {hint}allowed here: {', '.join(allowed)}"


def pydantic_errors(err: ValidationError, model: type[BaseModel]) -> list[tuple[Path_, str]]:
    """Each pydantic error as (location path, message saying what is allowed)."""
    out: list[tuple[Path_, str]] = []
    for e in err.errors(include_url=False):
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        kind = e["type"]
        if kind == "extra_forbidden":
            msg = unknown_key_message(str(loc[-1]), _model_fields(model, loc[:-1]))
        elif kind == "missing":
            msg = "required field is missing"
        elif kind in ("value_error", "assertion_error") and "error" in e.get("ctx", {}):
            msg = str(e["ctx"]["error"])
        else:
            msg = e["msg"]
            if "input" in e and not isinstance(e["input"], (dict, list)):
                msg = f"{msg} (got {e['input']!r})"
        out.append((loc, msg))
    return out


def pydantic_issues(
    err: ValidationError,
    model: type[BaseModel],
    file: str,
    tree: Any,
    *,
    prefix: Path_ = (),
    aliases: dict[str, str] | None = None,
) -> list[ConfigIssue]:
    """Each pydantic error as a ConfigIssue at the YAML line of its location."""
    return [ConfigIssue(file, line_of(tree, prefix + loc, aliases), dotted(prefix + loc), msg)
            for loc, msg in pydantic_errors(err, model)]
