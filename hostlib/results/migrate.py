"""Reading evidence files: the current format as it is, hilrig-evidence/1 through one migration.

Format 1 (written until the schema was typed) differs from format 2 in three places, each
rewritten here once, so no reader ever sees the old shapes:

* an rx+tx case's per-leg metrics were '<leg>.<name>' keys among its metrics: they move to
  `legs[leg]`, and a threshold's '<leg>.' prefix to its `leg`;
* a threshold had `text` (the expression, sometimes with the metric in front) and
  `passed`/`marginal` flags: it gets `op`, `limit_text`, `relative_to` and a `verdict`;
* the reasons for a FAIL or a marginal pass were only in the message: `failed` and
  `marginal` are made from the thresholds.

Old files stay readable because labs compare runs across an upgrade (`hilrig report
--compare old new`); a format this hilrig does not know is a ConfigError naming the file.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import JsonValue, ValidationError

from .._exceptions import ConfigError
from ..verdicts import ThresholdResult, Verdict
from .schema import EVIDENCE_FORMAT, EvidenceRun
from .verdict import threshold_reason

FORMAT_V1 = "hilrig-evidence/1"
LEGS = ("rx", "tx")
_EXPR = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(.*?)\s*$")
_OF_PARAM = re.compile(r"%\s*of\s+([A-Za-z_][A-Za-z0-9_]*)\s*$")

JsonObject = dict[str, JsonValue]


def load_evidence(path: str | Path) -> EvidenceRun:
    """Read one evidence file (any format this hilrig knows); a missing, malformed or
    unknown file is a ConfigError naming it and what is wrong."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such evidence file") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the evidence file: {exc}") from exc
    return evidence_from_doc(doc, str(path))


def evidence_from_doc(doc: JsonValue, where: str = "evidence") -> EvidenceRun:
    """An EvidenceRun from a parsed evidence document, migrating format 1."""
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise ConfigError(f"{where}: not a hilrig evidence file (no 'cases' list; format {fmt!r})")
    if fmt == FORMAT_V1:
        try:
            doc = migrate_v1(doc)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    elif fmt != EVIDENCE_FORMAT:
        raise ConfigError(f"{where}: evidence format {fmt!r} is not one this hilrig reads "
                          f"({FORMAT_V1!r} or {EVIDENCE_FORMAT!r}); a newer hilrig wrote it?")
    try:
        return EvidenceRun.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{where}: not a valid {EVIDENCE_FORMAT} file: {at}: {first['msg']} "
                          f"({exc.error_count()} problem(s))") from None


def migrate_v1(doc: JsonObject) -> JsonObject:
    """A format 1 document rewritten as format 2 (see the module doc)."""
    cases = doc.get("cases")
    out = {k: v for k, v in doc.items() if k not in ("format", "cases", "tally")}
    out["format"] = EVIDENCE_FORMAT
    out["cases"] = [_case_v1(c) for c in cases if isinstance(c, dict)] if isinstance(cases, list) else []
    return out


def _case_v1(case: JsonObject) -> JsonObject:
    out: JsonObject = {k: v for k, v in case.items() if v is not None}
    resolved = case.get("case")
    if isinstance(resolved, dict):
        out["case"] = {k: v for k, v in resolved.items() if v is not None}
    metrics = case.get("metrics")
    if isinstance(metrics, dict):
        legs: dict[str, JsonObject] = {}
        own: JsonObject = {}
        for name, value in metrics.items():
            leg, _, base = name.partition(".")
            if base and leg in LEGS:
                legs.setdefault(leg, {})[base] = value
            else:
                own[name] = value
        out["metrics"], out["legs"] = own, dict(legs)
    raw = case.get("thresholds")
    thresholds = [_threshold_v1(t) for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []
    out["thresholds"] = [t.model_dump(mode="json") for t in thresholds]
    out["failed"] = [threshold_reason(t) for t in thresholds if t.verdict is Verdict.FAIL]
    out["marginal"] = [threshold_reason(t) for t in thresholds if t.verdict is Verdict.MARGINAL]
    return out


def _threshold_v1(t: JsonObject) -> ThresholdResult:
    name, text = str(t.get("metric") or ""), str(t.get("text") or "")
    leg, _, base = name.partition(".")
    metric, leg_name = (base, leg) if base and leg in LEGS else (name, None)
    for prefix in (name, metric):  # the text was written with or without the metric in front
        if prefix and text.startswith(prefix + " "):
            text = text[len(prefix):]
            break
    m = _EXPR.match(text)
    if m is None:
        raise ConfigError(f"threshold {name} {text!r} of a {FORMAT_V1} file has no comparison")
    of = _OF_PARAM.search(m.group(2))
    verdict = Verdict.FAIL if not t.get("passed") else Verdict.MARGINAL if t.get("marginal") else Verdict.PASS
    return ThresholdResult.model_validate({
        "metric": metric, "leg": leg_name, "op": m.group(1), "limit_text": m.group(2),
        "relative_to": of.group(1) if of else None, "measured": t.get("measured"), "limit": t.get("limit"),
        "margin": t.get("margin"), "verdict": verdict, "note": t.get("message") or "",
    })
