"""Real objects for tests, built the way the product builds them.

A case comes through the real loader (YAML written to a file, then `load_file`), a rig
and its devices through the real inventory loader, a threshold result from a real
parsed threshold evaluated on metrics, a result as the `CaseResult` the engine fills.
So a test holds exactly what production code holds; no hand-made stand-ins.

Each area keeps its builders in its own section below ("# --- <area> builders").
"""
from __future__ import annotations

import atexit
import dataclasses
import itertools
import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from hostlib._exceptions import ConfigError
from hostlib.dsl.case import Case
from hostlib.dsl.loader import load_file
from hostlib.dsl.thresholds import ThresholdResult, parse_threshold
from hostlib.results.record import CaseResult, ErrorKind, Verdict
from hostlib.rig.inventory import DeviceEntry, Rig, load_rig

__all__ = [
    "RUN_ID", "case_result", "cases_from_yaml", "device_entry", "evaluated", "make_case", "make_rig",
]

# --- core builders

_DIR = Path(tempfile.mkdtemp(prefix="hilrig-factories-"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
_serial = itertools.count(1)

RUN_ID = "20261121T210000Z-abcdef"
STARTED_UTC = "2026-11-21T21:00:00.000+00:00"
ENDED_UTC = "2026-11-21T21:00:03.250+00:00"

# The divider every made-up case uses; the master clock follows from the rate asked for.
_DIVIDER = 20


def _write(text: str, suffix: str = ".yaml") -> Path:
    path = _DIR / f"f{next(_serial)}{suffix}"
    path.write_text(text)
    return path


def cases_from_yaml(text: str) -> list[Case]:
    """Every case (sweeps expanded) of one YAML case file's text, through the real loader.
    ConfigError with the loader's issues if the text is not a valid case file."""
    cases, issues = load_file(_write(text))
    if issues:
        raise ConfigError(issues)
    return cases


def make_case(test_name: str = "RX 10 MS/s udp", *, direction: str = "rx", kind: str = "udp",
              rate_sps: float = 10e6, channels: int = 1, frame_bytes: int = 8000, device: str = "dut",
              tags: Sequence[str] = ("smoke",), duration_s: float = 2.0, warmup_s: float = 0.5,
              thresholds: Mapping[str, object] | None = None, sweep: Mapping[str, object] | None = None,
              **fields: object) -> Case:
    """One real Case from the loader. `test_name` may carry a sweep label ("name [k=v]")
    or any text: the loader names the case by what precedes " [", the test keeps the
    whole name. `sweep` (one value per key) gives the case its sweep_point; `fields` are
    further YAML keys (faults, host, fifo_frames, ...), as a case file writes them."""
    divider_key = "interpolation" if direction == "tx" else "decimation"
    doc: dict[str, object] = {
        "name": test_name.split(" [")[0], "device": device, "direction": direction, "channels": channels,
        "format": "sc16", "master_clock": f"{rate_sps * _DIVIDER} Hz", divider_key: _DIVIDER,
        "transport": {"kind": kind, "frame_bytes": frame_bytes}, "duration": f"{duration_s} s",
        "warmup": f"{warmup_s} s", "tags": list(tags), "thresholds": dict(thresholds or {}), **fields,
    }
    if sweep:
        doc["sweep"] = {key: [value] for key, value in sweep.items()}
    (case,) = cases_from_yaml(json.dumps(doc))  # JSON is YAML: any name survives quoting
    return case if case.test_name == test_name else dataclasses.replace(case, test_name=test_name)


def make_rig(text: str | None = None, *, name: str = "unit", devices: Mapping[str, object] | None = None,
             results: Mapping[str, object] | None = None, require_devices: bool | None = None) -> Rig:
    """A real Rig through the inventory loader: from a rig file's text, or from its parts
    (default: one simulator `dut`)."""
    if text is None:
        doc: dict[str, object] = {
            "name": name,
            "devices": dict(devices) if devices is not None else {"dut": {"driver": "sim", "max_rate": "1 GS/s"}},
        }
        if results is not None:
            doc["results"] = dict(results)
        if require_devices is not None:
            doc["require_devices"] = require_devices
        text = json.dumps(doc)
    return load_rig(_write(text))


def device_entry(alias: str = "dut", **spec: object) -> DeviceEntry:
    """One real DeviceEntry through the inventory loader; `spec` is the rig file's entry
    (driver, max_rate, channels, directions, transports, args ...; default a simulator)."""
    entry = {"driver": "sim", "max_rate": "1 GS/s", **spec}
    return make_rig(devices={alias: entry}).devices[alias]


def evaluated(metric: str, spec: object, measured: float | None, case: Case | None = None) -> ThresholdResult:
    """A real ThresholdResult: `metric: spec` as a case file writes it (">= 99% of rate",
    {limit: ..., marginal: ...}), evaluated on `measured` (None: not measured)."""
    metrics = {} if measured is None else {metric: measured}
    threshold = parse_threshold(metric, spec)
    return threshold.evaluate(metrics, (case or make_case()).threshold_params())


def case_result(case: Case | None = None, *, verdict: Verdict | str = Verdict.PASS,
                metrics: Mapping[str, float] | None = None, thresholds: Sequence[ThresholdResult] = (),
                run_id: str = RUN_ID, series: Sequence[dict] | None = None, message: str = "",
                error: str | None = None, error_kind: ErrorKind | str | None = None,
                rig_name: str = "sim") -> CaseResult:
    """A CaseResult as the engine leaves it (metrics of a clean 10 MS/s run by default)."""
    case = case or make_case()
    return CaseResult(
        case=case, rig_name=rig_name, device=case.device, driver="sim", run_id=run_id,
        started_utc=STARTED_UTC, ended_utc=ENDED_UTC, verdict=Verdict(verdict), message=message,
        metrics=dict(metrics) if metrics is not None else {
            "throughput_sps": 10e6, "throughput_ratio": 1.0, "missing_frames": 0, "overruns": 0,
            "underruns": 0, "latency_p99_s": 0.00021, "dropped_samples": 0, "duration_s": 2.0,
        },
        thresholds=list(thresholds),
        series=list(series) if series is not None else [
            {"t_s": 1.0, "throughput_sps": 9.99e6, "missing_frames": 0},
            {"t_s": 2.0, "throughput_sps": 10.01e6, "missing_frames": 3},
        ],
        error=error, error_kind=ErrorKind(error_kind) if error_kind is not None else None,
    )


# --- py-results builders

def judged(case: Case, metrics: Mapping[str, float], **fields: object) -> CaseResult:
    """A CaseResult judged by the engine's own judge: thresholds evaluated on `metrics`,
    verdict, reasons (failed, marginal) and message as a run leaves them. The receiver saw
    samples (samples_received) unless `metrics` says otherwise; rx+tx: `legs=` each leg's."""
    from hostlib.engine.verdict import judge

    result = case_result(case, verdict=Verdict.ERROR, metrics={"samples_received": 1000.0, **metrics})
    for name, value in fields.items():
        setattr(result, name, value)
    judge(case, result)
    return result
