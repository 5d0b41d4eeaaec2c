"""Rules for gather and scatter in their general form, in both directions.

The general form is the one JAX emits: ``offset_dims``/``update_window_dims``,
``collapsed_slice_dims``/``inserted_window_dims``, ``start_index_map`` /
``scatter_dims_to_operand_dims`` in any order, ``index_vector_dim`` anywhere including
``rank(indices)`` (an implicit trailing index vector of length 1), and the batching
dimensions ``operand_batching_dims``/``start_indices_batching_dims`` (their scatter names
``input_batching_dims``/``scatter_indices_batching_dims``).

The dimensions of the indices other than ``index_vector_dim`` are the *batch* positions;
they pair up, in order, with the output dimensions that are not offset dimensions (gather)
or the update dimensions that are not window dimensions (scatter). The operand dimensions
that are neither collapsed/inserted nor batching pair up, in order, with the offset/window
dimensions. A start index read from the indices becomes a runtime variable, one per operand
dimension named by the start index map, ordered by operand dimension (as XLA orders them).

gather clamps each start to ``[0, dim - slice_size]``, so the maps are exact. scatter does not
clamp: an update element whose target lies out of bounds is skipped. XLA leaves the
granularity of that skipping implementation-defined (per element in its interpreter, per
update window on some backends), so the update and index maps describe the per-element reads,
a superset of the per-window ones, and are marked inexact.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import HloSemanticError
from ...maps.expr import Expr, const
from ...maps.indexing_map import IndexingMap
from ...maps.interval import Interval
from ..ir import Instruction
from ..rule_registry import (
    IndexingTable,
    OperandIndexing,
    RuntimeVar,
    input_to_output_rule,
    output_to_input_rule,
)
from ._window_helpers import MapBuilder, require, require_operands

_SCATTER_NOTE = (
    "out-of-bounds scatter updates are skipped; XLA leaves per-element or "
    "per-window skipping to the backend: these are the per-element reads"
)


class _IndexedAccess:
    """What gather and scatter share: how the indices tensor is laid out."""

    def __init__(
        self,
        instr: Instruction,
        indices: Instruction,
        index_vector_dim: int,
        start_map: Sequence[int],
        batch_positions: Sequence[int],
        batch_sizes: Sequence[int],
        what: str,
    ) -> None:
        self.indices = indices
        q = indices.shape.rank
        require(
            0 <= index_vector_dim <= q, instr, f"index_vector_dim {index_vector_dim} out of range"
        )
        self.vector_dim = index_vector_dim
        self.implicit = index_vector_dim == q
        vector_length = 1 if self.implicit else indices.shape.dims[index_vector_dim]
        require(
            len(start_map) == vector_length,
            instr,
            f"the index vector has {vector_length} elements, the start index map {len(start_map)}",
        )
        self.batch_dims = [i for i in range(q) if i != index_vector_dim]
        require(
            len(self.batch_dims) == len(batch_positions),
            instr,
            f"the indices have {len(self.batch_dims)} batch dimensions, the {what} "
            f"{len(batch_positions)}",
        )
        for i, size in zip(self.batch_dims, batch_sizes, strict=True):
            require(
                indices.shape.dims[i] == size,
                instr,
                f"indices dimension {i} has size {indices.shape.dims[i]}, the {what} {size}",
            )
        self.vector_length = vector_length

    def index(self, batch: Sequence[Expr], component: Expr | int) -> list[Expr | int]:
        """The indices' index of vector element ``component`` at batch position ``batch``."""
        out: list[Expr | int] = [0] * self.indices.shape.rank
        for i, e in zip(self.batch_dims, batch, strict=True):
            out[i] = e
        if not self.implicit:
            out[self.vector_dim] = component
        return out


def _check_dims(instr: Instruction, rank: int, names: dict[str, Sequence[int]]) -> None:
    for name, values in names.items():
        require(
            len(set(values)) == len(values) and all(0 <= v < rank for v in values),
            instr,
            f"{name} {list(values)} must be distinct dimensions below {rank}",
        )


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------


class _Gather:
    def __init__(self, instr: Instruction) -> None:
        require_operands(instr, count=2)
        operand, indices = instr.operands
        out = instr.shape
        require(out.is_array, instr, f"the output must be an array, got {out}")
        dn = instr.gather_dimension_numbers
        sizes = instr.gather_slice_sizes
        r = operand.shape.rank
        if sizes is None or len(sizes) != r:
            raise HloSemanticError(
                f"gather {instr.name}: slice_sizes must have {r} entries", instr.span
            )
        _check_dims(
            instr,
            r,
            {
                "collapsed_slice_dims": dn.collapsed_slice_dims,
                "start_index_map": dn.start_index_map,
                "operand_batching_dims": dn.operand_batching_dims,
            },
        )
        _check_dims(instr, out.rank, {"offset_dims": dn.offset_dims})
        self.batch_out = [d for d in range(out.rank) if d not in dn.offset_dims]
        self.access = _IndexedAccess(
            instr,
            indices,
            dn.index_vector_dim,
            dn.start_index_map,
            self.batch_out,
            [out.dims[d] for d in self.batch_out],
            "output",
        )
        self.window = [
            j
            for j in range(r)
            if j not in dn.collapsed_slice_dims and j not in dn.operand_batching_dims
        ]
        offset_dims = sorted(dn.offset_dims)
        require(
            len(self.window) == len(offset_dims),
            instr,
            f"{len(offset_dims)} offset dims for {len(self.window)} uncollapsed operand dims",
        )
        for j in list(dn.collapsed_slice_dims) + list(dn.operand_batching_dims):
            require(
                sizes[j] == 1, instr, f"collapsed or batching dimension {j} must have slice size 1"
            )
        for j, d in zip(self.window, offset_dims, strict=True):
            require(
                out.dims[d] == sizes[j],
                instr,
                f"output dimension {d} must have slice size {sizes[j]}",
            )
        for j in range(r):
            require(
                0 <= sizes[j] <= operand.shape.dims[j],
                instr,
                f"slice size {sizes[j]} does not fit operand dimension {j}",
            )
        require(
            len(dn.operand_batching_dims) == len(dn.start_indices_batching_dims),
            instr,
            "operand and start-indices batching dims must pair up",
        )
        # operand dim -> the window's output dim; batching operand dim -> its indices dim
        self.offset_of = dict(zip(self.window, offset_dims, strict=True))
        self.batching = dict(
            zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True)
        )
        for i in self.batching.values():
            require(
                i in self.access.batch_dims,
                instr,
                f"start_indices_batching_dim {i} is not a batch dim",
            )
        self.component_of = {j: k for k, j in enumerate(dn.start_index_map)}
        self.instr, self.operand, self.out, self.sizes = instr, operand, out, sizes

    def start_bounds(self, j: int) -> Interval:
        return Interval(0, self.operand.shape.dims[j] - self.sizes[j])

    def note(self, j: int) -> str:
        b = self.start_bounds(j)
        return f"clamp to [{b.lower}, {b.upper}]"


@output_to_input_rule("gather")
def gather_output_to_input(instr: Instruction) -> IndexingTable:
    g = _Gather(instr)
    builder = MapBuilder(g.out.dims)
    batch = [builder.dim(d) for d in g.batch_out]
    starts: dict[int, Expr] = {}
    runtime_vars = []
    for j in sorted(g.component_of):
        starts[j] = builder.new_rt(g.start_bounds(j))
        index = g.access.index(batch, g.component_of[j])
        runtime_vars.append(RuntimeVar(g.access.indices, builder.side_map(index), g.note(j)))
    results = []
    for j in range(g.operand.shape.rank):
        start: Expr | int = starts.get(j, 0)
        if j in g.batching:
            start = batch[g.access.batch_dims.index(g.batching[j])]
        offset: Expr | int = builder.dim(g.offset_of[j]) if j in g.offset_of else 0
        results.append(const(0) + offset + start)
    operand_read = OperandIndexing.of(builder.build(results), runtime_vars=tuple(runtime_vars))
    index_builder = MapBuilder(g.out.dims)
    component = index_builder.new_range(g.access.vector_length)
    indices_read = OperandIndexing.of(
        index_builder.build(g.access.index([index_builder.dim(d) for d in g.batch_out], component))
    )
    return [[operand_read, indices_read]]


@input_to_output_rule("gather")
def gather_input_to_output(instr: Instruction) -> IndexingTable:
    g = _Gather(instr)
    builder = MapBuilder(g.operand.shape.dims)
    batch: list[Expr] = []
    operand_of_batch = {i: j for j, i in g.batching.items()}
    for i in g.access.batch_dims:
        if i in operand_of_batch:
            batch.append(builder.dim(operand_of_batch[i]))
        else:
            batch.append(builder.new_range(g.access.indices.shape.dims[i]))
    starts = {j: builder.new_rt(g.start_bounds(j)) for j in sorted(g.component_of)}
    out_index: list[Expr | int] = [0] * g.out.rank
    for d, e in zip(g.batch_out, batch, strict=True):
        out_index[d] = e
    for j in range(g.operand.shape.rank):
        if j in g.batching:
            continue  # read at its own batch position, which the output carries
        within = builder.dim(j) - starts.get(j, 0)
        if j in g.offset_of:
            builder.constrain(within, 0, g.sizes[j] - 1)
            out_index[g.offset_of[j]] = within
        else:
            builder.constrain(within, 0, 0)
    runtime_vars = tuple(
        RuntimeVar(
            g.access.indices, builder.side_map(g.access.index(batch, g.component_of[j])), g.note(j)
        )
        for j in sorted(g.component_of)
    )
    operand_write = OperandIndexing.of(builder.build(out_index), runtime_vars=runtime_vars)
    index_builder = MapBuilder(g.access.indices.shape.dims)
    out_index = [0] * g.out.rank
    for d, i in zip(g.batch_out, g.access.batch_dims, strict=True):
        out_index[d] = index_builder.dim(i)
    for j, d in g.offset_of.items():
        out_index[d] = index_builder.new_range(g.sizes[j])
    return [[operand_write], [OperandIndexing.of(index_builder.build(out_index))]]


# ---------------------------------------------------------------------------
# scatter
# ---------------------------------------------------------------------------


class _Scatter:
    def __init__(self, instr: Instruction) -> None:
        require_operands(instr, at_least=3)
        require(
            len(instr.operands) % 2 == 1, instr, "expects operands, indices and as many updates"
        )
        n = len(instr.operands) // 2
        self.n = n
        self.operands = instr.operands[:n]
        self.indices_instr = instr.operands[n]
        self.updates = instr.operands[n + 1 :]
        shape = self.operands[0].shape
        for x in self.operands:
            require(x.shape.dims == shape.dims, instr, "operands must have one shape")
        update_shape = self.updates[0].shape
        for u in self.updates:
            require(u.shape.dims == update_shape.dims, instr, "updates must have one shape")
        leaves = instr.shape.leaves() if instr.shape.is_tuple else [instr.shape]
        require(
            len(leaves) == n and all(o.dims == shape.dims for o in leaves),
            instr,
            "the outputs must have the operands' shapes",
        )
        dn = instr.scatter_dimension_numbers
        r = shape.rank
        _check_dims(
            instr,
            r,
            {
                "inserted_window_dims": dn.inserted_window_dims,
                "scatter_dims_to_operand_dims": dn.scatter_dims_to_operand_dims,
                "input_batching_dims": dn.input_batching_dims,
            },
        )
        _check_dims(instr, update_shape.rank, {"update_window_dims": dn.update_window_dims})
        self.update_scatter = [
            d for d in range(update_shape.rank) if d not in dn.update_window_dims
        ]
        self.access = _IndexedAccess(
            instr,
            self.indices_instr,
            dn.index_vector_dim,
            dn.scatter_dims_to_operand_dims,
            self.update_scatter,
            [update_shape.dims[d] for d in self.update_scatter],
            "updates",
        )
        window = [
            j
            for j in range(r)
            if j not in dn.inserted_window_dims and j not in dn.input_batching_dims
        ]
        window_dims = sorted(dn.update_window_dims)
        require(
            len(window) == len(window_dims),
            instr,
            f"{len(window_dims)} update window dims for {len(window)} operand window dims",
        )
        self.window_of = dict(zip(window, window_dims, strict=True))  # operand dim -> update dim
        for j, u in self.window_of.items():
            require(
                update_shape.dims[u] <= shape.dims[j],
                instr,
                f"update window dimension {u} is larger than operand dimension {j}",
            )
        require(
            len(dn.input_batching_dims) == len(dn.scatter_indices_batching_dims),
            instr,
            "input and scatter-indices batching dims must pair up",
        )
        self.batching = dict(
            zip(dn.input_batching_dims, dn.scatter_indices_batching_dims, strict=True)
        )
        for i in self.batching.values():
            require(
                i in self.access.batch_dims,
                instr,
                f"scatter_indices_batching_dim {i} is not a batch dim",
            )
        self.component_of = {j: k for k, j in enumerate(dn.scatter_dims_to_operand_dims)}
        self.shape, self.update_shape = shape, update_shape

    def window_size(self, j: int) -> int:
        return self.update_shape.dims[self.window_of[j]] if j in self.window_of else 1

    def start_bounds(self, j: int) -> Interval:
        """Starts at which some element of the window lands in bounds (no clamping)."""
        return Interval(1 - self.window_size(j), self.shape.dims[j] - 1)

    def runtime_vars(self, builder: MapBuilder, batch: Sequence[Expr]) -> tuple[RuntimeVar, ...]:
        return tuple(
            RuntimeVar(
                self.indices_instr,
                builder.side_map(self.access.index(batch, self.component_of[j])),
                "unclamped; out-of-bounds elements are skipped",
            )
            for j in sorted(self.component_of)
        )

    def landing(self, read_indices: bool) -> tuple[IndexingMap, tuple[RuntimeVar, ...]]:
        """Output index -> the update elements (or, with ``read_indices``, the index-vector
        elements) that land on it."""
        builder = MapBuilder(self.shape.dims)
        operand_of_batch = {i: j for j, i in self.batching.items()}
        batch: list[Expr] = []
        for i in self.access.batch_dims:
            if i in operand_of_batch:
                batch.append(builder.dim(operand_of_batch[i]))
            else:
                batch.append(builder.new_range(self.indices_instr.shape.dims[i]))
        component = builder.new_range(self.access.vector_length) if read_indices else const(0)
        starts = {j: builder.new_rt(self.start_bounds(j)) for j in sorted(self.component_of)}
        update_index: list[Expr | int] = [0] * self.update_shape.rank
        for d, e in zip(self.update_scatter, batch, strict=True):
            update_index[d] = e
        for j in range(self.shape.rank):
            if j in self.batching:
                continue
            within = builder.dim(j) - starts.get(j, 0)
            builder.constrain(within, 0, self.window_size(j) - 1)
            if j in self.window_of:
                update_index[self.window_of[j]] = within
        results = self.access.index(batch, component) if read_indices else update_index
        return builder.build(results), self.runtime_vars(builder, batch)


@output_to_input_rule("scatter")
def scatter_output_to_input(instr: Instruction) -> IndexingTable:
    s = _Scatter(instr)
    updates_map, update_rts = s.landing(read_indices=False)
    indices_map, index_rts = s.landing(read_indices=True)
    updates_read = OperandIndexing.of(
        updates_map, exact=False, runtime_vars=update_rts, notes=(_SCATTER_NOTE,)
    )
    indices_read = OperandIndexing.of(
        indices_map, exact=False, runtime_vars=index_rts, notes=(_SCATTER_NOTE,)
    )
    identity = IndexingMap.identity(s.shape.dims)
    table = []
    for i in range(s.n):
        # Output i starts from operand i; the combiner may also mix in the other operands'
        # values where an update lands (over-approximated by the whole operand).
        operand_reads = [
            OperandIndexing.of(
                identity,
                exact=(j == i),
                notes=() if j == i else ("read only where an update lands",),
            )
            for j in range(s.n)
        ]
        table.append(operand_reads + [indices_read] + [updates_read] * s.n)
    return table


@input_to_output_rule("scatter")
def scatter_input_to_output(instr: Instruction) -> IndexingTable:
    s = _Scatter(instr)
    identity = IndexingMap.identity(s.shape.dims)
    rows = [[OperandIndexing.of(identity, exact=(j == i)) for i in range(s.n)] for j in range(s.n)]

    # indices element at batch position g reaches every output its update window lands on
    builder = MapBuilder(s.indices_instr.shape.dims)
    batch = [builder.dim(i) for i in s.access.batch_dims]
    window = {j: builder.new_range(s.window_size(j)) for j in s.window_of}
    landed = _landed(s, builder, batch, window)
    rows.append(
        [
            OperandIndexing.of(
                landed,
                exact=False,
                runtime_vars=s.runtime_vars(builder, batch),
                notes=(_SCATTER_NOTE,),
            )
        ]
        * s.n
    )

    builder = MapBuilder(s.update_shape.dims)
    batch = [builder.dim(d) for d in s.update_scatter]
    window = {j: builder.dim(u) for j, u in s.window_of.items()}
    landed = _landed(s, builder, batch, window)
    update_write = OperandIndexing.of(
        landed, exact=False, runtime_vars=s.runtime_vars(builder, batch), notes=(_SCATTER_NOTE,)
    )
    rows.extend([update_write] * s.n for _ in range(s.n))
    return rows


def _landed(
    s: _Scatter, builder: MapBuilder, batch: list[Expr], window: dict[int, Expr]
) -> IndexingMap:
    """The output index an update element at ``batch``/``window`` lands on, when in bounds."""
    starts = {j: builder.new_rt(s.start_bounds(j)) for j in sorted(s.component_of)}
    out_index = []
    for j in range(s.shape.rank):
        if j in s.batching:
            start: Expr | int = batch[s.access.batch_dims.index(s.batching[j])]
        else:
            start = starts.get(j, 0)
        target = const(0) + start + window.get(j, 0)
        builder.constrain(target, 0, s.shape.dims[j] - 1)
        out_index.append(target)
    return builder.build(out_index)
