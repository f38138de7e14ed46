"""Static checks of firmware/rtl: Verilator lint, yosys synthesis for iCE40 with a cell
budget per module, nextpnr-ice40 place and route of loopback_top (as loopback_ice40).

    python firmware/synth/flow.py            # everything, prints the table for docs/performance.md
    python firmware/synth/flow.py --summary  # the table of the last run (build/firmware/synth.json)

The tests in firmware/tests/ call the same functions; a module over its budget fails them.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

SYNTH = Path(__file__).resolve().parent
FIRMWARE = SYNTH.parent
RTL = FIRMWARE / "rtl"
REPO = FIRMWARE.parent
WORK = REPO / "build" / "firmware" / "synth"
REPORT = REPO / "build" / "firmware" / "synth.json"

# module -> (parameters for the synthesis, cell budget). Budgets sit ~10 % above what
# yosys 0.23 synth_ice40 gives today (docs/performance.md); raise one only with a reason.
BUDGETS: dict[str, tuple[dict, int]] = {
    "pattern_gen": ({}, 360),
    "packetizer": ({}, 2050),
    "packetizer_crc": ({"CRC_ENABLE": 1}, 2900),
    "depacketizer_check": ({}, 3400),
    "cic_decim": ({}, 720),
    "cic_interp": ({}, 720),
    "loopback_top": ({}, 5300),
}
PNR_TOP = "loopback_ice40"
PNR_DEVICE = ("--hx8k", "--package", "ct256")
PNR_TARGET_MHZ = 40.0


def sources() -> list[str]:
    return sorted(str(p) for p in RTL.glob("*.v"))


def module_of(name: str) -> str:
    return name.removesuffix("_crc")


def lint(top: str) -> subprocess.CompletedProcess:
    """verilator --lint-only -Wall over every RTL file (and the P&R wrapper) with `top`."""
    files = sources() + ([str(SYNTH / f"{PNR_TOP}.v")] if top == PNR_TOP else [])
    return subprocess.run(["verilator", "--lint-only", "-Wall", f"-I{RTL}", "--top-module", top, *files],
                          capture_output=True, text=True)


def synth(name: str) -> dict:
    """synth_ice40 + check -assert; the cell counts of `stat`."""
    params, budget = BUDGETS[name]
    WORK.mkdir(parents=True, exist_ok=True)
    stat = WORK / f"{name}.stat.json"
    chparam = "".join(f" -set {k} {v}" for k, v in params.items())
    script = (f"read_verilog -I{RTL} {' '.join(sources())}; "
              + (f"chparam{chparam} {module_of(name)}; " if params else "")
              + f"synth_ice40 -top {module_of(name)}; check -assert; tee -q -o {stat} stat -json")
    run = subprocess.run(["yosys", "-q", "-p", script], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"yosys failed for {name}:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    design = json.loads(stat.read_text())["design"]
    by_type = design["num_cells_by_type"]
    return {"module": name, "parameters": params, "cells": design["num_cells"], "budget": budget,
            "luts": by_type.get("SB_LUT4", 0), "carries": by_type.get("SB_CARRY", 0),
            "ffs": sum(v for k, v in by_type.items() if k.startswith("SB_DFF")),
            "brams": by_type.get("SB_RAM40_4K", 0)}


def place_and_route(seed: int = 1) -> dict:
    """loopback_ice40 on an HX8K: synth, nextpnr-ice40, the achieved fmax of clk."""
    WORK.mkdir(parents=True, exist_ok=True)
    netlist, asc = WORK / f"{PNR_TOP}.json", WORK / f"{PNR_TOP}.asc"
    run = subprocess.run(["yosys", "-q", "-p", f"read_verilog -I{RTL} {' '.join(sources())} {SYNTH / (PNR_TOP + '.v')}; "
                          f"synth_ice40 -top {PNR_TOP} -json {netlist}; check -assert"], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"yosys failed for {PNR_TOP}:\n{run.stderr[-3000:]}")
    pnr = subprocess.run(["nextpnr-ice40", *PNR_DEVICE, "--json", str(netlist), "--asc", str(asc),
                          "--pcf-allow-unconstrained", "--freq", str(PNR_TARGET_MHZ), "--seed", str(seed)],
                         capture_output=True, text=True)
    log = pnr.stdout + pnr.stderr
    if pnr.returncode != 0:
        raise RuntimeError(f"nextpnr-ice40 failed:\n{log[-3000:]}")
    fmax = [float(m) for m in re.findall(r"Max frequency for clock '[^']*clk[^']*': ([0-9.]+) MHz", log)]
    util = dict(re.findall(r"Info:\s+(ICESTORM_LC|ICESTORM_RAM|SB_IO):\s+(\d+/\s*\d+)", log))
    if not fmax:
        raise RuntimeError(f"nextpnr-ice40 printed no fmax:\n{log[-2000:]}")
    return {"top": PNR_TOP, "device": "iCE40 HX8K ct256", "fmax_mhz": fmax[-1], "target_mhz": PNR_TARGET_MHZ,
            "utilisation": {k: re.sub(r"\s+", "", v) for k, v in util.items()}}


def save(section: str, value) -> None:
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(REPORT.read_text()) if REPORT.exists() else {}
    if section == "synth":
        data.setdefault("synth", {})[value["module"]] = value
    else:
        data[section] = value
    REPORT.write_text(json.dumps(data, indent=2) + "\n")


def summary() -> str:
    if not REPORT.exists():
        return "no firmware synthesis results yet (run make test-firmware)"
    data = json.loads(REPORT.read_text())
    lines = ["| module | parameters | cells (budget) | LUT4 | carry | FF | BRAM |", "|---|---|---|---|---|---|---|"]
    for r in data.get("synth", {}).values():
        prm = ", ".join(f"{k}={v}" for k, v in r["parameters"].items()) or "defaults"
        lines.append(f"| {module_of(r['module'])} | {prm} | {r['cells']} ({r['budget']}) | {r['luts']} | "
                     f"{r['carries']} | {r['ffs']} | {r['brams']} |")
    if "pnr" in data:
        p = data["pnr"]
        lines.append(f"\n{p['top']} on {p['device']}: fmax {p['fmax_mhz']:.2f} MHz (target {p['target_mhz']:.0f}), "
                     + ", ".join(f"{k} {v}" for k, v in p["utilisation"].items()))
    if "bmc" in data:
        lines.append(f"packetizer BMC: {data['bmc']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args(argv)
    if not args.summary:
        failed = 0
        for top in [*dict.fromkeys(module_of(n) for n in BUDGETS), PNR_TOP]:
            res = lint(top)
            if res.returncode:
                print(res.stderr, file=sys.stderr)
                failed += 1
        for name in BUDGETS:
            r = synth(name)
            save("synth", r)
            failed += r["cells"] > r["budget"]
        save("pnr", place_and_route())
        print(summary())
        return 1 if failed else 0
    print(summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
