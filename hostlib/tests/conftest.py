"""Shared fixtures: the simulator rig, cases written as YAML the way a lab writes them."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def native_built() -> bool:
    try:
        from hostlib import _native  # noqa: F401
    except ImportError:
        return False
    return (REPO / "build" / "bin" / "hilrig-sim").exists() or bool(os.environ.get("HILRIG_SIM_BIN"))


requires_native = pytest.mark.skipif(not native_built(), reason="native core not built (run `make build`)")


@pytest.fixture
def sim_rig():
    from hostlib.rig import load_rig

    return load_rig(REPO / "rigs" / "sim.yaml")


@pytest.fixture
def write_case(tmp_path):
    """Write a YAML case file and load it; returns the list of resolved cases."""
    from hostlib.dsl import load_cases

    counter = {"n": 0}

    def _write(text: str):
        counter["n"] += 1
        path = tmp_path / f"case{counter['n']}.yaml"
        path.write_text(textwrap.dedent(text))
        return load_cases([path])

    return _write
