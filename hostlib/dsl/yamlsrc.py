"""YAML with line numbers, and pydantic errors turned into ConfigIssues at those lines.

ruamel.yaml's round-trip loader keeps the position of every key and item; the
schema is validated on plain data (pydantic v2) and each error location (a path
of keys) is walked back through the ruamel tree to the line the author wrote.
Shared by the case loader (hostlib.dsl) and the rig loader (hostlib.rig).
"""
from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import UnionType
from typing import Annotated, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, ReusedAnchorWarning, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError

from hostlib._exceptions import ConfigIssue

__all__ = [
    "Path_",
    "Source",
    "YamlValue",
    "dotted",
    "line_of",
    "load_yaml",
    "pydantic_errors",
    "pydantic_issues",
    "to_plain",
    "unknown_key_message",
]

# A location in a YAML tree: mapping keys and list indexes (pydantic's error locations).
Path_ = tuple[str | int, ...]
# Plain YAML data: what to_plain gives, what pydantic validates and what Case.raw holds.
YamlValue = str | int | float | bool | None | list["YamlValue"] | dict[str, "YamlValue"]


class Source:
    """One loaded YAML file: its name for messages, its ruamel tree and plain data."""

    def __init__(self, file: str, tree: object):
        self.file = file
        self.tree = tree

    def line(self, path: Sequence[object], base: object = None) -> int:
        return line_of(self.tree if base is None else base, path)


# Documented bounds of a YAML file (docs/dsl.md "Bounds"): far above any real case or
# rig file, far below what would exhaust the parser's recursion or expand aliases
# without end ("billion laughs").
MAX_NESTING = 32
MAX_VALUES = 10_000
_LONG_DIGITS = re.compile(r"[0-9]{4000,}")


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, max(pos, 0)) + 1


def load_yaml(path: str | Path) -> tuple[Source | None, list[ConfigIssue]]:
    """Parse `path`; on any problem return (None, [located issues]), never raise.

    Located means file:line, with the byte offset where the problem is a byte (invalid
    UTF-8, a control character). The parser's warnings never reach the console: a
    reused anchor is an error here (which of the two an alias means is a trap).
    """
    file = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return None, [ConfigIssue(file, None, "", f"cannot read: {e.strerror or e}")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, [ConfigIssue(file, data.count(b"\n", 0, e.start) + 1, "",
                                  f"byte offset {e.start}: byte 0x{data[e.start]:02x} is not valid UTF-8 "
                                  "(save the file as UTF-8)")]
    big = _LONG_DIGITS.search(text)
    if big:
        return None, [ConfigIssue(file, _line_at(text, big.start()), "",
                                  f"a number of {len(big.group())} digits; numbers this long are not accepted")]
    yaml = YAML(typ="rt")
    # No field is a date: a timestamp-looking scalar stays text (YAML 1.2 core schema
    # has no timestamps; ruamel's 1.1 one would raise on 2001-13-45 without a line).
    yaml.constructor.add_constructor("tag:yaml.org,2002:timestamp",
                                     lambda constructor, node: constructor.construct_scalar(node))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tree = yaml.load(text)
        except ReaderError as e:
            pos = int(e.position)
            offset = len(text[:pos].encode("utf-8"))
            char = e.character if isinstance(e.character, str) else chr(e.character)
            return None, [ConfigIssue(file, _line_at(text, pos), "",
                                      f"byte offset {offset}: character U+{ord(char):04X} is not allowed in YAML "
                                      "(control characters such as NUL; remove it)")]
        except MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            line = mark.line + 1 if mark is not None else None
            what = " ".join(str(x) for x in (e.context, e.problem) if x)
            # ruamel's duplicate-key text is long and multi-line; the first line says it all.
            what = what.splitlines()[0] if what else "invalid YAML"
            hint = ("each key may appear once in a mapping" if "duplicate key" in what
                    else "check indentation and that 'key: value' pairs line up")
            return None, [ConfigIssue(file, line, "", f"YAML syntax error: {what} ({hint})")]
        except RecursionError:
            return None, [ConfigIssue(file, _deepest_line(text), "",
                                      f"nested deeper than {MAX_NESTING} levels; "
                                      "a case or rig file is a few levels deep")]
        except (YAMLError, ValueError, TypeError, OverflowError) as e:
            # A value the constructor cannot build (e.g. a malformed timestamp); an error
            # with a position is a MarkedYAMLError, above.
            key_line = _complex_key_line(text)
            if key_line is not None:   # ruamel's TypeError "unhashable type" has no position
                return None, [ConfigIssue(file, key_line, "", "a mapping key is a list or a mapping "
                                          "(`? [...]` or `{...}: ...`); keys are plain names")]
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            return None, [ConfigIssue(file, None, "", f"YAML error: {first}")]
    issues = [_warning_issue(file, w.message) for w in caught if isinstance(w.message, ReusedAnchorWarning)]
    issues += _shape_issues(file, tree)
    if issues:
        return None, issues
    return Source(file, tree), []


def _warning_issue(file: str, warning: Warning | str) -> ConfigIssue:
    """A reused anchor (ruamel warns and lets the later one win) as a located error.
    The warning carries its marks only in its text: "... anchor 'a' ... line 1 ... line 5"."""
    text = str(warning)
    anchor = re.search(r"anchor '([^']*)'", text)
    lines = [int(n) for n in re.findall(r", line (\d+), column", text)]
    name = f"&{anchor.group(1)} " if anchor else ""
    earlier = f" (first at line {lines[0]})" if len(lines) > 1 else ""
    return ConfigIssue(file, lines[-1] if lines else None, "",
                       f"anchor {name}defined again{earlier}; give each anchor its own name")


def _complex_key_line(text: str) -> int | None:
    """Line of the first mapping key that is a list or a mapping, from the node graph
    (composed, not constructed: building such a key is what fails); None if none."""
    try:
        root = YAML(typ="rt").compose(text)
    except (YAMLError, RecursionError):
        return None
    seen: set[int] = set()   # aliases share nodes: each is walked once
    stack: list[Node] = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if not isinstance(key, ScalarNode):
                    return int(key.start_mark.line) + 1
                stack.append(value)
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return None


def _deepest_line(text: str) -> int | None:
    """Line where flow brackets or indentation nest deepest (where a RecursionError came from)."""
    depth, best, best_pos = 0, -1, 0
    for i, ch in enumerate(text):
        if ch in "[{":
            depth += 1
            if depth > best:
                best, best_pos = depth, i
        elif ch in "]}":
            depth -= 1
    indent = [(len(ln) - len(ln.lstrip(" -")), n) for n, ln in enumerate(text.splitlines(), 1) if ln.strip()]
    if indent and max(indent)[0] // 2 > best:
        return max(indent)[1]
    return _line_at(text, best_pos)


def _shape_issues(file: str, tree: object) -> list[ConfigIssue]:
    """Keys that are not names, nesting deeper than MAX_NESTING, more than MAX_VALUES
    values (aliases counted each time they are used): each a located issue."""
    issues: list[ConfigIssue] = []
    # (node, depth, path, line of the nearest key or item above it: a scalar has no line of its own)
    stack: list[tuple[object, int, tuple[object, ...], int]] = [(tree, 0, (), _node_line(tree) or 1)]
    values = 0
    while stack:
        node, depth, path, line = stack.pop()
        line = _node_line(node) or line
        values += 1
        if values > MAX_VALUES:
            return [ConfigIssue(file, line, dotted(path),
                                f"the file holds more than {MAX_VALUES} values (aliases counted where used); "
                                "a case or rig file is far smaller")]
        if isinstance(node, (dict, list)) and depth >= MAX_NESTING:
            return [ConfigIssue(file, line, dotted(path),
                                f"nested deeper than {MAX_NESTING} levels; a case or rig file is a few levels deep")]
        if isinstance(node, dict):
            for key, value in node.items():
                if not isinstance(key, str):
                    kind = "null" if key is None else type(key).__name__
                    issues.append(ConfigIssue(file, _key_line(node, key) or line, dotted(path),
                                              f"key {_short_repr(key)} is a {kind}; keys are field names "
                                              "(write the key as text, e.g. in quotes)"))
                    continue
                stack.append((value, depth + 1, (*path, key), _key_line(node, key) or line))
        elif isinstance(node, list):
            stack.extend((v, depth + 1, (*path, i), _key_line(node, i) or line) for i, v in enumerate(node))
        elif isinstance(node, (set, frozenset, bytes, bytearray)) or type(node).__name__.startswith("Tagged"):
            issues.append(ConfigIssue(file, line, dotted(path),
                                      f"a {type(node).__name__} value (YAML tag) is not accepted here; "
                                      "write plain text, numbers, lists and mappings"))
    return issues


def _short_repr(value: object) -> str:
    if value is None:
        return "null"
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**40 else "a huge integer"
    return text if len(text) <= 40 else text[:37] + "..."


def _key_line(node: object, key: object) -> int | None:
    try:
        if isinstance(node, CommentedMap):
            return node.lc.key(key)[0] + 1
        if isinstance(node, CommentedSeq):
            return node.lc.item(key)[0] + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        return None
    return None


def _node_line(node: object) -> int | None:
    if isinstance(node, (CommentedMap, CommentedSeq)) and node.lc.line is not None:
        return int(node.lc.line) + 1
    return None


def line_of(tree: object, path: Sequence[object], aliases: dict[str, str] | None = None) -> int:
    """Line (1-based) of the deepest part of `path` that exists in `tree`.

    A missing key reports the line of the mapping that should hold it, so that
    "missing field" errors point at the case that lacks it.
    """
    aliases = aliases or {}
    node = tree
    line = _node_line(tree) or 1
    for part in path:
        key = part
        alias = aliases.get(key) if isinstance(key, str) else None
        if isinstance(node, CommentedMap) and key not in node and alias is not None and alias in node:
            key = alias
        if (isinstance(node, CommentedMap) and key in node) or (
                isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node)):
            line = _key_line(node, key) or line
            node = node[key]
        else:
            break
    return line


def to_plain(node: object) -> YamlValue:
    """ruamel tree -> plain dict/list/str/int/float (what pydantic and the Case.raw get);
    keys are text (load_yaml refuses a file with another key)."""
    if isinstance(node, dict):
        return {str(k): to_plain(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [to_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return str(node)


def dotted(path: Iterable[object]) -> str:
    return ".".join(str(p) for p in path)


def _unwrap(ann: object) -> object:
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


def _model_of(ann: object) -> type[BaseModel] | None:
    return ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _model_fields(model: type[BaseModel], path: Sequence[object]) -> list[str]:
    """Field names of the sub-model at `path` (through dicts and lists), for 'did you mean' hints."""
    cur: object = model
    for part in path:
        cur = _unwrap(cur)
        if get_origin(cur) in (dict, list):
            cur = get_args(cur)[-1]   # the key or index selects a value of the container
            continue
        sub = _model_of(cur)
        if sub is None or not isinstance(part, str) or part not in sub.model_fields:
            return []
        cur = sub.model_fields[part].annotation
    sub = _model_of(_unwrap(cur))
    return [f.alias or name for name, f in sub.model_fields.items()] if sub is not None else []


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
                msg = f"{msg} (got {_short_repr(e['input'])})"
        out.append((loc, msg))
    return out


def pydantic_issues(
    err: ValidationError,
    model: type[BaseModel],
    file: str,
    tree: object,
    *,
    prefix: Path_ = (),
    aliases: dict[str, str] | None = None,
) -> list[ConfigIssue]:
    """Each pydantic error as a ConfigIssue at the YAML line of its location."""
    return [ConfigIssue(file, line_of(tree, prefix + loc, aliases), dotted(prefix + loc), msg)
            for loc, msg in pydantic_errors(err, model)]
