"""The rig file's results.influxdb section: validation, secrets, and set-up errors (no server needed)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hostlib._exceptions import ConfigError
from hostlib.results.influx import InfluxTarget, _Secret, ship_outbox
from hostlib.rig import load_rig

REPO = Path(__file__).resolve().parents[2]

HEAD = """\
name: lab
devices:
  dut: {driver: sim, max_rate: 1 GS/s}
results:
  outbox: OUTBOX
  influxdb:
"""


def rig_file(tmp_path: Path, influx: str) -> Path:
    p = tmp_path / "lab.yaml"
    p.write_text(HEAD.replace("OUTBOX", str(tmp_path / "outbox")) + textwrap.indent(textwrap.dedent(influx), "    "))
    return p


@pytest.mark.parametrize("key, hint", [("token", "token_env"), ("password", "password_env")])
def test_inline_secret_is_refused_with_file_and_line(tmp_path, key, hint):
    p = rig_file(tmp_path, f"""\
        url: http://influx:8086
        api: v2
        org: lab
        bucket: b
        {key}: hunter2
        """)
    with pytest.raises(ConfigError) as e:
        load_rig(p)
    issue, = e.value.issues
    assert (issue.file, issue.line, issue.field) == (str(p), 11, f"results.influxdb.{key}")
    assert hint in issue.message and "hunter2" not in str(e.value)


def test_api_needs_its_names_and_unknown_keys_are_named(tmp_path):
    p = rig_file(tmp_path, """\
        url: http://influx:8086
        api: v1
        """)
    with pytest.raises(ConfigError) as e:
        load_rig(p)
    assert e.value.issues[0].line == 6 and "api v1 needs database" in str(e.value)
    p = rig_file(tmp_path, """\
        url: influx:8086
        api: v3
        tls_verfy: false
        """)
    with pytest.raises(ConfigError) as e:
        load_rig(p)
    got = {(i.line, i.field) for i in e.value.issues}
    assert got == {(7, "results.influxdb.url"), (8, "results.influxdb.api"), (9, "results.influxdb.tls_verfy")}
    assert "did you mean 'tls_verify'" in str(e.value)


def test_defaults_and_target(tmp_path):
    p = rig_file(tmp_path, """\
        url: https://influx.lab:8086
        api: v2
        org: lab
        bucket: hilrig
        token_env: LAB_TOKEN
        """)
    target = InfluxTarget.from_rig(load_rig(p))
    assert target.tls_verify is True and target.timeout_s == 10 and target.batch_lines == 5000
    assert target.where == f"{p}:6 (results.influxdb)"
    assert InfluxTarget.from_rig(load_rig(REPO / "rigs" / "sim.yaml")) is None
    assert "tok" not in repr(_Secret("tok")) and "tok" not in str(_Secret("tok"))


def test_missing_secret_keeps_files_and_names_rig_and_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("LAB_TOKEN_ABSENT", raising=False)
    p = rig_file(tmp_path, """\
        url: http://127.0.0.1:9
        api: v2
        org: lab
        bucket: hilrig
        token_env: LAB_TOKEN_ABSENT
        """)
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    (outbox / "20260101T000000Z-aaaaaa.lp").write_text('hilrig_case,rig=lab passed=1 1\n')
    report = ship_outbox(outbox, InfluxTarget.from_rig(load_rig(p)))
    assert report.exit_code() == 3 and report.kept == [outbox / "20260101T000000Z-aaaaaa.lp"]
    text = "\n".join(report.lines())
    assert f"{p}:6" in text and "$LAB_TOKEN_ABSENT" in text and "kept in the outbox" in text
