"""More op semantics for the provenance interpreter: convolution, scatter, select-and-scatter,
gather with batching dimensions, collectives, random-number ops, and ops that pass data through.

Each function evaluates one op on :class:`Tensor` s from XLA's operation semantics, step by step
(padding and dilation materialised, groups split, scatter's per-update algorithm), and records
for every output element the operand elements it is computed from. Like the rest of the
interpreter it never uses indexing maps or the op rules.

Collectives are interpreted on one replica that does not know its position in its group: the
reads recorded are the union over every position it may have. Where an op's values are not
computed (a convolution's arithmetic, random bits), ``known`` is False and only provenance is
carried.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import UnsupportedOpError
from .gpu_semantics import cudnn_convolution
from .tensors import (
    _EMPTY,
    ELEMENTWISE_CUSTOM_CALLS,
    IDENTITY_CUSTOM_CALLS,
    Tag,
    Tensor,
    Value,
    _dtype,
    _empty_provenance,
    _union_all,
    custom_call_target,
)

if TYPE_CHECKING:
    from ..hlo.ir import Computation, Instruction

Semantics = Callable[[Any, "Instruction", list[Tensor]], Value]

_HOLE = -1  # padding or a dilation hole in a materialised base


def _ids(shape: Sequence[int]) -> np.ndarray:
    return np.arange(prod(shape), dtype=np.int64).reshape(tuple(shape))


def _stretch(a: np.ndarray, dilation: Sequence[int], low: Sequence[int], high: Sequence[int]):
    """``a`` with ``dilation - 1`` holes between elements and low/high padding (negative crops)."""
    shape = [(n - 1) * d + 1 if n else 0 for n, d in zip(a.shape, dilation, strict=True)]
    out = np.full(shape, _HOLE, dtype=np.int64)
    out[tuple(slice(None, None, d) for d in dilation)] = a
    out = np.pad(
        out,
        [(max(lo, 0), max(hi, 0)) for lo, hi in zip(low, high, strict=True)],
        constant_values=_HOLE,
    )
    return out[
        tuple(
            slice(max(-lo, 0), out.shape[k] - max(-hi, 0))
            for k, (lo, hi) in enumerate(zip(low, high, strict=True))
        )
    ]


def _window(base: np.ndarray, start: Sequence[int], size: Sequence[int], step: Sequence[int]):
    return base[
        tuple(slice(s, s + (n - 1) * d + 1, d) for s, n, d in zip(start, size, step, strict=True))
    ]


def _out_size(base: int, size: int, stride: int, dilation: int) -> int:
    span = (size - 1) * dilation + 1
    return 0 if base < span else (base - span) // stride + 1


def _unknown(instr: Instruction, prov: np.ndarray) -> Tensor:
    return Tensor(np.zeros(prov.shape, dtype=_dtype(instr.shape)), prov, known=False)


# ---------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------


def convolution(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Tensor:
    """Each output element reads the input window (real elements only: padding and holes
    multiply nothing) and, for each of those elements, the kernel element it meets."""
    lhs_t, rhs_t = ops[0], ops[1]
    dn = instr.convolution_dimension_numbers
    window = instr.window or ()
    if dn is None:
        raise UnsupportedOpError("the oracle needs dim_labels on a convolution", instr.span)
    rank = len(window)
    lhs = np.transpose(_ids(lhs_t.shape), [dn.input_batch, dn.input_feature, *dn.input_spatial])
    rhs = np.transpose(
        _ids(rhs_t.shape),
        [dn.kernel_output_feature, dn.kernel_input_feature, *dn.kernel_spatial],
    )
    for k, w in enumerate(window):
        if w.reversal:
            rhs = np.flip(rhs, axis=2 + k)
    padded = np.stack(
        [
            np.stack(
                [
                    _stretch(
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
        _out_size(padded.shape[2 + k], w.size, w.stride, w.window_dilation)
        for k, w in enumerate(window)
    ]
    batch_groups, feature_groups = instr.batch_group_count, instr.feature_group_count
    groups = batch_groups if batch_groups > 1 else feature_groups
    lhs_groups = np.split(padded, groups, axis=0 if batch_groups > 1 else 1)
    rhs_groups = np.split(rhs, groups, axis=0)
    out_dims = instr.shape.dims
    prov = _empty_provenance(out_dims)
    lhs_flat, rhs_flat = lhs_t.provenance.reshape(-1), rhs_t.provenance.reshape(-1)
    sizes, dilations = [w.size for w in window], [w.window_dilation for w in window]
    for g in range(groups):
        lg, rg = lhs_groups[g], rhs_groups[g]
        for b, fo, *o in itertools.product(
            range(padded.shape[0] // batch_groups), range(rg.shape[0]), *map(range, out_spatial)
        ):
            index = [0] * (rank + 2)
            index[dn.output_batch] = b
            index[dn.output_feature] = g * rg.shape[0] + fo
            for k in range(rank):
                index[dn.output_spatial[k]] = o[k]
            starts = [o[k] * window[k].stride for k in range(rank)]
            reads: set[Tag] = set()
            for fi in range(lg.shape[1]):
                inputs = _window(lg[b, fi], starts, sizes, dilations).reshape(-1)
                kernel = rg[fo, fi].reshape(-1)
                real = inputs >= 0
                for x, w in zip(inputs[real], kernel[real], strict=True):
                    reads |= lhs_flat[x] | rhs_flat[w]
            prov[tuple(index)] = frozenset(reads)
    return _unknown(instr, prov)


# ---------------------------------------------------------------------------
# gather (with batching dimensions), scatter, select-and-scatter
# ---------------------------------------------------------------------------


def _index_vector(indices: Tensor, vector_dim: int, batch: tuple[int, ...]):
    """The start-index vector at batch position ``batch``, and the index elements it is."""
    if vector_dim == indices.values.ndim:
        return [int(indices.values[batch])], indices.provenance[batch]
    where = [
        (*batch[:vector_dim], k, *batch[vector_dim:]) for k in range(indices.shape[vector_dim])
    ]
    return [int(indices.values[w]) for w in where], _union_all(indices.provenance[w] for w in where)


def _require_values(instr: Instruction, tensor: Tensor, what: str) -> None:
    if not tensor.known:
        raise UnsupportedOpError(
            f"the oracle cannot evaluate {instr.name}: its {what} come from values it does not "
            "compute",
            instr.span,
        )


def gather(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Tensor:
    operand, indices = ops
    _require_values(instr, indices, "indices")
    dn = instr.gather_dimension_numbers
    sizes = instr.gather_slice_sizes or ()
    out_dims = instr.shape.dims
    batch_dims = [d for d in range(len(out_dims)) if d not in dn.offset_dims]
    window_dims = [
        j
        for j in range(len(operand.shape))
        if j not in dn.collapsed_slice_dims and j not in dn.operand_batching_dims
    ]
    rank = indices.values.ndim + (dn.index_vector_dim == indices.values.ndim)
    index_batch_dims = [i for i in range(rank) if i != dn.index_vector_dim]
    values = np.zeros(out_dims, dtype=operand.values.dtype)
    prov = _empty_provenance(out_dims)
    for out in np.ndindex(*out_dims):
        batch = tuple(out[d] for d in batch_dims)
        vector, index_reads = _index_vector(indices, dn.index_vector_dim, batch)
        start = [0] * len(operand.shape)
        for k, j in enumerate(dn.start_index_map):
            start[j] = vector[k]
        for j, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True):
            start[j] = batch[index_batch_dims.index(i)]
        full = [min(max(s, 0), n - z) for s, n, z in zip(start, operand.shape, sizes, strict=True)]
        for j, d in zip(window_dims, sorted(dn.offset_dims), strict=True):
            full[j] += out[d]
        values[out] = operand.values[tuple(full)]
        prov[out] = index_reads | operand.provenance[tuple(full)]
    return Tensor(values, prov, operand.known)


def scatter(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Value:
    """Output i starts as operand i; every update element that lands in bounds (each element
    checked on its own) is combined into its target: the target then also reads that update
    element of every update operand, the other operands at the target (the combiner sees them
    all), and the index vector that placed it."""
    n = (len(ops) - 1) // 2
    operands, indices, updates = ops[:n], ops[n], ops[n + 1 :]
    _require_values(instr, indices, "indices")
    dn = instr.scatter_dimension_numbers
    shape = operands[0].shape
    update_shape = updates[0].shape
    prov = [o.provenance.copy() for o in operands]
    scatter_dims = [d for d in range(len(update_shape)) if d not in dn.update_window_dims]
    window_dims = [
        j
        for j in range(len(shape))
        if j not in dn.inserted_window_dims and j not in dn.input_batching_dims
    ]
    rank = indices.values.ndim + (dn.index_vector_dim == indices.values.ndim)
    index_batch_dims = [i for i in range(rank) if i != dn.index_vector_dim]
    for u in np.ndindex(*update_shape):
        batch = tuple(u[d] for d in scatter_dims)
        vector, index_reads = _index_vector(indices, dn.index_vector_dim, batch)
        target = [0] * len(shape)
        for k, j in enumerate(dn.scatter_dims_to_operand_dims):
            target[j] = vector[k]
        for j, i in zip(dn.input_batching_dims, dn.scatter_indices_batching_dims, strict=True):
            target[j] = batch[index_batch_dims.index(i)]
        for j, d in zip(window_dims, sorted(dn.update_window_dims), strict=True):
            target[j] += u[d]
        if not all(0 <= t < s for t, s in zip(target, shape, strict=True)):
            continue  # out of bounds: XLA skips the update element
        t = tuple(target)
        combined = _union_all(x.provenance[u] for x in updates) | _union_all(
            o.provenance[t] for o in operands
        )
        for i in range(n):
            prov[i][t] = prov[i][t] | combined | index_reads
    outputs = [_unknown(instr, p) for p in prov]
    return tuple(outputs) if instr.shape.is_tuple else outputs[0]


_SELECT = {"GE": np.greater_equal, "GT": np.greater, "LE": np.less_equal, "LT": np.less}


def _select_direction(instr: Instruction) -> Callable[[Any, Any], Any]:
    called = instr.called_computations.get("select") or []
    root = called[0].root if called else None
    direction = (root.attributes.get("direction", "") if root is not None else "").strip()
    if root is None or root.opcode != "compare" or direction not in _SELECT:
        raise UnsupportedOpError(
            f"the oracle interprets select-and-scatter only with a compare selector ({instr.name})",
            instr.span,
        )
    return _SELECT[direction]


def select_and_scatter(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Tensor:
    """Each source window picks one operand element (the first that the selector keeps
    against every later one); that element's output reads the source element and the whole
    window it was picked from; every output element reads the init value."""
    operand, source, init = ops
    _require_values(instr, operand, "selected elements")
    keep = _select_direction(instr)
    window = instr.window or ()
    dims = operand.shape
    base = _stretch(
        _ids(dims), [1] * len(dims), [w.pad_low for w in window], [w.pad_high for w in window]
    )
    prov = np.empty(dims, dtype=object)
    prov.fill(init.provenance[()])
    flat_values, flat_prov = operand.values.reshape(-1), operand.provenance.reshape(-1)
    for s in np.ndindex(*source.shape):
        members = [
            int(x)
            for x in _window(
                base,
                [i * w.stride for i, w in zip(s, window, strict=True)],
                [w.size for w in window],
                [1] * len(dims),
            ).reshape(-1)
            if x >= 0
        ]
        if not members:
            continue
        picked = members[0]
        for m in members[1:]:
            if not keep(flat_values[picked], flat_values[m]):
                picked = m
        where = np.unravel_index(picked, dims)
        prov[where] = prov[where] | source.provenance[s] | _union_all(flat_prov[m] for m in members)
    return _unknown(instr, prov)


# ---------------------------------------------------------------------------
# collectives (one replica, position in its group unknown), pass-through, random numbers
# ---------------------------------------------------------------------------


def _group_size(instr: Instruction, default: int) -> int:
    import re

    text = instr.attributes.get("replica_groups", "").replace(" ", "")
    iota = re.match(r"\[(\d+),(\d+)\]<=", text)
    if iota:
        return int(iota.group(2))
    groups = [g for g in re.findall(r"\{([\d,]*)\}", text) if g]
    sizes = {len(g.split(",")) for g in groups}
    return sizes.pop() if len(sizes) == 1 else default


def _axis(instr: Instruction) -> int:
    dims = instr.dimensions or ()
    if len(dims) != 1:
        raise UnsupportedOpError("the oracle needs one collective dimension", instr.span)
    return dims[0]


def all_gather(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Value:
    """Every replica contributes its own copy of the operand, at the same local index: the
    gathered output reads the operand at its index within the block."""
    (x,) = ops
    axis = _axis(instr)
    out = instr.shape.tuple_shapes[-1] if instr.shape.is_tuple else instr.shape
    copies = out.dims[axis] // x.shape[axis] if x.shape[axis] else 0
    gathered = Tensor(
        np.concatenate([x.values] * copies, axis=axis),
        np.concatenate([x.provenance] * copies, axis=axis),
        x.known,
    )
    return (x, gathered) if instr.opcode == "all-gather-start" else gathered


def _same_index(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Value:
    """all-reduce, collective-permute (and their start/done halves), copy-start/-done,
    opt-barrier, domain, add-dependency: each output element reads the element at its own
    index (all-reduce: on every replica; collective-permute: on the source replica)."""
    if instr.opcode.startswith("all-reduce") and len(ops) > 1:
        return tuple(Tensor(o.values.copy(), o.provenance.copy(), o.known) for o in ops)
    first = ops[0]
    outputs = []
    for leaf in instr.shape.leaves():
        if leaf.dims == first.shape:
            outputs.append(Tensor(first.values.copy(), first.provenance.copy(), first.known))
        else:  # a context or a flag (copy-start's u32[]): computed from nothing we track
            outputs.append(
                Tensor(np.zeros(leaf.dims, dtype=_dtype(leaf)), _empty_provenance(leaf.dims), False)
            )
    return tuple(outputs) if instr.shape.is_tuple else outputs[0]


def reduce_scatter(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Tensor:
    """Output block = the operand's block at this replica's position (unknown: every block)."""
    (x,) = ops
    axis = _axis(instr)
    piece = instr.shape.dims[axis]
    blocks = np.split(x.provenance, x.shape[axis] // piece, axis=axis)
    prov = blocks[0]
    for b in blocks[1:]:
        prov = np.vectorize(lambda p, q: p | q, otypes=[object])(prov, b)
    return _unknown(instr, np.asarray(prov, dtype=object))


def all_to_all(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Tensor:
    """Array form: output block r comes from group position r, where it was that replica's
    block at its own position; positions unknown, so each output block reads every block."""
    (x,) = ops
    axis = _axis(instr)
    count = _group_size(instr, 1)
    piece = x.shape[axis] // count if count else 0
    if not piece or x.shape[axis] % count:
        raise UnsupportedOpError("the oracle needs equal all-to-all blocks", instr.span)
    blocks = np.split(x.provenance, count, axis=axis)
    union = blocks[0]
    for b in blocks[1:]:
        union = np.vectorize(lambda p, q: p | q, otypes=[object])(union, b)
    prov = np.concatenate([np.asarray(union, dtype=object)] * count, axis=axis)
    return _unknown(instr, prov)


def _reads_all(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Value:
    """rng, rng-bit-generator, rng-get-and-update-state, replica-id, partition-id: every
    output element reads every element of every operand (distribution parameters, state)."""
    everything = _union_all(p for o in ops for p in o.provenance.reshape(-1))
    outputs = []
    for leaf in instr.shape.leaves():
        prov = np.empty(leaf.dims, dtype=object)
        prov.fill(everything if ops else _EMPTY)
        outputs.append(Tensor(np.zeros(leaf.dims, dtype=_dtype(leaf)), prov, known=False))
    return tuple(outputs) if instr.shape.is_tuple else outputs[0]


def custom_call(interp: Any, instr: Instruction, ops: list[Tensor]) -> Value:
    """The custom-call targets the oracle knows: XLA's TopK, annotations, elementwise
    functions StableHLO names (``chlo.erf_inv``) and the cuDNN convolutions."""
    target = custom_call_target(instr)
    if target == "TopK":
        return topk(interp, instr, ops)
    if target in IDENTITY_CUSTOM_CALLS and len(ops) == 1:
        return Tensor(ops[0].values.copy(), ops[0].provenance.copy(), ops[0].known)
    if target in ELEMENTWISE_CUSTOM_CALLS and len(ops) == 1:
        (x,) = ops
        return Tensor(np.zeros(x.shape, dtype=_dtype(instr.shape)), x.provenance.copy(), False)
    return cudnn_convolution(interp, instr, ops)


def topk(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Value:
    """Each output row (values and indices) reads the whole input row along the last axis."""
    (x,) = ops
    axis = len(x.shape) - 1
    rows = np.apply_along_axis(
        lambda row: np.full(1, _union_all(row), dtype=object), axis, x.provenance
    )
    outputs = []
    for leaf in instr.shape.leaves():
        prov = np.broadcast_to(rows, leaf.dims).copy() if leaf.dims else rows.reshape(())
        outputs.append(Tensor(np.zeros(leaf.dims, dtype=_dtype(leaf)), prov, known=False))
    return tuple(outputs) if instr.shape.is_tuple else outputs[0]


def scaled_dot(interp: Any, instr: Instruction, ops: list[Tensor]) -> Tensor:
    """A dot whose operands are scaled blockwise: element i of an operand uses its scale at
    ``i // block`` per dimension, so each product also reads that scale element."""
    lhs, rhs, *scales = ops

    def scaled(x: Tensor, scale: Tensor | None) -> Tensor:
        if scale is None:
            return x
        up = scale.provenance
        for k, n in enumerate(x.shape):
            up = np.repeat(up, n // scale.shape[k], axis=k)
        merged = np.vectorize(lambda p, q: p | q, otypes=[object])(x.provenance, up)
        return Tensor(x.values, np.asarray(merged, dtype=object), False)

    return interp._dot(
        instr,
        [
            scaled(lhs, scales[0] if scales else None),
            scaled(rhs, scales[1] if len(scales) > 1 else None),
        ],
    )


def bitcast_convert(_interp: Any, instr: Instruction, ops: list[Tensor]) -> Tensor:
    """The same bits: a wider element splits into a new minor dimension of narrower ones, or
    the minor dimension's pieces join into one wider element."""
    (x,) = ops
    out_dims = instr.shape.dims
    if out_dims == x.shape:
        prov = x.provenance.copy()
    elif len(out_dims) == len(x.shape) + 1:
        prov = np.broadcast_to(x.provenance[..., None], out_dims).copy()
    else:
        prov = np.empty(out_dims, dtype=object)
        for index in np.ndindex(*out_dims):
            prov[index] = _union_all(x.provenance[index].reshape(-1))
    return _unknown(instr, prov)


def fft(instr: Instruction, ops: list[Tensor]) -> Tensor:
    """An output element of a transform over the last k dimensions depends on every element of
    its batch's input (the transform mixes them all)."""
    (x,) = ops
    k = len([v for v in instr.attributes.get("fft_length", "").strip("{} ").split(",") if v])
    batch = len(x.shape) - k
    out = instr.shape.dims
    prov = np.empty(out, dtype=object)
    for index in np.ndindex(*out):
        prov[index] = _union_all(x.provenance[index[:batch]].reshape(-1))
    return _unknown(instr, prov)


#: which element of a *-start tuple its *-done returns
DONE_ELEMENT = {"copy-done": 0, "collective-permute-done": 1, "all-gather-done": -1}


SEMANTICS: dict[str, Semantics] = {
    "convolution": convolution,
    "gather": gather,
    "scatter": scatter,
    "select-and-scatter": select_and_scatter,
    "all-gather": all_gather,
    "all-gather-start": all_gather,
    "all-reduce": _same_index,
    "all-reduce-start": _same_index,
    "all-gather-done": _same_index,
    "all-reduce-done": _same_index,
    "collective-permute": _same_index,
    "collective-permute-start": _same_index,
    "collective-permute-done": _same_index,
    "copy-start": _same_index,
    "copy-done": _same_index,
    "reduce-scatter": reduce_scatter,
    "all-to-all": all_to_all,
    "rng": _reads_all,
    "rng-bit-generator": _reads_all,
    "rng-get-and-update-state": _reads_all,
    "replica-id": _reads_all,
    "partition-id": _reads_all,
    "topk": topk,
    "scaled-dot": scaled_dot,
    "bitcast-convert": bitcast_convert,
    "fft": lambda interp, instr, ops: fft(instr, ops),
    "custom-call": custom_call,
}


def called(instr: Instruction, key: str) -> Computation | None:
    found = instr.called_computations.get(key) or []
    return found[0] if found else None
