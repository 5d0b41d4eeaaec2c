"""Rules for elementwise ops, ops without operands, tuple plumbing, bitcast-convert, random
number generators and collectives.

Data-movement ops live in :mod:`.shape_ops`, reductions/sort/dot in :mod:`.reductions`.
"""

from __future__ import annotations

from ...maps.expr import dim, range_var
from ...maps.indexing_map import IndexingMap
from ..ir import Instruction, Shape
from ..rule_registry import (
    IndexingTable,
    OperandIndexing,
    input_to_output_rule,
    output_to_input_rule,
)
from ..sparse_rows import one_hot
from ._common import (
    all_of,
    identity,
    no_reads,
    operand_shape,
    output_shapes,
    require,
    scalar_read,
    single,
    unsupported,
)

# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------

#: ops whose output element i reads element i of every operand (or the operand itself when
#: it is a scalar of a non-scalar op, e.g. select's predicate, clamp's bounds)
ELEMENTWISE = (
    "abs",
    "add",
    "and",
    "atan2",
    "cbrt",
    "ceil",
    "clamp",
    "clz",
    "count-leading-zeros",
    "compare",
    "complex",
    "convert",
    "copy",
    "cos",
    "cosine",
    "divide",
    "erf",
    "exp",
    "exponential",
    "exponential-minus-one",
    "floor",
    "imag",
    "is-finite",
    "log",
    "log-plus-one",
    "logistic",
    "map",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "or",
    "popcnt",
    "power",
    "real",
    "reduce-precision",
    "remainder",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "select",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "sign",
    "sin",
    "sine",
    "sqrt",
    "stochastic-convert",
    "subtract",
    "tan",
    "tanh",
    "xor",
    # single-device view of all-reduce: element i of the result combines element i of
    # the operand on every replica of the group
    "all-reduce",
    "all-reduce-start",
    "all-reduce-done",
    # pure pass-through
    "domain",
)


def _is_broadcast_scalar(operand: Shape, output: Shape) -> bool:
    return operand.rank == 0 and output.rank > 0


def _elementwise_outputs(instr: Instruction) -> list[Shape]:
    outputs = output_shapes(instr)
    if len(outputs) > 1 and len(outputs) != len(instr.operands):
        raise unsupported(instr, "a multi-output elementwise op needs one operand per output")
    for i, operand in enumerate(instr.operands):
        reference = outputs[i] if len(outputs) > 1 else outputs[0]
        if not operand.shape.is_array:
            raise unsupported(instr, f"operand {i} is not an array")
        if operand.shape.dims != reference.dims and not _is_broadcast_scalar(
            operand.shape, reference
        ):
            raise unsupported(
                instr, f"operand {i} {operand.shape} does not match the output {reference}"
            )
    return outputs


@output_to_input_rule(*ELEMENTWISE)
def elementwise_output_to_input(instr: Instruction) -> IndexingTable:
    outputs = _elementwise_outputs(instr)
    if len(outputs) > 1:  # variadic all-reduce: output i is operand i (one cell per row)
        count = len(instr.operands)
        return [one_hot(count, j, single(identity(out.dims))) for j, out in enumerate(outputs)]
    out = outputs[0]
    return [
        [
            single(scalar_read(out.dims))
            if _is_broadcast_scalar(o.shape, out)
            else single(identity(out.dims))
            for o in instr.operands
        ]
    ]


@input_to_output_rule(*ELEMENTWISE)
def elementwise_input_to_output(instr: Instruction) -> IndexingTable:
    outputs = _elementwise_outputs(instr)
    if len(outputs) > 1:
        return [
            one_hot(len(outputs), i, single(identity(outputs[i].dims)))
            for i in range(len(instr.operands))
        ]
    out = outputs[0]
    return [
        [
            single(all_of(out.dims))
            if _is_broadcast_scalar(o.shape, out)
            else single(identity(out.dims))
        ]
        for o in instr.operands
    ]


# ---------------------------------------------------------------------------
# ops without operands
# ---------------------------------------------------------------------------

NO_OPERANDS = (
    "constant",
    "iota",
    "parameter",
    "partition-id",
    "replica-id",
    "rng-get-and-update-state",
)


@output_to_input_rule(*NO_OPERANDS)
def no_operands_output_to_input(instr: Instruction) -> IndexingTable:
    return [[] for _ in output_shapes(instr)]


@input_to_output_rule(*NO_OPERANDS)
def no_operands_input_to_output(instr: Instruction) -> IndexingTable:
    return []


# ---------------------------------------------------------------------------
# tuples and pass-through ops
# ---------------------------------------------------------------------------
# A tuple-shaped operand is indexed like XLA does for get-tuple-element: by the index of
# the array element concerned (the maps do not say which tuple element; the op does).


# Output j reads operand j alone: each row stores its one cell and stands for the others
# (:class:`..sparse_rows.SparseRow`), so a train state of thousands of elements costs linear
# time and memory, not a table of every element against every other.


@output_to_input_rule("tuple")
def tuple_output_to_input(instr: Instruction) -> IndexingTable:
    count = len(instr.operands)
    return [one_hot(count, j, single(identity(o.shape.dims))) for j, o in enumerate(instr.operands)]


@input_to_output_rule("tuple")
def tuple_input_to_output(instr: Instruction) -> IndexingTable:
    count = len(instr.operands)
    return [one_hot(count, i, single(identity(o.shape.dims))) for i, o in enumerate(instr.operands)]


def _tuple_element(instr: Instruction) -> Shape:
    index = instr.tuple_index
    require(instr, index, "index=N")
    tuple_shape = operand_shape(instr, 0)
    if tuple_shape.tuple_shapes is None or not 0 <= index < len(tuple_shape.tuple_shapes):
        raise unsupported(instr, f"operand is not a tuple with an element {index}")
    element = tuple_shape.tuple_shapes[index]
    if element.dims != instr.shape.dims:
        raise unsupported(instr, f"tuple element {index} is {element}, the result {instr.shape}")
    return element


def _selected_elements(instr: Instruction) -> list[Shape]:
    """The arrays the result is made of: itself, or the elements of a tuple it selects (each
    element an array; a deeper tuple has no rule)."""
    element = _tuple_element(instr)
    if element.tuple_shapes is None:
        return [element]
    if any(e.tuple_shapes is not None for e in element.tuple_shapes):
        raise unsupported(instr, "the selected element is a tuple holding tuples")
    return list(element.tuple_shapes)


# A tuple-valued result (an element that is itself a tuple) has one output per array in it,
# each the same array of the operand: one identity per output, never a map of the tuple.
@output_to_input_rule("get-tuple-element")
def get_tuple_element_output_to_input(instr: Instruction) -> IndexingTable:
    return [[single(identity(e.dims))] for e in _selected_elements(instr)]


@input_to_output_rule("get-tuple-element")
def get_tuple_element_input_to_output(instr: Instruction) -> IndexingTable:
    return [[single(identity(e.dims)) for e in _selected_elements(instr)]]


def _pass_through_outputs(instr: Instruction) -> list[Shape]:
    """opt-barrier: a tuple in, the same tuple out; element j of the output is element j."""
    shape = operand_shape(instr, 0)
    outputs = output_shapes(instr)
    inputs = list(shape.tuple_shapes) if shape.tuple_shapes is not None else [shape]
    if [s.dims for s in inputs] != [s.dims for s in outputs]:
        raise unsupported(instr, "the result must have the operand's shape")
    return outputs


@output_to_input_rule("opt-barrier")
def opt_barrier_output_to_input(instr: Instruction) -> IndexingTable:
    return [[single(identity(out.dims))] for out in _pass_through_outputs(instr)]


@input_to_output_rule("opt-barrier")
def opt_barrier_input_to_output(instr: Instruction) -> IndexingTable:
    return [[single(identity(out.dims)) for out in _pass_through_outputs(instr)]]


@output_to_input_rule("add-dependency")
def add_dependency_output_to_input(instr: Instruction) -> IndexingTable:
    # the result is operand 0; the token operand carries no data
    return [[single(identity(instr.shape.dims)), no_reads()]]


@input_to_output_rule("add-dependency")
def add_dependency_input_to_output(instr: Instruction) -> IndexingTable:
    return [[single(identity(instr.shape.dims))], [no_reads()]]


def _copy_start_outputs(instr: Instruction) -> list[Shape]:
    outputs = output_shapes(instr)
    source = operand_shape(instr, 0)
    if len(outputs) < 2 or any(o.dims != source.dims for o in outputs[:2]):
        raise unsupported(instr, "copy-start should produce (destination, source, context)")
    return outputs


@output_to_input_rule("copy-start")
def copy_start_output_to_input(instr: Instruction) -> IndexingTable:
    # (destination, source, context): the first two are the operand; the context is a
    # handle that reads no element
    outputs = _copy_start_outputs(instr)
    return [[single(identity(out.dims)) if j < 2 else no_reads()] for j, out in enumerate(outputs)]


@input_to_output_rule("copy-start")
def copy_start_input_to_output(instr: Instruction) -> IndexingTable:
    outputs = _copy_start_outputs(instr)
    return [[single(identity(out.dims)) if j < 2 else no_reads() for j, out in enumerate(outputs)]]


@output_to_input_rule("copy-done")
def copy_done_output_to_input(instr: Instruction) -> IndexingTable:
    return [[single(identity(instr.shape.dims))]]


@input_to_output_rule("copy-done")
def copy_done_input_to_output(instr: Instruction) -> IndexingTable:
    return [[single(identity(instr.shape.dims))]]


# ---------------------------------------------------------------------------
# bitcast-convert (possibly changing the element width)
# ---------------------------------------------------------------------------


def _bitcast_convert_kind(instr: Instruction) -> str:
    src, dst = operand_shape(instr, 0), instr.shape
    if src.dims == dst.dims:
        return "same"
    if dst.rank == src.rank + 1 and dst.dims[:-1] == src.dims:
        return "narrow"  # f32[10] -> u8[10,4]: a new minor dimension of pieces
    if src.rank == dst.rank + 1 and src.dims[:-1] == dst.dims:
        return "widen"  # u8[10,4] -> f32[10]: the minor dimension is consumed
    raise unsupported(instr, f"cannot bitcast-convert {src} to {dst}")


@output_to_input_rule("bitcast-convert")
def bitcast_convert_output_to_input(instr: Instruction) -> IndexingTable:
    kind = _bitcast_convert_kind(instr)
    dst = instr.shape.dims
    if kind == "same":
        return [[single(identity(dst))]]
    if kind == "narrow":
        return [[single(IndexingMap.build([dim(k) for k in range(len(dst) - 1)], dst))]]
    pieces = operand_shape(instr, 0).dims[-1]
    return [
        [
            single(
                IndexingMap.build([dim(k) for k in range(len(dst))] + [range_var(0)], dst, [pieces])
            )
        ]
    ]


@input_to_output_rule("bitcast-convert")
def bitcast_convert_input_to_output(instr: Instruction) -> IndexingTable:
    kind = _bitcast_convert_kind(instr)
    src = operand_shape(instr, 0).dims
    if kind == "same":
        return [[single(identity(src))]]
    if kind == "widen":
        return [[single(IndexingMap.build([dim(k) for k in range(len(src) - 1)], src))]]
    pieces = instr.shape.dims[-1]
    return [
        [
            single(
                IndexingMap.build([dim(k) for k in range(len(src))] + [range_var(0)], src, [pieces])
            )
        ]
    ]


# ---------------------------------------------------------------------------
# random numbers
# ---------------------------------------------------------------------------


@output_to_input_rule("rng")
def rng_output_to_input(instr: Instruction) -> IndexingTable:
    # rng(a, b): every element is drawn from a distribution with scalar parameters a, b
    out = instr.shape.dims
    return [
        [
            single(scalar_read(out))
            if operand.shape.rank == 0
            else OperandIndexing.of(_whole(operand.shape.dims, out), exact=False)
            for operand in instr.operands
        ]
    ]


@input_to_output_rule("rng")
def rng_input_to_output(instr: Instruction) -> IndexingTable:
    out = instr.shape.dims
    return [
        [
            single(all_of(out))
            if operand.shape.rank == 0
            else OperandIndexing.of(_everything(operand.shape.dims, out), exact=False)
        ]
        for operand in instr.operands
    ]


def _whole(operand_dims: tuple[int, ...], out_dims: tuple[int, ...]) -> IndexingMap:
    """``(d...)[s...] -> (s...)``: every output element may read the whole operand."""
    return IndexingMap.build(
        [range_var(k) for k in range(len(operand_dims))], out_dims, operand_dims
    )


def _everything(operand_dims: tuple[int, ...], out_dims: tuple[int, ...]) -> IndexingMap:
    """``(d...)[s...] -> (s...)`` from the operand: each element may feed every output."""
    return IndexingMap.build([range_var(k) for k in range(len(out_dims))], operand_dims, out_dims)


@output_to_input_rule("rng-bit-generator")
def rng_bit_generator_output_to_input(instr: Instruction) -> IndexingTable:
    # (new state, random bits) = f(state): the algorithm mixes the whole state into
    # every output element, which we cannot see element by element: over-approximate.
    state = operand_shape(instr, 0).dims
    return [
        [OperandIndexing.of(_whole(state, out.dims), exact=False)] for out in output_shapes(instr)
    ]


@input_to_output_rule("rng-bit-generator")
def rng_bit_generator_input_to_output(instr: Instruction) -> IndexingTable:
    state = operand_shape(instr, 0).dims
    return [
        [
            OperandIndexing.of(_everything(state, out.dims), exact=False)
            for out in output_shapes(instr)
        ]
    ]


# ---------------------------------------------------------------------------
# collectives
# ---------------------------------------------------------------------------
# Maps index the local operand; which replica's copy is read is given by
# ``OperandIndexing.replica_id_map`` where XLA defines one (all-gather), or by a note.
