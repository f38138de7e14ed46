"""Integer model of the Hogenauer CIC decimator and interpolator in firmware/rtl/.

Registers are `cic_width(b_in, n, r, m) = b_in + ceil(n * log2(r * m))` bits wide and wrap
(two's complement), as in hardware; the full-precision result is exact because it fits.

Decimator: n integrators at the input rate, keep every r-th integrator output (the one
after input samples r-1, 2r-1, ...), n combs with differential delay m at the output rate.
Output j = sum_k h[k] x[j*r + r - 1 - k], h = n-fold convolution of a boxcar of r*m ones
(gain (r*m)^n).
Interpolator: n combs at the input rate, zero-stuffing by r (input j at output j*r),
n integrators at the output rate. Output i = sum_k h[k] u[i - k], u the zero-stuffed input
(gain (r*m)^n / r). Combs and integrators start from zero.
Output scaling: `out_width` < full keeps the top out_width bits (arithmetic shift right by
full - out_width, rounding towards minus infinity).
"""
from __future__ import annotations

from collections import deque

__all__ = ["cic_decimate", "cic_impulse_response", "cic_interpolate", "cic_width"]


def cic_width(b_in: int, n: int, r: int, m: int) -> int:
    """b_in + ceil(n * log2(r * m)), exactly (integer arithmetic)."""
    if min(b_in, n, r, m) < 1:
        raise ValueError(f"CIC parameters must be >= 1 (b_in={b_in}, n={n}, r={r}, m={m})")
    gain = (r * m) ** n
    return b_in + (gain - 1).bit_length()


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _check(x, b_in, out_width, full):
    lo, hi = -(1 << (b_in - 1)), (1 << (b_in - 1)) - 1
    for i, s in enumerate(x):
        if not lo <= s <= hi:
            raise ValueError(f"input sample {i} = {s} does not fit {b_in} signed bits")
    out_width = full if out_width is None else out_width
    if not 1 <= out_width <= full:
        raise ValueError(f"out_width {out_width} must be 1..{full} (the full-precision width)")
    return full - out_width


def cic_decimate(x, n: int, r: int, m: int, b_in: int = 16, out_width: int | None = None) -> list[int]:
    bits = cic_width(b_in, n, r, m)
    shift = _check(x, b_in, out_width, bits)
    integ = [0] * n
    combs = [deque([0] * m, maxlen=m) for _ in range(n)]
    out = []
    for i, s in enumerate(x):
        v = s
        for k in range(n):
            integ[k] = _wrap(integ[k] + v, bits)
            v = integ[k]
        if i % r != r - 1:
            continue
        for k in range(n):
            delayed = combs[k][0]
            combs[k].append(v)
            v = _wrap(v - delayed, bits)
        out.append(v >> shift)
    return out


def cic_interpolate(x, n: int, r: int, m: int, b_in: int = 16, out_width: int | None = None) -> list[int]:
    bits = cic_width(b_in, n, r, m)
    shift = _check(x, b_in, out_width, bits)
    integ = [0] * n
    combs = [deque([0] * m, maxlen=m) for _ in range(n)]
    out = []
    for s in x:
        v = s
        for k in range(n):
            delayed = combs[k][0]
            combs[k].append(v)
            v = _wrap(v - delayed, bits)
        for phase in range(r):
            u = v if phase == 0 else 0
            for k in range(n):
                integ[k] = _wrap(integ[k] + u, bits)
                u = integ[k]
            out.append(u >> shift)
    return out


def cic_impulse_response(n: int, r: int, m: int) -> list[int]:
    """h: the n-fold convolution of r*m ones (length n*(r*m - 1) + 1)."""
    h = [1]
    for _ in range(n):
        nxt = [0] * (len(h) + r * m - 1)
        for i, a in enumerate(h):
            for j in range(r * m):
                nxt[i + j] += a
        h = nxt
    return h
