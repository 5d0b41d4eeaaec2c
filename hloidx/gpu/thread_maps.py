"""Thread-id maps: from ``(th_x, th_y, th_z, bl_x, bl_y, bl_z)[chunk_id, unroll_id]`` to the
output element a GPU thread writes and to the operand elements it reads.

``thread_maps`` asks the fusion's emitter model (``emitters.emitter_for``) to fill them in;
the maps every emitter builds with (XLA's default work-item map, reads composed through the
fusion's output-to-input maps) are in ``thread_reads`` and re-exported here. Composed further
with an operand's layout they give linear addresses (``--physical``, ``to_physical``); the
warp view lists what one warp reads.
"""

from __future__ import annotations

import re
from math import prod
from typing import TYPE_CHECKING

from ..hlo.rules.shape_ops import minor_to_major
from ..maps.expr import Const, Expr, add, dim, floordiv, mod, mul
from ..maps.indexing_map import IndexingMap, MapState, Variable, compose
from ..maps.interval import Interval
from .emitters import emitter_for
from .thread_reads import (
    SYMBOL_NAMES,
    THREAD_SIMPLIFY,
    ThreadMaps,
    ThreadRead,
    add_not_modelled,
    default_thread_map,
    linear_thread_index,
    raw_thread_map,
    simplify_thread_map,
    thread_variables,
)

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape
    from .emitter_choice import EmitterChoice
    from .launch_config import LaunchConfig

__all__ = [
    "SYMBOL_NAMES",
    "THREAD_SIMPLIFY",
    "WARP_SIZE",
    "ThreadMaps",
    "ThreadRead",
    "default_thread_map",
    "linear_thread_index",
    "physical_linear_map",
    "raw_thread_map",
    "simplify_thread_map",
    "thread_maps",
    "thread_variables",
    "to_physical",
    "warp_operand_elements",
]


def _first_level_tile(shape: Shape) -> tuple[int, ...] | bool:
    """The layout's tile ``T(8,128)``: its sizes; ``()`` without one; False when hloidx does
    not model it (sub-tiles ``T(8,128)(2,1)``, or more tile dims than the shape has)."""
    tiling = shape.layout.tiling if shape.layout is not None else ""
    match = re.search(r"T\(([\d,\s]+)\)", tiling)
    if match is None:
        return ()
    if tiling[match.end() : match.end() + 1] == "(":
        return False
    tile = tuple(int(x) for x in match.group(1).split(",") if x.strip())
    return tile if len(tile) <= shape.rank else False


def physical_linear_map(shape: Shape) -> IndexingMap:
    """Logical index → linear offset in memory through the shape's layout, including a
    single-level tile (``{1,0:T(8,128)}``: tiles stored one after another, each row-major,
    dims padded to whole tiles). Sub-tiled layouts give UNDEFINED (not modelled)."""
    tile = _first_level_tile(shape)
    if tile is False:
        return IndexingMap.undefined()
    order = list(reversed(minor_to_major(shape)))  # physical, major to minor
    k = len(tile)
    outer = order[: len(order) - k]
    tiled = order[len(order) - k :]
    digits: list[tuple[Expr, int]] = [(dim(d), shape.dims[d]) for d in outer]
    digits += [
        (floordiv(dim(d), t), -(-shape.dims[d] // t)) for d, t in zip(tiled, tile, strict=True)
    ]
    digits += [(mod(dim(d), t), t) for d, t in zip(tiled, tile, strict=True)]
    stride = 1
    terms = []
    for expr, size in reversed(digits):
        terms.append(mul(expr, stride))
        stride *= size
    return IndexingMap(
        (add(*terms) if terms else Const(0),),
        tuple(Variable(Interval(0, s - 1)) for s in shape.dims),
    )


def thread_maps(
    fusion: Instruction, choice: EmitterChoice, launch: LaunchConfig | None
) -> ThreadMaps:
    """Thread-id maps of every output and operand of ``fusion`` under ``launch``."""
    result = ThreadMaps(fusion, choice, launch, operands=[[] for _ in fusion.operands])
    emitter = emitter_for(choice)
    if launch is None or emitter is None:
        result.notes.append(
            f"thread-id maps of XLA's {choice.label} emitter are not modelled by hloidx"
        )
        add_not_modelled(result)
        return result
    emitter.fill_thread_maps(result)
    return result


def to_physical(read_map: IndexingMap, operand_shape: Shape) -> IndexingMap:
    """A thread → logical operand index map continued to linear memory offsets (UNDEFINED
    through a layout hloidx does not model)."""
    if read_map.state is not MapState.NORMAL or not operand_shape.dims:
        return read_map
    layout = physical_linear_map(operand_shape)
    if layout.is_undefined:
        return layout
    return simplify_thread_map(compose(read_map, layout))


WARP_SIZE = 32


def _unravel(index: int, sizes: tuple[int, ...]) -> list[int]:
    out = []
    for size in sizes:
        out.append(index % size)
        index //= size
    return out


def _warp_points(
    threads: ThreadMaps, m: IndexingMap, block: int, warp: int
) -> set[tuple[int, ...]]:
    """What ``m`` (a thread-id map) relates the threads of one warp to."""
    from ..maps.domain import relation

    launch = threads.launch
    assert launch is not None
    per_block = prod(launch.threads_per_block)
    block_ids = _unravel(block, launch.blocks)
    points: set[tuple[int, ...]] = set()
    for t in range(warp * WARP_SIZE, min((warp + 1) * WARP_SIZE, per_block)):
        ids = _unravel(t, launch.threads_per_block) + block_ids
        pinned = m.restrict_dims([Interval(i, i) for i in ids])
        if not pinned.is_known_empty:
            points |= {target for _, target in relation(pinned, 1_000_000)}
    return points


def _check_warp(threads: ThreadMaps, block: int, warp: int) -> None:
    from ..errors import HloidxError

    launch = threads.launch
    if launch is None:
        raise HloidxError(
            f"the thread maps of the {threads.choice.kind} emitter are not modelled: no warp view"
        )
    per_block = prod(launch.threads_per_block)
    if not 0 <= block < prod(launch.blocks):
        raise HloidxError(f"block {block} is not in [0, {prod(launch.blocks) - 1}]")
    if not 0 <= warp * WARP_SIZE < per_block:
        raise HloidxError(f"warp {warp} is not in [0, {-(-per_block // WARP_SIZE) - 1}]")


def warp_operand_elements(
    threads: ThreadMaps, block: int, warp: int, operand: int
) -> list[tuple[int, ...]]:
    """The elements of fusion operand ``operand`` that the threads of warp ``warp`` of block
    ``block`` read (block and thread ids linearised x-fastest, as CUDA numbers them)."""
    from ..errors import HloidxError

    _check_warp(threads, block, warp)
    points: set[tuple[int, ...]] = set()
    for read in threads.operands[operand]:
        for m in read.maps:
            if m.is_undefined:
                raise HloidxError(f"operand {operand}'s thread map is UNDEFINED: no warp view")
            if m.rt_vars:
                raise HloidxError(
                    f"operand {operand} is read at runtime offsets: its warp view is not drawn"
                )
            points |= _warp_points(threads, m, block, warp)
    return sorted(points)
