"""Evaluating maps on domain points: boxes, chunked exhaustive enumeration, sampled columns,
int64/bigint evaluation, and relation rows for comparing maps with different variables."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import DomainError
from .domain import magnitude
from .expr import (
    Add,
    CeilDiv,
    Const,
    Expr,
    FloorDiv,
    Max,
    Min,
    Mul,
    Var,
)
from .indexing_map import IndexingMap

if TYPE_CHECKING:
    import numpy as np

_SAFE = 2**62  # int64 evaluation is used only when every intermediate stays below this


_SYMBOL_SET_LIMIT = 20_000  # symbol points enumerated per dimension point when sampling relations


_CHUNK = 1 << 17


def _name(v: Var) -> str:
    return f"{v.kind.prefix}{v.index}"


_INFEASIBLE, _UNDEFINED, _FEASIBLE = 0, 1, 2


def _box_of(m: IndexingMap) -> dict[Var, tuple[int, int]]:
    return {v: (iv.lower, iv.upper) for v, iv in m.bounds().items()}


def _hull(
    a: dict[Var, tuple[int, int]], b: dict[Var, tuple[int, int]]
) -> dict[Var, tuple[int, int]]:
    out = dict(a)
    for v, (lo, hi) in b.items():
        if v in out:
            out[v] = (min(out[v][0], lo), max(out[v][1], hi))
        else:
            out[v] = (lo, hi)
    return out


def _box_chunks(
    box: dict[Var, tuple[int, int]], vars_: Sequence[Var]
) -> Iterator[dict[Var, np.ndarray]]:
    """Every point of ``box`` (as int64 columns over ``vars_``), a chunk at a time."""
    import numpy as np

    sizes = [box[v][1] - box[v][0] + 1 for v in vars_]
    total = math.prod(sizes)
    if total <= 0:
        return
    if not vars_:
        yield {}
        return
    for start in range(0, total, _CHUNK):
        flat = np.arange(start, min(total, start + _CHUNK), dtype=np.int64)
        columns: dict[Var, np.ndarray] = {}
        for v, size in zip(reversed(vars_), reversed(sizes), strict=True):
            columns[v] = flat % size + box[v][0]
            flat = flat // size
        yield columns


def _sample_columns(
    boxes: list[dict[Var, tuple[int, int]]], vars_: Sequence[Var], samples: int, seed: int
) -> dict[Var, np.ndarray]:
    """Deterministic sample points: the corners, boundary values and random points.

    Random points are spread over several boxes (the hull of both maps' bounds and each
    map's bounds tightened by its constraints), so thin feasible regions are still hit.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    boxes = [b for b in boxes if all(b[v][0] <= b[v][1] for v in vars_)]
    if not vars_ or not boxes:
        return {v: np.zeros(0, dtype=np.int64) for v in vars_}
    main = boxes[0]
    k = len(vars_)
    rows: list[np.ndarray] = []
    lows = np.array([main[v][0] for v in vars_], dtype=np.int64)
    highs = np.array([main[v][1] for v in vars_], dtype=np.int64)
    if k <= 8:
        corners = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(bool)
    else:
        corners = rng.integers(0, 2, size=(256, k)).astype(bool)
    rows.append(np.where(corners, highs, lows))

    def uniform(box: dict[Var, tuple[int, int]], n: int) -> np.ndarray:
        cols = [
            rng.integers(box[v][0], box[v][1], size=n, endpoint=True, dtype=np.int64) for v in vars_
        ]
        return np.stack(cols, axis=1)

    # Boundary values of each variable, the other variables random.
    for box in boxes:
        for j, v in enumerate(vars_):
            lo, hi = box[v]
            mid = lo + (hi - lo) // 2
            edge = np.array(sorted({lo, min(lo + 1, hi), mid, max(hi - 1, lo), hi}), dtype=np.int64)
            block = uniform(box, len(edge))
            block[:, j] = edge
            rows.append(block)
    used = sum(len(r) for r in rows)
    remaining = max(0, samples - used)
    for i, box in enumerate(boxes):
        share = remaining // len(boxes) + (1 if i < remaining % len(boxes) else 0)
        if share:
            rows.append(uniform(box, share))
    points = np.concatenate(rows, axis=0)[: max(samples, 1 << k if k <= 8 else 256)]
    return {v: points[:, j].copy() for j, v in enumerate(vars_)}


def _column_magnitudes(columns: dict[Var, np.ndarray]) -> dict[Var, int]:
    out = {}
    for v, c in columns.items():
        if c.size == 0:
            out[v] = 0
        else:
            out[v] = max(abs(int(c.min())), abs(int(c.max())))
    return out


def _eval_vector(
    expr: Expr, columns: dict[Var, np.ndarray], n: int, exact: bool
) -> tuple[Any, np.ndarray]:
    """Values of ``expr`` at ``n`` points and a mask of points where it is undefined.

    With ``exact`` the arithmetic is on Python ints in object arrays (no overflow).
    """
    import numpy as np

    undefined = np.zeros(n, dtype=bool)
    memo: dict[Expr, Any] = {}
    cols = {v: c.astype(object) for v, c in columns.items()} if exact else columns

    def ev(node: Expr) -> Any:
        nonlocal undefined
        t = type(node)
        if t is Const:
            return node.value
        if t is Var:
            return cols[node]
        got = memo.get(node)
        if got is not None:
            return got
        if t is Add:
            total: Any = 0
            for term in node.terms:
                total = total + ev(term)
            result = total
        else:
            x, y = ev(node.lhs), ev(node.rhs)
            if t is Mul:
                result = x * y
            elif t is Min:
                result = np.minimum(x, y)
            elif t is Max:
                result = np.maximum(x, y)
            else:
                zero = np.equal(y, 0)
                if np.any(zero):
                    undefined = undefined | np.broadcast_to(zero, (n,))
                    y = np.where(zero, 1, y)
                if t is FloorDiv:
                    result = x // y
                elif t is CeilDiv:
                    result = -((-x) // y)
                else:
                    result = x % y
        memo[node] = result
        return result

    value = ev(expr)
    if not isinstance(value, np.ndarray):
        value = np.full(n, value, dtype=object if exact else np.int64)
    return value, undefined


def _evaluate_map(
    m: IndexingMap, columns: dict[Var, np.ndarray], n: int
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per point: infeasible / undefined / feasible, and each result's value."""
    import numpy as np

    mags = _column_magnitudes(columns)
    inside = np.ones(n, dtype=bool)
    for v, iv in m.bounds().items():
        if v in columns:
            inside &= (columns[v] >= iv.lower) & (columns[v] <= iv.upper)
    violated = np.zeros(n, dtype=bool)
    undefined = np.zeros(n, dtype=bool)
    for expr, iv in m.constraints:
        value, undef = _eval_vector(expr, columns, n, magnitude(expr, mags) >= _SAFE)
        violated |= ~undef & ((value < iv.lower) | (value > iv.upper))
        undefined |= undef
    results = []
    for r in m.results:
        value, undef = _eval_vector(r, columns, n, magnitude(r, mags) >= _SAFE)
        undefined |= undef
        results.append(value)
    state = np.full(n, _FEASIBLE, dtype=np.int8)
    state[undefined] = _UNDEFINED
    state[~inside | violated] = _INFEASIBLE
    return state, results


def _exact_eval(expr: Expr, point: dict[Var, int]) -> int | None:
    """The exact value at one point, or None where a divisor is zero."""
    from .expr import evaluate

    try:
        return int(evaluate(expr, point))
    except DomainError:
        return None


def _describe_at(m: IndexingMap, point: dict[Var, int]) -> list[int | None] | None:
    """The results of ``m`` at ``point``, or None when the point is not in its domain."""
    for v, iv in m.bounds().items():
        if v in point and not iv.contains(point[v]):
            return None
    for expr, iv in m.constraints:
        value = _exact_eval(expr, point)
        if value is not None and not iv.contains(value):
            return None
    return [_exact_eval(r, point) for r in m.results]


RowSet = Any  # sorted unique rows: an int64 array, or a frozenset of tuples (exact ints)


def _relation_rows(
    m: IndexingMap, columns: dict[Var, np.ndarray], key_vars: list[Var]
) -> np.ndarray:
    """One row ``(key..., undefined, results...)`` per point in ``m``'s domain."""
    import numpy as np

    n = len(next(iter(columns.values()))) if columns else 1
    state, values = _evaluate_map(m, columns, n)
    keep = state != _INFEASIBLE
    count = int(keep.sum())
    keys = [columns[v][keep] if v in columns else np.zeros(count, dtype=np.int64) for v in key_vars]
    undefined = (state[keep] == _UNDEFINED).astype(np.int64)
    vals = [np.where(undefined == 1, 0, v[keep]) for v in values]
    return np.stack([*keys, undefined, *vals], axis=1)


def _unique_rows(parts: list[np.ndarray]) -> RowSet:
    import numpy as np

    table = np.concatenate(parts, axis=0) if parts else np.zeros((0, 1), dtype=np.int64)
    if table.dtype == object:
        return frozenset(tuple(int(x) for x in row) for row in table.tolist())
    if len(table) == 0:
        return table
    # Lexicographic sort then drop repeats (np.unique(axis=0) is several times slower).
    table = table[np.lexsort(table.T[::-1])]
    fresh = np.ones(len(table), dtype=bool)
    fresh[1:] = np.any(table[1:] != table[:-1], axis=1)
    return table[fresh]


def _as_set(rows: RowSet) -> frozenset[tuple[int, ...]]:
    if isinstance(rows, frozenset):
        return rows
    return frozenset(tuple(int(x) for x in row) for row in rows.tolist())


def _same_rows(a: RowSet, b: RowSet) -> bool:
    import numpy as np

    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and bool(np.array_equal(a, b))
    return _as_set(a) == _as_set(b)


def _result_set_at(m: IndexingMap, key: dict[Var, int], key_vars: list[Var]) -> RowSet | None:
    """Rows ``(undefined, results...)`` of ``m`` at one key point over all its symbols.

    None when there are too many symbol values to enumerate.
    """
    import numpy as np

    box = _box_of(m)
    for v in key_vars:
        lo, hi = box.get(v, (key[v], key[v]))
        if not lo <= key[v] <= hi:
            return _unique_rows([])
    symbols = [v for v in m.var_list() if v not in key]
    if math.prod(box[v][1] - box[v][0] + 1 for v in symbols) > _SYMBOL_SET_LIMIT:
        return None
    parts = []
    for columns in _box_chunks(box, symbols):
        n = len(next(iter(columns.values()))) if columns else 1
        for v in key_vars:
            if v in box:
                columns[v] = np.full(n, key[v], dtype=np.int64)
        parts.append(_relation_rows(m, columns, []))
    return _unique_rows(parts)


def _shown(rows: frozenset[tuple[int, ...]], limit: int) -> list[list[int] | None]:
    """Result tuples for a report: ``None`` stands for "undefined here"."""
    ordered = sorted(rows)[:limit]
    return [None if row[0] == 1 else list(row[1:]) for row in ordered]


def _relation_counterexample(
    key: dict[Var, int], a: RowSet | None, b: RowSet | None
) -> dict[str, Any]:
    sa = _as_set(a) if a is not None else frozenset()
    sb = _as_set(b) if b is not None else frozenset()
    return {
        "point": {_name(v): x for v, x in key.items()},
        "original": _shown(sa, 16),
        "simplified": _shown(sb, 16),
        "only_original": _shown(sa - sb, 4),
        "only_simplified": _shown(sb - sa, 4),
    }


def _first_difference(rows_a: RowSet, rows_b: RowSet, key_vars: list[Var]) -> dict[str, Any]:
    sa, sb = _as_set(rows_a), _as_set(rows_b)
    k = len(key_vars)
    key_values = min(sa ^ sb)[:k]

    def results_at(rows: frozenset[tuple[int, ...]]) -> frozenset[tuple[int, ...]]:
        return frozenset(r[k:] for r in rows if r[:k] == key_values)

    key = dict(zip(key_vars, key_values, strict=True))
    return _relation_counterexample(key, results_at(sa), results_at(sb))
