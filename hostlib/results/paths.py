"""Where a run's results go: the rig file's `results:` section, else results/ under the cwd."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..rig import Rig

DEFAULT_OUTBOX = Path("results/outbox")
DEFAULT_EVIDENCE = Path("results/evidence")


def results_dirs(rig: Rig | None = None, cwd: str | Path | None = None) -> tuple[Path, Path]:
    """(outbox dir, evidence dir). Relative paths count from `cwd` (default: the process cwd),
    the directory `robot testcases/` or `hilrig run` is started from."""
    section = rig.results if rig is not None else {}
    base = Path(cwd) if cwd is not None else Path.cwd()
    outbox = Path(section.get("outbox") or DEFAULT_OUTBOX)
    evidence = Path(section.get("evidence") or DEFAULT_EVIDENCE)
    return (base / outbox).resolve(), (base / evidence).resolve()
