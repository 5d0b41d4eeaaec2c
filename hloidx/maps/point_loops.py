"""Counting small groups of a map's variables in Python loops, for :mod:`.utilization`.

For a group of a few thousand points, one Python function compiled for the group (nested
loops over the variables' ranges, the constraints and results as Python expressions with
floor semantics) counts as quickly as NumPy's vectorised path, and a small module then never
has to import NumPy. The results are those of the NumPy path (``tests/test_startup.py``
compares them on random maps); where they might not be (a zero divisor), None sends the group
back to it.
"""

from __future__ import annotations

import sys
from typing import Any

from .expr import Add, CeilDiv, Const, Expr, FloorDiv, Max, Min, Mod, Mul, Var
from .interval import Interval

#: a group of at most this many points is counted in Python loops: as quick as NumPy for so
#: few points; and until NumPy is imported, groups up to ``_SMALL_WITHOUT_NUMPY`` points
#: (a few milliseconds, where importing NumPy costs a tenth of a second)
_SMALL = 512
_SMALL_WITHOUT_NUMPY = 1 << 14


def is_small(size: int) -> bool:
    """Whether a group of ``size`` points is counted here rather than with NumPy."""
    return size <= _SMALL or (size <= _SMALL_WITHOUT_NUMPY and "numpy" not in sys.modules)


def small_group_keys(
    results: list[Expr],
    order: list[Var],
    bounds: dict[Var, Interval],
    constraints: list,
    limits: list[int],
) -> set[int] | None:
    """The group's in-bounds result tuples, each coded as one integer as the NumPy path codes
    them (``key * limit + value``), over the feasible points of its box; None when the group
    must go to the NumPy path (a divisor that may be zero, an expression too deep)."""
    return _enumerate_small(order, bounds, constraints, results, limits)  # type: ignore[return-value]


def small_feasible_count(
    constraints: list, order: list[Var], bounds: dict[Var, Interval]
) -> int | None:
    """How many points of the box of ``order`` meet every constraint, counted with Python
    ints (None: leave it to the NumPy path, as :func:`small_group_keys`)."""
    return _enumerate_small(order, bounds, constraints, [], [])  # type: ignore[return-value]


#: deepest expression compiled into Python (Python's own parser nests ~200 levels)
_COMPILE_DEPTH = 40


def _enumerate_small(
    order: list[Var],
    bounds: dict[Var, Interval],
    constraints: list,
    results: list[Expr],
    limits: list[int],
) -> set[int] | int | None:
    """Every point of the box of ``order`` in nested Python loops (one function compiled for
    the group): the set of result codes, or with no results the count of feasible points.
    Floor semantics as NumPy's (``//``, ``%``); None when a divisor is zero somewhere (the
    NumPy path decides what that means) or an expression is too deep to compile."""
    if any(bounds[v].lower > bounds[v].upper for v in order):
        return set() if results else 0  # an empty box (the loops outside it would still run)
    exprs = [e for e, _ in constraints] + results
    if any(e.depth > _COMPILE_DEPTH for e in exprs):
        return None
    names = {v: f"v{i}" for i, v in enumerate(order)}
    try:
        texts = [_python_text(e, names) for e in exprs]
    except KeyError:  # a variable outside the group
        return None
    lines = ["def run():", " found = set()" if results else " found = 0"]
    pad = " "
    if not order:  # one point: a loop of one, so that `continue` skips it
        lines.append(" for _ in (0,):")
        pad += " "
    for v in order:
        b = bounds[v]
        lines.append(f"{pad}for {names[v]} in range({b.lower}, {b.upper + 1}):")
        pad += " "
    for (_, interval), text in zip(constraints, texts, strict=False):
        lines.append(f"{pad}if not {interval.lower} <= {text} <= {interval.upper}: continue")
    if results:
        for k, (text, limit) in enumerate(zip(texts[len(constraints) :], limits, strict=True)):
            lines.append(f"{pad}x = {text}")
            lines.append(f"{pad}if not 0 <= x < {limit}: continue")
            lines.append(f"{pad}key = x" if k == 0 else f"{pad}key = key * {limit} + x")
        lines.append(f"{pad}found.add(key)")
    else:
        lines.append(f"{pad}found += 1")
    lines.append(" return found")
    scope: dict[str, Any] = {"min": min, "max": max}
    exec("\n".join(lines), scope)  # our own expression text, never the user's
    try:
        return scope["run"]()
    except ZeroDivisionError:
        return None


def _python_text(node: Expr, names: dict[Var, str]) -> str:
    """``node`` as a Python expression over the variable names ``names``."""
    t = type(node)
    if t is Const:
        return f"({node.value})"
    if t is Var:
        return names[node]
    if t is Add:
        return "(" + " + ".join(_python_text(x, names) for x in node.terms) + ")"
    a, b = _python_text(node.lhs, names), _python_text(node.rhs, names)
    if t is Mul:
        return f"({a} * {b})"
    if t is FloorDiv:
        return f"({a} // {b})"
    if t is CeilDiv:
        return f"(-((-{a}) // {b}))"
    if t is Mod:
        return f"({a} % {b})"
    if t is Min:
        return f"min({a}, {b})"
    assert t is Max
    return f"max({a}, {b})"


def small_comparison(
    a_bounds: dict[Var, Interval],
    a_constraints: list,
    a_results: list[Expr],
    b_bounds: dict[Var, Interval],
    b_constraints: list,
    b_results: list[Expr],
    order: list[Var],
    box: dict[Var, tuple[int, int]],
) -> tuple[int, dict[Var, int] | None] | None:
    """Two maps over the same variables compared at every point of ``box`` in Python loops,
    as :mod:`.equivalence`'s NumPy comparison does: ``(points either map holds, the first
    point where they differ or None)``. A point is in a map when it is inside the map's bounds
    and meets its constraints; the maps differ where one holds it and the other does not, or
    both do with other results. None sends the comparison back to NumPy (a zero divisor,
    whose "undefined" NumPy decides; a variable outside ``order``; an expression too deep)."""
    if any(box[v][0] > box[v][1] for v in order):
        return 0, None
    exprs = [e for e, _ in a_constraints] + a_results + [e for e, _ in b_constraints] + b_results
    if any(e.depth > _COMPILE_DEPTH for e in exprs):
        return None
    names = {v: f"v{i}" for i, v in enumerate(order)}
    try:
        held_a = _held_text(a_bounds, a_constraints, names)
        held_b = _held_text(b_bounds, b_constraints, names)
        results_a = "(" + "".join(_python_text(e, names) + ", " for e in a_results) + ")"
        results_b = "(" + "".join(_python_text(e, names) + ", " for e in b_results) + ")"
    except KeyError:  # a variable outside the loops
        return None
    point = "(" + "".join(f"{names[v]}, " for v in order) + ")"
    lines = ["def run():", " used = 0"]
    pad = " "
    if not order:
        lines.append(" for _ in (0,):")
        pad += " "
    for v in order:
        lo, hi = box[v]
        lines.append(f"{pad}for {names[v]} in range({lo}, {hi + 1}):")
        pad += " "
    lines += [
        f"{pad}in_a = {held_a}",
        f"{pad}in_b = {held_b}",
        f"{pad}if not (in_a or in_b): continue",
        f"{pad}used += 1",
        f"{pad}if in_a != in_b or (in_a and {results_a} != {results_b}):",
        f"{pad} return used, {point}",
        " return used, None",
    ]
    scope: dict[str, Any] = {"min": min, "max": max}
    exec("\n".join(lines), scope)  # our own expression text, never the user's
    try:
        used, differs = scope["run"]()
    except ZeroDivisionError:
        return None
    if differs is None:
        return used, None
    return used, dict(zip(order, differs, strict=True))


def _held_text(bounds: dict[Var, Interval], constraints: list, names: dict[Var, str]) -> str:
    """A Python condition: the point is inside ``bounds`` and meets ``constraints``."""
    parts = [f"{b.lower} <= {names[v]} <= {b.upper}" for v, b in bounds.items() if v in names]
    parts += [f"{iv.lower} <= {_python_text(e, names)} <= {iv.upper}" for e, iv in constraints]
    return " and ".join(f"({p})" for p in parts) if parts else "True"


__all__ = ["is_small", "small_comparison", "small_feasible_count", "small_group_keys"]
