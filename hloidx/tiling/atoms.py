"""A map's results as affine sums of *digits* of its variables.

Reshapes put ``d floordiv c`` and ``d mod c`` into maps. Every such piece of one variable is a
digit of that variable in a mixed radix whose cuts are the constants involved: with cuts
``1 < 6 < 48``, ``d floordiv 6`` is digit 1 and ``d mod 6`` digit 0. Once every result is
an affine sum of digits, range variables and a remainder without tiled variables (constants,
runtime variables, variables held fixed), the tile question becomes one about sums of
arithmetic progressions (``symbolic_tile``).

A result that does not have this form (a variable under ``min``, a sum under ``floordiv``,
cuts that do not divide each other) raises :class:`NotDigits`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from ..maps.expr import (
    Add,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    Var,
    const,
)
from ..maps.traversal import variables


class NotDigits(Exception):
    """A result is not an affine sum of digits (the message says why)."""


@dataclass(frozen=True)
class Piece:
    """``(var mod high) floordiv low`` (``high`` None: no ``mod``)."""

    var: Var
    low: int
    high: int | None


@dataclass(frozen=True)
class Digit:
    """Digit ``position`` of ``var``: ``(var mod cuts[position+1]) floordiv cuts[position]``."""

    var: Var
    position: int


@dataclass(frozen=True)
class Radix:
    """The cuts ``1 = c_0 < c_1 < ... < c_K`` of one variable; digit K has no upper cut."""

    cuts: tuple[int, ...]

    @property
    def num_digits(self) -> int:
        return len(self.cuts)

    def ratio(self, position: int) -> int | None:
        """How many values digit ``position`` takes in a full cycle (None for the top)."""
        if position + 1 < len(self.cuts):
            return self.cuts[position + 1] // self.cuts[position]
        return None


@dataclass(frozen=True)
class DigitSum:
    """One result: ``sum(coefficient * digit) + rest``."""

    terms: tuple[tuple[Digit, int], ...]
    rest: Expr


def _pieces(expr: Expr, tiled: frozenset[Var]) -> tuple[dict[Piece, int], Expr]:
    """``expr`` as ``sum(coefficient * piece) + rest`` (rest free of ``tiled`` variables)."""
    if not (variables(expr) & tiled):
        return {}, expr
    if isinstance(expr, Var):
        return {Piece(expr, 1, None): 1}, const(0)
    if isinstance(expr, Add):
        total: dict[Piece, int] = {}
        rest: Expr = const(0)
        for term in expr.terms:
            parts, r = _pieces(term, tiled)
            for p, c in parts.items():
                total[p] = total.get(p, 0) + c
            rest = rest + r
        return {p: c for p, c in total.items() if c}, rest
    if isinstance(expr, Mul) and isinstance(expr.rhs, Const):
        parts, r = _pieces(expr.lhs, tiled)
        k = expr.rhs.value
        return {p: c * k for p, c in parts.items() if c * k}, r * k
    if isinstance(expr, (FloorDiv, Mod)) and isinstance(expr.rhs, Const):
        inner = _single_piece(expr.lhs, tiled)
        c = expr.rhs.value
        if isinstance(expr, FloorDiv):
            return {Piece(inner.var, inner.low * c, inner.high): 1}, const(0)
        high = inner.low * c
        if inner.high is not None and inner.high % high:
            raise NotDigits(f"{expr}: the cuts {inner.high} and {high} do not divide")
        if inner.high is not None:
            high = min(high, inner.high)
        return {Piece(inner.var, inner.low, high): 1}, const(0)
    raise NotDigits(f"{expr} is not an affine sum of digits of the tiled variables")


def _single_piece(expr: Expr, tiled: frozenset[Var]) -> Piece:
    parts, rest = _pieces(expr, tiled)
    if len(parts) != 1 or not rest.is_const(0) or next(iter(parts.values())) != 1:
        raise NotDigits(f"{expr}: a sum under floordiv or mod mixes positions")
    return next(iter(parts))


def _radix(var: Var, pieces: list[Piece]) -> Radix:
    cuts = {1}
    for p in pieces:
        cuts.add(p.low)
        if p.high is not None:
            cuts.add(p.high)
    ordered = tuple(sorted(cuts))
    for a, b in pairwise(ordered):
        if b % a:
            raise NotDigits(f"the cuts {a} and {b} of {var} do not divide each other")
    return Radix(ordered)


def _as_digits(piece: Piece, radix: Radix) -> list[tuple[Digit, int]]:
    out = []
    for k, cut in enumerate(radix.cuts):
        upper = radix.cuts[k + 1] if k + 1 < len(radix.cuts) else None
        if cut < piece.low:
            continue
        if piece.high is not None and (upper is None or upper > piece.high):
            continue
        out.append((Digit(piece.var, k), cut // piece.low))
    return out


def digit_sums(
    results: tuple[Expr, ...], tiled: frozenset[Var]
) -> tuple[list[DigitSum], dict[Var, Radix]]:
    """Every result as a :class:`DigitSum` over the digits of the ``tiled`` variables, and
    each variable's radix. Raises :class:`NotDigits`."""
    decomposed = [_pieces(r, tiled) for r in results]
    by_var: dict[Var, list[Piece]] = {}
    for parts, _ in decomposed:
        for p in parts:
            by_var.setdefault(p.var, []).append(p)
    radices = {v: _radix(v, ps) for v, ps in by_var.items()}
    sums = []
    for parts, rest in decomposed:
        terms: dict[Digit, int] = {}
        for p, c in parts.items():
            for digit, weight in _as_digits(p, radices[p.var]):
                terms[digit] = terms.get(digit, 0) + c * weight
        kept = sorted(
            ((d, c) for d, c in terms.items() if c),
            key=lambda dc: (int(dc[0].var.kind), dc[0].var.index, dc[0].position),
        )
        sums.append(DigitSum(tuple(kept), rest))
    return sums, radices
