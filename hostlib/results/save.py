"""Write one case result to every local sink, losing none because another failed."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .record import CaseResult

if TYPE_CHECKING:  # pragma: no cover
    from .evidence import Evidence
    from .outbox import Outbox


def save_result(result: CaseResult, *, outbox: Outbox | None, evidence: Evidence | None) -> None:
    """Append to the outbox and add to the evidence file. Both are attempted even if
    the first fails (disk full, permissions); the first error is raised afterwards."""
    writers: list[Callable[[CaseResult], Path]] = []
    if outbox is not None:
        writers.append(outbox.append)
    if evidence is not None:
        writers.append(evidence.add)
    first_error: Exception | None = None
    for write in writers:
        try:
            write(result)
        except Exception as exc:  # noqa: BLE001  re-raised below, after the other sink
            first_error = first_error or exc
    if first_error is not None:
        raise first_error
