"""Every panel query of the Grafana dashboards (reports/grafana/) against real InfluxDB servers.

Data: a real `hilrig run` on the simulator rig (a 2-point sweep and a TX case) plus a
bench record, shipped by the real shipper to Debian's influxd 1.6.7 (InfluxQL) and to
InfluxDB 1.8.10 (InfluxQL and Flux). Grafana's macros are replaced the way Grafana
expands them for a 30-day range and a 1 h interval.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hostlib.bench.record import BenchRow, write_bench_results
from hostlib.tests.conftest import requires_native
from hostlib.tests.influx_servers import *  # noqa: F401,F403  (fixtures)

REPO = Path(__file__).resolve().parents[2]
GRAFANA = REPO / "reports" / "grafana"
RIG = "grafana"
CASES = """\
name: Grafana sweep
device: dut
direction: rx
master_clock: 200 MHz
decimation: 20
transport: {kind: udp, frame_bytes: 8000}
warmup: 100 ms
duration: 500 ms
thresholds:
  pattern_errors: "== 0"
sweep:
  transport.frame_bytes: [1400, 8000]
"""
BENCH = [BenchRow("UDP zero-loss", 1472, 2.5e9, 1.7e6, 95.0, "iperf3", 2.5e8, 1.7e5, 10.0),
         BenchRow("shm ring, checked", 8192, 5.4e10, 6.6e6, 100.0, "memcpy in+out", 3.4e10, 4.2e6, 1.58)]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """A real run's outbox file and evidence, plus a bench line-protocol file."""
    tmp = tmp_path_factory.mktemp("grafana")
    (tmp / "cases").mkdir()
    (tmp / "cases" / "sweep.yaml").write_text(CASES)
    shutil.copy(REPO / "testcases" / "tx" / "tx_udp.yaml", tmp / "cases" / "tx.yaml")
    rig = tmp / "rig.yaml"
    rig.write_text(textwrap.dedent(f"""\
        name: {RIG}
        devices:
          dut: {{driver: sim, channels: 4, max_rate: 10 GS/s}}
        results:
          outbox: {tmp / 'outbox'}
          evidence: {tmp / 'evidence'}
        """))
    proc = subprocess.run([sys.executable, "-m", "hostlib", "run", "--rig", str(rig), str(tmp / "cases")], cwd=tmp,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, text=True, capture_output=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    (evidence,) = (tmp / "evidence").glob("*.json")
    write_bench_results(BENCH, run_id="20261121T210000Z-bench0", time_ns=_now_ns(), json_dir=tmp / "bench",
                        outbox_dir=tmp / "outbox", git_sha="abc")
    return {"outbox": tmp / "outbox", "evidence": json.loads(evidence.read_text())}


def _now_ns() -> int:
    import time

    return time.time_ns()


def ship(real_run, tmp_path: Path, url: str, db: str) -> None:
    from hostlib.results.influx import InfluxTarget, ship_outbox

    outbox = tmp_path / f"outbox-{db}"
    shutil.copytree(real_run["outbox"], outbox, ignore=shutil.ignore_patterns("sent", "rejected", "*.lock"))
    from .factories import make_rig

    rig = make_rig(results={"influxdb": {"url": url, "api": "v1", "database": db}})
    target = InfluxTarget.from_rig(rig)
    report = ship_outbox(outbox, target)
    assert report.exit_code() == 0 and report.points_sent > 0, report.lines()


def panels(name: str) -> list[dict]:
    doc = json.loads((GRAFANA / name).read_text())
    assert doc["panels"] and all(p["datasource"]["uid"] == "${DS_INFLUXDB}" for p in doc["panels"])
    return doc["panels"]


def influxql(query: str) -> str:
    return (query.replace("$timeFilter", "time > now() - 30d").replace("$__interval", "1h")
            .replace("/^$rig$/", f"/^{RIG}$/"))


def flux(query: str, bucket: str) -> str:
    return (query.replace("v.timeRangeStart", "-30d").replace("v.timeRangeStop", "now()")
            .replace("v.windowPeriod", "1h").replace("${bucket}", bucket).replace("${rig}", RIG))


def expected(run: dict) -> dict[str, dict]:
    """Per panel title: series key -> value, from the run's evidence (one point per series)."""
    cases = run["evidence"]["cases"]

    def per_case(metric, scale=1.0):
        return {c["test_name"]: c["metrics"][metric] * scale for c in cases
                if isinstance(c["metrics"].get(metric), (int, float))}
    verdicts = [c["verdict"] for c in cases]
    return {
        "Verdicts per run": {"passed": verdicts.count("PASS"), "failed": verdicts.count("FAIL"),
                             "errors": verdicts.count("ERROR"), "skipped": verdicts.count("SKIP")},
        "Pass ratio per case": {c["test_name"]: 1.0 if c["verdict"] == "PASS" else 0.0 for c in cases},
        "Achieved rate (MS/s)": per_case("throughput_sps", 1e-6),
        "Achieved / asked rate": per_case("throughput_ratio"),
        "Loss: missing frames": per_case("missing_frames"),
        "Latency p99 (ms)": per_case("latency_p99_s", 1e3),
        "Bench: rig / peer ratio": {(b.row, str(b.size_bytes)): b.ratio for b in BENCH},
        "Bench: rig and peer GB/s": {(b.row, str(b.size_bytes), f): getattr(b, f) / 1e9
                                     for b in BENCH for f in ("rig_Bps", "peer_Bps")},
    }


def influxql_values(series: list[dict]) -> dict:
    """Series -> {key: value}: the key is the testcase / bench row tags, or the column for
    ungrouped multi-column panels; a series with several time buckets has one non-null value."""
    out = {}
    for s in series:
        tags = s.get("tags") or {}
        cols = s["columns"][1:]
        rows = [r for r in s["values"] if any(v is not None for v in r[1:])]
        assert len(rows) == 1, s
        for col, value in zip(cols, rows[0][1:]):
            if "testcase" in tags:
                key = tags["testcase"]
            elif "row" in tags:
                key = (tags["row"], tags["size_bytes"]) + ((("rig_Bps" if col.startswith("rig") else "peer_Bps"),)
                                                          if len(cols) > 1 else ())
            else:
                key = col
            out[key] = value
    return out


def check(title: str, got: dict, want: dict) -> None:
    assert set(got) == set(want), (title, sorted(map(str, got)), sorted(map(str, want)))
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12), (title, k)


def run_influxql_dashboard(server, db: str, real_run) -> int:
    want = expected(real_run)
    for p in panels("hilrig-influxql.json"):
        (target,) = p["targets"]
        series = server.query(influxql(target["query"]), db)
        check(p["title"], influxql_values(series), want[p["title"]])
    return len(want)


@requires_native
def test_influxql_dashboard_on_influx16(real_run, influx16, tmp_path):
    influx16.query("CREATE DATABASE hilrig")
    ship(real_run, tmp_path, influx16.url, "hilrig")
    assert run_influxql_dashboard(influx16, "hilrig", real_run) == 8
    # the template variable's query lists the rig
    (s,) = influx16.query('SHOW TAG VALUES FROM "hilrig_case" WITH KEY = "rig"', "hilrig")
    assert s["values"] == [["rig", RIG]]
    # the trend report reads the same server (a rig with results.influxdb)
    from hostlib.reports.history import load_history

    from .factories import make_rig

    rig = make_rig(name=RIG, results={"influxdb": {"url": influx16.url, "api": "v1", "database": "hilrig"}})
    history = load_history(rig, nights=5)
    assert history.runs == [real_run["evidence"]["run_id"]]
    assert set(history.series()) == {c["test_name"] for c in real_run["evidence"]["cases"]}


@requires_native
def test_influxql_and_flux_dashboards_on_influx18(real_run, influx18, tmp_path):
    from influxdb_client import InfluxDBClient

    influx18.query("CREATE DATABASE hilrig")
    ship(real_run, tmp_path, influx18.url, "hilrig")
    run_influxql_dashboard(influx18, "hilrig", real_run)
    want = expected(real_run)
    client = InfluxDBClient(url=influx18.url, token="", org="-")
    try:
        for p in panels("hilrig-flux.json"):
            (target,) = p["targets"]
            tables = client.query_api().query(flux(target["query"], "hilrig/autogen"))
            got = {}
            for table in tables:
                for rec in table.records:
                    v = rec.values
                    if "testcase" in v:
                        key = v["testcase"]
                    elif "row" in v:
                        key = (v["row"], v["size_bytes"]) + ((v["_field"],) if v["_field"] != "ratio" else ())
                    else:
                        key = v["_field"]
                    assert key not in got, (p["title"], key)  # one point per series
                    got[key] = rec.get_value()
            check(p["title"], got, want[p["title"]])
    finally:
        client.close()
