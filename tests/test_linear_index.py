"""Reshape chains through radices that do not nest, composed over one linear index
(``hloidx.maps.linear_index``): every rewrite compared with the map it came from by
enumerating both relations over the domain."""

from __future__ import annotations

import random

import paths
import pytest
from hypothesis import HealthCheck, given, settings

from hloidx.hlo.reshape import linearized_reshape_map
from hloidx.maps.domain import relation
from hloidx.maps.linear_index import is_unfinished, through_linear_index
from hloidx.maps.map_simplify import operation_count, simplify, simplify_with_rules
from hloidx.maps.printer import format_map
from hloidx.maps.syntax import parse_map
from tests.strategies import indexing_maps


def _reshape_chains():
    import sys

    sys.path.insert(0, str(paths.ROOT / "bench"))
    import reshape_chains

    return reshape_chains


def test_a_round_trip_cut_at_10_and_at_7_is_the_identity() -> None:
    # The example: the linear index d0 * 28 + d1 * 4 + d2 cut at 10 and at 7.
    rc = _reshape_chains()
    shapes = [[5, 7, 4], [14, 10], [20, 7], [5, 7, 4]]
    chained = rc.chain_map(shapes, simplified_steps=True)
    got = simplify(chained)
    assert format_map(got) == (
        "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 4], d1 in [0, 6], d2 in [0, 3]"
    )
    assert relation(got) == relation(chained)


def test_a_plain_split_comes_back_as_floordiv_and_mod() -> None:
    rc = _reshape_chains()
    shapes = [[18, 4], [2, 6, 6], [18, 4], [12, 6]]
    chained = rc.chain_map(shapes, simplified_steps=True)
    got, rules = simplify_with_rules(chained)
    assert format_map(got) == (
        "(d0, d1) -> ((d0 * 6 + d1) floordiv 4, (d0 * 6 + d1) mod 4), "
        "domain: d0 in [0, 11], d1 in [0, 5]"
    )
    assert "linear-index" in [r.name for r in rules]
    assert relation(got) == relation(chained)
    assert simplify(chained) == got


def test_non_nesting_family_collapses_sampled() -> None:
    """A fixed sample of bench/reshape_chains.py's non-nesting family (the whole family, 1,636
    chains, runs in the benchmark): each reaches the direct reshape's form, same relation."""
    rc = _reshape_chains()
    family = rc.non_nesting_chains()
    for _, _, shapes in random.Random(3).sample(family, 40):
        chained = rc.chain_map(shapes, simplified_steps=True)
        got = simplify(chained)
        best = simplify(linearized_reshape_map(shapes[-1], shapes[0]))
        assert got == best or operation_count(got) <= operation_count(best), shapes
        assert relation(got) == relation(chained), shapes


@pytest.mark.parametrize(
    "text",
    [
        "(d0, d1) -> ((d0 floordiv 6) * 9 + ((d0 mod 6) * 6 + d1) floordiv 4), "
        "domain: d0 in [0, 11], d1 in [0, 5]",
        "(d0, d1) -> (((d0 mod 3) * 5 + d1) floordiv 7, ((d0 mod 3) * 5 + d1) mod 7), "
        "domain: d0 in [0, 8], d1 in [0, 4]",
        "(d0, d1, d2) -> ((d0 * 12 + d1 * 4 + d2) mod 5, d1), "
        "domain: d0 in [0, 0], d1 in [0, 2], d2 in [0, 3]",
    ],
)
def test_the_rewrite_keeps_the_relation(text: str) -> None:
    m = parse_map(text)
    through = through_linear_index(m)
    if through is not None:
        assert relation(through) == relation(m)
    s = simplify(m)
    assert relation(s) == relation(m)
    assert operation_count(s) <= operation_count(m)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indexing_maps(max_ranges=0, max_rts=0, min_dims=1, allow_negative_bounds=False))
def test_the_rewrite_keeps_the_relation_of_any_map(m) -> None:
    through = through_linear_index(m)
    if through is None:
        return
    assert relation(through) == relation(m), (str(m), str(through))


def test_finished_forms_are_not_taken_for_chains() -> None:
    done = parse_map(
        "(d0, d1) -> (((d0 * 6 + d1) floordiv 4) mod 3, (d0 * 6 + d1) mod 4), "
        "domain: d0 in [0, 11], d1 in [0, 5]"
    )
    assert not is_unfinished(done.results)
    chain = parse_map(
        "(d0, d1) -> (((d0 mod 6) * 6 + d1) floordiv 4), domain: d0 in [0, 11], d1 in [0, 5]"
    )
    assert is_unfinished(chain.results)


def test_a_size_one_dimension_result_stays_through_the_linear_index() -> None:
    # XLA's kPreserve: a result that is a dimension of size 1 stays that dimension.
    from hloidx.maps.expr import dim, replace_vars
    from hloidx.maps.indexing_map import IndexingMap, Variable
    from hloidx.maps.interval import Interval

    rc = _reshape_chains()
    chained = rc.chain_map([[18, 4], [2, 6, 6], [18, 4], [12, 6]], simplified_steps=True)
    shift = {dim(0): dim(1), dim(1): dim(2)}
    m = IndexingMap(
        (dim(0), *(replace_vars(r, shift) for r in chained.results)),
        (Variable(Interval(0, 0)), *chained.dim_vars),
        constraints=tuple((replace_vars(e, shift), i) for e, i in chained.constraints),
    )
    got, rules = simplify_with_rules(m)
    assert format_map(got) == (
        "(d0, d1, d2) -> (d0, (d1 * 6 + d2) floordiv 4, (d1 * 6 + d2) mod 4), "
        "domain: d0 in [0, 0], d1 in [0, 11], d2 in [0, 5]"
    )
    assert "linear-index" in [r.name for r in rules]
    assert simplify(m) == got
    assert relation(got) == relation(m)
