"""Result records and sinks: CaseResult, line protocol, outbox, evidence JSON, verdict views."""
from .evidence import Evidence, rig_snapshot
from .lineprotocol import (
    CASE_MEASUREMENT,
    RUN_MEASUREMENT,
    SERIES_MEASUREMENT,
    case_point,
    result_lines,
    run_point,
    series_points,
)
from .outbox import Outbox
from .paths import results_dirs
from .record import CaseResult, new_run_id
from .verdict import format_metric, render_verdict, summary_line, verdict_text
from .versions import git_sha, versions

__all__ = [
    "CASE_MEASUREMENT", "RUN_MEASUREMENT", "SERIES_MEASUREMENT", "CaseResult", "Evidence", "Outbox", "case_point",
    "format_metric", "git_sha", "new_run_id", "render_verdict", "result_lines",
    "results_dirs", "rig_snapshot", "run_point", "series_points", "summary_line", "verdict_text", "versions",
]
