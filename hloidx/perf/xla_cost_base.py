"""What the modules of XLA's ``HloCostAnalysis`` share: property keys, XLA's shape sizes, its
elementwise test, 32-bit rounding and the post order of a computation."""

from __future__ import annotations

import struct
from math import ceil
from typing import TYPE_CHECKING

from ..hlo.element_types import element_bytes
from ..hlo.fusion import body_of

if TYPE_CHECKING:
    from ..hlo.ir import Computation, Instruction, Shape

#: ``HloInstruction::IsOpElementwise`` (hloidx spells some opcodes differently from XLA's enum)
ELEMENTWISE_OPS = frozenset(
    [
        "abs",
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atanh",
        "round-nearest-afz",
        "round-nearest-even",
        "ceil",
        "clz",
        "count-leading-zeros",
        "convert",
        "bitcast-convert",
        "copy",
        "cos",
        "cosine",
        "cosh",
        "erf",
        "exp",
        "exponential",
        "expm1",
        "exponential-minus-one",
        "floor",
        "imag",
        "is-finite",
        "log",
        "log1p",
        "log-plus-one",
        "not",
        "negate",
        "popcnt",
        "population-count",
        "real",
        "reduce-precision",
        "rsqrt",
        "logistic",
        "sign",
        "sin",
        "sine",
        "sinh",
        "sqrt",
        "cbrt",
        "tan",
        "tanh",
        "add",
        "atan2",
        "compare",
        "complex",
        "divide",
        "maximum",
        "minimum",
        "multiply",
        "power",
        "remainder",
        "subtract",
        "and",
        "or",
        "xor",
        "shift-left",
        "shift-right-arithmetic",
        "shift-right-logical",
        "stochastic-convert",
        "select",
        "clamp",
        "map",
    ]
)
#: elementwise ops whose handler is ``HandleElementwiseOp`` (copy and map have their own)
FLOP_ELEMENTWISE = ELEMENTWISE_OPS - {"copy", "map"}
#: ``GpuHloCostAnalysis::immediate_constant_max_elements``
IMMEDIATE_CONSTANT_MAX_ELEMENTS = 8
#: bytes of a tuple's pointer table entry (``ShapeUtil::ByteSizeOf(shape, 8)``)
POINTER_SIZE = 8
CUDNN_CONVOLUTIONS = frozenset(
    {
        "__cudnn$convForward",
        "__cudnn$convBackwardInput",
        "__cudnn$convBackwardFilter",
        "__cudnn$convBiasActivationForward",
        "__cudnn$convForwardGraph",
    }
)
CUBLAS_GEMMS = frozenset({"__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8"})
#: the properties a caller copies from a called computation (``KeyToCopyFromSubcomputation``)
COPIED = frozenset({"flops", "transcendentals", "transferred"})


def f32(x: float) -> float:
    """``x`` rounded to a 32-bit float, as XLA stores every property."""
    return struct.unpack("f", struct.pack("f", x))[0]


def shape_size(shape: Shape) -> int:
    """``ShapeUtil::ByteSizeOf(shape, 8)``: an array's bytes; a tuple's pointer table."""
    if shape.is_tuple:
        return POINTER_SIZE * len(shape.tuple_shapes or ())
    if not shape.is_array:
        return 0
    return shape.num_elements() * element_bytes(shape.element_type)


def elements_recursive(shape: Shape) -> int:
    return sum(s.num_elements() for s in shape.leaves() if s.is_array)


def first_array(shape: Shape) -> Shape:
    return shape.tuple_shapes[0] if shape.is_tuple and shape.tuple_shapes else shape


def array_leaf_bytes(shape: Shape, skip_index: int = -1) -> int:
    """The bytes of every array leaf, the top-level element ``skip_index`` left out."""
    if not shape.is_tuple:
        return shape_size(shape) if shape.is_array else 0
    return sum(
        array_leaf_bytes(s) for k, s in enumerate(shape.tuple_shapes or ()) if k != skip_index
    )


def is_elementwise(instr: Instruction) -> bool:
    """``HloInstruction::IsElementwise`` (a fusion: every fused instruction elementwise)."""
    op = instr.opcode
    if op == "bitcast-convert":
        a, b = instr.shape, instr.operands[0].shape if instr.operands else instr.shape
        return element_bytes(a.element_type) == element_bytes(b.element_type)
    if op == "fusion":
        return all(
            i.opcode == "parameter" or is_elementwise(i) for i in body_of(instr).instructions
        )
    return op in ELEMENTWISE_OPS


def _default_layout(shape: Shape) -> tuple[int, ...]:
    if shape.layout is not None and len(shape.layout.minor_to_major) == shape.rank:
        return shape.layout.minor_to_major
    return tuple(range(shape.rank - 1, -1, -1))


def transpose_is_bitcast(instr: Instruction) -> bool:
    """``ShapeUtil::TransposeIsBitcast``: the permutation maps the output's minor-to-major order
    onto the input's exactly (unit dimensions included), same element type."""
    src, out = instr.operands[0].shape, instr.shape
    if src.element_type != out.element_type:
        return False
    perm = instr.dimensions or ()
    out_order = _default_layout(out)
    if any(d >= len(perm) for d in out_order):
        return False
    return tuple(perm[d] for d in out_order) == tuple(_default_layout(src))


class Props(dict):
    """One instruction's properties; a missing key is 0, as in XLA's ``Properties``."""

    def __missing__(self, key):
        return 0.0


def operand_key(i: int, index: tuple[int, ...] = ()) -> tuple:
    return ("operand_bytes", i, index)


def util_key(i: int, index: tuple[int, ...] = ()) -> tuple:
    return ("operand_util", i, index)


def out_key(index: tuple[int, ...] = ()) -> tuple:
    return ("output_bytes", index)


def post_order(comp: Computation) -> list[Instruction]:
    """The computation's instructions, each after its operands (XLA's post order)."""
    seen: set[int] = set()
    order: list[Instruction] = []
    members = {id(i) for i in comp.instructions}
    for start in comp.instructions:
        if id(start) in seen:
            continue
        stack = [(start, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for operand in reversed(node.operands):
                if id(operand) in members and id(operand) not in seen:
                    stack.append((operand, False))
    return order


def round_up_utilization(utilization: float, elements: int) -> float:
    """Fractional utilization rounded up to whole elements (``FusionCalculateUtilizations``)."""
    if elements == 0:
        return 0.0
    return f32(ceil(f32(utilization * elements)) / elements)
