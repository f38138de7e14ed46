"""The CIC integer model (hostlib/reference/cic.py) against direct convolution, and the
CIC vectors in docs/vectors/cic/ against the model (the RTL testbenches read the same files)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from hostlib.reference import cic_decimate, cic_impulse_response, cic_interpolate, cic_width
from hostlib.reference.gen_cic_vectors import PARAMETER_SETS, build, read_samples

CIC_DIR = Path(__file__).resolve().parents[2] / "docs" / "vectors" / "cic"


def convolve(x, h):
    return [sum(h[k] * x[i - k] for k in range(len(h)) if 0 <= i - k < len(x)) for i in range(len(x))]


@pytest.mark.parametrize("n,r,m", [(1, 4, 1), (3, 8, 1), (4, 5, 2), (2, 3, 1), (5, 16, 1)])
def test_model_is_the_convolution_with_the_cic_response(n, r, m):
    rng = random.Random(n * 100 + r * 10 + m)
    x = [rng.randint(-32768, 32767) for _ in range(12 * r * m)]
    h = cic_impulse_response(n, r, m)
    assert sum(h) == (r * m) ** n
    full = convolve(x, h)
    assert cic_decimate(x, n, r, m) == [full[j * r + r - 1] for j in range(len(x) // r)]
    u = [0] * (len(x) * r)
    u[::r] = x
    assert cic_interpolate(x, n, r, m) == convolve(u, h)


def test_width_is_b_in_plus_ceil_n_log2_rm():
    assert cic_width(16, 3, 8, 1) == 25          # 3 * log2(8) = 9 exactly
    assert cic_width(16, 4, 5, 2) == 30          # 4 * log2(10) = 13.29 -> 14
    assert cic_width(16, 1, 1, 1) == 16
    with pytest.raises(ValueError, match="must be >= 1"):
        cic_width(16, 0, 8, 1)


def test_full_scale_negative_run_reaches_the_full_gain_without_wrapping():
    n, r, m = 3, 8, 1
    y = cic_decimate([-32768] * 200, n, r, m)
    assert y[-1] == -32768 * (r * m) ** n == -(1 << (cic_width(16, n, r, m) - 1))
    assert cic_decimate([-32768] * 200, n, r, m, out_width=16)[-1] == -32768


def test_out_width_keeps_the_top_bits():
    x = [random.Random(1).randint(-32768, 32767) for _ in range(400)]
    full = cic_decimate(x, 4, 5, 2)
    assert cic_decimate(x, 4, 5, 2, out_width=18) == [v >> (30 - 18) for v in full]
    with pytest.raises(ValueError, match="out_width"):
        cic_decimate(x, 4, 5, 2, out_width=31)
    with pytest.raises(ValueError, match="input sample 0"):
        cic_decimate([40000], 1, 2, 1)


def test_vectors_on_disk_are_what_the_generator_writes():
    index = json.loads((CIC_DIR / "index.json").read_text())["vectors"]
    assert [v["name"] for v in index] == [p[0] for p in PARAMETER_SETS]
    for meta, x, y in build():
        assert (CIC_DIR / meta["input"]).read_bytes() == x, meta["name"]
        assert (CIC_DIR / meta["output"]).read_bytes() == y, meta["name"]
    for v in index:
        x, y = read_samples(CIC_DIR / v["input"], "h"), read_samples(CIC_DIR / v["output"], "q")
        fn = cic_decimate if v["kind"] == "decim" else cic_interpolate
        assert fn(x, v["n"], v["r"], v["m"], v["b_in"], v["out_width"]) == y
        gain = (v["r"] * v["m"]) ** v["n"] // (1 if v["kind"] == "decim" else v["r"])
        assert min(y) == (-32768 * gain) >> (v["full_width"] - v["out_width"]), "a full-scale negative run reaches the full gain"
