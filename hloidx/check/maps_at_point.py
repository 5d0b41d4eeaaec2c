"""Evaluating an indexing map at one fixed point of its dimensions, for the sampled oracle check.

The range variables are enumerated as a box with NumPy, runtime variables are fixed to the
values their producers have on the oracle's data (clamped into their feasible range, as
:func:`hloidx.check.oracle.map_relation` does), the domain constraints filter the box, and the
results are the set of indices the map gives at that point. This is the side being checked, so
it may use :mod:`hloidx.maps`; the point-wise oracle it is compared with does not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import HloidxError
from ..maps.expr import VarKind, dim, evaluate, range_var, rt_var, variables
from .point_values import PointUnchecked
from .tensors import Tensor

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from ..hlo.op_rules import RuntimeVar
    from ..maps.indexing_map import IndexingMap

#: most points of the range-variable box enumerated for one map at one point
SYMBOL_LIMIT = 1_000_000

Index = tuple[int, ...]


def _column(value: Any, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(value, dtype=np.int64), (n,))


def map_at(
    m: IndexingMap,
    point: Sequence[int],
    runtime_vars: Sequence[RuntimeVar] | None,
    value_of: Callable[[Instruction], Any],
    limit: int = SYMBOL_LIMIT,
) -> set[Index]:
    """The indices ``m`` gives at dimension values ``point`` (empty outside its domain).

    Raises :class:`PointUnchecked` when the box of range variables is larger than ``limit``,
    when a runtime variable is not described or its value is not known, or when a map is
    undefined.
    """
    if m.is_undefined:
        raise PointUnchecked("an undefined map")
    if m.is_known_empty:
        return set()
    if len(point) != m.num_dims:
        return set()
    for v, x in zip(m.dim_vars, point, strict=True):
        if not v.bounds.lower <= x <= v.bounds.upper:
            return set()
    sizes = [v.bounds.size() for v in m.range_vars]
    n = 1
    for s in sizes:
        n *= s
    if n > limit:
        raise PointUnchecked(f"a map's range variables span {n} points, more than {limit}")
    if n == 0:
        return set()
    columns: dict[Any, np.ndarray] = {dim(i): np.full(n, int(x)) for i, x in enumerate(point)}
    if m.range_vars:
        axes = [np.arange(v.bounds.lower, v.bounds.upper + 1, dtype=np.int64) for v in m.range_vars]
        grids = np.meshgrid(*axes, indexing="ij")
        for i, g in enumerate(grids):
            columns[range_var(i)] = g.reshape(-1)
    keep = np.ones(n, dtype=bool)
    if m.rt_vars:
        keep &= _fix_runtime_vars(m, runtime_vars, value_of, columns, n)
    try:
        for expr, interval in m.constraints:
            value = _column(evaluate(expr, columns.__getitem__), n)
            keep &= (value >= interval.lower) & (value <= interval.upper)
        results = [_column(evaluate(r, columns.__getitem__), n)[keep] for r in m.results]
    except HloidxError as error:
        raise PointUnchecked(f"cannot evaluate a map: {error.message}") from None
    if not results:
        return {()} if keep.any() else set()
    stacked = np.stack(results, axis=1)
    return {tuple(int(x) for x in row) for row in stacked.tolist()}


def _fix_runtime_vars(
    m: IndexingMap,
    runtime_vars: Sequence[RuntimeVar] | None,
    value_of: Callable[[Instruction], Any],
    columns: dict[Any, np.ndarray],
    n: int,
) -> np.ndarray:
    """Put a column per runtime variable into ``columns``; returns the points where every
    producer index is inside its producer (the others cannot be fixed and are dropped, unless
    the domain keeps them: then the point is unchecked)."""
    if runtime_vars is None or len(runtime_vars) != m.num_rt_vars:
        raise PointUnchecked("the map's runtime variables are not described")
    valid = np.ones(n, dtype=bool)
    for k, (rv, var) in enumerate(zip(runtime_vars, m.rt_vars, strict=True)):
        rmap = rv.map
        used = set()
        for r in rmap.results:
            used |= variables(r)
        if any(v.kind == VarKind.RUNTIME for v in used) or rmap.num_dims != m.num_dims:
            raise PointUnchecked(f"runtime variable rt{k} is not a function of this map's indices")
        if any(v.kind == VarKind.RANGE for v in used) and rmap.num_range_vars != m.num_range_vars:
            raise PointUnchecked(f"runtime variable rt{k} uses range variables of another map")
        value = value_of(rv.producer)
        if not isinstance(value, Tensor) or not value.known:
            raise PointUnchecked(f"the value of {rv.producer.name} is not known")
        index = [_column(evaluate(r, columns.__getitem__), n) for r in rmap.results]
        shape = value.values.shape
        if len(index) != len(shape):
            raise PointUnchecked(f"runtime variable rt{k} indexes {rv.producer.name} wrongly")
        inside = np.ones(n, dtype=bool)
        for column, size in zip(index, shape, strict=True):
            inside &= (column >= 0) & (column < size)
        safe = tuple(np.where(inside, c, 0) for c in index)
        raw = value.values[safe].astype(np.int64) if index else np.full(n, int(value.values))
        columns[rt_var(k)] = np.clip(raw, var.bounds.lower, var.bounds.upper)
        valid &= inside
    if not valid.all():
        # points whose runtime values cannot be read: fine only if the domain excludes them
        probe = ~valid
        for expr, interval in m.constraints:
            value = _column(evaluate(expr, columns.__getitem__), n)
            probe &= (value >= interval.lower) & (value <= interval.upper)
        if probe.any():
            raise PointUnchecked("a runtime variable is read outside its producer")
    return valid
