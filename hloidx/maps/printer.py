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

#: Subtrees with at least this many operations have their text kept while one map is printed:
#: composed maps restate the same subtree hundreds of times (a reshape chain's linear index in
#: every digit), and each is then written once; smaller ones cost less to write again.
_KEPT_FROM = 4

_PREFIXES = ("d", "s", "rt")


class _ExprPrinter:
    """Writes the expressions of one map: its names looked up once, and the text of every
    large subtree kept (by identity; the map holds its nodes, so ids stay theirs)."""

    __slots__ = ("div", "kept", "names")

    def __init__(self, names: tuple[Sequence[str], ...], floordiv_spelling: str) -> None:
        self.names = names
        self.div = f" {floordiv_spelling} "
        self.kept: dict[int, str] = {}

    def name(self, var: Var) -> str:
        names = self.names[var.kind]
        index = var.index
        if index < len(names) and names[index]:
            return names[index]
        return f"{_PREFIXES[var.kind]}{index}"

    def strong(self, node: Expr) -> str:
        """The text as an operand of ``*``, ``floordiv``, ``ceildiv``, ``mod`` (parenthesised
        when compound)."""
        t = type(node)
        if t is Var:
            return self.name(node)  # type: ignore[arg-type]
        if t is Const:
            return str(node.value)  # type: ignore[attr-defined]
        if t is Min or t is Max:
            return self.text(node)
        if t is Mul and type(node.lhs) is Var:  # type: ignore[attr-defined]
            rhs = node.rhs  # type: ignore[attr-defined]
            if type(rhs) is Const and rhs.value == -1:
                # unary minus binds tighter than any operator (XLA prints `-d0 mod 2`)
                return "-" + self.name(node.lhs)  # type: ignore[attr-defined]
        return f"({self.text(node)})"

    def text(self, node: Expr) -> str:
        """The text at the loosest level (a summand, a result, a function argument)."""
        t = type(node)
        if t is Var:
            return self.name(node)  # type: ignore[arg-type]
        if t is Const:
            return str(node.value)  # type: ignore[attr-defined]
        keep = node.operations >= _KEPT_FROM
        if keep:
            found = self.kept.get(id(node))
            if found is not None:
                return found
        if t is Add:
            terms = node.terms  # type: ignore[attr-defined]
            out = [self.text(terms[0])]
            for term in terms[1:]:
                tt = type(term)
                if tt is Const and term.value < 0:  # type: ignore[attr-defined]
                    out.append(f" - {-term.value}")  # type: ignore[attr-defined]
                elif tt is Mul and type(term.rhs) is Const and term.rhs.value < 0:  # type: ignore[attr-defined]
                    factor = term.rhs.value  # type: ignore[attr-defined]
                    lhs = term.lhs  # type: ignore[attr-defined]
                    if factor == -1:
                        out.append(" - ")
                        out.append(self.strong(lhs) if type(lhs) is Add else self.text(lhs))
                    else:
                        out.append(f" - {self.strong(lhs)} * {-factor}")
                else:
                    out.append(" + ")
                    out.append(self.text(term))
            written = "".join(out)
        elif t is Min or t is Max:
            written = (
                f"{'min' if t is Min else 'max'}({self.text(node.lhs)}, {self.text(node.rhs)})"  # type: ignore[attr-defined]
            )
        else:
            lhs, rhs = node.lhs, node.rhs  # type: ignore[attr-defined]
            if t is Mul and type(rhs) is Const and rhs.value == -1:
                written = "-" + self.strong(lhs)
            elif is_negated_division(node):
                # ``(-x) floordiv c`` as XLA keeps it: ``x floordiv -c`` (the same floor)
                spelling = self.div if t is FloorDiv else _SPELLING[t]
                written = f"{self.strong(lhs.lhs)}{spelling}{-rhs.value}"
            else:
                spelling = self.div if t is FloorDiv else _SPELLING[t]
                # a constant operand (the usual divisor or factor) without a call
                right = str(rhs.value) if type(rhs) is Const else self.strong(rhs)
                written = f"{self.strong(lhs)}{spelling}{right}"
        if keep:
            self.kept[id(node)] = written
        return written


def format_expr(
    expr: Expr,
    dim_names: Sequence[str] = (),
    range_names: Sequence[str] = (),
    rt_names: Sequence[str] = (),
    floordiv_spelling: str = "floordiv",
) -> str:
    """One expression in XLA's syntax with minimal parentheses."""
    return _ExprPrinter((dim_names, range_names, rt_names), floordiv_spelling).text(expr)


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
    fmt = _ExprPrinter((dims, ranges, rts), floordiv_spelling).text

    head = f"({', '.join(dims)})"
    if ranges:
        head += f"[{', '.join(ranges)}]"
    if rts:
        head += "{" + ", ".join(rts) + "}"
    head += f" -> ({', '.join(fmt(e) for e in indexing_map.results)})"
    if not (dims or ranges or rts):
        return head
    # Each interval written here as its __str__ writes it, without the call.
    domain = [
        f"{n} in [{v.bounds.lower}, {v.bounds.upper}]"
        for n, v in zip(
            dims + ranges + rts,
            (*indexing_map.dim_vars, *indexing_map.range_vars, *indexing_map.rt_vars),
            strict=True,
        )
    ]
    domain += sorted(f"{fmt(e)} in [{b.lower}, {b.upper}]" for e, b in indexing_map.constraints)
    if multiline:
        return head + ",\ndomain:\n" + ",\n".join(domain)
    return head + ", domain: " + ", ".join(domain)


__all__ = ["VarKind", "format_expr", "format_map", "variable_names"]
