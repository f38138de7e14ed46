"""The bench's RF rows: the native analyzer and channel timed beside the reference on the
same samples (a short capture here; make bench times a 1 s capture at 10 MS/s)."""
from __future__ import annotations

import math

import pytest

pytest.importorskip("hostlib._native", reason="build the native core first (make build)")

from hostlib.bench.rf import SC16_BYTES, rows


def test_rows_time_native_and_reference_on_the_same_capture() -> None:
    n = 1 << 15
    (analyzer_cells, analyzer), (channel_cells, channel), (source_cells, source) = rows(n, repeats=2)
    assert analyzer.rig_s is not None and analyzer.peer_s is not None and analyzer.ratio is not None
    assert analyzer.rig_s > 0 and analyzer.peer_s > 0
    assert math.isclose(analyzer.ratio, analyzer.rig_s / analyzer.peer_s)
    for row in (channel, source):
        assert row.rig_Bps is not None and row.peer_Bps is not None and row.ratio is not None
        assert math.isclose(row.ratio, row.rig_Bps / row.peer_Bps)
    assert analyzer.size_bytes == channel.size_bytes == n * SC16_BYTES
    assert len(analyzer_cells) == len(channel_cells) == len(source_cells) == 9
    assert analyzer_cells[4] == "reference (numpy)"
    # The marks are in the limit cells, met or not, and scale with the capture's length.
    assert analyzer_cells[7].startswith("<= ") and "met" in analyzer_cells[7]
    assert source_cells[7].startswith(">= 100 MS/s sc16") and "met" in source_cells[7]
    assert source.limit_ratio is not None and math.isclose(source.limit_ratio * 100e6 * SC16_BYTES, source.rig_Bps)
