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

from .expr import Add, CeilDiv, Const, Expr, FloorDiv, Max, Min, Mod, Mul, Var
from .indexing_map import Constraint, IndexingMap
from .interval import INT64_MAX as _INT64_MAX
from .interval import INT64_MIN as _INT64_MIN
from .interval import Interval, saturate


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


class RangeEvaluator:
    """Intervals of expressions over fixed variable bounds and constraints, memoised."""

    __slots__ = ("_bounds", "_constraints", "_memo")

    def __init__(
        self,
        bounds: Mapping[Var, Interval],
        constraints: Iterable[Constraint] | Mapping[Expr, Interval] = (),
    ) -> None:
        self._bounds = bounds
        if isinstance(constraints, Mapping):
            self._constraints = dict(constraints)
        else:
            merged: dict[Expr, Interval] = {}
            for expr, interval in constraints:
                previous = merged.get(expr)
                merged[expr] = interval if previous is None else previous.intersect(interval)
            self._constraints = merged
        self._memo: dict[Expr, Interval] = {}

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
        got = self._memo.get(expr)
        if got is not None:
            return got
        t = type(expr)
        if t is Const:
            # Not memoised: a constraint never names a constant, and the point is cheap.
            return Interval(expr.value, expr.value)
        if t is Var:
            result = self._bounds.get(expr, Interval.FULL)
        elif t is Add:
            # Interval addition inlined, saturating after every step as ``+`` does.
            lower = upper = 0
            for term in expr.terms:
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
            result = Interval(lower, upper)
        else:
            lhs = self.range(expr.lhs)
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
        self._memo[expr] = result
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
