"""Constraint rewrites that need no expression simplifier: moving a sum's constant into its
interval, merging mod constraints by the Chinese remainder theorem, tightening by residues,
and detecting known-empty domains."""

from __future__ import annotations

from collections.abc import Callable
from math import gcd

from .expr import (
    Add,
    CeilDiv,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    Var,
    mod,
)
from .indexing_map import Constraint, IndexingMap, Variable
from .interval import INT64_MAX, INT64_MIN, Interval
from .linear_form import (
    _combine,
    _linear,
)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _move_into_interval(
    expr: Expr, interval: Interval, range_of: Callable[[Expr], Interval]
) -> tuple[Expr, Interval] | None:
    """One step of ``e op c in I`` -> ``e in I'`` (an equivalent constraint), or None."""
    lo, hi = interval.lower, interval.upper
    t = type(expr)
    if t is Add:
        terms, constant = _linear(expr)
        if constant != 0:
            return _combine(terms), Interval(lo - constant, hi - constant)
        coefficients = sorted({abs(c) for _, c in terms}, reverse=True)
        g = 0
        for c in coefficients:
            g = gcd(g, c)
            if g <= 1:
                break
            high = [(m, v // g) for m, v in terms if v % g == 0]
            low = [(m, v) for m, v in terms if v % g != 0]
            r = range_of(_combine(low)) if low else Interval(0, 0)
            if r.is_empty:
                return None
            # lo <= g*H + L <= hi for one L iff the same H range for every L in r.
            lower_a, lower_b = _ceil_div(lo - r.upper, g), _ceil_div(lo - r.lower, g)
            upper_a, upper_b = (hi - r.lower) // g, (hi - r.upper) // g
            if (lower_a == lower_b or lo == INT64_MIN) and (upper_a == upper_b or hi == INT64_MAX):
                return _combine(high), Interval(lower_b, upper_a)
        return None
    if t is Mul and type(expr.rhs) is Const:
        c = expr.rhs.value
        if c > 0:
            return expr.lhs, Interval(_ceil_div(lo, c), hi // c)
        return expr.lhs, Interval(_ceil_div(hi, c), lo // c)
    if t is FloorDiv and type(expr.rhs) is Const and expr.rhs.value > 0:
        c = expr.rhs.value
        return expr.lhs, Interval(lo * c, hi * c + c - 1)
    if t is CeilDiv and type(expr.rhs) is Const and expr.rhs.value > 0:
        c = expr.rhs.value
        return expr.lhs, Interval((lo - 1) * c + 1, hi * c)
    return None


def _crt(r1: int, m1: int, r2: int, m2: int) -> tuple[int, int] | None:
    """``x ≡ r1 (m1)`` and ``x ≡ r2 (m2)`` as ``x ≡ r (lcm)``, or None when inconsistent."""
    g = gcd(m1, m2)
    if (r2 - r1) % g:
        return None
    lcm = m1 // g * m2
    # Solve r1 + m1 * t ≡ r2 (mod m2).
    t = ((r2 - r1) // g * pow(m1 // g, -1, m2 // g)) % (m2 // g) if m2 // g > 1 else 0
    return (r1 + m1 * t) % lcm, lcm


def _tighten_by_residues(bounds: Interval, m: int, a: int, b: int) -> Interval:
    """The least interval within ``bounds`` holding every ``v`` with ``v mod m`` in [a, b]."""
    lower, upper = bounds.lower, bounds.upper
    rl = lower % m
    if rl < a:
        lower += a - rl
    elif rl > b:
        lower += m - rl + a
    ru = upper % m
    if ru > b:
        upper -= ru - b
    elif ru < a:
        upper -= ru + m - b
    return Interval(lower, upper)


def _merge_mod_constraints(indexing_map: IndexingMap) -> IndexingMap:
    """Merge ``x mod a in [r, r]`` constraints on one ``x``; tighten a variable's bounds."""
    groups: dict[Expr, list[tuple[int, int]]] = {}
    others: list[Constraint] = []
    for expr, interval in indexing_map.constraints:
        if (
            type(expr) is Mod
            and type(expr.rhs) is Const
            and interval.is_point
            and 0 <= interval.lower < expr.rhs.value
        ):
            groups.setdefault(expr.lhs, []).append((interval.lower, expr.rhs.value))
        else:
            others.append((expr, interval))
    if not groups and not any(type(e) is Mod and type(e.lhs) is Var for e, _ in others):
        return indexing_map
    merged: list[Constraint] = []
    for x, residues in groups.items():
        r, m = residues[0]
        for r2, m2 in residues[1:]:
            solved = _crt(r, m, r2, m2)
            if solved is None:
                return _known_empty(indexing_map)
            r, m = solved
        merged.append((mod(x, m), Interval(r, r)))
    constraints = merged + others
    groups_vars = [
        list(indexing_map.dim_vars),
        list(indexing_map.range_vars),
        list(indexing_map.rt_vars),
    ]
    for expr, interval in constraints:
        if type(expr) is Mod and type(expr.lhs) is Var and type(expr.rhs) is Const:
            m = expr.rhs.value
            a, b = max(interval.lower, 0), min(interval.upper, m - 1)
            if a > b:
                return _known_empty(indexing_map)
            var = expr.lhs
            old = groups_vars[var.kind][var.index]
            groups_vars[var.kind][var.index] = Variable(
                _tighten_by_residues(old.bounds, m, a, b), old.name
            )
    return IndexingMap(
        indexing_map.results,
        tuple(groups_vars[0]),
        tuple(groups_vars[1]),
        tuple(groups_vars[2]),
        tuple(constraints),
    )


def _known_empty(indexing_map: IndexingMap) -> IndexingMap:
    return IndexingMap.known_empty(indexing_map.num_dims, indexing_map.num_results)
