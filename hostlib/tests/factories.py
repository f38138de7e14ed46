"""Real objects for tests, built the way the product builds them.

A case comes through the real loader (YAML written to a file, then `load_file`), so a
test holds exactly what production code holds; no hand-made stand-ins.

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

__all__ = ["cases_from_yaml", "make_case"]

# --- core builders

_DIR = Path(tempfile.mkdtemp(prefix="hilrig-factories-"))
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
_serial = itertools.count(1)

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
