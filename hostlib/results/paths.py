"""Where a run's results go: the rig file's `results:` section, else results/ under the cwd."""
from __future__ import annotations

from pathlib import Path
from typing import Any

DEFAULT_OUTBOX = Path("results/outbox")
DEFAULT_EVIDENCE = Path("results/evidence")


def _setting(section: Any, key: str) -> Any:
    if section is None:
        return None
    if isinstance(section, dict):
        return section.get(key)
    return getattr(section, key, None)


def results_dirs(rig: Any = None, cwd: str | Path | None = None) -> tuple[Path, Path]:
    """(outbox dir, evidence dir). Relative paths count from `cwd` (default: the process cwd),
    the directory `robot testcases/` or `hilrig run` is started from."""
    section = getattr(rig, "results", None) if rig is not None else None
    if section is None and isinstance(rig, dict):
        section = rig.get("results")
    base = Path(cwd) if cwd is not None else Path.cwd()
    outbox = Path(_setting(section, "outbox") or DEFAULT_OUTBOX)
    evidence = Path(_setting(section, "evidence") or DEFAULT_EVIDENCE)
    return (base / outbox).resolve(), (base / evidence).resolve()
