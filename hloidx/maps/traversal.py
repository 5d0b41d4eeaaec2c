"""Walking, rebuilding and evaluating expression trees: children, substitution, the variables
used, affinity, floor-semantics evaluation on ints and NumPy columns, canonical summand order."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..caches import memo
from ..errors import DomainError
from .builders import add, ceildiv, floordiv, max_, min_, mod, mul
from .nodes import (
    Add,
    BinaryExpr,
    CeilDiv,
    Const,
    Expr,
    FloorDiv,
    Max,
    Min,
    Mod,
    Mul,
    Var,
    _set_order,
)

#: The builder for each binary node class (used by generic rebuilds).
BUILDERS: dict[type[BinaryExpr], Callable[[Expr, Expr], Expr]] = {
    Mul: mul,
    FloorDiv: floordiv,
    CeilDiv: ceildiv,
    Mod: mod,
    Min: min_,
    Max: max_,
}


def rebuild(node: Expr, children: Iterable[Expr]) -> Expr:
    """``node`` with its children replaced, through the builders (so folds apply)."""
    if type(node) is Add:
        return add(*children)
    lhs, rhs = children
    return BUILDERS[type(node)](lhs, rhs)  # type: ignore[index]


def children(node: Expr) -> tuple[Expr, ...]:
    if type(node) is Add:
        return node.terms
    if isinstance(node, BinaryExpr):
        return (node.lhs, node.rhs)
    return ()


def map_children(node: Expr, fn: Callable[[Expr], Expr]) -> Expr:
    """Apply ``fn`` to each child; return ``node`` itself when no child changed."""
    kids = children(node)
    if not kids:
        return node
    new = tuple(fn(k) for k in kids)
    if all(a is b for a, b in zip(new, kids, strict=True)):
        return node
    return rebuild(node, new)


def replace_vars(expr: Expr, replacements: Mapping[Var, Expr]) -> Expr:
    """Substitute variables; the same object comes back when nothing was replaced."""
    if not replacements:
        return expr
    memo: dict[Expr, Expr] = {}

    def visit(node: Expr) -> Expr:
        if type(node) is Var:
            return replacements.get(node, node)
        if type(node) is Const:
            return node
        done = memo.get(node)
        if done is None:
            done = map_children(node, visit)
            memo[node] = done
        return done

    return visit(expr)


@memo(65536)
def variables(expr: Expr) -> frozenset[Var]:
    """Every variable that occurs in ``expr``."""
    if type(expr) is Var:
        return frozenset((expr,))
    if type(expr) is Const:
        return frozenset()
    out: frozenset[Var] = frozenset()
    for child in children(expr):
        out = out | variables(child)
    return out


def is_affine(expr: Expr) -> bool:
    """A sum of constant multiples of variables plus a constant."""
    if type(expr) in (Const, Var):
        return True
    if type(expr) is Add:
        return all(is_affine(t) for t in expr.terms)
    if type(expr) is Mul:
        return type(expr.rhs) is Const and is_affine(expr.lhs)
    return False


def _minimum(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a if a <= b else b
    import numpy as np

    return np.minimum(a, b)


def _maximum(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a if a >= b else b
    import numpy as np

    return np.maximum(a, b)


def evaluate(expr: Expr, values: Mapping[Var, Any] | Callable[[Var], Any]) -> Any:
    """The value of ``expr`` (floor semantics) given a value for each variable.

    Values may be Python ints (exact) or NumPy int64 arrays (vectorised over many points;
    the caller guards against overflow). A zero divisor raises :class:`DomainError`.
    """
    lookup = values if callable(values) else values.__getitem__
    memo: dict[Expr, Any] = {}

    def ev(node: Expr) -> Any:
        t = type(node)
        if t is Const:
            return node.value
        if t is Var:
            return lookup(node)
        got = memo.get(node)
        if got is not None:
            return got
        if t is Add:
            total = 0
            for term in node.terms:
                total = total + ev(term)
            result = total
        else:
            a, b = ev(node.lhs), ev(node.rhs)
            if t is Mul:
                result = a * b
            elif t is Min:
                result = _minimum(a, b)
            elif t is Max:
                result = _maximum(a, b)
            else:
                if isinstance(b, int):
                    if b == 0:
                        raise DomainError(f"division by zero while evaluating {node}")
                else:
                    import numpy as np

                    if np.any(b == 0):
                        raise DomainError(f"division by zero while evaluating {node}")
                if t is FloorDiv:
                    result = a // b
                elif t is CeilDiv:
                    result = -((-a) // b)
                else:
                    result = a % b
        memo[node] = result
        return result

    try:
        return ev(expr)
    finally:
        # ``ev`` refers to itself, a cycle only the cyclic collector frees: without this, the
        # memo's arrays and the columns of every call would live until it runs
        memo.clear()
        lookup = None  # read by ev, which the cycle keeps


_OP_RANK = {Mul: 0, FloorDiv: 1, CeilDiv: 2, Mod: 3, Min: 4, Max: 5}


def sort_key(expr: Expr) -> tuple[Any, ...]:
    """A total order on expressions: variables by (kind, index), then compound terms.

    Every key is ``(rank, *payload)`` with a payload of one shape per rank (a sum's: its
    summands' keys, as many as it has), so any two keys compare without mixing ints and
    tuples. The payload is not nested in a tuple of its own (the order is the same): tuples
    compare by looking for the first unequal item at every level down to where two keys
    differ, so fewer levels make keys cheaper to compare, as well as to build.

    A node keeps its key (``order``, a function of the tree alone, as its hash is): the
    constraints of every map are sorted when it is built, and a key found on the node costs no
    look-up; a child's is read without a call when it is there (a leaf's always is).
    """
    key = expr.order
    if key is not None:
        return key
    t = type(expr)
    if t is Add:
        key = (3, *[x.order or sort_key(x) for x in expr.terms])  # type: ignore[attr-defined]
    else:
        lhs = expr.lhs  # type: ignore[attr-defined]
        rhs = expr.rhs  # type: ignore[attr-defined]
        left = lhs.order or sort_key(lhs)
        if t is Mul and type(rhs) is Const:
            key = (1, left, rhs.value)
        else:
            key = (2, _OP_RANK[t], left, rhs.order or sort_key(rhs))
    _set_order(expr, key)
    return key


def sort_summands(expr: Expr) -> Expr:
    """The same expression with every sum's summands in canonical order, recursively."""

    def visit(node: Expr) -> Expr:
        if type(node) in (Const, Var):
            return node
        node = map_children(node, visit)
        if type(node) is Add:
            ordered = tuple(sorted(node.terms, key=_summand_key))
            if ordered != node.terms:
                return Add(ordered)
        return node

    return visit(expr)


# XLA's order of expression kinds (`SymbolicExprType`): sums, products, mods, floor and ceiling
# divisions, max, min, then variables, then constants.
_XLA_RANK = {Add: 0, Mul: 1, Mod: 2, FloorDiv: 3, CeilDiv: 4, Max: 5, Min: 6, Var: 7, Const: 8}


@memo(65536)
def xla_order_key(expr: Expr) -> tuple[Any, ...]:
    """The order in which XLA sorts the summands of a canonical sum: by kind (above), then
    variables by number (dimensions, then range, then runtime variables), constants by value,
    and binary nodes by their left operand, then their right one; a sum is XLA's left-deep
    ``((a + b) + c)``. So ``bl_x * 128 + th_x``, ``s0 mod 3 + d0`` and
    ``(s0 mod 3) * 4 + s0 * 3 + d0`` keep the order XLA prints them in."""
    t = type(expr)
    if t is Var:
        return (7, (int(expr.kind), expr.index))
    if t is Const:
        return (8, expr.value)
    if t is Add:
        # XLA's left-deep ((a + b) + c), folded without building the partial sums.
        terms = expr.terms
        key = xla_order_key(terms[0])
        for term in terms[1:]:
            key = (0, (key, xla_order_key(term)))
        return key
    return (_XLA_RANK[t], (xla_order_key(expr.lhs), xla_order_key(expr.rhs)))


def _summand_key(term: Expr) -> tuple[Any, ...]:
    return xla_order_key(term)
