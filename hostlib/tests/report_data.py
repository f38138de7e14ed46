"""Evidence documents for the report tests, built like the engine writes them (docs/results.md).

The reference sweep's numbers follow a formula, so a test can compute what each
table cell must show.
"""
from __future__ import annotations

import copy

FRAME_SIZES = (64992, 1392, 16000, 4000, 32000)   # deliberately not in numeric order
CHANNELS = (4, 1, 2)
SWEEP = "UDP reference unlimited"


def point_metrics(frame_bytes: int, channels: int) -> dict:
    """frames/s, MS/s, MB/s and drop ratio of one point: a made-up but consistent link."""
    payload = frame_bytes - 48
    fps = 2.0e9 / frame_bytes + 1000 * channels          # frames per second
    sps = fps * payload / (4 * channels)                 # samples per second per channel
    return {"frames_per_s": fps, "throughput_sps": sps, "throughput_Bps": fps * payload,
            "throughput_ratio": sps / 1e10, "drop_ratio": 1 - sps / 1e10, "missing_frames": 1000.0 * channels,
            "overruns": 3.0, "underruns": 0.0, "seq_errors": 3.0, "pattern_errors": 0.0,
            "latency_p50_s": 0.001, "latency_p99_s": 0.002 * channels, "latency_max_s": 0.01,
            "udp_rcvbuf_errors": 0.0}


def _case(name: str, test_name: str, verdict: str, metrics: dict, *, sweep_point=None, rate_sps=1e10,
          frame_bytes=8000, channels=1, thresholds=(), series=(), message="", error=None, error_kind=None,
          index=0) -> dict:
    return {
        "test_name": test_name,
        "case": {"name": name, "test_name": test_name, "source_file": "testcases/x.yaml", "source_line": 1 + index,
                 "device": "dut", "direction": "rx", "channels": channels, "sample_format": "sc16",
                 "rate_sps": rate_sps, "transport": {"kind": "udp", "frame_bytes": frame_bytes, "options": {}},
                 "duration_s": 3.0, "sweep_point": sweep_point or {}, "thresholds": [t["text"] for t in thresholds],
                 "raw": {}},
        "rig_name": "sim", "device": "dut", "driver": "sim", "run_id": "R",
        "started_utc": f"2026-11-21T21:00:{index:02d}.000+00:00", "ended_utc": f"2026-11-21T21:00:{index:02d}.900+00:00",
        "verdict": verdict, "message": message or f"{verdict} {test_name}", "error": error, "error_kind": error_kind,
        "metrics": metrics, "thresholds": list(thresholds), "series": list(series),
    }


def evidence(run_id: str = "20261121T210000Z-aaaaaa", *, fail_rx: bool = True) -> dict:
    cases = []
    for fb in FRAME_SIZES:
        for ch in CHANNELS:
            cases.append(_case(SWEEP, f"{SWEEP} [transport.frame_bytes={fb}, channels={ch}]", "PASS",
                               point_metrics(fb, ch), sweep_point={"transport.frame_bytes": fb, "channels": ch},
                               frame_bytes=fb, channels=ch, index=len(cases),
                               thresholds=[{"metric": "pattern_errors", "text": "pattern_errors == 0", "measured": 0.0,
                                            "limit": 0.0, "margin": 0.0, "passed": True, "marginal": False,
                                            "message": ""}]))
    series = [{"t_s": float(t), "throughput_sps": 1e7 if t < 2 else 6e6, "throughput_ratio": 1.0 if t < 2 else 0.6,
               "frames_per_s": 5000.0, "missing_frames": 0.0 if t < 2 else 40.0, "overruns": 0.0 if t < 2 else 2.0,
               "underruns": 0.0, "pattern_errors": 0.0, "seq_errors": 0.0} for t in (1, 2, 3)]
    rx_verdict = "FAIL" if fail_rx else "PASS"
    cases.append(_case("RX UDP 10 MS/s", "RX UDP 10 MS/s", rx_verdict,
                       {"throughput_sps": 8.6e6 if fail_rx else 1e7, "throughput_ratio": 0.86 if fail_rx else 1.0,
                        "throughput_Bps": 3.44e7, "frames_per_s": 5000.0, "missing_frames": 80.0 if fail_rx else 0.0,
                        "overruns": 4.0 if fail_rx else 0.0, "underruns": 0.0, "seq_errors": 4.0, "pattern_errors": 0.0,
                        "latency_p50_s": 0.0002, "latency_p99_s": 0.0009, "latency_max_s": 0.004},
                       rate_sps=1e7, index=len(cases), series=series if fail_rx else series[:1],
                       thresholds=[{"metric": "missing_frames", "text": "missing_frames == 0",
                                    "measured": 80.0 if fail_rx else 0.0, "limit": 0.0,
                                    "margin": -80.0 if fail_rx else 0.0, "passed": not fail_rx, "marginal": False,
                                    "message": ""},
                                   {"metric": "throughput_sps", "text": "throughput_sps >= 99.9% of rate",
                                    "measured": 8.6e6, "limit": 9.99e6, "margin": -1.39e6, "passed": not fail_rx,
                                    "marginal": False, "message": ""}]))
    cases.append(_case("TX shm", "TX shm", "ERROR", {}, index=len(cases), error="device: hilrig-sim exited with signal 9",
                       error_kind="device", message="ERROR (device) tx shm 10.0 MS/s: hilrig-sim exited with signal 9"))
    cases.append(_case("RX USRP", "RX USRP", "SKIP", {}, index=len(cases), message="SKIP: rig 'sim' has no device 'x310'"))
    return {"format": "hilrig-evidence/1", "run_id": run_id, "started_utc": "2026-11-21T21:00:00.000+00:00",
            "ended_utc": "2026-11-21T21:01:05.500+00:00",
            "rig": {"name": "sim", "path": "/rigs/sim.yaml", "sha256": "ab" * 32,
                    "text": "name: sim\ndevices:\n  dut:\n    driver: sim\n    channels: 4\n"},
            "versions": {"hilrig": "0.1.0", "python": "3.11.2", "git_sha": "0123456789abcdef", "robot": "7.5"},
            "cases": cases}


def variant(doc: dict, **changes) -> dict:
    return {**copy.deepcopy(doc), **changes}
