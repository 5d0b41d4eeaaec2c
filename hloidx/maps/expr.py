"""Symbolic index expressions: immutable nodes, builders with local folds, evaluation.

The node kinds mirror XLA's symbolic expressions: ``Const``, ``Var`` (a dimension, range or
runtime variable), ``Add`` (n-ary), ``Mul``, ``FloorDiv``, ``CeilDiv``, ``Mod``, ``Min``, ``Max``.

Nodes are built only through the builders of this module (``add``, ``mul``, ``floordiv``,
... and the operators on ``Expr``, which call them). Builders perform *sound local folds*
and nothing range-aware, so that one expression has one tree whichever way it was written:

* constants are folded (``3 + 4`` is ``7``; ``7 floordiv 2`` is ``3``);
* sums are flattened and like terms collected, keeping the order in which summands first
  appear, with the constant summand last: ``(d0 + 1) - 1`` is ``d0``;
* a constant multiplier sits on the right, merges with other constant multipliers and is
  distributed over sums: ``(d0 + 2) * 3`` is ``d0 * 3 + 6``;
* ``x * 1``, ``x * 0``, ``x floordiv 1``, ``x mod 1`` and ``min(x, x)`` fold.

Summand order is preserved so that a map printed by XLA prints back identically after
parsing; :func:`sort_summands` gives the order-independent canonical form the simplifier
emits. A constant divisor must be positive: zero or negative raises :class:`DomainError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from ..caches import memo
from ..errors import DomainError


class VarKind(IntEnum):
    """What a variable indexes; also its printing prefix (``d``, ``s``, ``rt``)."""

    DIM = 0
    RANGE = 1
    RUNTIME = 2

    @property
    def prefix(self) -> str:
        return ("d", "s", "rt")[self]


class Expr:
    """Base of all expression nodes. Immutable, hashable (hash cached), never truthy."""

    __slots__ = ()

    # -- identity ---------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return False
        if self._hash != other._hash:  # type: ignore[attr-defined]
            return False
        return self._same_fields(other)  # type: ignore[arg-type]

    def _same_fields(self, other: Expr) -> bool:
        return self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __bool__(self) -> bool:
        raise TypeError("an expression has no truth value; compare with == or use is_const()")

    # -- operator sugar (all through the builders) ----------------------------
    def __add__(self, other: Expr | int) -> Expr:
        return add(self, other)

    def __radd__(self, other: Expr | int) -> Expr:
        return add(other, self)

    def __sub__(self, other: Expr | int) -> Expr:
        return add(self, mul(other, -1))

    def __rsub__(self, other: Expr | int) -> Expr:
        return add(other, mul(self, -1))

    def __neg__(self) -> Expr:
        return mul(self, -1)

    def __mul__(self, other: Expr | int) -> Expr:
        return mul(self, other)

    def __rmul__(self, other: Expr | int) -> Expr:
        return mul(other, self)

    def __floordiv__(self, other: Expr | int) -> Expr:
        return floordiv(self, other)

    def __mod__(self, other: Expr | int) -> Expr:
        return mod(self, other)

    def floordiv(self, other: Expr | int) -> Expr:
        return floordiv(self, other)

    def ceildiv(self, other: Expr | int) -> Expr:
        return ceildiv(self, other)

    def mod(self, other: Expr | int) -> Expr:
        return mod(self, other)

    def min(self, other: Expr | int) -> Expr:
        return min_(self, other)

    def max(self, other: Expr | int) -> Expr:
        return max_(self, other)

    # -- queries -------------------------------------------------------------
    def is_const(self, value: int | None = None) -> bool:
        return False

    def __str__(self) -> str:
        from .printer import format_expr

        return format_expr(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"


def _finish(node: Expr, key: tuple[Any, ...]) -> None:
    object.__setattr__(node, "_hash", hash((type(node).__name__, key)))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Const(Expr):
    value: int
    _hash: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        _finish(self, (self.value,))

    def _key(self) -> tuple[Any, ...]:
        return (self.value,)

    def is_const(self, value: int | None = None) -> bool:
        return value is None or self.value == value


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Var(Expr):
    """Variable ``index`` of kind ``kind``: ``d<i>``, ``s<i>`` (range) or ``rt<i>`` (runtime)."""

    kind: VarKind
    index: int
    _hash: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        _finish(self, (int(self.kind), self.index))

    def _key(self) -> tuple[Any, ...]:
        return (int(self.kind), self.index)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Add(Expr):
    """An n-ary sum (at least two summands, no nested ``Add``, constant summand last)."""

    terms: tuple[Expr, ...]
    _hash: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        # From the summands' cached hashes (no Python-level __hash__ call per summand).
        object.__setattr__(self, "_hash", hash(("Add", *(t._hash for t in self.terms))))

    def _key(self) -> tuple[Any, ...]:
        return self.terms

    def _same_fields(self, other: Expr) -> bool:
        return self.terms == other.terms  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BinaryExpr(Expr):
    lhs: Expr
    rhs: Expr
    _hash: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "_hash",
            hash((type(self).__name__, self.lhs._hash, self.rhs._hash)),  # type: ignore[attr-defined]
        )

    def _key(self) -> tuple[Any, ...]:
        return (self.lhs, self.rhs)

    def _same_fields(self, other: Expr) -> bool:
        # Hot (memo lookups of rebuilt nodes): no key tuples; identity first, as tuples do.
        a, b = self.lhs, other.lhs  # type: ignore[attr-defined]
        if a is not b and a != b:
            return False
        a, b = self.rhs, other.rhs  # type: ignore[attr-defined]
        return a is b or a == b


class Mul(BinaryExpr):
    """A product; a constant factor is always ``rhs``."""

    __slots__ = ()


class FloorDiv(BinaryExpr):
    __slots__ = ()


class CeilDiv(BinaryExpr):
    __slots__ = ()


class Mod(BinaryExpr):
    __slots__ = ()


class Min(BinaryExpr):
    __slots__ = ()


class Max(BinaryExpr):
    __slots__ = ()


# ---------------------------------------------------------------------------
# Builders
# ---------------------------------------------------------------------------

_CONST_CACHE: dict[int, Const] = {}


def const(value: int) -> Const:
    value = int(value)
    node = _CONST_CACHE.get(value)
    if node is None:
        node = Const(value)
        if -1024 <= value <= 1024:
            _CONST_CACHE[value] = node
    return node


ZERO = const(0)


_VAR_CACHE: tuple[dict[int, Var], dict[int, Var], dict[int, Var]] = ({}, {}, {})


def _var(kind: VarKind, index: int) -> Var:
    # One object per variable: building maps asks for the same few variables constantly,
    # and equal-by-identity keys make every dict lookup on them cheap.
    cache = _VAR_CACHE[kind]
    node = cache.get(index)
    if node is None:
        node = Var(kind, index)
        if type(index) is int and 0 <= index < 4096:
            cache[index] = node
    return node


def dim(index: int) -> Var:
    return _var(VarKind.DIM, index)


def range_var(index: int) -> Var:
    return _var(VarKind.RANGE, index)


def rt_var(index: int) -> Var:
    return _var(VarKind.RUNTIME, index)


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
    return monomial if coefficient == 1 else Mul(monomial, const(coefficient))


def add(*operands: Expr | int) -> Expr:
    """The sum of ``operands``, flattened, like terms collected, constant last."""
    # Hot in the simplifier: as_expr and split_coefficient are inlined.
    coefficients: dict[Expr, int] = {}
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
            coefficients[monomial] = coefficients.get(monomial, 0) + coefficient
    terms = [m if c == 1 else Mul(m, const(c)) for m, c in coefficients.items() if c != 0]
    if constant != 0 or not terms:
        terms.append(const(constant))
    if len(terms) == 1:
        return terms[0]
    return Add(tuple(terms))


def sub(lhs: Expr | int, rhs: Expr | int) -> Expr:
    return add(lhs, mul(rhs, -1))


def mul(lhs: Expr | int, rhs: Expr | int) -> Expr:
    """The product; constants fold, move right, merge and distribute over sums."""
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
        return mul(Mul(lm, rm), lc * rc)
    return Mul(lhs, rhs)


def _checked_divisor(divisor: Expr, what: str) -> Expr:
    if type(divisor) is Const and divisor.value <= 0:
        raise DomainError(f"{what} by {divisor.value}: a constant divisor must be positive")
    return divisor


def floordiv(lhs: Expr | int, rhs: Expr | int) -> Expr:
    lhs, rhs = as_expr(lhs), _checked_divisor(as_expr(rhs), "floordiv")
    if type(rhs) is Const:
        if rhs.value == 1:
            return lhs
        if type(lhs) is Const:
            return const(lhs.value // rhs.value)
    return FloorDiv(lhs, rhs)


def ceildiv(lhs: Expr | int, rhs: Expr | int) -> Expr:
    lhs, rhs = as_expr(lhs), _checked_divisor(as_expr(rhs), "ceildiv")
    if type(rhs) is Const:
        if rhs.value == 1:
            return lhs
        if type(lhs) is Const:
            return const(-(-lhs.value // rhs.value))
    return CeilDiv(lhs, rhs)


def mod(lhs: Expr | int, rhs: Expr | int) -> Expr:
    lhs, rhs = as_expr(lhs), _checked_divisor(as_expr(rhs), "mod")
    if type(rhs) is Const:
        if rhs.value == 1:
            return ZERO
        if type(lhs) is Const:
            return const(lhs.value % rhs.value)
    return Mod(lhs, rhs)


def min_(lhs: Expr | int, rhs: Expr | int) -> Expr:
    lhs, rhs = as_expr(lhs), as_expr(rhs)
    if type(lhs) is Const and type(rhs) is Const:
        return const(min(lhs.value, rhs.value))
    if lhs == rhs:
        return lhs
    return Min(lhs, rhs)


def max_(lhs: Expr | int, rhs: Expr | int) -> Expr:
    lhs, rhs = as_expr(lhs), as_expr(rhs)
    if type(lhs) is Const and type(rhs) is Const:
        return const(max(lhs.value, rhs.value))
    if lhs == rhs:
        return lhs
    return Max(lhs, rhs)


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


# ---------------------------------------------------------------------------
# Traversal, substitution, evaluation
# ---------------------------------------------------------------------------


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

    return ev(expr)


# ---------------------------------------------------------------------------
# Canonical order of summands
# ---------------------------------------------------------------------------

_OP_RANK = {Mul: 0, FloorDiv: 1, CeilDiv: 2, Mod: 3, Min: 4, Max: 5}


@memo(65536)
def sort_key(expr: Expr) -> tuple[Any, ...]:
    """A total order on expressions: variables by (kind, index), then compound terms.

    Every key is ``(rank, payload)`` with a payload of one shape per rank, so any two keys
    compare without mixing ints and tuples.
    """
    t = type(expr)
    if t is Var:
        return (0, (int(expr.kind), expr.index))
    if t is Const:
        return (9, (expr.value,))
    if t is Add:
        return (3, tuple(sort_key(x) for x in expr.terms))
    if t is Mul and type(expr.rhs) is Const:
        return (1, (sort_key(expr.lhs), expr.rhs.value))
    return (2, (_OP_RANK[t], sort_key(expr.lhs), sort_key(expr.rhs)))


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


def _summand_key(term: Expr) -> tuple[Any, ...]:
    monomial, _ = split_coefficient(term)
    if type(term) is Const:
        return (1,)
    return (0, sort_key(monomial))
