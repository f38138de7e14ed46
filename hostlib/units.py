"""Quantities as people write them -> SI floats.

    parse_quantity("30.72 MHz", "frequency") -> 30.72e6
    parse_quantity("500 ms", "time")         -> 0.5
    parse_quantity("10 MSPS", "rate")        -> 10e6
    parse_quantity("8 KiB", "size")          -> 8192.0
    parse_quantity("99.9%", "ratio")         -> 0.999

The grammar is deliberately small and strict: one number (optionally with an
exponent), optional spaces, one unit token from the table of the field's
dimension. Nothing else is accepted, so "5 sec", "5s s" or "2 mS" are errors
that list the units the field takes. A plain number means the dimension's base
unit (s, S/s, B, B/s) except where a field requires a unit (a master clock of
"200" is far more likely a missing "MHz" than 200 Hz).

Dimension names match hostlib.metrics.Metric.dimension, plus "size" (bytes).
"""
from __future__ import annotations

import math
import re

from ._exceptions import UnitError

__all__ = [
    "DIMENSIONS",
    "UnitError",
    "allowed_units",
    "format_quantity",
    "parse_quantity",
    "split_quantity",
    "unit_scale",
]


def _rate_units() -> dict[str, float]:
    # Samples per second: the spellings seen in datasheets and tools (MSPS, MS/s, Msps).
    out: dict[str, float] = {}
    for prefix, scale in (("", 1.0), ("k", 1e3), ("K", 1e3), ("M", 1e6), ("G", 1e9)):
        for suffix in ("S/s", "Sa/s", "sps", "SPS", "Sps"):
            out[prefix + suffix] = scale
    return out


_UNITS: dict[str, dict[str, float]] = {
    "frequency": {"Hz": 1.0, "kHz": 1e3, "KHz": 1e3, "MHz": 1e6, "GHz": 1e9},
    "time": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "min": 60.0},
    "rate": _rate_units(),
    "size": {
        "B": 1.0, "bytes": 1.0,
        "kB": 1e3, "MB": 1e6, "GB": 1e9,
        "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3,
    },
    "data_rate": {
        "B/s": 1.0, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
        "KiB/s": 1024.0, "MiB/s": 1024.0**2, "GiB/s": 1024.0**3,
        "bit/s": 1 / 8, "kbit/s": 1e3 / 8, "Mbit/s": 1e6 / 8, "Gbit/s": 1e9 / 8,
        "bps": 1 / 8, "kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8,
    },
    # Counts are plain numbers; "k"/"M" would invite 1k vs 1024 arguments.
    "count": {},
    # A ratio is a plain fraction (0.999) or a percentage (99.9%).
    "ratio": {"%": 0.01},
    # A percent metric (host CPU %) is stored in percent: "80%" and "80" are the same.
    "percent": {"%": 1.0},
    # RF levels (docs/rf.md): stored in their decibels, so the unit only names the reference:
    # a power ratio (dB), relative to the carrier (dBc), to full scale (dBFS).
    "db": {"dB": 1.0},
    "dbc": {"dBc": 1.0},
    "dbfs": {"dBFS": 1.0},
    # A single-sideband phase-noise density relative to the carrier (L(f) at an offset).
    "dbc_per_hz": {"dBc/Hz": 1.0},
    # Parts per million (a frequency error relative to the nominal frequency).
    "ppm": {"ppm": 1.0},
    # A time in samples of the stream (the channel's fractional delay: 0.37 samples).
    "samples": {"samples": 1.0, "sample": 1.0},
    # Angles in degrees.
    "angle": {"deg": 1.0, "°": 1.0, "rad": 180 / math.pi},
}
DIMENSIONS: tuple[str, ...] = tuple(_UNITS)

# Spellings that are ambiguous or common mistakes, with the reason given back.
_MISTAKES = {
    "KB": "'KB' is ambiguous: write 'kB' (1000 bytes) or 'KiB' (1024 bytes)",
    "Kb": "'Kb' is ambiguous: write 'kB' (bytes) or 'kbit/s' (bits per second)",
    "mHz": "'mHz' is millihertz; write 'MHz' for megahertz",
    "sec": "write 's' for seconds",
    "secs": "write 's' for seconds",
    "msec": "write 'ms' for milliseconds",
    "MSps": "write 'MSPS', 'Msps' or 'MS/s'",
}

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"^\s*(?P<num>{_NUMBER})\s*(?P<unit>[A-Za-zµ/%°]+)?\s*$")


def allowed_units(dimension: str) -> list[str]:
    """The unit spellings a field of `dimension` accepts (for error messages)."""
    if dimension not in _UNITS:
        raise KeyError(f"unknown dimension {dimension!r}; known: {', '.join(DIMENSIONS)}")
    return list(_UNITS[dimension])


def _describe(dimension: str, require_unit: bool) -> str:
    units = _UNITS[dimension]
    if dimension == "rate":
        shown = "S/s, kS/s, MS/s, GS/s, sps, ksps, Msps, Gsps, SPS, kSPS, MSPS, GSPS"
    else:
        shown = ", ".join(units)
    if not units:
        return "a plain number (no unit)"
    if require_unit:
        return f"a number with a unit: {shown}"
    if dimension == "ratio":
        return "a plain fraction (0.999) or a percentage (99.9%)"
    return f"a plain number or a number with a unit: {shown}"


def unit_scale(unit: str, dimension: str, *, require_unit: bool = False) -> float:
    """SI scale factor of `unit` in `dimension`; UnitError if the unit does not belong."""
    table = _UNITS[dimension]
    if unit in table:
        return table[unit]
    hint = _MISTAKES.get(unit)
    if hint is None:
        # Name the dimension the unit does belong to: "ms" given for a rate is
        # far easier to fix when the message says "ms is a time".
        for other, other_table in _UNITS.items():
            if unit in other_table and other != dimension:
                hint = f"'{unit}' is a {other.replace('_', ' ')} unit, not a {dimension.replace('_', ' ')}"
                break
    msg = f"unknown unit {unit!r}" if hint is None else hint
    raise UnitError(f"{msg}; expected {_describe(dimension, require_unit)}")


def split_quantity(text: str) -> tuple[float, str | None]:
    """'30.72 MHz' -> (30.72, 'MHz'); '8000' -> (8000.0, None). UnitError if malformed."""
    m = _QUANTITY.match(text)
    if not m:
        raise UnitError(f"{text!r} is not a number with an optional unit (e.g. '30.72 MHz', '500 ms', '8000')")
    return float(m.group("num")), m.group("unit")


def parse_quantity(value: object, dimension: str, *, require_unit: bool = False) -> float:
    """Parse a YAML scalar (int, float or string) into an SI float of `dimension`."""
    if dimension not in _UNITS:
        raise KeyError(f"unknown dimension {dimension!r}")
    if isinstance(value, bool) or value is None:
        raise UnitError(f"expected {_describe(dimension, require_unit)}, got {value!r}")
    if isinstance(value, (int, float)):
        try:
            number, unit = float(value), None
        except OverflowError:  # an int beyond the largest float (~1.8e308)
            raise UnitError(f"{_short(value)} is too large a number") from None
    elif isinstance(value, str):
        try:
            number, unit = split_quantity(value)
        except UnitError:
            raise UnitError(f"{value!r} is not {_describe(dimension, require_unit)}") from None
    else:
        raise UnitError(f"expected {_describe(dimension, require_unit)}, got a {type(value).__name__}")
    if not math.isfinite(number):
        raise UnitError(f"{_short(value)} is not a finite number")
    if unit is None:
        if require_unit and _UNITS[dimension]:
            raise UnitError(f"{value!r} has no unit; expected {_describe(dimension, True)}")
        return number
    scaled = number * unit_scale(unit, dimension, require_unit=require_unit)
    if not math.isfinite(scaled):
        raise UnitError(f"{_short(value)} is too large a number")
    return scaled


def _short(value: object) -> str:
    """repr of a value for a message, cut short (a 400-digit number is not read)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


_LEVEL_UNITS = {"db": "dB", "dbc": "dBc", "dbfs": "dBFS", "dbc_per_hz": "dBc/Hz", "ppm": "ppm", "angle": "deg"}


def format_quantity(value: float, dimension: str) -> str:
    """A short human spelling of an SI value (for messages): 9.99e6, 'rate' -> '9.99 MS/s'."""
    if value is None or not math.isfinite(value):
        return str(value)
    units = {
        "frequency": [("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3), ("Hz", 1.0)],
        "rate": [("GS/s", 1e9), ("MS/s", 1e6), ("kS/s", 1e3), ("S/s", 1.0)],
        "data_rate": [("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3), ("B/s", 1.0)],
        "size": [("GB", 1e9), ("MB", 1e6), ("kB", 1e3), ("B", 1.0)],
        "time": [("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)],
    }.get(dimension)
    if dimension == "percent":
        return f"{value:.4g}%"
    if dimension in _LEVEL_UNITS:
        return f"{value:.2f} {_LEVEL_UNITS[dimension]}"
    if not units or value == 0:
        return f"{value:.6g}"
    mag = abs(value)
    for name, scale in units:
        if mag >= scale:
            return f"{value / scale:.6g} {name}"
    name, scale = units[-1]
    return f"{value / scale:.6g} {name}"
