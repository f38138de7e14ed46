"""How many faults a simulator run can place: the one Python statement of the rule.

The simulator places faults (docs/architecture.md "Simulator") on frames
16 + 4j, j drawn with the seed from max(2 x F, 32) places, where F is the number
of faulted frames: drop + duplicate + reorder frames, plus one frame per
min(8, samples_per_frame) corrupted samples. A fault on a frame the run never
sends is never injected, so a case whose places run past its last frame would
come out silently short. `fault_fit` says whether every fault lands and the most
that would; the loader refuses a case that does not fit (docs/dsl.md).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

FIRST_FAULT_FRAME = 16        # the first frames are never faulted (the stream settles)
FAULT_SPACING = 4             # faults sit every 4th frame, so two never touch
MIN_PLACES = 32               # the seed chooses among at least this many places
PLACES_PER_FAULT = 2          # ... or twice the faulted frames, when that is more
MAX_CORRUPT_PER_FRAME = 8     # corrupted samples per corrupted frame


@dataclass(frozen=True)
class FaultFit:
    faulted_frames: int        # frames the requested faults occupy
    frames_in_run: int         # frames the run carries
    placeable_max: int         # the most faulted frames the run can hold, all placed
    frames_needed: int         # frames a run needs to place all requested faults

    @property
    def fits(self) -> bool:
        return self.faulted_frames <= self.placeable_max


def faulted_frames(faults: Mapping[str, int], samples_per_frame: int) -> int:
    """Frames the faults occupy (corrupt samples are spread up to 8 per frame)."""
    per_frame = max(1, min(int(samples_per_frame), MAX_CORRUPT_PER_FRAME))
    corrupt = int(faults.get("corrupt_samples", 0) or 0)
    return (int(faults.get("drop_frames", 0) or 0) + int(faults.get("duplicate_frames", 0) or 0)
            + int(faults.get("reorder_frames", 0) or 0) + math.ceil(corrupt / per_frame))


def _frames_for_places(places: int) -> int:
    # The last place is frame 16 + 4 (places - 1); a reorder also needs the frame after it.
    return FIRST_FAULT_FRAME + FAULT_SPACING * (places - 1) + 2


def fault_fit(faults: Mapping[str, int], *, rate_sps: float, samples_per_frame: int,
              run_s: float) -> FaultFit:
    """Whether the faults of a run of `run_s` seconds at `rate_sps` all land."""
    frames = int(run_s * rate_sps / samples_per_frame) if samples_per_frame > 0 else 0
    places = (frames - _frames_for_places(1)) // FAULT_SPACING + 1 if frames >= _frames_for_places(1) else 0
    placeable = places // PLACES_PER_FAULT if places >= MIN_PLACES else 0
    wanted = faulted_frames(faults, samples_per_frame)
    needed = _frames_for_places(max(PLACES_PER_FAULT * wanted, MIN_PLACES)) if wanted else 0
    return FaultFit(wanted, frames, placeable, needed)
