"""Custom-calls that stand for a known op, and fft.

An optimized XLA:GPU module calls cuBLAS for its matmuls: ``custom-call(lhs, rhs),
custom_call_target="__cublas$gemm"``, with the dot dimension numbers in its ``backend_config``
and a ``(result, workspace)`` tuple as result. The registry below maps a custom-call target to
a function that rewrites the instruction into the plain op it stands for; the plain op's rules
then give the maps of result element 0. A workspace element reads nothing. An unknown target
keeps no rule: its operands stay UNDEFINED.

:func:`register_custom_call` adds a target of one's own (``hloidx.register_custom_call``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from ...maps.expr import dim, range_var
from ...maps.indexing_map import IndexingMap
from ..ir import Instruction
from ..rule_registry import (
    IndexingTable,
    OperandIndexing,
    Rule,
    input_to_output,
    input_to_output_rule,
    output_to_input,
    output_to_input_rule,
)
from ._common import operand_shape, single, unsupported
from .conv_gradients import (
    BACKWARD_FILTER,
    BACKWARD_INPUT,
    gradient_input_to_output,
    gradient_output_to_input,
)

#: target -> a function giving the plain instruction the custom-call stands for
PlainOp = Callable[[Instruction], Instruction]
_TARGETS: dict[str, PlainOp] = {}


def register_custom_call(target: str, as_plain_op: PlainOp) -> None:
    """Give custom-calls to ``target`` the maps of the plain instruction ``as_plain_op`` returns
    (same operands, an ordinary opcode and attributes); its result is the custom-call's result,
    or element 0 of it when the custom-call returns a tuple (a workspace reads nothing)."""
    _TARGETS[target] = as_plain_op


#: targets whose maps are built directly (no plain op computes the same thing)
_GRADIENTS = (BACKWARD_INPUT, BACKWARD_FILTER)

#: target -> (output-to-input rule, input-to-output rule) of a kernel with several results
_KERNELS: dict[str, tuple[Rule, Rule]] = {}


def register_custom_call_rules(target: str, to_input: Rule, to_output: Rule) -> None:
    """Give custom-calls to ``target`` their own rules: whole tables, one row per result (or
    per operand), as an op rule returns them (fused attention kernels, say)."""
    _KERNELS[target] = (to_input, to_output)


def known_targets() -> list[str]:
    return sorted([*_TARGETS, *_GRADIENTS, *_WHOLE_RESULT, *_KERNELS])


def _target(instr: Instruction) -> str:
    return instr.attributes.get("custom_call_target", "").strip().strip('"')


def _backend_config(instr: Instruction) -> dict:
    raw = instr.attributes.get("backend_config", "").strip()
    if raw.startswith('"'):
        raw = json.loads(raw)  # an escaped string holding the JSON
    try:
        config = json.loads(raw) if raw else {}
    except (json.JSONDecodeError, TypeError):
        raise unsupported(instr, "its backend_config is not JSON") from None
    return config if isinstance(config, dict) else {}


def _plain(
    instr: Instruction, opcode: str, attributes: dict[str, str], operands: int
) -> Instruction:
    result = instr.shape.tuple_shapes[0] if instr.shape.is_tuple else instr.shape
    return replace(
        instr,
        opcode=opcode,
        shape=result,
        operands=instr.operands[:operands],
        attributes={**instr.attributes, **attributes},
        attribute_offsets={},
    )


def _dims_text(values: list) -> str:
    return "{" + ",".join(str(int(v)) for v in values) + "}"


def _gemm(instr: Instruction) -> Instruction:
    """cuBLAS gemm / cuBLASLt matmul: a dot with the backend_config's dimension numbers."""
    config = _backend_config(instr)
    gemm = config.get("gemm_backend_config", config)
    numbers = gemm.get("dot_dimension_numbers", {})
    attributes = {
        "lhs_contracting_dims": _dims_text(numbers.get("lhs_contracting_dimensions", [])),
        "rhs_contracting_dims": _dims_text(numbers.get("rhs_contracting_dimensions", [])),
        "lhs_batch_dims": _dims_text(numbers.get("lhs_batch_dimensions", [])),
        "rhs_batch_dims": _dims_text(numbers.get("rhs_batch_dimensions", [])),
    }
    return _plain(instr, "dot", attributes, 2)


def _convolution(instr: Instruction) -> Instruction:
    """cuDNN forward convolution: the instruction carries window and dim_labels itself."""
    return _plain(instr, "convolution", {}, 2)


for _name in ("__cublas$gemm", "__cublas$lt$matmul"):
    register_custom_call(_name, _gemm)
for _name in ("__cudnn$convForward", "__cudnn$convBiasActivationForward"):
    register_custom_call(_name, _convolution)


def _annotation(instr: Instruction) -> Instruction:
    """A custom-call that marks its operand (a sharding, a memory space) and returns it."""
    if not instr.shape.is_array or len(instr.operands) != 1:
        raise unsupported(instr, "an annotation returns its one operand")
    if operand_shape(instr, 0).dims != instr.shape.dims:
        raise unsupported(instr, "an annotation returns its operand's shape")
    return _plain(instr, "copy", {}, 1)


# what JAX and XLA's SPMD partitioner write around values they only annotate
for _name in ("Sharding", "MoveToHost", "MoveToDevice", "annotate_device_placement"):
    register_custom_call(_name, _annotation)


def _unary_elementwise(instr: Instruction) -> Instruction:
    """A function of each element alone (``chlo.erf_inv``): the reads of any unary
    elementwise op, written as a copy."""
    if not instr.shape.is_array or len(instr.operands) != 1:
        raise unsupported(instr, "an elementwise function takes one array")
    if operand_shape(instr, 0).dims != instr.shape.dims:
        raise unsupported(instr, "an elementwise function keeps its operand's shape")
    return _plain(instr, "copy", {}, 1)


# StableHLO's chlo.erf_inv, which XLA expands into elementwise ops on x alone
register_custom_call("chlo.erf_inv", _unary_elementwise)


#: targets that compute a plain op's whole (tuple) result, not a result and a workspace
_WHOLE_RESULT = {"TopK": "topk"}  # XLA's TopK custom-call: (values, indices) per row


def _whole_result_op(instr: Instruction) -> Instruction | None:
    opcode = _WHOLE_RESULT.get(_target(instr))
    if opcode is None:
        return None
    return replace(instr, opcode=opcode, attributes={}, attribute_offsets={})


def _results(instr: Instruction) -> int:
    return len(instr.shape.tuple_shapes or ()) if instr.shape.is_tuple else 1


def _plain_of(instr: Instruction) -> Instruction:
    make = _TARGETS.get(_target(instr))
    if make is None:
        raise unsupported(instr, f"custom-call target {_target(instr)!r} has no rule")
    return make(instr)


def _bias_axis(plain: Instruction) -> int:
    """The output dimension a bias vector runs along: a matmul's columns, a convolution's
    output features."""
    numbers = plain.convolution_dimension_numbers if plain.opcode == "convolution" else None
    return numbers.output_feature if numbers is not None else plain.shape.rank - 1


def _extra(instr: Instruction, plain: Instruction, k: int) -> OperandIndexing:
    """An operand beyond the plain op's: a gemm's C matrix (beta != 0) or bias vector, a fused
    convolution's bias or side input."""
    out = plain.shape.dims
    dims = operand_shape(instr, k).dims
    if tuple(dims) == tuple(out):
        return single(IndexingMap.identity(out))  # added at the same index
    axis = _bias_axis(plain)
    if len(dims) == 1 and out and dims[0] == out[axis]:
        return single(IndexingMap.build([dim(axis)], out))  # broadcast along the other dims
    return OperandIndexing((IndexingMap.undefined(),), exact=False)


def _extra_to_output(instr: Instruction, plain: Instruction, k: int) -> OperandIndexing:
    extra = _extra(instr, plain, k)
    if extra.maps[0].is_undefined:
        return extra
    dims = operand_shape(instr, k).dims
    out = plain.shape.dims
    if tuple(dims) == tuple(out):
        return single(IndexingMap.identity(dims))
    axis = _bias_axis(plain)  # a bias element feeds every output element of its column
    others = [d for d in range(len(out)) if d != axis]
    results = [dim(0) if d == axis else range_var(others.index(d)) for d in range(len(out))]
    return single(IndexingMap.build(results, dims, [out[d] for d in others]))


@output_to_input_rule("custom-call")
def custom_call_output_to_input(instr: Instruction) -> IndexingTable:
    kernel = _KERNELS.get(_target(instr))
    if kernel is not None:
        return kernel[0](instr)
    whole = _whole_result_op(instr)
    if whole is not None:
        return output_to_input(whole)
    if _target(instr) in _GRADIENTS:
        row = gradient_output_to_input(instr)
    else:
        plain = _plain_of(instr)
        row = list(output_to_input(plain)[0])
        for k in range(len(plain.operands), len(instr.operands)):
            row.append(_extra(instr, plain, k))
    table: IndexingTable = [row]
    for _ in range(1, _results(instr)):  # a workspace reads nothing
        table.append([OperandIndexing((IndexingMap.known_empty(),)) for _ in instr.operands])
    return table


@input_to_output_rule("custom-call")
def custom_call_input_to_output(instr: Instruction) -> IndexingTable:
    kernel = _KERNELS.get(_target(instr))
    if kernel is not None:
        return kernel[1](instr)
    whole = _whole_result_op(instr)
    if whole is not None:
        return input_to_output(whole)
    if _target(instr) in _GRADIENTS:
        table = gradient_input_to_output(instr)
        for row in table:
            row.extend(
                OperandIndexing((IndexingMap.known_empty(),)) for _ in range(1, _results(instr))
            )
        return table
    plain = _plain_of(instr)
    table = [list(r) for r in input_to_output(plain)]
    for k in range(len(plain.operands), len(instr.operands)):
        table.append([_extra_to_output(instr, plain, k)])
    for row in table:
        row.extend(OperandIndexing((IndexingMap.known_empty(),)) for _ in range(1, _results(instr)))
    return table


# ---------------------------------------------------------------------------
# fft
# ---------------------------------------------------------------------------


def _fft_axes(instr: Instruction) -> int:
    raw = instr.attributes.get("fft_length", "{}").strip("{} ")
    count = len([x for x in raw.split(",") if x.strip()])
    if not count:
        raise unsupported(instr, "needs fft_length")
    return count


@output_to_input_rule("fft")
def fft_output_to_input(instr: Instruction) -> IndexingTable:
    """Every output element of a transform reads every element of the transformed (minor)
    dimensions of its batch: FFT, IFFT, RFFT (n real in, n/2+1 out) and IRFFT alike."""
    k = _fft_axes(instr)
    src = operand_shape(instr, 0).dims
    out = instr.shape.dims
    batch = len(out) - k
    results = [dim(d) for d in range(batch)] + [range_var(j) for j in range(k)]
    return [[single(IndexingMap.build(results, out, list(src[batch:])))]]


@input_to_output_rule("fft")
def fft_input_to_output(instr: Instruction) -> IndexingTable:
    k = _fft_axes(instr)
    src = operand_shape(instr, 0).dims
    out = instr.shape.dims
    batch = len(src) - k
    results = [dim(d) for d in range(batch)] + [range_var(j) for j in range(k)]
    return [[single(IndexingMap.build(results, src, list(out[batch:])))]]
