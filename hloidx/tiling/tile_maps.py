"""A :class:`TileFormula` as maps, symbolically (XLA's convention) or for given tile sizes.

Symbolic (``--tile symbolic``), as XLA's ``SymbolicTile`` prints it: the three maps go from
the output tile sizes (``d_i`` in ``[1, extent_i]``) to the first tile's offsets, sizes and
strides. Held (looped) output dims add a range variable ``s`` per dim, the position inside the
tile, with ``s < d`` as a constraint.

Concrete (``--tile 16,64``): the offset map goes from the tile index (``d_i`` in
``[0, tiles_i - 1]``) to the offsets of that tile; sizes and strides are constants. Held dims
add a range variable in ``[0, T_i - 1]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..maps.expr import Expr, Var, VarKind, const, dim
from ..maps.indexing_map import IndexingMap, Variable
from ..maps.interval import Interval
from ..maps.simplify import simplify
from ..maps.traversal import evaluate, replace_vars
from .symbolic_tile import TileFormula


@dataclass(frozen=True)
class TileMaps:
    offset_map: IndexingMap
    size_map: IndexingMap
    stride_map: IndexingMap
    #: concrete only: the numbers (None when symbolic)
    sizes: tuple[int, ...] | None = None
    strides: tuple[int, ...] | None = None
    #: how many rectangles make one tile (1 without held dims); an expression when symbolic
    count: int | Expr = 1


def _held(formula: TileFormula) -> list[int]:
    return sorted(formula.looped)


def symbolic_maps(formula: TileFormula) -> TileMaps:
    extents = formula.extents
    size_vars = tuple(Variable(Interval(1, max(1, n))) for n in extents)
    held = _held(formula)
    positions: dict[Var, Expr] = {}
    for i in range(len(extents)):
        positions[dim(i)] = const(0)
    loop_vars = []
    constraints = []
    for k, i in enumerate(held):
        s = Var(VarKind.RANGE, k)
        positions[dim(i)] = s
        loop_vars.append(Variable(Interval(0, max(0, extents[i] - 1))))
        constraints.append((dim(i) - s, Interval(1, max(1, extents[i]))))
    offsets = [replace_vars(t.base, positions) + t.adjust for t in formula.dims]
    offset_map = IndexingMap(
        tuple(offsets), size_vars, tuple(loop_vars), formula.rt_vars, tuple(constraints)
    )
    size_map = IndexingMap(tuple(t.size for t in formula.dims), size_vars)
    stride_map = IndexingMap(tuple(t.stride for t in formula.dims), size_vars)
    count: Expr = const(1)
    for i in held:
        count = count * dim(i)
    return TileMaps(
        simplify(offset_map, remove_unused=False),
        simplify(size_map),
        simplify(stride_map),
        count=count,
    )


def _value(expr: Expr, sizes: tuple[int, ...]) -> int:
    return int(evaluate(expr, {dim(i): s for i, s in enumerate(sizes)}))


def conditions_hold(formula: TileFormula, sizes: tuple[int, ...]) -> bool:
    return formula.conditions.holds({dim(i): s for i, s in enumerate(sizes)})


def concrete_maps(formula: TileFormula, sizes: tuple[int, ...]) -> TileMaps:
    """The maps for tile sizes ``sizes`` (the caller checked :func:`conditions_hold`)."""
    extents = formula.extents
    tiles = tuple(
        Variable(Interval(0, max(0, -(-n // t) - 1))) for n, t in zip(extents, sizes, strict=True)
    )
    held = _held(formula)
    positions: dict[Var, Expr] = {dim(i): dim(i) * sizes[i] for i in range(len(extents))}
    loop_vars = []
    for k, i in enumerate(held):
        positions[dim(i)] = dim(i) * sizes[i] + Var(VarKind.RANGE, k)
        loop_vars.append(Variable(Interval(0, sizes[i] - 1)))
    offsets = [replace_vars(t.base, positions) + _value(t.adjust, sizes) for t in formula.dims]
    size_values = tuple(_value(t.size, sizes) for t in formula.dims)
    stride_values = tuple(_value(t.stride, sizes) for t in formula.dims)
    offset_map = IndexingMap(tuple(offsets), tiles, tuple(loop_vars), formula.rt_vars)
    return TileMaps(
        simplify(offset_map),
        IndexingMap(tuple(const(v) for v in size_values), tiles),
        IndexingMap(tuple(const(v) for v in stride_values), tiles),
        sizes=size_values,
        strides=stride_values,
        count=prod(sizes[i] for i in held),
    )
