"""IndexingMap: composition and variable removal checked against relational composition."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import indexing_maps

from hloidx.errors import EnumerationLimitError
from hloidx.maps.domain import relation
from hloidx.maps.expr import const, dim, range_var, rt_var
from hloidx.maps.indexing_map import IndexingMap, MapState, Variable, compose
from hloidx.maps.interval import Interval

d0, d1, d2 = dim(0), dim(1), dim(2)
s0, s1 = range_var(0), range_var(1)


def composed_relation(first: IndexingMap, second: IndexingMap) -> set:
    """Relational composition of two enumerated maps: the oracle for compose()."""
    by_middle: dict = {}
    for mid, out in relation(second):
        by_middle.setdefault(mid, set()).add(out)
    return {(a, c) for a, b in relation(first) for c in by_middle.get(b, ())}


def test_compose_transposes_is_identity_relation():
    t = IndexingMap.build([d1, d0], [3, 4])
    t2 = IndexingMap.build([d1, d0], [4, 3])
    assert relation(compose(t, t2)) == {((a, b), (a, b)) for a in range(3) for b in range(4)}


def test_compose_orders_symbols_as_xla():
    # first (consumer) has s0; second (producer) has s0: result is [second's, first's].
    first = IndexingMap.build([d0 + s0], [4], [2])
    second = IndexingMap.build([d0, s0], [5], [3])
    c = compose(first, second)
    assert c.num_range_vars == 2
    assert c.results == (d0 + s1, s0)


def test_compose_adds_bound_constraints():
    first = IndexingMap.build([d0 * 2], [5])
    second = IndexingMap.build([d0], [6])
    c = compose(first, second)
    assert relation(c) == {((a,), (2 * a,)) for a in range(3)}


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_compose_is_relational_composition(data):
    first = data.draw(indexing_maps(max_dims=2, max_ranges=1, max_rts=0, max_size=200, min_dims=1))
    n = first.num_results
    second = data.draw(indexing_maps(max_dims=n, min_dims=n, max_ranges=1, max_rts=0, max_size=200))
    assert relation(compose(first, second)) == composed_relation(first, second)


@settings(max_examples=80, deadline=None)
@given(indexing_maps(max_dims=2, max_ranges=2, max_rts=0, max_size=300))
def test_remove_unused_symbols_keeps_the_relation(m):
    assert relation(m.remove_unused_symbols()) == relation(m)


def test_remove_unused_symbols_keeps_unsatisfiable_constraint():
    m = IndexingMap(
        (d0,),
        (Variable(Interval(0, 3)),),
        (Variable(Interval(0, 0)),),
        (),
        ((s0 * 2 + 1, Interval(0, 0)),),
    )
    assert relation(m) == set()
    assert relation(m.remove_unused_symbols()) == set()


def test_remove_unused_dims():
    m = IndexingMap.build([d2, d0], [2, 3, 4])
    reduced, removed = m.remove_unused_dims()
    assert removed == [1]
    assert reduced.results == (d1, d0)


def test_empty_bound_makes_known_empty():
    m = IndexingMap((d0,), (Variable(Interval(3, 1)),))
    assert m.state is MapState.KNOWN_EMPTY


def test_constant_constraint_outside_makes_known_empty():
    m = IndexingMap.build([d0], [4]).add_constraints([(const(5), Interval(0, 3))])
    assert m.is_known_empty


def test_single_variable_constraint_tightens_bounds():
    m = IndexingMap.build([d0 + s0], [10], [4]).add_constraints([(s0, Interval(1, 2))])
    assert m.range_vars[0].bounds == Interval(1, 2)
    assert not m.constraints


def test_constraints_are_normalised_and_equal_maps_compare_equal():
    a = IndexingMap.build(
        [d0], [8], constraints=[(d0 % 2, Interval(0, 0)), (d0 + s0, Interval(0, 4))]
    )
    b = IndexingMap.build(
        [d0], [8], constraints=[(d0 + s0, Interval(0, 4)), (d0 % 2, Interval(0, 0))]
    )
    assert a == b
    assert hash(a) == hash(b)


def test_enumeration_refuses_huge_domains():
    m = IndexingMap.build([d0], [10**12])
    with pytest.raises(EnumerationLimitError):
        relation(m)


def test_runtime_relation_keys_include_runtime_values():
    m = IndexingMap.build([d0 + rt_var(0)], [2], rt_bounds=[Interval(0, 1)])
    assert relation(m, with_runtime=True) == {
        ((0, 0), (0,)),
        ((1, 0), (1,)),
        ((0, 1), (1,)),
        ((1, 1), (2,)),
    }


@settings(max_examples=60, deadline=None)
@given(m=indexing_maps(max_size=512), data=st.data())
def test_restrict_dims_keeps_exactly_the_pairs_inside_the_box(m, data) -> None:
    # oracle: the full relation filtered by the box, point by point
    box = []
    for v in m.dim_vars:
        lo = data.draw(st.integers(v.bounds.lower - 1, v.bounds.upper + 1))
        hi = data.draw(st.integers(lo - 1, v.bounds.upper + 1))
        box.append(Interval(lo, hi))
    try:
        full = relation(m, 20_000)
    except EnumerationLimitError:
        return
    inside = {
        (d, r) for d, r in full if all(b.lower <= x <= b.upper for x, b in zip(d, box, strict=True))
    }
    assert relation(m.restrict_dims(box), 20_000) == inside


def test_restrict_dims_needs_one_interval_per_dimension() -> None:
    m = IndexingMap((dim(0),), (Variable(Interval(0, 3)),), (), ())
    with pytest.raises(ValueError, match="1 dimensions, not 2"):
        m.restrict_dims([Interval(0, 1), Interval(0, 1)])
