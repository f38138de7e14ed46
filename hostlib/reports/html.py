"""The per-run HTML report: one offline file (Jinja2 templates in reports/templates, inline SVG).

    write_run_report(evidence_path) -> Path      # results/reports/<run_id>.html by default
    case_log_html(case)                          # the fragment Robot's log.html shows per test
"""
from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import InfrastructureError
from .._installed import packaged_report_templates
from ..results.record import CaseResult
from ..results.schema import ResultRecord
from ..results.verdict import BLOCK_COLUMNS, STUDY_COLUMNS, block_rows, study_table_rows
from ..verdicts import Verdict
from . import plots, rf, tables
from .model import CaseView, RunView, finite, load_run
from .tables import axis_label, key_metric_rows, sweeps, threshold_rows

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

    from .compare import Comparison


def templates_dir() -> Path:
    """The packaged reports/templates ($HILRIG_REPORT_TEMPLATES overrides)."""
    return Path(os.environ.get("HILRIG_REPORT_TEMPLATES") or packaged_report_templates())


_env: jinja2.Environment | None = None


def environment() -> jinja2.Environment:
    global _env
    if _env is None:
        import jinja2

        d = templates_dir()
        if not d.is_dir():
            raise InfrastructureError(f"report templates not found in {d} "
                                      "(build the package: make build, or set HILRIG_REPORT_TEMPLATES)")
        _env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(d)), autoescape=True,
                                  undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        _env.filters["verdict_class"] = verdict_class
        _env.filters["axis_label"] = axis_label
    return _env


def verdict_class(verdict: Verdict) -> str:
    """The CSS class of a verdict: pass, marginal, fail, error, skip."""
    return verdict.value.lower()


def default_report_path(evidence_path: Path, run_id: str) -> Path:
    """results/evidence/<id>.json -> results/reports/<id>.html (beside the outbox and evidence)."""
    return evidence_path.resolve().parent.parent / "reports" / f"{run_id}.html"


def _wall(run: RunView) -> str:
    if run.evidence.ended_utc is None:
        return "-"
    try:
        a = _dt.datetime.fromisoformat(run.evidence.started_utc)
        b = _dt.datetime.fromisoformat(run.evidence.ended_utc)
    except ValueError:
        return "-"
    s = (b - a).total_seconds()
    return f"{s:.1f} s" if s < 120 else f"{int(s // 60)} min {s % 60:.0f} s"


def rig_devices(run: RunView) -> list[dict[str, str | int]]:
    """Devices of the rig file as used (alias, driver, serial, args), plus the drivers the cases met."""
    from ruamel.yaml import YAML, YAMLError

    text = run.rig.text or ""
    try:
        doc = YAML(typ="safe").load(text) if text else {}
    except YAMLError:
        doc = {}
    out = []
    for alias, entry in ((doc or {}).get("devices") or {}).items():
        entry = entry if isinstance(entry, dict) else {}
        args = entry.get("args")
        out.append({"alias": alias, "driver": entry.get("driver", ""), "serial": entry.get("serial") or "",
                    "args": ", ".join(f"{k}={v}" for k, v in args.items()) if isinstance(args, dict) else (args or ""),
                    "used": sum(1 for c in run.cases if c.record.device == alias)})
    return out


def sigmf_href(case: CaseView, evidence_dir: Path | None, report_dir: Path | None) -> str:
    """Where the case's SigMF recording is, as a link from the report (relative to its
    folder) or from Robot's log (a file URI); "" when it has none or the evidence folder is unknown."""
    if not case.record.rf_sigmf or evidence_dir is None:
        return ""
    path = (evidence_dir / case.record.rf_sigmf).resolve()
    return os.path.relpath(path, report_dir.resolve()) if report_dir is not None else path.as_uri()


def case_context(case: CaseView, *, with_series_plot: bool = True, evidence_dir: Path | None = None,
                 report_dir: Path | None = None) -> dict[str, object]:
    return {
        "view": case,
        "test_name": case.test_name,
        "anchor": case.anchor,
        "verdict": case.verdict,
        "label": case.label,
        "message": case.message,
        "error": case.record.error or "",
        "source": f"{case.case.source_file}:{case.case.source_line}",
        "key_metrics": key_metric_rows(case),
        "thresholds": threshold_rows(case),
        "other_metrics": sorted((k, v) for k, v in case.metrics.items()
                                if k not in {n for _, _, n in key_metric_rows(case)}),
        "series_plot": plots.series_plot(case) if with_series_plot else "",
        "block_columns": BLOCK_COLUMNS,
        "blocks": block_rows(case.record.blocks),
        "study_columns": STUDY_COLUMNS,
        "study": study_table_rows(case.record.study),   # measured, the models, the lab's figure
        "transport_info": dict(case.record.transport_info),   # the transport's text figures (tcp_congestion)
        "failure_second": plots.failure_second(case),
        # An RF case (docs/rf.md "Seeing it"): the truth beside each figure, the spectrum,
        # a modulated case's constellation, the SigMF recording of a failure's capture.
        "rf_truth": rf.truth_rows(case),
        "spectrum_plot": rf.spectrum_plot(case) if with_series_plot else "",
        "spectrum_caption": rf.spectrum_caption(case),
        "constellation_plot": rf.constellation_plot(case) if with_series_plot else "",
        "constellation_caption": rf.constellation_caption(case),
        "sigmf": case.record.rf_sigmf or "",
        "sigmf_href": sigmf_href(case, evidence_dir, report_dir),
    }


def build_context(run: RunView, *, links: dict[str, str] | None = None,
                  report_dir: Path | None = None) -> dict[str, object]:
    """`report_dir`: the folder the report is written to (links to SigMF recordings are relative to it)."""
    from ..results.verdict import format_metric

    ordered = sorted(run.cases, key=lambda c: (c.verdict.rank, c.index))
    evidence_dir = run.path.parent if run.path is not None else None
    sweep_blocks = []
    for sw in sweeps(run):
        for fixed, points in sw.facets:
            sweep_blocks.append({"sweep": sw, "fixed": fixed, "grids": sw.grids(points),
                                 "plot": plots.sweep_plot(sw, fixed, points), "n": len(points),
                                 # measured beside the truth the sweep moved (SNR, EVM beside theory)
                                 "truth_names": rf.sweep_truth(points), "truth_rows": rf.sweep_rows(sw, points),
                                 "truth_plot": rf.sweep_curve(sw, fixed, points)})
    return {
        "run": run,
        "run_id": run.run_id,
        "rig_name": run.rig.name or "",
        "rig_path": run.rig.path or "",
        "rig_sha256": (run.rig.sha256 or "")[:12],
        "devices": rig_devices(run),
        "versions": run.versions,
        "started": run.evidence.started_utc,
        "ended": run.evidence.ended_utc or "",
        "wall": _wall(run),
        "tally": run.tally(),
        "n_cases": len(run.cases),
        "failures": [c for c in ordered if c.failure],
        "cases": [case_context(c, evidence_dir=evidence_dir, report_dir=report_dir) for c in ordered],
        "sweeps": sweep_blocks,
        "places": run.places,
        "across_places": run.across_places() if len(run.places) > 1 else [],
        "place_versions": run.place_versions(),
        "usb_tables": tables.usb_tables(run),
        "usb_size": tables.usb_table_size,
        "rate_plot": plots.achieved_vs_requested(run.cases),
        "latency_plot": plots.latency_plot(run.cases),
        "links": links or {},
        "format_metric": format_metric,
        "finite": finite,
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


def render_run_report(run: RunView, *, links: dict[str, str] | None = None, report_dir: Path | None = None) -> str:
    return environment().get_template("run.html.j2").render(**build_context(run, links=links,
                                                                            report_dir=report_dir))


def write_run_report(evidence_path: str | Path, output: str | Path | None = None, *,
                     links: dict[str, str] | None = None) -> Path:
    """Render the run's evidence file into one offline HTML file and return its path.

    output: default results/reports/<run_id>.html beside the evidence folder. links: extra
    links shown in the header (e.g. {"Robot log": "../robot/log.html"}), relative to the report.
    Written atomically (tmp + rename): a reader never sees half a report.
    """
    evidence_path = Path(evidence_path)
    run = load_run(evidence_path)
    out = Path(output) if output else default_report_path(evidence_path, run.run_id)
    return write_text_atomic(out, render_run_report(run, links=links, report_dir=out.parent))


def case_log_html(result: CaseResult | ResultRecord, *, plots_inline: bool = True,
                  evidence_dir: Path | None = None) -> str:
    """The HTML fragment for one test in Robot's log.html: verdict line, key metrics first
    (compact table), the thresholds table (limit, margin, verdict), the per-second plot inline;
    an RF case's truth table, spectrum and constellation, and a link to its SigMF recording
    (in `evidence_dir`, the run's evidence folder). `result` is a CaseResult or its evidence record."""
    case = CaseView(result.to_record() if isinstance(result, CaseResult) else result, 0)
    ctx = case_context(case, with_series_plot=plots_inline, evidence_dir=evidence_dir)
    return environment().get_template("case_fragment.html.j2").render(c=ctx, verdict_class=verdict_class)


def write_text_atomic(out: Path, text: str) -> Path:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        raise InfrastructureError(f"cannot write the report {out}: {exc}") from exc
    return out


def write_compare_report(cmp: Comparison, output: str | Path) -> Path:
    """`hilrig report --compare A B --output F`: the comparison as one HTML file."""
    from .tables import KEY_LABELS

    text = environment().get_template("compare.html.j2").render(cmp=cmp, labels=KEY_LABELS)
    return write_text_atomic(Path(output), text)
