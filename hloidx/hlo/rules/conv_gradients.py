"""cuDNN's gradient convolutions: ``__cudnn$convBackwardInput`` and ``__cudnn$convBackwardFilter``.

XLA:GPU's convolution rewriter turns the convolutions that compute a gradient into these
custom-calls. Their ``window`` and ``dim_labels`` describe the *forward* convolution
``y = conv(x, w)`` whose gradient they compute; the roles of the buffers are cuDNN's:

* backward input: result ``dx`` (the shape of ``x``), operand 0 ``dy``, operand 1 ``w``;
* backward filter: result ``dw`` (the shape of ``w``), operand 0 ``x``, operand 1 ``dy``.

A forward convolution relates triples ``(x index, w index, y index)``: output ``j`` meets
input ``i`` at window position ``s`` when ``j * stride + s * window_dilation - pad_low`` is
``i * base_dilation``. Each gradient element is a sum over the triples that hold its index,
so every map here is a projection of that one relation, built with one :class:`MapBuilder`
per source so that the two maps of a row read exactly the same triples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...maps.expr import Expr, floordiv, mod
from ..ir import ConvDimensionNumbers, Instruction, Shape, WindowDim
from ..rule_registry import IndexingTable, OperandIndexing
from ._window_helpers import MapBuilder, require, require_operands

if TYPE_CHECKING:
    from ...maps.indexing_map import IndexingMap

BACKWARD_INPUT = "__cudnn$convBackwardInput"
BACKWARD_FILTER = "__cudnn$convBackwardFilter"


@dataclass(frozen=True)
class _Forward:
    """The forward convolution a gradient custom-call describes."""

    x: Shape
    w: Shape
    y: Shape
    dn: ConvDimensionNumbers
    window: tuple[WindowDim, ...]
    groups: int

    @property
    def kernel_in(self) -> int:
        return self.w.dims[self.dn.kernel_input_feature]

    @property
    def per_group(self) -> int:
        return self.y.dims[self.dn.output_feature] // self.groups

    def kernel_position(self, k: int, window_position: Expr) -> Expr:
        w = self.window[k]
        return (w.size - 1) - window_position if w.reversal else window_position

    def input_feature(self, out_feature: Expr, kernel_feature: Expr) -> Expr:
        if self.groups == 1:
            return kernel_feature
        return floordiv(out_feature, self.per_group) * self.kernel_in + kernel_feature


def _forward(instr: Instruction) -> _Forward:
    target = instr.attributes.get("custom_call_target", "").strip().strip('"')
    require_operands(instr, at_least=2)
    result = instr.shape.tuple_shapes[0] if instr.shape.is_tuple else instr.shape
    first, second = instr.operands[0].shape, instr.operands[1].shape
    if target == BACKWARD_INPUT:
        x, w, y = result, second, first
    else:
        x, w, y = first, result, second
    dn = instr.convolution_dimension_numbers
    require(dn is not None, instr, "a cuDNN convolution needs dim_labels")
    assert dn is not None
    rank = len(dn.input_spatial)
    require(
        x.rank == rank + 2 and w.rank == rank + 2 and y.rank == rank + 2,
        instr,
        f"dim_labels describe {rank} spatial dimensions, the shapes disagree",
    )
    window = instr.window or tuple(WindowDim(1) for _ in range(rank))
    require(len(window) == rank, instr, f"the window has {len(window)} dimensions, not {rank}")
    require(instr.batch_group_count == 1, instr, "batch_group_count above 1 has no rule here")
    groups = instr.feature_group_count
    require(
        groups >= 1
        and x.dims[dn.input_feature] == w.dims[dn.kernel_input_feature] * groups
        and y.dims[dn.output_feature] % groups == 0
        and w.dims[dn.kernel_output_feature] == y.dims[dn.output_feature]
        and x.dims[dn.input_batch] == y.dims[dn.output_batch],
        instr,
        "the shapes do not fit the forward convolution the dim_labels describe",
    )
    for k, win in enumerate(window):
        stretched = (x.dims[dn.input_spatial[k]] - 1) * win.base_dilation + 1
        span = stretched + win.pad_low + win.pad_high - (win.size - 1) * win.window_dilation
        expected = max(0, (span - 1) // win.stride + 1) if span > 0 else 0
        require(
            w.dims[dn.kernel_spatial[k]] == win.size and y.dims[dn.output_spatial[k]] == expected,
            instr,
            f"spatial dimension {k}: the kernel or output size does not fit the window",
        )
    return _Forward(x, w, y, dn, window, groups)


def _from_y(f: _Forward) -> tuple[IndexingMap, IndexingMap]:
    """From ``y``'s index: the ``x`` and ``w`` elements that meet there."""
    dn, b = f.dn, MapBuilder(f.y.dims)
    x: list[Expr | int] = [0] * f.x.rank
    w: list[Expr | int] = [0] * f.w.rank
    for k, win in enumerate(f.window):
        s = b.new_range(win.size)
        position = b.dim(dn.output_spatial[k]) * win.stride + s * win.window_dilation - win.pad_low
        x[dn.input_spatial[k]] = b.undilate(
            position, win.base_dilation, f.x.dims[dn.input_spatial[k]]
        )
        w[dn.kernel_spatial[k]] = f.kernel_position(k, s)
    feature = b.new_range(f.kernel_in)
    out_feature = b.dim(dn.output_feature)
    x[dn.input_batch] = b.dim(dn.output_batch)
    x[dn.input_feature] = f.input_feature(out_feature, feature)
    w[dn.kernel_input_feature] = feature
    w[dn.kernel_output_feature] = out_feature
    return b.build(x), b.build(w)


def _from_x(f: _Forward) -> tuple[IndexingMap, IndexingMap]:
    """From ``x``'s index: the ``y`` and ``w`` elements it meets."""
    dn, b = f.dn, MapBuilder(f.x.dims)
    y: list[Expr | int] = [0] * f.y.rank
    w: list[Expr | int] = [0] * f.w.rank
    for k, win in enumerate(f.window):
        s = b.new_range(win.size)
        start = (
            b.dim(dn.input_spatial[k]) * win.base_dilation + win.pad_low - s * win.window_dilation
        )
        y[dn.output_spatial[k]] = b.undilate(start, win.stride, f.y.dims[dn.output_spatial[k]])
        w[dn.kernel_spatial[k]] = f.kernel_position(k, s)
    feature = b.dim(dn.input_feature)
    if f.groups == 1:
        out_feature = b.new_range(f.y.dims[dn.output_feature])
        kernel_feature: Expr = feature
    else:
        group = floordiv(feature, f.kernel_in)
        out_feature = group * f.per_group + b.new_range(f.per_group)
        kernel_feature = mod(feature, f.kernel_in)
    y[dn.output_batch] = b.dim(dn.input_batch)
    y[dn.output_feature] = out_feature
    w[dn.kernel_input_feature] = kernel_feature
    w[dn.kernel_output_feature] = out_feature
    return b.build(y), b.build(w)


def _from_w(f: _Forward) -> tuple[IndexingMap, IndexingMap]:
    """From ``w``'s index: the ``x`` and ``y`` elements it meets."""
    dn, b = f.dn, MapBuilder(f.w.dims)
    x: list[Expr | int] = [0] * f.x.rank
    y: list[Expr | int] = [0] * f.y.rank
    for k, win in enumerate(f.window):
        j = b.new_range(f.y.dims[dn.output_spatial[k]])
        s = f.kernel_position(k, b.dim(dn.kernel_spatial[k]))  # reversal is its own inverse
        position = j * win.stride + s * win.window_dilation - win.pad_low
        x[dn.input_spatial[k]] = b.undilate(
            position, win.base_dilation, f.x.dims[dn.input_spatial[k]]
        )
        y[dn.output_spatial[k]] = j
    batch = b.new_range(f.y.dims[dn.output_batch])
    out_feature = b.dim(dn.kernel_output_feature)
    x[dn.input_batch] = batch
    x[dn.input_feature] = f.input_feature(out_feature, b.dim(dn.kernel_input_feature))
    y[dn.output_batch] = batch
    y[dn.output_feature] = out_feature
    return b.build(x), b.build(y)


def _row(*maps: IndexingMap) -> list[OperandIndexing]:
    return [OperandIndexing.of(m) for m in maps]


def gradient_output_to_input(instr: Instruction) -> list[OperandIndexing]:
    """Result element 0 of a gradient convolution: the maps to operands 0 and 1."""
    f = _forward(instr)
    target = instr.attributes.get("custom_call_target", "").strip().strip('"')
    if target == BACKWARD_INPUT:
        y, w = _from_x(f)
        return _row(y, w)
    x, y = _from_w(f)
    return _row(x, y)


def gradient_input_to_output(instr: Instruction) -> IndexingTable:
    """Operands 0 and 1 to result element 0 (one row per operand)."""
    f = _forward(instr)
    target = instr.attributes.get("custom_call_target", "").strip().strip('"')
    if target == BACKWARD_INPUT:  # dy -> dx, w -> dx
        return [_row(_from_y(f)[0]), _row(_from_w(f)[0])]
    return [_row(_from_x(f)[1]), _row(_from_y(f)[1])]  # x -> dw, dy -> dw
