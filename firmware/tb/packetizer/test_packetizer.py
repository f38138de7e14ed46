"""packetizer: byte-exact with docs/vectors and the Python reference, under back-pressure and overflow.

Four configurations share one build (a generated test top, ports <instance>_<port>):
a = sc16 1 ch 8 samples (64-beat FIFO), b = the same with stream_id 7 and CRC-32C,
c = sc16 2 ch with a 2-frame FIFO, d = sc8 1 ch 16 samples.
"""
from __future__ import annotations

import json
import random

import cocotb
import pytest
from cocotb.triggers import FallingEdge

from hilrig_tb import REPO, SIMULATORS, Sink, Source, beats_to_bytes, cycle, reset, run_cocotb, write_wrapper
from hostlib.reference import (FLAG_CRC_VALID, FLAG_OVERFLOW_BEFORE, FLAG_SOB, FLAG_TS_VALID, decode_frame,
                               pattern_fill)

VECTORS = REPO / "docs" / "vectors"
CONFIGS = {"a": ("sc16", 1, 8, 0), "b": ("sc16", 1, 8, 7), "c": ("sc16", 2, 8, 0), "d": ("sc8", 1, 16, 0)}
CRC = {"b"}
FIFO_ADDR_BITS = {"c": 4}
PORTS = [("s_axis_tdata", "input", 64), ("s_axis_tvalid", "input", 1), ("s_axis_tready", "output", 1),
         ("stop", "input", 1), ("time_ns", "input", 64), ("m_axis_tdata", "output", 64), ("m_axis_tkeep", "output", 8),
         ("m_axis_tlast", "output", 1), ("m_axis_tvalid", "output", 1), ("m_axis_tready", "input", 1),
         ("stopped", "output", 1), ("frames_dropped", "output", 32)]


def pattern_beats(first_word, n_words, fmt):
    data = pattern_fill(first_word, n_words, fmt)
    assert len(data) % 8 == 0
    return [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8)]


def stream_beats(cfg, frames):
    fmt, channels, spf, _ = CONFIGS[cfg]
    return pattern_beats(0, frames * spf * channels, fmt)


def idle_all(dut):
    for p in CONFIGS:
        getattr(dut, f"{p}_s_axis_tvalid").value = 0
        getattr(dut, f"{p}_m_axis_tready").value = 0
        getattr(dut, f"{p}_stop").value = 0
        getattr(dut, f"{p}_time_ns").value = 0
        getattr(dut, f"{p}_s_axis_tdata").value = 0


def check_stream(frames, cfg, *, crc):
    """Every frame decodes, carries the pattern for its tick; seq gaps exactly where OVERFLOW_BEFORE is."""
    fmt, channels, spf, stream_id = CONFIGS[cfg]
    expected_seq, missing = 0, 0
    for beats in frames:
        h, payload = decode_frame(beats_to_bytes(beats))
        assert h["stream_id"] == stream_id and h["channels"] == channels
        assert h["sample_format"] == (1 if fmt == "sc16" else 2)
        assert h["sample_tick"] == h["seq"] * spf
        assert payload == pattern_fill(h["sample_tick"] * channels, spf * channels, fmt)
        assert bool(h["flags"] & FLAG_CRC_VALID) == crc
        assert h["flags"] & FLAG_TS_VALID
        assert bool(h["flags"] & FLAG_SOB) == (h["seq"] == 0)
        assert h["seq"] >= expected_seq, "seq went backwards (a duplicated or reordered frame)"
        assert bool(h["flags"] & FLAG_OVERFLOW_BEFORE) == (h["seq"] > expected_seq), f"seq {h['seq']}"
        missing += h["seq"] - expected_seq
        expected_seq = h["seq"] + 1
    return expected_seq, missing


@cocotb.test()
async def vectors_byte_exact(dut):
    """Frames equal the shared vectors byte for byte (a, b, d), and c's EOB|OVERFLOW_BEFORE frame."""
    idle_all(dut)
    clk = await reset(dut)
    dut.a_time_ns.value = 123456789
    dut.b_time_ns.value = 0x0102030405060708
    rng = random.Random(5)
    parts = [Source(dut, "a_s_axis", stream_beats("a", 2), gap=0.3, rng=rng), Sink(dut, "a_m_axis", stall=0.3, rng=rng),
             Source(dut, "b_s_axis", stream_beats("b", 6), gap=0.3, rng=rng), Sink(dut, "b_m_axis", stall=0.3, rng=rng),
             Source(dut, "d_s_axis", stream_beats("d", 3), gap=0.3, rng=rng), Sink(dut, "d_m_axis", stall=0.3, rng=rng)]
    for _ in range(400):
        await cycle(clk, parts)
    a, b, d = parts[1].frames, parts[3].frames, parts[5].frames
    assert (len(a), len(b), len(d)) == (2, 6, 3)
    assert beats_to_bytes(a[0]) == (VECTORS / "sc16_1ch_sob.bin").read_bytes()
    assert beats_to_bytes(b[5]) == (VECTORS / "sc16_1ch_seq5_crc.bin").read_bytes()
    assert beats_to_bytes(d[2]) == (VECTORS / "sc8_1ch.bin").read_bytes()
    check_stream(b, "b", crc=True)

    # c: hold the output so frames 0 and 1 fill the 16-beat FIFO and frame 2 is discarded;
    # then drain, and frame 3, completed while stop is high, is EOB|OVERFLOW_BEFORE.
    src = Source(dut, "c_s_axis", stream_beats("c", 3), rng=rng)
    sink = Sink(dut, "c_m_axis", rng=rng)
    sink.hold = True
    for _ in range(60):
        await cycle(clk, [src, sink])
    assert src.done and int(dut.c_frames_dropped.value) == 1
    sink.hold = False
    for _ in range(60):
        await cycle(clk, [src, sink])
    assert len(sink.frames) == 2
    await FallingEdge(clk)  # inputs are written after a falling edge, never in ReadOnly
    dut.c_stop.value = 1
    src = Source(dut, "c_s_axis", pattern_beats(3 * 16, 16, "sc16"), gap=0.2, rng=rng)
    for _ in range(80):
        await cycle(clk, [src, sink])
    assert int(dut.c_stopped.value) == 1 and int(dut.c_s_axis_tready.value) == 0
    assert len(sink.frames) == 3
    assert beats_to_bytes(sink.frames[2]) == (VECTORS / "sc16_2ch_eob_overflow.bin").read_bytes()
    index = {v["file"]: v for v in json.loads((VECTORS / "index.json").read_text())["vectors"]}
    assert index["sc16_2ch_eob_overflow.bin"]["header"]["seq"] == 3


@cocotb.test()
async def overflow_stress(dut):
    """Random gaps and back-pressure: drops happen, each is one seq gap flagged OVERFLOW_BEFORE."""
    idle_all(dut)
    clk = await reset(dut)
    rng = random.Random(11)
    n_frames = 150
    src_a = Source(dut, "a_s_axis", stream_beats("a", n_frames), gap=0.05, rng=rng)
    sink_a = Sink(dut, "a_m_axis", stall=0.7, rng=rng)
    src_b = Source(dut, "b_s_axis", stream_beats("b", n_frames), gap=0.4, rng=rng)
    sink_b = Sink(dut, "b_m_axis", stall=0.3, rng=rng)
    parts = [src_a, sink_a, src_b, sink_b]
    while not (src_a.done and src_b.done):
        await cycle(clk, parts)
    sink_a.stall = sink_b.stall = 0.0
    for _ in range(300):
        await cycle(clk, parts)
    for cfg, sink, crc in (("a", sink_a, False), ("b", sink_b, True)):
        next_seq, missing = check_stream(sink.frames, cfg, crc=crc)
        dropped = int(getattr(dut, f"{cfg}_frames_dropped").value)
        assert missing + (n_frames - next_seq) == dropped, cfg
        assert len(sink.frames) + dropped == n_frames, cfg
    assert int(dut.a_frames_dropped.value) > 10, "the stress must overflow the FIFO"


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_packetizer(simulator):
    instances = [(p, {"CHANNELS": ch, "SAMPLE_FORMAT": 1 if fmt == "sc16" else 2, "SAMPLES_PER_FRAME": spf,
                       "STREAM_ID": sid, "CRC_ENABLE": int(p in CRC), "FIFO_ADDR_BITS": FIFO_ADDR_BITS.get(p, 6)}, PORTS)
                 for p, (fmt, ch, spf, sid) in CONFIGS.items()]
    top = write_wrapper(REPO / "build" / "firmware" / "gen" / "packetizer_tb.v", "packetizer_tb", "packetizer",
                        instances)
    run_cocotb(simulator, __file__, "packetizer_tb", [top, "packetizer.v", "beat_fifo.v"])
