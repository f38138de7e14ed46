"""Writes docs/vectors/cic/: input and output samples of every CIC parameter set the RTL builds.

    python -m hostlib.reference.gen_cic_vectors [--out docs/vectors/cic]

Per set `<name>.in.bin` (int16 little-endian input samples) and `<name>.out.bin` (int64
little-endian outputs of hostlib.reference.cic), described in index.json. Inputs are
seeded: random full-range samples, full-scale negative and positive runs long enough to
reach the full gain, and a full-scale square wave.
"""
from __future__ import annotations

import argparse
import json
import random
import struct
from pathlib import Path
from typing import Any

from .cic import cic_decimate, cic_interpolate, cic_width

B_IN = 16
# name, kind, n, r, m, out_width (None = full precision), input samples
PARAMETER_SETS = [
    ("decim_n3_r8_m1", "decim", 3, 8, 1, None, 1600),
    ("decim_n4_r5_m2", "decim", 4, 5, 2, None, 1600),
    ("decim_n5_r16_m1_o16", "decim", 5, 16, 1, 16, 1600),
    ("decim_n2_r3_m1", "decim", 2, 3, 1, None, 900),
    ("interp_n3_r8_m1", "interp", 3, 8, 1, None, 250),
    ("interp_n4_r5_m2", "interp", 4, 5, 2, None, 400),
    ("interp_n2_r4_m1_o16", "interp", 2, 4, 1, 16, 500),
]


def make_input(n_samples: int, n: int, r: int, m: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    lo, hi = -(1 << (B_IN - 1)), (1 << (B_IN - 1)) - 1
    run = max(n * r * m * 2, 24) if n_samples > 600 else n * m * 4 + 4   # long enough to reach full gain
    x = [rng.randint(lo, hi) for _ in range(n_samples // 4)]
    x += [lo] * run + [hi] * run
    x += [lo if (i // (r * m)) % 2 else hi for i in range(run)]
    x += [rng.randint(lo, hi) for _ in range(n_samples - len(x))]
    return x[:n_samples]


def build() -> list[tuple[dict, bytes, bytes]]:
    out = []
    for seed, (name, kind, n, r, m, out_width, n_samples) in enumerate(PARAMETER_SETS):
        x = make_input(n_samples, n, r, m, seed + 1)
        fn = cic_decimate if kind == "decim" else cic_interpolate
        y = fn(x, n, r, m, B_IN, out_width)
        width = cic_width(B_IN, n, r, m)
        meta = {"name": name, "kind": kind, "n": n, "r": r, "m": m, "b_in": B_IN, "full_width": width,
                "out_width": out_width or width, "input": f"{name}.in.bin", "output": f"{name}.out.bin",
                "input_samples": len(x), "output_samples": len(y)}
        out.append((meta, struct.pack(f"<{len(x)}h", *x), struct.pack(f"<{len(y)}q", *y)))
    return out


def read_samples(path: Path, fmt: str) -> list[int]:
    data = Path(path).read_bytes()
    size = struct.calcsize(fmt)
    return [v for (v,) in struct.iter_unpack("<" + fmt, data[: len(data) // size * size])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "docs" / "vectors" / "cic"))
    out = Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    index: dict[str, Any] = {"format": "hilrig CIC vectors v1: <name>.in.bin int16 LE, <name>.out.bin int64 LE "
                       "(see hostlib/reference/cic.py, docs/firmware.md)", "vectors": []}
    for meta, x, y in build():
        (out / meta["input"]).write_bytes(x)
        (out / meta["output"]).write_bytes(y)
        index["vectors"].append(meta)
    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    print(f"wrote {len(index['vectors'])} CIC parameter sets to {out}")


if __name__ == "__main__":
    main()
