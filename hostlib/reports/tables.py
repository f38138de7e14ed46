"""What a report shows as numbers: key metrics per case, thresholds, sweeps as 2-D tables.

Sweep tables are shaped like a lab's reference tables: one sweep axis as rows,
another as columns, both in numeric order, one table per metric with its unit
in the title (frames/s, MS/s, MB/s, drop %). Further axes split the tables.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import JsonValue

from ..results.schema import MetricValues
from ..results.verdict import format_metric, threshold_row
from .model import CaseView, RunView, finite

# A sweep table's row or column value: a sweep axis value as the evidence holds it.
Cell = JsonValue


@dataclass(frozen=True)
class Column:
    """A metric shown in a table: its evidence name, heading with unit, scale and format."""

    metric: str
    heading: str
    scale: float = 1.0
    fmt: str = "{:.2f}"

    def value(self, metrics: MetricValues | dict[str, float]) -> float | None:
        v = metrics.get(self.metric)
        return v * self.scale if finite(v) else None

    def text(self, metrics: MetricValues | dict[str, float]) -> str:
        v = self.value(metrics)
        return "" if v is None else self.fmt.format(v)


# The key metrics of a case, in the order a technician reads them.
KEY_METRICS = (
    "throughput_sps", "throughput_ratio", "throughput_Bps", "frames_per_s", "missing_frames",
    "overruns", "underruns", "seq_errors", "pattern_errors", "latency_p50_s", "latency_p99_s",
    "latency_max_s",
)
KEY_LABELS = {
    "throughput_sps": "achieved rate", "throughput_ratio": "of asked rate", "throughput_Bps": "data rate",
    "frames_per_s": "frames/s", "missing_frames": "missing frames", "overruns": "overruns (O)",
    "underruns": "underruns (U)", "seq_errors": "sequence errors (D/S)", "pattern_errors": "pattern errors",
    "latency_p50_s": "latency p50", "latency_p99_s": "latency p99", "latency_max_s": "latency max",
}

# Sweep tables: one grid per column (metric) here, with the unit in the heading.
SWEEP_COLUMNS = (
    Column("frames_per_s", "frames/s", 1.0, "{:,.0f}"),
    Column("throughput_sps", "MS/s", 1e-6, "{:,.2f}"),
    Column("throughput_Bps", "MB/s", 1e-6, "{:,.1f}"),
    Column("drop_ratio", "drop %", 100.0, "{:.3f}"),
)

AXIS_LABELS = {
    "transport.frame_bytes": "frame bytes (B)", "channels": "channels", "decimation": "decimation",
    "interpolation": "interpolation", "master_clock": "master clock (Hz)", "duration": "duration (s)",
    "transport.kind": "transport", "format": "format",
}


def axis_label(key: str) -> str:
    return AXIS_LABELS.get(key, key)


def value_key(v: JsonValue) -> tuple[int, float, str]:
    """Numeric order for numbers (and numeric strings), text order after them."""
    if isinstance(v, (int, float, str)):
        try:
            return (0, float(v), "")
        except ValueError:
            pass
    return (1, 0.0, str(v))


def key_metric_rows(case: CaseView) -> list[tuple[str, str, str]]:
    """(label, value with unit, metric name) for the key metrics the case has, in order."""
    m = case.metrics
    rows = []
    for name in KEY_METRICS:
        if name not in m:
            continue
        if name == "throughput_ratio":
            text = f"{m[name] * 100:.2f} %"
            rate = case.case.rate_sps
            if finite(rate):
                text += f" of {format_metric('throughput_sps', rate)}"
        else:
            text = format_metric(name, m[name])
        rows.append((KEY_LABELS[name], text, name))
    return rows


def threshold_rows(case: CaseView) -> list[dict[str, object]]:
    """Per threshold: threshold, measured, limit, margin and label, formatted as the
    console shows them (results.verdict.threshold_row), and its verdict (for the style)."""
    keys = ("threshold", "measured", "limit", "margin", "label")
    return [{**dict(zip(keys, threshold_row(t), strict=True)), "verdict": t.verdict} for t in case.thresholds]


@dataclass
class SweepGrid:
    """One metric of one sweep (facet) as a grid: rows x columns of formatted cells."""

    column: Column
    row_axis: str
    col_axis: str | None
    rows: list[JsonValue]
    cols: list[JsonValue]
    cells: dict[tuple[Cell, Cell], str]
    failed: set[tuple[Cell, Cell]] = field(default_factory=set)
    anchors: dict[tuple[Cell, Cell], str] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return self.column.heading

    def cell(self, r: Cell, c: Cell) -> str:
        return self.cells.get((r, c), "")


@dataclass
class Sweep:
    """All points of one swept case (sharing the case name), split by the axes beyond two."""

    name: str
    axes: list[str]
    facets: list[tuple[dict[str, JsonValue], list[CaseView]]]  # (fixed values of the extra axes, points)

    @property
    def row_axis(self) -> str:
        return self.axes[0]

    @property
    def col_axis(self) -> str | None:
        return self.axes[1] if len(self.axes) > 1 else None

    def grids(self, points: list[CaseView]) -> list[SweepGrid]:
        rows: list[Cell] = sorted({p.sweep_point.get(self.row_axis) for p in points}, key=value_key)
        cols: list[Cell] = (sorted({p.sweep_point.get(self.col_axis) for p in points}, key=value_key)
                            if self.col_axis else [None])
        grids = []
        for column in SWEEP_COLUMNS:
            if not any(column.metric in p.metrics for p in points):
                continue
            g = SweepGrid(column, self.row_axis, self.col_axis, rows, cols, {})
            for p in points:
                k = (p.sweep_point.get(self.row_axis), p.sweep_point.get(self.col_axis) if self.col_axis else None)
                g.cells[k] = column.text(p.metrics)
                g.anchors[k] = p.anchor
                if p.failure:
                    g.failed.add(k)
            grids.append(g)
        return grids

    def series(self, points: list[CaseView], metric: Callable[[dict[str, float]], float | None]
               ) -> list[tuple[Cell, list[tuple[float, float]]]]:
        """(col value, [(row value as float, y)]) per column value, rows in numeric order: for plots."""
        out = []
        cols = sorted({p.sweep_point.get(self.col_axis) for p in points}, key=value_key) if self.col_axis else [None]
        for c in cols:
            pts = []
            for p in points:
                if self.col_axis and p.sweep_point.get(self.col_axis) != c:
                    continue
                x, y = value_key(p.sweep_point.get(self.row_axis)), metric(p.metrics)
                if y is not None and x[0] == 0:  # a number on the row axis
                    pts.append((x[1], y))
            out.append((c, sorted(pts)))
        return out


def _axis_order(keys: list[str], points: list[CaseView]) -> list[str]:
    """The frame size first when it is swept (the lab's rows), the other axes in the YAML's
    order (the next one gives the columns, the rest split the tables); axes with one value
    only are left out."""
    def n_values(k: str) -> int:
        return len({str(p.sweep_point.get(k)) for p in points})
    axes = [k for k in keys if n_values(k) > 1] or keys[:1]
    axes.sort(key=lambda k: k != "transport.frame_bytes")  # stable: YAML order otherwise
    return axes


def sweeps(run: RunView) -> list[Sweep]:
    """The run's sweeps: cases with a sweep point, grouped by case name, in run order."""
    groups: dict[str, list[CaseView]] = {}
    for c in run.cases:
        if c.sweep_point:
            groups.setdefault(c.name, []).append(c)
    out = []
    for name, points in groups.items():
        keys = list(dict.fromkeys(k for p in points for k in p.sweep_point))
        axes = _axis_order(keys, points)
        extra = [k for k in axes[2:]]
        facets: dict[tuple[Cell, ...], list[CaseView]] = {}
        for p in points:
            facets.setdefault(tuple(p.sweep_point.get(k) for k in extra), []).append(p)
        ordered = sorted(facets.items(), key=lambda kv: [value_key(v) for v in kv[0]])
        out.append(Sweep(name, axes[:2] + extra, [(dict(zip(extra, k, strict=True)), pts) for k, pts in ordered]))
    return out


# ----------------------------------------------------------------------------- the USB table

# The published USB 2 figures the reference cases reproduce (issue 13; docs/performance.md
# "USB 2 transfer x buffer table"): a USRP on USB 2 under Linux, 16 KiB transfers, 2 MB
# buffers, MB/s of sc16 payload, all directions together.
PUBLISHED_USB2_MBPS = {("rx", 16384, 2 * 1024**2): 32.0, ("tx", 16384, 2 * 1024**2): 32.0,
                       ("rx+tx", 16384, 2 * 1024**2): 36.57}
USB_TABLE_TAG = "usb-table"


@dataclass
class UsbTable:
    """The rate searches of the USB reference cases as the published table: per direction,
    transfer size (rows) x buffer size (columns), the highest rate that held (MB/s, all
    directions together, with its divider), and the published figure beside it."""

    direction: str
    rows: list[int]                                  # transfer_bytes
    cols: list[int]                                  # buffer_bytes
    cells: dict[tuple[int, int], str]
    failed: set[tuple[int, int]] = field(default_factory=set)
    published: list[dict[str, str]] = field(default_factory=list)   # {config, published, measured, ratio}


def _size(n: int) -> str:
    return f"{n // 1024**2} MiB" if n >= 1024**2 and not n % 1024**2 else f"{n // 1024} KiB"


def usb_tables(run: RunView) -> list[UsbTable]:
    """One UsbTable per direction for the run's cases tagged usb-table that ran a search."""
    by_dir: dict[str, dict[tuple[int, int], CaseView]] = {}
    for c in run.cases:
        options = c.case.transport.options
        transfer, transfers = options.get("transfer_bytes"), options.get("transfers")
        if USB_TABLE_TAG not in c.case.tags or not isinstance(transfer, int):
            continue
        key = (transfer, transfer * transfers if isinstance(transfers, int) else 0)   # (S, N x S)
        by_dir.setdefault(c.case.direction, {})[key] = c
    tables = []
    for direction in ("rx", "tx", "rx+tx"):
        cases = by_dir.get(direction)
        if not cases:
            continue
        t = UsbTable(direction, sorted({k[0] for k in cases}), sorted({k[1] for k in cases}), {})
        for key, c in cases.items():
            m = c.metrics
            if "max_throughput_Bps" in m:
                divider = int(m.get("search_divider") or 0)
                t.cells[key] = f"{m['max_throughput_Bps'] / 1e6:.1f}" + (f" ({divider})" if divider else " (none)")
            else:
                t.cells[key] = c.label
            if c.failure:
                t.failed.add(key)
            published = PUBLISHED_USB2_MBPS.get((direction, *key))
            if published is not None and finite(m.get("max_throughput_Bps")):
                measured = m["max_throughput_Bps"] / 1e6
                t.published.append({"config": f"{_size(key[0])} transfers x {_size(key[1])}",
                                    "published": f"{published:.2f}", "measured": f"{measured:.2f}",
                                    "ratio": f"{measured / published:.2f}"})
        tables.append(t)
    return tables


def usb_table_size(n: int) -> str:
    """4096 -> '4 KiB', 2097152 -> '2 MiB' (the table's headings)."""
    return _size(n)
