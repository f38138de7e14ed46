"""hostlib.rig: the inventory loader, its errors, and how a rig is chosen."""
import textwrap
from pathlib import Path

import pytest

from hostlib._exceptions import ConfigError
from hostlib.dsl import load_cases
from hostlib.rig import default_rig_path, load_rig, resolve_rig_path

REPO = Path(__file__).resolve().parents[2]


def test_sim_rig():
    rig = load_rig(REPO / "rigs" / "sim.yaml")
    assert rig.name == "sim" and rig.file.endswith("rigs/sim.yaml")
    dut = rig.devices["dut"]
    assert dut.alias == "dut" and dut.driver == "sim"
    assert dut.channels == 4 and dut.max_rate_sps >= 1e9
    assert set(dut.directions) == {"rx", "tx", "loopback"} and set(dut.transports) == {"udp", "tcp", "shm", "usb"}
    assert rig.results["outbox"] == "results/outbox"


def test_default_rig_path(monkeypatch, tmp_path):
    monkeypatch.delenv("HILRIG_RIG", raising=False)
    assert default_rig_path() == REPO / "rigs" / "sim.yaml"
    monkeypatch.setenv("HILRIG_RIG", "lab3")
    assert default_rig_path() == REPO / "rigs" / "lab3.yaml"
    own = tmp_path / "my.yaml"
    monkeypatch.setenv("HILRIG_RIG", str(own))
    assert default_rig_path() == own
    assert resolve_rig_path("rigs/x.yml") == Path("rigs/x.yml")
    assert default_rig_path("lab3") == REPO / "rigs" / "lab3.yaml"   # an explicit choice beats $HILRIG_RIG


def test_rig_errors_have_lines_and_hints(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(textwrap.dedent("""\
        name: lab
        devices:
          b210:
            driver: uhdd
            serial: 3141
            max_rate: 61.44 MHz
            chanels: 2
          x310:
            driver: uhd
            max_rate: 200 MS/s
            directions: [rx, sideways]
        resultz: {}
        """))
    with pytest.raises(ConfigError) as e:
        load_rig(p)
    got = [(i.line, i.field) for i in e.value.issues]
    assert got == [(4, "devices.b210.driver"), (5, "devices.b210.serial"), (6, "devices.b210.max_rate"),
                   (7, "devices.b210.chanels"), (11, "devices.x310.directions.1"), (12, "resultz")]
    msgs = {i.field: i.message for i in e.value.issues}
    assert "'sim', 'uhd', 'soapy' or 'usb'" in msgs["devices.b210.driver"]
    assert "frequency unit" in msgs["devices.b210.max_rate"]
    assert "did you mean 'channels'" in msgs["devices.b210.chanels"]
    assert "did you mean 'results'" in msgs["resultz"]
    assert all(i.file == str(p) for i in e.value.issues)


def test_rig_syntax_error(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("name: x\ndevices:\n  dut: {driver: sim\n")
    with pytest.raises(ConfigError) as e:
        load_rig(p)
    [issue] = e.value.issues
    assert issue.file == str(p) and issue.line is not None and "syntax" in issue.message


def test_unsupported_reason(tmp_path):
    p = tmp_path / "small.yaml"
    p.write_text(textwrap.dedent("""\
        name: small
        devices:
          dut: {driver: sim, channels: 1, max_rate: 5 MS/s, directions: [rx], transports: [udp]}
        """))
    dut = load_rig(p).devices["dut"]
    cases = {c.test_name: c for c in load_cases([REPO / "testcases"])}
    assert dut.unsupported_reason(cases["RX UDP 1 MS/s"]) is None
    assert "rate" in dut.unsupported_reason(cases["RX UDP 10 MS/s"])
    assert "direction tx" in dut.unsupported_reason(cases["TX UDP 10 MS/s"])
    assert "transport shm" in dut.unsupported_reason(cases["RX shm [decimation=200]"])


# ------------------------------------------------------------------ typed device args

@pytest.mark.parametrize("driver, args, key, hint", [
    ("sim", "{lok: true}", "lok", "did you mean 'lock'?"),
    ("sim", "{binray: /opt/hilrig-sim}", "binray", "did you mean 'binary'?"),
    ("uhd", "{type: b200, lok: true}", "lok", "did you mean 'lock'?"),
    ("soapy", "{driver: hilrig, check_patern: true}", "check_patern", "did you mean 'check_pattern'?"),
])
def test_a_typo_in_device_args_is_refused_with_its_line(tmp_path, driver, args, key, hint):
    """A misspelt key of hilrig's own (lock, check_pattern, binary) must not load: on the
    simulator it would be ignored, on a radio passed through as a device arg the library
    ignores, and either way what it meant (hold the lock, check the pattern) is off."""
    path = tmp_path / "rig.yaml"
    path.write_text(f"name: typo\ndevices:\n  dut:\n    driver: {driver}\n    args: {args}\n    max_rate: 1 MS/s\n")
    with pytest.raises(ConfigError) as exc:
        load_rig(path)
    text = str(exc.value)
    assert f"{path}:5" in text and f"devices.dut.args.{key}" in text and hint in text, text


def test_device_args_are_typed_per_driver(tmp_path):
    from hostlib.rig.args import SimArgs, SoapyArgs, UhdArgs
    path = tmp_path / "rig.yaml"
    path.write_text(textwrap.dedent("""\
        name: typed
        devices:
          sim: {driver: sim, args: {lock: true}, max_rate: 1 GS/s}
          usrp: {driver: uhd, args: {type: b200, addr: 192.168.10.2, check_pattern: true}, max_rate: 1 MS/s}
          soapy: {driver: soapy, args: {driver: hilrig, frequency_hz: 1e9}, max_rate: 1 MS/s}
        """))
    rig = load_rig(path)
    assert rig.devices["sim"].args == SimArgs(lock=True)
    usrp = rig.devices["usrp"].args
    assert isinstance(usrp, UhdArgs) and usrp.check_pattern is True
    # UHD's device args are free-form: passed through as text, hilrig's own keys left out.
    assert usrp.device_args() == {"type": "b200", "addr": "192.168.10.2"}
    soapy = rig.devices["soapy"].args
    assert isinstance(soapy, SoapyArgs) and soapy.frequency_hz == 1e9 and soapy.device_args() == {"driver": "hilrig"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ndevices:\n  usrp:\n    driver: uhd\n    args: {type: b200, tune: {a: 1}}\n"
                   "    max_rate: 1 MS/s\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:5: devices.usrp.args.tune: device arg 'tune' is a dict"):
        load_rig(bad)
