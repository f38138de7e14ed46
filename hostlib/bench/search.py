"""The bench's one zero-loss rate search, for every row that searches a rate: UDP and
iperf3 (`__main__`), SoapyRemote, the GNU Radio UDP row, RTL in the loop and the soak.

The search: halve down from `upper` until a window holds (at most `halvings` windows),
then bisect between that rate and twice it (`steps` windows in all, the first clean one
included). When confirm_s is longer than the search's window, the rate found is then
re-run over confirm_s, `confirm_runs` times in a row, stepping down CONFIRM_STEPS until
it holds: a short window misses rare losses (a 10 s window also has to ride out the
VM's longest stall, which a 1 s window often does not see). The same rule for a rig and
its peer.

Why not the engine's search (hostlib/engine/search.py): that one bisects the listed
divider values of a case's `search:` spec, running each candidate case through
run_case and returning a CaseResult. A bench candidate is not a case: it is a rate (any
float, in frames/s or samples/s) handed to a callable that runs a native tool, iperf3,
a SoapyRemote client, a GNU Radio flowgraph or a simulator driver for one window and
says whether that window held; its range comes from a measured ceiling, not a list.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

SEARCH_STEPS = 6      # windows from the first clean one to the answer: bisections + 1
MAX_HALVINGS = 10     # windows halving down from the upper bound before giving up
CEILING_HEADROOM = 1.05   # the upper bound over a measured ceiling (an unpaced run's rate)
# Fractions of the searched rate tried over the confirmation window, in order: near
# misses first, then halvings.
CONFIRM_STEPS = (1.0, 0.9, 0.8, 0.7, 0.35, 0.175, 0.0875)


class Outcome(Protocol):
    """What a window tells the search: whether it held (nothing lost, the rate delivered)."""

    @property
    def ok(self) -> bool: ...


OutcomeT = TypeVar("OutcomeT", bound=Outcome)


@dataclass
class Window(Generic[OutcomeT]):
    """One window the search ran."""
    rate: float
    seconds: float
    phase: str            # "search" or "confirm"
    outcome: OutcomeT


@dataclass
class Found(Generic[OutcomeT]):
    """The answer: the highest rate that held (and was confirmed, when asked), 0.0 when
    none did, with the window that showed it and every window run, in order."""
    rate: float = 0.0
    outcome: OutcomeT | None = None
    windows: list[Window[OutcomeT]] = field(default_factory=list)

    @property
    def last(self) -> OutcomeT | None:
        return self.windows[-1].outcome if self.windows else None


def zero_loss_rate(run_at: Callable[[float, float], OutcomeT], upper: float, window_s: float, *,
                   confirm_s: float = 0.0, confirm_runs: int = 1, steps: int = SEARCH_STEPS,
                   halvings: int = MAX_HALVINGS) -> Found[OutcomeT]:
    """The highest rate at which run_at(rate, seconds) holds (module docstring); `upper`
    bounds it (a measured ceiling with some headroom, or the link's nominal maximum)."""
    found: Found[OutcomeT] = Found()

    def run(rate: float, seconds: float, phase: str) -> OutcomeT:
        outcome = run_at(rate, seconds)
        found.windows.append(Window(rate, seconds, phase, outcome))
        return outcome

    if upper <= 0:
        return found
    hi, lo = upper, upper / 2
    best = run(lo, window_s, "search")
    for _ in range(halvings - 1):
        if best.ok:
            break
        hi, lo = lo, lo / 2
        best = run(lo, window_s, "search")
    if not best.ok:
        return found
    for _ in range(steps - 1):
        mid = (lo + hi) / 2
        outcome = run(mid, window_s, "search")
        if outcome.ok:
            lo, best = mid, outcome
        else:
            hi = mid
    if confirm_s <= window_s:
        found.rate, found.outcome = lo, best
        return found
    for fraction in CONFIRM_STEPS:
        rate = lo * fraction
        outcome = run(rate, confirm_s, "confirm")
        for _ in range(confirm_runs - 1):
            if not outcome.ok:
                break
            outcome = run(rate, confirm_s, "confirm")
        if outcome.ok:
            found.rate, found.outcome = rate, outcome
            return found
    return found


@dataclass
class Point:
    """A window of a bench row: held or not, the rate received (frames/s or samples/s,
    the row's unit), the CPU it took, and the tool's own figures."""
    ok: bool
    fps: float
    cpu: float | None = None
    detail: Mapping[str, object] = field(default_factory=dict)


def held(found: Found[Point]) -> Point:
    """The window that showed the rate, or (none held) a point at rate 0 carrying the
    last window's CPU and figures, so a row can say what happened."""
    if found.outcome is not None:
        return found.outcome
    last = found.last
    return Point(False, 0.0, last.cpu if last else None, last.detail if last else {})
