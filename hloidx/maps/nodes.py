"""Expression nodes: the classes of XLA's symbolic expressions, immutable and interned.

``Const``, ``Var`` (a dimension, range or runtime variable), ``Add`` (n-ary), ``Mul``,
``FloorDiv``, ``CeilDiv``, ``Mod``, ``Min``, ``Max``. Each node carries what is known when it
is built (its hash, its operation count, its depth) and two caches that the range evaluator
and the simplifier fill (see ``Expr``). Equal trees are usually the same object (see
.interning). Build nodes through the builders of .builders, which keep one tree per expression;
that module gives ``Expr`` its operators (which call them) and its text (.printer).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

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

    # ``operations``: binary operations in the tree (k summands: k - 1); ``depth``: its levels.
    # ``_range_memo``, ``_simplified_memo``: caches, ``(owner, value)`` for the one evaluator
    # or simplifier that last asked (see range_eval, simplify); None: the node itself.
    # ``order``: the node's sort key (traversal.sort_key), like the hash a function of the tree
    # alone: a leaf's is made with it, a compound node's when first asked (None until then).
    __slots__ = ("_hash", "_range_memo", "_simplified_memo", "depth", "operations", "order")

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

    # -- operator sugar: ``+ - * // %``, ``floordiv``, ``ceildiv``, ``mod``, ``min``, ``max``
    # and ``str()`` are given to Expr by .builders (the builders are their entry points).

    # -- queries -------------------------------------------------------------
    def is_const(self, value: int | None = None) -> bool:
        return False

    def intern_key(self) -> tuple | None:
        """The node's key in the intern table (None: interned by value, in this module)."""
        return None

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._key())

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
_set_depth = Expr.depth.__set__  # type: ignore[attr-defined]
_set_order = Expr.order.__set__  # type: ignore[attr-defined]


def _start(cls: type, key_hash: int, operations: int, depth: int = 1) -> Any:
    node = _new(cls)
    _set_hash(node, key_hash)
    _set_operations(node, operations)
    _set_depth(node, depth)
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
        _set_order(node, (9, value))
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
        _set_order(node, (0, int(kind), index))
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
        # From the summands' cached hashes (no Python-level __hash__ call per summand);
        # _start and remember inlined, as in BinaryExpr.
        operations = len(terms) - 1
        deepest = 0
        for t in terms:
            operations += t.operations
            if t.depth > deepest:
                deepest = t.depth
        node = _new(_OpenAdd)  # filled in, then sealed (see _OpenBinary)
        node._hash = hash((Add, *[t._hash for t in terms]))
        node.operations = operations
        node.depth = deepest + 1
        node._range_memo = _NO_MEMO
        node._simplified_memo = _NO_MEMO
        node.order = None
        node.terms = terms
        node.__class__ = Add
        if len(INTERNED) >= MAX_INTERNED:
            INTERNED.clear()
        INTERNED[key] = node
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

    #: Whether ``(-x) op c`` is written ``x op -c`` (floordiv, ceildiv): one operation fewer.
    _negative_divisor = False

    def __new__(cls, lhs: Expr, rhs: Expr) -> BinaryExpr:
        key = (cls, id(lhs), id(rhs))
        node = INTERNED.get(key)
        if node is not None:
            return node  # type: ignore[return-value]
        # The hottest constructor: _start and remember inlined, the node filled in as an
        # _OpenBinary and then sealed.
        node = _new(_OpenBinary)
        node._hash = hash((cls, lhs._hash, rhs._hash))
        operations = 1 + lhs.operations + rhs.operations
        if type(lhs) is Mul and cls._negative_divisor and _is_negation(lhs, rhs):
            operations -= 1  # ``(-x) floordiv c`` is written ``x floordiv -c`` (as XLA keeps it)
        node.operations = operations
        node.depth = 1 + (lhs.depth if lhs.depth > rhs.depth else rhs.depth)
        node._range_memo = _NO_MEMO
        node._simplified_memo = _NO_MEMO
        node.order = None
        node.lhs = lhs
        node.rhs = rhs
        node.__class__ = cls
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


# A new node is filled in as an instance of an open twin of its class, which assigns its slots
# as any object does, and then sealed by taking its own class (same slots, so Python allows the
# switch). Expr forbids assignment by overriding __setattr__, and so every slot assignment of
# a sealed class is a call of a slot wrapper (a tenth of a microsecond here, seven per node);
# an open twin's assignments are plain attribute stores, specialised by the interpreter.
class _OpenAdd(Add):
    __slots__ = ()
    __setattr__ = object.__setattr__  # both: they share one type slot
    __delattr__ = object.__delattr__


class _OpenBinary(BinaryExpr):
    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


_set_value = Const.value.__set__  # type: ignore[attr-defined]
_set_kind = Var.kind.__set__  # type: ignore[attr-defined]
_set_index = Var.index.__set__  # type: ignore[attr-defined]


class Mul(BinaryExpr):
    """A product; a constant factor is always ``rhs``."""

    __slots__ = ()


class FloorDiv(BinaryExpr):
    __slots__ = ()
    _negative_divisor = True


class CeilDiv(BinaryExpr):
    __slots__ = ()
    _negative_divisor = True


def _is_negation(lhs: Expr, divisor: Expr) -> bool:
    """Whether ``lhs`` is ``x * -1`` and ``divisor`` a constant: the builders keep a negative
    divisor as ``(-x) floordiv c``, which prints (and counts) as XLA's ``x floordiv -c``."""
    factor = lhs.rhs  # type: ignore[attr-defined]
    return type(factor) is Const and factor.value == -1 and type(divisor) is Const


def is_negated_division(node: Expr) -> bool:
    """``(-x) floordiv c`` or ``(-x) ceildiv c``: printed ``x floordiv -c`` / ``x ceildiv -c``."""
    t = type(node)
    return (
        (t is FloorDiv or t is CeilDiv)
        and type(node.lhs) is Mul  # type: ignore[attr-defined]
        and _is_negation(node.lhs, node.rhs)  # type: ignore[attr-defined]
    )


class Mod(BinaryExpr):
    __slots__ = ()


class Min(BinaryExpr):
    __slots__ = ()


class Max(BinaryExpr):
    __slots__ = ()
