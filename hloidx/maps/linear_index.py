"""Maps that are functions of one linear index: reshape chains through any radices.

A chain of reshapes reads its operand through the linear index ``L = Σ d_k * stride_k`` of
the output's dimensions (row-major strides over their sizes): each step cuts ``L`` into the
digits of its shape and puts them together again. When the radices of two steps do not
divide each other (a shape cut at 10, the next at 7), no single rewrite of the dimensions'
digits lines up, and the rule-by-rule simplifier and the digit pass (.digits) both stop at
forms like ``(d0 floordiv 6) * 9 + ((d0 mod 6) * 6 + d1) floordiv 4``.

Written over ``L`` alone, every step lines up: each dimension is a digit of ``L``
(``d_k = (L floordiv stride_k) mod size_k``, exactly, because ``d_k`` runs over
``[0, size_k - 1]``), and the digit pass composes the chain's digits of ``L`` symbolically
(``((L floordiv 10) mod 7) * 10 + L mod 10`` is ``L mod 70``). Each result then comes back as
a sum of digits of ``L``; putting ``L = Σ d_k * stride_k`` back and simplifying gives the
shortest form: ``d0, d1, d2`` for a round trip, ``L floordiv k, L mod k`` for a plain split.

Every step is an identity on the domain (a substitution of equals, the digit pass's exact
rewrites, a substitution back), so the result has the map's relation; the caller keeps it only
when it is shorter. :func:`through_linear_index` gives the map over the dimensions (not yet
simplified) or None when the map is outside this case (symbols, constraints, a dimension not
starting at 0, a constraint that can fail, results that are no digit sums of ``L``, numbers
too large).
"""

from __future__ import annotations

from collections.abc import Collection

from .digits import digits_over_index
from .expr import Add, BinaryExpr, Expr, FloorDiv, Mod, Var, add, dim, replace_vars
from .indexing_map import IndexingMap

#: Linear indices up to this size (every digit's value and coefficient stays far below 2^63).
_MAX_SIZE = 1 << 40


def is_unfinished(results: tuple[Expr, ...]) -> bool:
    """Whether some ``floordiv`` or ``mod`` divides a sum that holds a ``floordiv`` or ``mod``
    itself: the mark of a chain whose digits did not line up (a finished digit of a sum,
    ``((d0 * 6 + d1) floordiv 4) mod 3``, divides a quotient, not a sum of digits)."""
    seen: set[int] = set()
    stack = list(results)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        t = type(node)
        if t is Add:
            stack.extend(node.terms)  # type: ignore[attr-defined]
        elif isinstance(node, BinaryExpr):
            lhs = node.lhs
            if (t is FloorDiv or t is Mod) and type(lhs) is Add and _holds_division(lhs):
                return True
            stack.append(lhs)
            stack.append(node.rhs)
    return False


def _holds_division(node: Expr) -> bool:
    t = type(node)
    if t is FloorDiv or t is Mod:
        return True
    if t is Add:
        return any(_holds_division(x) for x in node.terms)  # type: ignore[attr-defined]
    if isinstance(node, BinaryExpr):
        return _holds_division(node.lhs) or _holds_division(node.rhs)
    return False


def through_linear_index(m: IndexingMap, keep: Collection[Var] = ()) -> IndexingMap | None:
    """``m`` rewritten through the row-major linear index of its dimensions (see the module
    doc), or None. Results in ``keep`` (dimensions of size 1 that stay variables) stay."""
    if m.range_vars or m.rt_vars or not m.dim_vars:
        return None
    sizes = []
    for v in m.dim_vars:
        b = v.bounds
        if b.lower != 0 or b.upper < 0:
            return None
        sizes.append(b.upper + 1)
    strides = [1] * len(sizes)
    for k in range(len(sizes) - 2, -1, -1):
        strides[k] = strides[k + 1] * sizes[k + 1]
    total = strides[0] * sizes[0]
    if total > _MAX_SIZE:
        return None
    # Each dimension read as its digit of L (set on the dimension nodes themselves: the
    # chain's tree is not rebuilt), results composed as digit sums of L, written over d0.
    composed = digits_over_index(m, strides, sizes)  # None unless every constraint holds
    if composed is None:
        return None
    linear = add(*(dim(k) * s for k, s in enumerate(strides) if sizes[k] > 1), 0)
    back = {dim(0): linear}
    results = tuple(
        [
            r if keep and r in keep else replace_vars(f, back)  # (most maps keep none)
            for r, f in zip(m.results, composed, strict=True)
        ]
    )
    return IndexingMap(results, m.dim_vars, (), (), ())


__all__ = ["is_unfinished", "through_linear_index"]
