"""One stream config (issue 10): defaults defined once in the core, read by Python;
the DSL, the `sim` driver and the SoapySDR module driver=hilrig give the same
effective config for the same case; the core rejects a config with a key missing."""
from __future__ import annotations

import json
import time

import pytest

from hostlib.tests.conftest import requires_native

pytestmark = requires_native

CASE = """
name: agree {kind} {device}
device: {device}
direction: rx
channels: 2
format: {fmt}
master_clock: 100 MHz
decimation: 50
transport: {{kind: {kind}, frame_bytes: {frame_bytes}{knobs}}}
duration: 200 ms
faults: {{seed: 3, drop_frames: 2, corrupt_samples: 5}}
thresholds: {{missing_frames: "== 2"}}
"""
# Where each path's link happens to be (a port, a ring path) is not config.
ENDPOINT_KEYS = ("host", "port", "path")


def comparable(cfg: dict) -> dict:
    cfg = json.loads(json.dumps(cfg))
    for key in ENDPOINT_KEYS:
        cfg["transport"].pop(key, None)
    return cfg


def test_python_reads_every_default_from_the_core():
    from hostlib import _native
    from hostlib.dsl.schema import TransportModel
    from hostlib.transports import default_fifo_frames, default_shm_slots, resolve_stream, stream_defaults
    d = stream_defaults()
    assert d == _native.stream_defaults()
    assert TransportModel(kind="udp").frame_bytes == d["frame_bytes"]
    assert resolve_stream({"transport": {"kind": "udp"}}).transport == resolve_stream({}).transport
    assert resolve_stream({}).transport.socket_buffer_bytes == d["socket_buffer_bytes"]
    # ring and FIFO follow the frame size within their bounds
    assert default_shm_slots(8000) == d["ring_bytes"] // 8000
    assert default_shm_slots(10**7) == d["ring_min_slots"] and default_shm_slots(100) == d["ring_max_slots"]
    assert default_fifo_frames(8000) == d["fifo_bytes"] // 8000
    assert default_fifo_frames(2**30) == d["fifo_min_frames"]


def test_ring_publish_strategies_are_the_cores_and_a_case_picks_one(tmp_path):
    from hostlib.dsl import load_cases
    from hostlib.transports import resolve_stream, stream_defaults
    from hostlib.transports.config import RingPublish, ShmTransport
    d = stream_defaults()
    assert [p.value for p in RingPublish] == d["ring_publish_names"]
    t = resolve_stream({"transport": {"kind": "shm"}}).transport
    assert isinstance(t, ShmTransport) and t.publish == RingPublish(d["ring_publish"])
    path = tmp_path / "c.yaml"
    path.write_text(CASE.format(kind="shm", device="dut", fmt="sc16", frame_bytes=2000, knobs=", publish: adaptive"))
    [c] = load_cases([path])
    assert isinstance(c.transport, ShmTransport) and c.transport.publish is RingPublish.ADAPTIVE
    with pytest.raises(ValueError, match='transport.publish: must be one of .*got "fast"'):
        resolve_stream({"transport": {"kind": "shm", "publish": "fast"}})


def test_config_round_trip_and_missing_keys_are_errors():
    from hostlib import _native
    from hostlib.transports import complete_config
    for kind in ("udp", "shm"):
        full = _native.default_sim_config(kind, 1000)
        assert _native.check_sim_config(full) == full          # to_json(from_json(x)) == x
        stream = {k: v for k, v in full.items() if k not in ("master_clock_hz", "fifo_frames", "faults")}
        assert _native.check_stream_config(stream) == stream
        for key in list(stream):
            broken = {k: v for k, v in stream.items() if k != key}
            with pytest.raises(ValueError, match=f"{key}: is missing"):
                _native.check_stream_config(broken)
        for key in list(full["transport"]):
            if key == "kind":
                continue
            broken = json.loads(json.dumps(stream))
            del broken["transport"][key]
            with pytest.raises(ValueError, match=f"transport.{key}: is missing"):
                _native.RxStream(broken)
    # A partial config completed from the core's defaults is accepted.
    assert _native.check_stream_config(complete_config({"rate_sps": 1e6}))["rate_sps"] == 1e6


@pytest.mark.parametrize("kind,fmt,frame_bytes,knobs", [("udp", "sc16", 4048, ""), ("shm", "sc8", 2000, ""),
                                                        ("shm", "sc16", 2000, ", publish: adaptive")])
def test_dsl_sim_driver_and_soapy_module_agree(write_case, sim_rig, kind, fmt, frame_bytes, knobs):
    from hostlib import _native
    from hostlib.drivers.base import driver_class
    from hostlib.tests.test_devices import soapy_env
    from hostlib.transports import sim_config
    soapy_env()
    effective = {}
    for device in ("dut", "soapy_sim"):
        case = write_case(CASE.format(kind=kind, device=device, fmt=fmt, frame_bytes=frame_bytes, knobs=knobs))[0]
        if device == "dut":
            effective["dsl"] = comparable(_native.check_sim_config(sim_config(case)))
        entry = sim_rig.devices[device]
        driver = driver_class(entry.driver)(entry)
        driver.open()
        try:
            driver.configure(case)
            driver.start()
            if device == "dut":
                effective["sim"] = comparable(driver.effective_config)
            else:  # the module configures its simulator on activateStream
                deadline = time.monotonic() + 5
                sensors: dict = {}
                while not json.loads(sensors.get("sim_config") or "{}") and time.monotonic() < deadline:
                    sensors = driver.radio.stats()["sensors"]
                    time.sleep(0.02)
                effective["soapy"] = comparable(json.loads(sensors["sim_config"]))
            driver.stop()
        finally:
            driver.close()
    assert effective["dsl"]["faults"]["drop_frames"] == 2 and effective["dsl"]["transport"]["kind"] == kind
    assert effective["dsl"]["fifo_frames"] == _native.stream_defaults()["fifo_bytes"] // frame_bytes
    assert effective["sim"] == effective["dsl"]
    assert effective["soapy"] == effective["dsl"]


def test_the_case_carries_the_config_sized_by_rate_and_the_stream_opens_with_it(tmp_path):
    """Sized once, when the case is loaded: the case, `hilrig validate` and the evidence
    hold the effective socket buffer and ring, and a stream opened with the case's config
    has exactly those (what it had before, when it sized itself at opening)."""
    import io

    from hostlib.cli.validate import validate_command
    from hostlib.drivers._native_facade import NativeRx
    from hostlib.results.record import case_record
    from hostlib.tests.factories import make_case
    from hostlib.transports import endpoint_differences, stream_config, stream_defaults
    fast_udp, fast_shm = make_case("RX 200 MS/s udp", rate_sps=2e8), make_case("RX 200 MS/s shm", kind="shm", rate_sps=2e8)
    slow_shm = make_case("RX 1 MS/s shm", kind="shm", rate_sps=1e6)
    assert fast_udp.transport.socket_buffer_bytes == 32 << 20  # 50 ms of 200 MS/s is 40.2 MB: capped at 32 MiB
    assert fast_shm.transport.slots == 5031                    # ceil(50 ms of 2e8 / 1988 frames/s)
    assert slow_shm.transport.slots == stream_defaults()["ring_bytes"] // 8000  # the default holds 50 ms already
    for case, key in ((fast_udp, "socket_buffer_bytes"), (fast_shm, "slots")):
        rx = NativeRx(stream_config(case), case.location)
        try:
            endpoint = rx.endpoint()
        finally:
            rx.stop()
        assert endpoint[key] == case.transport.to_json()[key] and endpoint_differences(case.stream, endpoint) == []
        assert case_record(case).transport.options[key] == endpoint[key]  # the evidence records what ran
    path = tmp_path / "fast.yaml"
    path.write_text(json.dumps(dict(fast_udp.raw)))
    out = io.StringIO()
    assert validate_command([str(path)], out) == 0
    assert f"socket buffer {32 << 20} B" in out.getvalue()


def test_a_link_opened_with_other_sizes_than_the_case_is_an_infrastructure_error():
    from hostlib._exceptions import InfrastructureError
    from hostlib.tests.factories import make_case
    from hostlib.transports import agreed_endpoint, endpoint_differences
    case = make_case(kind="shm")
    slots = case.transport.to_json()["slots"]
    endpoint = {"kind": "shm", "path": "/proc/1/fd/3", "slots": slots + 1}
    assert endpoint_differences(case.stream, endpoint) == [f"transport.slots: case {slots}, opened {slots + 1}"]
    with pytest.raises(InfrastructureError, match="the simulator opened another link than the case's config"):
        agreed_endpoint(case.stream, endpoint, "the simulator")
    agreed_endpoint(case.stream, {**endpoint, "slots": slots}, "the simulator")   # the same sizes: agreed
