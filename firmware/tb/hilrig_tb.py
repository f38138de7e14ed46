"""The firmware testbenches' own AXI-Stream drivers and the pytest -> cocotb runner.

Signals are reached by exact name (never by enumerating the DUT: on Verilator that breaks
later writes). Every cycle: inputs are driven after the falling edge, then, once the
signals settle (ReadOnly), the handshakes that the next rising edge will complete are
recorded. So combinational ready/valid paths are sampled correctly on both simulators.
"""
from __future__ import annotations

import os
import random
from pathlib import Path

FIRMWARE = Path(__file__).resolve().parents[1]
REPO = FIRMWARE.parent
RTL = FIRMWARE / "rtl"
SIMULATORS = ("icarus", "verilator")


def sig(dut, name):
    return getattr(dut, name)


class Source:
    """Offers `beats` (ints) on <prefix>_tvalid/_tdata[/_tlast] with random gaps."""

    def __init__(self, dut, prefix, beats, *, gap=0.0, rng=None, lasts=None, width_mask=(1 << 64) - 1):
        self.valid = sig(dut, f"{prefix}_tvalid")
        self.data = sig(dut, f"{prefix}_tdata")
        self.ready = sig(dut, f"{prefix}_tready")
        self.last = sig(dut, f"{prefix}_tlast") if lasts is not None else None
        self.beats, self.lasts, self.gap = list(beats), lasts, gap
        self.rng = rng or random.Random(1)
        self.mask = width_mask
        self.sent = 0
        self.offering = False

    @property
    def done(self):
        return self.sent >= len(self.beats)

    def drive(self):
        if not self.offering and not self.done and self.rng.random() >= self.gap:
            self.offering = True
        if self.offering and not self.done:
            self.valid.value = 1
            self.data.value = self.beats[self.sent] & self.mask
            if self.last is not None:
                self.last.value = int(self.lasts[self.sent])
        else:
            self.valid.value = 0

    def sample(self):
        if self.offering and not self.done and int(self.ready.value):
            self.sent += 1
            self.offering = False


class Sink:
    """Takes beats from <prefix>_tvalid/_tdata[/_tlast] with random back-pressure."""

    def __init__(self, dut, prefix, *, stall=0.0, rng=None, has_last=True):
        self.valid = sig(dut, f"{prefix}_tvalid")
        self.data = sig(dut, f"{prefix}_tdata")
        self.ready = sig(dut, f"{prefix}_tready")
        self.last = sig(dut, f"{prefix}_tlast") if has_last else None
        self.stall = stall
        self.rng = rng or random.Random(2)
        self.beats: list[int] = []
        self.frames: list[list[int]] = []
        self._frame: list[int] = []
        self.hold = False            # force tready low (test-controlled back-pressure)

    def drive(self):
        self.ready.value = int(not self.hold and self.rng.random() >= self.stall)

    def sample(self):
        if int(self.ready.value) and int(self.valid.value):
            beat = int(self.data.value)
            self.beats.append(beat)
            self._frame.append(beat)
            if self.last is not None and int(self.last.value):
                self.frames.append(self._frame)
                self._frame = []


async def reset(dut, clk_name="clk", cycles=3):
    import cocotb
    from cocotb.clock import Clock
    from cocotb.triggers import FallingEdge
    clk = sig(dut, clk_name)
    cocotb.start_soon(Clock(clk, 10, units="ns").start())
    dut.rst.value = 1
    for _ in range(cycles):
        await FallingEdge(clk)
    dut.rst.value = 0
    return clk


async def cycle(clk, parts, before=None):
    """One clock: drive every part, settle, sample every part."""
    from cocotb.triggers import FallingEdge, ReadOnly
    await FallingEdge(clk)
    if before:
        before()
    for p in parts:
        p.drive()
    await ReadOnly()
    for p in parts:
        p.sample()


def beats_to_bytes(beats):
    return b"".join(b.to_bytes(8, "little") for b in beats)


def run_cocotb(simulator, module_file, toplevel, sources, parameters=None, build_tag="", extra_env=None):
    """Build and run one cocotb test module on one simulator (pytest calls this)."""
    from cocotb_test.simulator import run
    tb_dir = Path(module_file).resolve().parent
    name = toplevel + (f"_{build_tag}" if build_tag else "")
    build = REPO / "build" / "firmware" / f"{name}_{simulator}"
    env = {"PYTHONPATH": os.pathsep.join([str(tb_dir), str(FIRMWARE / "tb"), str(REPO)])}
    env.update(extra_env or {})
    kwargs = {}
    if simulator == "verilator":
        kwargs["compile_args"] = ["-Wno-fatal", "-O2"]
        kwargs["make_args"] = ["-j2"]
    run(simulator=simulator, verilog_sources=[str((RTL / s).resolve()) for s in sources],
        toplevel=toplevel, module=Path(module_file).stem, python_search=[str(tb_dir), str(FIRMWARE / "tb"), str(REPO)],
        timescale="1ns/1ps", sim_build=str(build), parameters=parameters or {}, extra_env=env, waves=False, **kwargs)
