"""The Lark path of the map reader: ``grammars/indexing_map.lark`` (LALR) with one
Transformer, run inline while LALR reduces, that builds our expressions through the builders
of :mod:`hloidx.maps.expr`; and Lark's errors put in words.

:func:`hloidx.maps.syntax.parse_map` reads a map with the fast reader first and hands over
to this module only when the fast reader declines (an error to locate, a rare spelling), so
a command that reads well-formed maps never imports Lark.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from lark import Lark, Token, UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.visitors import Transformer, v_args

from ..errors import DomainError, HloidxError, MapSyntaxError
from ..grammar_files import grammar_text, lark_parser
from ..source import Source, Span
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
from .expr_depth import MAX_EXPR_DEPTH, expression_depth, too_deep
from .indexing_map import Constraint, IndexingMap, Variable
from .interval import INT64_MAX, INT64_MIN, Interval

_KIND_WORDS = ("dimension", "range variable", "runtime variable")


# ---------------------------------------------------------------------------
# The transformer: tokens and reductions into our objects
# ---------------------------------------------------------------------------


@v_args(inline=True)
class _MapBuilder(Transformer):
    """Builds expressions and the map while LALR reduces (one instance per thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.reset(Source("<map>", ""), Interval.FULL)

    def reset(self, source: Source, default_bounds: Interval) -> None:
        self.source = source
        self.default_bounds = default_bounds
        self.names: dict[str, Var] = {}
        self.declared: list[list[str]] = [[], [], []]

    # -- errors ----------------------------------------------------------------
    def _span(self, token: Token) -> Span:
        start = token.start_pos or 0
        return self.source.span(start, token.end_pos if token.end_pos is not None else start + 1)

    def _operand_span(self, op: Token) -> Span:
        """The span of the operand that follows operator token ``op`` (for divisor errors)."""
        text = self.source.text
        start = op.end_pos or 0
        while start < len(text) and text[start].isspace():
            start += 1
        match = re.compile(r"-?\s*[0-9]+|[A-Za-z_][A-Za-z0-9_]*").match(text, start)
        return self.source.span(start, match.end() if match else start + 1)

    def _name_before(self, keyword: Token) -> Span:
        """The identifier just before ``keyword`` (the entry's variable), else the keyword."""
        text = self.source.text
        end = keyword.start_pos or 0
        while end > 0 and text[end - 1].isspace():
            end -= 1
        start = end
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        if start == end:
            return self._span(keyword)
        return self.source.span(start, end)

    # -- variable declarations -------------------------------------------------
    def name_list(self, *names: Token) -> list[Token]:
        return list(names)

    def _declare(self, kind: VarKind, names: list[Token] | None) -> list[str]:
        out = []
        for index, token in enumerate(names or ()):
            name = str(token)
            if name in self.names:
                raise MapSyntaxError(f"variable '{name}' is declared twice", self._span(token))
            self.names[name] = Var(kind, index)
            self.declared[kind].append(name)
            out.append("" if name == f"{kind.prefix}{index}" else name)
        return out

    def dim_list(self, names: list[Token] | None = None) -> tuple[VarKind, list[str]]:
        return VarKind.DIM, self._declare(VarKind.DIM, names)

    def range_list(self, names: list[Token] | None = None) -> tuple[VarKind, list[str]]:
        return VarKind.RANGE, self._declare(VarKind.RANGE, names)

    def rt_list(self, names: list[Token] | None = None) -> tuple[VarKind, list[str]]:
        return VarKind.RUNTIME, self._declare(VarKind.RUNTIME, names)

    # -- expressions -------------------------------------------------------------
    def literal(self, token: Token) -> Const:
        value = int(token)
        if value > INT64_MAX:
            raise MapSyntaxError("integer literal does not fit in int64", self._span(token))
        return const(value)

    def variable(self, token: Token) -> Var:
        var = self.names.get(str(token))
        if var is None:
            declared = ", ".join(n for group in self.declared for n in group) or "none"
            raise MapSyntaxError(
                f"unknown variable '{token}' (declared: {declared})", self._span(token)
            )
        return var

    def add(self, lhs: Expr, rhs: Expr) -> Expr:
        return add(lhs, rhs)

    def sub(self, lhs: Expr, rhs: Expr) -> Expr:
        return sub(lhs, rhs)

    def mul(self, lhs: Expr, rhs: Expr) -> Expr:
        return mul(lhs, rhs)

    def neg(self, operand: Expr) -> Expr:
        return mul(operand, -1)

    def _divide(self, build: Callable[[Expr, Expr], Expr], lhs: Expr, op: Token, rhs: Expr) -> Expr:
        try:
            return build(lhs, rhs)
        except DomainError as error:
            raise error.with_span(self._operand_span(op)) from None

    def floordiv(self, lhs: Expr, op: Token, rhs: Expr) -> Expr:
        return self._divide(floordiv, lhs, op, rhs)

    def ceildiv(self, lhs: Expr, op: Token, rhs: Expr) -> Expr:
        return self._divide(ceildiv, lhs, op, rhs)

    def mod(self, lhs: Expr, op: Token, rhs: Expr) -> Expr:
        return self._divide(mod, lhs, op, rhs)

    def min(self, lhs: Expr, rhs: Expr) -> Expr:
        return min_(lhs, rhs)

    def max(self, lhs: Expr, rhs: Expr) -> Expr:
        return max_(lhs, rhs)

    # -- domain --------------------------------------------------------------------
    def _bound(self, token: Token, negative: bool) -> int:
        value = -int(token) if negative else int(token)
        if not INT64_MIN <= value <= INT64_MAX:
            raise MapSyntaxError("interval bound does not fit in int64", self._span(token))
        return value

    def nonnegative_int(self, token: Token) -> int:
        return self._bound(token, False)

    def negative_int(self, token: Token) -> int:
        return self._bound(token, True)

    def interval(self, _bracket: Token, lower: int, upper: int) -> Interval:
        return Interval(lower, upper)

    def entry(self, expr: Expr, keyword: Token, interval: Interval) -> tuple[Expr, Interval, Token]:
        return (expr, interval, keyword)

    def entries(self, *items: Any) -> list[tuple[Expr, Interval, Token]]:
        if len(items) == 1:
            return [items[0]]
        collected, last = items
        collected.append(last)
        return collected

    def simplified(self, _flag: Token) -> None:
        return None  # the older format's `is_simplified:` flag carries no meaning here

    def domain(self, keyword: Token, entries: list, *_simplified: Any) -> tuple[Token, list]:
        return (keyword, entries)

    def tail(self, item: Any) -> Any:
        return item

    def result_list(self, *results: Expr) -> tuple[Expr, ...]:
        return results

    # -- whole maps ------------------------------------------------------------------
    def undefined(self) -> IndexingMap:
        return IndexingMap.undefined()

    def known_empty(self) -> IndexingMap:
        return IndexingMap.known_empty()

    def empty_map(self) -> IndexingMap:
        return IndexingMap((), ())

    def indexing_map(self, *parts: Any) -> IndexingMap:
        groups: list[list[str]] = [[], [], []]
        position = 0
        while isinstance(parts[position], tuple) and isinstance(parts[position][0], VarKind):
            kind, names = parts[position]
            groups[kind] = names
            position += 1
        arrow: Token = parts[position]
        results: tuple[Expr, ...] = parts[position + 1]
        tail = parts[position + 2] if position + 2 < len(parts) else None
        for result in results:
            self._check_depth(result, arrow)
        counts = [len(g) for g in groups]
        if tail is None:
            variables = [
                [Variable(self.default_bounds, name) for name in group] for group in groups
            ]
            return IndexingMap(results, *map(tuple, variables))
        keyword, entries = tail
        return self._with_domain(results, groups, counts, keyword, entries)

    def _with_domain(
        self,
        results: tuple[Expr, ...],
        groups: list[list[str]],
        counts: list[int],
        keyword: Token,
        entries: list[tuple[Expr, Interval, Token]],
    ) -> IndexingMap:
        variables: list[list[Variable]] = [[], [], []]
        expected = [Var(kind, i) for kind in VarKind for i in range(counts[kind])]
        for position, want in enumerate(expected):
            name = self.declared[want.kind][want.index]
            if position >= len(entries):
                end = len(self.source.text.rstrip())
                raise MapSyntaxError(
                    f"the domain has no bound for {_KIND_WORDS[want.kind]} '{name}' "
                    f"(expected '{name} in [lo, hi]')",
                    self.source.span(end, end),
                )
            expr, interval, keyword_in = entries[position]
            if expr != want:
                raise MapSyntaxError(
                    f"expected the bound of {_KIND_WORDS[want.kind]} '{name}' here "
                    "(the domain bounds every variable in declaration order, then constraints)",
                    self._name_before(keyword_in),
                )
            variables[want.kind].append(Variable(interval, groups[want.kind][want.index]))
        constraints: list[Constraint] = []
        tightens = False
        for expr, interval, keyword_in in entries[len(expected) :]:
            self._check_depth(expr, keyword_in)
            tightens = tightens or type(expr) in (Var, Const)
            constraints.append((expr, interval))
        if tightens:
            plain = IndexingMap(results, *map(tuple, variables))
            return plain.add_constraints(constraints)
        return IndexingMap(results, *map(tuple, variables), tuple(constraints))

    def _check_depth(self, expr: Expr, anchor: Token) -> None:
        if too_deep(expr):
            depth = expression_depth(expr)
            raise MapSyntaxError(
                f"expression nested too deeply ({depth} levels, at most {MAX_EXPR_DEPTH})",
                self._span(anchor),
            )


# ---------------------------------------------------------------------------
# The parser, built once per thread (the inline transformer holds per-parse state)
# ---------------------------------------------------------------------------

_LOCAL = threading.local()


def _parser() -> tuple[Lark, _MapBuilder]:
    cached = getattr(_LOCAL, "parser", None)
    if cached is None:
        builder = _MapBuilder()
        lark = lark_parser(
            grammar_text("indexing_map.lark"),
            parser="lalr",
            # Positions come from tokens (they always carry them); propagating them to
            # rule results only costs time when the results are our objects, not trees.
            propagate_positions=False,
            transformer=builder,
            maybe_placeholders=False,
            lexer="basic",
        )
        cached = _LOCAL.parser = (lark, builder)
    return cached


def build_grammar(strict: bool = False) -> Lark:
    """A fresh tree-building parser for the grammar (tests build it with ``strict=True``)."""
    return lark_parser(
        grammar_text("indexing_map.lark"),
        parser="lalr",
        propagate_positions=True,
        lexer="basic",
        strict=strict,
    )


def parse_located(
    text: str, unwrapped: str, source: Source, default_bounds: Interval
) -> IndexingMap:
    """Parse ``unwrapped`` (``text`` with any MLIR wrapper blanked out) with the grammar;
    every error is a :class:`MapSyntaxError` located in ``source``."""
    lark, builder = _parser()
    builder.reset(source, default_bounds)
    try:
        result = lark.parse(unwrapped)
    except UnexpectedInput as error:
        raise _syntax_error(error, source) from None
    except HloidxError:
        raise
    except RecursionError:  # pragma: no cover - the depth check should make this unreachable
        raise MapSyntaxError("expression nested too deeply", source.span(0, 0)) from None
    finally:
        builder.reset(Source("<map>", ""), Interval.FULL)
    return result


# ---------------------------------------------------------------------------
# Lark's errors in words
# ---------------------------------------------------------------------------

_EXPRESSION_START = {"NAME", "INT", "LPAR", "MINUS", "MIN", "MAX"}
_WORDS = {
    "ARROW": "'->'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "COMMA": "','",
    "COLON": "':'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "FLOORDIV": "'floordiv'",
    "CEILDIV": "'ceildiv'",
    "MOD": "'mod'",
    "DOMAIN": "'domain'",
    "IN": "'in'",
    "INT": "an integer",
    "NAME": "a variable name",
    "BOOL": "true or false",
    "UNDEFINED": "'UNDEFINED'",
    "KNOWN": "'KNOWN'",
    "EMPTY": "'EMPTY'",
    "MIN": "'min'",
    "MAX": "'max'",
    "IS_SIMPLIFIED": "'is_simplified'",
    "$END": "the end of the map",
}
_OPERATORS = {"PLUS", "MINUS", "STAR", "FLOORDIV", "CEILDIV", "MOD"}


def _describe_expected(names: set[str]) -> str:
    names = {n for n in names if not n.startswith("__")}
    words: list[str] = []
    if "LPAR" in names and "UNDEFINED" in names:
        return "an indexing map such as (d0) -> (d0), UNDEFINED or KNOWN EMPTY"
    if names | {"MIN", "MAX"} >= _EXPRESSION_START and {"NAME", "INT"} <= names:
        words.append("an expression such as d0 + 1")
        names -= _EXPRESSION_START
    if names >= _OPERATORS:
        words.append("an operator (+, -, *, floordiv, ceildiv, mod)")
        names -= _OPERATORS
    words += sorted(_WORDS.get(n, n.lower()) for n in names)
    if not words:
        return "something else"
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _found(error: UnexpectedInput, text: str) -> str:
    if isinstance(error, UnexpectedToken):
        if error.token.type == "$END":
            return "the end of the input"
        return repr(str(error.token))
    pos = error.pos_in_stream or 0
    return repr(text[pos]) if pos < len(text) else "the end of the input"


def _syntax_error(error: UnexpectedInput, source: Source) -> MapSyntaxError:
    text = source.text
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            start = len(text.rstrip())
            span = source.span(start, start)
        else:
            start = token.start_pos or 0
            span = source.span(start, token.end_pos or start + 1)
        expected = set(error.accepts or error.expected)
    elif isinstance(error, UnexpectedCharacters):
        start = error.pos_in_stream or 0
        span = source.span(start, start + 1)
        expected = set(error.allowed or ())
    else:  # UnexpectedEOF (not raised by LALR, kept for safety)
        span = source.span(len(text), len(text))
        expected = set(getattr(error, "expected", ()) or ())
    found = _found(error, text)
    return MapSyntaxError(f"expected {_describe_expected(expected)}, found {found}", span)


__all__ = ["build_grammar", "parse_located"]
