"""The case's contract with the core and the layers: Case.stream is the core's stream
config field for field, resolved once at load; the fault model is the core's key list;
the simulator's answer is only compared; the DSL never reaches up into the engine."""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from hostlib.tests.conftest import requires_native

REPO = Path(__file__).resolve().parents[2]

CASE = """
name: contract
device: dut
direction: {direction}
master_clock: 100 MHz
{divider}: 50
transport: {{kind: {kind}, frame_bytes: 4048}}
duration: 200 ms
{extra}
"""


def load(write_case, kind="udp", direction="rx", extra=""):
    divider = "interpolation" if direction == "tx" else "decimation"
    return write_case(CASE.format(kind=kind, direction=direction, divider=divider, extra=extra))[0]


def issues_of(tmp_path, direction, extra):
    from hostlib.dsl import validate_paths
    p = tmp_path / "c.yaml"
    divider = "interpolation" if direction == "tx" else "decimation"
    p.write_text(CASE.format(kind="udp", direction=direction, divider=divider, extra=extra))
    return validate_paths([p])[1]


@requires_native
@pytest.mark.parametrize("kind", ["udp", "shm", "usb"])
def test_case_stream_fields_are_the_core_config_keys(kind):
    from hostlib import _native
    from hostlib.transports.config import StreamConfig, transport_from_json
    core = _native.default_stream_config(kind, 4048)
    assert {f.name for f in dataclasses.fields(StreamConfig)} == set(core)
    transport = transport_from_json(core["transport"])
    assert {f.name for f in dataclasses.fields(transport)} == set(core["transport"])
    assert StreamConfig.from_json(core).to_json() == core


@requires_native
def test_the_fault_model_is_the_core_key_list():
    from hostlib.dsl.schema import FaultsModel
    from hostlib.transports import stream_defaults
    from hostlib.transports.config import Faults
    keys = set(stream_defaults()["fault_keys"])
    assert set(FaultsModel.model_fields) == keys
    assert {f.name for f in dataclasses.fields(Faults)} == keys


@requires_native
def test_every_fault_key_of_the_core_can_be_written(write_case):
    case = load(write_case, direction="tx", extra="faults: {stall_ms: 20, window_frames: 4000, drop_frames: 1}")
    assert (case.faults.stall_ms, case.faults.window_frames, case.faults.drop_frames) == (20, 4000, 1)
    assert case.faults.seed == 1 and case.faults.injected() == ("drop_frames", "stall_ms")


@requires_native
@pytest.mark.parametrize("kind", ["udp", "shm", "usb"])
def test_the_case_carries_the_config_the_core_resolved(write_case, kind):
    from hostlib import _native
    from hostlib.transports import sim_config, stream_config
    case = load(write_case, kind=kind)
    cfg = stream_config(case)
    assert _native.check_stream_config(cfg) == cfg          # the core takes it as it is
    assert _native.check_sim_config(sim_config(case)) == sim_config(case)
    assert cfg["rate_sps"] == case.rate_sps == 2e6 and cfg["frame_bytes"] == case.frame_bytes == 4048
    # A leg or a search step derived with dataclasses.replace carries its own stream.
    tx = dataclasses.replace(case, direction="tx", rate_sps=1e6)
    assert (tx.stream.direction, tx.stream.rate_sps) == ("tx", 1e6) and tx.stream.transport == case.transport


@requires_native
def test_a_value_the_core_refuses_is_an_error_at_its_line(tmp_path):
    issues = issues_of(tmp_path, "tx", "faults:\n  window_frames: 281474976710657")
    assert [(i.line, i.field) for i in issues] == [(10, "faults.window_frames")], issues


@requires_native
def test_the_simulators_answer_is_compared_never_merged(write_case):
    from hostlib import _native
    from hostlib._exceptions import InfrastructureError
    from hostlib.transports import agreed_config, sim_config
    case = load(write_case)
    sent = sim_config(case)
    answer = _native.check_sim_config(sent)
    answer["transport"]["port"] = 40123                     # where the link is: not config
    assert agreed_config(sent, answer) == answer
    answer["fifo_frames"] += 1
    answer["faults"]["seed"] = 9
    with pytest.raises(InfrastructureError, match=r"faults\.seed: sent 1, runs 9; fifo_frames: sent"):
        agreed_config(sent, answer)


@requires_native
def test_can_run_is_the_one_device_check(write_case, sim_rig):
    dut = sim_rig.devices["dut"]
    assert dut.can_run(load(write_case))
    fit = dut.can_run(load(write_case, extra="requires: {channels: 64}"))
    assert not fit and "requires 64 channels" in (fit.why_not or "")
    fit = dut.can_run(load(write_case, extra="channels: 8"))
    assert not fit and "case needs 8 channels" in (fit.why_not or "")


# The DSL and what it stands on sit below the engine, the drivers, the rig and the CLI.
_BELOW = ["hostlib/dsl", "hostlib/transports", "hostlib/selection.py"]
_ABOVE = ("hostlib.engine", "hostlib.drivers", "hostlib.rig", "hostlib.cli", "hostlib.session", "hostlib.reports")


def _imports(path: Path) -> set[str]:
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            out.add(f"{base}.{node.module}" if base and node.module else node.module or base)
    return out


def test_the_dsl_never_imports_upward():
    files = [p for b in _BELOW for p in ([REPO / b] if b.endswith(".py") else sorted((REPO / b).glob("*.py")))]
    upward = {f"{p.relative_to(REPO)}: {m}" for p in files for m in _imports(p) if m.startswith(_ABOVE)}
    assert not upward
    transports = [p for p in files if "transports" in p.parts]
    assert not {f"{p.name}: {m}" for p in transports for m in _imports(p) if m.startswith("hostlib.dsl")}


def test_a_pass_through_arg_is_one_plain_value(tmp_path):
    issues = issues_of(tmp_path, "rx", "transport_args:\n  num_recv_frames: 64\n  dpdk_corelist: [2, 3]")
    assert [(i.line, i.field) for i in issues] == [(11, "transport_args.dpdk_corelist")], issues
    assert "must be a number, text or true/false, not a list" in issues[0].message
