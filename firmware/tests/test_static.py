"""Static checks of firmware/rtl in `make test`: Verilator lint, yosys synth_ice40 with a cell
budget per module (over budget fails), nextpnr-ice40 place and route of loopback_top with the
fmax printed, and the packetizer's bounded model check."""
from __future__ import annotations

import pytest

import flow
import run_bmc


@pytest.mark.parametrize("top", [*dict.fromkeys(flow.module_of(n) for n in flow.BUDGETS), flow.PNR_TOP])
def test_verilator_lint_wall_clean(top):
    res = flow.lint(top)
    assert res.returncode == 0 and "%Warning" not in res.stderr, res.stderr


@pytest.mark.parametrize("name", list(flow.BUDGETS))
def test_synthesis_within_cell_budget(name):
    r = flow.synth(name)
    flow.save("synth", r)
    print(f"{name}: {r['cells']} cells (budget {r['budget']}), {r['luts']} LUT4, {r['ffs']} FF, {r['brams']} BRAM")
    assert r["luts"] > 0 and r["ffs"] > 0, "synthesis kept the logic"
    assert r["cells"] <= r["budget"], f"{name}: {r['cells']} cells exceed the budget of {r['budget']}"


def test_place_and_route_loopback_top(capsys):
    r = flow.place_and_route()
    flow.save("pnr", r)
    with capsys.disabled():
        print(f"\n{r['top']} on {r['device']}: fmax {r['fmax_mhz']:.2f} MHz (target {r['target_mhz']:.0f} MHz), "
              f"{r['utilisation']}")
    assert r["fmax_mhz"] >= r["target_mhz"], "timing not met at the target clock"


def test_packetizer_bounded_model_check(capsys):
    rc = run_bmc.main([])
    flow.save("bmc", f"assertions hold for {run_bmc.DEPTH} cycles, cover reached" if rc == 0 else "FAILED")
    assert rc == 0, "yosys-smtbmc found a counterexample or the cover was not reached (see the output)"
