"""Collectives: all-gather (with its replica-id map), all-reduce and the *-done halves,
collective-permute, reduce-scatter and all-to-all, in both directions."""

from __future__ import annotations

import re
from dataclasses import replace

from ...maps.expr import Expr, dim, floordiv, mod, range_var
from ...maps.indexing_map import IndexingMap
from ..ir import Instruction, Shape
from ..rule_registry import (
    IndexingTable,
    OperandIndexing,
    input_to_output_rule,
    output_to_input_rule,
)
from ._common import (
    identity,
    operand_shape,
    output_shapes,
    require,
    single,
    unsupported,
)


def group_size(instr: Instruction) -> int | None:
    """Participants per replica group, from ``replica_groups`` (or the module's replica count)."""
    text = instr.attributes.get("replica_groups", "").replace(" ", "")
    iota = re.match(r"\[(\d+),(\d+)\]<=", text)
    if iota:
        return int(iota.group(2))
    groups = re.findall(r"\{([\d,]*)\}", text)
    sizes = {len([x for x in g.split(",") if x]) for g in groups if g}
    if len(sizes) == 1:
        return sizes.pop()
    module = instr.computation.module if instr.computation is not None else None
    if module is not None and module.attributes.get("replica_count", "").isdigit():
        return int(module.attributes["replica_count"])
    return None


def _collective_dimension(instr: Instruction) -> int:
    dims = instr.dimensions
    require(instr, dims, "dimensions={...}")
    if len(dims) != 1 or not 0 <= dims[0] < operand_shape(instr, 0).rank:
        raise unsupported(instr, "needs one dimension")
    return dims[0]


def _all_gather_output(instr: Instruction) -> Shape:
    outputs = output_shapes(instr)
    # all-gather-start returns (operand, result); the gathered array is the last element
    return outputs[-1]


@output_to_input_rule("all-gather", "all-gather-start")
def all_gather_output_to_input(instr: Instruction) -> IndexingTable:
    if len(instr.operands) != 1:
        raise unsupported(instr, "only the single-operand all-gather is supported")
    axis = _collective_dimension(instr)
    out = _all_gather_output(instr).dims
    piece = operand_shape(instr, 0).dims[axis]
    results = [mod(dim(k), piece) if k == axis else dim(k) for k in range(len(out))]
    replica = IndexingMap.build([floordiv(dim(axis), piece)], out)
    gathered = OperandIndexing(
        (IndexingMap.build(results, out),),
        replica_id_map=replica,
        notes=(f"read on the replica at group position d{axis} floordiv {piece}",),
    )
    if instr.opcode == "all-gather-start":
        return [[single(identity(operand_shape(instr, 0).dims))], [gathered]]
    return [[gathered]]


@input_to_output_rule("all-gather", "all-gather-start")
def all_gather_input_to_output(instr: Instruction) -> IndexingTable:
    if len(instr.operands) != 1:
        raise unsupported(instr, "only the single-operand all-gather is supported")
    axis = _collective_dimension(instr)
    src = operand_shape(instr, 0).dims
    out = _all_gather_output(instr).dims
    piece = src[axis]
    copies = out[axis] // piece if piece else 0
    # an element of the local operand lands in the output block of this replica's group
    # position, which the map cannot name: every block (sound, not exact)
    results = [range_var(0) * piece + dim(k) if k == axis else dim(k) for k in range(len(src))]
    scattered = OperandIndexing.of(
        IndexingMap.build(results, src, [copies]),
        exact=False,
        notes=("the block is this replica's position in its group",),
    )
    if instr.opcode == "all-gather-start":
        return [[single(identity(src)), scattered]]
    return [[scattered]]


#: which element of its *-start's tuple a *-done returns (negative: from the end)
DONE_ELEMENT = {"all-gather-done": -1, "collective-permute-done": 1, "all-reduce-done": 0}


def done_element(instr: Instruction) -> int | None:
    """The element of the (tuple-shaped) start operand a *-done reads; None for an array."""
    start = instr.operands[0].shape if instr.operands else None
    if start is None or not start.is_tuple:
        return None
    count = len(start.tuple_shapes or ())
    k = DONE_ELEMENT.get(instr.opcode, 0)
    return k % count if count else None


@output_to_input_rule("all-gather-done", "all-reduce-done", "collective-permute-done")
def collective_done_output_to_input(instr: Instruction) -> IndexingTable:
    cell = single(identity(instr.shape.dims))
    return [[replace(cell, element=done_element(instr))]]


@input_to_output_rule("all-gather-done", "all-reduce-done", "collective-permute-done")
def collective_done_input_to_output(instr: Instruction) -> IndexingTable:
    cell = single(identity(instr.shape.dims))
    return [[replace(cell, element=done_element(instr))]]


@output_to_input_rule("collective-permute", "collective-permute-start")
def collective_permute_output_to_input(instr: Instruction) -> IndexingTable:
    if len(instr.operands) != 1:
        raise unsupported(instr, "only the single-operand collective-permute is supported")
    src = operand_shape(instr, 0).dims
    outputs = output_shapes(instr)
    if instr.opcode == "collective-permute" and outputs[-1].dims != src:
        raise unsupported(instr, "the result must have the operand's shape")
    moved = OperandIndexing(
        (identity(src),), notes=("read on the source replica of source_target_pairs",)
    )
    # collective-permute-start: (operand, result, contexts...); the contexts read nothing
    nothing = OperandIndexing((IndexingMap.known_empty(),))
    return [[moved if out.dims == src else nothing] for out in outputs]


@input_to_output_rule("collective-permute", "collective-permute-start")
def collective_permute_input_to_output(instr: Instruction) -> IndexingTable:
    src = operand_shape(instr, 0).dims
    moved = OperandIndexing((identity(src),), notes=("written on the target replica",))
    nothing = OperandIndexing((IndexingMap.known_empty(),))
    return [[moved if out.dims == src else nothing for out in output_shapes(instr)]]


def _reduce_scatter_blocks(instr: Instruction) -> tuple[int, tuple[int, ...], tuple[int, ...], int]:
    """(axis, operand dims, output dims, block size) of a single-operand reduce-scatter."""
    if len(instr.operands) != 1:
        raise unsupported(instr, "only the single-operand reduce-scatter is supported")
    axis = _collective_dimension(instr)
    src, out = operand_shape(instr, 0).dims, instr.shape.dims
    piece = out[axis]
    if piece == 0 or src[axis] % piece:
        raise unsupported(instr, "the scattered dimension must divide the operand's")
    return axis, src, out, piece


@output_to_input_rule("reduce-scatter")
def reduce_scatter_output_to_input(instr: Instruction) -> IndexingTable:
    # output block r of the reduced array goes to group position r: the local operand is
    # read at block (own position) — a range variable over the blocks, not exact
    axis, src, out, piece = _reduce_scatter_blocks(instr)
    results = [range_var(0) * piece + dim(k) if k == axis else dim(k) for k in range(len(out))]
    return [
        [
            OperandIndexing.of(
                IndexingMap.build(results, out, [src[axis] // piece]),
                exact=False,
                notes=(
                    "the block is this replica's position in its group; "
                    "summed over every replica of the group",
                ),
            )
        ]
    ]


@input_to_output_rule("reduce-scatter")
def reduce_scatter_input_to_output(instr: Instruction) -> IndexingTable:
    axis, src, _out, piece = _reduce_scatter_blocks(instr)
    results = [mod(dim(k), piece) if k == axis else dim(k) for k in range(len(src))]
    return [
        [
            OperandIndexing.of(
                IndexingMap.build(results, src),
                exact=False,
                notes=(f"feeds the replica at group position d{axis} floordiv {piece}",),
            )
        ]
    ]


@output_to_input_rule("all-to-all")
def all_to_all_output_to_input(instr: Instruction) -> IndexingTable:
    # array form: the split/concat dimension is cut into N blocks; output block r comes
    # from group position r, where it was that replica's block (own position)
    out = instr.shape.dims
    axis, count, piece, results = _all_to_all_blocks(instr, out)
    return [
        [
            OperandIndexing(
                (IndexingMap.build(results, out, [count]),),
                exact=False,
                replica_id_map=IndexingMap.build([floordiv(dim(axis), piece)], out),
                notes=("the block read is this replica's position in its group",),
            )
        ]
    ]


def _all_to_all_blocks(
    instr: Instruction, dims: tuple[int, ...]
) -> tuple[int, int, int, list[Expr]]:
    """(axis, group size, block size, results): index ``d`` of a tensor of ``dims`` is exchanged
    for block ``s0`` of the split/concat axis at the same offset inside the block."""
    if len(instr.operands) != 1:
        raise unsupported(instr, "only the array form of all-to-all is supported")
    axis = _collective_dimension(instr)
    count = group_size(instr)
    if not count or dims[axis] % count:
        raise unsupported(instr, "cannot tell the group size from replica_groups")
    piece = dims[axis] // count
    results = [
        range_var(0) * piece + mod(dim(k), piece) if k == axis else dim(k) for k in range(len(dims))
    ]
    return axis, count, piece, results


@input_to_output_rule("all-to-all")
def all_to_all_input_to_output(instr: Instruction) -> IndexingTable:
    src = operand_shape(instr, 0).dims
    axis, count, piece, results = _all_to_all_blocks(instr, src)
    return [
        [
            OperandIndexing(
                (IndexingMap.build(results, src, [count]),),
                exact=False,
                notes=(f"sent to the replica at group position d{axis} floordiv {piece}",),
            )
        ]
    ]
