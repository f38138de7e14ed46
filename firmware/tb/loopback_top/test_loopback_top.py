"""loopback_top: RX frames at the rate strobe decode with the reference, carry the pattern,
overflow into flagged seq gaps and end with EOB on stop; TX frames from the host are checked
and consumed at the interpolated rate (sc16, 2 channels, 32 samples per frame, 64-beat RX FIFO)."""
import random

import cocotb
import pytest
from cocotb.triggers import FallingEdge

from hilrig_tb import SIMULATORS, Sink, Source, beats_to_bytes, cycle, reset, run_cocotb
from hostlib.reference import (FLAG_EOB, FLAG_OVERFLOW_BEFORE, FLAG_SOB, FLAG_TS_VALID, decode_frame, encode_frame,
                               pattern_fill)

CHANNELS, SPF = 2, 32
PARAMETERS = {"CHANNELS": CHANNELS, "SAMPLE_FORMAT": 1, "SAMPLES_PER_FRAME": SPF, "STREAM_ID": 3,
              "RX_FIFO_ADDR_BITS": 6, "TX_FIFO_ADDR_BITS": 6}
SOURCES = ["loopback_top.v", "pattern_gen.v", "packetizer.v", "depacketizer_check.v", "beat_fifo.v", "rate_strobe.v"]


class Clock:
    """time_ns follows the simulated clock (10 ns per cycle)."""

    def __init__(self, dut):
        self.dut, self.ns = dut, 1000

    def drive(self):
        self.ns += 10
        self.dut.time_ns.value = self.ns

    def sample(self):
        pass


def tx_frames(seqs, corrupt=(), flags_last=0):
    out = []
    for i, seq in enumerate(seqs):
        payload = bytearray(pattern_fill(seq * SPF * CHANNELS, SPF * CHANNELS))
        if seq in corrupt:
            payload[8] ^= 0x40
        flags = FLAG_TS_VALID | (flags_last if i == len(seqs) - 1 else 0)
        out.append(encode_frame({"flags": flags, "channels": CHANNELS, "seq": seq, "sample_tick": seq * SPF},
                                bytes(payload)))
    return out


def tx_source(dut, frames, rng):
    beats, lasts = [], []
    for f in frames:
        b = [int.from_bytes(f[i:i + 8], "little") for i in range(0, len(f), 8)]
        beats += b
        lasts += [0] * (len(b) - 1) + [1]
    return Source(dut, "tx_axis", beats, lasts=lasts, gap=0.2, rng=rng)


@cocotb.test()
async def rx_and_tx_streams(dut):
    for name, v in (("rx_rate_div", 2), ("tx_rate_div", 3), ("rx_stop", 0), ("time_ns", 0), ("rx_axis_tready", 0),
                    ("tx_axis_tvalid", 0), ("tx_axis_tlast", 0), ("tx_axis_tdata", 0)):
        getattr(dut, name).value = v
    clk = await reset(dut)
    rng = random.Random(8)
    rx = Sink(dut, "rx_axis", stall=0.3, rng=rng)
    # TX: frames 0..9 with seq 4 missing and one corrupt word in seq 6, then a dry spell.
    tx = tx_source(dut, tx_frames([0, 1, 2, 3, 5, 6, 7, 8, 9], corrupt=(6,)), rng)
    parts = [Clock(dut), rx, tx]
    for _ in range(2500):                         # RX at 1 beat per 2 clocks keeps up: no drops
        await cycle(clk, parts)
    assert int(dut.rx_frames_dropped.value) == 0 and len(rx.frames) >= 10
    assert int(dut.tx_underruns.value) == 1, "TX buffer ran dry once after the 9 frames"
    rx.stall = 0.95                               # the host falls behind: the FIFO overflows
    for _ in range(1500):
        await cycle(clk, parts)
    rx.stall = 0.0
    # the same dry spell lasts until frames 10 and 11 (EOB) come: still one underrun
    tx = tx_source(dut, tx_frames([10, 11], flags_last=FLAG_EOB), rng)
    parts[2] = tx
    await FallingEdge(clk)
    dut.rx_stop.value = 1
    for _ in range(800):
        await cycle(clk, parts)
    dropped = int(dut.rx_frames_dropped.value)
    assert dropped > 0 and int(dut.rx_stopped.value) == 1

    expected, last_time, missing = 0, 0, 0
    for beats in rx.frames:
        h, payload = decode_frame(beats_to_bytes(beats))
        assert (h["stream_id"], h["channels"], h["sample_tick"]) == (3, CHANNELS, h["seq"] * SPF)
        assert payload == pattern_fill(h["sample_tick"] * CHANNELS, SPF * CHANNELS)
        assert bool(h["flags"] & FLAG_OVERFLOW_BEFORE) == (h["seq"] > expected)
        assert bool(h["flags"] & FLAG_SOB) == (h["seq"] == 0)
        assert h["send_time_ns"] > last_time, "send_time_ns is the device time the frame left"
        missing += h["seq"] - expected
        expected, last_time = h["seq"] + 1, h["send_time_ns"]
    assert missing == dropped
    assert rx.frames[-1] and decode_frame(beats_to_bytes(rx.frames[-1]))[0]["flags"] & FLAG_EOB
    assert [bool(decode_frame(beats_to_bytes(f))[0]["flags"] & FLAG_EOB) for f in rx.frames].count(True) == 1

    tx_counters = {k: int(getattr(dut, f"tx_{k}").value) for k in
                   ("frames_ok", "malformed_frames", "seq_errors", "missing_frames", "late_frames", "pattern_errors",
                    "underruns", "eob_seen", "consumed_beats")}
    dut._log.info("tx counters %s", tx_counters)
    assert tx_counters == {"frames_ok": 11, "malformed_frames": 0, "seq_errors": 1, "missing_frames": 1,
                           "late_frames": 0, "pattern_errors": 1, "underruns": 1, "eob_seen": 1,
                           "consumed_beats": 11 * SPF * CHANNELS // 2}, tx_counters


@pytest.mark.parametrize("simulator", SIMULATORS)
def test_loopback_top(simulator):
    run_cocotb(simulator, __file__, "loopback_top", SOURCES, parameters=PARAMETERS)
