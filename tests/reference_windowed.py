"""Reference semantics of the windowed and data-dependent ops, evaluated on provenance.

Each function runs the op the way XLA's operation semantics describe it, on tensors whose
elements are their own flat ids, and records which input elements every output element is
computed from: a set of ``(output_id, operand_id) -> {(output_index, operand_index)}``.
Nothing here shares code or formulas with the rules under test: padding and dilation are
materialised with NumPy (``-1`` marks padding and holes), groups are taken with
``np.split``, gather and scatter follow the documented per-index algorithm step by step.

:func:`realise` turns a rule's :class:`OperandIndexing` into the same kind of relation by
enumerating its maps and keeping only the points whose runtime variables equal the values
the op really uses there.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from hloidx.hlo.op_rules import OperandIndexing
from hloidx.maps.domain import evaluate_results, feasible_points
from hloidx.maps.expr import VarKind

Index = tuple[int, ...]
Relation = set[tuple[Index, Index]]
Reads = dict[tuple[int, int], Relation]


def cells(shape: Sequence[int]):
    return itertools.product(*(range(n) for n in shape))


def ids(shape: Sequence[int]) -> np.ndarray:
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(tuple(shape))


def unflat(flat: int, shape: Sequence[int]) -> Index:
    return tuple(int(x) for x in np.unravel_index(int(flat), tuple(shape)))


def inverse(relation: Relation) -> Relation:
    return {(b, a) for a, b in relation}


# ---------------------------------------------------------------------------
# Padding, dilation and windows, materialised
# ---------------------------------------------------------------------------


def stretch(
    a: np.ndarray, dilation: Sequence[int], low: Sequence[int], high: Sequence[int]
) -> np.ndarray:
    """``a`` with ``dilation - 1`` holes between elements and ``low``/``high`` padding
    (negative padding crops); holes and padding hold -1."""
    shape = [(n - 1) * d + 1 if n else 0 for n, d in zip(a.shape, dilation, strict=True)]
    out = np.full(shape, -1, dtype=np.int64)
    out[tuple(slice(None, None, d) for d in dilation)] = a
    out = np.pad(
        out,
        [(max(lo, 0), max(hi, 0)) for lo, hi in zip(low, high, strict=True)],
        constant_values=-1,
    )
    crop = tuple(
        slice(max(-lo, 0), out.shape[k] - max(-hi, 0))
        for k, (lo, hi) in enumerate(zip(low, high, strict=True))
    )
    return out[crop]


def window_at(
    base: np.ndarray, start: Sequence[int], size: Sequence[int], dilation: Sequence[int]
) -> np.ndarray:
    """The window of ``size`` positions spaced by ``dilation`` from ``start`` (it must fit)."""
    return base[
        tuple(
            slice(s, s + (n - 1) * d + 1, d) for s, n, d in zip(start, size, dilation, strict=True)
        )
    ]


def window_output_size(base: int, size: int, stride: int, dilation: int) -> int:
    span = (size - 1) * dilation + 1
    return 0 if base < span else (base - span) // stride + 1


# ---------------------------------------------------------------------------
# reduce-window
# ---------------------------------------------------------------------------


def reduce_window_reads(
    in_shape: Sequence[int], n: int, size, stride, pad_low, pad_high, base_dilation, window_dilation
) -> tuple[Reads, tuple[int, ...]]:
    base = stretch(ids(in_shape), base_dilation, pad_low, pad_high)
    out_shape = tuple(
        window_output_size(b, s, st, wd)
        for b, s, st, wd in zip(base.shape, size, stride, window_dilation, strict=True)
    )
    reads: Reads = defaultdict(set)
    for o in cells(out_shape):
        window = window_at(
            base, [i * s for i, s in zip(o, stride, strict=True)], size, window_dilation
        )
        hit = {unflat(x, in_shape) for x in window.reshape(-1) if x >= 0}
        for out_id in range(n):
            for j in range(n):
                reads[out_id, j] |= {(o, i) for i in hit}
                reads[out_id, n + j].add((o, ()))  # the reduction starts from the init value
    return reads, out_shape


# ---------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------


def conv_reads(lhs_shape, rhs_shape, dn, window, feature_groups: int, batch_groups: int):
    """Reads of ``convolution`` and its output shape (XLA semantics, via StableHLO's splits)."""
    rank = len(window)
    lhs = np.transpose(ids(lhs_shape), [dn.input_batch, dn.input_feature, *dn.input_spatial])
    rhs = np.transpose(
        ids(rhs_shape), [dn.kernel_output_feature, dn.kernel_input_feature, *dn.kernel_spatial]
    )
    # reversal flips the kernel's spatial axes
    for k, w in enumerate(window):
        if w.reversal:
            rhs = np.flip(rhs, axis=2 + k)
    padded = np.stack(
        [
            np.stack(
                [
                    stretch(
                        lhs[b, f],
                        [w.base_dilation for w in window],
                        [w.pad_low for w in window],
                        [w.pad_high for w in window],
                    )
                    for f in range(lhs.shape[1])
                ]
            )
            for b in range(lhs.shape[0])
        ]
    )
    out_spatial = [
        window_output_size(padded.shape[2 + k], w.size, w.stride, w.window_dilation)
        for k, w in enumerate(window)
    ]
    out_features = rhs.shape[0]
    lhs_groups = (
        np.split(padded, batch_groups, axis=0)
        if batch_groups > 1
        else np.split(padded, feature_groups, axis=1)
    )
    groups = batch_groups if batch_groups > 1 else feature_groups
    rhs_groups = np.split(rhs, groups, axis=0)
    out_batch = padded.shape[0] // batch_groups
    reads: Reads = defaultdict(set)
    out_rank = rank + 2
    for g in range(groups):
        lg, rg = lhs_groups[g], rhs_groups[g]
        for b, fo, *o in itertools.product(
            range(out_batch), range(rg.shape[0]), *map(range, out_spatial)
        ):
            out_index = [0] * out_rank
            out_index[dn.output_batch] = b
            out_index[dn.output_feature] = g * rg.shape[0] + fo
            for k in range(rank):
                out_index[dn.output_spatial[k]] = o[k]
            out_index = tuple(out_index)
            starts = [o[k] * window[k].stride for k in range(rank)]
            for fi in range(lg.shape[1]):
                lhs_window = window_at(
                    lg[b, fi], starts, [w.size for w in window], [w.window_dilation for w in window]
                )
                kernel = rg[fo, fi]
                for w_index in cells(lhs_window.shape):
                    x = lhs_window[w_index]
                    if x < 0:
                        continue  # padding or a hole: a product with zero, the kernel is not needed
                    reads[0, 0].add((out_index, unflat(x, lhs_shape)))
                    reads[0, 1].add((out_index, unflat(kernel[w_index], rhs_shape)))
    out_shape = [0] * out_rank
    out_shape[dn.output_batch] = out_batch
    out_shape[dn.output_feature] = out_features
    for k in range(rank):
        out_shape[dn.output_spatial[k]] = out_spatial[k]
    return reads, tuple(out_shape)


# ---------------------------------------------------------------------------
# dynamic-slice, dynamic-update-slice
# ---------------------------------------------------------------------------


def clamped_starts(offsets: Sequence[int], dims: Sequence[int], sizes: Sequence[int]) -> list[int]:
    return [min(max(int(o), 0), d - s) for o, d, s in zip(offsets, dims, sizes, strict=True)]


def dynamic_slice_reads(dims, sizes, offsets, rank1_form: bool) -> Reads:
    start = clamped_starts(offsets, dims, sizes)
    reads: Reads = defaultdict(set)
    for o in cells(sizes):
        reads[0, 0].add((o, tuple(a + b for a, b in zip(o, start, strict=True))))
        if rank1_form:
            reads[0, 1] |= {(o, (k,)) for k in range(len(dims))}
        else:
            for k in range(len(dims)):
                reads[0, 1 + k].add((o, ()))
    return reads


def dynamic_update_slice_reads(dims, update_dims, offsets, rank1_form: bool) -> Reads:
    start = clamped_starts(offsets, dims, update_dims)
    reads: Reads = defaultdict(set)
    for o in cells(dims):
        inside = all(s <= i < s + u for i, s, u in zip(o, start, update_dims, strict=True))
        if inside:
            reads[0, 1].add((o, tuple(i - s for i, s in zip(o, start, strict=True))))
        else:
            reads[0, 0].add((o, o))
        if rank1_form:
            reads[0, 2] |= {(o, (k,)) for k in range(len(dims))}
        else:
            for k in range(len(dims)):
                reads[0, 2 + k].add((o, ()))
    return reads


# ---------------------------------------------------------------------------
# gather, scatter (XLA's operation semantics, step by step)
# ---------------------------------------------------------------------------


def _index_vector(
    indices: np.ndarray, vector_dim: int, batch: Index
) -> tuple[list[int], list[Index]]:
    """The start-index vector at batch position ``batch`` and where each element lives."""
    if vector_dim == indices.ndim:
        return [int(indices[batch])], [batch]
    where = [
        (*batch[:vector_dim], k, *batch[vector_dim:]) for k in range(indices.shape[vector_dim])
    ]
    return [int(indices[w]) for w in where], where


def gather_reads(operand_shape, indices: np.ndarray, dn, slice_sizes, out_shape) -> Reads:
    reads: Reads = defaultdict(set)
    batch_dims = [d for d in range(len(out_shape)) if d not in dn.offset_dims]
    window_dims = [
        j
        for j in range(len(operand_shape))
        if j not in dn.collapsed_slice_dims and j not in dn.operand_batching_dims
    ]
    index_batch_dims = [
        i
        for i in range(indices.ndim + (dn.index_vector_dim == indices.ndim))
        if i != dn.index_vector_dim
    ]
    for out in cells(out_shape):
        batch = tuple(out[d] for d in batch_dims)
        vector, where = _index_vector(indices, dn.index_vector_dim, batch)
        start = [0] * len(operand_shape)
        for k, j in enumerate(dn.start_index_map):
            start[j] = vector[k]
        for j, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True):
            start[j] = batch[index_batch_dims.index(i)]
        start = [
            min(max(s, 0), d - z) for s, d, z in zip(start, operand_shape, slice_sizes, strict=True)
        ]
        offset = [0] * len(operand_shape)
        for j, d in zip(window_dims, sorted(dn.offset_dims), strict=True):
            offset[j] = out[d]
        reads[0, 0].add((out, tuple(s + f for s, f in zip(start, offset, strict=True))))
        reads[0, 1] |= {(out, w) for w in where}
    return reads


def scatter_reads(operand_shape, indices: np.ndarray, update_shape, dn, n: int) -> Reads:
    """Output i reads operand i everywhere, and where an update element lands in bounds (each
    element checked on its own, as XLA's interpreter does) every update at that element and
    its index vector."""
    reads: Reads = defaultdict(set)
    for out in cells(operand_shape):
        for i in range(n):
            reads[i, i].add((out, out))
    scatter_dims = [d for d in range(len(update_shape)) if d not in dn.update_window_dims]
    window_dims = [
        j
        for j in range(len(operand_shape))
        if j not in dn.inserted_window_dims and j not in dn.input_batching_dims
    ]
    index_batch_dims = [
        i
        for i in range(indices.ndim + (dn.index_vector_dim == indices.ndim))
        if i != dn.index_vector_dim
    ]
    for u in cells(update_shape):
        batch = tuple(u[d] for d in scatter_dims)
        vector, where = _index_vector(indices, dn.index_vector_dim, batch)
        target = [0] * len(operand_shape)
        for k, j in enumerate(dn.scatter_dims_to_operand_dims):
            target[j] = vector[k]
        for j, i in zip(dn.input_batching_dims, dn.scatter_indices_batching_dims, strict=True):
            target[j] = batch[index_batch_dims.index(i)]
        for j, d in zip(window_dims, sorted(dn.update_window_dims), strict=True):
            target[j] += u[d]
        if not all(0 <= t < s for t, s in zip(target, operand_shape, strict=True)):
            continue
        target_t = tuple(target)
        for i in range(n):
            for j in range(n):
                reads[i, n + 1 + j].add((target_t, u))
                if j != i:
                    reads[i, j].add((target_t, target_t))
            reads[i, n] |= {(target_t, w) for w in where}
    return reads


# ---------------------------------------------------------------------------
# Realising a rule's maps
# ---------------------------------------------------------------------------


def realise(
    indexing: OperandIndexing, runtime: dict[str, np.ndarray] | None = None, limit: int = 2_000_000
) -> Relation:
    """The union of the maps' relations with every runtime variable fixed to the value the op
    uses at that point: ``runtime[producer name]`` read at the runtime variable's map."""
    out: Relation = set()
    for m in indexing.maps:
        if m.is_known_empty:
            continue
        columns, count = feasible_points(m, limit)
        if count == 0:
            continue
        keep = np.ones(count, dtype=bool)
        for k, rv in enumerate(indexing.runtime_vars):
            values = runtime[rv.producer.name]  # type: ignore[index]
            where = evaluate_results(rv.map, columns, count)
            if where:
                actual = values[tuple(np.asarray(w, dtype=np.int64) for w in where)]
            else:
                actual = np.full(count, int(values.reshape(())), dtype=np.int64)
            keep &= columns[m.var_list()[m.num_dims + m.num_range_vars + k]] == actual
        columns = {v: c[keep] for v, c in columns.items()}
        n = int(keep.sum())
        if n == 0:
            continue
        results = evaluate_results(m, columns, n)
        dims = [columns[v] for v in m.var_list() if v.kind == VarKind.DIM]
        for row in range(n):
            out.add((tuple(int(d[row]) for d in dims), tuple(int(r[row]) for r in results)))
    return out


ReadsFn = Callable[..., Reads]


def select_and_scatter_reads(
    values: np.ndarray, size, stride, pad_low, pad_high
) -> tuple[Reads, tuple]:
    """Reads of select-and-scatter with ``select = GE`` (the max of each window), on data."""
    in_shape = values.shape
    ones = [1] * len(in_shape)
    base = stretch(ids(in_shape), ones, pad_low, pad_high)
    out_shape = tuple(
        window_output_size(b, s, st, 1) for b, s, st in zip(base.shape, size, stride, strict=True)
    )
    reads: Reads = defaultdict(set)
    for o in cells(in_shape):
        reads[0, 2].add((o, ()))
    for s in cells(out_shape):
        window = window_at(base, [i * t for i, t in zip(s, stride, strict=True)], size, ones)
        members = [unflat(x, in_shape) for x in window.reshape(-1) if x >= 0]
        if not members:
            continue
        picked = members[0]
        for m in members[1:]:
            if not values[picked] >= values[m]:
                picked = m
        reads[0, 1].add((picked, s))
        reads[0, 0] |= {(picked, m) for m in members}
    return reads, out_shape
