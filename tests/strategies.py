"""Hypothesis strategies for expressions and small indexing maps, shared by the test suites.

Everything is built through the builders of ``hloidx.maps.expr`` (so the trees are the ones the
library itself would build) and kept small: variable bounds are a handful of values and the
box of every map is capped by ``max_size``, so ``hloidx.maps.domain`` can enumerate any map drawn
here. Constant divisors are always positive; variable divisors are never drawn (a divisor
that can be zero makes evaluation undefined, which is a separate concern).

Typical use::

    from tests.strategies import expressions, indexing_maps

    @given(indexing_maps())
    def test_something(m): ...

    @given(expressions(num_dims=2, num_ranges=1, num_rts=0, max_depth=3))
    def test_expr(e): ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from hloidx.maps.expr import (
    Const,
    Expr,
    Var,
    add,
    ceildiv,
    const,
    dim,
    floordiv,
    max_,
    min_,
    mod,
    mul,
    range_var,
    rt_var,
    sub,
)
from hloidx.maps.indexing_map import IndexingMap, Variable
from hloidx.maps.interval import Interval

#: Operator names accepted by ``expressions(ops=...)``.
ALL_OPS: frozenset[str] = frozenset(
    {"add", "sub", "mul_const", "mul", "neg", "floordiv", "ceildiv", "mod", "min", "max"}
)
#: Only what keeps an expression affine (sums and constant multiples).
AFFINE_OPS: frozenset[str] = frozenset({"add", "sub", "mul_const", "neg"})

_BINARY: dict[str, Callable[[Expr, Expr], Expr]] = {
    "add": add,
    "sub": sub,
    "mul": mul,
    "min": min_,
    "max": max_,
}
_DIVISION: dict[str, Callable[[Expr, Expr | int], Expr]] = {
    "floordiv": floordiv,
    "ceildiv": ceildiv,
    "mod": mod,
}


def variables_of(num_dims: int, num_ranges: int = 0, num_rts: int = 0) -> list[Var]:
    """The variable nodes of a map with that many dimension, range and runtime variables."""
    return (
        [dim(i) for i in range(num_dims)]
        + [range_var(i) for i in range(num_ranges)]
        + [rt_var(i) for i in range(num_rts)]
    )


@st.composite
def expressions(
    draw: st.DrawFn,
    num_dims: int,
    num_ranges: int = 0,
    num_rts: int = 0,
    max_depth: int = 3,
    *,
    ops: frozenset[str] | set[str] = ALL_OPS,
    max_const: int = 8,
    max_divisor: int = 8,
) -> Expr:
    """An expression over ``d0..``, ``s0..``, ``rt0..`` of at most ``max_depth`` levels.

    Leaves are the given variables and constants in ``[-max_const, max_const]``; inner nodes
    are drawn from ``ops`` (``mul_const`` multiplies by a constant, ``mul`` by any drawn
    expression; divisions take a constant divisor in ``[1, max_divisor]``).
    """
    leaves = variables_of(num_dims, num_ranges, num_rts)
    op_names = sorted(ops)

    def leaf() -> Expr:
        if leaves and draw(st.integers(0, 3)) > 0:
            return draw(st.sampled_from(leaves))
        return const(draw(st.integers(-max_const, max_const)))

    def node(depth: int) -> Expr:
        if depth <= 0 or not op_names or draw(st.integers(0, 4)) == 0:
            return leaf()
        op = draw(st.sampled_from(op_names))
        lhs = node(depth - 1)
        if op == "neg":
            return mul(lhs, -1)
        if op == "mul_const":
            return mul(lhs, draw(st.integers(-max_const, max_const)))
        if op in _DIVISION:
            return _DIVISION[op](lhs, draw(st.integers(1, max_divisor)))
        return _BINARY[op](lhs, node(depth - 1))

    return node(max_depth)


def _bounds(draw: st.DrawFn, max_extent: int, allow_negative: bool) -> Interval:
    size = draw(st.integers(1, max_extent))
    lower = draw(st.integers(-3, 3)) if allow_negative and draw(st.booleans()) else 0
    return Interval(lower, lower + size - 1)


def _names(draw: st.DrawFn, count: int, prefix: str, custom: bool) -> list[str]:
    if not custom:
        return [""] * count
    pool = [f"{prefix}_{tag}" for tag in ("x", "y", "z", "elem", "id")]
    chosen = draw(st.lists(st.sampled_from(pool), min_size=count, max_size=count, unique=True))
    # Some variables keep their default name.
    return [name if draw(st.booleans()) else "" for name in chosen]


@st.composite
def indexing_maps(
    draw: st.DrawFn,
    max_dims: int = 3,
    max_ranges: int = 2,
    max_rts: int = 1,
    max_size: int = 4096,
    *,
    min_dims: int = 0,
    max_results: int = 3,
    max_depth: int = 3,
    max_constraints: int = 2,
    ops: frozenset[str] | set[str] = ALL_OPS,
    with_names: bool = False,
    allow_negative_bounds: bool = True,
) -> IndexingMap:
    """A small NORMAL-state map whose whole variable box has at most ``max_size`` points.

    Bounds are small intervals (sometimes starting below zero when ``allow_negative_bounds``);
    constraints, when drawn, are compound expressions ``expr in [lo, hi]`` with ``lo <= hi``
    (so the map is never known-empty by construction, though its domain may still have no
    point). ``with_names`` gives some variables custom names (``d_x``, ``s_elem``, ...).
    """
    num_dims = draw(st.integers(min_dims, max_dims))
    num_ranges = draw(st.integers(0, max_ranges))
    num_rts = draw(st.integers(0, max_rts))
    count = num_dims + num_ranges + num_rts
    # Share the size budget so the product of extents stays within max_size.
    per_var = max(1, int(max_size ** (1 / count))) if count else 1
    per_var = min(per_var, 12)
    bounds = [_bounds(draw, per_var, allow_negative_bounds) for _ in range(count)]
    names = (
        _names(draw, num_dims, "d", with_names)
        + _names(draw, num_ranges, "s", with_names)
        + _names(draw, num_rts, "rt", with_names)
    )
    variables = [Variable(b, n) for b, n in zip(bounds, names, strict=True)]

    def expr() -> st.SearchStrategy[Expr]:
        return expressions(num_dims, num_ranges, num_rts, max_depth, ops=ops)

    results = draw(st.lists(expr(), min_size=0, max_size=max_results))
    constraints = []
    seen: set[Expr] = set()
    for e in draw(st.lists(expr(), min_size=0, max_size=max_constraints)):
        if isinstance(e, Var | Const) or e in seen:
            # single-variable constraints are bounds, constants are trivial, and two
            # constraints on one expression would be intersected (possibly to empty)
            continue
        seen.add(e)
        lower = draw(st.integers(-8, 8))
        constraints.append((e, Interval(lower, lower + draw(st.integers(0, 8)))))
    return IndexingMap(
        tuple(results),
        tuple(variables[:num_dims]),
        tuple(variables[num_dims : num_dims + num_ranges]),
        tuple(variables[num_dims + num_ranges :]),
        tuple(constraints),
    )


def shapes(max_rank: int = 3, max_extent: int = 6) -> st.SearchStrategy[Sequence[int]]:
    """A small array shape (rank 0..max_rank, every extent at least 1)."""
    return st.lists(st.integers(1, max_extent), min_size=0, max_size=max_rank).map(tuple)


def factorizations(total: int) -> st.SearchStrategy[list[int]]:
    """Random ordered factorizations of ``total``, with size-1 dimensions sprinkled in."""

    def split(n: int, draw_divisors: list[int]) -> list[int]:
        out = []
        for d in draw_divisors:
            if n % d == 0 and d > 1:
                out.append(d)
                n //= d
        if n > 1 or not out:
            out.append(n)
        return out

    return st.tuples(
        st.lists(st.sampled_from([1, 2, 3, 4, 5, 6, 8]), max_size=4),
        st.randoms(use_true_random=False),
    ).map(lambda pair: _shuffled_with_ones(split(total, pair[0]), pair[1]))


def _shuffled_with_ones(dims: list[int], rnd) -> list[int]:
    rnd.shuffle(dims)
    if rnd.random() < 0.3:
        dims.insert(rnd.randrange(len(dims) + 1), 1)
    return dims


__all__ = [
    "AFFINE_OPS",
    "ALL_OPS",
    "expressions",
    "factorizations",
    "indexing_maps",
    "shapes",
    "variables_of",
]
