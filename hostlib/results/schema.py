"""The evidence schema: what a run writes and every reader reads, one typed model.

    EvidenceRun                 one file, <evidence dir>/<run_id>.json, format hilrig-evidence/2
    ├── rig: RigSnapshot        the rig file as it was (text, sha256)
    ├── versions                hilrig, python, git_sha, robot
    └── cases: [ResultRecord]   one per case or sweep point, in run order
        ├── case: CaseRecord    the resolved case (SI units) and its YAML
        ├── verdict: Verdict, error_kind: ErrorKind | None
        ├── failed, marginal    why the verdict is not PASS, one line per reason
        ├── metrics, legs       the case's metrics; rx+tx: each leg's own under legs[leg]
        ├── thresholds: [ThresholdResult]   (leg, operator, limit, margin, verdict)
        ├── series, steps       one row a second; a rate search's steps
        ├── blocks              received / sent per 100 000 sequence numbers at the receiver
        ├── study               measured beside the link models and the lab's figure (hostlib.link.models)
        ├── warnings, transport_info   the host's set-up warnings; the transport's text figures (tcp_congestion)
        ├── place, rig_host, device_versions   the lab place, its exporters, what the device reported
        ├── link                the emulated link: realisation, why, both directions configured (SI)
        └── rf_spectrum, rf_constellation(_ideal), rf_sigmf   an RF case: what its plots show,
                                where a failure's capture was saved (docs/rf.md "Seeing it")

`hostlib.results.record` writes it (CaseResult.to_record), `hostlib.reports` and
`hilrig results export` read it (load_evidence). Verdicts stay enums until a view
renders them: Verdict.label is the one place that writes "PASS (marginal)".
Files of an older format are read through one explicit migration (hostlib.results.migrate).
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from typing_extensions import TypedDict

from hostlib.verdicts import ErrorKind, ThresholdResult, Verdict

EVIDENCE_VERSION = 2
EVIDENCE_FORMAT = f"hilrig-evidence/{EVIDENCE_VERSION}"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TransportRecord(_Record):
    kind: str
    frame_bytes: int
    options: dict[str, JsonValue] = Field(default_factory=dict)


class CaseRecord(_Record):
    """The resolved case as it ran (hostlib.dsl.Case): derived fields in SI units, the
    threshold expressions, and `raw`, the resolved YAML."""

    name: str
    test_name: str
    source_file: str
    source_line: int
    device: str
    direction: str
    channels: int
    sample_format: str
    master_clock_hz: float | None = None
    decimation: int | None = None
    interpolation: int | None = None
    rate_sps: float
    transport: TransportRecord
    duration_s: float
    warmup_s: float = 0.0
    pattern: str = ""
    tags: list[str] = Field(default_factory=list)
    timeout_s: float | None = None
    faults: dict[str, int] = Field(default_factory=dict)
    sweep_point: dict[str, JsonValue] = Field(default_factory=dict)
    thresholds: list[str] = Field(default_factory=list)
    raw: dict[str, JsonValue] = Field(default_factory=dict)


class SearchStep(TypedDict):
    """One step of a rate search (hostlib.engine.search), in the order tried."""

    step: int
    phase: str                    # "step" | "retry" | "confirm"
    key: str                      # decimation | interpolation
    value: int
    rate_sps: float
    throughput_Bps: float | None
    verdict: Verdict
    passed: bool
    message: str


class BlockCount(TypedDict):
    """One block of sequence numbers [first_seq, first_seq + sent) at the stream's receiver
    (rx_check.hpp "blocks"): the frames of it received once each, and sent (the lab's table)."""

    first_seq: int
    received: int
    sent: int


class StudyRow(TypedDict):
    """One row of a study case's table beside its blocks (hostlib.link.models): what the
    run measured, a model's prediction from the case's link spec, or the lab's published
    figure; ratio (received / sent) and rate_bps (received bits per second) where they
    apply, for readers that compare."""

    what: str
    how: str
    received: str
    ratio: float | None
    rate_bps: float | None


class RfMarker(TypedDict):
    """A component of an RF capture, where its spectrum plot marks it (hostlib.engine.rf)."""

    what: str                    # "tone", "image", "DC", "harmonic -3", "tone 2" (a multitone's other)
    freq_hz: float               # where in the band, folded into [-fs/2, fs/2)
    power_dbfs: float | None     # the analyzer's figure; None: the plot reads it off the spectrum


class RfSpectrum(TypedDict):
    """An RF capture's averaged spectrum, as the report plots it (hostlib.engine.rf): Welch's
    method, `segments` windowed segments of `bins` samples at 50 % overlap, averaged."""

    fs_hz: float
    capture_samples: int
    bins: int                    # bin i at (i - bins/2) * fs_hz / bins: -fs/2 first
    segments: int
    window: str                  # "4-term Blackman-Harris"
    enbw_bins: float             # the window's noise bandwidth: noise reads its power * enbw_bins / bins per bin
    power_dbfs: list[float | None]   # per bin, 0.01 dB; a tone centred on a bin reads its power; null: no power
    markers: list[RfMarker]


# A metric that was not finite (NaN, inf) is written as null: JSON has no NaN.
MetricValues = dict[str, float | None]


class ResultRecord(_Record):
    """One case (or sweep point) of a run, as the evidence file holds it."""

    test_name: str
    case: CaseRecord
    rig_name: str
    device: str
    driver: str
    run_id: str
    started_utc: str
    ended_utc: str
    verdict: Verdict
    error_kind: ErrorKind | None = None
    message: str = ""
    error: str | None = None
    failed: list[str] = Field(default_factory=list)     # why FAIL: one line per failed check
    marginal: list[str] = Field(default_factory=list)   # why MARGINAL: the bands it missed
    metrics: MetricValues = Field(default_factory=dict)
    legs: dict[str, MetricValues] = Field(default_factory=dict)
    thresholds: list[ThresholdResult] = Field(default_factory=list)
    series: list[MetricValues] = Field(default_factory=list)
    steps: list[SearchStep] = Field(default_factory=list)
    blocks: list[BlockCount] = Field(default_factory=list)
    study: list[StudyRow] = Field(default_factory=list)   # measured, the models, the lab's figure
    warnings: list[str] = Field(default_factory=list)
    transport_info: dict[str, str] = Field(default_factory=dict)   # the transport's text figures (tcp_congestion)
    place: str | None = None       # the lab place it ran on (docs/scale-out.md); None: a local run
    rig_host: str | None = None    # the exporter(s) of that place's devices
    device_versions: dict[str, str] = Field(default_factory=dict)   # what the opened device reported
    # A case with `link:` (docs/long-link.md): which realisation carried it and why, and the
    # spec of both directions in SI units; the delivered figures are link_* metrics.
    link: dict[str, JsonValue] | None = None
    # An RF case (docs/rf.md "Seeing it"): its capture's averaged spectrum; a modulated case's
    # received symbols [i, q] and the ideal points they are judged against; where a failing
    # case's capture was saved as SigMF (.sigmf-meta, relative to the evidence file's folder).
    rf_spectrum: RfSpectrum | None = None
    rf_constellation: list[tuple[float, float]] = Field(default_factory=list)
    rf_constellation_ideal: list[tuple[float, float]] = Field(default_factory=list)
    rf_sigmf: str | None = None

    @property
    def label(self) -> str:
        """'PASS', 'PASS (marginal)', 'FAIL', 'ERROR (device)', 'SKIP'."""
        return self.verdict.display(self.error_kind)

    @property
    def why(self) -> str:
        """What a table shows beside a verdict that is not PASS."""
        if self.failed:
            return "; ".join(self.failed)
        if self.marginal:
            return "marginal: " + "; ".join(self.marginal)
        return self.error or ("" if self.verdict is Verdict.PASS else self.message)


class RigSnapshot(_Record):
    name: str | None = None
    path: str | None = None
    sha256: str | None = None
    text: str | None = None
    error: str | None = None       # why the rig file could not be read


class EvidenceRun(_Record):
    """One run's evidence file."""

    format: Literal["hilrig-evidence/2"] = "hilrig-evidence/2"   # EVIDENCE_FORMAT
    run_id: str
    started_utc: str
    ended_utc: str | None = None
    rig: RigSnapshot = Field(default_factory=RigSnapshot)
    versions: dict[str, str | None] = Field(default_factory=dict)
    cases: list[ResultRecord] = Field(default_factory=list)
    tally: dict[Verdict, int] = Field(default_factory=dict)   # cases by verdict, when the run finished
    nothing_tested: bool = False     # no case was selected, or every selected case SKIPped
