"""The provenance of cuDNN's convolution custom-calls, from their definition.

``window`` and ``dim_labels`` on these custom-calls describe a forward convolution
``y = conv(x, w)``. Its triples ``(x index, w index, y index)`` are enumerated here directly:
output position ``j`` and window position ``s`` land on ``j * stride + s * window_dilation -
pad_low``, which is input element ``i`` when it equals ``i * base_dilation`` inside the axis.
Forward reads, per ``y``, the ``x`` and ``w`` of its triples; backward input computes ``dx``
from ``dy`` (operand 0) and ``w`` (operand 1); backward filter computes ``dw`` from ``x``
(operand 0) and ``dy`` (operand 1). A fused bias-activation also reads its bias at the output
feature and its side input at the same index. The workspace (result element 1) reads nothing.

Like the rest of the interpreter this never uses indexing maps or the op rules.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import UnsupportedOpError
from .tensors import Tag, Tensor, Value, _dtype, _empty_provenance

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape

FORWARD = ("__cudnn$convForward", "__cudnn$convBiasActivationForward")
BACKWARD_INPUT = "__cudnn$convBackwardInput"
BACKWARD_FILTER = "__cudnn$convBackwardFilter"

Index = tuple[int, ...]


def _triples(instr: Instruction, x: Shape, w: Shape, y: Shape) -> Iterator[tuple[Index, ...]]:
    dn = instr.convolution_dimension_numbers
    if dn is None:
        raise UnsupportedOpError("the oracle needs dim_labels on a cuDNN convolution", instr.span)
    rank = len(dn.input_spatial)
    window = instr.window
    if window is None or len(window) != rank:
        raise UnsupportedOpError("the oracle needs the convolution's window", instr.span)
    if instr.batch_group_count != 1:
        raise UnsupportedOpError("the oracle has no batch groups for cuDNN calls", instr.span)
    groups = instr.feature_group_count
    kernel_in = w.dims[dn.kernel_input_feature]
    per_group = y.dims[dn.output_feature] // groups
    spatial = [range(y.dims[d]) for d in dn.output_spatial]
    positions = [range(win.size) for win in window]
    for n, o, ci in itertools.product(
        range(y.dims[dn.output_batch]), range(y.dims[dn.output_feature]), range(kernel_in)
    ):
        for j in itertools.product(*spatial):
            for s in itertools.product(*positions):
                x_index, w_index, y_index = [0] * x.rank, [0] * w.rank, [0] * y.rank
                inside = True
                for k, win in enumerate(window):
                    at = j[k] * win.stride + s[k] * win.window_dilation - win.pad_low
                    i, hole = divmod(at, win.base_dilation)
                    if hole or not 0 <= i < x.dims[dn.input_spatial[k]]:
                        inside = False
                        break
                    x_index[dn.input_spatial[k]] = i
                    w_index[dn.kernel_spatial[k]] = win.size - 1 - s[k] if win.reversal else s[k]
                    y_index[dn.output_spatial[k]] = j[k]
                if not inside:
                    continue
                x_index[dn.input_batch] = y_index[dn.output_batch] = n
                x_index[dn.input_feature] = (o // per_group) * kernel_in + ci
                w_index[dn.kernel_input_feature] = ci
                w_index[dn.kernel_output_feature] = y_index[dn.output_feature] = o
                yield tuple(x_index), tuple(w_index), tuple(y_index)


def cudnn_convolution(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Value:
    target = instr.attributes.get("custom_call_target", "").strip().strip('"')
    result_shape = instr.shape.tuple_shapes[0] if instr.shape.is_tuple else instr.shape
    known = (*FORWARD, BACKWARD_INPUT, BACKWARD_FILTER)
    if target not in known or len(ops) < 2:
        raise UnsupportedOpError(f"the oracle does not interpret custom-call {target}", instr.span)
    first, second = ops[0], ops[1]
    if target in FORWARD:
        roles = {"x": first, "w": second}
        shapes = (instr.operands[0].shape, instr.operands[1].shape, result_shape)
        result_role, reads = "y", ("x", "w")
    elif target == BACKWARD_INPUT:
        roles = {"y": first, "w": second}
        shapes = (result_shape, instr.operands[1].shape, instr.operands[0].shape)
        result_role, reads = "x", ("y", "w")
    else:
        roles = {"x": first, "y": second}
        shapes = (instr.operands[0].shape, result_shape, instr.operands[1].shape)
        result_role, reads = "w", ("x", "y")
    acc: dict[Index, set[Tag]] = {}
    for x_index, w_index, y_index in _triples(instr, *shapes):
        at = {"x": x_index, "w": w_index, "y": y_index}
        bucket = acc.setdefault(at[result_role], set())
        for role in reads:
            bucket |= roles[role].provenance[at[role]]
    prov = _empty_provenance(result_shape.dims)
    for index, tags in acc.items():
        prov[index] = frozenset(tags)
    if target in FORWARD and len(ops) > 2:
        _add_bias_and_side_input(instr, result_shape, ops[2:], prov)
    result = Tensor(np.zeros(result_shape.dims, dtype=_dtype(result_shape)), prov, known=False)
    if not instr.shape.is_tuple:
        return result
    rest = []
    for shape in instr.shape.tuple_shapes[1:]:  # the workspace
        rest.append(
            Tensor(np.zeros(shape.dims, dtype=_dtype(shape)), _empty_provenance(shape.dims))
        )
    return (result, *rest)


def _add_bias_and_side_input(instr: Instruction, out: Shape, extras: list[Tensor], prov) -> None:
    feature = instr.convolution_dimension_numbers.output_feature
    for index in np.ndindex(*out.dims):
        tags = set(prov[index])
        for extra in extras:
            if extra.shape == tuple(out.dims):
                tags |= extra.provenance[index]
            elif len(extra.shape) == 1:
                tags |= extra.provenance[(index[feature],)]
            else:
                raise UnsupportedOpError("the oracle does not know this conv operand", instr.span)
        prov[index] = frozenset(tags)
