"""Rules for the sliding-window ops: reduce-window and convolution, in both directions.

Both ops see their input through the same lens: the input axis is stretched by the base
(lhs) dilation, padded with ``pad_low``/``pad_high`` (negative padding crops), and a window
of ``size`` positions spaced by the window (rhs) dilation slides over it with ``stride``.
Output position ``o`` and window position ``w`` meet the stretched axis at
``o * stride + w * window_dilation - pad_low``; that lands on input element ``i`` only when it
equals ``i * base_dilation`` for some ``i`` in the axis. Padding and dilation holes hold no
element, so they are constrained away and every map here is exact:

* reduce-window reads its init value for every output element (the reduction starts from
  it), and its inputs only where the window hits real elements;
* convolution reads the kernel only where the window hits real input: where it hits padding
  or a hole the product is with an implicit zero (a NaN or infinite kernel value would still
  show through that product in IEEE arithmetic; we follow the data-flow reading).
"""

from __future__ import annotations

from ...errors import HloSemanticError
from ...maps.expr import Expr, floordiv, mod
from ...maps.indexing_map import IndexingMap, compose
from ..ir import ConvDimensionNumbers, Instruction, WindowDim
from ..rule_registry import (
    IndexingTable,
    OperandIndexing,
    input_to_output_rule,
    output_to_input_rule,
)
from ._window_helpers import (
    MapBuilder,
    output_shapes,
    require,
    require_operands,
    scalar_read,
    whole_output,
)


def _window(instr: Instruction, rank: int) -> tuple[WindowDim, ...]:
    window = instr.window
    if window is None:
        window = tuple(WindowDim(1) for _ in range(rank))
    require(len(window) == rank, instr, f"the window has {len(window)} dimensions, expected {rank}")
    for w in window:
        require(
            w.size >= 1 and w.stride >= 1 and w.base_dilation >= 1 and w.window_dilation >= 1,
            instr,
            "window sizes, strides and dilations must be positive",
        )
    return window


# ---------------------------------------------------------------------------
# reduce-window
# ---------------------------------------------------------------------------


def _reduce_window_parts(instr: Instruction):
    require_operands(instr, at_least=2)
    require(len(instr.operands) % 2 == 0, instr, "expects as many init values as inputs")
    n = len(instr.operands) // 2
    inputs, inits = instr.operands[:n], instr.operands[n:]
    outputs = output_shapes(instr, n)
    rank = inputs[0].shape.rank
    for x in inputs:
        require(x.shape.dims == inputs[0].shape.dims, instr, "inputs must have one shape")
    for o in outputs:
        require(
            o.dims == outputs[0].dims and o.rank == rank,
            instr,
            "outputs must have the inputs' rank and one shape",
        )
    for init in inits:
        require(init.shape.rank == 0, instr, f"init value {init.name} must be a scalar")
    return inputs, inits, outputs, _window(instr, rank)


def _window_to_input(window: tuple[WindowDim, ...], in_dims, out_dims) -> IndexingMap:
    """Output (window) index -> the input elements its window covers."""
    builder = MapBuilder(out_dims)
    results = []
    for k, w in enumerate(window):
        s = builder.new_range(w.size)
        position = builder.dim(k) * w.stride + s * w.window_dilation - w.pad_low
        results.append(builder.undilate(position, w.base_dilation, in_dims[k]))
    return builder.build(results)


def _input_to_windows(window: tuple[WindowDim, ...], in_dims, out_dims) -> IndexingMap:
    """Input index -> the windows (output indices) that cover it."""
    builder = MapBuilder(in_dims)
    results = []
    for k, w in enumerate(window):
        s = builder.new_range(w.size)
        # output o starts its window at o * stride on the stretched axis
        start = builder.dim(k) * w.base_dilation + w.pad_low - s * w.window_dilation
        results.append(builder.undilate(start, w.stride, out_dims[k]))
    return builder.build(results)


@output_to_input_rule("reduce-window")
def reduce_window_output_to_input(instr: Instruction) -> IndexingTable:
    inputs, _, outputs, window = _reduce_window_parts(instr)
    input_read = OperandIndexing.of(_window_to_input(window, inputs[0].shape.dims, outputs[0].dims))
    init_read = OperandIndexing.of(scalar_read(outputs[0]))
    # A variadic reduce-window combines all inputs in one computation: every output reads all.
    row = [input_read] * len(inputs) + [init_read] * len(inputs)
    return [list(row) for _ in outputs]


@input_to_output_rule("reduce-window")
def reduce_window_input_to_output(instr: Instruction) -> IndexingTable:
    inputs, _, outputs, window = _reduce_window_parts(instr)
    input_read = OperandIndexing.of(
        _input_to_windows(window, inputs[0].shape.dims, outputs[0].dims)
    )
    init_read = OperandIndexing.of(whole_output(outputs[0]))
    n = len(inputs)
    return [[input_read] * n for _ in range(n)] + [[init_read] * n for _ in range(n)]


# ---------------------------------------------------------------------------
# select-and-scatter
# ---------------------------------------------------------------------------
#
# Each source element belongs to one window of the operand; the select computation picks one
# operand element of that window (which one depends on the data) and the source value is
# scattered there. Output d starts from the init value and adds the source of every window
# whose pick is d. Which windows pick d is only known at run time, so the maps give every
# window covering d (and, for the operand, every element of those windows, all of which the
# pick compares): sound over-approximations.

_SELECT_NOTE = "the selected element of each window is data-dependent: every covering window"


def _select_and_scatter_parts(instr: Instruction):
    require_operands(instr, count=3)
    operand, source, init = (o.shape for o in instr.operands)
    require(
        instr.shape.is_array and instr.shape.dims == operand.dims,
        instr,
        "the output must have the operand's shape",
    )
    require(init.rank == 0, instr, "the init value must be a scalar")
    window = _window(instr, operand.rank)
    require(source.rank == operand.rank, instr, "the source must have the operand's rank")
    return operand, source, window


@output_to_input_rule("select-and-scatter")
def select_and_scatter_output_to_input(instr: Instruction) -> IndexingTable:
    operand, source, window = _select_and_scatter_parts(instr)
    windows = _input_to_windows(window, operand.dims, source.dims)
    neighbours = compose(windows, _window_to_input(window, operand.dims, source.dims))
    return [
        [
            OperandIndexing.of(neighbours, exact=False, notes=(_SELECT_NOTE,)),
            OperandIndexing.of(windows, exact=False, notes=(_SELECT_NOTE,)),
            OperandIndexing.of(scalar_read(instr.shape)),
        ]
    ]


@input_to_output_rule("select-and-scatter")
def select_and_scatter_input_to_output(instr: Instruction) -> IndexingTable:
    operand, source, window = _select_and_scatter_parts(instr)
    windows = _input_to_windows(window, operand.dims, source.dims)
    neighbours = compose(windows, _window_to_input(window, operand.dims, source.dims))
    return [
        [OperandIndexing.of(neighbours, exact=False, notes=(_SELECT_NOTE,))],
        [
            OperandIndexing.of(
                _window_to_input(window, operand.dims, source.dims),
                exact=False,
                notes=(_SELECT_NOTE,),
            )
        ],
        [OperandIndexing.of(whole_output(instr.shape))],
    ]


# ---------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------


class _Conv:
    """The validated facts of one convolution: shapes, dimension roles, groups, window."""

    def __init__(self, instr: Instruction) -> None:
        require_operands(instr, count=2)
        lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
        out = instr.shape
        require(out.is_array, instr, f"the output must be an array, got {out}")
        dn: ConvDimensionNumbers | None = instr.convolution_dimension_numbers
        if dn is None:
            raise HloSemanticError(f"convolution {instr.name}: missing dim_labels", instr.span)
        rank = len(dn.input_spatial)
        require(
            lhs.rank == rank + 2 and rhs.rank == rank + 2 and out.rank == rank + 2,
            instr,
            f"dim_labels describe {rank} spatial dimensions, the shapes disagree",
        )
        self.dn, self.lhs, self.rhs, self.out = dn, lhs, rhs, out
        self.window = _window(instr, rank)
        self.feature_groups = instr.feature_group_count
        self.batch_groups = instr.batch_group_count
        g, b = self.feature_groups, self.batch_groups
        require(
            g >= 1 and b >= 1 and (g == 1 or b == 1),
            instr,
            "feature_group_count and batch_group_count must be positive, not both above 1",
        )
        self.in_features = lhs.dims[dn.input_feature]
        self.kernel_in = rhs.dims[dn.kernel_input_feature]
        self.out_features = out.dims[dn.output_feature]
        self.out_batch = out.dims[dn.output_batch]
        self.in_batch = lhs.dims[dn.input_batch]
        require(
            rhs.dims[dn.kernel_output_feature] == self.out_features,
            instr,
            "kernel output features and output features differ",
        )
        require(
            self.in_features == self.kernel_in * g,
            instr,
            "input features must be feature_group_count times the kernel input features",
        )
        require(
            self.out_features % (g * b) == 0,
            instr,
            "output features must divide into the feature and batch groups",
        )
        require(
            self.in_batch == self.out_batch * b,
            instr,
            "input batch must be batch_group_count times the output batch",
        )

    def kernel_position(self, k: int, window_position: Expr) -> Expr:
        w = self.window[k]
        return (w.size - 1) - window_position if w.reversal else window_position


@output_to_input_rule("convolution")
def convolution_output_to_input(instr: Instruction) -> IndexingTable:
    c = _Conv(instr)
    dn = c.dn
    builder = MapBuilder(c.out.dims)
    lhs_index: list[Expr | int] = [0] * c.lhs.rank
    rhs_index: list[Expr | int] = [0] * c.rhs.rank
    for k, w in enumerate(c.window):
        s = builder.new_range(w.size)
        o = builder.dim(dn.output_spatial[k])
        position = o * w.stride + s * w.window_dilation - w.pad_low
        lhs_index[dn.input_spatial[k]] = builder.undilate(
            position, w.base_dilation, c.lhs.dims[dn.input_spatial[k]]
        )
        rhs_index[dn.kernel_spatial[k]] = c.kernel_position(k, s)
    feature = builder.new_range(c.kernel_in)
    out_feature = builder.dim(dn.output_feature)
    in_feature: Expr = feature
    if c.feature_groups > 1:
        group = floordiv(out_feature, c.out_features // c.feature_groups)
        in_feature = group * c.kernel_in + feature
    in_batch: Expr = builder.dim(dn.output_batch)
    if c.batch_groups > 1:
        group = floordiv(out_feature, c.out_features // c.batch_groups)
        in_batch = in_batch + group * c.out_batch
    lhs_index[dn.input_feature] = in_feature
    lhs_index[dn.input_batch] = in_batch
    rhs_index[dn.kernel_input_feature] = feature
    rhs_index[dn.kernel_output_feature] = out_feature
    # One builder for both maps: the kernel is read exactly where the input is.
    return [
        [OperandIndexing.of(builder.build(lhs_index)), OperandIndexing.of(builder.build(rhs_index))]
    ]


@input_to_output_rule("convolution")
def convolution_input_to_output(instr: Instruction) -> IndexingTable:
    c = _Conv(instr)
    return [[OperandIndexing.of(_lhs_to_output(c))], [OperandIndexing.of(_kernel_to_output(c))]]


def _lhs_to_output(c: _Conv):
    dn = c.dn
    builder = MapBuilder(c.lhs.dims)
    out_index: list[Expr | int] = [0] * c.out.rank
    for k, w in enumerate(c.window):
        s = builder.new_range(w.size)
        start = (
            builder.dim(dn.input_spatial[k]) * w.base_dilation + w.pad_low - s * w.window_dilation
        )
        out_index[dn.output_spatial[k]] = builder.undilate(
            start, w.stride, c.out.dims[dn.output_spatial[k]]
        )
    batch = builder.dim(dn.input_batch)
    feature = builder.dim(dn.input_feature)
    if c.feature_groups > 1:
        per_group = c.out_features // c.feature_groups
        out_feature = floordiv(feature, c.kernel_in) * per_group + builder.new_range(per_group)
        out_batch: Expr = batch
    elif c.batch_groups > 1:
        per_group = c.out_features // c.batch_groups
        out_feature = floordiv(batch, c.out_batch) * per_group + builder.new_range(per_group)
        out_batch = mod(batch, c.out_batch)
    else:
        out_feature = builder.new_range(c.out_features)
        out_batch = batch
    out_index[dn.output_feature] = out_feature
    out_index[dn.output_batch] = out_batch
    return builder.build(out_index)


def _kernel_to_output(c: _Conv):
    dn = c.dn
    builder = MapBuilder(c.rhs.dims)
    out_index: list[Expr | int] = [0] * c.out.rank
    for k, w in enumerate(c.window):
        o = builder.new_range(c.out.dims[dn.output_spatial[k]])
        window_position = c.kernel_position(k, builder.dim(dn.kernel_spatial[k]))
        position = o * w.stride + window_position * w.window_dilation - w.pad_low
        builder.undilate(position, w.base_dilation, c.lhs.dims[dn.input_spatial[k]])
        out_index[dn.output_spatial[k]] = o
    out_index[dn.output_feature] = builder.dim(dn.kernel_output_feature)
    out_index[dn.output_batch] = builder.new_range(c.out_batch)
    return builder.build(out_index)
