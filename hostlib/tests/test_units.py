"""hostlib.units: the spellings people write, and errors that say what is allowed."""
import math

import pytest

from hostlib.units import UnitError, allowed_units, format_quantity, parse_quantity


@pytest.mark.parametrize("text, dim, expected", [
    ("30.72 MHz", "frequency", 30.72e6),
    ("200e6 Hz", "frequency", 200e6),
    ("1.5GHz", "frequency", 1.5e9),
    ("5 s", "time", 5.0),
    ("500 ms", "time", 0.5),
    ("2 ms", "time", 2e-3),
    ("250 us", "time", 250e-6),
    ("10 µs", "time", 10e-6),
    ("1 min", "time", 60.0),
    ("10 MSPS", "rate", 10e6),
    ("10 Msps", "rate", 10e6),
    ("1 GS/s", "rate", 1e9),
    ("61.44 MS/s", "rate", 61.44e6),
    ("500 kS/s", "rate", 500e3),
    ("8 KiB", "size", 8192.0),
    ("4 MiB", "size", 4 * 1024**2),
    ("8 kB", "size", 8000.0),
    ("1 Gbit/s", "data_rate", 125e6),
    ("99.9%", "ratio", 0.999),
    ("0.999", "ratio", 0.999),
    ("80%", "percent", 80.0),
    ("8000", "size", 8000.0),
    (8000, "size", 8000.0),
    (2.5, "time", 2.5),
    ("-3 s", "time", -3.0),
    (" 7 ms ", "time", 7e-3),
])
def test_parses_to_si(text, dim, expected):
    assert math.isclose(parse_quantity(text, dim), expected, rel_tol=1e-12)


@pytest.mark.parametrize("text, dim, words", [
    ("5 sec", "time", ["'s'"]),
    ("2 mS", "time", ["unknown unit", "ms"]),
    ("200 ms", "frequency", ["time unit", "Hz", "MHz"]),
    ("10 MHz", "rate", ["frequency unit", "MS/s"]),
    ("8 KB", "size", ["ambiguous", "KiB"]),
    ("five s", "time", ["not a plain number"]),
    ("1 2 s", "time", ["not"]),
    ("3 s s", "time", ["not"]),
    ("10 k", "count", ["plain number"]),
    ("inf", "time", ["not"]),
])
def test_rejects_with_allowed_units(text, dim, words):
    with pytest.raises(UnitError) as e:
        parse_quantity(text, dim)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_require_unit_refuses_plain_number():
    with pytest.raises(UnitError, match="no unit.*MHz"):
        parse_quantity("200", "frequency", require_unit=True)
    assert parse_quantity("200 MHz", "frequency", require_unit=True) == 200e6


@pytest.mark.parametrize("value", [None, True, [1], {"a": 1}])
def test_rejects_non_scalars(value):
    with pytest.raises(UnitError):
        parse_quantity(value, "time")


def test_allowed_units_and_format():
    assert "MHz" in allowed_units("frequency")
    assert "MSPS" in allowed_units("rate") and "MS/s" in allowed_units("rate")
    with pytest.raises(KeyError):
        allowed_units("volts")
    assert format_quantity(9.99e6, "rate") == "9.99 MS/s"
    assert format_quantity(0.002, "time") == "2 ms"
    assert format_quantity(30.72e6, "frequency") == "30.72 MHz"
