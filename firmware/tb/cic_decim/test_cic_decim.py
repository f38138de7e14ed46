"""cic_decim: bit-exact with docs/vectors/cic (every decim parameter set, one build), under
random gaps and back-pressure; one input per clock and 2N+1 cycles latency without them."""
import cocotb
import pytest

from cic_tb import build_and_run, vectors_bit_exact
from hilrig_tb import SIMULATORS


@cocotb.test()
async def bit_exact_with_gaps_and_backpressure(dut):
    await vectors_bit_exact(dut, "decim", gap=0.3, stall=0.5, seed=1)


@cocotb.test()
async def full_rate_and_latency(dut):
    pairs = await vectors_bit_exact(dut, "decim", gap=0.0, stall=0.0, seed=2, limit=400)
    for v, _, src, sink in pairs:
        accepted = src.accepted_at
        assert accepted[-1] - accepted[0] == len(accepted) - 1, "one input per clock"
        assert sink.taken_at[0] - accepted[v["r"] - 1] == 2 * v["n"] + 1, v["name"]


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_cic_decim(simulator):
    build_and_run(simulator, __file__, "decim")
