"""Conditions on tile sizes in XLA's form: a disjunction of conjunctions of ``expr in [a, b]``.

``Conditions.TRUE`` has one empty conjunction; ``Conditions.FALSE`` has none. Conjunctions
are pruned with the tile sizes' bounds: an item that always holds is dropped, a conjunction
with an item that never holds is dropped, and a conjunction implied by another is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from ..maps.expr import Add, Const, Expr, Var, const, split_coefficient
from ..maps.interval import Interval
from ..maps.printer import format_expr
from ..maps.range_eval import expr_range
from ..maps.traversal import evaluate, replace_vars, sort_key, variables

#: more conjunctions than this and the condition is not worth printing (nor computing)
MAX_CONJUNCTIONS = 256

Conjunction = tuple[tuple[Expr, Interval], ...]


class TooComplex(Exception):
    """The condition would need more than ``MAX_CONJUNCTIONS`` conjunctions."""


def _single_variable_linear(expr: Expr) -> tuple[Var, int, int] | None:
    """``expr`` as ``a * var + b`` (a != 0), or None."""
    terms = expr.terms if isinstance(expr, Add) else (expr,)
    var, a, b = None, 0, 0
    for t in terms:
        if isinstance(t, Const):
            b += t.value
            continue
        base, k = split_coefficient(t)
        if not isinstance(base, Var) or (var is not None and base != var):
            return None
        var, a = base, a + k
    return (var, a, b) if var is not None and a else None


def _normal(expr: Expr, interval: Interval) -> tuple[Expr, Interval]:
    """``a * x + b in [lo, hi]`` as ``x in [..]``."""
    linear = _single_variable_linear(expr)
    if linear is None:
        return expr, interval
    var, a, b = linear
    lo, hi = interval.lower - b, interval.upper - b
    if a < 0:
        a, lo, hi = -a, -hi, -lo
    return var, Interval(-(-lo // a), hi // a)


def _conjunction(items: Iterable[tuple[Expr, Interval]]) -> Conjunction | None:
    merged: dict[Expr, Interval] = {}
    pending = list(items)
    while pending:
        expr, interval = _normal(*pending.pop())
        if isinstance(expr, Const):
            if not interval.contains(expr.value):
                return None
            continue
        previous = merged.get(expr)
        merged[expr] = interval if previous is None else previous.intersect(interval)
        if merged[expr].is_empty:
            return None
        pinned = merged[expr]
        if (
            isinstance(expr, Var)
            and pinned.is_point
            and (previous is None or not previous.is_point)
        ):
            # a pinned variable: put its value into the other items
            value = {expr: const(pinned.lower)}
            for other in [e for e in merged if e != expr and expr in variables(e)]:
                pending.append((replace_vars(other, value), merged.pop(other)))
    return tuple(sorted(merged.items(), key=lambda kv: sort_key(kv[0])))


def _widened(target: Conjunction, others: list[Conjunction]) -> Conjunction:
    """``target`` with an item widened where another conjunction covers the difference:
    ``x in [2, 4] && y in [1, 1]`` beside ``x in [1, 1]`` becomes ``x in [1, 4] && y in
    [1, 1]`` (the disjunction is unchanged)."""
    items = dict(target)
    changed = True
    while changed:
        changed = False
        for e, interval in list(items.items()):
            for other in others:
                o = dict(other)
                if e not in o:
                    continue
                rest_ok = all(
                    k in items and k != e and v.contains(items[k]) for k, v in o.items() if k != e
                )
                j = o[e]
                joined = interval.union(j)
                contiguous = j.upper + 1 >= interval.lower and interval.upper + 1 >= j.lower
                if rest_ok and contiguous and joined != interval:
                    items[e] = joined
                    interval = joined
                    changed = True
    return tuple(sorted(items.items(), key=lambda kv: sort_key(kv[0])))


def _implies(a: Conjunction, b: Conjunction) -> bool:
    """Every item of ``b`` is implied by an item of ``a`` on the same expression."""
    items = dict(a)
    return all(e in items and interval.contains(items[e]) for e, interval in b)


@dataclass(frozen=True)
class Conditions:
    conjunctions: tuple[Conjunction, ...]

    TRUE: ClassVar[Conditions]
    FALSE: ClassVar[Conditions]

    @staticmethod
    def of(items: Iterable[tuple[Expr, Interval]]) -> Conditions:
        c = _conjunction(items)
        return Conditions(()) if c is None else Conditions((c,))

    @staticmethod
    def any_of(parts: Iterable[Conditions]) -> Conditions:
        return Conditions(tuple(c for p in parts for c in p.conjunctions)).pruned()

    @property
    def is_true(self) -> bool:
        return any(not c for c in self.conjunctions)

    @property
    def is_false(self) -> bool:
        return not self.conjunctions

    def and_(self, other: Conditions) -> Conditions:
        out = []
        for a in self.conjunctions:
            for b in other.conjunctions:
                c = _conjunction(a + b)
                if c is not None:
                    out.append(c)
                    if len(out) > MAX_CONJUNCTIONS * 4:
                        raise TooComplex("the tile's conditions have too many cases")
        return Conditions(tuple(out)).pruned()

    def pruned(self, bounds: Mapping[Var, Interval] | None = None) -> Conditions:
        kept: list[Conjunction] = []
        for conj in self.conjunctions:
            items = []
            dead = False
            for expr, interval in conj:
                if bounds is not None:
                    reach = expr_range(expr, bounds)
                    if interval.contains(reach):
                        continue
                    if reach.intersect(interval).is_empty:
                        dead = True
                        break
                items.append((expr, interval))
            if not dead:
                c = _conjunction(items)
                if c is not None and c not in kept:
                    kept.append(c)
        for _ in range(4):
            before = list(kept)
            widened = [_widened(c, [o for o in kept if o is not c]) for c in kept]
            kept = []
            for c in widened:
                if bounds is not None:
                    c = tuple((e, i) for e, i in c if not i.contains(expr_range(e, bounds)))
                if c not in kept:
                    kept.append(c)
            if kept == before:
                break
        kept.sort(key=len)
        minimal: list[Conjunction] = []
        for c in kept:
            if not any(_implies(c, m) for m in minimal):
                minimal.append(c)
        if len(minimal) > MAX_CONJUNCTIONS:
            raise TooComplex("the tile's conditions have too many cases")
        if any(not c for c in minimal):
            return Conditions(((),))
        return Conditions(tuple(minimal))

    def holds(self, values: Mapping[Var, int]) -> bool:
        return any(
            all(interval.contains(int(evaluate(e, values))) for e, interval in c)
            for c in self.conjunctions
        )

    def text(self, dim_names: list[str] | None = None) -> str:
        """XLA's syntax: ``a in [1, 1] && b in [0, 0] || ...``; empty when always true."""
        if self.is_true:
            return ""
        if self.is_false:
            return "false"
        names = dim_names or []

        def item(e: Expr, i: Interval) -> str:
            return f"{format_expr(e, names)} in [{i.lower}, {i.upper}]"

        return " || ".join(" && ".join(item(e, i) for e, i in c) for c in self.conjunctions)


Conditions.TRUE = Conditions(((),))
Conditions.FALSE = Conditions(())
