"""Reference semantics of HLO ops on *provenance*, the oracle for the op-rule tests.

Every element of every operand starts as the set ``{(operand_id, index)}``; each reference
op below moves and merges these sets exactly as the op moves and combines values
(XLA's operation semantics, https://openxla.org/xla/operation_semantics), written with
plain NumPy array manipulation that shares no code or formula with the rules: a reshape is
``np.reshape``, a pad is an interior dilation followed by ``np.pad``/cropping, a dot is a
loop over the contracted positions. What an output element *reads* is then its set.

:func:`reads` turns an output's provenance into the relation ``{(output index, operand
index)}`` for one operand, which the tests compare with the relation of an op rule's maps
enumerated by :mod:`hloidx.maps.domain`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from math import prod

import numpy as np

Prov = np.ndarray  # dtype=object, each element a frozenset of (operand_id, index)
Pairs = set[tuple[tuple[int, ...], tuple[int, ...]]]

_union2 = np.frompyfunc(lambda a, b: a | b, 2, 1)
EMPTY: frozenset = frozenset()


def leaf(operand_id: int, shape: Sequence[int]) -> Prov:
    """An operand whose element at ``index`` is ``{(operand_id, index)}``."""
    out = np.empty(tuple(shape), dtype=object)
    for index in np.ndindex(*shape):
        out[index] = frozenset({(operand_id, tuple(int(i) for i in index))})
    return out


def filled(shape: Sequence[int], value: frozenset) -> Prov:
    out = np.empty(tuple(shape), dtype=object)
    for index in np.ndindex(*shape):
        out[index] = value
    return out


def union(*arrays: Prov) -> Prov:
    """Element-wise union, with NumPy broadcasting (a 0-d operand feeds every element)."""
    result = arrays[0]
    for other in arrays[1:]:
        result = _union2(result, other)
    return np.asarray(result, dtype=object)


def union_over(array: Prov, axes: Sequence[int]) -> Prov:
    """Union along ``axes`` (the axes disappear)."""
    axes = tuple(sorted(axes))
    keep = [k for k in range(array.ndim) if k not in axes]
    out_shape = [array.shape[k] for k in keep]
    out = np.empty(tuple(out_shape), dtype=object)
    moved = np.moveaxis(array, keep, list(range(len(keep)))) if keep else array
    for index in np.ndindex(*out_shape):
        block = moved[index] if keep else moved
        acc: frozenset = EMPTY
        for item in np.asarray(block, dtype=object).reshape(-1):
            acc = acc | item
        out[index] = acc
    return out


def all_of(array: Prov) -> frozenset:
    acc: frozenset = EMPTY
    for item in array.reshape(-1):
        acc = acc | item
    return acc


def reads(output: Prov, operand_id: int) -> Pairs:
    """``{(output index, operand index)}``: which operand elements each output element reads."""
    pairs: Pairs = set()
    for index in np.ndindex(*output.shape):
        for source, source_index in output[index]:
            if source == operand_id:
                pairs.add((tuple(int(i) for i in index), source_index))
    return pairs


def inverse(pairs: Pairs) -> Pairs:
    return {(b, a) for a, b in pairs}


# ---------------------------------------------------------------------------
# the ops
# ---------------------------------------------------------------------------


def elementwise(operands: Sequence[Prov]) -> Prov:
    return union(*operands)


def broadcast(x: Prov, out_shape: Sequence[int], dims: Sequence[int]) -> Prov:
    """Operand dimension i becomes output dimension dims[i]; the others are replicated."""
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    moved = np.transpose(x, order) if len(order) > 1 else x
    expanded_shape = [1] * len(out_shape)
    for i in order:
        expanded_shape[dims[i]] = x.shape[i]
    return np.broadcast_to(moved.reshape(expanded_shape), tuple(out_shape)).copy()


def reshape(x: Prov, out_shape: Sequence[int]) -> Prov:
    return x.reshape(tuple(out_shape))


def physical_order(rank: int, minor_to_major: Sequence[int] | None) -> list[int]:
    return list(reversed(minor_to_major)) if minor_to_major is not None else list(range(rank))


def bitcast(
    x: Prov,
    in_layout: Sequence[int] | None,
    out_shape: Sequence[int],
    out_layout: Sequence[int] | None,
) -> Prov:
    """Same bytes, new shape/layout: lay the operand out in memory, read it back."""
    memory = np.transpose(x, physical_order(x.ndim, in_layout)).reshape(-1)
    out_order = physical_order(len(out_shape), out_layout)
    physical = memory.reshape([out_shape[k] for k in out_order])
    return np.transpose(physical, np.argsort(out_order))


def transpose(x: Prov, perm: Sequence[int]) -> Prov:
    return np.transpose(x, perm)


def reverse(x: Prov, dims: Sequence[int]) -> Prov:
    return np.flip(x, axis=tuple(dims)) if dims else x


def slice_(x: Prov, config: Sequence[tuple[int, int, int]]) -> Prov:
    return x[tuple(slice(start, limit, stride) for start, limit, stride in config)]


def pad(x: Prov, value: Prov, config: Sequence[tuple[int, int, int]]) -> Prov:
    """Interior padding first, then edge padding (negative edges crop)."""
    fill = value[()]
    dilated_shape = [
        n + max(n - 1, 0) * interior for n, (_, _, interior) in zip(x.shape, config, strict=True)
    ]
    dilated = filled(dilated_shape, fill)
    dilated[tuple(slice(None, None, interior + 1) for _, _, interior in config)] = x
    widths = [(max(low, 0), max(high, 0)) for low, high, _ in config]
    padded = np.empty(
        [n + a + b for n, (a, b) in zip(dilated_shape, widths, strict=True)], dtype=object
    )
    for index in np.ndindex(*padded.shape):
        padded[index] = fill
    padded[tuple(slice(a, a + n) for n, (a, _) in zip(dilated_shape, widths, strict=True))] = (
        dilated
    )
    crop = tuple(
        slice(max(-low, 0), padded.shape[k] - max(-high, 0))
        for k, (low, high, _) in enumerate(config)
    )
    return padded[crop]


def concatenate(xs: Sequence[Prov], axis: int) -> Prov:
    return np.concatenate(list(xs), axis=axis)


def reduce(inputs: Sequence[Prov], inits: Sequence[Prov], dims: Sequence[int]) -> list[Prov]:
    """Each output combines, jointly, every input over the reduced dims and every init."""
    combined = union_over(union(*inputs), dims)
    init_set = all_of(np.array([all_of(i) for i in inits], dtype=object))
    out = union(combined, filled((), init_set))
    return [out for _ in inputs]


def sort(operands: Sequence[Prov], axis: int, compared: Sequence[int]) -> list[Prov]:
    """Output j: operand j permuted along ``axis`` by comparing the ``compared`` operands."""
    outs = []
    for j, x in enumerate(operands):
        used = union(*[operands[i] for i in sorted(set(compared) | {j})])
        along = union_over(used, [axis])
        outs.append(np.broadcast_to(np.expand_dims(along, axis), x.shape).copy())
    return outs


def dot(
    lhs: Prov,
    rhs: Prov,
    lhs_batch: Sequence[int],
    rhs_batch: Sequence[int],
    lhs_contracting: Sequence[int],
    rhs_contracting: Sequence[int],
) -> Prov:
    lhs_free = [k for k in range(lhs.ndim) if k not in lhs_batch and k not in lhs_contracting]
    rhs_free = [k for k in range(rhs.ndim) if k not in rhs_batch and k not in rhs_contracting]
    batch_sizes = [lhs.shape[k] for k in lhs_batch]
    out_shape = batch_sizes + [lhs.shape[k] for k in lhs_free] + [rhs.shape[k] for k in rhs_free]
    contracted = [lhs.shape[k] for k in lhs_contracting]
    out = np.empty(tuple(out_shape), dtype=object)
    for index in np.ndindex(*out_shape):
        b = index[: len(lhs_batch)]
        lf = index[len(lhs_batch) : len(lhs_batch) + len(lhs_free)]
        rf = index[len(lhs_batch) + len(lhs_free) :]
        acc: frozenset = EMPTY
        for c in itertools.product(*[range(n) for n in contracted]):
            li = [0] * lhs.ndim
            ri = [0] * rhs.ndim
            for pos, k in enumerate(lhs_batch):
                li[k] = b[pos]
            for pos, k in enumerate(rhs_batch):
                ri[k] = b[pos]
            for pos, k in enumerate(lhs_free):
                li[k] = lf[pos]
            for pos, k in enumerate(rhs_free):
                ri[k] = rf[pos]
            for pos, k in enumerate(lhs_contracting):
                li[k] = c[pos]
            for pos, k in enumerate(rhs_contracting):
                ri[k] = c[pos]
            acc = acc | lhs[tuple(li)] | rhs[tuple(ri)]
        out[index] = acc
    return out


def bitcast_convert(x: Prov, out_shape: Sequence[int]) -> Prov:
    """Same bits: a wider element splits into a new minor dimension, or minor pieces join."""
    if tuple(out_shape) == x.shape:
        return x
    if len(out_shape) == x.ndim + 1:
        return np.broadcast_to(x[..., None], tuple(out_shape)).copy()
    return union_over(x, [x.ndim - 1])


def whole(x: Prov, out_shape: Sequence[int]) -> Prov:
    """Every output element may depend on every element of ``x`` (rng-bit-generator)."""
    return filled(out_shape, all_of(x))


def all_gather(replica_operands: Sequence[Prov], axis: int) -> Prov:
    """The group's operands, in group order, concatenated along ``axis``."""
    return np.concatenate(list(replica_operands), axis=axis)


def size_of(shape: Sequence[int]) -> int:
    return prod(shape)


def upsample(scale: Prov, shape: Sequence[int]) -> Prov:
    """A block scale seen at full resolution: element i uses scale[i // block]."""
    out = scale
    for k, n in enumerate(shape):
        out = np.repeat(out, n // scale.shape[k], axis=k)
    return out
