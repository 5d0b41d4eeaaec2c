"""Range evaluation: tightness on hand-made cases, soundness against enumeration."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hloidx.maps.domain import evaluate_results, feasible_points
from hloidx.maps.expr import add, ceildiv, dim, floordiv, max_, min_, mod, mul, range_var
from hloidx.maps.indexing_map import IndexingMap, Variable
from hloidx.maps.interval import Interval
from hloidx.maps.range_eval import RangeEvaluator, divide_range, expr_range, mod_range
from tests.strategies import expressions, indexing_maps

d0, d1, s0 = dim(0), dim(1), range_var(0)
BOUNDS = {d0: Interval(0, 9), d1: Interval(-3, 4), s0: Interval(2, 5)}


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (d0, Interval(0, 9)),
        (add(d0, 7), Interval(7, 16)),
        (d0 * 3 - d1, Interval(-4, 30)),
        (mul(d0, d1), Interval(-27, 36)),
        (floordiv(d0, 4), Interval(0, 2)),
        (floordiv(d1, 2), Interval(-2, 2)),
        (ceildiv(d0, 4), Interval(0, 3)),
        (mod(d0, 4), Interval(0, 3)),
        (mod(d0, 16), Interval(0, 9)),
        (mod(add(d0, 20), 16), Interval(4, 13)),
        (mod(add(d0, 10), 16), Interval(0, 15)),
        (mod(add(d0, 32), 64), Interval(32, 41)),
        (min_(d0, 5), Interval(0, 5)),
        (max_(d1, 0), Interval(0, 4)),
        (floordiv(d0, s0), Interval(0, 4)),
        (ceildiv(d0, s0), Interval(0, 5)),
        (mod(d0, s0), Interval(0, 4)),
        (mod(d1, s0), Interval(0, 4)),
        (floordiv(add(d0 * 100, d1 * 10), 100), Interval(-1, 9)),
    ],
)
def test_range_of_expression(expr, expected):
    assert expr_range(expr, BOUNDS) == expected


def test_range_uses_constraint_on_subexpression():
    e = add(d0, d1)
    assert expr_range(mod(e, 7) * 2 + 1, BOUNDS) == Interval(1, 13)
    assert expr_range(mod(e, 7) * 2 + 1, BOUNDS, [(e, Interval(0, 3))]) == Interval(1, 7)
    # a constraint narrows only the expression it names
    assert expr_range(add(d1, d0), BOUNDS, {add(d0, 7): Interval(0, 0)}) == Interval(-3, 13)


def test_range_unknown_variable_is_full():
    assert expr_range(dim(5), {}) == Interval.FULL


@pytest.mark.parametrize(
    ("lhs", "rhs", "ceil", "expected"),
    [
        (Interval(0, 9), Interval(-2, 3), False, Interval(-9, 9)),
        (Interval(-7, 7), Interval(0, 0), False, Interval.EMPTY),
        (Interval(-7, 7), Interval(-3, -2), True, Interval(-3, 4)),
    ],
)
def test_divide_range_by_variable_divisor(lhs, rhs, ceil, expected):
    assert divide_range(lhs, rhs, ceil) == expected


@pytest.mark.parametrize(
    ("lhs", "rhs", "expected"),
    [
        (Interval(-7, 7), Interval(-3, -2), Interval(-2, 0)),
        (Interval(-1, 0), Interval(-3, -2), Interval(-1, 0)),
        (Interval(0, 100), Interval(2, 5), Interval(0, 4)),
        (Interval(-5, 5), Interval(-2, 2), Interval(-1, 1)),
    ],
)
def test_mod_range_by_variable_divisor(lhs, rhs, expected):
    assert mod_range(lhs, rhs) == expected


def _sound(indexing_map: IndexingMap) -> None:
    columns, n = feasible_points(indexing_map, limit=50_000)
    evaluator = RangeEvaluator.of_map(indexing_map)
    values = evaluate_results(indexing_map, columns, n)
    for expr, column in zip(indexing_map.results, values, strict=True):
        interval = evaluator.range(expr)
        if n:
            assert interval.lower <= int(np.min(column)), (str(expr), interval)
            assert int(np.max(column)) <= interval.upper, (str(expr), interval)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indexing_maps(max_size=2000, max_depth=3))
def test_range_is_sound_over_enumerated_domain(indexing_map):
    _sound(indexing_map)


@st.composite
def maps_with_variable_divisors(draw):
    e = draw(expressions(2, 1, 0, max_depth=2))
    divisor = draw(expressions(2, 1, 0, max_depth=1))
    op = draw(st.sampled_from([floordiv, ceildiv, mod]))
    bounds = [
        Interval(lo, lo + draw(st.integers(0, 6)))
        for lo in draw(st.lists(st.integers(-4, 3), min_size=3, max_size=3))
    ]
    # Keep the divisor non-zero everywhere so enumeration is defined; the evaluator must
    # still be sound when the divisor's range straddles zero.
    m = IndexingMap(
        (),
        (Variable(bounds[0]), Variable(bounds[1])),
        (Variable(bounds[2]),),
    )
    evaluator = RangeEvaluator.of_map(m)
    r = evaluator.range(divisor)
    if r.contains(0) or r.is_empty:
        divisor = add(divisor, 1 - r.lower)  # now at least 1 everywhere
    if divisor.is_const():
        divisor = add(range_var(0), 3 - bounds[2].lower)  # a variable divisor in [3, 9]
    if draw(st.booleans()):
        divisor = mul(divisor, -1)  # a divisor that is negative everywhere
    return IndexingMap((op(e, divisor),), m.dim_vars, m.range_vars)


@settings(max_examples=200, deadline=None)
@given(maps_with_variable_divisors())
def test_range_is_sound_with_variable_divisors(indexing_map):
    _sound(indexing_map)


def test_range_cost_is_linear_in_dag_size():
    # A deep chain that shares sub-expressions: a tree walk would be exponential.
    e = d0
    for i in range(200):
        e = add(e, mod(e, 7 + i % 5))
    start = time.perf_counter()
    r = expr_range(e, BOUNDS)
    # a tree walk would visit 2**200 nodes and never return; the DAG walk takes milliseconds,
    # so a generous bound keeps the test meaningful on a loaded 2-core CI machine
    assert time.perf_counter() - start < 5.0
    assert r.lower == 0


def test_has_constraints():
    assert not RangeEvaluator(BOUNDS).has_constraints
    assert RangeEvaluator(BOUNDS, [(add(d0, d1), Interval(0, 3))]).has_constraints


def test_constant_ranges_are_points_even_when_memoised():
    evaluator = RangeEvaluator(BOUNDS)
    assert evaluator.range(add(d0, 0)) == Interval(0, 9)
    for value in (0, -5, 2**40):
        assert evaluator.range(add(d0, 0) * 0 + value) == Interval(value, value)
