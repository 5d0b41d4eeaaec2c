"""A fast path for reading well-formed maps: one compiled regular expression lexes, a small
recursive-descent reader follows ``grammars/indexing_map.lark`` rule for rule and builds the
map through the same builders as the Lark transformer (so the result is the same object).

It gives up (returns None) at the first thing it does not expect, and the caller then runs the
Lark parser, which accepts or rejects the text and words any error: the grammar stays the one
definition of the format, and this reader only makes the common case cheap (a Lark parse costs
about six times as much, mostly in its generic lexer and parser loop).
"""

from __future__ import annotations

import re

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

_TOKEN = re.compile(r"\s*(?:([0-9]+)|([A-Za-z_][A-Za-z0-9_]*)|(->)|([-+*/%(),\[\]{}:]))")
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


class _GiveUp(Exception):
    pass


def _tokens(text: str) -> list[tuple[str, str]] | None:
    out: list[tuple[str, str]] = []
    pos, end = 0, len(text.rstrip())
    match = _TOKEN.match
    while pos < end:
        m = match(text, pos)
        if m is None:
            return None
        number, word, arrow, punct = m.groups()
        if number is not None:
            out.append(("int", number))
        elif word is not None:
            out.append(("kw" if word in _KEYWORDS else "name", word))
        elif arrow is not None:
            out.append(("op", "->"))
        else:
            out.append(("op", punct))
        pos = m.end()
    out.append(("end", ""))
    return out


class _Reader:
    __slots__ = ("at", "names", "tokens")

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.at = 0
        self.names: dict[str, Var] = {}

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.at]

    def take(self, value: str | None = None, kind: str | None = None) -> str:
        k, v = self.tokens[self.at]
        if (value is not None and v != value) or (kind is not None and k != kind):
            raise _GiveUp
        self.at += 1
        return v

    def accept(self, value: str) -> bool:
        if self.tokens[self.at][1] == value and self.tokens[self.at][0] != "name":
            self.at += 1
            return True
        return False

    # -- declarations ---------------------------------------------------------------
    def declare(self, close: str, kind: VarKind) -> list[str]:
        names: list[str] = []
        if not self.accept(close):
            while True:
                name = self.take(kind="name")
                if name in self.names:
                    raise _GiveUp
                self.names[name] = Var(kind, len(names))
                names.append(name)
                if self.accept(close):
                    break
                self.take(",")
        return ["" if n == f"{kind.prefix}{i}" else n for i, n in enumerate(names)]

    # -- expressions (loosest first, as the grammar) ----------------------------------
    def expr(self) -> Expr:
        lhs = self.product()
        while True:
            k, v = self.tokens[self.at]
            if k == "op" and v == "+":
                self.at += 1
                lhs = add(lhs, self.product())
            elif k == "op" and v == "-":
                self.at += 1
                lhs = sub(lhs, self.product())
            else:
                return lhs

    def product(self) -> Expr:
        lhs = self.unary()
        while True:
            k, v = self.tokens[self.at]
            build = _PRODUCT.get(v) if k in ("op", "kw") else None
            if build is None:
                return lhs
            self.at += 1
            rhs = self.unary()
            if build is not mul and type(rhs) is Const and rhs.value <= 0:
                raise _GiveUp  # a divisor that is not positive: the Lark path words it
            lhs = build(lhs, rhs)

    def unary(self) -> Expr:
        if self.tokens[self.at] == ("op", "-"):
            self.at += 1
            return mul(self.unary(), -1)
        return self.atom()

    def atom(self) -> Expr:
        k, v = self.tokens[self.at]
        self.at += 1
        if k == "int":
            value = int(v)
            if value > INT64_MAX:
                raise _GiveUp
            return const(value)
        if k == "name":
            var = self.names.get(v)
            if var is None:
                raise _GiveUp
            return var
        if k == "op" and v == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if k == "kw" and v in ("min", "max"):
            self.take("(")
            a = self.expr()
            self.take(",")
            b = self.expr()
            self.take(")")
            return min_(a, b) if v == "min" else max_(a, b)
        raise _GiveUp

    def bound(self) -> int:
        negative = self.accept("-")
        value = int(self.take(kind="int"))
        value = -value if negative else value
        if not INT64_MIN <= value <= INT64_MAX:
            raise _GiveUp
        return value

    def simplified_flag(self) -> None:
        self.take("is_simplified")
        self.take(":")
        if self.take(kind="kw") not in ("true", "false"):
            raise _GiveUp


def fast_parse(text: str, default_bounds: Interval) -> IndexingMap | None:
    """The map, or None when anything is out of the ordinary (then the Lark parser decides)."""
    tokens = _tokens(text)
    if tokens is None or tokens[0] != ("op", "("):
        return None
    r = _Reader(tokens)
    try:
        r.take("(")
        groups = [r.declare(")", VarKind.DIM), [], []]
        if r.accept("["):
            groups[1] = r.declare("]", VarKind.RANGE)
        if r.accept("{"):
            groups[2] = r.declare("}", VarKind.RUNTIME)
        r.take("->")
        r.take("(")
        results: list[Expr] = []
        if not r.accept(")"):
            results.append(r.expr())
            while r.accept(","):
                results.append(r.expr())
            r.take(")")
        entries: list[tuple[Expr, Interval]] | None = None
        had_comma = r.accept(",")
        k, v = r.peek()
        if k == "kw" and v == "domain":
            r.at += 1
            r.take(":")
            entries = []
            while True:
                expr = r.expr()
                r.take("in")
                r.take("[")
                lower = r.bound()
                r.take(",")
                upper = r.bound()
                r.take("]")
                entries.append((expr, Interval(lower, upper)))
                k, v = r.peek()
                if k == "end":
                    break
                comma = r.accept(",")
                if r.peek() == ("kw", "is_simplified"):
                    r.simplified_flag()
                    break
                if r.peek()[0] == "end":
                    if comma:
                        raise _GiveUp
                    break
        elif k == "kw" and v == "is_simplified":
            r.simplified_flag()
        elif had_comma:
            raise _GiveUp
        if r.peek()[0] != "end":
            raise _GiveUp
    except (_GiveUp, IndexError, ValueError, ArithmeticError, RecursionError):
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
    from .syntax import MAX_EXPR_DEPTH, expression_depth

    if any(expression_depth(e) > MAX_EXPR_DEPTH for e in results):
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
        if expression_depth(expr) > MAX_EXPR_DEPTH:
            return None
        tightens = tightens or type(expr) in (Var, Const)
        constraints.append((expr, interval))
    if tightens:
        return IndexingMap(results, *map(tuple, variables)).add_constraints(constraints)
    return IndexingMap(results, *map(tuple, variables), tuple(constraints))
