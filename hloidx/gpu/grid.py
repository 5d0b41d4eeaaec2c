"""The GPU grid as map variables, and the index arithmetic XLA's emitters build maps with.

Every thread-id map has six dimensions, the thread and block ids (``th_x, th_y, th_z,
bl_x, bl_y, bl_z``), and range variables for a thread's own loops. The emitters here use one
thread dimension (x) and up to two block dimensions (x, y).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from ..maps.expr import Expr, floordiv, mod
from ..maps.indexing_map import IndexingMap, Variable
from ..maps.interval import Interval

THREAD_DIM_NAMES = ("th_x", "th_y", "th_z", "bl_x", "bl_y", "bl_z")


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def grid_map(
    results: Sequence[Expr],
    threads: int,
    blocks: tuple[int, int],
    symbols: Sequence[int | tuple[int, str]] = (),
) -> IndexingMap:
    """A map over ``threads`` x-threads and ``blocks`` (x, y) blocks, with a range variable
    of each size in ``symbols`` (a size, or a size and a name)."""
    sizes = (threads, 1, 1, blocks[0], blocks[1], 1)
    dims = tuple(
        Variable(Interval(0, s - 1), n) for s, n in zip(sizes, THREAD_DIM_NAMES, strict=True)
    )
    syms = tuple(
        Variable(Interval(0, s[0] - 1), s[1]) if isinstance(s, tuple) else Variable.of_size(s)
        for s in symbols
    )
    return IndexingMap(tuple(results), dims, syms)


def delinearize(expr: Expr, sizes: Sequence[int]) -> list[Expr]:
    """XLA's ``DelinearizeInBoundsIndex``: ``expr`` as a row-major index of ``sizes``, the
    first index without a mod."""
    out: list[Expr] = []
    stride = prod(sizes)
    for k, size in enumerate(sizes):
        stride //= size
        part = floordiv(expr, stride) if stride > 1 else expr
        out.append(part if k == 0 else mod(part, size))
    return out


def within(m: IndexingMap, dims: Sequence[int]) -> IndexingMap:
    """``m`` restricted to the points whose results lie inside an array of shape ``dims``."""
    extra = [(r, Interval(0, size - 1)) for r, size in zip(m.results, dims, strict=True)]
    return m.add_constraints(extra)


def split_blocks(blocks: int, limit_x: int) -> tuple[int, int]:
    """Blocks over grid x and y: as many in x as the device allows, the rest in y."""
    y = ceil_div(blocks, limit_x)
    return ceil_div(blocks, y), y
