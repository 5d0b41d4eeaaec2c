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

from enum import IntEnum
from typing import Any

from ..errors import DomainError
from .interning import INTERNED, MAX_INTERNED, remember


class VarKind(IntEnum):
    """What a variable indexes; also its printing prefix (``d``, ``s``, ``rt``)."""

    DIM = 0
    RANGE = 1
    RUNTIME = 2

    @property
    def prefix(self) -> str:
        return ("d", "s", "rt")[self]


class Expr:
    """Base of all expression nodes. Immutable, hashable (hash cached), never truthy, and
    interned (see .interning): equal trees are usually the same object."""

    # ``operations``: binary operations written in the tree (k summands are k - 1 additions).
    # ``_range_memo``, ``_simplified_memo``: caches, ``(owner, value)`` for the one evaluator
    # or simplifier that last asked (see range_eval, simplify); None: the node itself.
    __slots__ = ("_hash", "_range_memo", "_simplified_memo", "operations")

    # -- identity ---------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def __hash__(self) -> int:
        return self._hash

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

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"expression nodes are immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"expression nodes are immutable (cannot delete {name!r})")

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

    def intern_key(self) -> tuple | None:
        """The node's key in the intern table (None: interned by value, in ``expr``)."""
        return None

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._key())

    def __str__(self) -> str:
        from .printer import format_expr

        return format_expr(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"


#: What a node caches before anything asked (``(owner, value)`` with no owner).
_NO_MEMO = (None, None)

#: The owner of a cached value true in every domain (a constant's form and interval).
EVERY_DOMAIN = object()

# Slot descriptors' setters bypass ``Expr.__setattr__`` (immutable to everyone else).
_new = object.__new__
_set_hash = Expr._hash.__set__  # type: ignore[attr-defined]
_set_range_memo = Expr._range_memo.__set__  # type: ignore[attr-defined]
_set_simplified_memo = Expr._simplified_memo.__set__  # type: ignore[attr-defined]
_set_operations = Expr.operations.__set__  # type: ignore[attr-defined]


def _start(cls: type, key_hash: int, operations: int) -> Any:
    node = _new(cls)
    _set_hash(node, key_hash)
    _set_operations(node, operations)
    _set_range_memo(node, _NO_MEMO)
    _set_simplified_memo(node, _NO_MEMO)
    return node


#: Constants and variables in these ranges are interned for good (as they always were);
#: compound nodes are interned in .interning.
_CONST_CACHE: dict[int, Const] = {}
_VAR_CACHE: tuple[dict[int, Var], dict[int, Var], dict[int, Var]] = ({}, {}, {})


class Const(Expr):
    __slots__ = ("value",)

    def __new__(cls, value: int) -> Const:
        if type(value) is not int:
            value = int(value)
        node = _CONST_CACHE.get(value)
        if node is not None:
            return node
        small = -1024 <= value <= 1024
        if not small:  # larger ones are interned like compound nodes (the table is bounded)
            node = INTERNED.get((cls, value))
            if node is not None:
                return node  # type: ignore[return-value]
        node = _start(cls, hash(("Const", (value,))), 0)
        _set_value(node, value)
        _set_simplified_memo(node, (EVERY_DOMAIN, None))  # None: itself
        if small:
            _CONST_CACHE[value] = node
        else:
            remember((cls, value), node)
        return node

    def intern_key(self) -> tuple | None:
        value = self.value
        return None if -1024 <= value <= 1024 else (Const, value)

    def _key(self) -> tuple[Any, ...]:
        return (self.value,)

    def _same_fields(self, other: Expr) -> bool:
        return self.value == other.value  # type: ignore[attr-defined]

    def is_const(self, value: int | None = None) -> bool:
        return value is None or self.value == value


class Var(Expr):
    """Variable ``index`` of kind ``kind``: ``d<i>``, ``s<i>`` (range) or ``rt<i>`` (runtime)."""

    __slots__ = ("index", "kind")

    def __new__(cls, kind: VarKind, index: int) -> Var:
        # One object per variable: building maps asks for the same few variables constantly,
        # and equal-by-identity keys make every dict lookup on them cheap.
        cache = _VAR_CACHE[kind]
        node = cache.get(index)
        if node is not None:
            return node
        kind = VarKind(kind)
        node = _start(cls, hash(("Var", (int(kind), index))), 0)
        _set_kind(node, kind)
        _set_index(node, index)
        if type(index) is int and 0 <= index < 4096:
            cache[index] = node
        return node

    def _key(self) -> tuple[Any, ...]:
        return (int(self.kind), self.index)


class Add(Expr):
    """An n-ary sum (at least two summands, no nested ``Add``, constant summand last)."""

    __slots__ = ("terms",)

    def __new__(cls, terms: tuple[Expr, ...]) -> Add:
        if type(terms) is not tuple:
            terms = tuple(terms)
        key = (Add, *map(id, terms))
        node = INTERNED.get(key)
        if node is not None:
            return node  # type: ignore[return-value]
        # From the summands' cached hashes (no Python-level __hash__ call per summand).
        operations = len(terms) - 1
        for t in terms:
            operations += t.operations
        node = _start(cls, hash(("Add", *(t._hash for t in terms))), operations)
        _set_terms(node, terms)
        remember(key, node)
        return node

    def __reduce__(self) -> tuple[Any, ...]:
        return (Add, (self.terms,))

    def intern_key(self) -> tuple:
        return (Add, *map(id, self.terms))

    def _key(self) -> tuple[Any, ...]:
        return self.terms

    def _same_fields(self, other: Expr) -> bool:
        return self.terms == other.terms  # type: ignore[attr-defined]


class BinaryExpr(Expr):
    __slots__ = ("lhs", "rhs")

    def __new__(cls, lhs: Expr, rhs: Expr) -> BinaryExpr:
        key = (cls, id(lhs), id(rhs))
        node = INTERNED.get(key)
        if node is not None:
            return node  # type: ignore[return-value]
        # The hottest constructor: _start and remember inlined.
        node = _new(cls)
        _set_hash(node, hash((cls.__name__, lhs._hash, rhs._hash)))
        _set_operations(node, 1 + lhs.operations + rhs.operations)
        _set_range_memo(node, _NO_MEMO)
        _set_simplified_memo(node, _NO_MEMO)
        _set_lhs(node, lhs)
        _set_rhs(node, rhs)
        if len(INTERNED) >= MAX_INTERNED:
            INTERNED.clear()
        INTERNED[key] = node
        return node

    def intern_key(self) -> tuple:
        return (type(self), id(self.lhs), id(self.rhs))

    def _key(self) -> tuple[Any, ...]:
        return (self.lhs, self.rhs)

    def _same_fields(self, other: Expr) -> bool:
        # Hot (memo lookups of rebuilt nodes): no key tuples; identity first, as tuples do.
        a, b = self.lhs, other.lhs  # type: ignore[attr-defined]
        if a is not b and a != b:
            return False
        a, b = self.rhs, other.rhs  # type: ignore[attr-defined]
        return a is b or a == b


_set_value = Const.value.__set__  # type: ignore[attr-defined]
_set_kind = Var.kind.__set__  # type: ignore[attr-defined]
_set_index = Var.index.__set__  # type: ignore[attr-defined]
_set_terms = Add.terms.__set__  # type: ignore[attr-defined]
_set_lhs = BinaryExpr.lhs.__set__  # type: ignore[attr-defined]
_set_rhs = BinaryExpr.rhs.__set__  # type: ignore[attr-defined]


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


def const(value: int) -> Const:
    node = _CONST_CACHE.get(value)
    if node is not None and type(value) is int:
        return node
    return Const(value)


ZERO = const(0)


def _var(kind: VarKind, index: int) -> Var:
    node = _VAR_CACHE[kind].get(index)
    return node if node is not None else Var(kind, index)


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
            return lhs if rhs == 1 else Mul(lhs, const(rhs))
        return Mul(lhs, const(rhs))
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
            return FloorDiv(lhs, const(c) if t is int else rhs)  # type: ignore[arg-type]
    lhs, rhs = as_expr(lhs), _checked_divisor(as_expr(rhs), "floordiv")
    if type(rhs) is Const and rhs.value < 0:
        return floordiv(_negated(lhs), -rhs.value)
    if type(rhs) is Const:
        if rhs.value == 1:
            return lhs
        if type(lhs) is Const:
            return const(lhs.value // rhs.value)
    return FloorDiv(lhs, rhs)


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
            return CeilDiv(lhs, const(c) if t is int else rhs)  # type: ignore[arg-type]
    lhs, rhs = as_expr(lhs), _checked_divisor(as_expr(rhs), "ceildiv")
    if type(rhs) is Const and rhs.value < 0:
        return ceildiv(_negated(lhs), -rhs.value)
    if type(rhs) is Const:
        if rhs.value == 1:
            return lhs
        if type(lhs) is Const:
            return const(-(-lhs.value // rhs.value))
    return CeilDiv(lhs, rhs)


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
            return Mod(lhs, const(c) if t is int else rhs)  # type: ignore[arg-type]
    lhs, rhs = as_expr(lhs), _checked_divisor(as_expr(rhs), "mod")
    if type(rhs) is Const and rhs.value < 0:
        return _negated(mod(_negated(lhs), -rhs.value))
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


# ---------------------------------------------------------------------------
# Traversal, substitution, evaluation, canonical order of summands
# ---------------------------------------------------------------------------


# The tree walkers live in .traversal, which needs the node classes above; the ones it lends
# (``traversal.READ_THROUGH_EXPR``) are read through this module too, lazily, so that importing
# either module first works.
def __getattr__(name: str):
    from . import traversal

    if name in traversal.READ_THROUGH_EXPR:
        return getattr(traversal, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
