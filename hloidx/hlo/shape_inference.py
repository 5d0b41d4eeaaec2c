"""Shapes XLA's parser infers when the text leaves them out: ``ROOT sum = add(a, b)``, and the
anonymous instructions written in place of an operand (``add(f32[10] parameter(0), p1)``).

XLA's parser runs its shape inference on such an instruction. This module covers the ops its
parser tests write that way (elementwise ops, compare, select, clamp, tuple,
get-tuple-element, dot, while, call and conditional); any other instruction without a shape
is a located error asking for the shape, never a guess.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import HloidxError, HloSyntaxError
from .ir import HloModule, Instruction, Shape

if TYPE_CHECKING:
    from ..source import Span

_SAME_AS_FIRST = frozenset(
    {
        "abs",
        "add",
        "and",
        "atan2",
        "cbrt",
        "ceil",
        "copy",
        "cosine",
        "divide",
        "erf",
        "exponential",
        "exponential-minus-one",
        "floor",
        "log",
        "log-plus-one",
        "logistic",
        "maximum",
        "minimum",
        "multiply",
        "negate",
        "not",
        "or",
        "power",
        "remainder",
        "round-nearest-afz",
        "round-nearest-even",
        "rsqrt",
        "shift-left",
        "shift-right-arithmetic",
        "shift-right-logical",
        "sign",
        "sine",
        "sqrt",
        "subtract",
        "tan",
        "tanh",
        "xor",
        "reduce-precision",
        "opt-barrier",
    }
)


def infer_missing_shapes(module: HloModule, errors: list[HloidxError]) -> set[Instruction]:
    """Give every instruction without a shape the one XLA infers; the instructions that stay
    without one (each with a located error in ``errors``) are returned."""
    missing = [i for c in module.computations.values() for i in c.instructions if i.shape is None]
    while missing:
        left = []
        for instruction in missing:
            shape = _infer(instruction, module)
            if shape is None:
                left.append(instruction)
            else:
                instruction.shape = shape
        if len(left) == len(missing):
            break
        missing = left
    for instruction in missing:
        errors.append(
            HloSyntaxError(
                f"{instruction.name}: the shape of a {instruction.opcode} is not inferred; "
                "expected a shape such as f32[10,20] before the opcode",
                _opcode_span(instruction),
            )
        )
    return set(missing)


def _opcode_span(instruction: Instruction) -> Span | None:
    span = instruction.span
    if span is None:
        return None
    at = span.source.text.find(instruction.opcode, span.start, span.end)
    return span.source.span(at, at + len(instruction.opcode)) if at >= 0 else span


def _infer(instruction: Instruction, module: HloModule) -> Shape | None:
    opcode = instruction.opcode
    operands = instruction.operands
    shapes = [o.shape for o in operands]
    if any(s is None for s in shapes):
        return None  # an operand's own shape comes first
    if opcode in _SAME_AS_FIRST and shapes:
        return _without_layout(shapes[0])
    if opcode == "compare" and shapes and shapes[0].is_array:
        return Shape("pred", shapes[0].dims, shapes[0].dynamic)
    if opcode == "select" and len(shapes) == 3:
        return _without_layout(shapes[1])
    if opcode == "clamp" and len(shapes) == 3:
        return _without_layout(shapes[1])
    if opcode == "tuple":
        return Shape("tuple", tuple_shapes=tuple(shapes))
    if opcode == "get-tuple-element" and len(shapes) == 1:
        index = _int(instruction, "index")
        elements = shapes[0].tuple_shapes
        if elements is not None and index is not None and 0 <= index < len(elements):
            return elements[index]
        return None
    if opcode == "dot" and len(shapes) == 2:
        return _dot(instruction, shapes[0], shapes[1])
    if opcode == "while" and len(shapes) == 1:
        return shapes[0]
    for key in ("to_apply", "true_computation", "branch_computations"):
        if opcode in ("call", "conditional") and key in instruction.attributes:
            return _root_shape(instruction, key, module)
    return None


def _without_layout(shape: Shape) -> Shape:
    if not shape.is_array or shape.layout is None:
        return shape
    return Shape(shape.element_type, shape.dims, shape.dynamic)


def _int(instruction: Instruction, key: str) -> int | None:
    value = instruction.attributes.get(key, "").strip()
    return int(value) if value.lstrip("-").isdigit() else None


def _dims(instruction: Instruction, key: str) -> tuple[int, ...] | None:
    value = instruction.attributes.get(key)
    if value is None:
        return ()
    inner = value.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return None
    parts = [p.strip() for p in inner[1:-1].split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _dot(instruction: Instruction, lhs: Shape, rhs: Shape) -> Shape | None:
    """Batch dimensions, then the lhs's free ones, then the rhs's (XLA's dot shape)."""
    numbers = [
        _dims(instruction, key)
        for key in (
            "lhs_batch_dims",
            "rhs_batch_dims",
            "lhs_contracting_dims",
            "rhs_contracting_dims",
        )
    ]
    if any(n is None for n in numbers) or not (lhs.is_array and rhs.is_array):
        return None
    lhs_batch, rhs_batch, lhs_contracting, rhs_contracting = numbers
    rank_ok = all(0 <= d < len(lhs.dims) for d in (*lhs_batch, *lhs_contracting)) and all(
        0 <= d < len(rhs.dims) for d in (*rhs_batch, *rhs_contracting)
    )
    if not rank_ok:
        return None
    dims = [lhs.dims[d] for d in lhs_batch]
    dims += [n for d, n in enumerate(lhs.dims) if d not in lhs_batch and d not in lhs_contracting]
    dims += [n for d, n in enumerate(rhs.dims) if d not in rhs_batch and d not in rhs_contracting]
    return Shape(lhs.element_type, tuple(dims))


def _root_shape(instruction: Instruction, key: str, module: HloModule) -> Shape | None:
    value = instruction.attributes[key].strip().strip("{}").split(",")[0].strip().lstrip("%")
    called = module.computations.get(value)
    if called is None:
        return None
    root = next((i for i in called.instructions if i.is_root), None)
    return root.shape if root is not None else None
