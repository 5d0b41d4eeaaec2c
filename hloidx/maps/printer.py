"""Printing expressions and indexing maps in XLA's text format.

The rules follow what XLA prints (``indexing_map_serialization.cc``), so that a map printed
here can be pasted into XLA and back:

* ``+`` binds loosest; ``*``, ``floordiv``, ``ceildiv`` and ``mod`` bind tighter and any
  compound operand of theirs is parenthesised (``(d0 * 2) floordiv 3``);
* ``x * -1`` prints as ``-x`` (the operand parenthesised when compound); ``(-x) floordiv c``
  (how the builders keep a negative divisor) prints as XLA's ``x floordiv -c``, ceildiv alike;
* in a sum, ``+ x * -1`` prints as ``- x``, ``+ x * -k`` as ``- x * k`` and ``+ -k`` as ``- k``;
* ``min(a, b)`` / ``max(a, b)`` in function form;
* the map: ``(d0, d1)[s0]{rt0} -> (results), domain: d0 in [0, 9], ..., <constraints sorted>``
  (constraints sorted by their printed text, as XLA does; ``[]`` is omitted when there are
  runtime but no range variables; a map with no variables prints no domain);
* ``floordiv_spelling="/"`` prints floor division as newer XLA does; ``multiline=True``
  puts ``domain:`` and each domain entry on a line of its own (it parses back).

Checked by ``tests/test_map_syntax.py``: ``parse_map(format_map(m)) == m`` on random maps,
and the canonical one-line texts of XLA's test suites print back character for character
(except where the suite's text is not XLA's printed form). A custom variable name equal to
another variable's default name (dimension 0 named ``s0``) prints ambiguously, as in XLA.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .nodes import (
    Add,
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
    is_negated_division,
)


class PrintableMap(Protocol):
    """What the printer reads of an ``IndexingMap`` (the printer sits below the map module:
    ``IndexingMap.__str__`` prints through it)."""

    dim_vars: Any
    range_vars: Any
    rt_vars: Any
    results: Any
    constraints: Any
    is_undefined: bool
    is_known_empty: bool


_SPELLING = {Mul: " * ", CeilDiv: " ceildiv ", Mod: " mod "}


class _Names:
    """Variable names: custom names where a variable has one, else d<i>/s<i>/rt<i>."""

    __slots__ = ("by_kind",)

    def __init__(
        self, dims: Sequence[str] = (), ranges: Sequence[str] = (), rts: Sequence[str] = ()
    ) -> None:
        self.by_kind = (dims, ranges, rts)

    def __call__(self, var: Var) -> str:
        names = self.by_kind[var.kind]
        if var.index < len(names) and names[var.index]:
            return names[var.index]
        return f"{var.kind.prefix}{var.index}"


def format_expr(
    expr: Expr,
    dim_names: Sequence[str] = (),
    range_names: Sequence[str] = (),
    rt_names: Sequence[str] = (),
    floordiv_spelling: str = "floordiv",
) -> str:
    """One expression in XLA's syntax with minimal parentheses."""
    names = _Names(dim_names, range_names, rt_names)
    div = f" {floordiv_spelling} "
    out: list[str] = []
    emit = out.append

    def visit(node: Expr, strong: bool) -> None:
        t = type(node)
        if t is Var:
            emit(names(node))
            return
        if t is Const:
            emit(str(node.value))
            return
        if t is Add:
            if strong:
                emit("(")
            terms = node.terms
            visit(terms[0], False)
            for term in terms[1:]:
                if type(term) is Const and term.value < 0:
                    emit(f" - {-term.value}")
                elif type(term) is Mul and type(term.rhs) is Const and term.rhs.value < 0:
                    emit(" - ")
                    if term.rhs.value == -1:
                        visit(term.lhs, type(term.lhs) is Add)
                    else:
                        visit(term.lhs, True)
                        emit(f" * {-term.rhs.value}")
                else:
                    emit(" + ")
                    visit(term, False)
            if strong:
                emit(")")
            return
        if t is Min or t is Max:
            emit("min(" if t is Min else "max(")
            visit(node.lhs, False)
            emit(", ")
            visit(node.rhs, False)
            emit(")")
            return
        if t is Mul and type(node.rhs) is Const and node.rhs.value == -1 and type(node.lhs) is Var:
            # unary minus binds tighter than any operator (XLA prints `-d0 mod 2`)
            emit("-")
            visit(node.lhs, True)
            return
        if strong:
            emit("(")
        if t is Mul and type(node.rhs) is Const and node.rhs.value == -1:
            emit("-")
            visit(node.lhs, True)
        elif is_negated_division(node):
            # ``(-x) floordiv c`` as XLA keeps it: ``x floordiv -c`` (the same floor)
            visit(node.lhs.lhs, True)
            emit(div if t is FloorDiv else _SPELLING[t])
            emit(str(-node.rhs.value))
        else:
            visit(node.lhs, True)
            emit(div if t is FloorDiv else _SPELLING[t])
            visit(node.rhs, True)
        if strong:
            emit(")")

    visit(expr, False)
    return "".join(out)


def variable_names(indexing_map: PrintableMap) -> tuple[list[str], list[str], list[str]]:
    """The printed name of every dimension, range and runtime variable of a map."""
    return (
        [v.name or f"d{i}" for i, v in enumerate(indexing_map.dim_vars)],
        [v.name or f"s{i}" for i, v in enumerate(indexing_map.range_vars)],
        [v.name or f"rt{i}" for i, v in enumerate(indexing_map.rt_vars)],
    )


def format_map(
    indexing_map: PrintableMap,
    floordiv_spelling: str = "floordiv",
    multiline: bool = False,
) -> str:
    """The whole map in XLA's format (one line, or one domain entry per line)."""
    if indexing_map.is_undefined:
        return "UNDEFINED"
    if indexing_map.is_known_empty:
        return "KNOWN EMPTY"
    dims, ranges, rts = variable_names(indexing_map)

    def fmt(e: Expr) -> str:
        return format_expr(e, dims, ranges, rts, floordiv_spelling)

    head = f"({', '.join(dims)})"
    if ranges:
        head += f"[{', '.join(ranges)}]"
    if rts:
        head += "{" + ", ".join(rts) + "}"
    head += f" -> ({', '.join(fmt(e) for e in indexing_map.results)})"
    if not (dims or ranges or rts):
        return head
    domain = [f"{n} in {v.bounds}" for n, v in zip(dims, indexing_map.dim_vars, strict=True)]
    domain += [f"{n} in {v.bounds}" for n, v in zip(ranges, indexing_map.range_vars, strict=True)]
    domain += [f"{n} in {v.bounds}" for n, v in zip(rts, indexing_map.rt_vars, strict=True)]
    domain += sorted(f"{fmt(e)} in {b}" for e, b in indexing_map.constraints)
    if multiline:
        return head + ",\ndomain:\n" + ",\n".join(domain)
    return head + ", domain: " + ", ".join(domain)


__all__ = ["VarKind", "format_expr", "format_map", "variable_names"]
