"""Operand utilization: how much of an operand the whole output reads, and how often.

For an operand read through the union of output-to-input maps ``M1 ∪ … ∪ Mk``:

* ``distinct`` — the fraction of the operand's elements read at least once: the size of the
  union of the maps' images, divided by the operand's element count;
* ``reads`` — reads per operand element: the number of (output point, range-variable point)
  iterations over the constrained domains, divided by the operand's element count.

Both are computed by counting, not by enumerating the domain: a map whose results each depend
on their own group of variables (the common case: permutations, projections, strided and
windowed accesses) has an image that is the product of per-result images, and each per-result
image is counted over its own small group of variables. Unions are counted exactly by
inclusion–exclusion over such product sets. Runtime variables are fixed at one feasible value
(XLA clamps offsets so every feasible value reads the same amount for the ops we know), which
makes the figure an ``estimate``. When a group is too large to count, the interval size is used
and the figure is an ``upper_bound``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import prod
from typing import TYPE_CHECKING

from ..caches import memo
from .expr import (
    Const,
    Expr,
    Var,
    VarKind,
    evaluate,
    variables,
)
from .indexing_map import IndexingMap
from .interval import Interval
from .point_loops import is_small, small_feasible_count, small_group_keys

if TYPE_CHECKING:
    import numpy as np

# numpy is imported by the functions that count (below), not with the module: `hloidx
# --version`, `--help` and the commands that never count utilization start without it.

#: The most points one variable group may have to be counted exactly.
GROUP_LIMIT = 1_000_000
_SAFE = 2**62


@dataclass(frozen=True)
class Utilization:
    distinct: float | None  # None when unknown
    reads: float | None
    kind: str  # "exact" | "estimate" | "upper_bound" | "unknown"

    @property
    def is_unknown(self) -> bool:
        return self.kind == "unknown"

    def to_json(self) -> dict[str, object]:
        return {"distinct": self.distinct, "reads": self.reads, "kind": self.kind}


_RANK = {"exact": 0, "estimate": 1, "upper_bound": 2, "unknown": 3}

#: an operand read through a map hloidx cannot give (UNDEFINED): nothing can be counted
UNKNOWN = Utilization(None, None, "unknown")


def _worse(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


class _ImageSet:
    """A per-dimension set of operand coordinates: an interval ``[lower, upper]`` (a plain
    variable's image, however long), sorted unique values (a NumPy array, or a Python list
    when a small group was counted without NumPy), or only a count."""

    __slots__ = ("count", "interval", "values")

    def __init__(
        self, values: np.ndarray | None, count: int, interval: Interval | None = None
    ) -> None:
        self.values = values
        self.count = count
        self.interval = interval

    def intersect(self, other: _ImageSet) -> _ImageSet | None:
        if self.interval is not None and other.interval is not None:
            both = self.interval.intersect(other.interval)
            size = max(0, both.size())
            return _ImageSet(None, size, both)
        if self.interval is not None and other.values is not None:
            return other._within(self.interval)
        if other.interval is not None and self.values is not None:
            return self._within(other.interval)
        if self.values is None or other.values is None:
            return None
        if type(self.values) is list and type(other.values) is list:
            mine = sorted(set(self.values).intersection(other.values))
            return _ImageSet(mine, len(mine))
        import numpy as np

        common = np.intersect1d(
            np.asarray(self.values, dtype=np.int64),
            np.asarray(other.values, dtype=np.int64),
            assume_unique=True,
        )
        return _ImageSet(common, len(common))

    def _within(self, interval: Interval) -> _ImageSet:
        assert self.values is not None
        lower, upper = interval.lower, interval.upper
        if type(self.values) is list:
            kept = [x for x in self.values if lower <= x <= upper]
            return _ImageSet(kept, len(kept))
        inside = self.values[(self.values >= lower) & (self.values <= upper)]
        return _ImageSet(inside, len(inside))


#: the empty interval
_NOTHING = Interval(0, -1)

#: domain points evaluated at once when a group is enumerated: the memory of one pass is
#: bounded (a few MB) whatever the group's size
_CHUNK = 1 << 16
#: a coordinate set kept as a bitmap up to this extent (bytes); above, as sorted values
_BITMAP_LIMIT = 1 << 23


def _fix_runtime(m: IndexingMap) -> tuple[IndexingMap, bool]:
    if not m.rt_vars:
        return m, False
    fixed = {Var(VarKind.RUNTIME, i): Const(v.bounds.lower) for i, v in enumerate(m.rt_vars)}
    pinned = m.substitute(fixed)
    return IndexingMap(
        pinned.results, pinned.dim_vars, pinned.range_vars, (), pinned.constraints, pinned.state
    ), True


def _groups(m: IndexingMap) -> list[tuple[list[int], set[Var], list[tuple[Expr, Interval]]]]:
    """Partition results (and the constraints touching them) into independent variable groups."""
    parent: dict[Var, Var] = {}

    def find(v: Var) -> Var:
        while parent.setdefault(v, v) != v:
            v = parent[v]
        return v

    def union(vs: Sequence[Var]) -> None:
        vs = list(vs)
        for a in vs[1:]:
            parent[find(a)] = find(vs[0])

    for r in m.results:
        union(sorted(variables(r), key=lambda v: (int(v.kind), v.index)))
    for e, _ in m.constraints:
        union(sorted(variables(e), key=lambda v: (int(v.kind), v.index)))
    groups: dict[Var | None, tuple[list[int], set[Var], list]] = {}
    for i, r in enumerate(m.results):
        vs = variables(r)
        key = find(next(iter(vs))) if vs else None
        groups.setdefault(key, ([], set(), []))[0].append(i)
        groups[key][1].update(vs)
    for e, interval in m.constraints:
        vs = variables(e)
        key = find(next(iter(vs))) if vs else None
        # A constraint on variables no result uses still decides whether the domain is empty.
        group = groups.setdefault(key, ([], set(), []))
        group[2].append((e, interval))
        group[1].update(vs)
    return list(groups.values())


def _group_image(
    m: IndexingMap,
    result_ids: list[int],
    group_vars: set[Var],
    constraints: list,
    operand_dims: Sequence[int],
) -> tuple[list[_ImageSet] | None, str]:
    """Per-result image sets of one group. Returns (None, kind) when only a count is known."""
    bounds = m.bounds()
    order = sorted(group_vars, key=lambda v: (int(v.kind), v.index))
    size = prod(bounds[v].size() for v in order)
    results = [m.results[i] for i in result_ids]
    if len(result_ids) == 1 and not constraints and len(order) == 1 and results[0] == order[0]:
        # A plain variable: its image is its bound clipped to the operand dimension.
        b = bounds[order[0]].intersect(Interval(0, operand_dims[result_ids[0]] - 1))
        size = max(0, b.size())
        # (beyond GROUP_LIMIT only its size is kept, as when the set was enumerated: unions
        # with it are then bounded, not counted)
        interval = (b if size else _NOTHING) if size <= GROUP_LIMIT else None
        return [_ImageSet(None, size, interval)], "exact"
    if size > GROUP_LIMIT:
        from .range_eval import expr_range

        counts = []
        for i, r in zip(result_ids, results, strict=True):
            rng = expr_range(r, bounds).intersect(Interval(0, operand_dims[i] - 1))
            counts.append(_ImageSet(None, rng.size()))
        return counts, "upper_bound"
    limits = [operand_dims[i] for i in result_ids]
    keys = small_group_keys(results, order, bounds, constraints, limits) if is_small(size) else None
    if keys is not None:
        if len(results) == 1:
            distinct = sorted(keys)
            return [_ImageSet(distinct, len(distinct))], "exact"
        return [_ImageSet(None, len(keys))] + [_ImageSet(None, 1)] * (len(results) - 1), "joint"
    import numpy as np

    mags = {v: max(abs(bounds[v].lower), abs(bounds[v].upper)) for v in order}
    # one result: its distinct values; several sharing variables: the distinct tuples, each
    # coded as one integer (the image is not a product; keep the joint count)
    extent = limits[0] if len(results) == 1 else prod(limits)
    seen = _Distinct(extent)
    for columns, n in _box_chunks(bounds, order):
        keep = _feasible(constraints, columns, mags, n)
        if keep is not None:
            columns = {v: c[keep] for v, c in columns.items()}
            n = int(keep.sum())
        if not n:
            continue
        values = [_eval(r, columns, mags, n) for r in results]
        inside = np.ones(n, dtype=bool)
        for value, limit in zip(values, limits, strict=True):
            inside &= (value >= 0) & (value < limit)
        keys = np.zeros(int(inside.sum()), dtype=np.int64)
        for value, limit in zip(values, limits, strict=True):
            keys = keys * limit + value[inside].astype(np.int64)
        seen.add(keys)
    if len(results) == 1:
        distinct = seen.values()
        return [_ImageSet(distinct, len(distinct))], "exact"
    joint = seen.count()
    return [_ImageSet(None, joint)] + [_ImageSet(None, 1)] * (len(results) - 1), "joint"


class _Distinct:
    """The distinct values in ``[0, extent)`` seen over many chunks: a bitmap when the extent
    is modest (at most ``_BITMAP_LIMIT`` bytes), else sorted unique values merged chunk by
    chunk (at most one per enumerated point, themselves bounded by ``GROUP_LIMIT``)."""

    def __init__(self, extent: int) -> None:
        import numpy as np

        self.bitmap = np.zeros(extent, dtype=bool) if extent <= _BITMAP_LIMIT else None
        self.sorted = np.zeros(0, dtype=np.int64)

    def add(self, keys: np.ndarray) -> None:
        import numpy as np

        if self.bitmap is not None:
            self.bitmap[keys] = True
        elif len(keys):
            self.sorted = np.union1d(self.sorted, keys)

    def values(self) -> np.ndarray:
        import numpy as np

        return np.flatnonzero(self.bitmap) if self.bitmap is not None else self.sorted

    def count(self) -> int:
        return int(self.bitmap.sum()) if self.bitmap is not None else len(self.sorted)


def _feasible(
    constraints: list, columns: dict[Var, np.ndarray], mags: dict[Var, int], n: int
) -> np.ndarray | None:
    """Which of ``n`` points meet every constraint (None: no constraint, all of them)."""
    keep = None
    for e, interval in constraints:
        value = _eval(e, columns, mags, n)
        inside = (value >= interval.lower) & (value <= interval.upper)
        keep = inside if keep is None else keep & inside
    return keep


def _group_feasible(m: IndexingMap, group_vars: set[Var], constraints: list) -> tuple[bool, str]:
    """Whether constraints on variables no result uses can hold (unknown: assume yes)."""

    bounds = m.bounds()
    order = sorted(group_vars, key=lambda v: (int(v.kind), v.index))
    size = prod(bounds[v].size() for v in order)
    if size > GROUP_LIMIT:
        return True, "upper_bound"
    kept = small_feasible_count(constraints, order, bounds) if is_small(size) else None
    if kept is not None:
        return kept > 0, "exact"
    mags = {v: max(abs(bounds[v].lower), abs(bounds[v].upper)) for v in order}
    for columns, n in _box_chunks(bounds, order):
        keep = _feasible(constraints, columns, mags, n)
        if keep is None or bool(keep.any()):
            return True, "exact"
    return False, "exact"


def _box_chunks(
    bounds: dict[Var, Interval], order: list[Var]
) -> Iterator[tuple[dict[Var, np.ndarray], int]]:
    """Every point of the box of ``order``'s bounds, ``_CHUNK`` points at a time: the columns
    (one int64 array per variable) and their length."""
    import numpy as np

    sizes = [bounds[v].size() for v in order]
    total = prod(sizes)
    if not order:
        yield {}, 1
        return
    lows = [bounds[v].lower for v in order]
    for start in range(0, total, _CHUNK):
        flat = np.arange(start, min(total, start + _CHUNK), dtype=np.int64)
        coords = np.unravel_index(flat, sizes)
        yield {v: c + lo for v, c, lo in zip(order, coords, lows, strict=True)}, len(flat)


def _eval(e: Expr, columns: dict[Var, np.ndarray], mags: dict[Var, int], n: int) -> np.ndarray:
    import numpy as np

    from .domain import magnitude

    if magnitude(e, mags) >= _SAFE:
        columns = {v: c.astype(object) for v, c in columns.items()}
    value = evaluate(e, columns.__getitem__)
    if isinstance(value, int):
        return np.full(n, value, dtype=np.int64)
    return value


def _image(m: IndexingMap, operand_dims: Sequence[int]) -> tuple[list[_ImageSet] | None, int, str]:
    """Image of one map: per-dimension sets when it is a product, plus its exact/approx count."""

    per_dim: list[_ImageSet | None] = [None] * len(operand_dims)
    kind = "exact"
    total = 1
    product = True
    for result_ids, group_vars, constraints in _groups(m):
        if not result_ids:
            feasible, k = _group_feasible(m, group_vars, constraints)
            kind = _worse(kind, k)
            if not feasible:
                return [_ImageSet(None, 0, _NOTHING) for _ in operand_dims], 0, kind
            continue
        if not group_vars:
            for i in result_ids:
                value = m.results[i]
                v = value.value if type(value) is Const else 0
                inside = 0 <= v < operand_dims[i]
                per_dim[i] = _ImageSet(None, int(inside), Interval(v, v) if inside else _NOTHING)
            continue
        sets, group_kind = _group_image(m, result_ids, group_vars, constraints, operand_dims)
        if group_kind == "joint":
            product = False
            total *= sets[0].count
            continue
        kind = _worse(kind, group_kind)
        for i, s in zip(result_ids, sets, strict=True):
            per_dim[i] = s
    for s in per_dim:
        if s is not None:
            total *= s.count
    return (per_dim if product else None), total, kind  # type: ignore[return-value]


def _iterations(m: IndexingMap) -> tuple[int, str]:
    """Points of the constrained (dims × range vars) domain, counted per constrained group."""

    box = prod(v.bounds.size() for v in m.dim_vars + m.range_vars)
    if not m.constraints or box == 0:
        return box, "exact"
    bounds = m.bounds()
    parent: dict[Var, Var] = {}

    def find(v: Var) -> Var:
        while parent.setdefault(v, v) != v:
            v = parent[v]
        return v

    for e, _ in m.constraints:
        vs = sorted(variables(e), key=lambda v: (int(v.kind), v.index))
        for a in vs[1:]:
            parent[find(a)] = find(vs[0])
    components: dict[Var, tuple[set[Var], list]] = {}
    for e, interval in m.constraints:
        vs = variables(e)
        if not vs:
            if not interval.contains(e.value):  # type: ignore[attr-defined]
                return 0, "exact"
            continue
        root = find(next(iter(vs)))
        comp = components.setdefault(root, (set(), []))
        comp[0].update(vs)
        comp[1].append((e, interval))
    total = box
    kind = "exact"
    for group_vars, constraints in components.values():
        group_box = prod(bounds[v].size() for v in group_vars)
        if group_box > GROUP_LIMIT:
            kind = "upper_bound"
            continue
        order = sorted(group_vars, key=lambda v: (int(v.kind), v.index))
        small = small_feasible_count(constraints, order, bounds) if is_small(group_box) else None
        if small is not None:
            total = total // group_box * small
            continue
        mags = {v: max(abs(bounds[v].lower), abs(bounds[v].upper)) for v in order}
        kept = 0
        for columns, n in _box_chunks(bounds, order):
            keep = _feasible(constraints, columns, mags, n)
            kept += n if keep is None else int(keep.sum())
        total = total // group_box * kept
    return total, kind


def utilization(maps: Sequence[IndexingMap], operand_dims: Sequence[int]) -> Utilization | None:
    """Utilization of an operand of shape ``operand_dims`` read through ``maps`` (a union)."""
    return _utilization(tuple(maps), tuple(operand_dims))


@memo(16384)
def _utilization(
    maps: tuple[IndexingMap, ...], operand_dims: tuple[int, ...]
) -> Utilization | None:
    live = [m for m in maps if not m.is_known_empty]
    if any(m.is_undefined for m in maps):
        return UNKNOWN
    size = prod(operand_dims)
    if size == 0:
        return Utilization(0.0, 0.0, "exact")
    if not live:
        return Utilization(0.0, 0.0, "exact")
    kind = "exact"
    images: list[list[_ImageSet] | None] = []
    counts: list[int] = []
    iterations = 0
    for m in live:
        fixed, had_rt = _fix_runtime(m)
        if had_rt:
            kind = _worse(kind, "estimate")
        per_dim, count, k = _image(fixed, operand_dims)
        kind = _worse(kind, k)
        images.append(per_dim)
        counts.append(count)
        its, k2 = _iterations(fixed)
        kind = _worse(kind, k2)
        iterations += its
    distinct = _union_count(images, counts)
    if distinct is None:
        distinct = min(size, sum(counts))
        kind = _worse(kind, "upper_bound")
    distinct = min(distinct, size)
    return Utilization(distinct / size, iterations / size, kind)


def _union_count(images: list[list[_ImageSet] | None], counts: list[int]) -> int | None:
    if len(images) == 1:
        return counts[0]
    if any(img is None or any(s is None for s in img) for img in images):
        return None
    if len(images) > 8:
        return None
    total = 0
    for r in range(1, len(images) + 1):
        for combo in combinations(images, r):
            size = 1
            for dim_sets in zip(*combo, strict=True):
                acc = dim_sets[0]
                for s in dim_sets[1:]:
                    acc = acc.intersect(s)
                    if acc is None:
                        return None
                size *= acc.count
                if size == 0:
                    break
            total += size if r % 2 else -size
    return total
