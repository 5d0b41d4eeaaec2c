"""Exact per-element read counts of a map too large to enumerate whole, when it separates.

Variables that share a result or a constraint are one group; a map's domain is the product of
its groups' domains. Each result depends on one group alone, so the count of an operand element
is the product, over the groups, of how many points of each group give that element's indices
along the group's results (a group with no result multiplies every count by its number of
feasible points). Each group is enumerated on its own: the work is the sum of the groups'
sizes, not their product, and the counts are exact (a broadcast's operand read by a million
output rows is counted as a million reads per element, not sampled).
"""

from __future__ import annotations

from math import prod

import numpy as np

from ..maps.expr import Var, variables
from ..maps.indexing_map import IndexingMap


def separable_counts(m: IndexingMap, shape: tuple[int, ...], budget: int) -> np.ndarray | None:
    """The per-element read counts of ``m`` (no runtime variables) over an operand of
    ``shape``, or None when ``m`` does not separate into groups of at most ``budget`` points
    each (then only a sample can count it)."""
    if m.rt_vars or len(m.results) != len(shape):
        return None
    result_vars = [variables(r) for r in m.results]
    constraint_vars = [variables(e) for e, _ in m.constraints]
    groups = _groups(m.var_list(), [*result_vars, *constraint_vars])
    bounds = m.bounds()
    if any(prod(bounds[v].size() for v in g) > budget for g in groups):
        return None
    counts = np.ones(shape, dtype=np.float64)
    grouped_results: set[int] = set()
    for group in groups:
        axes = [k for k, used in enumerate(result_vars) if used and used <= group]
        grouped_results.update(axes)
        constraints = [
            c for c, used in zip(m.constraints, constraint_vars, strict=True) if used <= group
        ]
        hist = _group_histogram(m, group, axes, constraints, shape)
        counts = counts * hist.reshape([shape[k] if k in axes else 1 for k in range(len(shape))])
    for k, used in enumerate(result_vars):
        if not used:  # a constant index: only that slice is read
            value = int(m.results[k].value)  # type: ignore[attr-defined]
            mask = np.zeros(shape[k], dtype=np.float64)
            if 0 <= value < shape[k]:
                mask[value] = 1.0
            counts = counts * mask.reshape([shape[k] if j == k else 1 for j in range(len(shape))])
    return counts


def _groups(all_vars: list[Var], links: list[frozenset[Var]]) -> list[frozenset[Var]]:
    """The variables joined by sharing an expression (connected components)."""
    parent = {v: v for v in all_vars}

    def root(v: Var) -> Var:
        while parent[v] is not v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for used in links:
        first, *rest = list(used) or [None]
        for v in rest:
            parent[root(v)] = root(first)  # type: ignore[arg-type]
    components: dict[Var, set[Var]] = {}
    for v in all_vars:
        components.setdefault(root(v), set()).add(v)
    return [frozenset(c) for c in components.values()]


def _group_histogram(
    m: IndexingMap,
    group: frozenset[Var],
    axes: list[int],
    constraints: list,
    shape: tuple[int, ...],
) -> np.ndarray:
    """How many feasible points of ``group`` reach each index along ``axes`` (a scalar count
    when the group has no result)."""
    from ..maps.domain import _SAFE, _bound_magnitudes, _evaluate_columns, magnitude

    order = sorted(group, key=lambda v: (int(v.kind.value), v.index))
    bounds = m.bounds()
    sizes = [bounds[v].size() for v in order]
    n = prod(sizes)
    coords = np.unravel_index(np.arange(n, dtype=np.int64), sizes) if order else ()
    columns = {v: c + bounds[v].lower for v, c in zip(order, coords, strict=True)}
    mags = _bound_magnitudes(m)
    keep = np.ones(n, dtype=bool)
    for expr, interval in constraints:
        value = np.asarray(_evaluate_columns(expr, columns, magnitude(expr, mags) < _SAFE, n))
        keep &= (value >= interval.lower) & (value <= interval.upper)
    hist = np.zeros([shape[k] for k in axes], dtype=np.float64)
    if not axes:
        return np.asarray(float(keep.sum()))
    index = []
    for k in axes:
        expr = m.results[k]
        values = np.asarray(_evaluate_columns(expr, columns, magnitude(expr, mags) < _SAFE, n))
        values = np.broadcast_to(values, (n,)).astype(np.int64)
        keep &= (values >= 0) & (values < shape[k])
        index.append(values)
    np.add.at(hist, tuple(v[keep] for v in index), 1.0)
    return hist
