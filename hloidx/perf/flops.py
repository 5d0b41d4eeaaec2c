"""Flops as XLA:GPU's cost model counts them (``FlopsPerElement`` of
``GpuPerformanceModelWithIndexingAnalysis`` and the ``GpuHloCostAnalysis`` counts it falls back
on, openxla ab4462695acd54607187163f9435fec284f86a0c).

An elementwise op costs its clock cycles per element from XLA's op profiles (3 without an
entry); ops that only move or index data cost nothing; a reduce costs its reducer's flops
``reduced - 1`` times per output element; every other op costs its total flop count divided
by its number of output elements (integer division, as XLA does): dots and convolutions 2 per
multiply-add, reduce-windows their reducer per window step, concatenates 6 per element (400
when a non-major concatenated operand's size is not a multiple of 32), sorts ``n log2(n)``.
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING

from ..hlo.rules.basic import ELEMENTWISE
from .op_profiles import clock_cycles

if TYPE_CHECKING:
    from ..hlo.ir import Computation, Instruction, Shape

#: ops that only index data: no flops (XLA's list in ``FlopsPerElement``)
INDEXING_ONLY = frozenset(
    {
        "bitcast",
        "broadcast",
        "constant",
        "dynamic-slice",
        "dynamic-update-slice",
        "gather",
        "iota",
        "pad",
        "parameter",
        "slice",
        "transpose",
        "tuple",
    }
)
_ELEMENTWISE = frozenset(ELEMENTWISE) - {"map"}
#: XLA counts a multiply-add as two flops
FMA_FLOPS = 2


def _elements_recursive(shape: Shape) -> int:
    """``ShapeUtil::ElementsInRecursive``: the sum over a tuple's leaves."""
    return sum(s.num_elements() for s in shape.leaves()) if shape.is_tuple else shape.num_elements()


def _first_array(shape: Shape) -> Shape:
    return shape.leaves()[0] if shape.is_tuple else shape


def _called(instr: Instruction) -> Computation | None:
    called = instr.called_computations
    for key in ("to_apply", "calls"):
        if called.get(key):
            return called[key][0]
    return None


def computation_flops(comp: Computation | None, profile: str) -> int:
    """Flops of one application of ``comp`` (a reducer or mapped function)."""
    if comp is None:
        return 0
    return sum(flop_count(i, profile) for i in comp.instructions)


def flops_per_element(instr: Instruction, profile: str) -> int:
    """XLA's ``FlopsPerElement`` of ``instr`` with the op profile ``profile`` (``sm_86``...)."""
    op = instr.opcode
    if op in INDEXING_ONLY:
        return 0
    if op in _ELEMENTWISE:
        return clock_cycles(profile, op, _first_array(instr.shape).element_type)
    if op == "reduce":
        per_application = computation_flops(_called(instr), profile)
        reduced = instr.operands[0].shape.num_elements() // max(
            1, _first_array(instr.shape).num_elements()
        )
        return (reduced - 1) * per_application
    total = flop_count(instr, profile)
    n = _elements_recursive(instr.shape)
    return int(total / n) if n else 0  # C++ integer division truncates toward zero


def flop_count(instr: Instruction, profile: str) -> int:
    """``GpuHloCostAnalysis::flop_count`` of ``instr``: total flops of the whole op."""
    op = instr.opcode
    shape = instr.shape
    if op in INDEXING_ONLY or op in ("get-tuple-element", "reshape", "reverse", "copy-start"):
        return 0
    if op in _ELEMENTWISE:
        return clock_cycles(profile, op, _first_array(shape).element_type) * _elements_recursive(
            shape
        )
    if op == "reduce":
        reduced = instr.operands[0].shape.num_elements() - _first_array(shape).num_elements()
        return computation_flops(_called(instr), profile) * reduced
    if op == "map":
        return computation_flops(_called(instr), profile) * _first_array(shape).num_elements()
    if op == "dot":
        dnums = instr.dot_dimension_numbers
        lhs = instr.operands[0].shape
        width = prod(lhs.dims[d] for d in dnums.lhs_contracting)
        return FMA_FLOPS * _first_array(shape).num_elements() * width
    if op == "convolution":
        return convolution_flops(instr)
    if op == "reduce-window":
        return _reduce_window_flops(instr, profile)
    if op == "concatenate":
        axis = (instr.dimensions or (0,))[0]
        per = 400 if axis > 0 and instr.operands[0].shape.dims[axis] & 31 else 6
        return per * _elements_recursive(shape)
    if op == "sort":
        n = instr.operands[0].shape.num_elements()
        return n * max(0, (n - 1).bit_length())
    if op == "scatter":
        updates = instr.operands[len(instr.operands) // 2 + 1 :]
        count = updates[0].shape.num_elements() if updates else 0
        return computation_flops(_called(instr), profile) * count
    if op == "fusion":
        body = _called(instr)
        return computation_flops(body, profile)
    return 0


def _reduce_window_flops(instr: Instruction, profile: str) -> int:
    window = instr.window or ()
    out = _first_array(instr.shape)
    window_count = prod(w.size for w in window)
    out_count = out.num_elements()
    reductions = (window_count - 1) * out_count
    # a reduce-window that is a reduce then a broadcast along one padded dimension
    reducing = [w for w in window if w.size != 1]
    padded = [w for w in window if w.pad_low or w.pad_high]
    if len(reducing) == 1 and len(padded) == 1 and not instr.shape.is_tuple:
        for d, w in enumerate(window):
            if (
                w.size != 1
                and w.pad_low
                and w.pad_high
                and w.pad_low == w.pad_high
                and w.size == 2 * w.pad_low + 1
            ):
                if w.pad_low == out.dims[d] - 1:
                    size = out.dims[d]
                    reductions = out_count // size + size - 1
                break
    return computation_flops(_called(instr), profile) * reductions


def _valid_positions(w, kernel: int, out: int, inp: int) -> int:
    """Kernel/output position pairs of one spatial dimension that land inside the input."""
    if (
        inp == out == kernel == w.base_dilation
        and w.window_dilation == 1
        and max(1, inp - 1) == w.stride
        and w.pad_low == 0
        and w.pad_high == 0
    ):
        return inp
    if (
        inp == 1
        and kernel == out
        and w.window_dilation == 1
        and w.base_dilation == 1
        and w.stride == 1
        and w.pad_low == w.pad_high == out - 1
    ):
        return out
    count = 0
    for k in range(kernel):
        if w.stride == 1 and w.base_dilation == 1:
            base = w.pad_low - k * w.window_dilation
            count += max(min(inp + base, out) - max(base, 0), 0)
            continue
        for o in range(out):
            undilated = o * w.stride - w.pad_low + k * w.window_dilation
            if undilated % w.base_dilation:
                continue
            position = undilated // w.base_dilation
            if 0 <= position < inp:
                count += 1
    return count


def convolution_flops(instr: Instruction) -> int:
    """``HloCostAnalysis::GetConvolutionFlops``: 2 per multiply-add that reads the input
    (padding and dilation holes excluded)."""
    dn = instr.convolution_dimension_numbers
    if dn is None or len(instr.operands) < 2:
        return 0
    lhs, rhs, out = instr.operands[0].shape, instr.operands[1].shape, _first_array(instr.shape)
    window = instr.window or ()
    positions = 1
    for s, w in enumerate(window):
        positions *= _valid_positions(
            w,
            rhs.dims[dn.kernel_spatial[s]],
            out.dims[dn.output_spatial[s]],
            lhs.dims[dn.input_spatial[s]],
        )
    fmas = (
        lhs.dims[dn.input_feature]
        // max(1, instr.feature_group_count)
        * out.dims[dn.output_feature]
        * (lhs.dims[dn.input_batch] // max(1, instr.batch_group_count))
        * positions
    )
    return fmas * FMA_FLOPS
