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
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Selection", "case_tags", "estimated_seconds"]

# What a case costs beyond its measured window: driver open, simulator start, first data,
# stop and drain (measured on the sim rig: 0.3-0.8 s; a USRP's open adds a few seconds).
SETUP_OVERHEAD_S = {"sim": 1.0, "soapy": 2.0, "uhd": 5.0}


def case_tags(case: Any) -> list[str]:
    """The tags of a case as every front-end shows and selects them."""
    return [
        f"device:{case.device}",
        f"transport:{case.transport.kind}",
        f"direction:{case.direction}",
        *[str(t) for t in (case.tags or ())],
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

    def matches(self, case: Any) -> bool:
        return self.name_matches(case.test_name) and self.tags_match(case_tags(case))

    def apply(self, cases: Sequence[Any]) -> list[Any]:
        return [c for c in cases if self.matches(c)]

    def describe(self) -> str:
        parts = [f"name {' | '.join(self.names)}" if self.names else "",
                 f"include {' | '.join(self.include)}" if self.include else "",
                 f"exclude {' | '.join(self.exclude)}" if self.exclude else ""]
        return ", ".join(p for p in parts if p) or "everything"


def estimated_seconds(cases: Sequence[Any], rig: Any = None) -> float:
    """Wall time the cases take on `rig`: warm-up + duration + set-up per case."""
    total = 0.0
    for case in cases:
        entry = (getattr(rig, "devices", None) or {}).get(case.device) if rig is not None else None
        overhead = SETUP_OVERHEAD_S.get(getattr(entry, "driver", "sim"), 1.0)
        total += float(case.warmup_s) + float(case.duration_s) + overhead
    return total
