"""The interval an expression can take over a map's domain.

:func:`expr_range` is a cheap, sound over-approximation: it walks the expression once
(memoised per distinct sub-expression, so its cost is linear in the size of the expression
DAG) combining the intervals of the children with interval arithmetic. Constraints ``e in
[a, b]`` tighten the interval of ``e`` wherever ``e`` occurs as a sub-expression, as XLA's
``RangeEvaluator`` does. The interval covers every *defined* value: a division whose divisor
may be zero only contributes the values it takes for non-zero divisors.

:class:`RangeEvaluator` binds the bounds and constraints of one :class:`IndexingMap` and
keeps the memo across queries, which is what the simplifier needs (it asks for the range of
many overlapping sub-expressions of the same map).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .expr import (
    EVERY_DOMAIN,
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
    _set_range_memo,
)
from .indexing_map import Constraint, IndexingMap
from .interval import INT64_MAX as _INT64_MAX
from .interval import INT64_MIN as _INT64_MIN
from .interval import Interval, _set_lower, _set_upper, make_interval, saturate

_new = object.__new__


def _corners_div(lhs: Interval, rhs: Interval, ceil: bool) -> Interval:
    """``lhs / rhs`` rounded down (or up) for a divisor interval without zero.

    With a divisor of constant sign, floor division is monotone in each argument, so the
    extremes are reached at the corners of the box.
    """
    values = []
    for a in (lhs.lower, lhs.upper):
        for b in (rhs.lower, rhs.upper):
            values.append(-((-a) // b) if ceil else a // b)
    return Interval(min(values), max(values))


def _nonzero_parts(divisor: Interval) -> list[Interval]:
    """The divisor's interval split into its negative and positive parts (zero removed)."""
    parts = []
    negative = divisor.intersect(Interval(divisor.lower, -1))
    positive = divisor.intersect(Interval(1, divisor.upper))
    for part in (negative, positive):
        if not part.is_empty:
            parts.append(part)
    return parts


def divide_range(lhs: Interval, rhs: Interval, ceil: bool = False) -> Interval:
    """The interval of ``lhs floordiv rhs`` (or ``ceildiv``) over non-zero divisors."""
    if lhs.is_empty or rhs.is_empty:
        return Interval.EMPTY
    if rhs.is_point:
        if rhs.lower == 0:
            return Interval.EMPTY
        return lhs.ceildiv(rhs.lower) if ceil else lhs.floordiv(rhs.lower)
    out = Interval.EMPTY
    for part in _nonzero_parts(rhs):
        out = out.union(_corners_div(lhs, part, ceil))
    return out


def mod_range(lhs: Interval, rhs: Interval) -> Interval:
    """The interval of ``lhs mod rhs`` (floor semantics) over non-zero divisors."""
    if lhs.is_empty or rhs.is_empty:
        return Interval.EMPTY
    if rhs.is_point:
        if rhs.lower == 0:
            return Interval.EMPTY
        if rhs.lower > 0:
            return lhs.mod(rhs.lower)
    out = Interval.EMPTY
    for part in _nonzero_parts(rhs):
        if part.lower > 0:
            if lhs.lower >= 0 and lhs.upper < part.lower:
                piece = lhs  # never wraps, whichever divisor
            else:
                upper = part.upper - 1
                if lhs.lower >= 0:
                    upper = min(upper, lhs.upper)  # x mod m <= x for x >= 0
                piece = Interval(0, upper)
        else:
            # A negative divisor m gives a result in [m + 1, 0].
            if lhs.upper <= 0 and lhs.lower > part.upper:
                piece = lhs
            else:
                lower = part.lower + 1
                if lhs.upper <= 0:
                    lower = max(lower, lhs.lower)
                piece = Interval(lower, 0)
        out = out.union(piece)
    return out


#: The owner of a constant's cached interval: a point, the same over every domain (a
#: constraint never names a constant).
_EVERY_DOMAIN = EVERY_DOMAIN


class RangeEvaluator:
    """Intervals of expressions over fixed variable bounds and constraints, memoised.

    The interval of a node is kept on the node (``Expr._range_memo``), owned by the token of
    the evaluator that computed it: another evaluator sees a token not its own and computes
    afresh. With interned nodes, the equal sub-expressions that rewrites rebuild are the same
    objects, so an interval is computed once per distinct node and domain.
    """

    __slots__ = ("_bounds", "_constraints", "_token")

    def __init__(
        self,
        bounds: Mapping[Var, Interval],
        constraints: Iterable[Constraint] | Mapping[Expr, Interval] = (),
    ) -> None:
        self._bounds = bounds
        if not constraints and type(constraints) is tuple:
            self._constraints = {}  # (the usual case, without the ABC check below)
        elif isinstance(constraints, Mapping):
            self._constraints = dict(constraints)
        else:
            merged: dict[Expr, Interval] = {}
            for expr, interval in constraints:
                previous = merged.get(expr)
                merged[expr] = interval if previous is None else previous.intersect(interval)
            self._constraints = merged
        # A fresh object per evaluator (not the evaluator itself: nodes holding the token
        # must not keep the bounds and constraints alive).
        self._token = object()

    @staticmethod
    def of_map(indexing_map: IndexingMap, use_constraints: bool = True) -> RangeEvaluator:
        """The evaluator of a map's domain (optionally ignoring its constraints)."""
        return RangeEvaluator(
            indexing_map.bounds(), indexing_map.constraints if use_constraints else ()
        )

    @property
    def has_constraints(self) -> bool:
        return bool(self._constraints)

    def range(self, expr: Expr) -> Interval:
        """The interval of ``expr`` over the domain (sound, not necessarily tight)."""
        owner, got = expr._range_memo
        token = self._token
        if owner is token:
            return got
        t = type(expr)
        if t is Const:
            if owner is _EVERY_DOMAIN:
                return got
            result = make_interval(expr.value, expr.value)
            _set_range_memo(expr, (_EVERY_DOMAIN, result))
            return result
        if t is Var:
            result = self._bounds.get(expr, Interval.FULL)
        elif t is Add:
            # Interval addition inlined, saturating after every step as ``+`` does.
            lower = upper = 0
            for term in expr.terms:
                owner, r = term._range_memo
                if owner is not token and owner is not _EVERY_DOMAIN:
                    r = self.range(term)
                if r.lower > r.upper:
                    lower, upper = 1, 0
                    break
                lower += r.lower
                upper += r.upper
                if not _INT64_MIN <= lower <= _INT64_MAX:
                    lower = saturate(lower)
                if not _INT64_MIN <= upper <= _INT64_MAX:
                    upper = saturate(upper)
            result = make_interval(lower, upper)
        else:
            owner, lhs = expr.lhs._range_memo
            if owner is not token and owner is not _EVERY_DOMAIN:
                lhs = self.range(expr.lhs)
            rhs = expr.rhs
            if type(rhs) is Const and rhs.value > 0 and t is not Min and t is not Max:
                # By a positive constant, the common case: the intervals of Interval's
                # ``*``, ``floordiv``, ``ceildiv`` and ``mod``, inlined.
                c = rhs.value
                lower, upper = lhs.lower, lhs.upper
                if lower > upper:
                    result = Interval.EMPTY
                else:
                    if t is Mul:
                        lower, upper = lower * c, upper * c
                        if not _INT64_MIN <= lower <= _INT64_MAX:
                            lower = saturate(lower)
                        if not _INT64_MIN <= upper <= _INT64_MAX:
                            upper = saturate(upper)
                    elif t is FloorDiv:
                        lower, upper = lower // c, upper // c
                    elif t is Mod:
                        if upper - lower < c and lower // c == upper // c:
                            lower, upper = lower % c, upper % c
                        else:
                            lower, upper = 0, c - 1
                    else:
                        lower, upper = -(-lower // c), -(-upper // c)
                    result = _new(Interval)
                    _set_lower(result, lower)
                    _set_upper(result, upper)
            else:
                owner, rhs = rhs._range_memo
                if owner is not token and owner is not _EVERY_DOMAIN:
                    rhs = self.range(expr.rhs)
                if t is Mul:
                    result = lhs * rhs
                elif t is FloorDiv:
                    result = divide_range(lhs, rhs)
                elif t is CeilDiv:
                    result = divide_range(lhs, rhs, ceil=True)
                elif t is Mod:
                    result = mod_range(lhs, rhs)
                elif t is Min:
                    result = lhs.min(rhs)
                elif t is Max:
                    result = lhs.max(rhs)
                else:  # pragma: no cover - every node class is handled above
                    raise TypeError(f"unknown expression node {t.__name__}")
        if self._constraints:
            constraint = self._constraints.get(expr)
            if constraint is not None:
                result = result.intersect(constraint)
        _set_range_memo(expr, (token, result))
        return result

    __call__ = range


def expr_range(
    expr: Expr,
    bounds: Mapping[Var, Interval],
    constraints: Iterable[Constraint] | Mapping[Expr, Interval] = (),
) -> Interval:
    """The interval of ``expr`` given each variable's bounds and ``expr in [a, b]`` facts.

    A variable missing from ``bounds`` is unbounded. The result is sound: every value that
    ``expr`` takes at a point within the bounds that satisfies the constraints (and where
    no divisor is zero) lies in the interval.
    """
    return RangeEvaluator(bounds, constraints).range(expr)


__all__ = ["RangeEvaluator", "divide_range", "expr_range", "mod_range"]
