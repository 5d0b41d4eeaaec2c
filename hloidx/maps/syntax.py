"""Parsing XLA's indexing-map text format into :class:`IndexingMap`.

A fast reader (:mod:`hloidx.maps.fast_map_parser`) reads the maps XLA prints; whatever it
declines goes to the grammar ``grammars/indexing_map.lark`` (LALR, in
:mod:`hloidx.maps.map_grammar`, the one module here that imports Lark). Both build our
expressions through the builders of :mod:`hloidx.maps.expr`, so a parsed map is the same
object a program would build. What the grammar cannot say is checked by both readers,
each failure a located :class:`MapSyntaxError` (or :class:`DomainError` for
a constant divisor that is not positive):

* every name in an expression is a declared variable; declared names are distinct;
* the domain bounds every variable, in declaration order, before any constraint;
* integer literals fit in int64;
* expressions are at most :data:`MAX_EXPR_DEPTH` levels deep (so no later recursive
  pass over them can exhaust Python's stack).

Decisions where XLA's text is ambiguous or XLA's own parser would refuse:

* a map written without a domain (XLA's C++ tests build those from code with explicit
  sizes) gives every variable the bounds ``default_bounds``, by default the full int64
  range [-9223372036854775808, 9223372036854775807]: nothing is assumed, and a
  simplifier stays sound on it;
* a variable bound with ``lo > hi`` is kept: the map is then KNOWN EMPTY, as in XLA;
* a constraint on a single variable tightens its bounds and a constant one is checked
  at once (XLA's ``AddConstraint`` does both);
* a variable named like a default name of its position (``d0`` first) gets the name
  ``""``; any other identifier (``th_x``, ``vector_elem``) is kept in ``Variable.name``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import HloidxError, MapSyntaxError
from ..source import Source
from .expr import Expr
from .expr_depth import MAX_EXPR_DEPTH, expression_depth, too_deep
from .fast_map_parser import fast_parse
from .indexing_map import IndexingMap
from .interval import Interval

if TYPE_CHECKING:
    from lark import Lark


# The MLIR attribute wrapper of emitter dumps: `#xla.indexing_map<"...">`, also `xla_gpu`.
_WRAPPER = re.compile(r'\A(\s*#xla(?:_gpu)?\.indexing_map<\s*"?)(.*?)("?\s*>\s*)\Z', re.S)


def _unwrap(text: str) -> str:
    """The text with an MLIR wrapper blanked out (same length, so offsets stay true)."""
    if "#" not in text:  # no wrapper: the usual case, without the regular expression
        return text
    match = _WRAPPER.match(text)
    if match is None:
        return text
    head, body, tail = match.groups()
    return " " * len(head) + body + " " * len(tail)


def parse_map(
    text: str,
    name: str = "<map>",
    *,
    default_bounds: Interval = Interval.FULL,
) -> IndexingMap:
    """Parse one indexing map in XLA's text format.

    Raises :class:`MapSyntaxError` (or :class:`DomainError` for a divisor that is not
    positive) located in ``text`` under ``name``. ``default_bounds`` bounds the variables
    of a map written without a domain.
    """
    fast = _fast_parse(_unwrap(text), default_bounds)
    if fast is not None:
        return fast
    source = Source(name, text)
    if not text.strip():
        raise MapSyntaxError(
            "expected an indexing map such as (d0) -> (d0), found nothing", source.span(0, 0)
        )
    from .map_grammar import parse_located

    return parse_located(text, _unwrap(text), source, default_bounds)


def build_grammar(strict: bool = False) -> Lark:
    """A fresh tree-building parser for the grammar (tests build it with ``strict=True``)."""
    from .map_grammar import build_grammar as _build

    return _build(strict)


def _parser() -> tuple[Lark, Any]:
    """The grammar's parser of this thread and its inline transformer (for tests)."""
    from .map_grammar import _parser as _grammar_parser

    return _grammar_parser()


def _fast_parse(text: str, default_bounds: Interval) -> IndexingMap | None:
    try:
        return fast_parse(text, default_bounds, MAX_EXPR_DEPTH)
    except HloidxError:
        return None  # the Lark path raises it again, located


def parse_expr(
    text: str,
    dim_names: Sequence[str] = (),
    range_names: Sequence[str] = (),
    rt_names: Sequence[str] = (),
    name: str = "<expr>",
) -> Expr:
    """One expression over the given variable names (defaults ``d<i>``, ``s<i>``, ``rt<i>``).

    With no names given, any ``d<i>``/``s<i>``/``rt<i>`` mentioned in ``text`` is accepted.
    """
    if not (dim_names or range_names or rt_names):
        dim_names, range_names, rt_names = _default_names(text)
    head = f"({', '.join(dim_names)})[{', '.join(range_names)}]{{{', '.join(rt_names)}}} -> ("
    parsed = parse_map(head + text + ")", name)
    if parsed.num_results != 1:
        raise MapSyntaxError("expected one expression", Source(name, text).span(0, len(text)))
    return parsed.results[0]


def _default_names(text: str) -> tuple[list[str], list[str], list[str]]:
    found = re.findall(r"\b(d|s|rt)([0-9]+)\b", text)
    top = {"d": -1, "s": -1, "rt": -1}
    for prefix, index in found:
        top[prefix] = max(top[prefix], int(index))
    return tuple([f"{p}{i}" for i in range(top[p] + 1)] for p in ("d", "s", "rt"))  # type: ignore[return-value]


__all__ = [
    "MAX_EXPR_DEPTH",
    "build_grammar",
    "expression_depth",
    "parse_expr",
    "parse_map",
    "too_deep",
]
