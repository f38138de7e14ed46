"""cic_interp: bit-exact with docs/vectors/cic (every interp parameter set, one build), under
random gaps and back-pressure; one output per clock and 2N+1 cycles latency without them."""
import cocotb
import pytest

from cic_tb import build_and_run, vectors_bit_exact
from hilrig_tb import SIMULATORS


@cocotb.test()
async def bit_exact_with_gaps_and_backpressure(dut):
    await vectors_bit_exact(dut, "interp", gap=0.3, stall=0.3, seed=1, limit=120)


@cocotb.test()
async def full_rate_and_latency(dut):
    pairs = await vectors_bit_exact(dut, "interp", gap=0.0, stall=0.0, seed=2, limit=60)
    for v, _, src, sink in pairs:
        taken = sink.taken_at
        assert taken[-1] - taken[0] == len(taken) - 1, "one output per clock"
        assert taken[0] - src.accepted_at[0] == 2 * v["n"] + 1, v["name"]


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_cic_interp(simulator):
    build_and_run(simulator, __file__, "interp")
