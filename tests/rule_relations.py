"""Relations of a rule's maps, for comparing with the provenance interpreter.

:func:`realise` turns a rule's :class:`OperandIndexing` into a set of (output index, operand
index) pairs by enumerating its maps and keeping only the points whose runtime variables equal
the values the op really uses there.
"""

from __future__ import annotations

import numpy as np

from hloidx.hlo.op_rules import OperandIndexing
from hloidx.maps.domain import evaluate_results, feasible_points
from hloidx.maps.expr import VarKind

Index = tuple[int, ...]
Relation = set[tuple[Index, Index]]


def inverse(relation: Relation) -> Relation:
    return {(b, a) for a, b in relation}


def realise(
    indexing: OperandIndexing, runtime: dict[str, np.ndarray] | None = None, limit: int = 2_000_000
) -> Relation:
    """The union of the maps' relations with every runtime variable fixed to the value the op
    uses at that point: ``runtime[producer name]`` read at the runtime variable's map."""
    out: Relation = set()
    for m in indexing.maps:
        if m.is_known_empty:
            continue
        columns, count = feasible_points(m, limit)
        if count == 0:
            continue
        keep = np.ones(count, dtype=bool)
        for k, rv in enumerate(indexing.runtime_vars):
            values = runtime[rv.producer.name]  # type: ignore[index]
            where = evaluate_results(rv.map, columns, count)
            if where:
                actual = values[tuple(np.asarray(w, dtype=np.int64) for w in where)]
            else:
                actual = np.full(count, int(values.reshape(())), dtype=np.int64)
            keep &= columns[m.var_list()[m.num_dims + m.num_range_vars + k]] == actual
        columns = {v: c[keep] for v, c in columns.items()}
        n = int(keep.sum())
        if n == 0:
            continue
        results = evaluate_results(m, columns, n)
        dims = [columns[v] for v in m.var_list() if v.kind == VarKind.DIM]
        for row in range(n):
            out.add((tuple(int(d[row]) for d in dims), tuple(int(r[row]) for r in results)))
    return out
