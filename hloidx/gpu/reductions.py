"""XLA:GPU's reduction emitters: their launch parameters and thread-id maps.

The facts come from XLA's ``reduction.cc`` (``RowReductionFusion``,
``MultiRowReductionFusion::TryCreate``, ``ColumnReductionFusion``,
``SmallColumnReductionFusion``, ``CreateReductionFusion``) and ``reduction_base.cc``
(``GetVectorSizeForMlir``). A reduction is seen as XLA sees it, ``[a, b, c]`` in physical
order: a row reduction reduces ``a`` and ``c`` and keeps ``b``; a column reduction reduces
``b`` and keeps ``a`` and ``c``.

Each emitter has a map from the thread ids to the element of the normalised input it reads
(``[a, b, c / v, v]`` for rows, ``[a, b, c]`` otherwise) and to the element of the normalised
output it writes. Reductions whose ``[a, b, c]`` views agree share the emitter's parameters
(XLA's condition for fusing them); side outputs are written with the input's map, and
independent groups of roots (``reduction_groups``) run on their own ``blockIdx.y``, as in
XLA's ``ReductionFusion``. With one group the grid is not split in y unless the blocks
exceed the device's x limit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import TYPE_CHECKING

from ..errors import HloidxError
from ..hlo.element_types import element_bits
from ..hlo.fusion import body_of, parameter_cells
from ..hlo.ir import Layout, Shape
from ..hlo.rules.shape_ops import bitcast_map, minor_to_major
from ..maps.expr import Const, Expr, add, dim, floordiv, mod, mul, range_var
from ..maps.indexing_map import IndexingMap, compose
from ..maps.interval import Interval
from .emitter_choice import EmitterChoice, ReductionDimensions, find_hero, reduction_dimensions
from .grid import ceil_div, delinearize, grid_map, split_blocks, within
from .launch_config import NO_OVERRIDES, LaunchConfig, Overrides, tiled_overrides
from .reduction_groups import reduction_groups
from .thread_reads import add_reads, simplify_thread_map

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .devices import DeviceProfile
    from .thread_reads import ThreadMaps

#: XLA's kTileSize (column reductions) and the warp size
TILE = 32
WARP = 32
#: RowReductionFusion: elements of the minor reduced dimension per thread (16, doubled once)
ROW_ELEMENTS_PER_THREAD = 32
#: XLA's MinThreadsXRowReduction
MIN_THREADS_X_ROW_REDUCTION = 1024
#: XLA's kThreadsPerBlockTarget
THREADS_PER_BLOCK_TARGET = 256


def _round_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


@dataclass(frozen=True)
class ReductionPlan:
    """The parameters one of XLA's reduction emitters chooses for a fusion."""

    detail: str  # "row", "multi-row", "column" or "small column"
    dims: ReductionDimensions
    num_threads: tuple[int, ...]
    num_blocks: tuple[int, ...]
    gpu_blocks: tuple[int, int]
    vector_size: int
    input_shape: tuple[int, ...]
    tile_sizes_per_thread: tuple[int, ...]
    tile_sizes_per_block: tuple[int, ...] = ()
    shared_rows: int = 0
    loop_size: int = 0
    heroes: tuple[Instruction, ...] = ()
    #: roots that are no reduction (XLA's side outputs): written where the input is read
    side_outputs: tuple[Instruction, ...] = ()
    #: the group (blockIdx.y) of each hero and side output, and how many groups there are
    hero_groups: tuple[int, ...] = ()
    side_output_groups: tuple[int, ...] = ()
    num_groups: int = 1

    @property
    def threads_per_block(self) -> int:
        return prod(self.num_threads)

    @property
    def output_shape(self) -> tuple[int, ...]:
        a, b, c = self.dims.dimensions
        return (b,) if self.dims.is_row_reduction else (a, c)


def _bits_of(shapes: list[Shape]) -> int | None:
    bits = [element_bits(s.element_type) for s in shapes if s.is_array]
    return min(bits) if bits else None


def _io_bits(fusion: Instruction) -> tuple[int | None, int]:
    """XLA's smallest input and output element sizes (bits) of a fusion."""
    inputs = _bits_of([o.shape for o in fusion.operands])
    outputs = _bits_of(list(fusion.shape.leaves())) or 32
    return inputs, outputs


def vector_size(
    fusion: Instruction, heroes: tuple[Instruction, ...], minor: int, threads: int
) -> int:
    """XLA's ``GetVectorSizeForMlir``."""
    if minor % 2 or threads * 2 > minor:
        return 1
    for hero in heroes:
        if any(o.shape.element_type.startswith("c") for o in hero.operands if o.shape.is_array):
            return 1
    smallest_input, _ = _io_bits(fusion)
    if smallest_input is not None and smallest_input >= 32:
        return 2
    if threads * 4 > minor:
        return 2
    return 4 if minor % 4 == 0 else 2


def split_grid_x(blocks: int, device: DeviceProfile) -> tuple[int, int]:
    return split_blocks(blocks, device.block_dim_limit_x)


def _row_plan(fusion, heroes, dims, device, overrides: Overrides = NO_OVERRIDES) -> ReductionPlan:
    a, b, c = dims.dimensions
    target = overrides.threads_per_block or THREADS_PER_BLOCK_TARGET
    reduced = min(
        MIN_THREADS_X_ROW_REDUCTION, _round_up(ceil_div(c, ROW_ELEMENTS_PER_THREAD), WARP)
    )
    if overrides.threads_per_block is not None:
        if overrides.threads_per_block % WARP:
            raise HloidxError(
                "a row reduction shuffles whole warps: --threads-per-block must be a multiple of 32"
            )
        reduced = min(reduced, overrides.threads_per_block)
    kept = 1
    if reduced * 2 <= target:
        kept = b if b * reduced <= target else target // reduced
    v = overrides.vector or vector_size(fusion, heroes, c, reduced)
    if c % v or v > ROW_ELEMENTS_PER_THREAD:
        raise HloidxError(f"--vector {v} must divide the reduced row of {c} and be at most 32")
    input_shape = (a, b, c // v, v)
    minor_tile = min(ROW_ELEMENTS_PER_THREAD // v, ceil_div(input_shape[2], reduced))
    per_block = (kept, minor_tile * reduced)
    blocks = (ceil_div(b, per_block[0]), ceil_div(input_shape[2], per_block[1]))
    return ReductionPlan(
        "row",
        dims,
        (kept, reduced),
        blocks,
        split_grid_x(prod(blocks), device),
        v,
        input_shape,
        (a, minor_tile, v),
        per_block,
        heroes=heroes,
    )


def _multi_row_threads(
    dims: ReductionDimensions, v: int, target: int = THREADS_PER_BLOCK_TARGET
) -> tuple[int, int]:
    b, c = dims.dimensions[1], dims.dimensions[2]
    reduced = c // v
    kept = b if b * reduced <= target else max(1, target // reduced)
    return kept, reduced


def _multi_row_plan(
    fusion, heroes, dims, device, overrides: Overrides = NO_OVERRIDES
) -> ReductionPlan | None:
    """``MultiRowReductionFusion::TryCreate``: None when XLA would not use it."""
    a, b, c = dims.dimensions
    if c & (c - 1):
        return None
    target = overrides.threads_per_block or THREADS_PER_BLOCK_TARGET
    if overrides.vector is not None:
        v = overrides.vector
        if c % v or c > WARP * v:
            return None  # not a multi-row reduction with this vector size: the row emitter
        threads = _multi_row_threads(dims, v, target)
        blocks = (ceil_div(b, threads[0]),)
        return ReductionPlan(
            "multi-row", dims, threads, blocks, split_grid_x(prod(blocks), device), v,
            (a, b, c), (a, v), heroes=heroes,
        )  # fmt: skip
    smallest_in, smallest_out = _io_bits(fusion)
    smallest = min(smallest_in if smallest_in is not None else smallest_out, smallest_out)
    largest = max(smallest_in if smallest_in is not None else smallest_out, smallest_out)
    v = min(c, 64 // smallest)
    if largest >= 32:
        v = min(128 // largest, v)
    if c > WARP * v:
        return None
    while v > 1 and ceil_div(b, _multi_row_threads(dims, v, target)[0]) < device.sm_count:
        v //= 2
    if c > WARP * v:
        return None
    threads = _multi_row_threads(dims, v, target)
    blocks = (ceil_div(b, threads[0]),)
    return ReductionPlan(
        "multi-row",
        dims,
        threads,
        blocks,
        split_grid_x(prod(blocks), device),
        v,
        (a, b, c),
        (a, v),
        heroes=heroes,
    )


def _column_plan(
    fusion, heroes, dims, device, overrides: Overrides = NO_OVERRIDES
) -> ReductionPlan:
    a, b, c = dims.dimensions
    if overrides.threads_per_block is not None:
        raise HloidxError(
            "a column reduction's 32x32 threads are its shared-memory tile (32 warps of 32): "
            "--threads-per-block does not apply"
        )
    v = overrides.vector or vector_size(fusion, heroes, c, TILE)
    blocks = (a, ceil_div(c, TILE * v))
    return ReductionPlan(
        "column",
        dims,
        (TILE, TILE),
        blocks,
        split_grid_x(prod(blocks), device),
        v,
        (a, b, c),
        (ceil_div(b, TILE), v),
        heroes=heroes,
    )


def _small_column_plan(
    fusion, heroes, dims, device, overrides: Overrides = NO_OVERRIDES
) -> ReductionPlan:
    a, b, c = dims.dimensions
    v = overrides.vector or vector_size(fusion, heroes, b * c, TILE)
    threads = overrides.threads_per_block or 128
    if (v * threads) % c:
        raise HloidxError(
            f"a small column reduction needs threads x vector ({threads} x {v}) to be a "
            f"multiple of its {c} columns"
        )
    shared_rows = v * threads // c
    while shared_rows > TILE and v > 1 and overrides.vector is None:
        v //= 2
        shared_rows //= 2
    if shared_rows > TILE:
        threads //= shared_rows // TILE
        shared_rows = TILE
    blocks = (a,)
    return ReductionPlan(
        "small column",
        dims,
        (threads,),
        blocks,
        split_grid_x(a, device),
        v,
        (a, b, c),
        (ceil_div(b * c, v * threads), v),
        shared_rows=shared_rows,
        loop_size=ceil_div(b * c, v * threads),
        heroes=heroes,
    )


def plan(
    fusion: Instruction,
    choice: EmitterChoice,
    device: DeviceProfile,
    overrides: Overrides = NO_OVERRIDES,
) -> tuple[ReductionPlan | None, str]:
    """The emitter parameters XLA chooses (``CreateReductionFusion``), or None and why not.
    ``overrides`` set the vector size and the threads-per-block target (their ``unroll`` is
    not read: these emitters do not unroll)."""
    found, why = reduction_groups(fusion)
    if found is None:
        return None, why
    heroes = found.heroes
    dims = reduction_dimensions(heroes[0])
    if dims is None:
        return None, "the reduction is neither a row nor a column reduction"
    if dims.is_row_reduction:
        multi = _multi_row_plan(fusion, heroes, dims, device, overrides)
        chosen = multi or _row_plan(fusion, heroes, dims, device, overrides)
    elif WARP % dims.dimensions[2] == 0:
        chosen = _small_column_plan(fusion, heroes, dims, device, overrides)
    else:
        chosen = _column_plan(fusion, heroes, dims, device, overrides)
    if found.count > 1:  # XLA runs each group on its own blockIdx.y
        chosen = replace(chosen, gpu_blocks=(prod(chosen.num_blocks), found.count))
    return replace(
        chosen,
        side_outputs=found.side_outputs,
        hero_groups=found.hero_groups,
        side_output_groups=found.side_output_groups,
        num_groups=found.count,
    ), ""


# ---------------------------------------------------------------------------
# Thread-id maps
# ---------------------------------------------------------------------------


def _grid(p: ReductionPlan, symbols: tuple[int, ...], results: list[Expr]) -> IndexingMap:
    return grid_map(results, p.threads_per_block, p.gpu_blocks, symbols)


def _in_group(p: ReductionPlan, m: IndexingMap, group: int) -> IndexingMap:
    """``m`` for the threads of reduction group ``group`` only (blockIdx.y, XLA's
    ``AddGroupIdConstraint``)."""
    if p.num_groups == 1:
        return m
    return m.add_constraints([(dim(4), Interval(group, group))])


def _group_of(p: ReductionPlan, hero: Instruction) -> int:
    return p.hero_groups[p.heroes.index(hero)] if p.hero_groups else 0


def thread_grid(p: ReductionPlan, hero: Instruction | None = None) -> IndexingMap:
    """The launch grid, without results: what every thread of the kernel (of ``hero``'s
    group) reads once."""
    m = _grid(p, (), [])
    return m if hero is None else _in_group(p, m, _group_of(p, hero))


def _ids(p: ReductionPlan) -> tuple[list[Expr], list[Expr]]:
    thread = delinearize(dim(0), p.num_threads)
    linear = dim(3) if p.num_groups > 1 else add(dim(3), mul(dim(4), p.gpu_blocks[0]))
    block = delinearize(linear, p.num_blocks)
    return thread, block


def normalised_input_map(p: ReductionPlan) -> IndexingMap:
    """Thread ids -> the element of the normalised input a thread reads."""
    t, b = _ids(p)
    s = [range_var(i) for i in range(len(p.tile_sizes_per_thread))]
    if p.detail == "row":
        per_block = p.tile_sizes_per_block
        results = [
            s[0],
            add(mul(b[0], per_block[0]), t[0]),
            add(mul(b[1], per_block[1]), mul(s[1], p.num_threads[1]), t[1]),
            s[2],
        ]
    elif p.detail == "multi-row":
        block = b[0] if p.num_blocks[0] != 1 else Const(0)
        results = [
            s[0],
            add(mul(block, p.num_threads[0]), t[0]),
            add(mul(t[1], p.tile_sizes_per_thread[1]), s[1]),
        ]
    elif p.detail == "column":
        results = [
            b[0],
            add(t[0], mul(s[0], p.num_threads[1])),
            add(mul(add(mul(b[1], TILE), t[1]), p.vector_size), s[1]),
        ]
    else:  # small column
        c = p.input_shape[2]
        linear = add(mul(dim(0), p.vector_size), s[1], mul(s[0], p.vector_size * p.num_threads[0]))
        results = [dim(3), floordiv(linear, c), mod(linear, c)]
    return within(_grid(p, p.tile_sizes_per_thread, results), p.input_shape)


def normalised_output_map(p: ReductionPlan) -> IndexingMap:
    """Thread ids -> the element of the normalised output a thread writes (only the threads
    that write: the others are excluded by constraints)."""
    t, b = _ids(p)
    if p.detail == "row":
        m = _grid(p, (), [add(mul(b[0], p.tile_sizes_per_block[0]), t[0])])
        m = m.add_constraints([(t[1], Interval(0, 0))])
    elif p.detail == "multi-row":
        block = b[0] if p.num_blocks[0] != 1 else Const(0)
        m = _grid(p, (), [add(mul(block, p.num_threads[0]), t[0])])
        m = m.add_constraints([(mod(t[1], p.num_threads[1]), Interval(0, 0))])
    elif p.detail == "column":
        s0 = range_var(0)
        result = add(mul(add(mul(b[1], TILE), t[0]), p.vector_size), s0)
        m = _grid(p, (p.vector_size,), [b[0], result])
        m = m.add_constraints([(t[1], Interval(0, 0))])
    else:
        s0 = range_var(0)
        result = floordiv(add(dim(0), mul(s0, p.num_threads[0])), p.shared_rows)
        m = _grid(p, (p.vector_size,), [dim(3), result])
        m = m.add_constraints([(mod(dim(0), p.shared_rows), Interval(0, 0))])
    return within(m, p.output_shape)


def _descending(dims: tuple[int, ...], like: Shape) -> Shape:
    return Shape(like.element_type, tuple(dims))


def input_map(p: ReductionPlan, hero: Instruction, operand: int) -> IndexingMap:
    """Thread ids -> the element of ``hero``'s input ``operand`` a thread reads."""
    shape = hero.operands[operand].shape
    to_operand = bitcast_map(shape, _descending(p.input_shape, shape))
    return _in_group(p, compose(normalised_input_map(p), to_operand), _group_of(p, hero))


def _kept_shape(hero: Instruction) -> Shape:
    """The reduce's input shape without the reduced dims, in the input's layout order (XLA's
    ``ShapeUtil::DeleteDimensions``): the order in which the emitter walks the kept dims."""
    operand = hero.operands[0].shape
    reduced = set(hero.dimensions or ())
    kept = [d for d in range(operand.rank) if d not in reduced]
    order = [kept.index(d) for d in minor_to_major(operand) if d in kept]
    return Shape(
        operand.element_type, tuple(operand.dims[d] for d in kept), layout=Layout(tuple(order))
    )


def side_output_map(p: ReductionPlan, root: Instruction) -> IndexingMap:
    """Thread ids -> the element of side output ``root`` a thread writes: the element of the
    reduction's input it reads, as an index of ``root``'s shape (XLA's
    ``ComputeThreadIdToOutputIndexing`` for a root that is no reduction)."""
    shape = root.shape
    m = compose(normalised_input_map(p), bitcast_map(shape, _descending(p.input_shape, shape)))
    return _in_group(p, m, p.side_output_groups[p.side_outputs.index(root)])


def output_map(p: ReductionPlan, hero: Instruction) -> IndexingMap:
    """Thread ids -> the element of ``hero``'s (first) output a thread writes (logical index;
    the output's own layout only decides where that element is stored)."""
    kept = _kept_shape(hero)
    to_output = bitcast_map(kept, _descending(p.output_shape, kept))
    return _in_group(p, compose(normalised_output_map(p), to_output), _group_of(p, hero))


# ---------------------------------------------------------------------------
# The emitter
# ---------------------------------------------------------------------------


class ReductionEmitter:
    """XLA's reduction emitters (row, multi-row, column, small column) behind the
    ``Emitter`` interface."""

    kinds = ("reduction",)

    def launch(
        self,
        fusion: Instruction,
        choice: EmitterChoice,
        device: DeviceProfile,
        overrides: Overrides = NO_OVERRIDES,
    ) -> LaunchConfig | None:
        set_by_hand = tiled_overrides(overrides, "a reduction emitter", device)
        chosen, _ = plan(fusion, choice, device, overrides)
        if chosen is None:
            return None
        return LaunchConfig(
            (chosen.threads_per_block, 1, 1),
            (chosen.gpu_blocks[0], chosen.gpu_blocks[1], 1),
            1,
            chosen.vector_size,
            chosen.input_shape,
            tuple(reversed(range(len(chosen.input_shape)))),
            tuple(set_by_hand),
            reduction=chosen,
        )

    def why_not(self, fusion: Instruction, choice: EmitterChoice, device: DeviceProfile) -> str:
        return plan(fusion, choice, device)[1]

    def fill_thread_maps(self, result: ThreadMaps) -> None:
        launch, fusion = result.launch, result.fusion
        assert launch is not None
        assert launch.reduction is not None
        p = launch.reduction
        body = body_of(fusion)
        n = len(fusion.operands)
        for root in result.choice.roots:
            if root in p.side_outputs:
                result.outputs.append(simplify_thread_map(side_output_map(p, root)))
                continue
            hero = find_hero(root)
            out = simplify_thread_map(output_map(p, hero))
            result.outputs.extend(out for _ in hero.shape.leaves())
        for hero in p.heroes:
            arity = len(hero.operands) // 2
            for j, operand in enumerate(hero.operands):
                # the init values: read once by every thread (of the hero's group)
                thread_map = input_map(p, hero, j) if j < arity else thread_grid(p, hero)
                cells = parameter_cells(operand, body, n)
                add_reads(result, thread_map, cells, 0)
        for out_id, root in enumerate(result.choice.roots):
            if root in p.side_outputs:
                cells = parameter_cells(root, body, n)
                add_reads(result, side_output_map(p, root), cells, out_id)
        sides = (
            f"; side outputs ({', '.join(r.name for r in p.side_outputs)}) are written by the "
            "threads that read the same input element"
            if p.side_outputs
            else ""
        )
        groups = (
            f"; {p.num_groups} independent reduction groups, one per blockIdx.y (numbered in "
            "the order of their first root; XLA numbers them by its instruction ids)"
            if p.num_groups > 1
            else ""
        )
        result.notes.append(
            f"XLA's {p.detail} reduction emitter: threads {list(p.num_threads)} per block, "
            f"blocks {list(p.num_blocks)}, vector size {p.vector_size}, tile per thread "
            f"{list(p.tile_sizes_per_thread)}; init values are read by every thread"
            f"{sides}{groups}"
        )

    def root_output_map(
        self, fusion: Instruction, launch: LaunchConfig, root: Instruction
    ) -> IndexingMap | None:
        p = launch.reduction
        if p is not None and root in p.side_outputs:
            return side_output_map(p, root)
        hero = find_hero(root)
        if p is None or hero not in p.heroes:
            return None
        return output_map(p, hero)

    def hero_input_map(
        self, fusion: Instruction, launch: LaunchConfig, hero: Instruction, operand: int
    ) -> IndexingMap | None:
        p = launch.reduction
        if p is None or hero not in p.heroes or not 0 <= operand < len(hero.operands) // 2:
            return None
        return input_map(p, hero, operand)
