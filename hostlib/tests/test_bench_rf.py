"""The bench's RF rows: the native analyzer and channel timed beside the reference on the
same samples (a short capture here; make bench times a 1 s capture at 10 MS/s)."""
from __future__ import annotations

import math

import pytest

pytest.importorskip("hostlib._native", reason="build the native core first (make build)")

from hostlib.bench.rf import SC16_BYTES, rows


def test_rows_time_native_and_reference_on_the_same_capture() -> None:
    n = 1 << 15
    (analyzer_cells, analyzer), (channel_cells, channel) = rows(n)
    assert analyzer.rig_s is not None and analyzer.peer_s is not None and analyzer.ratio is not None
    assert analyzer.rig_s > 0 and analyzer.peer_s > 0
    assert math.isclose(analyzer.ratio, analyzer.rig_s / analyzer.peer_s)
    assert channel.rig_Bps is not None and channel.peer_Bps is not None and channel.ratio is not None
    assert math.isclose(channel.ratio, channel.rig_Bps / channel.peer_Bps)
    assert analyzer.size_bytes == channel.size_bytes == n * SC16_BYTES
    assert len(analyzer_cells) == len(channel_cells) == 7 and analyzer_cells[4] == "reference (numpy)"
