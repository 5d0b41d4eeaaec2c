"""Rules for ops that only move data: broadcast, reshape, bitcast, transpose, reverse,
slice, pad and concatenate (both directions)."""

from __future__ import annotations

from collections.abc import Sequence

from ...maps.expr import Expr, add, const, dim, floordiv, mod, mul, range_var, replace_vars, sub
from ...maps.indexing_map import IndexingMap
from ...maps.interval import Interval
from ..ir import Instruction, PaddingDim, Shape
from ..reshape import reshape_index
from ..rule_registry import (
    IndexingTable,
    OperandIndexing,
    input_to_output_rule,
    output_to_input_rule,
)
from ._common import (
    check_dims_in_range,
    check_permutation,
    dims_exprs,
    map_over_box,
    no_reads,
    operand_shape,
    require,
    single,
    unsupported,
)

# ---------------------------------------------------------------------------
# broadcast
# ---------------------------------------------------------------------------


def _broadcast_dims(instr: Instruction) -> tuple[int, ...]:
    dims = instr.dimensions
    require(instr, dims, "dimensions={...}")
    check_dims_in_range(instr, dims, instr.shape.rank, "dimensions")
    if len(dims) != operand_shape(instr, 0).rank:
        raise unsupported(instr, "dimensions must name one output dimension per operand dimension")
    return dims


@output_to_input_rule("broadcast")
def broadcast_output_to_input(instr: Instruction) -> IndexingTable:
    dims = _broadcast_dims(instr)
    return [[single(IndexingMap.build([dim(d) for d in dims], instr.shape.dims))]]


@input_to_output_rule("broadcast")
def broadcast_input_to_output(instr: Instruction) -> IndexingTable:
    dims = _broadcast_dims(instr)
    results: list[Expr] = []
    added: list[int] = []
    for out_dim, size in enumerate(instr.shape.dims):
        if out_dim in dims:
            results.append(dim(dims.index(out_dim)))
        else:
            results.append(range_var(len(added)))
            added.append(size)
    return [[single(IndexingMap.build(results, operand_shape(instr, 0).dims, added))]]


# ---------------------------------------------------------------------------
# reshape and bitcast
# ---------------------------------------------------------------------------


def _reshape_map(src: Sequence[int], dst: Sequence[int]) -> IndexingMap:
    """dst index -> src index of the same row-major data."""
    return IndexingMap.build(reshape_index(src, dst, dims_exprs(len(dst))), dst)


def _check_same_count(instr: Instruction, src: Shape, dst: Shape) -> None:
    if src.num_elements() != dst.num_elements():
        raise unsupported(instr, f"{src} and {dst} hold different numbers of elements")


@output_to_input_rule("reshape")
def reshape_output_to_input(instr: Instruction) -> IndexingTable:
    src = operand_shape(instr, 0)
    _check_same_count(instr, src, instr.shape)
    return [[single(_reshape_map(src.dims, instr.shape.dims))]]


@input_to_output_rule("reshape")
def reshape_input_to_output(instr: Instruction) -> IndexingTable:
    src = operand_shape(instr, 0)
    _check_same_count(instr, src, instr.shape)
    return [[single(_reshape_map(instr.shape.dims, src.dims))]]


def minor_to_major(shape: Shape) -> tuple[int, ...]:
    """The layout's order, or the default descending layout when the shape has none."""
    if shape.layout is not None and len(shape.layout.minor_to_major) == shape.rank:
        return shape.layout.minor_to_major
    return tuple(reversed(range(shape.rank)))


def bitcast_map(src: Shape, dst: Shape) -> IndexingMap:
    """dst logical index -> src logical index, reading both through their layouts.

    Each side's physical shape lists its dimensions major to minor; a bitcast keeps the
    bytes, so the physical shapes are a row-major reshape of each other. Layout tiling is
    ignored (tiled layouts are a TPU matter; CPU/GPU modules have none).
    """
    dst_order = list(reversed(minor_to_major(dst)))  # physical position -> logical dim
    src_order = list(reversed(minor_to_major(src)))
    dst_physical_index = [dim(logical) for logical in dst_order]
    src_physical_index = reshape_index(
        [src.dims[k] for k in src_order], [dst.dims[k] for k in dst_order], dst_physical_index
    )
    src_index: list[Expr] = [const(0)] * src.rank
    for position, logical in enumerate(src_order):
        src_index[logical] = src_physical_index[position]
    return IndexingMap.build(src_index, dst.dims)


def _check_bitcast(instr: Instruction) -> Shape:
    src = operand_shape(instr, 0)
    if not (src.is_array and instr.shape.is_array):
        raise unsupported(instr, "bitcast of a tuple or token")
    _check_same_count(instr, src, instr.shape)
    return src


@output_to_input_rule("bitcast")
def bitcast_output_to_input(instr: Instruction) -> IndexingTable:
    src = _check_bitcast(instr)
    return [[single(bitcast_map(src, instr.shape))]]


@input_to_output_rule("bitcast")
def bitcast_input_to_output(instr: Instruction) -> IndexingTable:
    src = _check_bitcast(instr)
    return [[single(bitcast_map(instr.shape, src))]]


# ---------------------------------------------------------------------------
# transpose and reverse
# ---------------------------------------------------------------------------


def _permutation(instr: Instruction) -> tuple[int, ...]:
    perm = instr.dimensions
    require(instr, perm, "dimensions={...}")
    check_permutation(instr, perm, instr.shape.rank, "dimensions")
    return perm


@output_to_input_rule("transpose")
def transpose_output_to_input(instr: Instruction) -> IndexingTable:
    # output dimension i is operand dimension perm[i]
    perm = _permutation(instr)
    operand_index: list[Expr] = [const(0)] * len(perm)
    for out_dim, in_dim in enumerate(perm):
        operand_index[in_dim] = dim(out_dim)
    return [[single(IndexingMap.build(operand_index, instr.shape.dims))]]


@input_to_output_rule("transpose")
def transpose_input_to_output(instr: Instruction) -> IndexingTable:
    perm = _permutation(instr)
    return [[single(IndexingMap.build([dim(p) for p in perm], operand_shape(instr, 0).dims))]]


def _reverse_map(instr: Instruction) -> IndexingMap:
    dims = instr.dimensions
    require(instr, dims, "dimensions={...}")
    shape = instr.shape.dims
    check_dims_in_range(instr, dims, len(shape), "dimensions")
    results = [sub(shape[k] - 1, dim(k)) if k in dims else dim(k) for k in range(len(shape))]
    return IndexingMap.build(results, shape)


@output_to_input_rule("reverse")
def reverse_output_to_input(instr: Instruction) -> IndexingTable:
    return [[single(_reverse_map(instr))]]


@input_to_output_rule("reverse")
def reverse_input_to_output(instr: Instruction) -> IndexingTable:
    return [[single(_reverse_map(instr))]]


# ---------------------------------------------------------------------------
# slice
# ---------------------------------------------------------------------------


def _slice_config(instr: Instruction):
    config = instr.slice
    require(instr, config, "slice={...}")
    if len(config) != instr.shape.rank or any(s.stride <= 0 for s in config):
        raise unsupported(
            instr, "slice={...} needs one [start:limit:stride] per dimension, stride > 0"
        )
    return config


@output_to_input_rule("slice")
def slice_output_to_input(instr: Instruction) -> IndexingTable:
    config = _slice_config(instr)
    results = [add(mul(dim(k), s.stride), s.start) for k, s in enumerate(config)]
    return [[single(IndexingMap.build(results, instr.shape.dims))]]


@input_to_output_rule("slice")
def slice_input_to_output(instr: Instruction) -> IndexingTable:
    config = _slice_config(instr)
    src = operand_shape(instr, 0).dims
    results: list[Expr] = []
    box: list[Interval] = []
    constraints: list[tuple[Expr, Interval]] = []
    for k, (s, out_size) in enumerate(zip(config, instr.shape.dims, strict=True)):
        offset = sub(dim(k), s.start)
        results.append(floordiv(offset, s.stride))
        last = s.start + (out_size - 1) * s.stride
        box.append(Interval(max(s.start, 0), min(last, src[k] - 1)))
        if s.stride > 1:
            constraints.append((mod(offset, s.stride), Interval(0, 0)))
    return [[single(map_over_box(results, box, constraints=constraints))]]


# ---------------------------------------------------------------------------
# pad
# ---------------------------------------------------------------------------


def _pad_config(instr: Instruction) -> tuple[PaddingDim, ...]:
    config = instr.padding
    require(instr, config, "padding=...")
    if len(config) != instr.shape.rank or any(p.interior < 0 for p in config):
        raise unsupported(instr, "padding needs one low_high_interior per dimension, interior >= 0")
    return config


def _pad_input_positions(p: PaddingDim, in_size: int, out_size: int) -> tuple[int, int]:
    """The first and last input element (as input indices) that land inside the output."""
    step = p.interior + 1
    first = max(0, -(p.low // step))  # smallest j with low + j * step >= 0
    last = min(in_size - 1, (out_size - 1 - p.low) // step)
    return first, last


def _pad_operand_map(
    config: Sequence[PaddingDim], in_dims: Sequence[int], out_dims: Sequence[int]
) -> IndexingMap:
    results: list[Expr] = []
    box: list[Interval] = []
    constraints: list[tuple[Expr, Interval]] = []
    for k, (p, in_size, out_size) in enumerate(zip(config, in_dims, out_dims, strict=True)):
        step = p.interior + 1
        offset = sub(dim(k), p.low)
        results.append(floordiv(offset, step))
        first, last = _pad_input_positions(p, in_size, out_size)
        box.append(Interval(p.low + first * step, p.low + last * step))
        if step > 1:
            constraints.append((mod(offset, step), Interval(0, 0)))
    return map_over_box(results, box, constraints=constraints)


def _padded_regions(
    config: Sequence[PaddingDim], in_dims: Sequence[int], out_dims: Sequence[int]
) -> list[tuple[int, Interval, tuple[Expr, Interval] | None]]:
    """Per dimension, the output positions that hold the padding value, as at most three
    pieces ``(dimension, bounds, extra constraint)``: below the first input element, above
    the last one, and between input elements (interior padding). A point of the output
    is padding iff one of its coordinates is in such a piece."""
    pieces: list[tuple[int, Interval, tuple[Expr, Interval] | None]] = []
    for k, (p, in_size, out_size) in enumerate(zip(config, in_dims, out_dims, strict=True)):
        step = p.interior + 1
        first, last = _pad_input_positions(p, in_size, out_size)
        if first > last:  # no input element survives: the whole dimension is padding
            pieces.append((k, Interval(0, out_size - 1), None))
            continue
        low_end, high_start = p.low + first * step, p.low + last * step
        if low_end > 0:
            pieces.append((k, Interval(0, low_end - 1), None))
        if high_start < out_size - 1:
            pieces.append((k, Interval(high_start + 1, out_size - 1), None))
        if step > 1 and high_start > low_end:
            between = (mod(sub(dim(k), p.low), step), Interval(1, step - 1))
            pieces.append((k, Interval(low_end + 1, high_start - 1), between))
    return pieces


def _check_pad(instr: Instruction) -> tuple[tuple[PaddingDim, ...], tuple[int, ...]]:
    config = _pad_config(instr)
    in_dims = operand_shape(instr, 0).dims
    if operand_shape(instr, 1).rank != 0:
        raise unsupported(instr, "the padding value must be a scalar")
    return config, in_dims


@output_to_input_rule("pad")
def pad_output_to_input(instr: Instruction) -> IndexingTable:
    config, in_dims = _check_pad(instr)
    out_dims = instr.shape.dims
    full = [Interval(0, n - 1) for n in out_dims]
    value_maps = []
    for k, bounds, extra in _padded_regions(config, in_dims, out_dims):
        box = list(full)
        box[k] = bounds
        value_maps.append(map_over_box((), box, constraints=[extra] if extra else []))
    operand = single(_pad_operand_map(config, in_dims, out_dims))
    return [[operand, OperandIndexing(tuple(value_maps))]]


@input_to_output_rule("pad")
def pad_input_to_output(instr: Instruction) -> IndexingTable:
    config, in_dims = _check_pad(instr)
    out_dims = instr.shape.dims
    results: list[Expr] = []
    box: list[Interval] = []
    for k, (p, in_size, out_size) in enumerate(zip(config, in_dims, out_dims, strict=True)):
        results.append(add(mul(dim(k), p.interior + 1), p.low))
        first, last = _pad_input_positions(p, in_size, out_size)
        box.append(Interval(first, last))
    operand = single(map_over_box(results, box))
    # the padding value feeds the padded output positions: range variables over them
    full = [Interval(0, n - 1) for n in out_dims]
    to_range = {dim(k): range_var(k) for k in range(len(out_dims))}
    value_maps = []
    for k, bounds, extra in _padded_regions(config, in_dims, out_dims):
        ranges = list(full)
        ranges[k] = bounds
        constraints = [(replace_vars(extra[0], to_range), extra[1])] if extra else []
        value_maps.append(
            map_over_box([range_var(i) for i in range(len(out_dims))], (), ranges, constraints)
        )
    return [[operand], [OperandIndexing(tuple(value_maps))]]


# ---------------------------------------------------------------------------
# concatenate
# ---------------------------------------------------------------------------


def _concat_offsets(instr: Instruction) -> tuple[int, list[int]]:
    dims = instr.dimensions
    require(instr, dims, "dimensions={...}")
    if len(dims) != 1 or not 0 <= dims[0] < instr.shape.rank:
        raise unsupported(instr, "concatenate needs one dimension")
    axis = dims[0]
    offsets, total = [], 0
    for i in range(len(instr.operands)):
        offsets.append(total)
        total += operand_shape(instr, i).dims[axis]
    return axis, offsets


@output_to_input_rule("concatenate")
def concatenate_output_to_input(instr: Instruction) -> IndexingTable:
    # like XLA: each operand is read over a narrowed range of the concatenated dimension
    axis, offsets = _concat_offsets(instr)
    out_dims = instr.shape.dims
    row: list[OperandIndexing] = []
    for i, offset in enumerate(offsets):
        size = operand_shape(instr, i).dims[axis]
        if size == 0:
            row.append(no_reads())
            continue
        box = [Interval(0, n - 1) for n in out_dims]
        box[axis] = Interval(offset, offset + size - 1)
        results = [sub(dim(k), offset) if k == axis else dim(k) for k in range(len(out_dims))]
        row.append(single(map_over_box(results, box)))
    return [row]


@input_to_output_rule("concatenate")
def concatenate_input_to_output(instr: Instruction) -> IndexingTable:
    axis, offsets = _concat_offsets(instr)
    table = []
    for i, offset in enumerate(offsets):
        in_dims = operand_shape(instr, i).dims
        results = [add(dim(k), offset) if k == axis else dim(k) for k in range(len(in_dims))]
        table.append([single(IndexingMap.build(results, in_dims))])
    return table
