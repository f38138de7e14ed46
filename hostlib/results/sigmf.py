"""A failing RF case's capture as a SigMF recording (docs/rf.md "SigMF recordings").

    meta_path = write_capture_sigmf(result, directory)   # <directory>/<case>.sigmf-meta + .sigmf-data

The data file holds the samples the analyzer saw, in the stream's sample format (sc16 as
`ci16_le`, sc8 as `ci8`: interleaved I, Q; hilrig's full scale, 32767 or 127, is 1.0), so
any SigMF tool opens it. The metadata holds the sample rate, the case and its run, the
verdict and why, and in the `hilrig` extension namespace (declared in `core:extensions`)
the channel's seed and spec, the signal, the injected truth and the measured figures.
No centre frequency (`core:frequency`): the simulator's signal is at baseband and a case
names no tuned frequency.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from .._exceptions import InfrastructureError
from .record import CaseResult, iso_utc, jsonable

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import numpy.typing as npt

__all__ = ["HILRIG_EXTENSION", "SIGMF_FORMATS", "write_capture_sigmf"]

HILRIG_EXTENSION = {"name": "hilrig", "version": "1.0.0", "optional": True}

# sample format -> (SigMF datatype, full scale, numpy type of one rail)
SIGMF_FORMATS: dict[str, tuple[str, int, str]] = {"sc16": ("ci16_le", 32767, "<i2"), "sc8": ("ci8", 127, "i1")}


def _file_stem(directory: Path, test_name: str) -> Path:
    """A file name for the case inside `directory`, not taken yet."""
    stem = re.sub(r"[^A-Za-z0-9._=-]+", "-", test_name).strip("-.") or "case"
    path, n = directory / stem, 1
    while path.with_suffix(".sigmf-meta").exists():
        n += 1
        path = directory / f"{stem}-{n}"
    return path


def _rails(samples: npt.NDArray[np.complex128], full_scale: int, rail: str) -> bytes:
    import numpy as np

    rails = np.empty(2 * len(samples), dtype=np.float64)
    rails[0::2], rails[1::2] = samples.real, samples.imag
    info = np.iinfo(np.dtype(rail))
    return np.clip(np.round(rails * full_scale), info.min, info.max).astype(rail).tobytes()


def write_capture_sigmf(result: CaseResult, directory: str | Path) -> Path:
    """Write `result`'s RF capture as a SigMF recording in `directory` and return the
    .sigmf-meta path. InfrastructureError when there is no capture or it cannot be written."""
    import jsonschema
    import sigmf

    capture, case, signal = result.rf_capture, result.case, result.case.signal
    if capture is None or signal is None:
        raise InfrastructureError(f"{result.case.test_name}: no RF capture to save")
    datatype, full_scale, rail = SIGMF_FORMATS[case.sample_format]
    directory = Path(directory)
    path = _file_stem(directory, case.test_name)
    data_path = path.with_suffix(".sigmf-data")
    measured = {k: v for k, v in result.metrics.items() if not k.startswith("injected_")}
    injected = {k: v for k, v in result.metrics.items() if k.startswith("injected_")}
    why = "; ".join(result.failed) or result.error or result.message
    meta = {
        sigmf.DATATYPE_KEY: datatype,
        sigmf.SAMPLE_RATE_KEY: float(case.rate_sps),
        sigmf.RECORDER_KEY: "hilrig",
        sigmf.HW_KEY: f"{result.driver or 'device'} {result.device} ({case.transport.kind}, {case.sample_format})",
        sigmf.DESCRIPTION_KEY: f"{case.test_name}: {result.label}" + (f": {why}" if why else ""),
        sigmf.EXTENSIONS_KEY: [HILRIG_EXTENSION],
        "hilrig:run_id": result.run_id,
        "hilrig:case": case.name,
        "hilrig:test_name": case.test_name,
        "hilrig:source": f"{case.source_file}:{case.source_line}",
        "hilrig:verdict": result.label,
        "hilrig:failed": list(result.failed),
        "hilrig:error": result.error or "",
        "hilrig:full_scale": full_scale,
        "hilrig:seed": signal.channel.seed,
        # JSON has no NaN or inf (a figure with nothing to measure): they become null.
        "hilrig:channel": jsonable(signal.channel.to_json()),
        "hilrig:tones": jsonable([t.to_json() for t in signal.tones]),
        "hilrig:injected": jsonable(injected),
        "hilrig:measured": jsonable(measured),
        "hilrig:capture_start_tick": capture.start_tick,
        "hilrig:capture_restarts": capture.restarts,
    }
    try:
        directory.mkdir(parents=True, exist_ok=True)
        data_path.write_bytes(_rails(capture.samples, full_scale, rail))
        recording = sigmf.SigMFFile(data_file=str(data_path), global_info=meta)
        recording.add_capture(0, metadata={sigmf.DATETIME_KEY: iso_utc(result.started_utc).replace("+00:00", "Z")})
        recording.tofile(str(path))
    except (OSError, ValueError, sigmf.error.SigMFError, jsonschema.exceptions.ValidationError) as exc:
        raise InfrastructureError(f"cannot write the SigMF recording {path}: {exc}") from exc
    return path.with_suffix(".sigmf-meta")

