"""The equivalence checker: proved / exhaustive / sampled / refuted.

Every pair here is written by hand (or derived by a hypothesis strategy); whether it is
really equal is decided by an oracle that shares nothing with the checker: the relation of
each map enumerated by ``hloidx.maps.domain``, and counterexamples re-evaluated point by point.
"""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import indexing_maps

from hloidx.errors import DomainError
from hloidx.maps.domain import relation
from hloidx.maps.equivalence import Verdict, to_sympy, verify
from hloidx.maps.expr import (
    Add,
    Expr,
    Var,
    add,
    children,
    dim,
    evaluate,
    floordiv,
    range_var,
    rebuild,
    rt_var,
)
from hloidx.maps.indexing_map import IndexingMap, Variable
from hloidx.maps.interval import Interval
from hloidx.maps.syntax import parse_map

# ---------------------------------------------------------------------------
# Oracle helpers
# ---------------------------------------------------------------------------


def _var(name: str) -> Var:
    if name.startswith("rt"):
        return rt_var(int(name[2:]))
    if name.startswith("s"):
        return range_var(int(name[1:]))
    return dim(int(name[1:]))


def _value(expr: Expr, point: dict[Var, int]) -> int | None:
    try:
        return int(evaluate(expr, point))
    except DomainError:
        return None


def _results_at(m: IndexingMap, point: dict[Var, int]) -> list[int | None] | None:
    """The results of ``m`` at ``point``; None when the point is outside its domain."""
    for v, bounds in m.bounds().items():
        if not bounds.contains(point[v]):
            return None
    for expr, interval in m.constraints:
        value = _value(expr, point)
        if value is not None and not interval.contains(value):
            return None
    return [_value(r, point) for r in m.results]


def _pinned(variables: tuple[Variable, ...], values: list[int]) -> tuple[Variable, ...]:
    return tuple(
        Variable(v.bounds.intersect(Interval(x, x))) for v, x in zip(variables, values, strict=True)
    )


def _relation_at(m: IndexingMap, key: dict[str, int], with_runtime: bool) -> set[tuple[int, ...]]:
    """The result tuples of ``m`` at one dimension point (enumerated by ``hloidx.maps.domain``)."""
    dims = _pinned(m.dim_vars, [key[f"d{i}"] for i in range(m.num_dims)])
    rts = m.rt_vars
    if with_runtime:
        rts = _pinned(m.rt_vars, [key[f"rt{i}"] for i in range(m.num_rt_vars)])
    pinned = IndexingMap(m.results, dims, m.range_vars, rts, m.constraints)
    return {r for _, r in relation(pinned, with_runtime=with_runtime)}


def assert_real_counterexample(
    original: IndexingMap, simplified: IndexingMap, verdict: Verdict
) -> None:
    """The counterexample, re-checked independently, really separates the two maps."""
    assert verdict.kind == "refuted", verdict
    ce = verdict.counterexample
    assert ce is not None
    if "only_original" in ce:  # a relation counterexample at one dimension point
        same_rts = original.num_rt_vars == simplified.num_rt_vars
        a = _relation_at(original, ce["point"], same_rts)
        b = _relation_at(simplified, ce["point"], same_rts)
        assert a != b
        assert {tuple(t) for t in ce["only_original"]} <= a - b
        assert {tuple(t) for t in ce["only_simplified"]} <= b - a
        return
    a = _results_at(original, _full_point(original, ce["point"], ce.get("symbols_original", {})))
    b = _results_at(
        simplified, _full_point(simplified, ce["point"], ce.get("symbols_simplified", {}))
    )
    assert (a, b) == (ce["original"], ce["simplified"])
    assert a != b


def _full_point(m: IndexingMap, key: dict[str, int], symbols: dict[str, int]) -> dict[Var, int]:
    """A point of ``m``: the key, the symbols given, unused symbols at their lower bound."""
    point = {v: b.lower for v, b in m.bounds().items()}
    point.update({_var(n): x for n, x in {**key, **symbols}.items()})
    return point


def relations_equal(a: IndexingMap, b: IndexingMap) -> bool:
    same_rts = a.num_rt_vars == b.num_rt_vars
    return relation(a, with_runtime=same_rts) == relation(b, with_runtime=same_rts)


# ---------------------------------------------------------------------------
# The issue's examples: each simplification, written by hand, is proved
# ---------------------------------------------------------------------------

D3 = "domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
ISSUE_EXAMPLES = [
    (
        "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]",
    ),
    (
        "(d0, d1, d2) -> ((d0 * 100 + d1 * 10 + d2) floordiv 100, "
        f"((d0 * 100 + d1 * 10 + d2) mod 100) floordiv 10, d2 mod 10), {D3}",
        f"(d0, d1, d2) -> (d0, d1, d2), {D3}",
    ),
    (
        f"(d0, d1, d2) -> ((d0 * 16 + d1 * 4 + d2) floordiv 8, (d0 * 16 + d1 * 4 + d2) mod 8), "
        f"{D3}",
        f"(d0, d1, d2) -> (d0 * 2 + (d1 * 4 + d2) floordiv 8, (d1 * 4 + d2) mod 8), {D3}",
    ),
    (
        "(d0, d1) -> (-((d0 * -11 - d1 + 109) floordiv 11) + 9), domain: d0 in [0, 9], "
        "d1 in [0, 10]",
        "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 10]",
    ),
    (
        "(d0, d1) -> (-((d0 * -11 - d1 + 109) floordiv 11) + 9, "
        "d0 * 11 + d1 + ((d0 * -11 - d1 + 109) floordiv 11) * 11 - 99), "
        "domain: d0 in [0, 7], d1 in [0, 8]",
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 7], d1 in [0, 8]",
    ),
    (
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3], d0 + s0 in [0, 20]",
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3]",
    ),
    (
        "(d0, d1) -> ((d0 * 4096 + d1) floordiv 4096, (d0 * 4096 + d1) mod 4096), "
        "domain: d0 in [0, 999999], d1 in [0, 4095]",
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 999999], d1 in [0, 4095]",
    ),
]


@pytest.mark.parametrize(("original", "simplified"), ISSUE_EXAMPLES)
def test_verify_issue_examples_proved(original: str, simplified: str) -> None:
    a, b = parse_map(original), parse_map(simplified)
    if a.box_size() <= 10**5:  # the hand-written answer is right (oracle)
        assert relations_equal(a, b)
    verdict = verify(a, b)
    assert verdict.kind == "proved", verdict
    assert verdict.label == "proved"


# ---------------------------------------------------------------------------
# Wrong simplifications are refuted with a real counterexample
# ---------------------------------------------------------------------------

WRONG_PAIRS = [
    # the domain of d1 reaches 16, so d1 floordiv 16 is not always 0
    (
        "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 16]",
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 16]",
    ),
    # off by one in a mod
    (
        f"(d0, d1, d2) -> ((d0 * 16 + d1 * 4 + d2) mod 8), {D3}",
        f"(d0, d1, d2) -> ((d1 * 4 + d2) mod 8 + 1), {D3}",
    ),
    # results swapped
    (
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]",
        "(d0, d1) -> (d1, d0), domain: d0 in [0, 6], d1 in [0, 14]",
    ),
    # a constraint dropped that was not redundant
    (
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3], d0 + s0 in [0, 4]",
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3]",
    ),
    # a dimension's bound tightened too far (2*1 + 2 = 4 is feasible)
    (
        "(d0, d1) -> (d0), domain: d0 in [0, 10], d1 in [0, 3], d0 * 2 + d1 in [4, 7]",
        "(d0, d1) -> (d0), domain: d0 in [2, 3], d1 in [0, 3], d0 * 2 + d1 in [4, 7]",
    ),
    # a symbol removed that mattered
    (
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 3]",
        "(d0) -> (d0), domain: d0 in [0, 5]",
    ),
    # a symbol rescaled with the wrong range
    (
        "(d0)[s0] -> (d0 + s0 * 2), domain: d0 in [0, 5], s0 in [0, 7], s0 mod 2 in [0, 0]",
        "(d0)[s0] -> (d0 + s0 * 4), domain: d0 in [0, 5], s0 in [0, 4]",
    ),
    # a runtime variable (a dimension-like input) dropped
    (
        "(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 10], rt0 in [0, 3]",
        "(d0){rt0} -> (d0 + rt0 + 1), domain: d0 in [0, 10], rt0 in [0, 3]",
    ),
    # big domain, wrong at a whole stripe the samples reach
    (
        "(d0, d1) -> ((d0 * 4096 + d1) floordiv 4096), domain: d0 in [0, 999999], d1 in [0, 4096]",
        "(d0, d1) -> (d0), domain: d0 in [0, 999999], d1 in [0, 4096]",
    ),
    # min/max folded the wrong way
    (
        "(d0) -> (min(d0, 5)), domain: d0 in [0, 10]",
        "(d0) -> (d0), domain: d0 in [0, 10]",
    ),
]


@pytest.mark.parametrize(("original", "simplified"), WRONG_PAIRS)
def test_verify_wrong_pairs_refuted(original: str, simplified: str) -> None:
    a, b = parse_map(original), parse_map(simplified)
    verdict = verify(a, b)
    assert_real_counterexample(a, b, verdict)
    assert verdict.is_refuted
    assert verdict.label == "refuted"
    assert set(verdict.to_json()) == {"kind", "points", "counterexample"}


# ---------------------------------------------------------------------------
# Big domains never enumerate
# ---------------------------------------------------------------------------

BIG = "domain: d0 in [0, 999], d1 in [0, 999], d2 in [0, 999], d3 in [0, 999]"  # 10^12 points


@pytest.mark.parametrize(
    ("original", "simplified"),
    [
        (
            f"(d0, d1, d2, d3) -> (d0 + d1 + d2 + d3), {BIG}",
            f"(d0, d1, d2, d3) -> (d3 + d2 + d1 + d0), {BIG}",
        ),
        (
            f"(d0, d1, d2, d3) -> (d0 * d1 + d2), {BIG}",
            f"(d0, d1, d2, d3) -> (d1 * d0 + d2), {BIG}",
        ),
        # a non-linear identity the algebra does not cover: sampling is all that is left
        (
            f"(d0, d1, d2, d3) -> (max(d0 * d1, d2)), {BIG}",
            f"(d0, d1, d2, d3) -> (max(d2, d1 * d0)), {BIG}",
        ),
        (
            f"(d0, d1, d2, d3) -> ((d0 * d1) floordiv 4 + (d0 * d1) mod 4), {BIG}",
            f"(d0, d1, d2, d3) -> ((d0 * d1) mod 4 + (d0 * d1) floordiv 4), {BIG}",
        ),
        (
            f"(d0, d1, d2, d3) -> (min(d0, d1) + max(d0, d1)), {BIG}",
            f"(d0, d1, d2, d3) -> (d0 + d1), {BIG}",
        ),
    ],
)
def test_verify_large_domain_never_exhaustive(original: str, simplified: str) -> None:
    a, b = parse_map(original), parse_map(simplified)
    start = time.perf_counter()
    verdict = verify(a, b)
    assert time.perf_counter() - start < 1.0
    assert verdict.kind in ("proved", "sampled"), verdict


def test_verify_large_domain_sampled_when_unprovable() -> None:
    # x * x == x for x in {0, 1}: true, but not a polynomial identity
    a = parse_map(f"(d0, d1, d2, d3) -> (((d0 * d1) mod 2) * ((d0 * d1) mod 2) + d2), {BIG}")
    b = parse_map(f"(d0, d1, d2, d3) -> ((d0 * d1) mod 2 + d2), {BIG}")
    verdict = verify(a, b, samples=500)
    assert verdict.kind == "sampled"
    assert verdict.points is not None
    assert verdict.points >= 500
    assert verdict.label == f"sampled ({verdict.points} points)"


def test_verify_small_domain_is_exhaustive_with_point_count() -> None:
    a = parse_map("(d0, d1) -> ((d0 * d1) floordiv 3), domain: d0 in [0, 9], d1 in [0, 4]")
    b = parse_map("(d0, d1) -> ((d1 * d0) floordiv 3), domain: d0 in [0, 9], d1 in [0, 4]")
    verdict = verify(a, b)
    assert verdict.kind in ("proved", "exhaustive")
    c = parse_map(
        "(d0, d1) -> ((d0 * d1 + d0 * d1 * 3) floordiv 4), domain: d0 in [0, 9], d1 in [0, 4]"
    )
    d = parse_map("(d0, d1) -> (min(d0 * d1, 36)), domain: d0 in [0, 9], d1 in [0, 4]")
    verdict = verify(c, d)
    assert verdict.kind in ("proved", "exhaustive")
    verdict = verify(d, parse_map("(d0, d1) -> (d0 * d1), domain: d0 in [0, 9], d1 in [0, 4]"))
    assert verdict.kind == "proved"  # d0 * d1 <= 36 over the domain: the min never bites
    square = parse_map(
        "(d0, d1) -> (((d0 * d1) mod 2) * ((d0 * d1) mod 2)), domain: d0 in [0, 9], d1 in [0, 4]"
    )
    verdict = verify(
        square, parse_map("(d0, d1) -> ((d0 * d1) mod 2), domain: d0 in [0, 9], d1 in [0, 4]")
    )
    assert verdict == Verdict("exhaustive", points=50)
    assert verdict.label == "exhaustive (50 points)"


# ---------------------------------------------------------------------------
# Relations: the variables differ
# ---------------------------------------------------------------------------

RELATION_PAIRS = [
    # unused symbol removed
    (
        "(d0)[s0] -> (d0 * 2), domain: d0 in [0, 9], s0 in [0, 3]",
        "(d0) -> (d0 * 2), domain: d0 in [0, 9]",
    ),
    # symbols renumbered
    (
        "(d0)[s0, s1] -> (d0 + s1), domain: d0 in [0, 5], s0 in [1, 3], s1 in [0, 2]",
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 2]",
    ),
    # symbol rescaled: s0 = 2 * s0'
    (
        "(d0)[s0] -> (d0 + s0 * 2), domain: d0 in [0, 5], s0 in [0, 7], s0 mod 2 in [0, 0]",
        "(d0)[s0] -> (d0 + s0 * 4), domain: d0 in [0, 5], s0 in [0, 3]",
    ),
    # two symbols merged into one
    (
        "(d0)[s0, s1] -> (d0 * 100 + s0 * 10 + s1), domain: d0 in [0, 5], s0 in [0, 9], "
        "s1 in [0, 9]",
        "(d0)[s0] -> (d0 * 100 + s0), domain: d0 in [0, 5], s0 in [0, 99]",
    ),
    # symbols permuted (same count: pointwise differs, relation equal)
    (
        "(d0)[s0, s1] -> (d0 + s0 * 10 + s1), domain: d0 in [0, 5], s0 in [0, 3], s1 in [0, 9]",
        "(d0)[s0, s1] -> (d0 + s1 * 10 + s0), domain: d0 in [0, 5], s0 in [0, 9], s1 in [0, 3]",
    ),
    # a runtime variable becomes a symbol is NOT the same relation: see the wrong pairs;
    # but an unused one may go when the runtime variables differ anyway
    (
        "(d0)[s0]{rt0} -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 2], rt0 in [0, 100]",
        "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 2]",
    ),
]


@pytest.mark.parametrize(("original", "simplified"), RELATION_PAIRS)
def test_verify_relation_when_variables_differ(original: str, simplified: str) -> None:
    a, b = parse_map(original), parse_map(simplified)
    assert relations_equal(a, b)
    verdict = verify(a, b)
    assert verdict.kind in ("proved", "exhaustive"), verdict
    assert verify(b, a).kind in ("proved", "exhaustive")


def test_verify_relation_large_is_sampled() -> None:
    a = parse_map(
        "(d0)[s0, s1] -> (d0 + s0 + s1 * 100), domain: d0 in [0, 10000000], s0 in [0, 99], "
        "s1 in [0, 99]"
    )
    b = parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 10000000], s0 in [0, 9999]")
    assert verify(a, b).kind == "sampled"
    c = parse_map("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 10000000], s0 in [0, 9998]")
    assert_real_counterexample(a, c, verify(a, c))


# ---------------------------------------------------------------------------
# Special maps and robustness
# ---------------------------------------------------------------------------


def test_verify_undefined_and_empty_maps() -> None:
    undefined = IndexingMap.undefined()
    small = parse_map("(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 3]")
    assert verify(undefined, undefined).kind == "proved"
    assert verify(undefined, small).is_refuted
    assert verify(small, undefined).is_refuted
    empty = IndexingMap.known_empty(2, 1)
    empty_by_constraint = parse_map(
        "(d0, d1) -> (d0), domain: d0 in [0, 10], d1 in [0, 3], d0 * d1 in [100, 200]"
    )
    empty_by_search = parse_map(
        "(d0, d1) -> (d0), domain: d0 in [0, 10], d1 in [0, 3], (d0 * d0) mod 7 + d1 * 0 in [3, 3]"
    )
    assert verify(empty, IndexingMap.known_empty(1, 1)).kind == "proved"
    assert verify(empty, empty_by_constraint).kind == "proved"
    assert verify(empty_by_constraint, empty).kind == "proved"
    assert verify(empty, empty_by_search).kind in ("proved", "exhaustive")
    verdict = verify(empty, small)
    assert verdict.is_refuted
    point = {_var(n): x for n, x in verdict.counterexample["point"].items()}
    assert _results_at(small, point) == verdict.counterexample["simplified"]


def test_verify_different_shapes_refuted() -> None:
    a = parse_map("(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 3]")
    assert verify(a, parse_map("(d0) -> (d0), domain: d0 in [0, 3]")).is_refuted
    assert verify(
        a, parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 3]")
    ).is_refuted


@pytest.mark.parametrize(
    ("original", "simplified", "equal"),
    [
        # division by a variable that may be zero: undefined at the same points
        (
            "(d0, d1) -> (d0 floordiv d1), domain: d0 in [0, 10], d1 in [0, 3]",
            "(d0, d1) -> (d0 floordiv (d1 * 1)), domain: d0 in [0, 10], d1 in [0, 3]",
            True,
        ),
        (
            "(d0, d1) -> (d0 floordiv d1, d0 mod d1), domain: d0 in [0, 10], d1 in [-2, 3]",
            "(d0, d1) -> (d0 floordiv d1, d0 - (d0 floordiv d1) * d1), domain: d0 in [0, 10], "
            "d1 in [-2, 3]",
            True,
        ),
        (
            "(d0, d1) -> (d0 floordiv d1), domain: d0 in [0, 10], d1 in [0, 3]",
            "(d0, d1) -> (d0 floordiv d1), domain: d0 in [0, 10], d1 in [1, 3]",
            False,
        ),
        # values beyond int64: exact arithmetic, no wrap-around
        (
            "(d0, d1) -> (d0 * 4611686018427387904 + d1), domain: d0 in [0, 10], d1 in [0, 3]",
            "(d0, d1) -> (d1 + d0 * 4611686018427387904), domain: d0 in [0, 10], d1 in [0, 3]",
            True,
        ),
        (
            "(d0, d1) -> (d0 * d1 * 4611686018427387904), domain: d0 in [0, 10], d1 in [0, 3]",
            "(d0, d1) -> (d0 * d1 * 4611686018427387904 + (d0 * d1) floordiv 30), "
            "domain: d0 in [0, 10], d1 in [0, 3]",
            False,
        ),
        (
            "(d0) -> (d0 * 3), domain: d0 in [-9223372036854775808, 9223372036854775807]",
            "(d0) -> (d0 * 3 + (d0 floordiv 4611686018427387904) * 0), "
            "domain: d0 in [-9223372036854775808, 9223372036854775807]",
            True,
        ),
        (
            "(d0, d1) -> (d0 * d1 * d1), domain: d0 in [-9223372036854775808, "
            "9223372036854775807], d1 in [0, 3]",
            "(d0, d1) -> (d1 * d0 * d1 + d1 floordiv 3), domain: d0 in [-9223372036854775808, "
            "9223372036854775807], d1 in [0, 3]",
            False,
        ),
    ],
)
def test_verify_never_crashes(original: str, simplified: str, equal: bool) -> None:
    a, b = parse_map(original), parse_map(simplified)
    verdict = verify(a, b)
    if equal:
        assert verdict.kind in ("proved", "exhaustive", "sampled"), verdict
    else:
        assert_real_counterexample(a, b, verdict)


def test_verify_time_budget_returns_best_so_far() -> None:
    domain = "domain: d0 in [0, 999], d1 in [0, 899]"
    a = parse_map(f"(d0, d1) -> ((d0 * d1) floordiv 7 + (d0 * d1) mod 7), {domain}")
    b = parse_map(f"(d0, d1) -> ((d1 * d0) mod 7 + (d0 * d1) floordiv 7), {domain}")
    start = time.perf_counter()
    verdict = verify(a, b, timeout_s=0.02, seed=1)
    assert time.perf_counter() - start < 0.5
    assert verdict.kind in ("sampled", "skipped", "proved"), verdict
    assert verify(a, b, timeout_s=0.0, seed=2).kind in ("skipped", "proved")
    assert verify(a, b, seed=3).kind in ("proved", "exhaustive")


def test_verify_caches_by_pair() -> None:
    a = parse_map("(d0, d1) -> ((d0 * d1) mod 3), domain: d0 in [0, 9], d1 in [0, 9]")
    b = parse_map("(d0, d1) -> ((d1 * d0) mod 3), domain: d0 in [0, 9], d1 in [0, 9]")
    assert verify(a, b) is verify(a, b)
    assert verify(a, b) is verify(parse_map(str(a)), parse_map(str(b)))


def test_verdict_json_and_labels() -> None:
    assert Verdict("sampled", points=7).label == "sampled (7 points)"
    assert Verdict("skipped").label == "skipped"
    assert Verdict("proved").to_json() == {"kind": "proved", "points": None, "counterexample": None}
    assert not Verdict("exhaustive", points=3).is_refuted


def test_to_sympy_matches_exact_evaluation() -> None:
    m = parse_map(
        "(d0, d1) -> ((d0 * 7 - d1) floordiv 3 + (d0 - d1 * 5) mod 4 - max(d0, d1 ceildiv 2)), "
        "domain: d0 in [-5, 5], d1 in [-5, 5]"
    )
    (expr,) = m.results
    sym = to_sympy(expr)
    d0, d1 = to_sympy(dim(0)), to_sympy(dim(1))
    for x in range(-5, 6):
        for y in range(-5, 6):
            exact = evaluate(expr, {dim(0): x, dim(1): y})
            assert sym.subs({d0: x, d1: y}) == exact


# ---------------------------------------------------------------------------
# Properties on random maps
# ---------------------------------------------------------------------------


def permute_summands(expr: Expr, rng: random.Random) -> Expr:
    """The same expression with the summands of every sum shuffled."""
    kids = [permute_summands(k, rng) for k in children(expr)]
    if type(expr) is Add:
        rng.shuffle(kids)
        return add(*kids)
    return rebuild(expr, kids) if kids else expr


def perturb(expr: Expr, m: IndexingMap, threshold: int) -> Expr:
    """``expr + 1`` where ``d0 >= threshold``, unchanged elsewhere in ``d0``'s bounds."""
    bounds = m.dim_vars[0].bounds
    width = bounds.size()
    return add(expr, floordiv(add(dim(0), width - threshold), width))


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(indexing_maps(max_size=512), st.randoms(use_true_random=False))
def test_property_permuted_summands_are_equal(m: IndexingMap, rng: random.Random) -> None:
    permuted = IndexingMap(
        tuple(permute_summands(r, rng) for r in m.results),
        m.dim_vars,
        m.range_vars,
        m.rt_vars,
        tuple((permute_summands(e, rng), i) for e, i in m.constraints),
    )
    verdict = verify(m, permuted)
    assert verdict.kind in ("proved", "exhaustive"), verdict


@SETTINGS
@given(indexing_maps(max_size=512, min_dims=1), st.data())
def test_property_perturbed_map_is_refuted_when_feasible(
    m: IndexingMap, data: st.DataObject
) -> None:
    assume(m.num_results > 0)
    j = data.draw(st.integers(0, m.num_results - 1))
    bounds = m.dim_vars[0].bounds
    threshold = data.draw(st.integers(bounds.lower, bounds.upper))
    results = list(m.results)
    results[j] = perturb(results[j], m, threshold)
    perturbed = IndexingMap(tuple(results), m.dim_vars, m.range_vars, m.rt_vars, m.constraints)
    verdict = verify(m, perturbed)
    if relations_equal(m, perturbed):
        assert not verdict.is_refuted, verdict
    else:
        assert_real_counterexample(m, perturbed, verdict)
