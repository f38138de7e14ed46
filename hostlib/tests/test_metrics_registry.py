"""The metric registry and its documentation agree, and the engine only reports registered names."""
from pathlib import Path

from hostlib.metrics import METRICS, lookup_metric

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_every_metric_is_documented():
    text = DOC.read_text()
    missing = [name for name in METRICS if f"`{name}`" not in text]
    assert not missing, f"docs/metrics.md lacks {missing}"


def test_aliases_resolve_to_their_metric():
    assert lookup_metric("throughput").name == "throughput_sps"
    assert lookup_metric("latency_p99").name == "latency_p99_s"
    assert lookup_metric("no_such_metric") is None


def test_engine_reports_only_registered_metrics():
    from hostlib.drivers.base import Snapshot
    from hostlib.engine.measure import compute_metrics

    from .factories import make_case

    case = make_case("loopback", direction="loopback", channels=2, rate_sps=1e6, frame_bytes=8048)
    rx = {"payload_bytes_received": 8000, "frames_received": 1, "latency_count": 1, "latency_p99_ns": 5,
          "first_frame_ns": 2, "last_frame_ns": 3}
    start = Snapshot(host_rx=rx, taken_ns=0)
    end = Snapshot(host_rx={**rx, "payload_bytes_received": 16000, "last_frame_ns": 1_000_000_000},
                   taken_ns=1_000_000_000)
    metrics = compute_metrics(case, started_ns=0, window_start=start, window_end=end, final=end,
                              cpu_s=0.1, rcvbuf_errors=0)
    unknown = [name for name in metrics if name not in METRICS]
    assert not unknown
    # 8000 payload bytes of 2-channel sc16 = 1000 samples per channel in a ~1 s window.
    assert metrics["throughput_sps"] == __import__("pytest").approx(1000, rel=1e-6)
