"""A fast path for reading well-formed maps: tokens are cut by spacing out punctuation and
splitting on white space, and a small recursive-descent reader follows
``grammars/indexing_map.lark`` rule for rule and builds the map through the same builders as
the Lark transformer (so the result is the same object).

It gives up (returns None) at the first thing it does not expect, and the caller then runs the
Lark parser, which accepts or rejects the text and words any error: the grammar stays the one
definition of the format, and this reader only makes the common case cheap (a Lark parse costs
about six times as much, mostly in its generic lexer and parser loop).
"""

from __future__ import annotations

from itertools import accumulate, repeat

from .expr import (
    Const,
    Expr,
    Var,
    VarKind,
    add,
    ceildiv,
    const,
    floordiv,
    max_,
    min_,
    mod,
    mul,
    sub,
)
from .indexing_map import Constraint, IndexingMap, Variable
from .interval import INT64_MAX, INT64_MIN, Interval

# Tokens are cut by spacing out the punctuation and splitting on white space: a few passes
# of str.replace and one str.split, each in C, cost a third of a regular-expression scan. Any
# other character stays glued to its neighbours, and the token it makes matches no rule.
_ARROW = "\x01"  # "->" while cutting, so that its "-" is not cut off; texts holding it give up
_PUNCTUATION = "(),[]{}:+-*/%"
_KEYWORDS = frozenset(
    (
        "domain",
        "in",
        "mod",
        "floordiv",
        "floorDiv",
        "ceildiv",
        "min",
        "max",
        "is_simplified",
        "true",
        "false",
    )
)
_PRODUCT = {
    "*": mul,
    "/": floordiv,
    "floordiv": floordiv,
    "floorDiv": floordiv,
    "ceildiv": ceildiv,
    "mod": mod,
    "%": mod,
}
_END = ""  # the token after the last one


class _GiveUp(Exception):
    pass


def _tokens(text: str) -> list[str] | None:
    if _ARROW in text:
        return None
    text = text.replace("->", f" {_ARROW} ")
    for mark in _PUNCTUATION:
        text = text.replace(mark, f" {mark} ")
    return text.split()


def _is_name(token: str) -> bool:
    return token.isidentifier() and token.isascii() and token not in _KEYWORDS


def _nesting(tokens: list[str]) -> list[int] | None:
    """How many parentheses are open after each token; None when the count does not end at 0.

    The ``(`` at ``i`` closes at the first later token where the count is one less.
    """
    nesting = list(accumulate(map(_PAREN_STEP.get, tokens, repeat(0))))
    # A count that dips below zero on the way needs no check of its own: every construct the
    # reader accepts is balanced, and a group's close is found where its own count ends.
    return None if nesting[-1] != 0 else nesting


_PAREN_STEP = {"(": 1, ")": -1}


class _Reader:
    __slots__ = ("at", "groups", "leaves", "nesting", "tokens")

    def __init__(self, tokens: list[str], nesting: list[int]) -> None:
        self.tokens = tokens
        self.nesting = nesting
        self.at = 0
        # Maps written out by composition repeat the same parenthesised subexpression many
        # times over (a reshape chain restates its linear index in every digit): each
        # distinct group is built once. The builders are pure, so a repeat is the same tree.
        self.groups: dict[tuple[str, ...], Expr] = {}
        # Variables by name and numbers by their digits: the leaves, read without a call.
        self.leaves: dict[str, Expr] = {}

    def peek(self) -> str:
        return self.tokens[self.at]

    def take(self, value: str) -> str:
        token = self.tokens[self.at]
        if token != value:
            raise _GiveUp
        self.at += 1
        return token

    def take_name(self) -> str:
        token = self.tokens[self.at]
        if not _is_name(token):
            raise _GiveUp
        self.at += 1
        return token

    def accept(self, value: str) -> bool:
        if self.tokens[self.at] == value:
            self.at += 1
            return True
        return False

    # -- declarations ---------------------------------------------------------------
    def declare(self, close: str, kind: VarKind) -> list[str]:
        names: list[str] = []
        if not self.accept(close):
            while True:
                name = self.take_name()
                if name in self.leaves:  # declared twice (numbers are never names)
                    raise _GiveUp
                self.leaves[name] = Var(kind, len(names))
                names.append(name)
                if self.accept(close):
                    break
                self.take(",")
        return ["" if n == f"{kind.prefix}{i}" else n for i, n in enumerate(names)]

    # -- expressions (loosest first, as the grammar) ----------------------------------
    def expr(self) -> Expr:
        lhs = self.product()
        tokens = self.tokens
        while True:
            token = tokens[self.at]
            if token == "+":
                self.at += 1
                lhs = add(lhs, self.product())
            elif token == "-":
                self.at += 1
                lhs = sub(lhs, self.product())
            else:
                return lhs

    def product(self) -> Expr:
        leaves = self.leaves
        tokens = self.tokens
        lhs = leaves.get(tokens[self.at])  # a variable or a number seen before: no call
        if lhs is None:
            lhs = self.operand()
        else:
            self.at += 1
        while True:
            build = _PRODUCT.get(tokens[self.at])
            if build is None:
                return lhs
            self.at += 1
            rhs = leaves.get(tokens[self.at])
            if rhs is None:
                rhs = self.operand()
            else:
                self.at += 1
            if build is not mul and type(rhs) is Const and rhs.value <= 0:
                raise _GiveUp  # a divisor that is not positive: the Lark path words it
            lhs = build(lhs, rhs)

    def operand(self) -> Expr:
        """A unary minus, a variable, a number, a parenthesised group or a min/max."""
        tokens = self.tokens
        at = self.at
        token = tokens[at]
        self.at = at + 1
        leaf = self.leaves.get(token)
        if leaf is not None:
            return leaf
        if token == "(":
            nesting = self.nesting
            close = nesting.index(nesting[at] - 1, at + 1)
            key = tuple(tokens[at + 1 : close])
            inner = self.groups.get(key)
            if inner is None:
                inner = self.expr()
                if self.at != close:
                    raise _GiveUp
                self.groups[key] = inner
            self.at = close + 1
            return inner
        if token == "-":
            return mul(self.operand(), -1)
        if token.isdigit():
            if not token.isascii():
                raise _GiveUp
            value = int(token)
            if value > INT64_MAX:
                raise _GiveUp
            leaf = self.leaves[token] = const(value)
            return leaf
        if token == "min" or token == "max":
            self.take("(")
            a = self.expr()
            self.take(",")
            b = self.expr()
            self.take(")")
            return min_(a, b) if token == "min" else max_(a, b)
        raise _GiveUp

    def interval(self) -> Interval:
        """``in [lower, upper]`` (every domain entry has one: read without further calls)."""
        tokens = self.tokens
        at = self.at
        if tokens[at] != "in" or tokens[at + 1] != "[":
            raise _GiveUp
        at += 2
        bounds = []
        for closer in (",", "]"):
            negative = tokens[at] == "-"
            if negative:
                at += 1
            digits = tokens[at]
            if not (digits.isdigit() and digits.isascii()) or tokens[at + 1] != closer:
                raise _GiveUp
            value = -int(digits) if negative else int(digits)
            if not INT64_MIN <= value <= INT64_MAX:
                raise _GiveUp
            bounds.append(value)
            at += 2
        self.at = at
        return Interval(bounds[0], bounds[1])

    def simplified_flag(self) -> None:
        self.take("is_simplified")
        self.take(":")
        if not (self.accept("true") or self.accept("false")):
            raise _GiveUp


def fast_parse(text: str, default_bounds: Interval) -> IndexingMap | None:
    """The map, or None when anything is out of the ordinary (then the Lark parser decides)."""
    tokens = _tokens(text)
    if not tokens or tokens[0] != "(":
        return None
    nesting = _nesting(tokens)
    if nesting is None:
        return None
    tokens.append(_END)
    r = _Reader(tokens, nesting)
    try:
        r.take("(")
        groups = [r.declare(")", VarKind.DIM), [], []]
        if r.accept("["):
            groups[1] = r.declare("]", VarKind.RANGE)
        if r.accept("{"):
            groups[2] = r.declare("}", VarKind.RUNTIME)
        r.take(_ARROW)
        r.take("(")
        results: list[Expr] = []
        if not r.accept(")"):
            results.append(r.expr())
            while r.accept(","):
                results.append(r.expr())
            r.take(")")
        entries: list[tuple[Expr, Interval]] | None = None
        had_comma = r.accept(",")
        token = r.peek()
        if token == "domain":
            r.at += 1
            r.take(":")
            entries = []
            while True:
                expr = r.expr()
                entries.append((expr, r.interval()))
                if r.peek() == _END:
                    break
                comma = r.accept(",")
                if r.peek() == "is_simplified":
                    r.simplified_flag()
                    break
                if r.peek() == _END:
                    if comma:
                        raise _GiveUp
                    break
        elif token == "is_simplified":
            r.simplified_flag()
        elif had_comma:
            raise _GiveUp
        if r.peek() != _END:
            raise _GiveUp
    except (_GiveUp, IndexError, KeyError, ValueError, ArithmeticError, RecursionError):
        return None  # RecursionError: nesting deeper than this reader goes; Lark reads it
    try:
        return _assemble(tuple(results), groups, entries, default_bounds)
    except (ValueError, ArithmeticError):
        return None


def _assemble(
    results: tuple[Expr, ...],
    groups: list[list[str]],
    entries: list[tuple[Expr, Interval]] | None,
    default_bounds: Interval,
) -> IndexingMap | None:
    from .syntax import too_deep

    depths: dict[int, int] = {}  # the results and constraints share subtrees
    if any(too_deep(e, depths) for e in results):
        return None
    if entries is None:
        variables = [[Variable(default_bounds, n) for n in group] for group in groups]
        return IndexingMap(results, *map(tuple, variables))
    expected = [Var(kind, i) for kind in VarKind for i in range(len(groups[kind]))]
    if len(entries) < len(expected):
        return None
    variables: list[list[Variable]] = [[], [], []]
    for want, (expr, interval) in zip(expected, entries, strict=False):
        if expr != want:
            return None
        variables[want.kind].append(Variable(interval, groups[want.kind][want.index]))
    constraints: list[Constraint] = []
    tightens = False
    for expr, interval in entries[len(expected) :]:
        if too_deep(expr, depths):
            return None
        tightens = tightens or type(expr) in (Var, Const)
        constraints.append((expr, interval))
    if tightens:
        return IndexingMap(results, *map(tuple, variables)).add_constraints(constraints)
    return IndexingMap(results, *map(tuple, variables), tuple(constraints))
