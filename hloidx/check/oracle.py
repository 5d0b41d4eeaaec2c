"""The provenance oracle: which operand elements each output element of an HLO op really reads.

The interpreter here evaluates an instruction (recursing into fusions, calls, conditionals and
whiles) on concrete data, carrying for every element a *value* and a *provenance*: the set of
operand elements it was computed from. It knows each op's semantics directly (elementwise ops
union their operands' sets at the same index, a reduce unions everything it combines, a
dynamic-slice reads where its clamped start indices say, ...). It never uses
:class:`~hloidx.maps.indexing_map.IndexingMap` or the op rules: it is the independent reference
that the indexing maps are tested against.

A provenance tag is ``(operand_number, tuple_leaf, index)``: ``tuple_leaf`` is 0 for array
operands and the position among the leaves for tuple-shaped ones (``while``).

Semantics that deliberately differ from index tracking (an analysis that over-approximates
these is sound, not exact):

* ``pad`` reads the padding value only where padding lands; ``dynamic-update-slice`` reads
  its base operand only outside the updated window; ``conditional`` runs one branch.
* ``gather``/``dynamic-slice``/``dynamic-update-slice`` start indices are clamped into range,
  so what is read depends on the index *values*; the data used is recorded in
  :class:`Reads` so that runtime variables can be fixed to the same values.
* A ``reduce``, ``reduce-window`` or ``sort`` output reads everything combined into it
  (including the init values), whatever the reducer computes; every index operand of a
  data-dependent op is read by every output element it positions.
* A ``while`` follows the values through its iterations (at most 1000), and its condition's
  reads are not added to the outputs.

Everything is bounded: a tensor of more than ``limit`` elements raises
:class:`~hloidx.errors.EnumerationLimitError`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EnumerationLimitError, HloidxError, UnsupportedOpError

if TYPE_CHECKING:
    from ..hlo.ir import Computation, HloModule, Instruction, Shape
    from ..hlo.op_rules import IndexingTable, RuntimeVar
    from ..maps.indexing_map import IndexingMap

DEFAULT_LIMIT = 200_000
MAX_WHILE_ITERATIONS = 1000

Tag = tuple[int, int, tuple[int, ...]]
_EMPTY: frozenset[Tag] = frozenset()


@dataclass
class Tensor:
    """An array's values and, per element, the operand elements it depends on."""

    values: np.ndarray  # int64 (integers and pred) or float64, logical shape
    provenance: np.ndarray  # object array of frozenset[Tag], same shape
    known: bool = True  # False when the values were not computed (only provenance is)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.values.shape)


Value = Tensor | tuple["Value", ...]


@dataclass
class Reads:
    """The result of interpreting one instruction.

    ``outputs[k]`` is output leaf ``k`` (one for an array-shaped instruction).
    ``operand_data[j]`` is the data given to operand ``j``; ``inner`` holds the value of every
    instruction evaluated inside called computations (last evaluation wins), so that runtime
    variables whose producer lives inside a fusion can be fixed to the value used here.
    """

    instruction: Instruction
    outputs: tuple[Tensor, ...]
    operand_data: tuple[Value, ...]
    inner: dict[Instruction, Value] = field(default_factory=dict)

    def at(self, output_id: int, index: Sequence[int]) -> frozenset[Tag]:
        return self.outputs[output_id].provenance[tuple(index)]

    def value_of(self, producer: Instruction) -> Value | None:
        """The value ``producer`` had in this evaluation, if it was evaluated or is an operand."""
        if producer in self.inner:
            return self.inner[producer]
        for j, operand in enumerate(self.instruction.operands):
            if operand is producer:
                return self.operand_data[j]
        return None


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


def _is_float(element_type: str) -> bool:
    return element_type.startswith(("f", "bf", "c"))


def _dtype(shape: Shape) -> Any:
    return np.float64 if _is_float(shape.element_type) else np.int64


def _empty_provenance(dims: Sequence[int]) -> np.ndarray:
    out = np.empty(tuple(dims), dtype=object)
    out.fill(_EMPTY)
    return out


def _leaf_tensor(values: np.ndarray, operand: int, leaf: int) -> Tensor:
    prov = np.empty(values.shape, dtype=object)
    for index in np.ndindex(*values.shape):
        prov[index] = frozenset({(operand, leaf, tuple(int(i) for i in index))})
    return Tensor(values, prov)


_union2 = np.frompyfunc(lambda a, b: a | b, 2, 1)


def _union(*arrays: np.ndarray) -> np.ndarray:
    out = arrays[0]
    for a in arrays[1:]:
        out = _union2(out, a)
    return np.asarray(out, dtype=object).reshape(np.broadcast_shapes(*(a.shape for a in arrays)))


def _union_all(items: Any) -> frozenset[Tag]:
    out: set[Tag] = set()
    for s in items:
        out |= s
    return frozenset(out)


def _check_size(instr: Instruction, dims: Sequence[int], limit: int) -> None:
    n = prod(dims)
    if n > limit:
        raise EnumerationLimitError(
            f"the oracle refuses {instr.name}: {n} elements is more than its limit of {limit}",
            instr.span,
        )


_LITERAL_TOKEN = re.compile(r"-?(?:inf|nan)|true|false|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _literal_values(instr: Instruction) -> np.ndarray | None:
    shape = instr.shape
    text = (instr.literal or "").strip()
    if "..." in text:
        return None
    tokens = _LITERAL_TOKEN.findall(text)
    n = prod(shape.dims)
    if len(tokens) != n:
        return None
    numbers = []
    for t in tokens:
        if t in ("true", "false"):
            numbers.append(1 if t == "true" else 0)
        elif _is_float(shape.element_type):
            numbers.append(float(t))
        else:
            numbers.append(int(float(t)) if any(c in t for c in ".eE") else int(t))
    return np.array(numbers, dtype=_dtype(shape)).reshape(shape.dims)


# ---------------------------------------------------------------------------
# Value semantics of elementwise ops (provenance is always the union)
# ---------------------------------------------------------------------------


def _int_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe) * np.sign(a) * np.sign(safe)
    return np.where(b == 0, -1, q)


def _int_remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, a, a - _int_divide(a, safe) * safe)


_UNARY = {
    "negate": np.negative,
    "abs": np.abs,
    "exponential": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "tanh": np.tanh,
    "sign": np.sign,
    "floor": np.floor,
    "ceil": np.ceil,
    "cosine": np.cos,
    "sine": np.sin,
    "tan": np.tan,
    "logistic": lambda x: 1 / (1 + np.exp(-x)),
    "exponential-minus-one": np.expm1,
    "log-plus-one": np.log1p,
    "round-nearest-even": np.round,
    "cbrt": np.cbrt,
    "round-nearest-afz": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    "is-finite": lambda x: np.isfinite(x).astype(np.int64),
    "copy": lambda x: x,
    "erf": None,
    "not": None,
    "popcnt": None,
    "clz": None,
    "real": lambda x: x,
    "imag": None,
    "reduce-precision": lambda x: x,
    "optimization-barrier": lambda x: x,
}
_BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "power": np.power,
    "atan2": np.arctan2,
    "and": None,
    "or": None,
    "xor": None,
    "divide": None,
    "remainder": None,
    "shift-left": None,
    "shift-right-logical": None,
    "shift-right-arithmetic": None,
    "compare": None,
    "complex": None,
}
_COMPARE = {
    "EQ": np.equal,
    "NE": np.not_equal,
    "LT": np.less,
    "LE": np.less_equal,
    "GT": np.greater,
    "GE": np.greater_equal,
}


def _elementwise_values(instr: Instruction, args: list[np.ndarray]) -> np.ndarray | None:
    op = instr.opcode
    is_int = not _is_float(instr.shape.element_type)
    with np.errstate(all="ignore"):
        if op == "convert":
            x = args[0]
            if is_int and x.dtype == np.float64:
                return np.trunc(np.nan_to_num(x)).astype(np.int64)
            return x.astype(_dtype(instr.shape))
        if op in _UNARY:
            if op == "not":
                return (
                    (args[0] == 0).astype(np.int64)
                    if instr.shape.element_type == "pred"
                    else ~args[0]
                )
            fn = _UNARY[op]
            return None if fn is None else np.asarray(fn(args[0])).astype(_dtype(instr.shape))
        if op == "select":
            return np.where(args[0] != 0, args[1], args[2])
        if op == "clamp":
            return np.minimum(np.maximum(args[1], args[0]), args[2])
        if op == "compare":
            fn = _COMPARE.get(instr.attributes.get("direction", "").strip())
            return None if fn is None else fn(args[0], args[1]).astype(np.int64)
        a, b = args[0], args[1] if len(args) > 1 else None
        if op == "divide":
            return _int_divide(a, b) if is_int else a / b
        if op == "remainder":
            return _int_remainder(a, b) if is_int else np.fmod(a, b)
        if is_int and op in ("and", "or", "xor"):
            return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](a, b)
        fn = _BINARY.get(op)
        if fn is None:
            return None
        out = fn(a, b)
        return out.astype(np.int64) if is_int else out


_ELEMENTWISE = (
    set(_UNARY)
    | set(_BINARY)
    | {"convert", "select", "clamp", "map", "bitcast-convert", "stochastic-convert"}
)


# ---------------------------------------------------------------------------
# Layout-aware bitcast
# ---------------------------------------------------------------------------


def _major_to_minor(shape: Shape) -> tuple[int, ...]:
    if shape.layout is None or len(shape.layout.minor_to_major) != len(shape.dims):
        return tuple(range(len(shape.dims)))
    return tuple(reversed(shape.layout.minor_to_major))


def _bitcast(array: np.ndarray, source: Shape, target: Shape) -> np.ndarray:
    """Same bytes, new shape: flatten in the source's physical order, refill in the target's."""
    physical = np.transpose(array, _major_to_minor(source)).reshape(-1)
    order = _major_to_minor(target)
    refilled = physical.reshape([target.dims[d] for d in order])
    return np.transpose(refilled, np.argsort(order))


# ---------------------------------------------------------------------------
# The interpreter
# ---------------------------------------------------------------------------


def _post_order(root: Instruction) -> list[Instruction]:
    order: list[Instruction] = []
    seen: set[int] = set()
    stack: list[tuple[Instruction, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for operand in reversed(node.operands):
            if id(operand) not in seen:
                stack.append((operand, False))
    return order


class _Interpreter:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.inner: dict[Instruction, Value] = {}

    # -- computations --------------------------------------------------------
    def run(self, comp: Computation, args: Sequence[Value]) -> Value:
        root = comp.root
        if root is None:
            raise UnsupportedOpError(f"the oracle cannot run the empty computation {comp.name}")
        env: dict[int, Value] = {}
        for instr in _post_order(root):
            if instr.opcode == "parameter":
                number = instr.parameter_number or 0
                if number >= len(args):
                    raise UnsupportedOpError(
                        f"{comp.name} reads parameter {number} but was given {len(args)}",
                        instr.span,
                    )
                value = args[number]
            else:
                value = self.evaluate(instr, [env[id(o)] for o in instr.operands])
            env[id(instr)] = value
            self.inner[instr] = value
        return env[id(root)]

    def _body(self, instr: Instruction, *keys: str) -> Computation:
        called = instr.called_computations
        for key in keys:
            if called.get(key):
                return called[key][0]
        raise UnsupportedOpError(
            f"the oracle found no called computation for {instr.name}", instr.span
        )

    # -- one instruction -------------------------------------------------------
    def evaluate(self, instr: Instruction, ops: list[Value]) -> Value:
        op = instr.opcode
        if instr.shape.is_array:
            _check_size(instr, instr.shape.dims, self.limit)
        if op == "tuple":
            return tuple(ops)
        if op == "get-tuple-element":
            return ops[0][instr.tuple_index or 0]  # type: ignore[index]
        if op in ("fusion", "call", "async-start"):
            return self.run(self._body(instr, "calls", "to_apply"), ops)
        if op == "conditional":
            return self._conditional(instr, ops)
        if op == "while":
            return self._while(instr, ops)
        arrays = [o for o in ops if isinstance(o, Tensor)]
        if len(arrays) != len(ops):
            raise UnsupportedOpError(f"the oracle does not interpret {op} of tuples", instr.span)
        method = getattr(self, "_" + op.replace("-", "_"), None)
        if method is not None:
            return method(instr, arrays)
        if op in _ELEMENTWISE:
            return self._elementwise(instr, arrays)
        raise UnsupportedOpError(f"the oracle does not interpret {op}", instr.span)

    def _elementwise(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        dims = instr.shape.dims
        # clamp and select admit scalar operands that broadcast
        values = [np.broadcast_to(o.values, dims) for o in ops]
        prov = _union(*[np.broadcast_to(o.provenance, dims) for o in ops])
        known = all(o.known for o in ops) and instr.opcode not in ("map", "bitcast-convert")
        computed = _elementwise_values(instr, values) if known else None
        if computed is None:
            return Tensor(np.zeros(dims, dtype=_dtype(instr.shape)), prov, known=False)
        return Tensor(np.asarray(computed).reshape(dims), prov)

    # -- leaves ---------------------------------------------------------------
    def _constant(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        values = _literal_values(instr)
        dims = instr.shape.dims
        if values is None:
            return Tensor(
                np.zeros(dims, dtype=_dtype(instr.shape)), _empty_provenance(dims), known=False
            )
        return Tensor(values, _empty_provenance(dims))

    def _iota(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        dims = instr.shape.dims
        axis = instr.iota_dimension or 0
        values = np.indices(dims, dtype=np.int64)[axis] if dims else np.zeros((), np.int64)
        return Tensor(values.astype(_dtype(instr.shape)), _empty_provenance(dims))

    # -- data movement --------------------------------------------------------
    def _move(self, ops: Tensor, fn: Any) -> Tensor:
        return Tensor(
            np.asarray(fn(ops.values)).copy(),
            np.asarray(fn(ops.provenance), dtype=object).copy(),
            ops.known,
        )

    def _broadcast(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        dims = instr.shape.dims
        mapping = list(instr.dimensions or ())
        order = sorted(range(len(mapping)), key=lambda i: mapping[i])
        expanded = [1] * len(dims)
        for i in order:
            expanded[mapping[i]] = ops[0].shape[i]

        def fn(a: np.ndarray) -> np.ndarray:
            return np.broadcast_to(np.transpose(a, order).reshape(expanded), dims).copy()

        return self._move(ops[0], fn)

    def _reshape(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        return self._move(ops[0], lambda a: a.reshape(instr.shape.dims))

    def _bitcast(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        source = instr.operands[0].shape
        return self._move(ops[0], lambda a: _bitcast(a, source, instr.shape))

    def _transpose(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        return self._move(ops[0], lambda a: np.transpose(a, instr.dimensions))

    def _copy(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        return self._move(ops[0], lambda a: a)

    def _reverse(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        return self._move(ops[0], lambda a: np.flip(a, instr.dimensions or ()))

    def _slice(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        window = tuple(slice(s.start, s.limit, s.stride) for s in instr.slice or ())
        return self._move(ops[0], lambda a: a[window])

    def _concatenate(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        axis = (instr.dimensions or (0,))[0]
        return Tensor(
            np.concatenate([o.values for o in ops], axis),
            np.concatenate([o.provenance for o in ops], axis),
            all(o.known for o in ops),
        )

    def _pad(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        operand, pad_value = ops
        dims = instr.shape.dims
        values = np.full(dims, pad_value.values[()], dtype=operand.values.dtype)
        prov = np.empty(dims, dtype=object)
        prov.fill(pad_value.provenance[()])
        source: list[np.ndarray] = []
        target: list[np.ndarray] = []
        for d, p in enumerate(instr.padding or ()):
            positions = p.low + np.arange(operand.shape[d]) * (p.interior + 1)
            inside = (positions >= 0) & (positions < dims[d])
            source.append(np.nonzero(inside)[0])
            target.append(positions[inside])
        values[np.ix_(*target)] = operand.values[np.ix_(*source)]
        prov[np.ix_(*target)] = operand.provenance[np.ix_(*source)]
        return Tensor(values, prov, operand.known and pad_value.known)

    # -- data-dependent movement ------------------------------------------------
    @staticmethod
    def _index_values(instr: Instruction, tensor: Tensor) -> np.ndarray:
        if not tensor.known:
            raise UnsupportedOpError(
                f"the oracle cannot evaluate {instr.name}: its indices come from values it does "
                "not compute",
                instr.span,
            )
        return tensor.values.astype(np.int64)

    def _starts(
        self, instr: Instruction, scalars: list[Tensor], limits: Sequence[int]
    ) -> list[int]:
        starts = []
        for scalar, hi in zip(scalars, limits, strict=True):
            value = int(self._index_values(instr, scalar).reshape(-1)[0])
            starts.append(min(max(value, 0), hi))
        return starts

    def _dynamic_slice(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        operand, scalars = ops[0], ops[1:]
        sizes = instr.dynamic_slice_sizes or instr.shape.dims
        starts = self._starts(
            instr, scalars, [n - s for n, s in zip(operand.shape, sizes, strict=True)]
        )
        window = tuple(slice(s, s + n) for s, n in zip(starts, sizes, strict=True))
        index_reads = _union_all(s.provenance[()] for s in scalars)
        prov = _union2(operand.provenance[window], np.full((), index_reads, dtype=object))
        return Tensor(
            operand.values[window].copy(),
            np.asarray(prov, dtype=object).reshape(instr.shape.dims),
            operand.known,
        )

    def _dynamic_update_slice(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        operand, update, scalars = ops[0], ops[1], ops[2:]
        starts = self._starts(
            instr, scalars, [n - u for n, u in zip(operand.shape, update.shape, strict=True)]
        )
        window = tuple(slice(s, s + n) for s, n in zip(starts, update.shape, strict=True))
        values = operand.values.copy()
        values[window] = update.values
        prov = operand.provenance.copy()
        prov[window] = update.provenance
        index_reads = np.full((), _union_all(s.provenance[()] for s in scalars), dtype=object)
        prov = np.asarray(_union2(prov, index_reads), dtype=object).reshape(operand.shape)
        return Tensor(values, prov, operand.known and update.known)

    def _gather(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        operand, indices = ops
        dn = instr.gather_dimension_numbers
        if dn.operand_batching_dims:
            raise UnsupportedOpError(
                "the oracle does not interpret gather with batching dims", instr.span
            )
        sizes = instr.gather_slice_sizes or ()
        index_values = self._index_values(instr, indices)
        index_prov = indices.provenance
        if dn.index_vector_dim == index_values.ndim:
            index_values = index_values[..., None]
            index_prov = index_prov[..., None]
        out_dims = instr.shape.dims
        batch_dims = [d for d in range(len(out_dims)) if d not in dn.offset_dims]
        window_dims = [d for d in range(operand.values.ndim) if d not in dn.collapsed_slice_dims]
        values = np.zeros(out_dims, dtype=operand.values.dtype)
        prov = np.empty(out_dims, dtype=object)
        ivd = dn.index_vector_dim
        for out in np.ndindex(*out_dims):
            batch = [out[d] for d in batch_dims]
            lead, tail = tuple(batch[:ivd]), tuple(batch[ivd:])
            start = [0] * operand.values.ndim
            reads: set[Tag] = set()
            for k, d in enumerate(dn.start_index_map):
                start[d] = int(index_values[(*lead, k, *tail)])
                reads |= index_prov[(*lead, k, *tail)]
            full = [min(max(s, 0), operand.shape[d] - sizes[d]) for d, s in enumerate(start)]
            for d, out_d in zip(window_dims, dn.offset_dims, strict=True):
                full[d] += out[out_d]
            values[out] = operand.values[tuple(full)]
            prov[out] = frozenset(reads) | operand.provenance[tuple(full)]
        return Tensor(values, prov, operand.known)

    # -- combining ops ------------------------------------------------------------
    def _reduce(self, instr: Instruction, ops: list[Tensor]) -> Value:
        n = len(ops) // 2
        inputs, inits = ops[:n], ops[n:]
        axes = tuple(instr.dimensions or ())
        kept = [d for d in range(inputs[0].values.ndim) if d not in axes]
        out_dims = tuple(inputs[0].shape[d] for d in kept)
        init_reads = _union_all(i.provenance[()] for i in inits)
        moved = [
            np.transpose(x.provenance, kept + list(axes)).reshape(*out_dims, -1) for x in inputs
        ]
        prov = np.empty(out_dims, dtype=object)
        for out in np.ndindex(*out_dims):
            prov[out] = _union_all(itertools.chain((init_reads,), *(m[out] for m in moved)))
        outputs = []
        reducer = self._simple_reducer(instr)
        for k in range(n):
            shape = instr.shape.tuple_shapes[k] if instr.shape.is_tuple else instr.shape
            if reducer is not None and n == 1 and inputs[0].known and inits[0].known:
                values = reducer.reduce(
                    np.concatenate(
                        [
                            np.transpose(inputs[0].values, kept + list(axes)).reshape(
                                *out_dims, -1
                            ),
                            np.broadcast_to(inits[0].values, (*out_dims, 1)),
                        ],
                        axis=-1,
                    ),
                    axis=-1,
                )
                outputs.append(Tensor(np.asarray(values).astype(_dtype(shape)), prov))
            else:
                outputs.append(
                    Tensor(np.zeros(out_dims, dtype=_dtype(shape)), prov.copy(), known=False)
                )
        return tuple(outputs) if instr.shape.is_tuple else outputs[0]

    def _simple_reducer(self, instr: Instruction) -> Any:
        comps = instr.called_computations.get("to_apply")
        root = comps[0].root if comps else None
        if root is None or root.opcode not in ("add", "maximum", "minimum", "multiply"):
            return None
        if any(o.opcode != "parameter" for o in root.operands):
            return None
        return {
            "add": np.add,
            "maximum": np.maximum,
            "minimum": np.minimum,
            "multiply": np.multiply,
        }[root.opcode]

    def _reduce_window(self, instr: Instruction, ops: list[Tensor]) -> Value:
        n = len(ops) // 2
        inputs, inits = ops[:n], ops[n:]
        window = instr.window or ()
        in_dims = inputs[0].shape
        out_dims = instr.shape.tuple_shapes[0].dims if instr.shape.is_tuple else instr.shape.dims
        init_reads = _union_all(i.provenance[()] for i in inits)
        # per dimension: for each output position, the input positions its window covers
        covered: list[list[list[int]]] = []
        for d, w in enumerate(window):
            rows = []
            for o in range(out_dims[d]):
                positions = []
                for k in range(w.size):
                    pos = o * w.stride + k * w.window_dilation - w.pad_low
                    if (
                        pos >= 0
                        and pos % w.base_dilation == 0
                        and pos // w.base_dilation < in_dims[d]
                    ):
                        positions.append(pos // w.base_dilation)
                rows.append(positions)
            covered.append(rows)
        prov = np.empty(out_dims, dtype=object)
        for out in np.ndindex(*out_dims):
            reads = set(init_reads)
            for source in itertools.product(*(covered[d][o] for d, o in enumerate(out))):
                for x in inputs:
                    reads |= x.provenance[source]
            prov[out] = frozenset(reads)
        outputs = [
            Tensor(np.zeros(out_dims, dtype=_dtype(s)), prov.copy(), known=False)
            for s in (instr.shape.tuple_shapes if instr.shape.is_tuple else (instr.shape,))
        ]
        return tuple(outputs) if instr.shape.is_tuple else outputs[0]

    def _dot(self, instr: Instruction, ops: list[Tensor]) -> Tensor:
        lhs, rhs = ops[0], ops[1]
        dn = instr.dot_dimension_numbers
        lhs_free = [d for d in range(lhs.values.ndim) if d not in dn.lhs_batch + dn.lhs_contracting]
        rhs_free = [d for d in range(rhs.values.ndim) if d not in dn.rhs_batch + dn.rhs_contracting]
        contracting = [range(lhs.shape[d]) for d in dn.lhs_contracting]
        out_dims = instr.shape.dims
        prov = np.empty(out_dims, dtype=object)
        nb, nl = len(dn.lhs_batch), len(lhs_free)
        for out in np.ndindex(*out_dims):
            li = [0] * lhs.values.ndim
            ri = [0] * rhs.values.ndim
            for k, (a, b) in enumerate(zip(dn.lhs_batch, dn.rhs_batch, strict=True)):
                li[a] = ri[b] = out[k]
            for k, a in enumerate(lhs_free):
                li[a] = out[nb + k]
            for k, b in enumerate(rhs_free):
                ri[b] = out[nb + nl + k]
            reads: set[Tag] = set()
            for c in itertools.product(*contracting):
                for k, (a, b) in enumerate(
                    zip(dn.lhs_contracting, dn.rhs_contracting, strict=True)
                ):
                    li[a] = ri[b] = c[k]
                reads |= lhs.provenance[tuple(li)] | rhs.provenance[tuple(ri)]
            for extra in ops[2:]:  # scaled dot: scales read like their operands (over-approximated)
                reads |= _union_all(extra.provenance.reshape(-1))
            prov[out] = frozenset(reads)
        return Tensor(np.zeros(out_dims, dtype=_dtype(instr.shape)), prov, known=False)

    def _sort(self, instr: Instruction, ops: list[Tensor]) -> Value:
        axis = (instr.dimensions or (0,))[0]
        prov = ops[0].provenance
        for o in ops[1:]:
            prov = _union(prov, o.provenance)
        along = (
            np.apply_along_axis(
                lambda row: np.full(len(row), _union_all(row), dtype=object), axis, prov
            )
            if prov.size
            else prov
        )
        outputs = [
            Tensor(
                np.zeros(o.shape, dtype=o.values.dtype),
                np.asarray(along, dtype=object).copy(),
                known=False,
            )
            for o in ops
        ]
        return tuple(outputs) if instr.shape.is_tuple else outputs[0]

    # -- control flow ----------------------------------------------------------------
    def _conditional(self, instr: Instruction, ops: list[Value]) -> Value:
        selector = ops[0]
        if not isinstance(selector, Tensor) or not selector.known:
            raise UnsupportedOpError(
                f"the oracle cannot choose a branch of {instr.name}", instr.span
            )
        called = instr.called_computations
        branches = called.get("branch_computations") or (
            called.get("true_computation", []) + called.get("false_computation", [])
        )
        value = int(selector.values.reshape(-1)[0])
        if "branch_computations" in called:
            k = value if 0 <= value < len(branches) else len(branches) - 1
        else:
            k = 0 if value else 1
        result = self.run(branches[k], [ops[k + 1]])
        return _add_reads(result, selector.provenance[()])

    def _while(self, instr: Instruction, ops: list[Value]) -> Value:
        condition = self._body(instr, "condition")
        body = self._body(instr, "body")
        state = ops[0]
        for _ in range(MAX_WHILE_ITERATIONS):
            predicate = self.run(condition, [state])
            if not isinstance(predicate, Tensor) or not predicate.known:
                raise UnsupportedOpError(
                    f"the oracle cannot decide the condition of {instr.name}", instr.span
                )
            if not int(predicate.values.reshape(-1)[0]):
                return state
            state = self.run(body, [state])
        raise UnsupportedOpError(
            f"the oracle stopped {instr.name} after {MAX_WHILE_ITERATIONS} iterations", instr.span
        )


def _add_reads(value: Value, reads: frozenset[Tag]) -> Value:
    if isinstance(value, tuple):
        return tuple(_add_reads(v, reads) for v in value)
    extra = np.full((), reads, dtype=object)
    prov = np.asarray(_union2(value.provenance, extra), dtype=object).reshape(value.shape)
    return Tensor(value.values, prov, value.known)


# ---------------------------------------------------------------------------
# Operand data
# ---------------------------------------------------------------------------


def _constant_cone(instr: Instruction) -> bool:
    """Whether ``instr`` depends on no parameter (so it can be evaluated for its real value)."""
    return all(
        i.opcode != "parameter" and not i.called_computations.get("body")
        for i in _post_order(instr)
    )


def _default_data(
    operand: Instruction, shape: Shape, rng: np.random.Generator, index_high: int, limit: int
) -> np.ndarray:
    dims = shape.dims
    if shape.element_type == "pred":
        return rng.integers(0, 2, size=dims).astype(np.int64)
    if _is_float(shape.element_type):
        return np.arange(prod(dims), dtype=np.float64).reshape(dims)  # index-coded, all distinct
    return rng.integers(-1, index_high + 1, size=dims).astype(np.int64)


def _operand_data(
    instr: Instruction, given: Mapping[int, Any] | None, seed: int, limit: int
) -> tuple[Value, ...]:
    rng = np.random.default_rng(seed)
    shapes = [s for o in instr.operands for s in o.shape.leaves()] + instr.shape.leaves()
    index_high = max((max(s.dims) for s in shapes if s.is_array and s.dims), default=1)
    out: list[Value] = []
    for j, operand in enumerate(instr.operands):
        leaves = operand.shape.leaves()
        for leaf in leaves:
            _check_size(operand, leaf.dims, limit)
        provided = given.get(j) if given else None
        if provided is None and operand.shape.is_array and _constant_cone(operand):
            try:
                real = _Interpreter(limit).run_instruction(operand)
            except HloidxError:
                real = None
            if isinstance(real, Tensor) and real.known:
                provided = real.values
        arrays = []
        for k, leaf in enumerate(leaves):
            data = provided[k] if isinstance(provided, (list, tuple)) else provided
            if data is None:
                data = _default_data(operand, leaf, rng, index_high, limit)
            arrays.append(
                _leaf_tensor(np.asarray(data, dtype=_dtype(leaf)).reshape(leaf.dims), j, k)
            )
        out.append(_regroup(operand.shape, iter(arrays)) if operand.shape.is_tuple else arrays[0])
    return tuple(out)


def _regroup(shape: Shape, leaves: Any) -> Value:
    if shape.tuple_shapes is None:
        return next(leaves)
    return tuple(_regroup(s, leaves) for s in shape.tuple_shapes)


def _run_instruction(self: _Interpreter, instr: Instruction) -> Value:
    """Evaluate a parameter-free instruction with its real operands (constants, iotas, ...)."""
    env: dict[int, Value] = {}
    for node in _post_order(instr):
        env[id(node)] = self.evaluate(node, [env[id(o)] for o in node.operands])
    return env[id(instr)]


_Interpreter.run_instruction = _run_instruction  # type: ignore[attr-defined]


def _flatten(value: Value) -> list[Tensor]:
    if isinstance(value, tuple):
        return [t for v in value for t in _flatten(v)]
    return [value]


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def _resolve(where: Any, instruction: Instruction | str | None) -> Instruction:
    from ..hlo.ir import Computation, HloModule, Instruction

    if isinstance(where, Instruction):
        return where
    if isinstance(instruction, Instruction):
        return instruction
    if isinstance(where, HloModule):
        if instruction is None:
            if where.entry is None or where.entry.root is None:
                raise HloidxError("the module has no entry root to interpret")
            return where.entry.root
        for instr in where.instructions():
            if instr.name == instruction:
                return instr
    if isinstance(where, Computation):
        if instruction is None and where.root is not None:
            return where.root
        if instruction in where.by_name:
            return where.by_name[instruction]
    raise HloidxError(f"no instruction named {instruction}")


def reads(
    where: HloModule | Computation | Instruction,
    instruction: Instruction | str | None = None,
    *,
    operand_values: Mapping[int, Any] | None = None,
    seed: int = 0,
    limit: int = DEFAULT_LIMIT,
) -> Reads:
    """Interpret ``instruction`` (by object or name; default: the entry root) on concrete data.

    Its operands become leaves tagged ``(operand_number, tuple_leaf, index)``. Operand data:
    ``operand_values[j]`` when given (an array, or a list of arrays for a tuple operand);
    else the operand's real value when it depends on no parameter (constants, iotas); else
    seeded random integers in ``[-1, largest dimension]`` (exercising index clamping),
    index-coded floats, or random predicates.
    """
    instr = _resolve(where, instruction)
    data = _operand_data(instr, operand_values, seed, limit)
    interpreter = _Interpreter(limit)
    result = interpreter.evaluate(instr, list(data))
    return Reads(instr, tuple(_flatten(result)), data, interpreter.inner)


def oracle_relation(
    instr: Instruction,
    operand_index: int,
    output_id: int = 0,
    runtime_values: Mapping[int, Any] | None = None,
    *,
    operand_leaf: int | None = None,
    seed: int = 0,
    limit: int = DEFAULT_LIMIT,
    evaluation: Reads | None = None,
) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """``{(output index, operand index)}``: what output ``output_id`` reads of one operand.

    ``runtime_values`` is the operand data (see :func:`reads`); pass ``evaluation`` to reuse
    an interpretation. For a tuple-shaped operand, ``operand_leaf`` selects one leaf.
    """
    if evaluation is None:
        evaluation = reads(instr, operand_values=runtime_values, seed=seed, limit=limit)
    out: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    prov = evaluation.outputs[output_id].provenance
    for index in np.ndindex(*prov.shape):
        for operand, leaf, source in prov[index]:
            if operand == operand_index and (operand_leaf is None or leaf == operand_leaf):
                out.add((tuple(int(i) for i in index), source))
    return out


# ---------------------------------------------------------------------------
# Comparing the analysis with the oracle
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    """One disagreement (or one comparison that could not be made).

    ``kind``: ``"missing"`` — the oracle reads elements the maps do not claim (the maps are
    unsound); ``"extra"`` — an *exact* map claims elements the oracle does not read;
    ``"unchecked"`` — no comparison was possible (undefined map, runtime variable whose value
    is unknown, enumeration limit), never a failure by itself. ``examples`` are up to five
    ``(output index, operand index)`` pairs of the difference.
    """

    instruction: str
    output_id: int
    operand_index: int
    kind: str
    message: str
    examples: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()

    @property
    def is_error(self) -> bool:
        return self.kind in ("missing", "extra")

    def __str__(self) -> str:
        where = f"{self.instruction} output {self.output_id} operand {self.operand_index}"
        more = (
            "; e.g. " + ", ".join(f"{o} -> {i}" for o, i in self.examples) if self.examples else ""
        )
        return f"{where}: {self.kind}: {self.message}{more}"


class _Unchecked(Exception):
    pass


def _runtime_value_array(rv: RuntimeVar, dims: np.ndarray, evaluation: Reads) -> np.ndarray:
    """The value of one runtime variable at each domain point (columns of ``dims``)."""
    from ..maps.expr import evaluate

    value = evaluation.value_of(rv.producer)
    if value is None or isinstance(value, tuple):
        raise _Unchecked(f"the value of {rv.producer.name} is not known to the oracle")
    if not value.known:
        raise _Unchecked(f"the oracle did not compute the values of {rv.producer.name}")
    m = rv.map
    if any(v.kind != 0 for r in m.results for v in _vars(r)):
        raise _Unchecked(
            f"the map of runtime variable {rv.producer.name} is not a function of the dims"
        )
    n = dims.shape[0]
    columns = [dims[:, i] for i in range(dims.shape[1])]
    index = [
        np.broadcast_to(np.asarray(evaluate(r, lambda v: columns[v.index]), dtype=np.int64), (n,))
        for r in m.results
    ]
    if not index:
        return np.full(
            n, int(value.values.reshape(-1)[0]) if value.values.size else 0, dtype=np.int64
        )
    return value.values[tuple(index)].astype(np.int64)


def _vars(expr: Any) -> set[Any]:
    from ..maps.expr import variables

    return variables(expr)


def map_relation(
    indexing_map: IndexingMap,
    runtime_vars: Sequence[RuntimeVar],
    evaluation: Reads,
    limit: int = 1_000_000,
) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The relation of ``indexing_map`` with its runtime variables fixed to ``evaluation``'s values.

    A runtime variable's value is clamped into its feasible range, as the data-dependent ops
    (dynamic-slice, dynamic-update-slice, gather) clamp their start indices.
    """
    from ..maps.domain import box_points, relation
    from ..maps.expr import Var, VarKind, const
    from ..maps.indexing_map import IndexingMap

    if not indexing_map.rt_vars:
        return relation(indexing_map, limit)
    if len(runtime_vars) != len(indexing_map.rt_vars):
        raise _Unchecked("the map's runtime variables are not described")
    dim_list = [Var(VarKind.DIM, i) for i in range(len(indexing_map.dim_vars))]
    columns = box_points(indexing_map, dim_list, limit)
    dims = (
        np.stack([columns[v] for v in dim_list], axis=1)
        if dim_list
        else np.zeros((1, 0), dtype=np.int64)
    )
    n = dims.shape[0]
    values = []
    for rv, var in zip(runtime_vars, indexing_map.rt_vars, strict=True):
        raw = _runtime_value_array(rv, dims, evaluation)
        values.append(np.clip(raw, var.bounds.lower, var.bounds.upper) if n else raw)
    table = np.stack(values, axis=1) if values else np.zeros((n, 0), dtype=np.int64)
    out: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    groups: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for point, rts in zip(dims.tolist(), table.tolist(), strict=True):
        groups.setdefault(tuple(rts), set()).add(tuple(point))
    for rts, points in groups.items():
        fixed = indexing_map.substitute(
            {Var(VarKind.RUNTIME, i): const(v) for i, v in enumerate(rts)}
        )
        fixed = IndexingMap(fixed.results, fixed.dim_vars, fixed.range_vars, (), fixed.constraints)
        out |= {pair for pair in relation(fixed, limit) if pair[0] in points}
    return out


def _claims(
    instr: Instruction,
) -> dict[tuple[int, int], tuple[list[tuple[IndexingMap, tuple[RuntimeVar, ...]]], bool]]:
    """``(output_id, operand) -> ([(map, runtime vars)], exact)`` from the analysis."""
    from ..hlo import fusion

    table = fusion.output_to_input(instr)
    out = {}
    for out_id, row in enumerate(table):
        for j, cell in enumerate(row):
            per_map = getattr(cell, "per_map_runtime_vars", None)
            pairs = [
                (m, per_map[k] if per_map is not None else cell.runtime_vars)
                for k, m in enumerate(cell.maps)
            ]
            out[(out_id, j)] = (pairs, cell.exact)
    return out


def check_maps(
    instr: Instruction,
    table: IndexingTable | None = None,
    *,
    evaluation: Reads | None = None,
    seed: int = 0,
    limit: int = DEFAULT_LIMIT,
) -> list[Mismatch]:
    """Compare output-to-input maps (``table``, default: the analysis's) with the oracle.

    For each output leaf and operand, the union of the cell's maps, enumerated with runtime
    variables fixed to the oracle's values, must equal the oracle's reads when the cell is
    ``exact`` and contain them otherwise. A tuple-shaped operand (``while``) is compared
    leaf by leaf with the output leaf of the same number.
    """
    if evaluation is None:
        evaluation = reads(instr, seed=seed, limit=limit)
    if table is None:
        claims = _claims(instr)
    else:
        claims = {
            (o, j): (
                [
                    (
                        m,
                        getattr(c, "per_map_runtime_vars", None)[k]
                        if getattr(c, "per_map_runtime_vars", None) is not None
                        else c.runtime_vars,
                    )
                    for k, m in enumerate(c.maps)
                ],
                c.exact,
            )
            for o, row in enumerate(table)
            for j, c in enumerate(row)
        }
    mismatches: list[Mismatch] = []
    for (out_id, j), (pairs, exact) in sorted(claims.items()):
        if out_id >= len(evaluation.outputs) or j >= len(instr.operands):
            continue
        leaf = out_id if instr.operands[j].shape.is_tuple else None
        actual = oracle_relation(instr, j, out_id, operand_leaf=leaf, evaluation=evaluation)
        try:
            claimed: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
            for m, rts in pairs:
                if m.is_undefined:
                    raise _Unchecked("unknown indexing")
                if m.is_known_empty:
                    continue
                claimed |= map_relation(m, rts, evaluation)
        except _Unchecked as why:
            mismatches.append(Mismatch(instr.name, out_id, j, "unchecked", str(why)))
            continue
        except HloidxError as error:
            mismatches.append(Mismatch(instr.name, out_id, j, "unchecked", error.message))
            continue
        missing = actual - claimed
        if missing:
            mismatches.append(
                Mismatch(
                    instr.name,
                    out_id,
                    j,
                    "missing",
                    f"{len(missing)} read(s) not covered by the maps",
                    tuple(sorted(missing)[:5]),
                )
            )
        extra = claimed - actual
        if exact and extra:
            mismatches.append(
                Mismatch(
                    instr.name,
                    out_id,
                    j,
                    "extra",
                    f"exact maps claim {len(extra)} read(s) the op does not make",
                    tuple(sorted(extra)[:5]),
                )
            )
    return mismatches


def check_instruction(
    instr: Instruction,
    *,
    seed: int = 0,
    limit: int = DEFAULT_LIMIT,
    operand_values: Mapping[int, Any] | None = None,
) -> list[Mismatch]:
    """Check one instruction's output-to-input maps against the oracle. Stable API.

    The maps are hloidx's analysis (op rules, or composition for fusion/call/conditional/
    while). The instruction is interpreted once on data chosen as :func:`reads` does
    (``seed``, ``operand_values``); every runtime variable is fixed to the value its producer
    had there, clamped into its feasible range. Per output and operand, the union of the
    maps' relations must equal the oracle's reads when the analysis says ``exact``, and
    contain them otherwise. Returns the mismatches (empty: agreement); ``Mismatch.is_error``
    separates failures from ``"unchecked"`` notes. An instruction the oracle cannot
    interpret (unsupported op, a tensor beyond ``limit`` elements) gives a single
    ``"unchecked"`` entry with ``output_id`` and ``operand_index`` -1, never an exception.
    """
    try:
        evaluation = reads(instr, operand_values=operand_values, seed=seed, limit=limit)
        return check_maps(instr, evaluation=evaluation, seed=seed, limit=limit)
    except HloidxError as error:
        return [Mismatch(instr.name, -1, -1, "unchecked", error.message)]


__all__ = [
    "DEFAULT_LIMIT",
    "Mismatch",
    "Reads",
    "Tensor",
    "check_instruction",
    "check_maps",
    "map_relation",
    "oracle_relation",
    "reads",
]
