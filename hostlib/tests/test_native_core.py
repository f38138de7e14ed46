"""hostlib._native small API: pattern, crc, ShmRing, socket buffer report."""
from __future__ import annotations

from hostlib.transports import complete_config

import os

import pytest

native = pytest.importorskip("hostlib._native", reason="build the native core first (cmake --build build)")


@pytest.mark.parametrize("fmt,word_bytes", [("sc16", 4), ("sc8", 2)])
@pytest.mark.parametrize("k", [0, 1, 17])
def test_pattern_check_counts_exactly_k(fmt, word_bytes, k):
    n = 1000
    buf = bytearray(native.pattern_fill(12345, n, fmt))
    for w in range(0, k * 7, 7):
        buf[w * word_bytes + 1] ^= 0x80
    assert native.pattern_check(12345, bytes(buf), fmt) == k


def test_pattern_check_rejects_partial_word():
    with pytest.raises(ValueError, match="multiple"):
        native.pattern_check(0, b"\x00" * 5, "sc16")


def test_shm_ring_is_a_memfd_with_mode_0600():
    with native.ShmRing.create(8, 1024) as ring:
        assert ring.path.startswith(f"/proc/{os.getpid()}/fd/")
        assert os.stat(ring.path).st_mode & 0o777 == 0o600
        assert "hilrig-ring" in os.readlink(ring.path)
        assert ring.slot_count == 8 and ring.slot_bytes == 1024


def test_udp_endpoint_reports_granted_buffer():
    rx = native.RxStream(complete_config({"direction": "rx", "transport": {"kind": "udp", "host": "127.0.0.1", "port": 0,
                                                            "socket_buffer_bytes": 1 << 20}}))
    ep = rx.endpoint()
    assert ep["kind"] == "udp" and ep["port"] > 0
    assert ep["socket_buffer_bytes"] == 1 << 20
    assert ep["socket_buffer_bytes_granted"] >= 1 << 20  # Linux reports twice the request
