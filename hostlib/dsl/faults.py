"""How many faults a simulator run can place: validation asks the core's rule.

The simulator places faults (docs/architecture.md "Simulator") on frames
16 + 4j, j drawn with the seed from max(2 x F, 32) places, where F is the number
of faulted frames: drop + duplicate + reorder frames, plus one frame per
min(8, samples_per_frame) corrupted samples. A fault on a frame the run never
sends is never injected, so a case whose places run past its last frame would
come out silently short. `fault_fit` says whether every fault lands and the most
that would, from the core's `FaultPlan::fit_run` (the simulator's own placement
code, through hostlib._native); the loader refuses a case that does not fit
(docs/dsl.md).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hostlib.transports import native, resolve_faults


@dataclass(frozen=True)
class FaultFit:
    faulted_frames: int        # frames the requested faults occupy
    frames_in_run: int         # frames the run carries
    placeable_max: int         # the most faulted frames the run can hold, all placed
    frames_needed: int         # frames a run needs to place all requested faults

    @property
    def fits(self) -> bool:
        return self.faulted_frames <= self.placeable_max


def fault_fit(faults: Mapping[str, int], *, rate_sps: float, samples_per_frame: int,
              run_s: float) -> FaultFit:
    """Whether the faults of a run of `run_s` seconds at `rate_sps` all land."""
    frames = int(run_s * rate_sps / samples_per_frame) if samples_per_frame > 0 else 0
    spec = resolve_faults(faults).to_json()
    fit = native().fault_fit(spec, max(1, int(samples_per_frame)), max(0, frames))
    return FaultFit(int(fit["faulted_frames"]), frames, int(fit["placeable_max"]), int(fit["frames_needed"]))
