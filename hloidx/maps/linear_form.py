"""Sums as linear forms: collect like summands, order them canonically, and the operation count
that decides whether a rewrite made an expression simpler."""

from __future__ import annotations

from collections.abc import Iterable

from ..caches import memo
from .expr import (
    Add,
    Const,
    Expr,
    Mul,
    children,
    const,
    xla_order_key,
)

Terms = list[tuple[Expr, int]]


def _linear(expr: Expr) -> tuple[Terms, int]:
    """``expr`` as ``Σ coefficient * monomial + constant`` (one level, as the builders keep it)."""
    if type(expr) is Const:
        return [], expr.value
    summands = expr.terms if type(expr) is Add else (expr,)
    terms: Terms = []
    constant = 0
    for term in summands:
        t = type(term)
        if t is Const:
            constant += term.value
        elif t is Mul and type(term.rhs) is Const:
            terms.append((term.lhs, term.rhs.value))
        else:
            terms.append((term, 1))
    return terms, constant


def _combine(terms: Iterable[tuple[Expr, int]], constant: int = 0) -> Expr:
    """The canonical sum ``Σ c * m + constant`` (like terms collected, summands sorted).

    The same tree as ``_sorted_sum(add(*(mul(m, c) for m, c in terms), constant))``, built
    directly from the coefficients (hot: no intermediate products or sums are made).
    """
    if type(terms) is list and len(terms) <= 1 and (not terms or type(terms[0][0]) is not Add):
        # The usual case in the rules (one summand moved out or left in), without the table.
        if not terms:
            return const(constant)
        m, c = terms[0]
        t = type(m)
        if t is Const:
            return const(constant + m.value * c)
        if t is Mul and type(m.rhs) is Const:
            m, c = m.lhs, m.rhs.value * c
        if c == 0:
            return const(constant)
        summand = m if c == 1 else Mul(m, const(c))
        # A constant sorts after every other kind of summand.
        return summand if constant == 0 else Add((summand, const(constant)))
    coefficients: dict[Expr, int] = {}
    get = coefficients.get
    for m, c in terms:
        if c == 0:
            continue
        t = type(m)
        if t is Const:
            constant += m.value * c
        elif t is Mul and type(m.rhs) is Const:
            coefficients[m.lhs] = get(m.lhs, 0) + m.rhs.value * c
        elif t is Add:
            for u in m.terms:
                tu = type(u)
                if tu is Const:
                    constant += u.value * c
                elif tu is Mul and type(u.rhs) is Const:
                    coefficients[u.lhs] = get(u.lhs, 0) + u.rhs.value * c
                else:
                    coefficients[u] = get(u, 0) + c
        else:
            coefficients[m] = get(m, 0) + c
    summands = [m if c == 1 else Mul(m, const(c)) for m, c in coefficients.items() if c != 0]
    if constant != 0 or not summands:
        summands.append(const(constant))
    if len(summands) == 1:
        return summands[0]
    summands.sort(key=xla_order_key)
    return Add(tuple(summands))


def _sorted_sum(expr: Expr) -> Expr:
    if type(expr) is Add:
        ordered = tuple(sorted(expr.terms, key=xla_order_key))
        if ordered != expr.terms:
            return Add(ordered)
    return expr


@memo(16384)
def _cost(expr: Expr) -> int:
    """Tree size (memoised, so linear in the DAG; used to reject rewrites that grow a sum)."""
    return 1 + sum(_cost(c) for c in children(expr))
