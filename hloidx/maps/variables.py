"""Rewrites on a map's variables rather than its expressions: XLA's RemoveUnusedVars and
RescaleSymbols (a range variable used only as a multiple of k becomes one k times smaller)."""

from __future__ import annotations

from .constraints import (
    _ceil_div,
    _merge_mod_constraints,
)
from .expr import (
    Const,
    Expr,
    Mod,
    Var,
    VarKind,
    add,
    dim,
    mul,
    range_var,
    replace_vars,
    rt_var,
    variables,
)
from .indexing_map import Constraint, IndexingMap, MapState, Variable
from .interval import Interval


def rescale_symbols(indexing_map: IndexingMap) -> IndexingMap:
    """Replace a range variable ``s`` constrained by ``s mod c in [r, r]`` with ``s * c + r``.

    The variable's bounds become ``[ceil((lo - r) / c), floor((hi - r) / c)]`` and the mod
    constraint disappears: the relation of the map is unchanged (the values the variable
    enumerates are the same), only the symbol's numbering is.
    """
    if indexing_map.state is not MapState.NORMAL:
        return indexing_map
    current = _merge_mod_constraints(indexing_map)
    if current.state is not MapState.NORMAL:
        return current
    replacements: dict[Var, Expr] = {}
    ranges = list(current.range_vars)
    kept: list[Constraint] = []
    for expr, interval in current.constraints:
        if (
            type(expr) is Mod
            and type(expr.lhs) is Var
            and expr.lhs.kind is VarKind.RANGE
            and type(expr.rhs) is Const
            and interval.is_point
            and expr.lhs not in replacements
        ):
            s, c, r = expr.lhs, expr.rhs.value, interval.lower
            replacements[s] = add(mul(s, c), r)
            old = ranges[s.index]
            ranges[s.index] = Variable(
                Interval(_ceil_div(old.bounds.lower - r, c), (old.bounds.upper - r) // c), old.name
            )
        else:
            kept.append((expr, interval))
    if not replacements:
        return indexing_map
    return IndexingMap(
        tuple(replace_vars(e, replacements) for e in current.results),
        current.dim_vars,
        tuple(ranges),
        current.rt_vars,
        tuple((replace_vars(e, replacements), i) for e, i in kept),
    )


def remove_unused_vars(indexing_map: IndexingMap) -> tuple[IndexingMap, list[bool]]:
    """Drop dimensions and symbols used by no result; also return which were removed.

    Constraints that mention only removed variables go with them when they are
    satisfiable (dropping an unsatisfiable one would make an empty map non-empty; such a
    constraint keeps its variables). The flags list dims, then range vars, then rt vars.
    """
    if indexing_map.state is not MapState.NORMAL:
        return indexing_map, []
    from .domain import constraint_group_is_satisfiable

    used: set[Var] = set(indexing_map.used_vars())
    pending = list(indexing_map.constraints)
    live: list[Constraint] = []
    changed = True
    while changed:
        changed = False
        rest = []
        for expr, interval in pending:
            vs = variables(expr)
            if vs & used:
                used |= vs
                live.append((expr, interval))
                changed = True
            else:
                rest.append((expr, interval))
        pending = rest
    if pending and not constraint_group_is_satisfiable(indexing_map, pending):
        for expr, interval in pending:
            used |= variables(expr)
            live.append((expr, interval))
    renumber: dict[Var, Expr] = {}
    groups: list[list[Variable]] = [[], [], []]
    removed: list[bool] = []
    makers = (dim, range_var, rt_var)
    for kind, group in enumerate(
        (indexing_map.dim_vars, indexing_map.range_vars, indexing_map.rt_vars)
    ):
        for i, v in enumerate(group):
            var = makers[kind](i)
            if var in used:
                renumber[var] = makers[kind](len(groups[kind]))
                groups[kind].append(v)
                removed.append(False)
            else:
                removed.append(True)
    if not any(removed) and len(live) == len(indexing_map.constraints):
        return indexing_map, removed
    renumber = {k: v for k, v in renumber.items() if k != v}
    return (
        IndexingMap(
            tuple(replace_vars(r, renumber) for r in indexing_map.results),
            tuple(groups[0]),
            tuple(groups[1]),
            tuple(groups[2]),
            tuple((replace_vars(e, renumber), i) for e, i in live),
        ),
        removed,
    )
