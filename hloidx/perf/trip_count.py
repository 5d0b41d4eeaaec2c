"""How many times a ``while`` loop runs, as XLA derives it (issue 36).

First the ``known_trip_count`` XLA writes into the loop's backend config. Otherwise the
analysis of ``xla/hlo/analysis/while_loop_analysis.cc`` (``ComputeWhileLoopTripCount``) at
openxla 1e203b533f9702298d8b17ef1281e880132614bf, read and rewritten here:

1. the induction variable: the one tuple element the condition's root depends on (directly,
   or through scalar ops only), which the body's root tuple updates from the same element;
2. its initial value, evaluated from the loop's init tuple (constants and scalar arithmetic);
3. ``MatchTrivialLoopTripCount``: ``i += k`` (``k`` a positive constant) with ``i < N`` or
   ``i <= N`` (``N`` a constant), counted in closed form with XLA's integer arithmetic
   (its quirks included: C++ truncating division, ``std::remainder``, and the ``trips < N``
   test of the ``<`` case);
4. otherwise the condition and the update evaluated step by step, at most 128 times.

Anything else is "unknown", with the reason the analysis stopped.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .scalar_eval import (
    NOT_SCALAR_OPS,
    CannotEvaluate,
    called,
    evaluate,
    int_div,
    is_collective,
    scalar_literal,
)

if TYPE_CHECKING:
    from ..hlo.ir import Computation, Instruction

#: XLA's default bound on the step-by-step evaluation
MAX_BRUTE_FORCE_ITERATIONS = 128
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

HOW_KNOWN = "known_trip_count"
HOW_PATTERN = "pattern"
HOW_EVALUATED = "evaluated"
HOW_UNKNOWN = "unknown"


@dataclass(frozen=True)
class TripCount:
    """A loop's trip count (``None``: unknown), how it was found, and why not when unknown."""

    value: int | None
    how: str
    reason: str = ""
    #: what XLA's closed form gives when hloidx's model counts the loop differently
    xla_value: int | None = None

    def describe(self) -> str:
        if self.how == HOW_KNOWN:
            return "known_trip_count in the backend config"
        if self.how == HOW_PATTERN:
            text = "from the condition (XLA's i = a; i < N or i <= N; i += k pattern)"
            if self.xla_value is not None and self.xla_value != self.value:
                text += (
                    f"; counted exactly (hloidx model): XLA's closed form gives {self.xla_value}"
                )
            return text
        if self.how == HOW_EVALUATED:
            return "from the condition, evaluated step by step (XLA's brute force)"
        return f"unknown: {self.reason}"


class _NotFound(Exception):
    """The analysis stops here (the message is the reason)."""


# -- the graph helpers of the analysis -----------------------------------------------------


def _is_constant(instr: Instruction) -> bool:
    return instr.opcode == "constant"


def _trace_copies(instr: Instruction) -> Instruction:
    """Through copies and get-tuple-element of a tuple (XLA's
    ``TraceThroughCopyAndGteTupleChain``)."""
    while True:
        op = instr.opcode
        if op == "get-tuple-element" and instr.operands and instr.operands[0].opcode == "tuple":
            index = instr.tuple_index or 0
            tuple_operands = instr.operands[0].operands
            if index >= len(tuple_operands):
                return instr
            instr = tuple_operands[index]
        elif op in ("copy", "copy-start", "copy-done") and instr.operands:
            instr = instr.operands[0]
        else:
            return instr


def _non_constant_operand(instr: Instruction) -> Instruction | None:
    """The one distinct operand that is not a constant, else None."""
    found = None
    for operand in instr.operands:
        if not _is_constant(operand):
            if found is not None and found is not operand:
                return None
            found = operand
    return found


def _users(instr: Instruction) -> list[Instruction]:
    comp = instr.computation
    if comp is None:
        return []
    return [i for i in comp.instructions if any(o is instr for o in i.operands)]


def _unique_gte(param: Instruction, index: int) -> Instruction | None:
    """The one get-tuple-element of ``param`` at ``index`` (XLA's ``GetUniqueGteInstruction``)."""
    found = [u for u in _users(param) if u.opcode == "get-tuple-element" and u.tuple_index == index]
    return found[0] if len(found) == 1 else None


def _is_scalar(instr: Instruction) -> bool:
    shape = instr.shape
    return not shape.is_tuple and not shape.dims


def _is_scalar_op(instr: Instruction, depth: int = 0) -> bool:
    """A scalar op the analysis may evaluate (XLA's ``IsScalarOp``)."""
    op = instr.opcode
    if is_collective(op) or op in NOT_SCALAR_OPS or depth > 16:
        return False
    for comp in called(instr):
        if not all(_is_scalar_op(i, depth + 1) for i in comp.instructions):
            return False
    return _is_scalar(instr)


def _param0(comp: Computation) -> Instruction:
    params = comp.parameters
    if not params:
        raise _NotFound(f"{comp.name} has no parameter")
    return params[0]


def _passes_tuple_through(instr: Instruction) -> Instruction | None:
    """The tuple ``instr`` copies unchanged (a copy, or a fusion or call whose root is a copy
    of its one parameter), else None. XLA's extractor inlines such a fusion and sees through
    it (its test ``GetIndvarIndexShouldWorkWhenParamIsCopied``)."""
    if instr.opcode == "copy" and instr.operands:
        return instr.operands[0]
    if instr.opcode in ("fusion", "call") and len(instr.operands) == 1:
        comps = called(instr)
        if len(comps) == 1 and comps[0].root is not None:
            root = comps[0].root
            while root.opcode == "copy" and root.operands:
                root = root.operands[0]
            if root.opcode == "parameter":
                return instr.operands[0]
    return None


def _gte_index_of(instr: Instruction, tuple_value: Instruction) -> int | None:
    """``N`` when ``instr`` is ``get-tuple-element(tuple_value), index=N`` (possibly through a
    copy of the tuple)."""
    if instr.opcode != "get-tuple-element" or not instr.operands:
        return None
    source = instr.operands[0]
    while source is not tuple_value:
        passed = _passes_tuple_through(source)
        if passed is None:
            return None
        source = passed
    return instr.tuple_index


def _gte_operand_indices(instr: Instruction, tuple_value: Instruction) -> set[int] | None:
    """XLA's ``GetGTEOperandIndices``: every operand a constant or ``gte(tuple_value, x)``
    (possibly behind one copy); the set of the ``x``."""
    indices: set[int] = set()
    for operand in instr.operands:
        if _is_constant(operand):
            continue
        possibly_gte = operand.operands[0] if operand.opcode == "copy" else operand
        if possibly_gte.opcode != "get-tuple-element" or possibly_gte.operands[0] is not (
            tuple_value
        ):
            return None
        indices.add(possibly_gte.tuple_index or 0)
    return indices


def _gte_dependence_indices(out: Instruction, tuple_value: Instruction) -> set[int] | None:
    """XLA's ``GetGTEDependenceIndices``: the tuple elements ``out`` is a function of, when it
    depends on ``tuple_value`` only through its elements and every op on the way is scalar."""
    fast = _gte_operand_indices(out, tuple_value)
    if fast is not None:
        return fast
    if out.computation is not tuple_value.computation or not tuple_value.shape.is_tuple:
        return None
    indices: set[int] = set()
    seen: set[int] = set()
    stack = [out]
    while stack:
        instr = stack.pop()
        if id(instr) in seen:
            continue
        seen.add(id(instr))
        if instr is tuple_value:
            return None  # used other than through its elements
        index = _gte_index_of(instr, tuple_value)
        if index is not None:
            if not _is_scalar(instr):
                return None
            indices.add(index)
            continue
        if instr.opcode == "parameter" or not _is_scalar_op(instr):
            return None
        stack.extend(instr.operands)
    return indices or None


def _unique_gte_dependence_index(out: Instruction, tuple_value: Instruction) -> int | None:
    found = _gte_dependence_indices(out, tuple_value)
    if found is None or len(found) != 1:
        return None
    return next(iter(found))


def _loop_parts(while_op: Instruction) -> tuple[Computation, Computation]:
    called = while_op.called_computations
    body = (called.get("body") or [None])[0]
    condition = (called.get("condition") or [None])[0]
    if body is None or condition is None:
        raise _NotFound("the loop has no body or no condition")
    return body, condition


def induction_variable_index(while_op: Instruction) -> int | None:
    """The tuple index of the loop's induction variable (XLA's
    ``GetLoopInductionVarTupleIdx``), or None."""
    try:
        return _induction_variable_index(while_op)
    except _NotFound:
        return None


def _induction_variable_index(while_op: Instruction) -> int:
    body, condition = _loop_parts(while_op)
    cond_root = condition.root
    assert cond_root is not None
    indices = _gte_dependence_indices(cond_root, _param0(condition))
    if indices is None:
        raise _NotFound(
            "the condition does not depend on the loop's tuple only through scalar elements"
        )
    if not while_op.operands or while_op.operands[0].opcode != "tuple":
        raise _NotFound("the loop's operand is not a tuple instruction")
    if len(indices) != 1:
        raise _NotFound(
            f"the condition depends on {len(indices)} tuple elements, not on one induction variable"
        )
    index = next(iter(indices))
    body_root = body.root
    if body_root is None or body_root.opcode != "tuple" or index >= len(body_root.operands):
        raise _NotFound("the body's root is not a tuple")
    increment = _trace_copies(body_root.operands[index])
    if _unique_gte_dependence_index(increment, _param0(body)) != index:
        raise _NotFound(
            f"the body does not update tuple element {index} from itself through scalar ops"
        )
    return index


# -- a small evaluator of scalar HLO ----------------------------------------------------------

# -- the trip count -------------------------------------------------------------------------


def _checked(value: int) -> int:
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise _NotFound("the trip count exceeds int64")
    return value


def _c_remainder(x: int, y: int) -> int:
    """C's ``std::remainder`` of two int64 (as doubles), back to an integer."""
    return int(math.remainder(float(x), float(y)))


def match_trivial_trip_count(while_op: Instruction, index: int, init: Any) -> int | None:
    """XLA's ``MatchTrivialLoopTripCount``: ``i = init; i < N or i <= N; i += k``."""
    try:
        return _match_trivial(while_op, index, init)
    except _NotFound:
        return None


def _match_trivial(while_op: Instruction, index: int, init: Any) -> int:
    if isinstance(init, bool) or not isinstance(init, int):
        raise _NotFound("the induction variable's initial value is not an integer")
    body, condition = _loop_parts(while_op)
    body_root = body.root
    assert body_root is not None
    update = _trace_copies(body_root.operands[index])
    variable = _non_constant_operand(update)
    if variable is None or _trace_copies(variable) is not _unique_gte(_param0(body), index):
        raise _NotFound("the update is not an op of the induction variable and constants")
    if update.opcode != "add" or len(update.operands) != 2:
        raise _NotFound(f"the induction variable is updated by {update.opcode}, not an add")
    step_instr = next((o for o in update.operands if o is not variable), None)
    if step_instr is None or not _is_constant(step_instr):
        raise _NotFound("the induction variable is not incremented by a constant")
    try:
        step = scalar_literal(step_instr)
    except CannotEvaluate:
        raise _NotFound("the increment is not a scalar constant") from None
    if isinstance(step, bool) or not isinstance(step, int):
        raise _NotFound("the increment is not an integer")
    if step <= 0:
        raise _NotFound(f"the increment {step} is not positive")
    cond_root = condition.root
    assert cond_root is not None
    cond_variable = _non_constant_operand(cond_root)
    if cond_variable is None or cond_variable is not _unique_gte(_param0(condition), index):
        raise _NotFound("the condition is not an op of the induction variable and a constant")
    if len(cond_root.operands) != 2:
        raise _NotFound("the condition is not a binary op")
    bound_instr = next((o for o in cond_root.operands if o is not cond_variable), None)
    if bound_instr is None or not _is_constant(bound_instr):
        raise _NotFound("the condition's bound is not a constant")
    try:
        bound = scalar_literal(bound_instr)
    except CannotEvaluate:
        raise _NotFound("the condition's bound is not a scalar constant") from None
    if isinstance(bound, bool) or not isinstance(bound, int):
        raise _NotFound("the condition's bound is not an integer")
    direction = cond_root.attributes.get("direction") if cond_root.opcode == "compare" else None
    first = cond_root.operands[0] is cond_variable
    if direction == "LT" and first:
        trips = _checked(bound - init)
        div = int_div(trips, step)
        if _c_remainder(trips, step) == 0:
            return max(0, div)
        more = _checked(div + 1)
        return max(0, more) if more < bound else max(0, div)
    if direction == "LE" and first:
        trips = _checked(bound - init)
        return max(0, _checked(int_div(trips, step) + 1))
    raise _NotFound("the condition is not i < N or i <= N")


def compute_trip_count(
    while_op: Instruction, max_brute_force_iterations: int = MAX_BRUTE_FORCE_ITERATIONS
) -> TripCount:
    """XLA's ``ComputeWhileLoopTripCount`` with how the count was found (or why not)."""
    try:
        index = _induction_variable_index(while_op)
    except _NotFound as e:
        return TripCount(None, HOW_UNKNOWN, f"no induction variable ({e})")
    init_instr = _trace_copies(while_op.operands[0].operands[index])
    try:
        value = evaluate(init_instr)
    except (CannotEvaluate, IndexError, TypeError) as e:
        return TripCount(
            None, HOW_UNKNOWN, f"the induction variable's initial value is not a constant ({e})"
        )
    try:
        return TripCount(_match_trivial(while_op, index, value), HOW_PATTERN)
    except _NotFound as e:
        why = str(e)
    body, condition = _loop_parts(while_op)
    assert body.root is not None
    assert condition.root is not None
    update = body.root.operands[index]
    variable = _non_constant_operand(update)
    if variable is None or variable is not _unique_gte(_param0(body), index):
        return TripCount(None, HOW_UNKNOWN, f"{why}; the update is not evaluable step by step")
    cond_root = condition.root
    cond_variable = _non_constant_operand(cond_root)
    if cond_variable is None or cond_variable is not _unique_gte(_param0(condition), index):
        return TripCount(None, HOW_UNKNOWN, f"{why}; the condition is not evaluable step by step")
    try:
        for trips in range(max_brute_force_iterations + 1):
            if not evaluate(cond_root, {id(cond_variable): value}):
                return TripCount(trips, HOW_EVALUATED)
            value = evaluate(update, {id(variable): value})
    except (CannotEvaluate, IndexError, TypeError) as e:
        return TripCount(None, HOW_UNKNOWN, f"{why}; the condition cannot be evaluated ({e})")
    return TripCount(
        None,
        HOW_UNKNOWN,
        f"{why}; still running after {max_brute_force_iterations} evaluated iterations",
    )


def known_trip_count(instr: Instruction) -> int | None:
    """A while loop's ``known_trip_count`` from its backend config (XLA writes it)."""
    text = instr.attributes.get("backend_config", "")
    if "known_trip_count" not in text:
        return None
    try:
        config = json.loads(text)
        return int(config["known_trip_count"]["n"])
    except (ValueError, KeyError, TypeError):
        return None


def _exact_count(while_op: Instruction) -> int | None:
    """The true count of a loop XLA's pattern matched (``i < N`` or ``i <= N``, ``i += k``):
    XLA's closed form is off for a short loop (``0; < 1; += 2`` gives 0) or a negative
    start."""
    try:
        index = _induction_variable_index(while_op)
        init = evaluate(_trace_copies(while_op.operands[0].operands[index]))
        body, condition = _loop_parts(while_op)
        assert body.root is not None
        assert condition.root is not None
        update = _trace_copies(body.root.operands[index])
        variable = _non_constant_operand(update)
        step = scalar_literal(next(o for o in update.operands if o is not variable))
        cond_root = condition.root
        cond_variable = _non_constant_operand(cond_root)
        bound = scalar_literal(next(o for o in cond_root.operands if o is not cond_variable))
    except (_NotFound, CannotEvaluate, StopIteration, IndexError, TypeError):
        return None
    span = bound - init + (1 if cond_root.attributes.get("direction") == "LE" else 0)
    return max(0, -(-span // step))


def trip_count(while_op: Instruction, model: str = "xla") -> TripCount:
    """The loop's trip count: ``known_trip_count``, else XLA's analysis, else unknown.
    ``model="hloidx"`` counts a loop XLA's closed form matched exactly (and says so)."""
    known = known_trip_count(while_op)
    if known is not None:
        return TripCount(known, HOW_KNOWN)
    found = compute_trip_count(while_op)
    if model == "hloidx" and found.how == HOW_PATTERN:
        exact = _exact_count(while_op)
        if exact is not None and exact != found.value:
            return TripCount(exact, HOW_PATTERN, xla_value=found.value)
    return found
