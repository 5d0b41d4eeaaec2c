"""How many times each element of an operand is read, from its output-to-input maps.

The count of an element is the number of (map, domain point) pairs whose result is that
element: the same reads that ``utilization`` averages (so the counts sum to ``reads`` times the
operand's size). A domain is enumerated only up to a budget; beyond it a map whose variables
separate into small independent groups is still counted exactly (:mod:`.separable`), and any
other map's counts come from a sample of domain points, scaled, and say so. Runtime variables
are fixed at their lower bound, as utilization does (an estimate, labelled so). An UNDEFINED
map gives no counts at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from math import prod

import numpy as np

from ..maps.domain import evaluate_results
from ..maps.expr import Const, Var, VarKind
from ..maps.indexing_map import IndexingMap
from ..maps.interval import Interval
from .separable import separable_counts

#: domain points enumerated exactly per map; beyond, sampled
ENUMERATION_BUDGET = 2_000_000
SAMPLE_POINTS = 200_000
#: operand elements counted one by one (8 bytes each: 16 MB); a larger operand has no counts,
#: and says why
MAX_COUNTED_ELEMENTS = 1 << 21
#: domain points evaluated at once: the memory of one pass is a few MB whatever the domain
_CHUNK = 1 << 16


@dataclass
class ReadCounts:
    """Per-element read counts of an operand (``counts.shape`` is the operand's shape)."""

    counts: np.ndarray | None  # float64 (scaled samples are not whole); None when unknown
    kind: str  # "exact", "estimate" (runtime variables fixed), "sampled", "unknown"
    note: str = ""

    @property
    def is_unknown(self) -> bool:
        return self.counts is None


def read_counts(
    maps: list[IndexingMap],
    shape: tuple[int, ...],
    *,
    point: tuple[int, ...] | None = None,
    region: tuple[tuple[int, int], ...] | None = None,
    budget: int = ENUMERATION_BUDGET,
    seed: int = 0,
) -> ReadCounts:
    """Counts over the whole output, or, with ``point``, of the reads of that one output
    element (``point`` fixes the map's dimensions), or with ``region`` (an inclusive box of
    output indices, e.g. one tile) of the reads of the elements inside it."""
    if any(m.is_undefined for m in maps):
        return ReadCounts(None, "unknown", "read through an op without an indexing rule")
    if prod(shape) > MAX_COUNTED_ELEMENTS:
        return ReadCounts(
            None,
            "unknown",
            f"the operand has {prod(shape):,} elements, more than the "
            f"{MAX_COUNTED_ELEMENTS:,} a picture counts one by one",
        )
    counts = np.zeros(shape, dtype=np.float64)
    kind, notes = "exact", []
    for m in maps:
        if m.is_known_empty:
            continue
        if point is not None:
            m = _at_point(m, point)
            if m.is_known_empty:
                continue
        if region is not None:
            m = _in_region(m, region)
            if m.is_known_empty:
                continue
        if m.rt_vars:
            m = _fix_runtime(m)
            kind = "estimate"
            notes.append("runtime variables at their lower bounds")
        if m.box_size() <= budget:
            chunks, weight = _box_chunks(m), 1.0
        elif (exact := separable_counts(m, shape, budget)) is not None:
            counts += exact
            continue
        else:
            columns, n, weight = _sample(m, seed)
            chunks = iter([(columns, n)])
            kind = "sampled" if kind == "exact" else kind
            notes.append(f"a sample of {n:,} domain points, scaled by {weight:.3g}")
        for columns, n in chunks:
            _add_reads(counts, m, columns, n, weight, shape)
    return ReadCounts(counts, kind, "; ".join(dict.fromkeys(notes)))


def _add_reads(
    counts: np.ndarray,
    m: IndexingMap,
    columns: dict[Var, np.ndarray],
    n: int,
    weight: float,
    shape: tuple[int, ...],
) -> None:
    """Count the reads of ``n`` feasible domain points of ``m`` into ``counts``."""
    if n == 0:
        return
    results = evaluate_results(m, columns, n)
    index = tuple(np.asarray(r, dtype=np.int64) for r in results)
    inside = np.ones(n, dtype=bool)
    for axis, values in enumerate(index):
        inside &= (values >= 0) & (values < shape[axis])
    index = tuple(v[inside] for v in index)
    if len(shape) == 0:
        counts += weight * int(inside.sum())
    else:
        np.add.at(counts, index, weight)


def _box_chunks(m: IndexingMap) -> Iterator[tuple[dict[Var, np.ndarray], int]]:
    """The feasible points of ``m``'s box, ``_CHUNK`` box points at a time."""
    variables = m.var_list()
    if m.is_known_empty or m.box_size() == 0:
        return
    bounds = m.bounds()
    sizes = [bounds[v].size() for v in variables]
    total = prod(sizes)
    if not variables:
        yield {}, 1 if _keep({}, m, 1).all() else 0
        return
    for start in range(0, total, _CHUNK):
        flat = np.arange(start, min(total, start + _CHUNK), dtype=np.int64)
        coords = np.unravel_index(flat, sizes)
        columns = {v: c + bounds[v].lower for v, c in zip(variables, coords, strict=True)}
        keep = _keep(columns, m, len(flat))
        yield {v: c[keep] for v, c in columns.items()}, int(keep.sum())


def _keep(columns: dict[Var, np.ndarray], m: IndexingMap, n: int) -> np.ndarray:
    """Which of ``n`` points meet ``m``'s constraints."""
    from ..maps.domain import _SAFE, _bound_magnitudes, _evaluate_columns, magnitude

    keep = np.ones(n, dtype=bool)
    mags = _bound_magnitudes(m)
    for expr, interval in m.constraints:
        safe = magnitude(expr, mags) < _SAFE
        value = np.asarray(_evaluate_columns(expr, columns, safe, n))
        keep &= (value >= interval.lower) & (value <= interval.upper)
    return keep


def _at_point(m: IndexingMap, point: tuple[int, ...]) -> IndexingMap:
    """``m`` with each dimension pinned to ``point`` (its bounds a single value)."""
    if len(point) != m.num_dims:
        raise ValueError(f"an output element has {m.num_dims} indices, got {len(point)}")
    for k, (value, var) in enumerate(zip(point, m.dim_vars, strict=True)):
        if not var.bounds.lower <= value <= var.bounds.upper:
            raise ValueError(
                f"index {value} of dimension {k} is outside [{var.bounds.lower}, "
                f"{var.bounds.upper}]"
            )
    return m.restrict_dims([Interval(value, value) for value in point])


def _in_region(m: IndexingMap, region: tuple[tuple[int, int], ...]) -> IndexingMap:
    """``m`` with each dimension narrowed to ``region`` (inclusive bounds)."""
    if len(region) != m.num_dims:
        raise ValueError(f"the output has {m.num_dims} dimensions, the region {len(region)}")
    return m.restrict_dims([Interval(lo, hi) for lo, hi in region])


def _fix_runtime(m: IndexingMap) -> IndexingMap:
    fixed = {Var(VarKind.RUNTIME, i): Const(v.bounds.lower) for i, v in enumerate(m.rt_vars)}
    pinned = m.substitute(fixed)
    return IndexingMap(
        pinned.results, pinned.dim_vars, pinned.range_vars, (), pinned.constraints, pinned.state
    )


def _sample(m: IndexingMap, seed: int) -> tuple[dict[Var, np.ndarray], int, float]:
    """Uniform domain points of the box, those meeting the constraints kept; the weight that
    scales their counts to the whole box."""
    rng = np.random.default_rng(seed)
    columns: dict[Var, np.ndarray] = {}
    for var in m.var_list():
        bounds = m.bounds()[var]
        columns[var] = rng.integers(bounds.lower, bounds.upper + 1, size=SAMPLE_POINTS)
    keep = np.ones(SAMPLE_POINTS, dtype=bool)
    from ..maps.domain import _evaluate_columns

    for expr, interval in m.constraints:
        value = np.asarray(_evaluate_columns(expr, columns, True, SAMPLE_POINTS))
        keep &= (value >= interval.lower) & (value <= interval.upper)
    columns = {v: c[keep] for v, c in columns.items()}
    return columns, int(keep.sum()), m.box_size() / SAMPLE_POINTS


def total(counts: ReadCounts) -> float:
    return float(counts.counts.sum()) if counts.counts is not None else float("nan")


def size(shape: tuple[int, ...]) -> int:
    return prod(shape)
