"""Shared by tb/cic_decim and tb/cic_interp: every parameter set of docs/vectors/cic/ of
one kind as one instance of a generated test top, run against the vectors bit for bit."""
from __future__ import annotations

import json
import random

from hilrig_tb import REPO, Sink, Source, cycle, reset, run_cocotb, to_signed, write_wrapper
from hostlib.reference.gen_cic_vectors import read_samples

CIC_DIR = REPO / "docs" / "vectors" / "cic"


def parameter_sets(kind):
    return [v for v in json.loads((CIC_DIR / "index.json").read_text())["vectors"] if v["kind"] == kind]


def build_and_run(simulator, module_file, kind):
    sets = parameter_sets(kind)
    module = f"cic_{kind}"
    instances = [(f"p{i}", {"N": v["n"], "R": v["r"], "M": v["m"], "B_IN": v["b_in"],
                            "OUT_WIDTH": v["out_width"] if v["out_width"] != v["full_width"] else 0},
                  [("s_axis_tdata", "input", v["b_in"]), ("s_axis_tvalid", "input", 1),
                   ("s_axis_tready", "output", 1), ("m_axis_tdata", "output", v["out_width"]),
                   ("m_axis_tvalid", "output", 1), ("m_axis_tready", "input", 1)])
                 for i, v in enumerate(sets)]
    top = write_wrapper(REPO / "build" / "firmware" / "gen" / f"{module}_tb.v", f"{module}_tb", module, instances)
    run_cocotb(simulator, module_file, f"{module}_tb", [top, f"{module}.v", "cic_stages.v"])


def idle(dut, n):
    for i in range(n):
        getattr(dut, f"p{i}_s_axis_tvalid").value = 0
        getattr(dut, f"p{i}_s_axis_tdata").value = 0
        getattr(dut, f"p{i}_m_axis_tready").value = 0


async def vectors_bit_exact(dut, kind, *, gap, stall, seed, limit=None):
    """Every parameter set at once; returns per set (sources, sinks) for further checks."""
    sets = parameter_sets(kind)
    idle(dut, len(sets))
    clk = await reset(dut)
    rng = random.Random(seed)
    pairs = []
    for i, v in enumerate(sets):
        x = read_samples(CIC_DIR / v["input"], "h")[:limit]
        src = Source(dut, f"p{i}_s_axis", [s & 0xFFFF for s in x], gap=gap, rng=rng)
        sink = Sink(dut, f"p{i}_m_axis", stall=stall, rng=rng, has_last=False)
        pairs.append((v, x, src, sink))
    parts = [p for _, _, src, sink in pairs for p in (src, sink)]
    want = {v["name"]: read_samples(CIC_DIR / v["output"], "q") for v in sets}
    for _ in range(100000):
        await cycle(clk, parts)
        if all(src.done and len(sink.beats) >= len(want[v["name"]][: expected_outputs(v, len(x))])
               for v, x, src, sink in pairs):
            break
    for v, x, src, sink in pairs:
        n_out = expected_outputs(v, len(x))
        got = [to_signed(b, v["out_width"]) for b in sink.beats]
        assert got == want[v["name"]][:n_out], f"{v['name']}: first difference at output " \
            f"{next((i for i, (a, b) in enumerate(zip(got, want[v['name']])) if a != b), len(got))}"
    return pairs


def expected_outputs(v, n_in):
    return n_in // v["r"] if v["kind"] == "decim" else n_in * v["r"]
