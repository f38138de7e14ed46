"""Which cases a run takes: exact names (brackets and all), name globs, tag expressions.

One selection for every front-end (`hilrig run`, the Robot library, the pytest
plugin), so `--exclude reference` or a sweep point's bracketed name means the
same thing everywhere.

* names: a name selects the case whose test name equals it (case and space
  insensitive), so `RX sweep [decimation=4, transport.frame_bytes=1400]` is one
  sweep point. `*` and `?` are wildcards; `[` and `]` are always literal (a sweep
  point's name is never read as a character class).
* include / exclude: Robot's tag patterns (robot.model.TagPatterns): globs,
  `AND`, `OR`, `NOT` (`smoke`, `transport:*`, `rxANDudp`, `rx OR tx`,
  `sweepNOTreference`). A case is in when no include is given or any include
  matches, and no exclude matches.

A case's tags are `device:<alias>`, `transport:<kind>`, `direction:<dir>` and the
case's own `tags:`.

* opt-in: a case tagged `grid` (a long reference grid, e.g. the full published USB
  table) runs only when an include pattern names `grid` (`TAG:grid`, `--include grid`)
  or a name selects it; a plain run (`robot testcases/`, `make test`) leaves it out.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .dsl.case import Case

__all__ = ["Selection", "case_tags"]

OPT_IN_TAG = "grid"   # cases that run only when asked for by this tag (or by name)


def case_tags(case: Case) -> list[str]:
    """The tags of a case as every front-end shows and selects them."""
    return [
        f"device:{case.device}",
        f"transport:{case.transport.kind}",
        f"direction:{case.direction}",
        *case.tags,
    ]


def _normal(text: str) -> str:
    return " ".join(str(text).split()).lower()


def _name_regex(pattern: str) -> re.Pattern[str]:
    """* and ? are wildcards; everything else (brackets included) is literal."""
    parts = []
    for ch in _normal(pattern):
        parts.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
    return re.compile("".join(parts), re.DOTALL)


def _split(values: Iterable[str] | str | None) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    return tuple(v.strip() for v in values if v and v.strip())


@dataclass(frozen=True)
class Selection:
    names: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def of(cls, names: Iterable[str] | str | None = None, include: Iterable[str] | str | None = None,
           exclude: Iterable[str] | str | None = None) -> Selection:
        return cls(_split(names), _split(include), _split(exclude))

    def __bool__(self) -> bool:
        return bool(self.names or self.include or self.exclude)

    def name_matches(self, test_name: str) -> bool:
        if not self.names:
            return True
        name = _normal(test_name)
        return any(name == _normal(p) or _name_regex(p).fullmatch(name) for p in self.names)

    def tags_match(self, tags: Sequence[str]) -> bool:
        from robot.model import TagPatterns

        if self.include and not TagPatterns(self.include).match(tags):
            return False
        return not (self.exclude and TagPatterns(self.exclude).match(tags))

    def matches(self, case: Case) -> bool:
        if OPT_IN_TAG in case.tags and not self.names \
                and not any(OPT_IN_TAG in p.lower() for p in self.include):
            return False   # opt-in only (module docstring)
        return self.name_matches(case.test_name) and self.tags_match(case_tags(case))

    def apply(self, cases: Sequence[Case]) -> list[Case]:
        return [c for c in cases if self.matches(c)]

    def describe(self) -> str:
        parts = [f"name {' | '.join(self.names)}" if self.names else "",
                 f"include {' | '.join(self.include)}" if self.include else "",
                 f"exclude {' | '.join(self.exclude)}" if self.exclude else ""]
        return ", ".join(p for p in parts if p) or "everything"

