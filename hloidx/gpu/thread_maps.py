"""Thread-id maps: from ``(th_x, th_y, th_z, bl_x, bl_y, bl_z)[chunk_id, unroll_id]`` to the
output element a GPU thread writes and to the operand elements it reads.

The thread → output map is XLA's default work-item map (``GetDefaultWorkItemIndexingMap``):
the thread's linear id over the grid, times the unroll factor, plus the chunk and unroll
offsets, delinearized in the indexing shape's physical (minor-to-major) order. Composed with
the fusion's output-to-input maps it gives what each thread reads; composed further with an
operand's layout it gives linear addresses (``--physical``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING

from ..hlo.fusion import body_of, output_to_input, parameter_cells
from ..hlo.rules.shape_ops import minor_to_major
from ..maps.expr import Const, Expr, add, dim, floordiv, mod, mul, range_var
from ..maps.indexing_map import IndexingMap, MapState, Variable, compose
from ..maps.interval import Interval
from ..maps.map_simplify import SimplifyOptions, simplify
from .emitters import EmitterChoice
from .grid import THREAD_DIM_NAMES, within
from .launch import LaunchConfig

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape
    from ..hlo.op_rules import OperandIndexing

SYMBOL_NAMES = ("chunk_id", "unroll_id")
#: XLA folds single-valued thread dimensions (th_y in [0, 0]) out of thread-id maps
THREAD_SIMPLIFY = SimplifyOptions(preserve_point_dims=False)


def simplify_thread_map(m: IndexingMap) -> IndexingMap:
    return simplify(m, options=THREAD_SIMPLIFY)


def linear_thread_index(launch: LaunchConfig):
    """The first element a thread handles, as an expression of the six thread dimensions and
    the two symbols (chunk_id, unroll_id)."""
    threads, blocks = launch.threads_per_block, launch.blocks
    totals = [t * b for t, b in zip(threads, blocks, strict=True)]
    linear = Const(0)
    stride = 1
    for axis in range(3):
        coordinate = add(dim(axis), mul(dim(3 + axis), threads[axis]))
        linear = add(linear, mul(coordinate, stride))
        stride *= totals[axis]
    u = launch.unroll_factor
    return add(mul(linear, u), mul(range_var(0), u * prod(totals)), range_var(1))


def thread_variables(
    launch: LaunchConfig, num_elements: int
) -> tuple[list[Variable], list[Variable]]:
    sizes = list(launch.threads_per_block) + list(launch.blocks)
    dims = [Variable(Interval(0, s - 1), n) for s, n in zip(sizes, THREAD_DIM_NAMES, strict=True)]
    per_chunk = launch.total_threads * launch.unroll_factor
    chunks = max(1, -(-num_elements // per_chunk))
    symbols = [
        Variable(Interval(0, chunks - 1), SYMBOL_NAMES[0]),
        Variable(Interval(0, launch.unroll_factor - 1), SYMBOL_NAMES[1]),
    ]
    return dims, symbols


def default_thread_map(launch: LaunchConfig) -> IndexingMap:
    """Thread ids → element of the indexing shape (XLA's default work-item map), simplified."""
    return simplify_thread_map(raw_thread_map(launch))


def raw_thread_map(launch: LaunchConfig) -> IndexingMap:
    """XLA's default work-item map as built, before simplification."""
    shape = launch.indexing_shape
    n = prod(shape)
    linear = linear_thread_index(launch)
    results: list = [Const(0)] * len(shape)
    divisor = 1
    for d in launch.minor_to_major:
        results[d] = mod(floordiv(linear, divisor), shape[d])
        divisor *= shape[d]
    dims, symbols = thread_variables(launch, n)
    raw = IndexingMap(
        tuple(results), tuple(dims), tuple(symbols), (), ((linear, Interval(0, n - 1)),)
    )
    return simplify_thread_map(raw)


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


@dataclass
class ThreadRead:
    """The maps from thread ids to one operand's elements (through one fusion output)."""

    output: int
    maps: list[IndexingMap] = field(default_factory=list)
    exact: bool = True
    notes: list[str] = field(default_factory=list)
    #: each map before simplification (the composition as built), for verification
    raw: list[IndexingMap] = field(default_factory=list)

    @property
    def undefined(self) -> bool:
        return any(m.is_undefined for m in self.maps)


@dataclass
class ThreadMaps:
    """Everything ``hloidx threads`` shows for one fusion."""

    fusion: Instruction
    choice: EmitterChoice
    launch: LaunchConfig | None
    #: per fusion output: the thread → output element map (None: the emitter has none)
    outputs: list[IndexingMap | None] = field(default_factory=list)
    #: per fusion operand: the reads through each output
    operands: list[list[ThreadRead]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _compose_cell(thread_map: IndexingMap, cell: OperandIndexing, output: int) -> ThreadRead:
    read = ThreadRead(output, exact=cell.exact, notes=list(cell.notes))
    for i, rv in enumerate(cell.runtime_vars):
        read.notes.append(f"rt{i} is {rv.producer_text()} read at {rv.map} (of the output index)")
    seen: set[IndexingMap] = set()
    for m in cell.maps:
        if m.is_undefined:
            read.maps = [IndexingMap.undefined()]
            return read
        if m.state is MapState.KNOWN_EMPTY:
            continue
        built = compose(thread_map, m)
        composed = simplify_thread_map(built)
        if composed.state is MapState.KNOWN_EMPTY or composed in seen:
            continue
        seen.add(composed)
        read.maps.append(composed)
        read.raw.append(built)
    return read


def _add_reads(
    result: ThreadMaps, thread_map: IndexingMap, cells: list[OperandIndexing], output: int
) -> None:
    """Every fusion operand's reads through ``thread_map`` and the maps in ``cells``."""
    for k, reads in enumerate(result.operands):
        read = _compose_cell(thread_map, cells[k], output)
        if read.maps or read.undefined:
            reads.append(read)


def _every_thread(dims: tuple[Variable, ...], symbols: tuple[Variable, ...] = ()) -> IndexingMap:
    """A scalar (an init value, a start index) read by every thread of a grid."""
    return IndexingMap((), dims, symbols)


def _add_undefined(result: ThreadMaps, cells: list[OperandIndexing], note: str) -> None:
    """An UNDEFINED read for every fusion operand that ``cells`` reach (runtime positions)."""
    for k, reads in enumerate(result.operands):
        if any(not m.is_known_empty for m in cells[k].maps):
            reads.append(ThreadRead(0, [IndexingMap.undefined()], False, [note]))


def _loop_maps(result: ThreadMaps) -> None:
    launch, fusion = result.launch, result.fusion
    assert launch is not None
    thread_map = default_thread_map(launch)
    table = output_to_input(fusion)
    for out_id, root in enumerate(result.choice.roots):
        leaf = root.shape.leaves()[0]
        if tuple(leaf.dims) != tuple(launch.indexing_shape):
            result.outputs.append(None)
            result.notes.append(
                f"output {out_id} ({root.name}) has another shape than the indexing shape: "
                "its thread maps are not modelled"
            )
            for reads in result.operands:
                reads.append(ThreadRead(out_id, [IndexingMap.undefined()], False, ["not modelled"]))
            continue
        result.outputs.append(thread_map)
        for k, reads in enumerate(result.operands):
            reads.append(_compose_cell(thread_map, table[out_id][k], out_id))


def _concatenate_maps(result: ThreadMaps) -> None:
    launch, hero = result.launch, result.choice.hero
    assert launch is not None
    assert hero is not None
    body = body_of(result.fusion)
    thread_map = default_thread_map(launch)
    axis = (hero.dimensions or (0,))[0]
    offset = 0
    per_output: list[IndexingMap] = []
    for j, part in enumerate(hero.operands):
        # every thread walks the largest operand's shape; it handles element i of operand
        # j only where i is inside operand j (the emitter's bounds check)
        part_map = simplify_thread_map(within(thread_map, part.shape.dims))
        shifted = list(part_map.results)
        shifted[axis] = add(shifted[axis], offset)
        per_output.append(part_map.with_results(shifted))
        offset += part.shape.dims[axis]
        cells = parameter_cells(part, body, len(result.fusion.operands))
        _add_reads(result, part_map, cells, j)
    result.outputs = list(per_output)
    result.notes.append(
        "the concatenate emitter walks its largest operand's shape once per operand; "
        "outputs are listed per concatenate operand"
    )


def _in_place_update_maps(result: ThreadMaps) -> None:
    launch, fusion = result.launch, result.fusion
    assert launch is not None
    thread_map = default_thread_map(launch)
    body, n = body_of(fusion), len(fusion.operands)
    every_thread = _every_thread(thread_map.dim_vars, thread_map.range_vars)
    for root in result.choice.roots:
        dus = root
        while dus.opcode == "bitcast":
            dus = dus.operands[0]
        result.outputs.append(None)
        base_cells = parameter_cells(dus.operands[0], body, n)
        sources = [(dus.operands[1], thread_map)] + [(o, every_thread) for o in dus.operands[2:]]
        for operand, m in sources:
            _add_reads(result, m, parameter_cells(operand, body, n), 0)
        note = "the base is updated in place and not read (if XLA aliases the buffers)"
        _add_undefined(result, base_cells, note)
    result.notes.append(
        "XLA's in-place dynamic-update-slice emitter (used when buffer assignment lets the "
        "output reuse the base's buffer, which HLO text does not show; else the loop emitter): "
        "threads walk the update and write it at the start indices, so where they write is "
        "UNDEFINED here"
    )


def _input_slices_maps(result: ThreadMaps) -> None:
    from ..hlo.op_rules import input_to_output as op_input_to_output

    launch, fusion = result.launch, result.fusion
    assert launch is not None
    thread_map = default_thread_map(launch)
    body, n = body_of(fusion), len(fusion.operands)
    inputs: list[Instruction] = []
    for out_id, root in enumerate(result.choice.roots):
        # a thread writes element i of slice j only where i lies inside slice j
        slice_map = op_input_to_output(root)[0][0].maps[0]
        result.outputs.append(simplify_thread_map(compose(thread_map, slice_map)))
        if root.operands[0] not in inputs:
            inputs.append(root.operands[0])
            cells = parameter_cells(root.operands[0], body, n)
            _add_reads(result, thread_map, cells, out_id)
    result.notes.append(
        "XLA's input-slices emitter walks the slices' common input once; each thread writes "
        "its element to every slice that contains it"
    )


def _scatter_maps(result: ThreadMaps) -> None:
    from .scatters import thread_maps as scatter_thread_maps

    launch, fusion = result.launch, result.fusion
    assert launch is not None
    assert launch.scatter is not None
    p = launch.scatter
    default = default_thread_map(launch) if p.variant == "distributed updates" else None
    updates_map, indices_map = scatter_thread_maps(p, default)
    updates_map = simplify_thread_map(updates_map)
    indices_map = simplify_thread_map(indices_map)
    body, n = body_of(fusion), len(fusion.operands)
    result.outputs.append(None)
    operand_cells = parameter_cells(p.scatter.operands[0], body, n)
    index_cells = parameter_cells(p.scatter.operands[1], body, n)
    update_cells = parameter_cells(p.scatter.operands[2], body, n)
    _add_reads(result, indices_map, index_cells, 0)
    _add_reads(result, updates_map, update_cells, 0)
    note = "read where the indices say, at run time (XLA's analysis has no map either)"
    _add_undefined(result, operand_cells, note)
    result.notes.append(
        f"XLA's scatter emitter ({p.variant}): {p.num_slices} slices of "
        f"{list(p.slice_shape)}, vector size {p.vector_size}; where each thread writes (output "
        "0) depends on the index values: UNDEFINED"
    )


def _transpose_maps(result: ThreadMaps) -> None:
    from . import transposes

    launch, fusion = result.launch, result.fusion
    assert launch is not None
    assert launch.transpose is not None
    p = launch.transpose
    if isinstance(p, transposes.PackedPlan):
        reads_map, writes_map = transposes.packed_input_map(p), transposes.packed_output_map(p)
        t1, a, t2 = p.tiles
        note = (
            f"XLA's packed transpose emitter: canonical {list(p.spec.input_shape)} -> "
            f"{list(p.spec.output_shape)}, output tile {list(p.output_tile)} (T1 {t1}, A {a}, "
            f"T2 {t2}), {p.blocks} blocks of {p.threads} threads, vectors of {p.vector_size}"
        )
    else:
        reads_map, writes_map = transposes.input_map(p), transposes.output_map(p)
        note = (
            f"XLA's shared-memory transpose emitter: normalised {list(p.input_shape)} -> "
            f"{list(p.dims)} (permutation {list(p.permutation)}), tiles of "
            f"{list(p.block_sizes)}, {p.blocks} blocks of {p.threads} threads, vector size "
            f"{p.vector_size}"
        )
    result.outputs.append(simplify_thread_map(writes_map))
    cells = parameter_cells(p.hero.operands[0], body_of(fusion), len(fusion.operands))
    _add_reads(result, reads_map, cells, 0)
    result.notes.append(note)


def _reduction_maps(result: ThreadMaps) -> None:
    from .reductions import input_map, output_map, thread_grid

    launch, fusion = result.launch, result.fusion
    assert launch is not None
    assert launch.reduction is not None
    p = launch.reduction
    body = body_of(fusion)
    n = len(fusion.operands)
    every_thread = thread_grid(p)  # the init values: read once by every thread
    for hero in p.heroes:
        out = simplify_thread_map(output_map(p, hero))
        result.outputs.extend(out for _ in hero.shape.leaves())
    for hero in p.heroes:
        arity = len(hero.operands) // 2
        for j, operand in enumerate(hero.operands):
            thread_map = input_map(p, hero, j) if j < arity else every_thread
            cells = parameter_cells(operand, body, n)
            _add_reads(result, thread_map, cells, 0)
    result.notes.append(
        f"XLA's {p.detail} reduction emitter: threads {list(p.num_threads)} per block, "
        f"blocks {list(p.num_blocks)}, vector size {p.vector_size}, tile per thread "
        f"{list(p.tile_sizes_per_thread)}; init values are read by every thread"
    )


def thread_maps(
    fusion: Instruction, choice: EmitterChoice, launch: LaunchConfig | None
) -> ThreadMaps:
    """Thread-id maps of every output and operand of ``fusion`` under ``launch``."""
    result = ThreadMaps(fusion, choice, launch, operands=[[] for _ in fusion.operands])
    if launch is None:
        result.notes.append(
            f"thread-id maps of XLA's {choice.label} emitter are not modelled by hloidx"
        )
        # unknown, not "never read": every operand is UNDEFINED
        for reads in result.operands:
            reads.append(ThreadRead(0, [IndexingMap.undefined()], False, ["not modelled"]))
        return result
    if choice.kind == "concatenate":
        _concatenate_maps(result)
    elif choice.kind == "input-slices":
        _input_slices_maps(result)
    elif choice.kind == "dynamic-update-slice":
        _in_place_update_maps(result)
    elif launch.reduction is not None:
        _reduction_maps(result)
    elif launch.transpose is not None:
        _transpose_maps(result)
    elif launch.scatter is not None:
        _scatter_maps(result)
    else:
        _loop_maps(result)
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
