"""Rules for dynamic-slice and dynamic-update-slice, in both directions.

Offsets are read at run time, so they become runtime variables ``rt<k>``. XLA clamps each
offset to ``[0, dim - size]`` before use, so that the slice (or update) lies in bounds: the
variable's bounds are exactly those feasible values. An offset that is an integer scalar
``constant`` is folded in, clamped the same way. Offsets may be given as one scalar operand
per dimension or (the old form) as one rank-1 operand; either way every output element reads
every offset, because the offsets decide which element it is.

dynamic-update-slice reads the update inside the updated window (``d - rt`` there) and the
base operand only outside it: a union of up to ``2 * rank`` maps, one per dimension and side
(``d_k < rt_k`` or ``d_k >= rt_k + size_k``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...maps.expr import Expr, const
from ...maps.indexing_map import IndexingMap, MapState
from ...maps.interval import Interval
from ..ir import Instruction, Shape
from ..rule_registry import (
    IndexingTable,
    OperandIndexing,
    RuntimeVar,
    input_to_output_rule,
    output_to_input_rule,
)
from ._window_helpers import (
    MapBuilder,
    clamp,
    known_scalar_int,
    require,
    require_operands,
    scalar_read,
)


@dataclass(frozen=True)
class _Offset:
    """One dimension's start: a folded constant, or a value read from ``producer``."""

    bounds: Interval  # the clamped, feasible values
    constant: int | None = None
    producer: Instruction | None = None
    component: int | None = None  # the element of a rank-1 offsets operand

    def runtime_var(self, producer: Instruction, dim_sizes: Sequence[int]) -> RuntimeVar:
        index = () if self.component is None else (self.component,)
        note = f"clamp to [{self.bounds.lower}, {self.bounds.upper}]"
        return RuntimeVar(producer, IndexingMap.build(index, dim_sizes), note)


def _offsets(
    instr: Instruction, first: int, dims: Sequence[int], sizes: Sequence[int]
) -> list[_Offset]:
    operands = instr.operands[first:]
    rank = len(dims)
    for k in range(rank):
        require(
            0 <= sizes[k] <= dims[k],
            instr,
            f"the slice size {sizes[k]} does not fit dimension {k} of size {dims[k]}",
        )
    single = len(operands) == 1 and operands[0].shape.rank == 1  # the old rank-1 form
    if single:
        require(
            operands[0].shape.dims[0] == rank,
            instr,
            f"the offsets operand has {operands[0].shape.dims[0]} elements, expected {rank}",
        )
    else:
        require(
            len(operands) == rank, instr, f"expected {rank} offset operands, got {len(operands)}"
        )
        for o in operands:
            require(o.shape.rank == 0, instr, f"offset {o.name} must be a scalar")
    out: list[_Offset] = []
    for k in range(rank):
        bounds = Interval(0, dims[k] - sizes[k])
        if single:
            out.append(_Offset(bounds, producer=operands[0], component=k))
            continue
        value = known_scalar_int(operands[k])
        if value is not None:
            folded = clamp(value, bounds.lower, bounds.upper)
            out.append(_Offset(Interval(folded, folded), constant=folded))
        else:
            out.append(_Offset(bounds, producer=operands[k]))
    return out


def _starts(builder: MapBuilder, offsets: list[_Offset]) -> list[Expr]:
    """Each dimension's start as an expression: a constant, or a new runtime variable."""
    return [
        const(o.constant) if o.constant is not None else builder.new_rt(o.bounds) for o in offsets
    ]


def _runtime_vars(offsets: list[_Offset], dim_sizes: Sequence[int]) -> tuple[RuntimeVar, ...]:
    return tuple(o.runtime_var(o.producer, dim_sizes) for o in offsets if o.producer is not None)


def _offset_reads(instr: Instruction, first: int, out: Shape) -> list[OperandIndexing]:
    """Every output element reads every offset operand (whole, for the rank-1 form)."""
    reads = []
    for operand in instr.operands[first:]:
        if operand.shape.rank == 0:
            reads.append(OperandIndexing.of(scalar_read(out)))
        else:
            builder = MapBuilder(out.dims)
            reads.append(
                OperandIndexing.of(builder.build([builder.new_range(operand.shape.dims[0])]))
            )
    return reads


def _offset_writes(instr: Instruction, first: int, out: Shape) -> list[list[OperandIndexing]]:
    """Input-to-output for the offsets: each offset element reaches the whole output."""
    rows = []
    for operand in instr.operands[first:]:
        builder = MapBuilder(operand.shape.dims)
        rows.append([OperandIndexing.of(builder.build([builder.new_range(s) for s in out.dims]))])
    return rows


# ---------------------------------------------------------------------------
# dynamic-slice
# ---------------------------------------------------------------------------


def _dynamic_slice_parts(instr: Instruction) -> tuple[Shape, Shape, list[_Offset]]:
    require_operands(instr, at_least=2)
    operand, out = instr.operands[0].shape, instr.shape
    require(
        out.is_array and out.rank == operand.rank,
        instr,
        f"the output {out} must be an array of the operand's rank",
    )
    sizes = instr.dynamic_slice_sizes or out.dims
    require(
        tuple(sizes) == tuple(out.dims),
        instr,
        f"dynamic_slice_sizes {list(sizes)} differ from the output shape {out}",
    )
    return operand, out, _offsets(instr, 1, operand.dims, out.dims)


@output_to_input_rule("dynamic-slice")
def dynamic_slice_output_to_input(instr: Instruction) -> IndexingTable:
    _, out, offsets = _dynamic_slice_parts(instr)
    builder = MapBuilder(out.dims)
    starts = _starts(builder, offsets)
    operand_read = OperandIndexing.of(
        builder.build([builder.dim(k) + s for k, s in enumerate(starts)]),
        runtime_vars=_runtime_vars(offsets, out.dims),
    )
    return [[operand_read, *_offset_reads(instr, 1, out)]]


@input_to_output_rule("dynamic-slice")
def dynamic_slice_input_to_output(instr: Instruction) -> IndexingTable:
    operand, out, offsets = _dynamic_slice_parts(instr)
    builder = MapBuilder(operand.dims)
    starts = _starts(builder, offsets)
    results = []
    for k, s in enumerate(starts):
        index = builder.dim(k) - s
        builder.constrain(index, 0, out.dims[k] - 1)
        results.append(index)
    operand_write = OperandIndexing.of(
        builder.build(results), runtime_vars=_runtime_vars(offsets, operand.dims)
    )
    return [[operand_write], *_offset_writes(instr, 1, out)]


# ---------------------------------------------------------------------------
# dynamic-update-slice
# ---------------------------------------------------------------------------


def _dynamic_update_slice_parts(instr: Instruction) -> tuple[Shape, Shape, list[_Offset]]:
    require_operands(instr, at_least=3)
    base, update, out = instr.operands[0].shape, instr.operands[1].shape, instr.shape
    require(out.is_array and out.dims == base.dims, instr, "the output must have the base's shape")
    require(update.rank == base.rank, instr, "the update must have the base's rank")
    return base, update, _offsets(instr, 2, base.dims, update.dims)


def _outside_window(
    dims: Sequence[int], sizes: Sequence[int], offsets: list[_Offset]
) -> list[IndexingMap]:
    """Identity maps covering the indices outside the window ``[start, start + size)``."""
    maps = []
    for k in range(len(dims)):
        for below in (True, False):
            builder = MapBuilder(dims)
            starts = _starts(builder, offsets)
            gap = builder.dim(k) - starts[k]
            if below:
                builder.constrain(gap, -(2**62), -1)
            else:
                builder.constrain(gap, sizes[k], 2**62)
            m = builder.build([builder.dim(i) for i in range(len(dims))])
            if not m.is_known_empty:
                maps.append(m)
    if not maps:
        # The update covers the whole base: the base is never read.
        maps.append(replace(IndexingMap.identity(dims), state=MapState.KNOWN_EMPTY))
    return maps


@output_to_input_rule("dynamic-update-slice")
def dynamic_update_slice_output_to_input(instr: Instruction) -> IndexingTable:
    base, update, offsets = _dynamic_update_slice_parts(instr)
    runtime_vars = _runtime_vars(offsets, base.dims)
    base_read = OperandIndexing.of(
        *_outside_window(base.dims, update.dims, offsets), runtime_vars=runtime_vars
    )
    builder = MapBuilder(base.dims)
    starts = _starts(builder, offsets)
    results = []
    for k, s in enumerate(starts):
        index = builder.dim(k) - s
        builder.constrain(index, 0, update.dims[k] - 1)
        results.append(index)
    update_read = OperandIndexing.of(builder.build(results), runtime_vars=runtime_vars)
    return [[base_read, update_read, *_offset_reads(instr, 2, instr.shape)]]


@input_to_output_rule("dynamic-update-slice")
def dynamic_update_slice_input_to_output(instr: Instruction) -> IndexingTable:
    base, update, offsets = _dynamic_update_slice_parts(instr)
    base_write = OperandIndexing.of(
        *_outside_window(base.dims, update.dims, offsets),
        runtime_vars=_runtime_vars(offsets, base.dims),
    )
    builder = MapBuilder(update.dims)
    starts = _starts(builder, offsets)
    update_write = OperandIndexing.of(
        builder.build([builder.dim(k) + s for k, s in enumerate(starts)]),
        runtime_vars=_runtime_vars(offsets, update.dims),
    )
    return [[base_write], [update_write], *_offset_writes(instr, 2, instr.shape)]
