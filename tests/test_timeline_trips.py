"""The step timeline draws what runs: every trip of a loop, not the first one and a blank
(issue 44). rnn_scan's while loop runs 10 times (known_trip_count n=10 in its backend
config): each kernel of its body runs 10 times, one iteration after another."""

from __future__ import annotations

import itertools
from collections import Counter

import paths
import pytest

from hloidx.hlo.syntax import parse_hlo
from hloidx.perf.report import estimate_module
from hloidx.render import timeline_svg as timeline

MODULE = paths.ROOT / "tests" / "data" / "corpus" / "rnn_scan.opt.hlo"


@pytest.fixture(scope="module")
def step():
    return estimate_module(parse_hlo(MODULE.read_text(), MODULE.name)).step


def _covered(slices, loop) -> float:
    """The fraction of the loop's span that the slices one level below it cover."""
    inner = sorted(
        (s.start_ns, s.end_ns)
        for s in slices
        if s.depth == loop.depth + 1
        and s.start_ns >= loop.start_ns - 1e-6
        and s.end_ns <= loop.end_ns + 1e-6
    )
    covered, current = 0.0, None
    for start, end in inner:
        if current is None or start > current[1]:
            covered += 0 if current is None else current[1] - current[0]
            current = [start, end]
        else:
            current[1] = max(current[1], end)
    covered += 0 if current is None else current[1] - current[0]
    return covered / (loop.end_ns - loop.start_ns)


def test_every_trip_of_the_loop_is_drawn(step) -> None:
    (loop,) = [s for s in step.slices if s.kind == "loop"]
    assert loop.args["counted_trips"] == 10
    drawn = timeline.every_trip(step.slices)
    assert _covered(drawn, loop) > 0.95
    # the body's kernels run once per trip; the condition once more, after the last trip
    runs = Counter(s.name for s in drawn if s.depth == 1 and s.kind == "kernel")
    body = {n: c for n, c in runs.items() if "/condition/" not in n}
    condition = {n: c for n, c in runs.items() if "/condition/" in n}
    assert set(body.values()) == {10}
    assert len(body) == 8  # the fusions and copies of region_0.4 that launch kernels
    assert set(condition.values()) == {11}
    # trips follow one another, one iteration apart
    name = "while.6/ynn_fusion.1"
    starts = sorted(s.start_ns for s in drawn if s.name == name and s.depth == 1)
    gaps = {round(b - a, 6) for a, b in itertools.pairwise(starts)}
    assert gaps == {round(loop.args["iteration_ns"], 6)}


def test_past_the_budget_later_trips_are_one_marked_slice(step, monkeypatch) -> None:
    monkeypatch.setattr(timeline, "MAX_TRIP_SLICES", 0)
    (loop,) = [s for s in step.slices if s.kind == "loop"]
    drawn = timeline.every_trip(step.slices)
    (repeat,) = [s for s in drawn if s.kind == "repeat"]
    assert repeat.args["trips"] == 9
    iteration = loop.args["iteration_ns"]
    assert repeat.start_ns == pytest.approx(loop.start_ns + iteration)
    assert repeat.end_ns == pytest.approx(loop.start_ns + 10 * iteration)
    assert _covered(drawn, loop) > 0.95  # no gap
    assert "x9 more trips" in timeline.timeline_svg(step)
