"""Load YAML case files into resolved Cases: file layouts, sweeps, unique names.

A file holds one case (a mapping), a list of cases, or a mapping with a
`cases:` list. Every problem of a file is collected (with its line) before
anything is returned; a file with any problem yields no case at all. One case is
checked and resolved by hostlib.dsl.resolve (its cross-field rules in
hostlib.dsl.semantics); the output of `hilrig validate` is hostlib.cli.validate's.
"""
from __future__ import annotations

import copy
import difflib
import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from hostlib._exceptions import ConfigError, ConfigIssue
from hostlib.dsl.case import Case, SweepValue, YamlValue
from hostlib.dsl.resolve import fmt_value, resolve_case
from hostlib.dsl.schema import SWEEP_KEYS
from hostlib.dsl.semantics import Err
from hostlib.dsl.yamlsrc import dotted, line_of, load_yaml, to_plain

__all__ = [
    "UNFORESEEN",
    "find_case_files",
    "load_cases",
    "load_file",
    "validate_paths",
]

_ALIASES = {"frame_bytes": "frame_size"}   # canonical -> alias, for finding lines
UNFORESEEN = "hilrig could not check this file (please report it)"


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


def _case_nodes(file: str, tree: object) -> tuple[list[CommentedMap], list[ConfigIssue]]:
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
        nodes: list[CommentedMap] = []
        issues = []
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


# ----------------------------------------------------------------------------- sweeps

def _set_dotted(data: dict[str, YamlValue], key: str, value: YamlValue) -> None:
    parts = key.split(".")
    cur = data
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = {}
            cur[part] = nxt
        cur = nxt
    cur[parts[-1]] = value


Axis = tuple[str, list[SweepValue], int]


def _sweep(file: str, node: CommentedMap, raw: YamlValue) -> tuple[list[Axis], list[ConfigIssue]]:
    """Validated sweep axes: (canonical dotted key, values, line)."""
    issues: list[ConfigIssue] = []
    axes: list[Axis] = []
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
            dup = sorted({fmt_value(v) for v in values if values.count(v) > 1})
            issues.append(ConfigIssue(file, kline, field, f"value(s) {', '.join(dup)} listed twice; "
                                      "each sweep point must be distinct"))
        elif any(a[0] == canonical for a in axes):
            issues.append(ConfigIssue(file, kline, field, f"{canonical} is swept twice (frame_size is an alias "
                                      "of frame_bytes)"))
        else:
            axes.append((canonical, [v for v in values if not isinstance(v, (dict, list))], kline))
    return axes, issues


def _expand_case(file: str, node: CommentedMap) -> tuple[list[Case], list[ConfigIssue]]:
    plain = to_plain(node)
    assert isinstance(plain, dict)   # _case_nodes gives mappings
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
    points: list[dict[str, SweepValue]] = [
        dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(a[1] for a in axes))] or [{}]

    results: list[tuple[dict[str, SweepValue], Case | None, list[Err]]] = []
    for point in points:
        data = copy.deepcopy(plain)
        for k, v in point.items():
            _set_dotted(data, k, v)
        case, errs = resolve_case(data, file, case_line, point)
        results.append((point, case, errs))

    # An error every point shares is the base case's error: say it once, at its own line.
    # One only some points have is a bad combination: name the point and the sweep line.
    counts: dict[Err, int] = {}
    for _, _, errs in results:
        for path, msg in dict.fromkeys(errs):
            counts[(path, msg)] = counts.get((path, msg), 0) + 1
    reported: set[Err] = set()
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
                label = ", ".join(f"{k}={fmt_value(v)}" for k, v in point.items())
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

