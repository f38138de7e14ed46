"""Results into real InfluxDB servers (1.6.7 v1 API, 1.8.10 v1 + v2 API), with nothing lost.

The servers are real influxd processes (hostlib/tests/influx_servers.py); the
runs are real Robot / `hilrig run` runs on the simulator rig.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import textwrap
from pathlib import Path

import pytest
from line_protocol_parser import parse_line

from hostlib.tests.conftest import requires_native, thin_robot_suite
from hostlib.tests.influx_servers import *  # noqa: F401,F403  (fixtures)
from hostlib.tests.influx_servers import ADMIN_PASSWORD, ADMIN_USER, DEBIAN_INFLUXD, InfluxServer

REPO = Path(__file__).resolve().parents[2]
MEASUREMENTS = ("hilrig_case", "hilrig_series", "hilrig_run", "hilrig_block")
# Starter cases copied verbatim: a 3-point sweep (sweep tags) over shm and a TX case over UDP.
STARTER_CASES = ("rx/rx_shm_rates.yaml", "tx/tx_udp.yaml")
ONE_CASE = "tx/tx_udp.yaml"
# The verdicts themselves are the simulator's business (a loaded 2-core host may FAIL a
# threshold); these tests need a verdict, whichever, and the results of every case.
VERDICT = re.compile(r"^(PASS|PASS \(marginal\)|FAIL) tx udp", re.M)


def robot_finished(proc: subprocess.CompletedProcess, n_tests: int) -> None:
    """Robot ran every test to a verdict (its exit code is the number of failed tests)."""
    assert 0 <= proc.returncode <= n_tests and re.search(rf"\b{n_tests} tests?, ", proc.stdout), proc.stdout[-3000:]


def write_rig(path: Path, influx: str | None, outbox: Path) -> Path:
    text = textwrap.dedent(f"""\
        name: influxtest
        devices:
          dut:
            driver: sim
            channels: 4
            max_rate: 10 GS/s
        results:
          outbox: {outbox}
          evidence: {outbox.parent / 'evidence'}
        """)
    if influx:
        text += "  influxdb:\n" + textwrap.indent(textwrap.dedent(influx), "    ")
    path.write_text(text)
    return path


def hilrig(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "hostlib", *args], cwd=cwd, env=full_env, text=True,
                          capture_output=True, timeout=timeout)


def robot(suite: Path, rig: Path, out: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "robot", "--outputdir", str(out), "--variable", f"RIG:{rig}",
                           str(suite)], cwd=suite.parent, env=full_env, text=True, capture_output=True,
                          timeout=300)


def starter_suite(tmp: Path, cases=STARTER_CASES) -> Path:
    suite = tmp / "suite"
    suite.mkdir()
    thin_robot_suite(suite)
    for rel in cases:
        shutil.copy(REPO / "testcases" / rel, suite / Path(rel).name)
    return suite


def outbox_points(files) -> list[dict]:
    points = []
    for f in files:
        for line in Path(f).read_text().splitlines():
            p = parse_line(line)
            points.append({"measurement": p["measurement"], "tags": p["tags"], "time": p["time"],
                           "fields": p["fields"]})
    return points


def db_points(server: InfluxServer, db: str) -> list[dict]:
    return [p for m in MEASUREMENTS for p in server.points(db, m)]


def key(p: dict):
    return (p["measurement"], tuple(sorted(p["tags"].items())), p["time"])


def assert_same_points(outbox: list[dict], db: list[dict]) -> None:
    """Every outbox line is in the database with the same tags, timestamp and field values."""
    assert outbox, "the run wrote no outbox lines"
    want = {key(p): p["fields"] for p in outbox}
    got = {key(p): p["fields"] for p in db}
    assert len(want) == len(outbox), "two outbox lines share measurement+tags+time (one would overwrite)"
    assert set(got) == set(want)
    for k, fields in want.items():
        assert set(got[k]) == set(fields), k
        for name, value in fields.items():
            assert got[k][name] == value and isinstance(got[k][name], str) == isinstance(value, str), (k, name)


def field_types(server: InfluxServer, db: str) -> dict[tuple[str, str], str]:
    out = {}
    for series in server.query("SHOW FIELD KEYS", db):
        for name, ftype in series["values"]:
            out[(series["name"], name)] = ftype
    return out


# ------------------------------------------------------------------ 1. Robot run, each server

@requires_native
def test_robot_run_into_influx16_v1(tmp_path, influx16):
    influx16.query("CREATE DATABASE robot16")
    suite = starter_suite(tmp_path)
    rig = write_rig(tmp_path / "rig.yaml", f"""\
        url: {influx16.url}
        api: v1
        database: robot16
        """, tmp_path / "results" / "outbox")
    proc = robot(suite, rig, tmp_path / "robot")
    robot_finished(proc, 4)
    sent = sorted((tmp_path / "results" / "outbox" / "sent").glob("*.lp"))
    assert len(sent) == 1 and not list((tmp_path / "results" / "outbox").glob("*.lp"))
    points = outbox_points(sent)
    assert f"hilrig results: {len(points)} points from 1 outbox file(s) shipped to InfluxDB {influx16.url}" \
        in proc.stdout
    assert_same_points(points, db_points(influx16, "robot16"))
    # 4 cases (a 3-point sweep + TX): 4 case rows, one run row, series rows; sweep points as tags.
    cases = [p for p in points if p["measurement"] == "hilrig_case"]
    assert len(cases) == 4 and sum(p["measurement"] == "hilrig_run" for p in points) == 1
    assert {p["tags"].get("sweep_decimation") for p in cases} == {"200", "20", "8", None}
    assert {t for (m, _), t in field_types(influx16, "robot16").items()} <= {"float", "string"}


@requires_native
def test_robot_run_into_influx18_v2_with_auth(tmp_path, influx18_auth):
    server = influx18_auth
    server.query("CREATE DATABASE robot18")
    token = f"{ADMIN_USER}:{ADMIN_PASSWORD}"  # InfluxDB 1.8's v2 API takes user:password as token
    suite = starter_suite(tmp_path)
    rig = write_rig(tmp_path / "rig.yaml", f"""\
        url: {server.url}
        api: v2
        org: lab
        bucket: robot18/autogen
        token_env: HILRIG_TEST_TOKEN
        """, tmp_path / "results" / "outbox")
    env = {"HILRIG_TEST_TOKEN": token}
    proc = robot(suite, rig, tmp_path / "robot", env)
    robot_finished(proc, 4)
    sent = sorted((tmp_path / "results" / "outbox" / "sent").glob("*.lp"))
    assert len(sent) == 1
    points = outbox_points(sent)
    assert f"{len(points)} points from 1 outbox file(s) shipped to InfluxDB {server.url} (v2" in proc.stdout
    assert_same_points(points, db_points(server, "robot18"))

    # Read back through Flux (v2 API): `hilrig results show` lists every case of the run.
    run_id = sent[0].stem
    show = hilrig("results", "show", "--run", run_id, "--rig", str(rig), cwd=tmp_path, env=env)
    assert show.returncode == 0, show.stderr
    assert f"run {run_id}" in show.stdout and "from InfluxDB" in show.stdout
    assert all(name in show.stdout for name in ("RX shm [decimation=200]", "RX shm [decimation=8]", "TX UDP"))
    last = hilrig("results", "show", "--last", "1", "--rig", str(rig), cwd=tmp_path, env=env)
    assert last.returncode == 0 and run_id in last.stdout

    # The token is nowhere: console, Robot output, evidence, outbox.
    texts = [proc.stdout, proc.stderr, show.stdout]
    texts += [p.read_text(errors="replace") for p in (tmp_path / "robot").iterdir() if p.is_file()]
    texts += [p.read_text() for p in (tmp_path / "results").rglob("*") if p.is_file()]
    assert not [t for t in texts if ADMIN_PASSWORD in t]


# ------------------------------------------------------------------ 2. server down, then back

@requires_native
def test_server_down_keeps_results_then_push_ships_backlog_once(tmp_path):
    if not DEBIAN_INFLUXD.exists():
        pytest.skip(f"{DEBIAN_INFLUXD} is absent (apt-get install influxdb)")
    server = InfluxServer(DEBIAN_INFLUXD, tmp_path / "influxd", flux=False).start()
    try:
        server.query("CREATE DATABASE backlog")
        server.stop()  # down for the runs; same port and data when it comes back
        rig = write_rig(tmp_path / "rig.yaml", f"url: {server.url}\napi: v1\ndatabase: backlog\n",
                        tmp_path / "results" / "outbox")
        outbox = tmp_path / "results" / "outbox"
        for _ in range(2):
            run = hilrig("run", str(REPO / "testcases" / ONE_CASE), "--rig", str(rig), cwd=tmp_path)
            assert run.returncode in (0, 1), run.stdout + run.stderr  # the verdict stands
            assert VERDICT.search(run.stdout)
            assert f"kept in the outbox {outbox}" in run.stdout and "unreachable" in run.stdout
            assert server.url in run.stdout
        # The same through Robot: verdicts finish, the suite says the results are kept.
        proc = robot(starter_suite(tmp_path, cases=(ONE_CASE,)), rig, tmp_path / "robot")
        robot_finished(proc, 1)
        assert f"kept in the outbox {outbox}" in proc.stdout and "unreachable" in proc.stdout
        pending = sorted(outbox.glob("*.lp"))
        assert len(pending) == 3
        measured = outbox_points(pending)

        server.start()
        push = hilrig("results", "push", "--rig", str(rig), cwd=tmp_path)
        assert push.returncode == 0, push.stdout + push.stderr
        assert f"{len(measured)} points from 3 outbox file(s) shipped" in push.stdout
        assert not list(outbox.glob("*.lp"))
        assert_same_points(measured, db_points(server, "backlog"))

        again = hilrig("results", "push", "--rig", str(rig), cwd=tmp_path)
        assert again.returncode == 0 and "nothing to ship" in again.stdout
        # Shipping the very same files a second time overwrites, never duplicates.
        for f in (outbox / "sent").glob("*.lp"):
            shutil.copy(f, outbox / f.name)
        twice = hilrig("results", "push", "--rig", str(rig), cwd=tmp_path)
        assert twice.returncode == 0 and f"{len(measured)} points from 3" in twice.stdout
        assert len(db_points(server, "backlog")) == len(measured)
        count = server.query('SELECT count("run_id") FROM "hilrig_case"', "backlog")
        assert count[0]["values"][0][1] == 3
    finally:
        server.stop()


# ------------------------------------------------------------------ 3. a 400 is set aside, not retried

def _synthetic_outbox(tmp_path: Path, write_case, n_runs: int) -> list[Path]:
    """Outbox files of real case objects with measured-looking metrics (no simulator needed)."""
    from hostlib.results import CaseResult, Outbox, new_run_id
    from hostlib.results.record import iso_utc, utc_now

    case = write_case("""\
        name: RX UDP
        device: dut
        direction: rx
        master_clock: 200 MHz
        decimation: 20
        transport: {kind: udp, frame_bytes: 8000}
        duration: 1 s
        thresholds: {missing_frames: "== 0"}
        """)[0]
    outbox = Outbox(tmp_path / "results" / "outbox", git_sha="abc")
    files = []
    for i in range(n_runs):
        now = iso_utc(utc_now())
        run_id = new_run_id()
        result = CaseResult(case=case, rig_name="influxtest", device="dut", driver="sim", run_id=run_id,
                            started_utc=now, ended_utc=now, verdict="PASS", message="ok",
                            metrics={"throughput_sps": 10e6 + i, "missing_frames": 0.0})
        files.append(outbox.append(result))
        time.sleep(0.002)
    return files


def test_field_type_conflict_is_set_aside_with_the_servers_reason(tmp_path, influx16, write_case):
    influx16.query("CREATE DATABASE conflict")
    # The lab's database already holds throughput_sps as an integer: our float is a type conflict.
    assert influx16.write(f"hilrig_case,rig=other throughput_sps=1i {time.time_ns()}", "conflict") == 204
    bad, = _synthetic_outbox(tmp_path, write_case, 1)
    rig = write_rig(tmp_path / "rig.yaml", f"url: {influx16.url}\napi: v1\ndatabase: conflict\n",
                    tmp_path / "results" / "outbox")
    push = hilrig("results", "push", "--rig", str(rig), cwd=tmp_path)
    assert push.returncode == 1, push.stdout + push.stderr
    assert "Traceback" not in push.stderr
    assert f"{bad.name} set aside" in push.stdout and "field type conflict" in push.stdout
    assert "never retried" in push.stdout
    rejected = tmp_path / "results" / "outbox" / "rejected"
    assert (rejected / bad.name).exists() and not bad.exists()
    reason = (rejected / (bad.name + ".reason")).read_text()
    assert "400" in reason and 'input field "throughput_sps"' in reason and "already exists as type integer" in reason

    again = hilrig("results", "push", "--rig", str(rig), cwd=tmp_path)
    assert again.returncode == 0 and "nothing to ship" in again.stdout
    assert (rejected / bad.name).exists() and len(list(rejected.glob("*.lp"))) == 1


def test_rejected_file_does_not_block_the_next(tmp_path, influx16, write_case):
    influx16.query("CREATE DATABASE mixed")
    first, second = _synthetic_outbox(tmp_path, write_case, 2)
    first.write_text(first.read_text().replace("missing_frames=0", 'missing_frames="zero"'))
    influx16.write(f"hilrig_case,rig=other missing_frames=1 {time.time_ns()}", "mixed")
    rig = write_rig(tmp_path / "rig.yaml", f"url: {influx16.url}\napi: v1\ndatabase: mixed\n",
                    tmp_path / "results" / "outbox")
    push = hilrig("results", "push", "--rig", str(rig), cwd=tmp_path)
    assert push.returncode == 1
    outbox = tmp_path / "results" / "outbox"
    assert (outbox / "rejected" / first.name).exists() and (outbox / "sent" / second.name).exists()
    rows = influx16.points("mixed", "hilrig_case")
    assert [r["fields"]["run_id"] for r in rows if r["tags"].get("rig") == "influxtest"] == [second.stem]


# ------------------------------------------------------------------ 4. wrong credentials

@requires_native
def test_wrong_credentials_one_line_error_verdict_stands(tmp_path, influx18_auth):
    influx18_auth.query("CREATE DATABASE creds")
    rig = write_rig(tmp_path / "rig.yaml", f"""\
        url: {influx18_auth.url}
        api: v1
        database: creds
        username: {ADMIN_USER}
        password_env: HILRIG_TEST_PASSWORD
        """, tmp_path / "results" / "outbox")
    wrong = "not-the-password-42"
    env = {"HILRIG_TEST_PASSWORD": wrong}
    run = hilrig("run", str(REPO / "testcases" / ONE_CASE), "--rig", str(rig), cwd=tmp_path, env=env)
    out = run.stdout + run.stderr
    assert run.returncode in (0, 1), out
    assert VERDICT.search(out) and "Traceback" not in out and wrong not in out
    lines = [line for line in out.splitlines() if "refused the credentials" in line]
    assert len(lines) == 1 and influx18_auth.url in lines[0] and f"{rig}:" in lines[0], out
    assert len(list((tmp_path / "results" / "outbox").glob("*.lp"))) == 1  # kept

    # Right password: the kept file ships.
    ok = hilrig("results", "push", "--rig", str(rig), cwd=tmp_path, env={"HILRIG_TEST_PASSWORD": ADMIN_PASSWORD})
    assert ok.returncode == 0 and "shipped" in ok.stdout, ok.stdout + ok.stderr


def test_wrong_v2_token_on_push(tmp_path, influx18_auth, write_case):
    influx18_auth.query("CREATE DATABASE creds2")
    _synthetic_outbox(tmp_path, write_case, 1)
    rig = write_rig(tmp_path / "rig.yaml", f"""\
        url: {influx18_auth.url}
        api: v2
        org: lab
        bucket: creds2
        token_file: token.txt
        """, tmp_path / "results" / "outbox")
    (tmp_path / "token.txt").write_text(f"{ADMIN_USER}:wrong-secret-77\n")
    push = hilrig("results", "push", "--rig", str(rig), cwd=tmp_path)
    assert push.returncode == 3
    assert "Traceback" not in push.stderr and "wrong-secret-77" not in push.stdout + push.stderr
    assert influx18_auth.url in push.stdout and str(rig) in push.stdout and "401" in push.stdout
    assert len(list((tmp_path / "results" / "outbox").glob("*.lp"))) == 1


# ------------------------------------------------------------------ files of running runs, v1 on 1.8, show

def test_running_run_is_not_shipped_until_released(tmp_path, influx18, write_case):
    from hostlib.results import Outbox
    from hostlib.results.influx import InfluxTarget, ship_outbox

    influx18.query("CREATE DATABASE active")
    f, = _synthetic_outbox(tmp_path, write_case, 1)
    target = InfluxTarget(url=influx18.url, api="v1", database="active")
    lock = Outbox(f.parent).hold(f.stem)
    report = ship_outbox(f.parent, target)
    assert report.active == [f] and not report.sent and f.exists()
    lock.release()
    report = ship_outbox(f.parent, target)
    assert [p.name for p, _ in report.sent] == [f.name] and report.points_sent == 1
    assert len(influx18.points("active", "hilrig_case")) == 1


def test_show_from_influxql_and_from_outbox(tmp_path, influx16, write_case):
    influx16.query("CREATE DATABASE showdb")
    files = _synthetic_outbox(tmp_path, write_case, 2)
    no_server = write_rig(tmp_path / "plain.yaml", None, tmp_path / "results" / "outbox")
    out = hilrig("results", "show", "--last", "2", "--rig", str(no_server), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert all(f.stem in out.stdout for f in files) and "from outbox" in out.stdout
    rig = write_rig(tmp_path / "rig.yaml", f"url: {influx16.url}\napi: v1\ndatabase: showdb\n",
                    tmp_path / "results" / "outbox")
    assert hilrig("results", "push", "--rig", str(rig), cwd=tmp_path).returncode == 0
    show = hilrig("results", "show", "--run", files[0].stem, "--rig", str(rig), cwd=tmp_path)
    assert show.returncode == 0 and files[0].stem in show.stdout and files[1].stem not in show.stdout
    assert "RX UDP" in show.stdout and "10.000" in show.stdout
    last = hilrig("results", "show", "--last", "2", "--rig", str(rig), cwd=tmp_path)
    assert last.returncode == 0 and all(f.stem in last.stdout for f in files) and "from InfluxDB" in last.stdout
    missing = hilrig("results", "show", "--run", "nope", "--rig", str(rig), cwd=tmp_path)
    assert missing.returncode == 1 and "no results for run nope" in missing.stdout
