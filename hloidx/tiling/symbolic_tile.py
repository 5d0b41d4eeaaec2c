"""The tile of one operand that a tile of the output needs, from an output-to-input map.

An output tile has size ``T_i`` along output dimension ``i`` and starts at a multiple of
``T_i``. For each operand dimension the tile is described as XLA's ``SymbolicTile`` does: an
offset, a size and a stride, the elements ``offset + k * stride`` for ``0 <= k < size``, and
the operand tile is the product of these. The description holds under *conditions* on the
tile sizes, in XLA's form (a ``||`` of ``&&`` of ``expr in [a, b]``).

How it is derived (our own method; XLA's ``symbolic_tile.cc`` gives the expected results):

1. every result is an affine sum of digits (``atoms``): a tile that starts at a multiple of
   ``T`` covers a box of digits exactly when ``T`` is *aligned* with the variable's cuts
   (``T`` divides the next cut above it and is a multiple of the one below);
2. each digit then ranges over a count (a function of ``T``); a digit used by two results
   must be fixed (count 1), or the tile is a diagonal, not a rectangle;
3. a sum of ranges ``sum(a_v * [0, n_v))`` is one arithmetic progression exactly when, in
   order of ``|a_v|``, each coefficient is a multiple of the smallest one that varies and
   does not exceed the span covered so far plus that step. Which variables vary depends on
   the tile sizes, so each choice is a case of the condition, and the size and stride are
   written with indicator terms (``(n + N - 2) floordiv N`` is 1 when ``n >= 2``).

Map constraints that restrict a single result (padding, concatenation) become a *clip*: the
operand elements read are the rectangle's elements inside the clip. Output dimensions named
in ``looped`` are held at one position per rectangle: that is seed 004's loop of rectangles
(``delinearize_index``), used when no single rectangle describes the tile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

from ..maps.expr import Expr, Var, VarKind, ceildiv, const, dim, floordiv, min_, mod
from ..maps.indexing_map import IndexingMap, Variable
from ..maps.interval import Interval
from ..maps.traversal import evaluate, replace_vars, variables
from .atoms import Digit, NotDigits, Radix, digit_sums
from .conditions import Conditions, TooComplex

#: more varying digits in one result than this and the case split is not attempted
MAX_VARYING = 10


class NoTile(Exception):
    """No tile description of this form exists for the map (the message says why)."""


@dataclass(frozen=True)
class DimensionTile:
    """One operand dimension: expressions of the tile sizes (dims ``d_i`` = ``T_i``)."""

    #: the result expression with range variables at their first value; positions are the
    #: output dims (``d_i``), runtime variables are the map's
    base: Expr
    #: added to ``base`` at the tile's start (a mixed-sign sum starts at its minimum)
    adjust: Expr
    size: Expr
    stride: Expr
    clip: Interval | None = None


@dataclass(frozen=True)
class TileFormula:
    dims: tuple[DimensionTile, ...]
    conditions: Conditions
    extents: tuple[int, ...]
    looped: frozenset[int]
    rt_vars: tuple[Variable, ...]
    #: conditions on held positions and runtime variables under which a rectangle is read
    when: tuple[tuple[Expr, Interval], ...] = field(default=())


@dataclass(frozen=True)
class _Atom:
    digit: Digit
    coefficient: int
    count: Expr
    max_count: int

    @property
    def varies(self) -> bool:
        return not self.count.is_const()


def _count_item(count: Expr, interval: Interval, extents: tuple[int, ...]) -> tuple[Expr, Interval]:
    """``count in interval`` as an interval of the tile size it depends on: every count is a
    non-decreasing function of one tile size, so the sizes form an interval (found by
    bisection, never by enumeration)."""
    used = variables(count)
    if len(used) != 1:
        return count, interval
    (var,) = used
    top = max(1, extents[var.index])

    def at(t: int) -> int:
        return int(evaluate(count, {var: t}))

    def first(predicate) -> int:  # smallest t in [1, top] with predicate, else top + 1
        lo, hi = 1, top + 1
        while lo < hi:
            mid = (lo + hi) // 2
            if predicate(mid):
                hi = mid
            else:
                lo = mid + 1
        return lo

    lower = first(lambda t: at(t) >= interval.lower)
    upper = first(lambda t: at(t) > interval.upper) - 1
    return var, Interval(lower, upper)


def _indicator_at_least_two(count: Expr, max_count: int) -> Expr:
    if max_count <= 1:
        return const(0)
    if count.is_const():
        return const(1 if count.value >= 2 else 0)  # type: ignore[attr-defined]
    return floordiv(count + (max_count - 2), max_count)


def _tile_dim_counts(
    var: Var, radix: Radix, extent: int
) -> tuple[list[Expr], list[int], Conditions]:
    """Counts of each digit of output dim ``var`` for tile size ``T`` (= dim var of the same
    index), their largest values, and the alignment condition."""
    size = dim(var.index)
    cuts = radix.cuts
    top = len(cuts) - 1
    counts: list[Expr] = []
    maxima: list[int] = []
    for k, cut in enumerate(cuts):
        reach = -(-extent // cut)
        if k < top:
            ratio = cuts[k + 1] // cut
            counts.append(min_(size if cut == 1 else ceildiv(size, cut), ratio))
            maxima.append(min(ratio, reach))
        else:
            counts.append(size if cut == 1 else ceildiv(size, cut))
            maxima.append(reach)
    if top == 0:
        return counts, maxima, Conditions.TRUE
    cases = []
    for j in range(top + 1):
        items = []
        if j > 0:
            if cuts[j] > extent:
                continue
            items.append((mod(size, cuts[j]), Interval(0, 0)))
        if j < top:
            items.append((mod(const(cuts[j + 1]), size), Interval(0, 0)))
        cases.append(Conditions.of(items))
    return counts, maxima, Conditions.any_of(cases)


def _range_var_counts(var: Var, radix: Radix, bounds: Interval) -> list[int]:
    extent = bounds.upper - bounds.lower + 1
    cuts = radix.cuts
    if len(cuts) == 1:
        return [extent]
    if bounds.lower != 0:
        raise NoTile(f"{var} starts at {bounds.lower} and is split into digits")
    for j, cut in enumerate(cuts):
        upper = cuts[j + 1] if j + 1 < len(cuts) else None
        if extent % cut == 0 and (upper is None or extent <= upper):
            return [
                cuts[k + 1] // cuts[k] if k < j else (extent // cut if k == j else 1)
                for k in range(len(cuts))
            ]
    raise NoTile(f"the range of {var} is not a box of its digits")


def _chain(active: list[_Atom]) -> tuple[list[tuple[Expr, Interval]], bool] | None:
    """When the sums of ``active`` digits (smallest step first) leave no gap: the conditions
    on their counts for that, and whether no two sums ever meet; None when a gap is certain.
    """
    items: list[tuple[Expr, Interval]] = []
    tight = True
    if not active:
        return items, tight
    step = abs(active[0].coefficient)
    for idx in range(1, len(active)):
        w = abs(active[idx].coefficient)
        if w % step:
            return None
        before = active[:idx]
        need = w - step + sum(abs(a.coefficient) for a in before)
        total: Expr = const(0)
        for a in before:
            total = total + a.count * abs(a.coefficient)
        top = sum(abs(a.coefficient) * a.max_count for a in before)
        if top < need:
            return None
        if total.is_const():
            if total.value < need:  # type: ignore[attr-defined]
                return None
            tight = tight and total.value == need  # type: ignore[attr-defined]
        else:
            items.append((total, Interval(need, top)))
            tight = tight and top == need
    return items, tight


def _progression(
    atoms: list[_Atom], extents: tuple[int, ...]
) -> tuple[Conditions, Expr, Expr, Expr]:
    """Conditions, size, stride and start adjustment of ``sum(a * [0, n))`` over ``atoms``."""
    atoms = sorted(atoms, key=lambda a: abs(a.coefficient))
    if not atoms:
        return Conditions.TRUE, const(1), const(0), const(0)
    varying = [a for a in atoms if a.varies]
    if len(varying) > MAX_VARYING:
        raise NoTile(f"{len(varying)} varying digits in one operand dimension")
    signs = {a.coefficient > 0 for a in atoms}
    negative = signs == {False}
    cases = []
    # every feasible case "tight" (no two sums of digits meet): the size is the product
    tight = True
    for r in range(len(varying) + 1):
        for chosen in combinations(varying, r):
            if any(a.max_count < 2 for a in chosen):
                continue
            items = [_count_item(a.count, Interval(2, a.max_count), extents) for a in chosen]
            items += [
                _count_item(a.count, Interval(1, 1), extents) for a in varying if a not in chosen
            ]
            chain = _chain([a for a in atoms if (a in chosen) or not a.varies])
            if chain is not None:
                cases.append(Conditions.of(items + chain[0]))
                tight = tight and chain[1]
    conditions = Conditions.any_of(cases)
    # indicators: atom k sets the step when it varies and every smaller one is fixed
    fixed_before: Expr = const(1)
    size: Expr = const(1)
    stride: Expr = const(0)
    for k, a in enumerate(atoms):
        if k == len(atoms) - 1:
            chooses = fixed_before
        else:
            chooses = fixed_before * _indicator_at_least_two(a.count, a.max_count)
        step = abs(a.coefficient)
        stride = stride + chooses * step
        span: Expr = const(0)
        for b in atoms[k:]:
            if abs(b.coefficient) % step == 0:
                span = span + (b.count - 1) * (abs(b.coefficient) // step)
        size = size + chooses * span
        fixed_before = fixed_before * (1 - _indicator_at_least_two(a.count, a.max_count))
    if tight:
        size = const(1)
        for a in atoms:
            size = size * a.count
    adjust: Expr = const(0)
    if negative:
        stride = stride * -1
    elif len(signs) == 2:
        for a in atoms:
            if a.coefficient < 0:
                adjust = adjust + (a.count - 1) * a.coefficient
    return conditions, size, stride, adjust


def _shifted_result(expr: Expr, results: tuple[Expr, ...]) -> tuple[int, int] | None:
    """``(j, k)`` when ``expr`` is result ``j`` plus the constant ``k`` (a padded window's
    ``d0 + s0 in [5, 10]`` beside the result ``d0 + s0 - 5``)."""
    for j, r in enumerate(results):
        difference = expr - r
        if difference.is_const():
            return j, difference.value  # type: ignore[attr-defined]
    return None


def _clips(
    m: IndexingMap, extents: tuple[int, ...], tiled: frozenset[Var]
) -> tuple[dict[int, Interval], list[tuple[Expr, Interval]]]:
    """Map constraints and narrowed dim bounds as clips on results, or conditions on held
    positions; anything else restricts the tile in a way no rectangle describes."""
    clips: dict[int, Interval] = {}
    when: list[tuple[Expr, Interval]] = []

    def clip(j: int, interval: Interval) -> None:
        clips[j] = clips[j].intersect(interval) if j in clips else interval

    for i, var in enumerate(m.dim_vars):
        full = Interval(0, extents[i] - 1)
        if var.bounds == full:
            continue
        d = dim(i)
        if d not in tiled:
            when.append((d, var.bounds))
            continue
        users = [j for j, r in enumerate(m.results) if d in variables(r)]
        if len(users) == 1 and variables(m.results[users[0]]) == {d}:
            # only an affine result (a * d + c, a != 0) maps the narrowed positions onto an
            # interval of results and nothing else onto it: then the narrowing is a clip
            r = m.results[users[0]]
            step = replace_vars(r, {d: d + 1}) - r
            if step.is_const() and not step.is_const(0):
                a = replace_vars(r, {d: const(var.bounds.lower)}).value  # type: ignore[attr-defined]
                b = replace_vars(r, {d: const(var.bounds.upper)}).value  # type: ignore[attr-defined]
                clip(users[0], Interval(min(a, b), max(a, b)))
                continue
        raise NoTile(f"the domain of d{i} is narrowed to {var.bounds} inside the operand")
    for expr, interval in m.constraints:
        if not (variables(expr) & tiled):
            when.append((expr, interval))
            continue
        shifted = _shifted_result(expr, m.results)
        if shifted is not None:
            j, k = shifted  # expr == result j + k
            clip(j, Interval(interval.lower - k, interval.upper - k))
            continue
        raise NoTile("a constraint of the map restricts which output elements read")
    return clips, when


def derive(
    m: IndexingMap,
    extents: tuple[int, ...],
    looped: frozenset[int],
    rt_dims: frozenset[int] = frozenset(),
) -> TileFormula:
    """The tile formula of ``m`` for output extents ``extents`` with ``looped`` output dims
    held at one position each. ``rt_dims`` are the output dims the runtime variables' values
    depend on (a gather's index row): a tile spans one position of each, or the offsets
    would differ inside it. Raises :class:`NoTile`."""
    if m.is_undefined:
        raise NoTile("the map is UNDEFINED (an op without an indexing rule)")
    tiled = frozenset(
        [dim(i) for i in range(m.num_dims) if i not in looped]
        + [Var(VarKind.RANGE, k) for k in range(m.num_range_vars)]
    )
    clips, when = _clips(m, extents, tiled)
    try:
        sums, radices = digit_sums(m.results, tiled)
    except NotDigits as e:
        raise NoTile(str(e)) from None
    counts: dict[Digit, tuple[Expr, int]] = {}
    conditions = Conditions.TRUE
    for i in sorted(rt_dims - looped):
        conditions = conditions.and_(Conditions.of([(dim(i), Interval(1, 1))]))
    for var, radix in radices.items():
        if var.kind == VarKind.DIM:
            cs, maxima, aligned = _tile_dim_counts(var, radix, extents[var.index])
            conditions = conditions.and_(aligned)
        else:
            fixed = _range_var_counts(var, radix, m.range_vars[var.index].bounds)
            cs, maxima = [const(c) for c in fixed], fixed
        for k, (c, n) in enumerate(zip(cs, maxima, strict=True)):
            counts[Digit(var, k)] = (c, n)
    users: dict[Digit, int] = {}
    for s in sums:
        for digit, _ in s.terms:
            users[digit] = users.get(digit, 0) + 1
    for digit, n_users in users.items():
        count, largest = counts[digit]
        if n_users > 1 and largest > 1:
            if count.is_const():
                raise NoTile(f"{digit.var} indexes {n_users} operand dimensions (a diagonal)")
            item = _count_item(count, Interval(1, 1), extents)
            conditions = conditions.and_(Conditions.of([item]))
    dims = []
    at_start = {Var(VarKind.RANGE, k): const(v.bounds.lower) for k, v in enumerate(m.range_vars)}
    try:
        for j, s in enumerate(sums):
            atoms = [_Atom(d, c, *counts[d]) for d, c in s.terms if counts[d][1] > 1]
            cond, size, stride, adjust = _progression(atoms, extents)
            conditions = conditions.and_(cond)
            base = replace_vars(m.results[j], at_start)
            dims.append(DimensionTile(base, adjust, size, stride, clips.get(j)))
        conditions = conditions.pruned(
            {dim(i): Interval(1, max(1, n)) for i, n in enumerate(extents)}
        )
    except TooComplex as e:
        raise NoTile(str(e)) from None
    if conditions.is_false:
        raise NoTile("no tile sizes make every tile one strided rectangle")
    return TileFormula(tuple(dims), conditions, extents, looped, m.rt_vars, tuple(when))
