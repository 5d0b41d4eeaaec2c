"""Utilization, counted without enumeration, checked against brute-force enumeration."""

from __future__ import annotations

from math import prod

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import expressions

from hloidx.maps.domain import feasible_points, relation
from hloidx.maps.expr import dim, range_var
from hloidx.maps.indexing_map import IndexingMap
from hloidx.maps.interval import Interval
from hloidx.maps.utilization import utilization

d0, d1 = dim(0), dim(1)
s0 = range_var(0)


def brute(maps: list[IndexingMap], operand: tuple[int, ...]) -> tuple[float, float]:
    size = prod(operand)
    touched = set()
    iterations = 0
    for m in maps:
        touched |= {
            r for _, r in relation(m) if all(0 <= x < n for x, n in zip(r, operand, strict=True))
        }
        iterations += feasible_points(m)[1]
    return len(touched) / size, iterations / size


@pytest.mark.parametrize(
    ("maps", "operand", "distinct", "reads"),
    [
        ([IndexingMap.build([d1], [10, 20])], (20,), 1.0, 10.0),  # broadcast
        ([IndexingMap.build([s0, d0], [10], [256])], (256, 10), 1.0, 1.0),  # reduce
        ([IndexingMap.build([d0 * 2], [5])], (10,), 0.5, 0.5),  # strided slice
        (
            [IndexingMap.build([d0], [5]), IndexingMap.build([d0 + 3], [5])],
            (10,),
            0.8,
            1.0,
        ),  # union
        ([IndexingMap.build([d0 + s0], [8], [3])], (10,), 1.0, 2.4),  # window
        ([IndexingMap.build([], [4, 5])], (), 1.0, 20.0),  # scalar read everywhere
    ],
)
def test_known_cases(maps, operand, distinct, reads):
    u = utilization(maps, operand)
    assert u.kind == "exact"
    assert u.distinct == pytest.approx(distinct)
    assert u.reads == pytest.approx(reads)
    assert (u.distinct, u.reads) == pytest.approx(brute(maps, operand))


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_random_maps_match_enumeration(data):
    rank = data.draw(st.integers(1, 2))
    operand = tuple(data.draw(st.integers(1, 8)) for _ in range(rank))
    maps = []
    for _ in range(data.draw(st.integers(1, 3))):
        dims = [data.draw(st.integers(1, 5)) for _ in range(2)]
        ranges = [data.draw(st.integers(1, 3))]
        results = [
            data.draw(
                expressions(2, 1, 0, max_depth=2, ops={"add", "mul_const", "mod", "floordiv"})
            )
            for _ in range(rank)
        ]
        m = IndexingMap.build(results, dims, ranges)
        if data.draw(st.booleans()):
            m = m.add_constraints([(results[0] + d0, Interval(0, 4))])
        maps.append(m)
    # Utilization is defined for maps that stay inside the operand (the op rules guarantee it).
    for m in maps:
        assume(
            all(all(0 <= x < n for x, n in zip(r, operand, strict=True)) for _, r in relation(m))
        )
    u = utilization(maps, operand)
    d, r = brute(maps, operand)
    assert u.reads == pytest.approx(r)
    if u.kind == "exact":
        assert u.distinct == pytest.approx(d)
    else:
        assert u.distinct >= d - 1e-12


def test_runtime_variables_make_an_estimate():
    from hloidx.maps.expr import rt_var

    m = IndexingMap.build([d0 + rt_var(0)], [4], rt_bounds=[Interval(0, 6)])
    u = utilization([m], (10,))
    assert u.kind == "estimate"
    assert u.distinct == pytest.approx(0.4)


def test_huge_domain_is_not_enumerated():
    m = IndexingMap.build([d0, d1], [10**6, 10**6])
    u = utilization([m], (10**6, 10**6))
    assert u.distinct == pytest.approx(1.0)
