"""A small evaluator of scalar HLO: what XLA's ``HloEvaluator`` does for the few ops a while
loop's counter goes through (``trip_count.py`` runs a loop's condition and update with it, as
XLA's ``ComputeWhileLoopTripCount`` does). Integers wrap to their type's width; integer
division and remainder truncate toward zero, as C++ does; anything else (a collective, a
custom call, a non-scalar value) cannot be evaluated."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hlo.ir import Computation, Instruction


class CannotEvaluate(Exception):
    """The value cannot be computed here (the message says why)."""


def called(instr: Instruction) -> list[Computation]:
    return [c for comps in instr.called_computations.values() for c in comps]


def is_effective_scalar(instr: Instruction) -> bool:
    shape = instr.shape
    return not shape.is_tuple and all(d == 1 for d in shape.dims)


NOT_SCALAR_OPS = ("send", "send-done", "recv", "recv-done", "custom-call")


def is_collective(op: str) -> bool:
    return (
        op.startswith(("all-", "reduce-scatter", "collective-", "ragged-all-to-all"))
        or op == "all-to-all"
    )


_INT_TYPES = {f"{s}{b}": (s == "s", b) for s in "su" for b in (2, 4, 8, 16, 32, 64)}
_FLOAT_PREFIXES = ("f", "bf")


def _wrap(value: Any, element_type: str) -> Any:
    if element_type == "pred":
        return bool(value)
    if element_type in _INT_TYPES:
        signed, bits = _INT_TYPES[element_type]
        if isinstance(value, float):
            if not math.isfinite(value):
                raise CannotEvaluate("a non-finite float converted to an integer")
            value = int(value)
        value = int(value) & ((1 << bits) - 1)
        if signed and value >= 1 << (bits - 1):
            value -= 1 << bits
        return value
    if element_type.startswith(_FLOAT_PREFIXES):
        return float(value)
    raise CannotEvaluate(f"element type {element_type}")


def scalar_literal(instr: Instruction) -> Any:
    text = (instr.literal or "").strip().strip("{}").strip()
    if not is_effective_scalar(instr) or "," in text:
        raise CannotEvaluate(f"{instr.name} is not a scalar constant")
    if text in ("true", "false"):
        return text == "true"
    try:
        value: Any = int(text, 0)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise CannotEvaluate(f"constant {text!r}") from None
    return _wrap(value, instr.shape.element_type)


def int_div(a: int, b: int) -> int:
    if b == 0:
        raise CannotEvaluate("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _int_rem(a: int, b: int) -> int:
    if b == 0:
        raise CannotEvaluate("remainder by zero")
    return a - int_div(a, b) * b


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "EQ": lambda a, b: a == b,
    "NE": lambda a, b: a != b,
    "LT": lambda a, b: a < b,
    "LE": lambda a, b: a <= b,
    "GT": lambda a, b: a > b,
    "GE": lambda a, b: a >= b,
}


class _Evaluator:
    """Evaluates scalar instructions from constants and the bound values (XLA's
    ``HloEvaluator`` on the few ops a loop's counter goes through)."""

    def __init__(self, bound: dict[int, Any]) -> None:
        self.bound = bound
        self.values: dict[int, Any] = {}

    def __call__(self, instr: Instruction, depth: int = 0) -> Any:
        key = id(instr)
        if key in self.bound:
            return self.bound[key]
        if key in self.values:
            return self.values[key]
        if depth > 64:
            raise CannotEvaluate("too deep")
        value = self.evaluate(instr, depth)
        self.values[key] = value
        return value

    def evaluate(self, instr: Instruction, depth: int) -> Any:
        op = instr.opcode
        if op == "constant":
            return scalar_literal(instr)
        if op == "tuple":
            return tuple(self(o, depth + 1) for o in instr.operands)
        if op == "get-tuple-element":
            value = self(instr.operands[0], depth + 1)
            return value[instr.tuple_index or 0]
        if not is_effective_scalar(instr):
            raise CannotEvaluate(f"{instr.name} is not a scalar")
        if op in ("fusion", "call"):
            comps = called(instr)
            if len(comps) != 1:
                raise CannotEvaluate(f"{instr.name} calls {len(comps)} computations")
            args = [self(o, depth + 1) for o in instr.operands]
            return _evaluate_computation(comps[0], args, depth + 1)
        if op == "parameter" or is_collective(op) or op in NOT_SCALAR_OPS:
            raise CannotEvaluate(f"{op} {instr.name} has no value here")
        args = [self(o, depth + 1) for o in instr.operands]
        element_type = instr.shape.element_type
        return _wrap(_apply(op, instr, args), element_type)


def _apply(op: str, instr: Instruction, args: list[Any]) -> Any:
    integer = all(isinstance(a, int) for a in args)
    match op:
        case "add":
            return args[0] + args[1]
        case "subtract":
            return args[0] - args[1]
        case "multiply":
            return args[0] * args[1]
        case "divide":
            if integer:
                return int_div(args[0], args[1])
            return args[0] / args[1]
        case "remainder":
            if integer:
                return _int_rem(args[0], args[1])
            return math.fmod(args[0], args[1])
        case "maximum":
            return max(args[0], args[1])
        case "minimum":
            return min(args[0], args[1])
        case "negate":
            return -args[0]
        case "abs":
            return abs(args[0])
        case "not":
            return (not args[0]) if isinstance(args[0], bool) else ~args[0]
        case "and":
            return args[0] & args[1]
        case "or":
            return args[0] | args[1]
        case "xor":
            return args[0] ^ args[1]
        case "select":
            return args[1] if args[0] else args[2]
        case "compare":
            direction = instr.attributes.get("direction", "")
            if direction not in _COMPARE:
                raise CannotEvaluate(f"compare direction {direction!r}")
            return _COMPARE[direction](args[0], args[1])
        case "convert" | "copy" | "bitcast" | "reshape" | "bitcast-convert" if len(args) == 1:
            if op == "bitcast-convert":
                raise CannotEvaluate("bitcast-convert")
            return args[0]
    raise CannotEvaluate(f"{op} is not evaluated")


def _evaluate_computation(comp: Computation, args: list[Any], depth: int) -> Any:
    params = comp.parameters
    if len(params) != len(args) or comp.root is None:
        raise CannotEvaluate(f"{comp.name}: {len(args)} arguments for {len(params)} parameters")
    evaluator = _Evaluator({id(p): a for p, a in zip(params, args, strict=True)})
    return evaluator(comp.root, depth)


def evaluate(instr: Instruction, bound: dict[int, Any] | None = None) -> Any:
    return _Evaluator(bound or {})(instr)
