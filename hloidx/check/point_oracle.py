"""The point-wise provenance oracle: which operand elements ONE output element of an instruction
reads, found by walking backwards from that element.

It answers the question :mod:`hloidx.check.oracle` answers for whole tensors, with the same tags
``(operand_number, tuple_leaf, index)`` and the same semantics (see that module's docstring: pad
reads the padding value only where padding lands, a reduce reads everything it combines
including the init values, dynamic-slice and gather start indices are clamped, the index
operands of a data-dependent op are read by every output element they position, ...), but its
cost grows with what one element reads, not with the size of the tensors. That makes it the
independent check for modules too large to interpret whole: sample some output elements, ask
what each reads, compare with the maps (:mod:`hloidx.check.sampled_check`).

The walk uses concrete integer index arithmetic per op, memoised per (instruction, evaluation
of its computation, index). It never uses indexing maps, the op rules or anything under
``hloidx.maps``. Values are needed only by data-dependent ops, whose index operands are
computed whole by the interpreter when small (:mod:`hloidx.check.point_values`).

Ops it does not know, and elements whose read set or walk is larger than its caps, raise
:class:`PointUnchecked`: never a guess.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from math import prod
from typing import TYPE_CHECKING

import numpy as np

from .point_values import OperandData, PointUnchecked, evaluate_values
from .tensors import (
    _ELEMENTWISE,
    DEFAULT_LIMIT,
    ELEMENTWISE_CUSTOM_CALLS,
    IDENTITY_CUSTOM_CALLS,
    Tag,
    Tensor,
    Value,
    _major_to_minor,
    custom_call_target,
)

if TYPE_CHECKING:
    from ..hlo.ir import Computation, Instruction, Shape

#: most tags one element may read before it is left unchecked
READ_CAP = 200_000
#: most (instruction, index) steps of the walk for one element (~1 s of Python)
STEP_CAP = 250_000
#: memo entries kept between elements; beyond this the memo starts afresh
MEMO_LIMIT = 2_000_000

Index = tuple[int, ...]
Read = Callable[[int, Index, int], frozenset[Tag]]

_EMPTY: frozenset[Tag] = frozenset()

#: ops that pass their first operand through unchanged (tuples included)
_PASS_THROUGH = ("opt-barrier", "domain", "add-dependency", "copy")


class _Frame:
    """One evaluation of a computation: the instruction that called it, in its caller's frame.
    The top frame (no caller) holds the instruction being checked, whose operands are leaves."""

    __slots__ = ("call", "parent")

    def __init__(self, call: Instruction | None, parent: _Frame | None) -> None:
        self.call = call
        self.parent = parent


def _union(sets: Sequence[frozenset[Tag]] | list[frozenset[Tag]]) -> frozenset[Tag]:
    if not sets:
        return _EMPTY
    if len(sets) == 1:
        return sets[0]
    return frozenset().union(*sets)


def _leaf_count(shape: Shape) -> int:
    return len(shape.leaves())


class PointOracle:
    """What single output elements of ``instr`` read, on the data :func:`oracle.reads` uses.

    ``reads(index, leaf)`` is the set of tags output element ``index`` of output leaf ``leaf``
    reads; the walk's memo is kept between calls, so sampling many points of one instruction
    shares the work.
    """

    def __init__(
        self,
        instr: Instruction,
        *,
        seed: int = 0,
        value_limit: int = DEFAULT_LIMIT,
        read_cap: int = READ_CAP,
        step_cap: int = STEP_CAP,
    ) -> None:
        self.instr = instr
        self.value_limit = value_limit
        self.read_cap = read_cap
        self.step_cap = step_cap
        self.data = OperandData(instr, seed, value_limit)
        self.top = _Frame(None, None)
        self._children: dict[tuple[int, int], _Frame] = {}
        self._memo: dict[tuple[int, int, int, Index], frozenset[Tag]] = {}
        self._values: dict[tuple[int, int], Value] = {}
        self._steps = 0

    # -- public ----------------------------------------------------------------------
    def reads(self, index: Sequence[int], leaf: int = 0) -> frozenset[Tag]:
        """The tags output element ``index`` of output leaf ``leaf`` reads."""
        leaves = self.instr.shape.leaves()
        if not 0 <= leaf < len(leaves):
            raise PointUnchecked(f"{self.instr.name} has no output leaf {leaf}")
        point = tuple(int(i) for i in index)
        dims = leaves[leaf].dims
        if len(point) != len(dims) or not all(0 <= i < n for i, n in zip(point, dims, strict=True)):
            raise PointUnchecked(f"{point} is not an element of {self.instr.name}'s output {leaf}")
        self._steps = 0
        if len(self._memo) > MEMO_LIMIT:
            self._memo.clear()
        try:
            return self._at(self.instr, self.top, leaf, point)
        except RecursionError:
            raise PointUnchecked(f"{self.instr.name} is nested too deeply to walk") from None

    def value_of(self, producer: Instruction) -> Value | None:
        """The value ``producer`` has on this data (an operand of the instruction, or an
        instruction in a computation it calls from exactly one place), or None."""
        for j, operand in enumerate(self.instr.operands):
            if operand is producer:
                return self.data.value(j)
        frame = self._frame_of(producer.computation)
        if frame is None:
            return None
        return self._value(producer, frame)

    # -- frames ----------------------------------------------------------------------
    def _child(self, frame: _Frame, call: Instruction) -> _Frame:
        key = (id(frame), id(call))
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = _Frame(call, frame)
        return child

    def _frame_of(self, computation: Computation | None) -> _Frame | None:
        """The one frame in which ``computation`` runs under the checked instruction."""
        found: list[_Frame] = []
        stack = [(self.instr, self.top)]
        seen = 0
        while stack and seen < 10_000:
            call, frame = stack.pop()
            seen += 1
            for comp in _called(call):
                child = self._child(frame, call)
                if comp is computation:
                    found.append(child)
                for inner in comp.instructions:
                    if inner.called_computations:
                        stack.append((inner, child))
        return found[0] if len(found) == 1 else None

    # -- values (for data-dependent ops) --------------------------------------------------
    def _value(self, instr: Instruction, frame: _Frame) -> Value:
        key = (id(instr), id(frame))
        if key in self._values:
            return self._values[key]
        if frame.call is None and instr is not self.instr:
            raise PointUnchecked(f"{instr.name} is not evaluated here")
        if instr.opcode == "parameter" and frame.call is not None:
            value = self._operand_value(frame.call, frame.parent, instr.parameter_number or 0)
        else:
            operands = [self._operand_value(instr, frame, j) for j in range(len(instr.operands))]
            value = evaluate_values(instr, operands, self.value_limit)
        self._values[key] = value
        return value

    def _operand_value(self, instr: Instruction, frame: _Frame | None, j: int) -> Value:
        if frame is None:
            raise PointUnchecked("a parameter outside any call")
        if frame is self.top and instr is self.instr:
            return self.data.value(j)
        if j >= len(instr.operands):
            raise PointUnchecked(f"{instr.name} has no operand {j}")
        return self._value(instr.operands[j], frame)

    def _index_tensor(self, instr: Instruction, frame: _Frame, j: int) -> Tensor:
        value = self._operand_value(instr, frame, j)
        if not isinstance(value, Tensor) or not value.known:
            raise PointUnchecked(f"the index values of {instr.name} are not computed")
        return value

    # -- the walk --------------------------------------------------------------------
    def _at(self, instr: Instruction, frame: _Frame, leaf: int, index: Index) -> frozenset[Tag]:
        key = (id(instr), id(frame), leaf, index)
        found = self._memo.get(key)
        if found is not None:
            return found
        self._steps += 1
        if self._steps > self.step_cap:
            raise PointUnchecked(f"the walk takes more than {self.step_cap} steps")

        def read(j: int, at: Index, operand_leaf: int = 0) -> frozenset[Tag]:
            if frame is self.top and instr is self.instr:
                return frozenset({(j, operand_leaf, at)})
            return self._at(instr.operands[j], frame, operand_leaf, at)

        result = self._element(instr, frame, leaf, index, read)
        if len(result) > self.read_cap:
            raise PointUnchecked(f"one element reads more than {self.read_cap} elements")
        self._memo[key] = result
        return result

    def _element(
        self, instr: Instruction, frame: _Frame, leaf: int, index: Index, read: Read
    ) -> frozenset[Tag]:
        op = instr.opcode
        if op == "parameter":
            if frame.call is None:
                raise PointUnchecked(f"{instr.name}: a parameter of the checked instruction")
            call = frame.call
            number = instr.parameter_number or 0
            if number >= len(call.operands):
                raise PointUnchecked(f"{call.name} has no operand {number}")
            if frame.parent is self.top and call is self.instr:
                return frozenset({(number, leaf, index)})
            return self._at(call.operands[number], frame.parent, leaf, index)  # type: ignore[arg-type]
        if op in ("constant", "iota"):
            return _EMPTY
        if op == "tuple":
            for j, operand in enumerate(instr.operands):
                n = _leaf_count(operand.shape)
                if leaf < n:
                    return read(j, index, leaf)
                leaf -= n
            raise PointUnchecked(f"{instr.name} has no such leaf")
        if op == "get-tuple-element":
            shape = instr.operands[0].shape
            k = instr.tuple_index or 0
            if shape.tuple_shapes is None or k >= len(shape.tuple_shapes):
                raise PointUnchecked(f"{instr.name} reads no tuple element {k}")
            offset = sum(_leaf_count(s) for s in shape.tuple_shapes[:k])
            return read(0, index, offset + leaf)
        if op in ("fusion", "call"):
            comps = _called(instr)
            if len(comps) != 1 or comps[0].root is None:
                raise PointUnchecked(f"{instr.name}: no single called computation")
            return self._at(comps[0].root, self._child(frame, instr), leaf, index)
        if op in _PASS_THROUGH:
            return read(0, index, leaf)
        if op == "custom-call" and len(instr.operands) == 1 and instr.shape.is_array:
            target = custom_call_target(instr)
            if target in IDENTITY_CUSTOM_CALLS or target in ELEMENTWISE_CUSTOM_CALLS:
                return read(0, index, leaf)  # the same element of the one operand
        tuple_output = instr.shape.is_tuple and op not in ("reduce", "reduce-window")
        if tuple_output or any(o.shape.is_tuple for o in instr.operands):
            raise PointUnchecked(f"the point-wise oracle does not walk {op} of tuples")
        method = _OPS.get(op)
        if method is not None:
            return method(self, instr, frame, index, read)
        if op in _ELEMENTWISE and op != "bitcast-convert":
            return _elementwise(instr, index, read)
        raise PointUnchecked(f"the point-wise oracle does not interpret {op}")


def _called(instr: Instruction) -> list[Computation]:
    called = instr.called_computations
    for key in ("calls", "to_apply"):
        if instr.opcode in ("fusion", "call") and called.get(key):
            return list(called[key])
    return []


# ---------------------------------------------------------------------------
# Element semantics, op by op (each: the tags output element ``index`` reads)
# ---------------------------------------------------------------------------


def _bounded(o: PointOracle, count: int, instr: Instruction) -> None:
    """Refuse an element that combines more than the read cap before combining anything."""
    if count > o.read_cap:
        raise PointUnchecked(f"{instr.name}: one element combines {count} elements")


def _elementwise(instr: Instruction, index: Index, read: Read) -> frozenset[Tag]:
    dims = instr.shape.dims
    sets = []
    for j, operand in enumerate(instr.operands):
        if operand.shape.dims == dims:
            sets.append(read(j, index, 0))
        elif not operand.shape.dims:  # clamp and select admit scalars that broadcast
            sets.append(read(j, (), 0))
        else:
            raise PointUnchecked(f"{instr.name}: an operand of another shape")
    return _union(sets)


def _broadcast(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    return read(0, tuple(index[d] for d in instr.dimensions or ()))


def _reshape(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    source = instr.operands[0].shape.dims
    if prod(source) != prod(instr.shape.dims):
        raise PointUnchecked(f"{instr.name} changes the number of elements")
    linear = int(np.ravel_multi_index(index, instr.shape.dims)) if index else 0
    return read(0, tuple(int(i) for i in np.unravel_index(linear, source)) if source else ())


def _bitcast(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    # Same bytes: the element's position in the target's physical (major-to-minor) order is
    # the position of the source element in the source's physical order.
    source, target = instr.operands[0].shape, instr.shape
    if prod(source.dims) != prod(target.dims):
        raise PointUnchecked(f"{instr.name} changes the number of elements")
    if not target.dims:
        return read(0, (0,) * len(source.dims))
    t_order = _major_to_minor(target)
    linear = int(
        np.ravel_multi_index([index[d] for d in t_order], [target.dims[d] for d in t_order])
    )
    s_order = _major_to_minor(source)
    if not source.dims:
        return read(0, ())
    physical = np.unravel_index(linear, [source.dims[d] for d in s_order])
    at = [0] * len(source.dims)
    for k, d in enumerate(s_order):
        at[d] = int(physical[k])
    return read(0, tuple(at))


def _transpose(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    perm = instr.dimensions or ()
    at = [0] * len(perm)
    for k, d in enumerate(perm):
        at[d] = index[k]
    return read(0, tuple(at))


def _reverse(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    dims = instr.shape.dims
    flipped = set(instr.dimensions or ())
    return read(0, tuple(dims[d] - 1 - i if d in flipped else i for d, i in enumerate(index)))


def _slice(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    spec = instr.slice or ()
    return read(0, tuple(s.start + i * s.stride for s, i in zip(spec, index, strict=True)))


def _concatenate(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    axis = (instr.dimensions or (0,))[0]
    position = index[axis]
    for j, operand in enumerate(instr.operands):
        n = operand.shape.dims[axis]
        if position < n:
            return read(j, (*index[:axis], position, *index[axis + 1 :]))
        position -= n
    raise PointUnchecked(f"{instr.name}: index beyond the concatenated operands")


def _pad(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    source = instr.operands[0].shape.dims
    at = []
    for d, p in enumerate(instr.padding or ()):
        offset = index[d] - p.low
        step = p.interior + 1
        if offset < 0 or offset % step or offset // step >= source[d]:
            return read(1, ())  # padding lands here
        at.append(offset // step)
    return read(0, tuple(at))


def _starts(o: PointOracle, instr: Instruction, f: _Frame, first: int, limits: Sequence[int]):
    """Clamped start indices read from operands ``first..``, and the tags of those operands."""
    tensors = [o._index_tensor(instr, f, j) for j in range(first, len(instr.operands))]
    if len(tensors) == 1 and tensors[0].values.ndim == 1:
        values = [int(v) for v in tensors[0].values.reshape(-1)]
    else:
        values = [int(t.values.reshape(-1)[0]) for t in tensors]
    if len(values) != len(limits):
        raise PointUnchecked(f"{instr.name}: not one start index per dimension")
    starts = [min(max(v, 0), hi) for v, hi in zip(values, limits, strict=True)]
    return starts, tensors


def _all_of(read: Read, first: int, tensors: list[Tensor]) -> frozenset[Tag]:
    """Every element of the index operands ``first..``: each output element reads them all."""
    return _union(
        [
            read(first + k, tuple(int(i) for i in at))
            for k, t in enumerate(tensors)
            for at in np.ndindex(*t.shape)
        ]
    )


def _dynamic_slice(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    source = instr.operands[0].shape.dims
    sizes = instr.dynamic_slice_sizes or instr.shape.dims
    starts, tensors = _starts(o, instr, f, 1, [n - s for n, s in zip(source, sizes, strict=True)])
    at = tuple(s + i for s, i in zip(starts, index, strict=True))
    return read(0, at) | _all_of(read, 1, tensors)


def _dynamic_update_slice(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    source, update = instr.operands[0].shape.dims, instr.operands[1].shape.dims
    starts, tensors = _starts(o, instr, f, 2, [n - u for n, u in zip(source, update, strict=True)])
    inside = all(s <= i < s + u for s, i, u in zip(starts, index, update, strict=True))
    element = (
        read(1, tuple(i - s for i, s in zip(index, starts, strict=True)))
        if inside
        else read(0, index)
    )
    return element | _all_of(read, 2, tensors)


def _reduce(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    n = len(instr.operands) // 2
    source = instr.operands[0].shape.dims
    axes = tuple(instr.dimensions or ())
    kept = [d for d in range(len(source)) if d not in axes]
    if len(kept) != len(index):
        raise PointUnchecked(f"{instr.name}: output rank differs from the kept dimensions")
    sets = [read(n + k, ()) for k in range(n)]
    at = [0] * len(source)
    for d, i in zip(kept, index, strict=True):
        at[d] = i
    _bounded(o, prod(source[d] for d in axes) * n, instr)
    for combo in itertools.product(*(range(source[d]) for d in axes)):
        for d, i in zip(axes, combo, strict=True):
            at[d] = i
        point = tuple(at)
        sets.extend(read(k, point) for k in range(n))
    return _union(sets)


def _reduce_window(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    n = len(instr.operands) // 2
    source = instr.operands[0].shape.dims
    window = instr.window or ()
    if len(window) != len(source) or len(index) != len(source):
        raise PointUnchecked(f"{instr.name}: the window does not match the rank")
    covered = []
    for d, w in enumerate(window):
        positions = []
        for k in range(w.size):
            pos = index[d] * w.stride + k * w.window_dilation - w.pad_low
            if pos >= 0 and pos % w.base_dilation == 0 and pos // w.base_dilation < source[d]:
                positions.append(pos // w.base_dilation)
        covered.append(positions)
    sets = [read(n + k, ()) for k in range(n)]
    _bounded(o, prod(len(c) for c in covered) * n, instr)
    for point in itertools.product(*covered):
        sets.extend(read(k, point) for k in range(n))
    return _union(sets)


def _dot(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    if len(instr.operands) != 2:
        raise PointUnchecked(f"{instr.name}: a dot with scales")
    lhs, rhs = instr.operands[0].shape.dims, instr.operands[1].shape.dims
    dn = instr.dot_dimension_numbers
    lhs_free = [d for d in range(len(lhs)) if d not in dn.lhs_batch + dn.lhs_contracting]
    rhs_free = [d for d in range(len(rhs)) if d not in dn.rhs_batch + dn.rhs_contracting]
    li, ri = [0] * len(lhs), [0] * len(rhs)
    nb, nl = len(dn.lhs_batch), len(lhs_free)
    for k, (a, b) in enumerate(zip(dn.lhs_batch, dn.rhs_batch, strict=True)):
        li[a] = ri[b] = index[k]
    for k, a in enumerate(lhs_free):
        li[a] = index[nb + k]
    for k, b in enumerate(rhs_free):
        ri[b] = index[nb + nl + k]
    sets = []
    _bounded(o, 2 * prod(lhs[d] for d in dn.lhs_contracting), instr)
    for combo in itertools.product(*(range(lhs[d]) for d in dn.lhs_contracting)):
        for k, (a, b) in enumerate(zip(dn.lhs_contracting, dn.rhs_contracting, strict=True)):
            li[a] = ri[b] = combo[k]
        sets.append(read(0, tuple(li)))
        sets.append(read(1, tuple(ri)))
    return _union(sets)


def _gather(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    source = instr.operands[0].shape.dims
    indices = o._index_tensor(instr, f, 1)
    dn = instr.gather_dimension_numbers
    sizes = instr.gather_slice_sizes or ()
    batch_dims = [d for d in range(len(index)) if d not in dn.offset_dims]
    window_dims = [
        j
        for j in range(len(source))
        if j not in dn.collapsed_slice_dims and j not in dn.operand_batching_dims
    ]
    rank = indices.values.ndim + (dn.index_vector_dim == indices.values.ndim)
    index_batch_dims = [i for i in range(rank) if i != dn.index_vector_dim]
    batch = tuple(index[d] for d in batch_dims)
    vector_dim = dn.index_vector_dim
    if vector_dim == indices.values.ndim:
        where = [batch]
    else:
        where = [
            (*batch[:vector_dim], k, *batch[vector_dim:]) for k in range(indices.shape[vector_dim])
        ]
    vector = [int(indices.values[w]) for w in where]
    start = [0] * len(source)
    for k, j in enumerate(dn.start_index_map):
        start[j] = vector[k]
    for j, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True):
        start[j] = batch[index_batch_dims.index(i)]
    full = [min(max(s, 0), n - z) for s, n, z in zip(start, source, sizes, strict=True)]
    for j, d in zip(window_dims, sorted(dn.offset_dims), strict=True):
        full[j] += index[d]
    return read(0, tuple(full)) | _union([read(1, tuple(int(i) for i in w)) for w in where])


def _bitcast_convert(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    source = instr.operands[0].shape.dims
    out = instr.shape.dims
    if out == source:
        return read(0, index)
    if len(out) == len(source) + 1:
        return read(0, index[:-1])
    if len(out) + 1 == len(source):
        return _union([read(0, (*index, k)) for k in range(source[-1])])
    raise PointUnchecked(f"{instr.name}: an unexpected bitcast-convert")


def _convolution(o: PointOracle, instr: Instruction, f: _Frame, index: Index, read: Read):
    """Each output element reads its input window (real elements only: padding and base
    dilation holes multiply nothing) and, for each of those, the kernel element it meets."""
    dn = instr.convolution_dimension_numbers
    window = instr.window or ()
    if dn is None or len(instr.operands) != 2 or len(window) != len(dn.input_spatial):
        raise PointUnchecked(f"{instr.name}: a convolution the point-wise oracle cannot read")
    lhs, rhs = instr.operands[0].shape.dims, instr.operands[1].shape.dims
    batch_groups, feature_groups = instr.batch_group_count, instr.feature_group_count
    groups = batch_groups if batch_groups > 1 else feature_groups
    out_features = rhs[dn.kernel_output_feature] // groups
    g, fo = divmod(index[dn.output_feature], out_features)
    b = index[dn.output_batch]
    if batch_groups > 1:
        b += g * (lhs[dn.input_batch] // batch_groups)
    in_features = rhs[dn.kernel_input_feature]
    first_feature = 0 if batch_groups > 1 else g * in_features
    covered = []  # per spatial dimension: (input position, kernel position) pairs that are real
    for k, w in enumerate(window):
        pairs = []
        for t in range(w.size):
            pos = index[dn.output_spatial[k]] * w.stride + t * w.window_dilation - w.pad_low
            size = lhs[dn.input_spatial[k]]
            if pos >= 0 and pos % w.base_dilation == 0 and pos // w.base_dilation < size:
                pairs.append((pos // w.base_dilation, w.size - 1 - t if w.reversal else t))
        covered.append(pairs)
    li, ri = [0] * len(lhs), [0] * len(rhs)
    li[dn.input_batch] = b
    ri[dn.kernel_output_feature] = g * out_features + fo
    _bounded(o, 2 * in_features * prod(len(c) for c in covered), instr)
    sets = []
    for fi in range(in_features):
        li[dn.input_feature] = first_feature + fi
        ri[dn.kernel_input_feature] = fi
        for combo in itertools.product(*covered):
            for k, (x, t) in enumerate(combo):
                li[dn.input_spatial[k]] = x
                ri[dn.kernel_spatial[k]] = t
            sets.append(read(0, tuple(li)))
            sets.append(read(1, tuple(ri)))
    return _union(sets)


_OPS = {
    "broadcast": _broadcast,
    "reshape": _reshape,
    "bitcast": _bitcast,
    "transpose": _transpose,
    "reverse": _reverse,
    "slice": _slice,
    "concatenate": _concatenate,
    "pad": _pad,
    "dynamic-slice": _dynamic_slice,
    "dynamic-update-slice": _dynamic_update_slice,
    "reduce": _reduce,
    "reduce-window": _reduce_window,
    "dot": _dot,
    "gather": _gather,
    "bitcast-convert": _bitcast_convert,
    "convolution": _convolution,
}
