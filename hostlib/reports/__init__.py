"""Reports: the per-run HTML report, export, comparison, nightly trends with regression flags.

Reads what runs wrote (evidence JSON, outbox line protocol, InfluxDB); never runs anything.
"""
from .html import case_log_html, render_run_report, write_run_report
from .model import load_run

__all__ = ["case_log_html", "load_run", "render_run_report", "write_run_report"]
