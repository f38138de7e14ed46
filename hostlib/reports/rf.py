"""An RF case in the report, from its evidence alone (docs/rf.md "Seeing it"):

    spectrum_plot(case), spectrum_caption(case)   the capture's averaged spectrum, the measured
                                                  tone, image, DC and harmonics marked, the
                                                  thresholds as lines at their limits
    constellation_plot(case), constellation_caption(case)   received symbols over the ideal points
    truth_rows(case)                              each measured figure beside its injected truth
    sweep_truth(points), sweep_curve(...)         a sweep's measured figure against the swept
                                                  value, its truth (or theory) beside it

A figure has a truth when the evidence holds `injected_<name>` beside `<name>` (snr_db and
injected_snr_db; evm_rms_pct and injected_evm_rms_pct): nothing here names the figures.
"""
from __future__ import annotations

import math

from pydantic import JsonValue

from ..metrics import lookup_metric
from ..results.schema import RfSpectrum, ThresholdResult
from ..results.verdict import format_metric
from ..units import UnitError, split_quantity
from ..verdicts import Verdict
from .model import CaseView, finite
from .plots import _pyplot, _svg
from .tables import Sweep, axis_label

TRUTH_PREFIX = "injected_"
CONSTELLATION_POINTS_SHOWN = 2000   # more received symbols than this: an even subset is drawn
SCALLOPING_DB = 0.83                # the 4-term Blackman-Harris window's, half a bin off centre
MARKER_SEARCH_BINS = 3              # a marker without the analyzer's power sits on the spectrum's peak within this
NAMED_ABOVE_MEDIAN_DB = 6.0         # a harmonic this far above the median bin is named (averaged noise: ~1.5 dB)
LABEL_CLEARANCE_DB = 3.0            # threshold labels closer than this on the level axis move apart sideways


# ------------------------------------------------------------------ measured beside the truth

def _rf_figure(name: str) -> bool:
    """An RF figure: the registry says so ("rf: ..."), or it does not know the name (a
    figure its registry entry has not reached yet); the frame faults' truths are not."""
    metric = lookup_metric(name)
    return metric is None or metric.description.startswith("rf:")


def truths(metrics: dict[str, float]) -> list[str]:
    """The measured RF figures that have an injected truth beside them, in the evidence's order."""
    return [k for k in metrics if not k.startswith(TRUTH_PREFIX) and TRUTH_PREFIX + k in metrics and _rf_figure(k)]


def truth_rows(case: CaseView) -> list[dict[str, str]]:
    """Per figure with a truth: measured, injected, measured - injected (formatted with its unit)."""
    m = case.metrics
    return [{"metric": k, "measured": format_metric(k, m[k]), "injected": format_metric(k, m[TRUTH_PREFIX + k]),
             "difference": format_metric(k, m[k] - m[TRUTH_PREFIX + k])} for k in truths(m)]


# ------------------------------------------------------------------ spectrum

def _level_line(t: ThresholdResult, tone_dbfs: float | None, per_bin_db: float) -> float | None:
    """Where a threshold's limit sits on the spectrum's dBFS axis, or None (not a level)."""
    limit = t.limit
    if not finite(limit):
        return None
    relative = {
        "sfdr_dbc": lambda tone: tone - limit,                # the largest spur allowed below the tone
        "iq_image_dbc": lambda tone: tone + limit,            # the image allowed
        "thd_dbc": lambda tone: tone + limit,                 # all harmonics together: none above this
        "snr_db": lambda tone: tone - limit + per_bin_db,     # the noise per bin the limit allows
        "sinad_db": lambda tone: tone - limit + per_bin_db,
    }
    if t.metric in ("tone_power_dbfs", "dc_offset_dbfs"):
        return limit
    if t.metric in relative and finite(tone_dbfs):
        return relative[t.metric](tone_dbfs)
    return None


def _freq_scale(fs_hz: float) -> tuple[float, str]:
    return (1e6, "MHz") if fs_hz >= 2e6 else (1e3, "kHz")


def _bin_of(sp: RfSpectrum, freq_hz: float) -> int:
    return round(freq_hz / sp["fs_hz"] * sp["bins"]) + sp["bins"] // 2


def per_bin_db(sp: RfSpectrum) -> float:
    """How much lower than its power noise reads per bin: 10 log10(enbw_bins / bins)."""
    return 10 * math.log10(sp["enbw_bins"] / sp["bins"])


def spectrum_plot(case: CaseView) -> str:
    """The capture's averaged spectrum (dBFS per bin against frequency) with the analyzed
    tone, its image, DC, the harmonics and a multitone's other tones marked, the measured
    noise per bin dotted, and each threshold that is a level drawn at its limit (red where
    it failed)."""
    sp = case.record.rf_spectrum
    if not sp or not sp["power_dbfs"]:
        return ""
    plt = _pyplot()
    scale, unit = _freq_scale(sp["fs_hz"])
    bins, fs = sp["bins"], sp["fs_hz"]
    freqs = [(i - bins // 2) * fs / bins / scale for i in range(bins)]
    levels = [v if v is not None else math.nan for v in sp["power_dbfs"]]
    seen = sorted(v for v in levels if math.isfinite(v))
    if not seen:
        return ""
    median = seen[len(seen) // 2]
    fig, ax = plt.subplots(figsize=(8.4, 3.9))
    ax.plot(freqs, levels, color="tab:blue", lw=0.7, label="averaged spectrum")
    m = case.metrics
    tone = m.get("tone_power_dbfs")
    if finite(tone) and finite(m.get("snr_db")):
        ax.axhline(tone - m["snr_db"] + per_bin_db(sp), color="black", ls=":", lw=1.3, zorder=3,
                   label=f"noise per bin (measured SNR {m['snr_db']:.2f} dB)")
    styles = {"tone": ("tab:red", "v", 7), "image": ("tab:orange", "v", 6), "DC": ("tab:purple", "v", 6)}
    for mk in sp["markers"]:
        at = _bin_of(sp, mk["freq_hz"])
        near = [levels[i] for i in range(at - MARKER_SEARCH_BINS, at + MARKER_SEARCH_BINS + 1)
                if 0 <= i < bins and math.isfinite(levels[i])]
        level = mk["power_dbfs"] if mk["power_dbfs"] is not None else (max(near) if near else None)
        if level is None:
            continue
        color, marker, size = styles.get(mk["what"], ("tab:green" if mk["what"].startswith("tone ") else "0.4",
                                                      "v", 5))
        x = mk["freq_hz"] / scale
        ax.plot([x], [level + 2], marker=marker, color=color, ms=size, ls="none")
        harmonic = mk["what"].startswith("harmonic")
        if not harmonic or level > median + NAMED_ABOVE_MEDIAN_DB:   # a harmonic in the noise is marked, not named
            text = (mk["what"].replace("harmonic ", "") + "f" if harmonic else mk["what"])
            if mk["power_dbfs"] is not None:
                text += f" {level:.1f} dBFS"
            ax.annotate(text, (x, level + 3), fontsize=7, color=color, ha="center", va="bottom")
    labelled: list[float] = []
    for t in case.thresholds:
        if t.leg is not None:
            continue
        y = _level_line(t, tone, per_bin_db(sp))
        if y is None:
            continue
        color = {Verdict.FAIL: "red", Verdict.MARGINAL: "darkorange"}.get(t.verdict, "tab:green")
        ax.axhline(y, color=color, ls="--", lw=0.9)
        beside = sum(abs(y - other) < LABEL_CLEARANCE_DB for other in labelled)   # lines at one level: side by side
        labelled.append(y)
        ax.annotate(f"{t.metric} {t.text} ({t.verdict.value})", (0.995 - 0.3 * beside, y),
                    xycoords=("axes fraction", "data"),
                    fontsize=6.5, color=color, ha="right", va="bottom",
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.85})
    ax.set_xlim(-fs / 2 / scale, fs / 2 / scale)
    tops = [seen[-1], *(v for mk in sp["markers"] if (v := mk["power_dbfs"]) is not None)]
    ax.set_ylim(max(seen[0] - 5, median - 60), max(tops) + 10)
    ax.set_xlabel(f"frequency ({unit})")
    ax.set_ylabel("dBFS per bin")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"{case.test_name}: spectrum ({case.label})", fontsize=9)
    fig.tight_layout()
    return _svg(fig, f"spectrum {case.test_name}")


def spectrum_caption(case: CaseView) -> str:
    sp = case.record.rf_spectrum
    if not sp:
        return ""
    fs, bins, enbw = sp["fs_hz"], sp["bins"], sp["enbw_bins"]
    return (f"Averaged spectrum of the {sp['capture_samples']:,} samples the analyzer took at "
            f"{format_metric('throughput_sps', fs)}: Welch's method, {sp['segments']} segments of {bins} samples "
            f"(50 % overlap) averaged, {sp['window']} window (noise bandwidth {enbw:.2f} bins = "
            f"{enbw * fs / bins:,.0f} Hz). dBFS per bin, scaled so that a tone reads its power (up to "
            f"{SCALLOPING_DB} dB less between bins); noise reads {-per_bin_db(sp):.1f} dB below its power. "
            "Marked: the measured tone, its image and DC at the analyzer's powers; harmonics ±2…5·f (named when "
            "above the noise). Dashed: each threshold that is a level, at its limit.")


# ------------------------------------------------------------------ constellation

def _evm_pct(rx: list[tuple[float, float]], ideal: list[tuple[float, float]]) -> float | None:
    """RMS EVM of symbols against their own ideal points (lists of equal length), % of the ideal RMS."""
    if not rx or len(rx) != len(ideal):
        return None
    err = sum((a - c) ** 2 + (b - d) ** 2 for (a, b), (c, d) in zip(rx, ideal, strict=True))
    ref = sum(c * c + d * d for c, d in ideal)
    return 100 * math.sqrt(err / ref) if ref > 0 else None


def _drawn(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """At most CONSTELLATION_POINTS_SHOWN of the points, evenly taken."""
    n, most = len(points), CONSTELLATION_POINTS_SHOWN
    return points if n <= most else [points[i * n // most] for i in range(most)]


def constellation_plot(case: CaseView) -> str:
    """Received symbols (at most CONSTELLATION_POINTS_SHOWN, evenly taken) over the ideal points."""
    rx, ideal = case.record.rf_constellation, case.record.rf_constellation_ideal
    if not rx:
        return ""
    plt = _pyplot()
    shown = _drawn(rx)
    fig, ax = plt.subplots(figsize=(3.8, 3.8))
    ax.scatter([p[0] for p in shown], [p[1] for p in shown], s=3, color="tab:blue", alpha=0.5, linewidths=0,
               label="received")
    if ideal:
        points = sorted(set(ideal))
        ax.scatter([p[0] for p in points], [p[1] for p in points], s=90, marker="+", color="black", linewidths=1.4,
                   label="ideal")
    reach = max(max(abs(v) for p in shown + list(ideal) for v in p), 1e-9) * 1.15
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.set_xlabel("I")
    ax.set_ylabel("Q")
    ax.legend(fontsize=7, loc="upper right")
    ax.set_title(f"{case.test_name}: constellation", fontsize=9)
    fig.tight_layout()
    return _svg(fig, f"constellation {case.test_name}")


def constellation_caption(case: CaseView) -> str:
    rx, ideal = case.record.rf_constellation, case.record.rf_constellation_ideal
    if not rx:
        return ""
    m = case.metrics
    shown = len(_drawn(rx))
    text = f"{len(rx):,} received symbols" + (f" ({shown:,} of them drawn)" if shown < len(rx) else "")
    text += f" over the {len(set(ideal))} ideal points (+)." if ideal else "."
    if finite(m.get("evm_rms_pct")):
        text += f" EVM {m['evm_rms_pct']:.2f} % RMS"
        if finite(m.get(TRUTH_PREFIX + "evm_rms_pct")):
            text += f" (injected: {m[TRUTH_PREFIX + 'evm_rms_pct']:.2f} %)"
        text += "."
    else:
        evm = _evm_pct(rx, ideal)
        text += f" EVM of the points: {evm:.2f} % RMS." if evm is not None else " EVM: not measured."
    return text


# ------------------------------------------------------------------ sweeps

def axis_number(value: JsonValue) -> tuple[float, str | None] | None:
    """A sweep value as a number and its unit ('20 dB' -> (20.0, 'dB'), 4 -> (4.0, None)), or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value), None
    if isinstance(value, str):
        try:
            return split_quantity(value)
        except UnitError:
            return None
    return None


def sweep_truth(points: list[CaseView]) -> list[str]:
    """The figures a sweep moved the truth of: measured beside an injected value that differs
    between its points (the SNR of an SNR sweep; EVM beside its theory)."""
    names: list[str] = []
    for p in points:
        names += [k for k in truths(p.metrics) if k not in names]
    return [k for k in names
            if len({round(p.metrics[TRUTH_PREFIX + k], 9) for p in points if TRUTH_PREFIX + k in p.metrics}) > 1]


def _x(sweep: Sweep, p: CaseView) -> float | None:
    got = axis_number(p.sweep_point.get(sweep.row_axis))
    return got[0] if got else None


def sweep_rows(sweep: Sweep, points: list[CaseView]) -> list[dict[str, object]]:
    """The sweep's points in the row axis's order: the swept value, then per figure of
    sweep_truth measured, injected and the difference."""
    names = sweep_truth(points)
    out: list[dict[str, object]] = []
    for p in sorted(points, key=lambda p: (_x(sweep, p) is None, _x(sweep, p) or 0.0, p.index)):
        m = p.metrics
        cells = []
        for k in names:
            has = k in m and TRUTH_PREFIX + k in m
            cells += [format_metric(k, m[k]) if k in m else "-",
                      format_metric(k, m[TRUTH_PREFIX + k]) if TRUTH_PREFIX + k in m else "-",
                      format_metric(k, m[k] - m[TRUTH_PREFIX + k]) if has else "-"]
        out.append({"value": p.sweep_point.get(sweep.row_axis), "anchor": p.anchor, "failed": p.failure,
                    "cells": cells})
    return out


def sweep_curve(sweep: Sweep, fixed: dict[str, JsonValue], points: list[CaseView]) -> str:
    """Per figure of sweep_truth a panel: measured (dots, failed points red) and injected
    (line) against the swept value, one pair of lines per column-axis value; under it the
    difference, measured - injected."""
    names = sweep_truth(points)
    numbered = [p for p in points if _x(sweep, p) is not None]
    if not names or len(numbered) < 2:
        return ""
    units = {got[1] for p in numbered if (got := axis_number(p.sweep_point.get(sweep.row_axis))) is not None}
    unit = next(iter(units)) if len(units) == 1 else None
    plt = _pyplot()
    fig, axes = plt.subplots(2, len(names), figsize=(3.9 * len(names), 4.2), squeeze=False, sharex="col",
                             gridspec_kw={"height_ratios": (3, 1.3)})
    cols = sorted({str(p.sweep_point.get(sweep.col_axis)) for p in numbered}) if sweep.col_axis else [""]
    for ax, diff_ax, k in zip(axes[0], axes[1], names, strict=True):
        for col in cols:
            pts = sorted((p for p in numbered if not sweep.col_axis or str(p.sweep_point.get(sweep.col_axis)) == col),
                         key=lambda p: _x(sweep, p) or 0.0)
            suffix = f" ({axis_label(sweep.col_axis)} = {col})" if sweep.col_axis else ""
            truth = [(_x(sweep, p), p.metrics[TRUTH_PREFIX + k]) for p in pts if TRUTH_PREFIX + k in p.metrics]
            ax.plot([x for x, _ in truth], [y for _, y in truth], color="0.45", lw=1.2, marker="x", ms=4,
                    label="injected (truth)" + suffix)
            for failed, color, label in ((False, "tab:blue", "measured" + suffix),
                                         (True, "red", "measured, FAIL/ERROR")):
                both = [p for p in pts if k in p.metrics and p.failure == failed]
                if not both:
                    continue
                ax.plot([_x(sweep, p) for p in both], [p.metrics[k] for p in both], ls="none", marker="o", ms=4,
                        color=color, label=label)
                paired = [p for p in both if TRUTH_PREFIX + k in p.metrics]
                diffs = [p.metrics[k] - p.metrics[TRUTH_PREFIX + k] for p in paired]
                diff_ax.plot([_x(sweep, p) for p in paired], diffs, ls="none", marker="o", ms=4, color=color)
        diff_ax.axhline(0, color="0.45", lw=1)
        diff_ax.set_ylabel("measured - injected", fontsize=7)
        diff_ax.set_xlabel(axis_label(sweep.row_axis) + (f" ({unit})" if unit else ""))
        ax.set_ylabel(k)
        ax.set_title(f"{k}: measured and injected", fontsize=9)
        ax.legend(fontsize=7)
    where = ", ".join(f"{axis_label(a)} = {v}" for a, v in fixed.items())
    fig.suptitle(sweep.name + (f" ({where})" if where else ""), fontsize=10)
    fig.tight_layout()
    return _svg(fig, f"sweep truth {sweep.name} {where}".strip())
