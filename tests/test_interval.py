"""Intervals: soundness of arithmetic against brute force over small ranges."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hloidx.maps.interval import INT64_MAX, INT64_MIN, Interval

small = st.builds(lambda lo, n: Interval(lo, lo + n), st.integers(-12, 12), st.integers(0, 10))


def values(i: Interval) -> range:
    return range(i.lower, i.upper + 1)


def test_empty_is_normalised():
    assert Interval(3, 1) == Interval.EMPTY
    assert Interval(3, 1).is_empty
    assert Interval(3, 1).size() == 0


def test_saturates_at_int64():
    assert Interval(0, 2**70).upper == INT64_MAX
    assert (Interval(INT64_MIN, 0) - 5).lower == INT64_MIN


@settings(max_examples=300, deadline=None)
@given(small, small)
def test_add_mul_min_max_contain_every_result(a, b):
    for op, f in (
        (Interval.__add__, int.__add__),
        (Interval.__mul__, int.__mul__),
        (Interval.min, min),
        (Interval.max, max),
    ):
        got = op(a, b)
        for x in values(a):
            for y in values(b):
                assert got.contains(f(x, y))


@settings(max_examples=300, deadline=None)
@given(small, st.integers(1, 9))
def test_div_mod_contain_every_result(a, c):
    fd, cd, md = a.floordiv(c), a.ceildiv(c), a.mod(c)
    for x in values(a):
        assert fd.contains(x // c)
        assert cd.contains(-(-x // c))
        assert md.contains(x % c)


@pytest.mark.parametrize(
    ("a", "b", "lt", "le", "eq"),
    [
        (Interval(0, 3), Interval(4, 5), True, True, False),
        (Interval(0, 4), Interval(4, 5), None, True, None),
        (Interval(6, 7), Interval(0, 5), False, False, False),
        (Interval(2, 2), Interval(2, 2), False, True, True),
    ],
)
def test_tri_state_comparisons(a, b, lt, le, eq):
    assert a.lt(b) is lt
    assert a.le(b) is le
    assert a.eq(b) is eq


def test_mod_without_wrap_is_tight():
    assert Interval(5, 7).mod(10) == Interval(5, 7)
    assert Interval(8, 12).mod(10) == Interval(0, 9)
