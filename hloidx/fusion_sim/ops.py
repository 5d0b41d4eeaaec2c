"""Which ops XLA:GPU's fusion passes may fuse, and how (``gpu_fusible.cc``, PriorityFusion).

A producer is fused into its consumers only if it is *loop fusible as a producer*
(``IsLoopFusibleAsProducer``: elementwise ops, broadcasts, reshapes, transposes, slices,
iotas, constants, ...); a reduction, a scatter and a dynamic-update-slice are fusion roots
(heroes), never producers. Dots, convolutions, custom-calls, sorts, collectives and control
flow are never fused: they are library calls or thunks of their own.
"""

from __future__ import annotations

ELEMENTWISE = frozenset(
    """abs add and atan2 cbrt ceil clamp clz compare complex convert cosine divide erf
    exponential exponential-minus-one floor imag is-finite log log-plus-one logistic maximum
    minimum multiply negate not or popcnt power real reduce-precision remainder
    round-nearest-afz round-nearest-even rsqrt select shift-left shift-right-arithmetic
    shift-right-logical sign sine sqrt subtract tan tanh xor bitcast-convert
    stochastic-convert""".split()  # noqa: SIM905
)
#: ``HloInstruction::IsExpensive`` for floating point: transcendental ops, division, powers
EXPENSIVE = frozenset(
    """atan2 cbrt cosine divide erf exponential exponential-minus-one log log-plus-one
    logistic power remainder rsqrt sine sqrt tan tanh""".split()  # noqa: SIM905
)
#: loop fusible as producers (``IsLoopFusibleAsProducer`` less the reductions)
PRODUCER_OPS = ELEMENTWISE | frozenset(
    """broadcast reshape bitcast transpose iota constant slice dynamic-slice pad
    concatenate reverse gather copy map reduce-window""".split()  # noqa: SIM905
)
#: fusible as consumers: the producers' ops plus the heroes that only ever root a fusion
CONSUMER_OPS = PRODUCER_OPS | frozenset(
    {"reduce", "scatter", "dynamic-update-slice", "select-and-scatter"}
)
#: fusion roots that write in place into operand 0 (never fuse a producer of that operand)
IN_PLACE = frozenset({"scatter", "dynamic-update-slice"})
#: ops that launch no kernel when left alone (XLA wraps every other lone op in a fusion)
FREE_ALONE = frozenset({"bitcast", "constant", "parameter", "get-tuple-element", "tuple"})


def is_producer(opcode: str) -> bool:
    return opcode in PRODUCER_OPS


def is_consumer(opcode: str) -> bool:
    return opcode in CONSUMER_OPS


def is_expensive(opcode: str, element_type: str) -> bool:
    if opcode not in EXPENSIVE:
        return False
    # integer division is cheap on a GPU; XLA counts only floating point as expensive
    return not (opcode in ("divide", "remainder", "power") and element_type[:1] in "su")


def bit_width(element_type: str) -> int:
    digits = "".join(c for c in element_type if c.isdigit())
    return int(digits.split("e")[0]) if digits else 8


def is_fusible_producer(ins) -> bool:
    """``IsLoopFusibleAsProducer``, and never a bitcast that changes the element width."""
    if not is_producer(ins.opcode):
        return False
    if ins.opcode == "bitcast" and ins.operands:
        return bit_width(ins.shape.element_type) == bit_width(ins.operands[0].shape.element_type)
    if ins.opcode == "transpose":
        return not is_tiled_transpose(ins)
    if ins.opcode == "constant":  # only a small (scalar) constant is fused; a larger one
        return ins.shape.is_array and ins.shape.num_elements() <= 1  # is read from memory
    return True


def is_tiled_transpose(ins) -> bool:
    """A transpose that moves the minor dimension, large enough for XLA's shared-memory
    transpose emitter (``kMinDimensionToTransposeTiled``: both minor dimensions >= 16, or
    >= 8 with at least 64 x 128 elements): it heads a kernel of its own (XLA does not fuse
    it into a reduction or a loop consumer)."""
    order = ins.dimensions or ()
    if not order or not ins.shape.is_array or order[-1] == len(order) - 1:
        return False
    source = ins.operands[0].shape.dims
    small = min(source[-1], ins.shape.dims[-1])
    return small >= 16 or (small >= 8 and ins.shape.num_elements() >= 64 * 128)
