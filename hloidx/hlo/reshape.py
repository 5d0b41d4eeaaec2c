"""Index arithmetic of row-major reshapes, shared by the reshape and bitcast rules.

``reshape_index(src, dst, dst_index)`` answers: an element at ``dst_index`` of a
``dst``-shaped view of some data sits at which index of the ``src``-shaped view?

The shapes are first cut into *minimal groups*: the shortest runs of dimensions on both
sides with the same element count ([4, 8, 12] -> [32, 3, 4] is [4, 8] -> [32] then
[12] -> [3, 4]). Inside a group, when the strides of both sides divide one another, the
group is split into common "digits" of a mixed-radix number and every index is written
with one floordiv/mod per digit, which gives the simple forms XLA's simplifier reaches
(``d0 * 2 + d1 floordiv 2``). Otherwise the group goes through one linear index.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from math import prod

from ..maps.expr import Expr, add, const, dim, floordiv, mod, mul
from ..maps.indexing_map import IndexingMap


def minimal_groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[range, range]]:
    """Pairs of (src dims, dst dims) ranges with equal element counts, as short as possible.

    A size-1 dimension forms a group of its own with nothing on the other side. The caller
    guarantees equal, non-zero element counts.
    """
    groups: list[tuple[range, range]] = []
    a = b = 0
    while a < len(src) or b < len(dst):
        if a < len(src) and src[a] == 1:
            groups.append((range(a, a + 1), range(b, b)))
            a += 1
            continue
        if b < len(dst) and dst[b] == 1:
            groups.append((range(a, a), range(b, b + 1)))
            b += 1
            continue
        a_end, b_end = a + 1, b + 1
        count_src, count_dst = src[a], dst[b]
        while count_src != count_dst:
            if count_src < count_dst:
                count_src *= src[a_end]
                a_end += 1
            else:
                count_dst *= dst[b_end]
                b_end += 1
        groups.append((range(a, a_end), range(b, b_end)))
        a, b = a_end, b_end
    return groups


def row_major_strides(sizes: Sequence[int]) -> list[int]:
    """Elements between consecutive indices of each dimension, row-major (last dim 1)."""
    return [prod(sizes[k + 1 :]) for k in range(len(sizes))]


def linearized_reshape_map(dst: Sequence[int], src: Sequence[int]) -> IndexingMap:
    """The output-to-input map of a ``src`` -> ``dst`` reshape written the naive way.

    One linear index ``L = Σ d_k * stride_k`` over ``dst``, then every ``src`` digit
    ``(L floordiv stride_j) mod size_j`` (the most significant without ``mod``), with no
    grouping or special case: the form a simplifier has to collapse, as in reshape chains
    and linearize/delinearize pairs.
    """
    linear = add(*(mul(dim(k), s) for k, s in enumerate(row_major_strides(dst))), 0)
    results = []
    for j, (size, stride) in enumerate(zip(src, row_major_strides(src), strict=True)):
        quotient = floordiv(linear, stride)
        results.append(quotient if j == 0 else mod(quotient, size))
    return IndexingMap.build(results, dst)


def _digit(index: Expr, stride: int, size: int, is_top: bool) -> Expr:
    """``(index floordiv stride) mod size``, without the parts that are no-ops."""
    value = floordiv(index, stride) if stride != 1 else index
    return value if is_top else mod(value, size)


def _group_by_digits(
    src: Sequence[int], dst: Sequence[int], dst_index: Sequence[Expr]
) -> list[Expr] | None:
    total = prod(src)
    boundaries = sorted(
        {1, total}
        | {prod(src[k:]) for k in range(len(src))}
        | {prod(dst[k:]) for k in range(len(dst))}
    )
    if any(hi % lo for lo, hi in pairwise(boundaries)):
        return None
    # digit q: global stride boundaries[q], size boundaries[q+1] // boundaries[q]
    digits = list(pairwise(boundaries))
    digit_value: dict[int, Expr] = {}
    for size_k, stride_k, index_k in zip(dst, row_major_strides(dst), dst_index, strict=True):
        span = stride_k * size_k
        for low, high in digits:
            if stride_k <= low and high <= span:
                digit_value[low] = _digit(index_k, low // stride_k, high // low, high == span)
    results = []
    for size_k, stride_k in zip(src, row_major_strides(src), strict=True):
        span = stride_k * size_k
        # most significant digit first, as XLA prints them: d0 * 2 + d1 floordiv 2
        terms = [
            mul(digit_value[low], low // stride_k)
            for low, high in reversed(digits)
            if stride_k <= low and high <= span
        ]
        results.append(add(*terms) if terms else const(0))
    return results


def _group_by_linear_index(
    src: Sequence[int], dst: Sequence[int], dst_index: Sequence[Expr]
) -> list[Expr]:
    linear = add(*(mul(e, s) for e, s in zip(dst_index, row_major_strides(dst), strict=True)))
    results: list[Expr] = []
    seen_major = False
    for size_k, stride_k in zip(src, row_major_strides(src), strict=True):
        if size_k == 1:
            results.append(const(0))
            continue
        results.append(_digit(linear, stride_k, size_k, not seen_major))
        seen_major = True
    return results


def reshape_index(src: Sequence[int], dst: Sequence[int], dst_index: Sequence[Expr]) -> list[Expr]:
    """The ``src`` index of the element at ``dst_index`` of the same data viewed as ``dst``."""
    if prod(src) == 0 or prod(dst) == 0:
        return [const(0) for _ in src]
    results: list[Expr] = []
    for src_dims, dst_dims in minimal_groups(src, dst):
        group_src = [src[k] for k in src_dims]
        group_dst = [dst[k] for k in dst_dims]
        group_index = [dst_index[k] for k in dst_dims]
        if not group_dst:
            results.extend(const(0) for _ in group_src)
            continue
        by_digits = _group_by_digits(group_src, group_dst, group_index)
        if by_digits is None:
            by_digits = _group_by_linear_index(group_src, group_dst, group_index)
        results.extend(by_digits)
    return results
