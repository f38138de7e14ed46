"""The bench table as JSON and line protocol (measurement hilrig_bench)."""
from __future__ import annotations

import json

from line_protocol_parser import parse_line

from hostlib.bench.record import BenchRow, bench_lines, write_bench_results


def test_bench_rows_become_json_and_line_protocol(tmp_path):
    rows = [BenchRow("UDP zero-loss", 1472, 2.5e9, 1.7e6, 95.0, "iperf3", 2.5e8, 1.7e5, 10.0),
            BenchRow("pattern check only", 8192, 30e9),
            BenchRow("shm ring, checked", 256, float("nan"), 4.3e7, 100.0, "memcpy in+out", 1e10, 6.5e7, 0.66)]
    jpath, lpath = write_bench_results(rows, run_id="20261121T210000Z-abcdef", time_ns=1_795_000_000_000_000_000,
                                       json_dir=tmp_path / "bench", outbox_dir=tmp_path / "outbox", git_sha="abc")
    assert lpath == tmp_path / "outbox" / "bench-20261121T210000Z-abcdef.lp"
    doc = json.loads(jpath.read_text())
    assert doc["rows"][0]["ratio"] == 10.0 and doc["rows"][2]["rig_Bps"] is None
    points = [parse_line(line) for line in lpath.read_text().splitlines()]
    assert [p["measurement"] for p in points] == ["hilrig_bench"] * 3
    assert points[0]["tags"] == {"host": points[0]["tags"]["host"], "peer": "iperf3", "row": "UDP zero-loss",
                                 "size_bytes": "1472"}
    assert points[0]["fields"]["ratio"] == 10.0 and points[0]["fields"]["run_id"] == "20261121T210000Z-abcdef"
    assert "peer" not in points[1]["tags"] and "ratio" not in points[1]["fields"]
    assert "rig_Bps" not in points[2]["fields"]           # NaN is left out, never written
    # every number is a float (field types never change between nights)
    assert all(isinstance(v, float) for p in points for k, v in p["fields"].items() if k not in ("run_id", "git_sha"))
    assert len(bench_lines(rows[:1], run_id="x", time_ns=1, host="h")) == 1
