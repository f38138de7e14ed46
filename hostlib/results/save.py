"""Write one case result to every local sink, losing none because another failed."""
from __future__ import annotations

from typing import Any

from .record import CaseResult


def save_result(result: CaseResult, *, outbox: Any | None, evidence: Any | None) -> None:
    """Append to the outbox and add to the evidence file. Both are attempted even if
    the first fails (disk full, permissions); the first error is raised afterwards."""
    first_error: Exception | None = None
    for sink, write in ((outbox, "append"), (evidence, "add")):
        if sink is None:
            continue
        try:
            getattr(sink, write)(result)
        except Exception as exc:  # noqa: BLE001  re-raised below, after the other sink
            first_error = first_error or exc
    if first_error is not None:
        raise first_error
