"""The builders of expression nodes, with local folds (the nodes are in .nodes; .expr is the
expression API that re-exports both).

Nodes are built only through the builders of this module (``add``, ``mul``, ``floordiv``,
... and the operators on ``Expr``, which call them). Builders perform *sound local folds*
and nothing range-aware, so that one expression has one tree whichever way it was written:

* constants are folded (``3 + 4`` is ``7``; ``7 floordiv 2`` is ``3``);
* sums are flattened and like terms collected, keeping the order in which summands first
  appear, with the constant summand last: ``(d0 + 1) - 1`` is ``d0``;
* a constant multiplier sits on the right, merges with other constant multipliers and is
  distributed over sums: ``(d0 + 2) * 3`` is ``d0 * 3 + 6``;
* ``x * 1``, ``x * 0``, ``x floordiv 1``, ``x mod 1`` and ``min(x, x)`` fold.

Summand order is kept, so that a map XLA printed prints back identically; :func:`sort_summands`
gives the canonical form. A constant divisor of zero raises :class:`DomainError`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..errors import DomainError
from .nodes import (
    _CONST_CACHE,
    _VAR_CACHE,
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
    VarKind,
)
from .printer import format_expr

__all__ = [
    "ZERO",
    "add",
    "add_left",
    "as_expr",
    "ceildiv",
    "const",
    "dim",
    "floordiv",
    "max_",
    "min_",
    "mod",
    "mul",
    "range_var",
    "rt_var",
    "split_coefficient",
    "sub",
]


# ---------------------------------------------------------------------------
# Builders
# ---------------------------------------------------------------------------


# Nodes are made by calling ``__new__`` itself: a class call goes through ``type.__call__`` and
# looks ``__new__`` up again, which is half of what building a node that exists costs.
_node = BinaryExpr.__new__
_sum_node = partial(Add.__new__, Add)


def const(value: int) -> Const:
    node = _CONST_CACHE.get(value)
    if node is not None and type(value) is int:
        return node
    return Const(value)


ZERO = const(0)


def _var(kind: VarKind, index: int) -> Var:
    node = _VAR_CACHE[kind].get(index)
    return node if node is not None else Var(kind, index)


# (each kind's table bound once: dim() is called constantly, one call less each time)
_DIMS, _RANGE_VARS, _RT_VARS = (_VAR_CACHE[k] for k in VarKind)


def dim(index: int) -> Var:
    node = _DIMS.get(index)
    return node if node is not None else Var(VarKind.DIM, index)


def range_var(index: int) -> Var:
    node = _RANGE_VARS.get(index)
    return node if node is not None else Var(VarKind.RANGE, index)


def rt_var(index: int) -> Var:
    node = _RT_VARS.get(index)
    return node if node is not None else Var(VarKind.RUNTIME, index)


def as_expr(value: Expr | int) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        # numpy integers are accepted through int(); anything else is a programming error
        try:
            return const(int(value))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise TypeError(f"cannot make an expression of {value!r}") from None
    return const(value)


def split_coefficient(term: Expr) -> tuple[Expr, int]:
    """``x * c`` as ``(x, c)``; any other non-constant term as ``(term, 1)``."""
    if type(term) is Mul and type(term.rhs) is Const:
        return term.lhs, term.rhs.value
    return term, 1


def _scaled(monomial: Expr, coefficient: int) -> Expr:
    return monomial if coefficient == 1 else _node(Mul, monomial, const(coefficient))


def add(*operands: Expr | int) -> Expr:
    """The sum of ``operands``, flattened, like terms collected, constant last."""
    if len(operands) == 2:
        appended = _appended(*operands)
        if appended is not None:
            return appended
    # Hot: as_expr and split_coefficient inlined. A monomial maps to (coefficient, the summand
    # as written until a like term merges in): an unmerged ``x * c`` is reused, not rebuilt.
    coefficients: dict[Expr, tuple[int, Expr | None]] = {}
    constant = 0
    for operand in operands:
        t = type(operand)
        if t is Add:
            summands = operand.terms  # type: ignore[union-attr]
        elif t is Const:
            constant += operand.value  # type: ignore[union-attr]
            continue
        else:
            if not isinstance(operand, Expr):
                operand = as_expr(operand)
                if type(operand) is Const:
                    constant += operand.value
                    continue
            summands = (operand,)
        for term in summands:
            tt = type(term)
            if tt is Const:
                constant += term.value  # type: ignore[attr-defined]
                continue
            if tt is Mul and type(term.rhs) is Const:  # type: ignore[attr-defined]
                monomial, coefficient = term.lhs, term.rhs.value  # type: ignore[attr-defined]
            else:
                monomial, coefficient = term, 1
            seen = coefficients.get(monomial)
            coefficients[monomial] = (
                (coefficient, term) if seen is None else (seen[0] + coefficient, None)
            )
    terms = [
        w if w is not None and (c != 1 or w is m) else m if c == 1 else _node(Mul, m, const(c))
        for m, (c, w) in coefficients.items()
        if c != 0
    ]
    if constant != 0 or not terms:
        terms.append(const(constant))
    if len(terms) == 1:
        return terms[0]
    return _sum_node(tuple(terms))


def _plain_monomial(term: Any) -> Any:
    """The monomial of a summand that a sum takes as written (``x`` of ``x * c``, or the
    summand itself); None for a constant, a sum, a non-expression, or a coefficient of 0 or 1
    (which collecting like terms would rewrite)."""
    kind = type(term)
    if kind is Mul:
        if type(term.rhs) is Const:
            return None if term.rhs.value in (0, 1) else term.lhs
        return term
    if kind is Add or kind is Const or not isinstance(term, Expr):
        return None
    return term


def _unlike(monomial: Any, others: Any) -> bool:
    for other in others:
        if other is monomial or (other._hash == monomial._hash and other == monomial):
            return False
    return True


def _appended(lhs: Any, rhs: Any) -> Expr | None:
    """``lhs + rhs`` when ``rhs`` is one more summand, unlike every summand of ``lhs`` and no
    constant (a sum read left to right grows so): the summands as written, one ``Add``.
    None for anything else (the general collection in :func:`add` decides)."""
    monomial = _plain_monomial(rhs)
    if monomial is None:
        return None
    terms = lhs.terms if type(lhs) is Add else (lhs,)
    monomials = [_plain_monomial(t) for t in terms]
    if None in monomials or not _unlike(monomial, monomials):
        return None
    return _sum_node((*terms, rhs))


def add_left(summands: list[Expr]) -> Expr:
    """``add`` folded left over ``summands``, ``((a + b) + c) + ...``, as a reader of
    ``a + b + c`` builds it: one ``Add`` at once when every summand after the first is new
    (no like terms, no constants, as each step would then append), else step by step."""
    first = summands[0]
    if len(summands) == 1:
        return first
    terms = (*first.terms, *summands[1:]) if type(first) is Add else (first, *summands[1:])
    # _plain_monomial and _unlike inlined (the reader calls this for every sum it reads)
    seen: list[Any] = []
    for term in terms:
        kind = type(term)
        if kind is Mul:
            monomial = term.lhs  # type: ignore[attr-defined]
            factor = term.rhs  # type: ignore[attr-defined]
            if type(factor) is not Const:
                monomial = term
            elif factor.value == 0 or factor.value == 1:
                break
        elif kind is Add or kind is Const or not isinstance(term, Expr):
            break
        else:
            monomial = term
        key = monomial._hash
        for other in seen:
            if other is monomial or (other._hash == key and other == monomial):
                break
        else:
            seen.append(monomial)
            continue
        break
    else:
        return _sum_node(terms)
    total = first
    for summand in summands[1:]:
        total = add(total, summand)
    return total


def sub(lhs: Expr | int, rhs: Expr | int) -> Expr:
    return add(lhs, mul(rhs, -1))


def mul(lhs: Expr | int, rhs: Expr | int) -> Expr:
    """The product; constants fold, move right, merge and distribute over sums."""
    if (type(rhs) is int or type(rhs) is Const) and isinstance(lhs, Expr):
        # The usual call (an expression times a constant), with the steps below inlined.
        if type(rhs) is Const:
            rhs = rhs.value  # type: ignore[attr-defined]
        t = type(lhs)
        if t is Const:
            return const(lhs.value * rhs)  # type: ignore[attr-defined]
        if rhs == 0:
            return ZERO
        if rhs == 1:
            return lhs
        if t is Add:
            return add(*(mul(u, rhs) for u in lhs.terms))  # type: ignore[attr-defined]
        if t is Mul and type(lhs.rhs) is Const:  # type: ignore[attr-defined]
            rhs *= lhs.rhs.value  # type: ignore[attr-defined]
            lhs = lhs.lhs  # type: ignore[attr-defined]
            return lhs if rhs == 1 else _node(Mul, lhs, const(rhs))
        return _node(Mul, lhs, const(rhs))
    lhs, rhs = as_expr(lhs), as_expr(rhs)
    if type(lhs) is Const:
        lhs, rhs = rhs, lhs
    if type(rhs) is Const:
        c = rhs.value
        if type(lhs) is Const:
            return const(lhs.value * c)
        if c == 0:
            return ZERO
        if c == 1:
            return lhs
        if type(lhs) is Add:
            return add(*(mul(t, c) for t in lhs.terms))
        monomial, coefficient = split_coefficient(lhs)
        return _scaled(monomial, coefficient * c)
    # A product of two non-constants: pull constant factors outwards.
    lm, lc = split_coefficient(lhs)
    rm, rc = split_coefficient(rhs)
    if lc != 1 or rc != 1:
        return mul(_node(Mul, lm, rm), lc * rc)
    return _node(Mul, lhs, rhs)


def _checked_divisor(divisor: Expr, what: str) -> Expr:
    if type(divisor) is Const and divisor.value == 0:
        raise DomainError(f"{what} by 0: a constant divisor cannot be zero")
    return divisor


def _negated(x: Expr) -> Expr:
    return mul(x, -1)


# XLA's map language admits negative constant divisors (`s0 floordiv -3`). With floor
# semantics they reduce to positive ones, so every rule downstream sees a positive divisor:
#   x floordiv -c = (-x) floordiv c,   x ceildiv -c = (-x) ceildiv c,   x mod -c = -((-x) mod c)


def floordiv(lhs: Expr | int, rhs: Expr | int) -> Expr:
    # The usual calls (a positive divisor, int or constant), with the steps below inlined.
    t = type(rhs)
    if (t is int or t is Const) and isinstance(lhs, Expr):
        c = rhs if t is int else rhs.value  # type: ignore[attr-defined]
        if c > 0:
            if c == 1:
                return lhs
            if type(lhs) is Const:
                return const(lhs.value // c)  # type: ignore[attr-defined]
            return _node(FloorDiv, lhs, const(c) if t is int else rhs)  # type: ignore[arg-type]
    lhs, rhs = as_expr(lhs), _checked_divisor(as_expr(rhs), "floordiv")
    if type(rhs) is Const and rhs.value < 0:
        return floordiv(_negated(lhs), -rhs.value)
    if type(rhs) is Const:
        if rhs.value == 1:
            return lhs
        if type(lhs) is Const:
            return const(lhs.value // rhs.value)
    return _node(FloorDiv, lhs, rhs)


def ceildiv(lhs: Expr | int, rhs: Expr | int) -> Expr:
    # The usual calls (a positive divisor, int or constant), with the steps below inlined.
    t = type(rhs)
    if (t is int or t is Const) and isinstance(lhs, Expr):
        c = rhs if t is int else rhs.value  # type: ignore[attr-defined]
        if c > 0:
            if c == 1:
                return lhs
            if type(lhs) is Const:
                return const(-(-lhs.value // c))  # type: ignore[attr-defined]
            return _node(CeilDiv, lhs, const(c) if t is int else rhs)  # type: ignore[arg-type]
    lhs, rhs = as_expr(lhs), _checked_divisor(as_expr(rhs), "ceildiv")
    if type(rhs) is Const and rhs.value < 0:
        return ceildiv(_negated(lhs), -rhs.value)
    if type(rhs) is Const:
        if rhs.value == 1:
            return lhs
        if type(lhs) is Const:
            return const(-(-lhs.value // rhs.value))
    return _node(CeilDiv, lhs, rhs)


def mod(lhs: Expr | int, rhs: Expr | int) -> Expr:
    # The usual calls (a positive divisor, int or constant), with the steps below inlined.
    t = type(rhs)
    if (t is int or t is Const) and isinstance(lhs, Expr):
        c = rhs if t is int else rhs.value  # type: ignore[attr-defined]
        if c > 0:
            if c == 1:
                return ZERO
            if type(lhs) is Const:
                return const(lhs.value % c)  # type: ignore[attr-defined]
            return _node(Mod, lhs, const(c) if t is int else rhs)  # type: ignore[arg-type]
    lhs, rhs = as_expr(lhs), _checked_divisor(as_expr(rhs), "mod")
    if type(rhs) is Const and rhs.value < 0:
        return _negated(mod(_negated(lhs), -rhs.value))
    if type(rhs) is Const:
        if rhs.value == 1:
            return ZERO
        if type(lhs) is Const:
            return const(lhs.value % rhs.value)
    return _node(Mod, lhs, rhs)


def min_(lhs: Expr | int, rhs: Expr | int) -> Expr:
    return _extremum(Min, min, as_expr(lhs), as_expr(rhs))


def max_(lhs: Expr | int, rhs: Expr | int) -> Expr:
    return _extremum(Max, max, as_expr(lhs), as_expr(rhs))


def _extremum(node: type, pick: Any, lhs: Expr, rhs: Expr) -> Expr:
    if type(lhs) is Const and type(rhs) is Const:
        return const(pick(lhs.value, rhs.value))  # type: ignore[attr-defined]
    return lhs if lhs == rhs else _node(node, lhs, rhs)


# ---------------------------------------------------------------------------
# Operator sugar and text: attached to Expr here, where the builders are
# ---------------------------------------------------------------------------
# The node classes (.nodes) know nothing of the builders nor of the printer; the operators on
# Expr are the builders' entry points, so this module gives them to Expr. The package's
# __init__ loads this module, so they are there whichever maps module made a node.


def _radd(self: Expr, other: Expr | int) -> Expr:
    return add(other, self)


def _sub(self: Expr, other: Expr | int) -> Expr:
    return add(self, mul(other, -1))


def _rsub(self: Expr, other: Expr | int) -> Expr:
    return add(other, mul(self, -1))


def _neg(self: Expr) -> Expr:
    return mul(self, -1)


def _rmul(self: Expr, other: Expr | int) -> Expr:
    return mul(other, self)


def _str(self: Expr) -> str:
    return format_expr(self)


for _name, _method in (
    ("__add__", add),
    ("__radd__", _radd),
    ("__sub__", _sub),
    ("__rsub__", _rsub),
    ("__neg__", _neg),
    ("__mul__", mul),
    ("__rmul__", _rmul),
    ("__floordiv__", floordiv),
    ("__mod__", mod),
    ("floordiv", floordiv),
    ("ceildiv", ceildiv),
    ("mod", mod),
    ("min", min_),
    ("max", max_),
    ("__str__", _str),
):
    type.__setattr__(Expr, _name, _method)
del _name, _method
