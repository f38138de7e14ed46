"""pattern_gen: the beats are exactly hostlib.reference.pattern_fill from word 0, for sc16 and
sc8 and 1-3 channels, under random tick strobes and back-pressure; credit accounting is exact
and a tick refused for want of credit (ticks_lost) never breaks the pattern."""
import random

import cocotb
import pytest

from hilrig_tb import REPO, SIMULATORS, Sink, beats_to_bytes, cycle, reset, run_cocotb, write_wrapper
from hostlib.reference import pattern_fill

# prefix: (CHANNELS, SAMPLE_FORMAT, CREDIT_MAX)
CONFIGS = {"a": (1, 1, 1024), "b": (3, 2, 1024), "c": (2, 1, 8), "d": (1, 2, 64)}
PORTS = [("tick_stb", "input", 1), ("m_axis_tdata", "output", 64), ("m_axis_tvalid", "output", 1),
         ("m_axis_tready", "input", 1), ("ticks_lost", "output", 32)]


class Ticks:
    def __init__(self, dut, prefix, p, rng):
        self.stb, self.p, self.rng, self.sent = getattr(dut, f"{prefix}_tick_stb"), p, rng, 0

    def drive(self):
        on = self.rng.random() < self.p
        self.stb.value = int(on)
        self.sent += on

    def sample(self):
        pass


@cocotb.test()
async def pattern_bit_exact(dut):
    for p in CONFIGS:
        getattr(dut, f"{p}_tick_stb").value = 0
        getattr(dut, f"{p}_m_axis_tready").value = 0
    clk = await reset(dut)
    rng = random.Random(4)
    ticks = {p: Ticks(dut, p, 0.6 if p != "c" else 1.0, rng) for p in CONFIGS}
    sinks = {p: Sink(dut, f"{p}_m_axis", stall=0.5 if p != "d" else 0.0, rng=rng, has_last=False) for p in CONFIGS}
    parts = list(ticks.values()) + list(sinks.values())
    for _ in range(3000):
        await cycle(clk, parts)
    for t in ticks.values():
        t.p = 0.0
    for s in sinks.values():
        s.stall = 0.0
    for _ in range(200):
        await cycle(clk, parts)
    for p, (channels, fmt, _) in CONFIGS.items():
        name, word_bytes = ("sc16", 4) if fmt == 1 else ("sc8", 2)
        got = beats_to_bytes(sinks[p].beats)
        n_words = len(got) // word_bytes
        assert n_words > 500, p
        assert got == pattern_fill(0, n_words, name), p
        lost = int(getattr(dut, f"{p}_ticks_lost").value)
        words_owed = (ticks[p].sent - lost) * channels
        assert 0 <= words_owed - n_words < 8 // word_bytes, f"{p}: every accepted tick's words were emitted"
        assert (lost > 0) == (p == "c"), f"{p}: ticks_lost {lost}"


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_pattern_gen(simulator):
    instances = [(p, {"CHANNELS": c, "SAMPLE_FORMAT": f, "CREDIT_MAX": m}, PORTS) for p, (c, f, m) in CONFIGS.items()]
    top = write_wrapper(REPO / "build" / "firmware" / "gen" / "pattern_gen_tb.v", "pattern_gen_tb", "pattern_gen",
                        instances)
    run_cocotb(simulator, __file__, "pattern_gen_tb", [top, "pattern_gen.v"])
