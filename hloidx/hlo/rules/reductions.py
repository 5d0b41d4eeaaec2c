"""Rules for ops that combine many elements into one: reduce, sort, dot, scaled-dot, topk."""

from __future__ import annotations

from ...maps.expr import Expr, const, dim, floordiv, range_var
from ...maps.indexing_map import IndexingMap
from ..ir import Computation, Instruction
from ..rule_registry import (
    IndexingTable,
    OperandIndexing,
    input_to_output_rule,
    output_to_input_rule,
)
from ._common import (
    all_of,
    check_dims_in_range,
    no_reads,
    operand_shape,
    require,
    scalar_read,
    single,
    unsupported,
)

# ---------------------------------------------------------------------------
# reduce (variadic: N inputs, N init values, N outputs)
# ---------------------------------------------------------------------------


def _reduce_parts(
    instr: Instruction,
) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(number of inputs, reduced dimensions, input dims, output dims)."""
    if len(instr.operands) % 2 or not instr.operands:
        raise unsupported(instr, "reduce needs as many init values as inputs")
    count = len(instr.operands) // 2
    reduced = instr.dimensions
    require(instr, reduced, "dimensions={...}")
    in_dims = operand_shape(instr, 0).dims
    check_dims_in_range(instr, reduced, len(in_dims), "dimensions")
    out_dims = tuple(n for k, n in enumerate(in_dims) if k not in reduced)
    return count, reduced, in_dims, out_dims


@output_to_input_rule("reduce")
def reduce_output_to_input(instr: Instruction) -> IndexingTable:
    count, reduced, in_dims, out_dims = _reduce_parts(instr)
    results: list[Expr] = []
    kept = 0
    for k in range(len(in_dims)):
        if k in reduced:
            results.append(range_var(sorted(reduced).index(k)))
        else:
            results.append(dim(kept))
            kept += 1
    inputs = single(IndexingMap.build(results, out_dims, [in_dims[k] for k in sorted(reduced)]))
    inits = single(scalar_read(out_dims))
    row = [inputs] * count + [inits] * count
    return [list(row) for _ in range(count)]


@input_to_output_rule("reduce")
def reduce_input_to_output(instr: Instruction) -> IndexingTable:
    count, reduced, in_dims, out_dims = _reduce_parts(instr)
    kept = [dim(k) for k in range(len(in_dims)) if k not in reduced]
    inputs = single(IndexingMap.build(kept, in_dims))
    inits = single(all_of(out_dims))
    return [[inputs] * count for _ in range(count)] + [[inits] * count for _ in range(count)]


# ---------------------------------------------------------------------------
# sort
# ---------------------------------------------------------------------------


def _used_parameters(computation: Computation) -> set[int]:
    """Parameter numbers reachable from the computation's root."""
    root = computation.root
    used: set[int] = set()
    stack, seen = [root] if root else [], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.opcode == "parameter" and node.parameter_number is not None:
            used.add(node.parameter_number)
        stack.extend(node.operands)
        for called in node.called_computations.values():
            for inner in called:
                if inner.root is not None:
                    stack.append(inner.root)  # conservative: nested calls read their inputs
    return used


def _sort_reads(instr: Instruction) -> tuple[list[list[bool]], bool]:
    """reads[output][operand], and whether it is exact (the comparator was inspected).

    Output j is operand j permuted along the sort dimension by comparisons; the
    comparator's parameters 2i and 2i+1 are operand i. So output j reads operand j and
    every operand the comparator looks at, each along the whole sort dimension.
    """
    count = len(instr.operands)
    comparators = instr.called_computations.get("to_apply") or []
    if not comparators:
        return [[True] * count for _ in range(count)], False
    used = _used_parameters(comparators[0])
    compared = [2 * i in used or 2 * i + 1 in used for i in range(count)]
    return [[i == j or compared[i] for i in range(count)] for j in range(count)], True


def _sort_dimension(instr: Instruction) -> int:
    dims = instr.dimensions
    require(instr, dims, "dimensions={...}")
    rank = operand_shape(instr, 0).rank
    if len(dims) != 1 or not 0 <= dims[0] < rank:
        raise unsupported(instr, "sort needs one dimension")
    return dims[0]


@output_to_input_rule("sort")
def sort_output_to_input(instr: Instruction) -> IndexingTable:
    axis = _sort_dimension(instr)
    shape = operand_shape(instr, 0).dims
    results = [range_var(0) if k == axis else dim(k) for k in range(len(shape))]
    along = IndexingMap.build(results, shape, [shape[axis]])
    reads, exact = _sort_reads(instr)
    return [[OperandIndexing((along,), exact) if r else no_reads() for r in row] for row in reads]


@input_to_output_rule("sort")
def sort_input_to_output(instr: Instruction) -> IndexingTable:
    axis = _sort_dimension(instr)
    shape = operand_shape(instr, 0).dims
    results = [range_var(0) if k == axis else dim(k) for k in range(len(shape))]
    along = IndexingMap.build(results, shape, [shape[axis]])
    reads, exact = _sort_reads(instr)
    count = len(instr.operands)
    return [
        [OperandIndexing((along,), exact) if reads[j][i] else no_reads() for j in range(count)]
        for i in range(count)
    ]


# ---------------------------------------------------------------------------
# dot and scaled-dot
# ---------------------------------------------------------------------------


def _dot_layout(
    instr: Instruction,
) -> tuple[list[list[tuple[str, int]]], tuple[int, ...], list[int]]:
    """For lhs and rhs, each dimension's role: ("batch", k), ("free", output dim) or
    ("contracting", k); plus the output dims and the contracted sizes."""
    numbers = instr.dot_dimension_numbers
    lhs, rhs = operand_shape(instr, 0).dims, operand_shape(instr, 1).dims
    batch = (numbers.lhs_batch, numbers.rhs_batch)
    contracting = (numbers.lhs_contracting, numbers.rhs_contracting)
    if len(batch[0]) != len(batch[1]) or len(contracting[0]) != len(contracting[1]):
        raise unsupported(instr, "lhs and rhs batch/contracting dimension lists differ in length")
    for side, dims in enumerate((lhs, rhs)):
        check_dims_in_range(
            instr, batch[side] + contracting[side], len(dims), "batch+contracting dims"
        )
    roles: list[list[tuple[str, int]]] = []
    out_dims: list[int] = list(lhs[k] for k in batch[0])
    for side, dims in enumerate((lhs, rhs)):
        side_roles = []
        for k, size in enumerate(dims):
            if k in batch[side]:
                side_roles.append(("batch", batch[side].index(k)))
            elif k in contracting[side]:
                side_roles.append(("contracting", contracting[side].index(k)))
            else:
                side_roles.append(("free", len(out_dims)))
                out_dims.append(size)
        roles.append(side_roles)
    if tuple(out_dims) != instr.shape.dims:
        raise unsupported(instr, f"the output shape should have dimensions {out_dims}")
    return roles, tuple(out_dims), [lhs[k] for k in contracting[0]]


def _dot_operand_maps(instr: Instruction) -> tuple[IndexingMap, IndexingMap]:
    roles, out_dims, contracted = _dot_layout(instr)
    maps = []
    for side_roles in roles:
        results = []
        for role, k in side_roles:
            results.append(range_var(k) if role == "contracting" else dim(k))
        maps.append(IndexingMap.build(results, out_dims, contracted))
    return maps[0], maps[1]


@output_to_input_rule("dot")
def dot_output_to_input(instr: Instruction) -> IndexingTable:
    lhs, rhs = _dot_operand_maps(instr)
    return [[single(lhs), single(rhs)]]


@input_to_output_rule("dot")
def dot_input_to_output(instr: Instruction) -> IndexingTable:
    # operand element -> every output element that uses it: its own batch and free
    # coordinates fixed, the other operand's free coordinates ranging.
    roles, out_dims, _ = _dot_layout(instr)
    table = []
    for side in (0, 1):
        out_index: list[Expr] = [const(0)] * len(out_dims)
        for k, (role, j) in enumerate(roles[side]):
            if role != "contracting":
                out_index[j] = dim(k)  # batch k sits at output dim k; free ones at j
        other_free = [j for role, j in roles[1 - side] if role == "free"]
        for r, j in enumerate(other_free):
            out_index[j] = range_var(r)
        in_dims = operand_shape(instr, side).dims
        table.append(
            [single(IndexingMap.build(out_index, in_dims, [out_dims[j] for j in other_free]))]
        )
    return table


def _rescaled(
    instr: Instruction, operand_map: IndexingMap, operand_id: int, scale_id: int
) -> IndexingMap:
    operand, scale = operand_shape(instr, operand_id).dims, operand_shape(instr, scale_id).dims
    if len(operand) != len(scale) or any(
        s == 0 or n % s for n, s in zip(operand, scale, strict=True)
    ):
        raise unsupported(instr, "a scale's dimensions must divide its operand's")
    results = [
        r if n == s else floordiv(r, n // s)
        for r, n, s in zip(operand_map.results, operand, scale, strict=True)
    ]
    return operand_map.with_results(results)


@output_to_input_rule("scaled-dot")
def scaled_dot_output_to_input(instr: Instruction) -> IndexingTable:
    if len(instr.operands) != 4:
        raise unsupported(instr, "scaled-dot needs lhs, rhs and their two scales")
    lhs, rhs = _dot_operand_maps(instr)
    return [
        [
            single(lhs),
            single(rhs),
            single(_rescaled(instr, lhs, 0, 2)),
            single(_rescaled(instr, rhs, 1, 3)),
        ]
    ]


# ---------------------------------------------------------------------------
# topk: (values, indices) of the k largest along the minor dimension
# ---------------------------------------------------------------------------


def _topk_maps(instr: Instruction) -> tuple[IndexingMap, IndexingMap]:
    """(output index -> operand row, operand index -> output row): every element of the
    result depends on the whole row of the operand it was selected from."""
    src = operand_shape(instr, 0).dims
    outputs = instr.shape.tuple_shapes or (instr.shape,)
    out = outputs[0].dims
    if not src or len(out) != len(src) or out[:-1] != src[:-1]:
        raise unsupported(instr, "topk reads rows along the minor dimension of its operand")
    minor = len(src) - 1
    row = [range_var(0) if k == minor else dim(k) for k in range(len(src))]
    return IndexingMap.build(row, out, [src[minor]]), IndexingMap.build(row, src, [out[minor]])


@output_to_input_rule("topk")
def topk_output_to_input(instr: Instruction) -> IndexingTable:
    reads, _ = _topk_maps(instr)
    return [[single(reads)] for _ in (instr.shape.tuple_shapes or (instr.shape,))]


@input_to_output_rule("topk")
def topk_input_to_output(instr: Instruction) -> IndexingTable:
    _, feeds = _topk_maps(instr)
    return [[single(feeds) for _ in (instr.shape.tuple_shapes or (instr.shape,))]]
