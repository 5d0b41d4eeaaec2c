"""The oracle's data model: tensors carrying values and, per element, the set of operand elements
they were computed from; HLO's elementwise value semantics (integer division, comparisons,
bitcasts) on NumPy arrays. Knows nothing of indexing maps."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EnumerationLimitError

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape


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
    "cos": np.cos,
    "sine": np.sin,
    "sin": np.sin,
    "exp": np.exp,
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
    "count-leading-zeros": None,
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
                    else (~args[0] if args[0].dtype.kind in "iu" else None)
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

#: custom-calls that return their one operand unchanged (a sharding, a memory space)
IDENTITY_CUSTOM_CALLS = frozenset(
    {"Sharding", "MoveToHost", "MoveToDevice", "annotate_device_placement"}
)
#: custom-calls that compute each element from the same element of their one operand
ELEMENTWISE_CUSTOM_CALLS = frozenset({"chlo.erf_inv"})


def custom_call_target(instr: Any) -> str:
    return instr.attributes.get("custom_call_target", "").strip().strip('"')


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


def _regroup(shape: Shape, leaves: Any) -> Value:
    if shape.tuple_shapes is None:
        return next(leaves)
    return tuple(_regroup(s, leaves) for s in shape.tuple_shapes)
