"""Enumerating a map's domain and relation: a tool for tests and small maps only.

Nothing here runs on a domain larger than the ``limit`` given (default one million points);
asking for more raises :class:`EnumerationLimitError` instead of trying. Evaluation is
vectorised with NumPy int64 when a cheap magnitude bound shows it cannot overflow, and falls
back to exact Python integers (object arrays) otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import EnumerationLimitError
from .expr import Add, Const, Expr, Max, Min, Mod, Mul, Var, evaluate, variables

if TYPE_CHECKING:
    import numpy as np


class MapDomain(Protocol):
    """What enumeration reads of an ``IndexingMap`` (this module sits below the map module,
    which asks it whether a group of constraints can hold)."""

    results: Any
    constraints: Any
    is_known_empty: bool

    def bounds(self) -> Any: ...
    def var_list(self) -> Any: ...
    def box_size(self) -> int: ...


#: ``(expression, interval)``, as in ``IndexingMap.constraints``.
Constraint = tuple[Expr, Any]

DEFAULT_LIMIT = 1_000_000
_SAFE = 2**62


def magnitude(expr: Expr, bound_of: dict[Var, int]) -> int:
    """An upper bound on ``|expr|`` given upper bounds on each variable's magnitude."""
    t = type(expr)
    if t is Const:
        return abs(expr.value)
    if t is Var:
        return bound_of[expr]
    if t is Add:
        return sum(magnitude(x, bound_of) for x in expr.terms)
    a, b = magnitude(expr.lhs, bound_of), magnitude(expr.rhs, bound_of)
    if t is Mul:
        return a * b
    if t is Mod:
        return max(b, 1)
    if t in (Min, Max):
        return max(a, b)
    return a + 1  # floordiv / ceildiv by a divisor of magnitude >= 1


def _bound_magnitudes(indexing_map: MapDomain) -> dict[Var, int]:
    return {v: max(abs(b.lower), abs(b.upper)) for v, b in indexing_map.bounds().items()}


def box_points(
    indexing_map: MapDomain, variables_: Sequence[Var], limit: int
) -> dict[Var, np.ndarray]:
    """Every point of the box spanned by ``variables_`` as one column per variable."""
    bounds = indexing_map.bounds()
    size = 1
    for v in variables_:
        size *= bounds[v].size()
    if size > limit:
        raise EnumerationLimitError(
            f"the domain has {size} points, more than the enumeration limit of {limit}"
        )
    if not variables_:
        return {}
    import numpy as np  # only now: a box over the limit is refused without it

    axes = [np.arange(bounds[v].lower, bounds[v].upper + 1, dtype=np.int64) for v in variables_]
    grids = np.meshgrid(*axes, indexing="ij")
    return {v: g.reshape(-1) for v, g in zip(variables_, grids, strict=True)}


def _evaluate_columns(expr: Expr, columns: dict[Var, np.ndarray], safe: bool, n: int) -> np.ndarray:
    import numpy as np

    if not safe:
        columns = {v: c.astype(object) for v, c in columns.items()}
    value = evaluate(expr, columns.__getitem__)
    if isinstance(value, int):
        return np.full(n, value, dtype=np.int64 if safe else object)
    return value


def feasible_points(
    indexing_map: MapDomain, limit: int = DEFAULT_LIMIT
) -> tuple[dict[Var, np.ndarray], int]:
    """Columns of every domain point that satisfies the constraints, and their count."""
    import numpy as np

    all_vars = indexing_map.var_list()
    columns = box_points(indexing_map, all_vars, limit)
    n = indexing_map.box_size()
    if n == 0 or indexing_map.is_known_empty:
        return {v: np.zeros(0, dtype=np.int64) for v in all_vars}, 0
    mags = _bound_magnitudes(indexing_map)
    keep = np.ones(n, dtype=bool)
    for expr, interval in indexing_map.constraints:
        safe = magnitude(expr, mags) < _SAFE
        value = _evaluate_columns(expr, columns, safe, n)
        keep &= (value >= interval.lower) & (value <= interval.upper)
    columns = {v: c[keep] for v, c in columns.items()}
    return columns, int(keep.sum())


def evaluate_results(
    indexing_map: MapDomain, columns: dict[Var, np.ndarray], n: int
) -> list[np.ndarray]:
    mags = _bound_magnitudes(indexing_map)
    return [
        _evaluate_columns(r, columns, magnitude(r, mags) < _SAFE, n) for r in indexing_map.results
    ]


def relation(
    indexing_map: MapDomain,
    limit: int = DEFAULT_LIMIT,
    with_runtime: bool = False,
) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The set of ``(dims, results)`` pairs over the feasible domain.

    With ``with_runtime`` the key is ``dims + rts`` instead, so a map with runtime variables
    can be compared for each fixed choice of runtime values.
    """
    import numpy as np

    columns, n = feasible_points(indexing_map, limit)
    if n == 0:
        return set()
    key_vars = [v for v in indexing_map.var_list() if v.kind == 0]
    if with_runtime:
        key_vars += [v for v in indexing_map.var_list() if v.kind == 2]
    keys = (
        np.stack([columns[v] for v in key_vars], axis=1)
        if key_vars
        else np.zeros((n, 0), dtype=np.int64)
    )
    results = evaluate_results(indexing_map, columns, n)
    values = np.stack(results, axis=1) if results else np.zeros((n, 0), dtype=np.int64)
    return {
        (tuple(int(x) for x in k), tuple(int(x) for x in r))
        for k, r in zip(keys.tolist(), values.tolist(), strict=True)
    }


def constraint_group_is_satisfiable(
    indexing_map: MapDomain, constraints: Sequence[Constraint], limit: int = 100_000
) -> bool:
    """Whether some point of the box satisfies all ``constraints`` (False when unsure)."""
    involved: set[Var] = set()
    for expr, _ in constraints:
        involved |= variables(expr)
    order = sorted(involved, key=lambda v: (int(v.kind), v.index))
    try:
        columns = box_points(indexing_map, order, limit)
    except EnumerationLimitError:
        return False
    import numpy as np  # only now: a box over the limit is refused without it

    n = 1
    for v in order:
        n *= indexing_map.bounds()[v].size()
    if n == 0:
        return False
    mags = _bound_magnitudes(indexing_map)
    keep = np.ones(n, dtype=bool)
    for expr, interval in constraints:
        value = _evaluate_columns(expr, columns, magnitude(expr, mags) < _SAFE, n)
        keep &= (value >= interval.lower) & (value <= interval.upper)
    return bool(keep.any())
