"""The bench's one zero-loss search (hostlib/bench/search.py), against links whose limit is known."""
from __future__ import annotations

from dataclasses import dataclass, field

from hostlib.bench.search import CONFIRM_STEPS, SEARCH_STEPS, Point, held, zero_loss_rate


@dataclass
class Link:
    """Holds every window at or below limit, and over long windows only at or below long_limit."""
    limit: float
    long_limit: float | None = None
    long_s: float = 10.0
    runs: list[tuple[float, float]] = field(default_factory=list)

    def __call__(self, rate: float, seconds: float) -> Point:
        self.runs.append((rate, seconds))
        bound = self.long_limit if self.long_limit is not None and seconds >= self.long_s else self.limit
        return Point(rate <= bound, rate, cpu=50.0, detail={"seconds": seconds})


def test_halves_then_bisects_to_within_a_32nd_of_the_range():
    link = Link(limit=300.0)
    found = zero_loss_rate(link, 1000.0, 1.0)
    # 500 fails, 250 holds, then 5 bisections between 250 and 500
    assert [r for r, _ in link.runs[:2]] == [500.0, 250.0]
    assert len(link.runs) == 2 + SEARCH_STEPS - 1
    assert 300.0 - 250.0 / 32 <= found.rate <= 300.0
    assert found.outcome is not None and found.outcome.ok and found.outcome.fps == found.rate
    assert [w.rate for w in found.windows] == [r for r, _ in link.runs]


def test_confirmation_steps_down_until_the_long_window_holds():
    link = Link(limit=300.0, long_limit=240.0)
    found = zero_loss_rate(link, 1000.0, 1.0, confirm_s=10.0)
    searched = max(w.rate for w in found.windows if w.phase == "search" and w.outcome.ok)
    confirms = [w.rate for w in found.windows if w.phase == "confirm"]
    assert confirms == [searched * f for f in CONFIRM_STEPS[:len(confirms)]]
    assert found.rate == confirms[-1] <= 240.0 < confirms[-2]


def test_confirm_runs_must_all_hold_in_a_row():
    class Flaky(Link):
        def __call__(self, rate: float, seconds: float) -> Point:
            p = super().__call__(rate, seconds)
            if seconds >= self.long_s and len([s for _, s in self.runs if s >= self.long_s]) == 2:
                p.ok = False     # the re-check of the first rate loses
            return p

    link = Flaky(limit=300.0)
    found = zero_loss_rate(link, 1000.0, 1.0, confirm_s=10.0, confirm_runs=2)
    confirms = [(w.rate, w.outcome.ok) for w in found.windows if w.phase == "confirm"]
    first = confirms[0][0]
    assert confirms == [(first, True), (first, False), (first * 0.9, True), (first * 0.9, True)]
    assert found.rate == first * 0.9


def test_nothing_clean_is_rate_zero_with_the_last_window_kept():
    link = Link(limit=0.0)
    found = zero_loss_rate(link, 1000.0, 1.0, halvings=4)
    assert found.rate == 0.0 and found.outcome is None
    assert [r for r, _ in link.runs] == [500.0, 250.0, 125.0, 62.5]
    point = held(found)
    assert not point.ok and point.fps == 0.0 and point.cpu == 50.0 and point.detail == {"seconds": 1.0}


def test_no_upper_bound_runs_nothing():
    link = Link(limit=100.0)
    found = zero_loss_rate(link, 0.0, 1.0)
    assert found.rate == 0.0 and not link.runs and held(found).cpu is None
