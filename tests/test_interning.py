"""Interned expression nodes and what they cache: one object per distinct node, structural
equality across clears of the table, immutability, and per-node intervals and simplified forms
that agree with fresh computations and with enumeration whichever domains asked before."""

from __future__ import annotations

import itertools
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hloidx.maps.expr import (
    Add,
    BinaryExpr,
    CeilDiv,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    Var,
    VarKind,
    children,
    const,
    dim,
    evaluate,
    floordiv,
    mod,
    range_var,
    sort_key,
)
from hloidx.maps.indexing_map import Variable
from hloidx.maps.interning import adopt, clear_interned
from hloidx.maps.interval import Interval
from hloidx.maps.range_eval import RangeEvaluator
from hloidx.maps.simplify import ExprSimplifier
from hloidx.maps.syntax import parse_map
from tests.strategies import expressions

d0, d1, s0 = dim(0), dim(1), range_var(0)


def _rebuild(node: Expr) -> Expr:
    """The same tree built again node by node through the classes (not the builders)."""
    if type(node) is Const:
        return Const(node.value)
    if type(node) is Var:
        return Var(node.kind, node.index)
    if type(node) is Add:
        return Add(tuple(_rebuild(t) for t in node.terms))
    assert isinstance(node, BinaryExpr)
    return type(node)(_rebuild(node.lhs), _rebuild(node.rhs))


def test_equal_trees_built_different_ways_are_one_object():
    by_builders = floordiv(d0 * 45 + d1, 45)
    by_operators = (d0 * 45 + d1).floordiv(45)
    by_classes = FloorDiv(Add((Mul(d0, Const(45)), d1)), Const(45))
    by_parser = parse_map(
        "(d0, d1) -> ((d0 * 45 + d1) floordiv 45), domain: d0 in [0, 1], d1 in [0, 44]"
    )
    assert by_builders is by_operators is by_classes is by_parser.results[0]
    assert Var(VarKind.DIM, 0) is d0
    assert Var(0, 0) is d0
    assert Const(7) is const(7)
    assert Const(True) is const(1)
    # beyond the constants kept for good, through the bounded table (a hypothesis draw found
    # `Const(1152)` rebuilt as a second object, and every tree above it unshared)
    assert Const(1152) is const(1152)
    assert FloorDiv(d0, Const(-5000)) is FloorDiv(d0, const(-5000))


@settings(max_examples=200, deadline=None)
@given(expressions(2, 1, 1, max_depth=3))
def test_a_rebuilt_tree_is_the_same_object(e):
    assert _rebuild(e) is e


@settings(max_examples=100, deadline=None)
@given(expressions(2, 1, 1, max_depth=3))
def test_a_twin_built_after_clearing_the_table_is_equal_not_shared(e):
    clear_interned()
    twin = _rebuild(e)
    assert twin == e
    assert hash(twin) == hash(e)
    # Built again now, it is the twin (the table holds it), still equal to the older one.
    assert _rebuild(e) is twin


def test_nodes_are_immutable():
    e = floordiv(d0 + d1, 3)
    for name, value in (("lhs", d0), ("rhs", const(4)), ("_hash", 0), ("operations", 0)):
        with pytest.raises(AttributeError):
            setattr(e, name, value)
    with pytest.raises(AttributeError):
        del e.lhs
    with pytest.raises(AttributeError):
        d0.index = 3


def test_nodes_variables_and_intervals_of_a_parsed_map_are_sealed():
    """New nodes, and the fast reader's variables and intervals, are filled in as open twins
    of their classes and then take their own class: none may stay open (assignable)."""
    m = parse_map(
        "(d0, th_x)[s0] -> ((d0 * 4 + s0) floordiv 3, (d0 * 4 + s0) mod 3 + th_x), "
        "domain: d0 in [0, 5], th_x in [0, 127], s0 in [2, 3], (d0 * 4 + s0) mod 3 in [0, 1]"
    )
    public = {Add, Mul, FloorDiv, CeilDiv, Mod, Const, Var}
    stack = [*m.results, *(e for e, _ in m.constraints)]
    while stack:
        node = stack.pop()
        assert type(node) in public
        with pytest.raises(AttributeError):
            node.depth = 0
        stack.extend(children(node))
    for variable in (*m.dim_vars, *m.range_vars):
        assert type(variable) is Variable
        assert type(variable.bounds) is Interval
        with pytest.raises(AttributeError):
            variable.name = "x"
        with pytest.raises(AttributeError):
            variable.bounds.lower = 1


def _fresh_sort_key(e: Expr) -> tuple:
    """The order sort_key documents, walked afresh (nothing read from the nodes)."""
    if type(e) is Var:
        return (0, int(e.kind), e.index)
    if type(e) is Const:
        return (9, e.value)
    if type(e) is Add:
        return (3, *map(_fresh_sort_key, e.terms))
    if type(e) is Mul and type(e.rhs) is Const:
        return (1, _fresh_sort_key(e.lhs), e.rhs.value)
    rank = ("Mul", "FloorDiv", "CeilDiv", "Mod", "Min", "Max").index(type(e).__name__)
    return (2, rank, _fresh_sort_key(e.lhs), _fresh_sort_key(e.rhs))


@settings(max_examples=100, deadline=None)
@given(st.lists(expressions(2, 1, 1, max_depth=3), min_size=1, max_size=4))
def test_sort_keys_kept_on_nodes_are_their_own(es):
    """A node keeps its sort key once asked: asked again, and after the table was cleared and
    the tree rebuilt (a new node), the key is the tree's own."""
    for e in es:
        assert sort_key(e) == _fresh_sort_key(e)
        assert sort_key(e) is sort_key(e)  # kept
    clear_interned()
    for e in es:
        twin = _rebuild(e)
        assert sort_key(twin) == _fresh_sort_key(e)


@settings(max_examples=100, deadline=None)
@given(expressions(2, 1, 1, max_depth=3))
def test_nodes_pickle_to_the_interned_object(e):
    assert pickle.loads(pickle.dumps(e)) is e


def _count_operations(node: Expr) -> int:
    kids = children(node)
    if not kids:
        return 0
    own = len(kids) - 1 if type(node) is Add else 1
    if type(node) in (FloorDiv, CeilDiv) and type(node.rhs) is Const:
        lhs = node.lhs
        if type(lhs) is Mul and type(lhs.rhs) is Const and lhs.rhs.value == -1:
            # (-x) floordiv c is written x floordiv -c: the negation costs nothing
            return own + _count_operations(lhs.lhs)
    return own + sum(_count_operations(k) for k in kids)


@settings(max_examples=200, deadline=None)
@given(expressions(2, 1, 1, max_depth=4))
def test_operations_counted_when_built_match_a_walk(e):
    assert e.operations == _count_operations(e)


# ---------------------------------------------------------------------------
# Intervals kept on nodes, against enumeration and fresh evaluators
# ---------------------------------------------------------------------------

VARS = (d0, d1, s0)


@st.composite
def _boxes(draw):
    return {
        v: Interval(lo, lo + draw(st.integers(0, 5)))
        for v, lo in zip(
            VARS, draw(st.lists(st.integers(-3, 4), min_size=3, max_size=3)), strict=True
        )
    }


def _values(e: Expr, box: dict[Var, Interval]) -> list[int]:
    out = []
    ranges = [range(box[v].lower, box[v].upper + 1) for v in VARS]
    for point in itertools.product(*ranges):
        try:
            out.append(evaluate(e, dict(zip(VARS, point, strict=True))))
        except Exception:  # a zero divisor: no value there
            continue
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(2, 1, 0, max_depth=3), st.lists(_boxes(), min_size=2, max_size=3))
def test_cached_intervals_match_fresh_ones_and_enumeration_across_domains(e, boxes):
    # Evaluators over different domains take turns on the same (interned) nodes: each answer
    # must be what a fresh evaluator says, and hold every enumerated value.
    evaluators = [RangeEvaluator(box) for box in boxes]
    subterms = _subterms(e)
    for _ in range(2):
        for evaluator, box in zip(evaluators, boxes, strict=True):
            for term in subterms:
                got = evaluator.range(term)
                assert got == RangeEvaluator(box).range(_rebuild_fresh(term)), str(term)
                values = _values(term, box)
                if values:
                    assert got.lower <= min(values), str(term)
                    assert max(values) <= got.upper, str(term)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions(2, 1, 0, max_depth=3), st.lists(_boxes(), min_size=2, max_size=3))
def test_cached_simplified_forms_match_fresh_simplifiers_across_domains(e, boxes):
    simplifiers = [ExprSimplifier(RangeEvaluator(box)) for box in boxes]
    for _ in range(2):
        for simplifier, box in zip(simplifiers, boxes, strict=True):
            got = simplifier.simplify(e)
            clear_interned()  # the fresh simplifier sees nodes that share nothing cached
            fresh = ExprSimplifier(RangeEvaluator(box)).simplify(_rebuild_fresh(e))
            assert got == fresh, (str(e), str(got), str(fresh))
            for point_values in itertools.islice(
                itertools.product(*[range(box[v].lower, box[v].upper + 1) for v in VARS]), 50
            ):
                point = dict(zip(VARS, point_values, strict=True))
                try:
                    expected = evaluate(e, point)
                except Exception:
                    continue
                assert evaluate(got, point) == expected, (str(e), str(got), point)


def _subterms(e: Expr) -> list[Expr]:
    seen: dict[int, Expr] = {}
    stack = [e]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen[id(node)] = node
            stack.extend(children(node))
    return list(seen.values())


def _rebuild_fresh(e: Expr) -> Expr:
    """A copy of ``e`` that shares no compound node with it (the table is cleared first)."""
    clear_interned()
    return _rebuild(e)


def test_mod_and_floordiv_nodes_from_rules_meet_the_given_ones():
    # A rule rebuilding `x floordiv c` finds the node of the map it simplifies (no copy).
    x = d0 * 45 + d1
    given = [floordiv(x, 15), mod(x, 15)]
    assert floordiv(x, 15) is given[0]
    assert Mod(x, const(15)) is given[1]


def test_an_adopted_node_is_what_rebuilding_it_gives():
    x = d0 * 45 + d1
    older = floordiv(x, 7)
    clear_interned()
    # `x` and `older` now predate the table; adopting them makes them the interned ones.
    for node in (x.terms[0], x, older):
        adopt(node)
    assert floordiv(d0 * 45 + d1, 7) is older
    adopt(const(3))  # constants and variables are interned by value: nothing to do
    adopt(d0)
