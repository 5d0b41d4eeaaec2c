"""XLA's shape rules applied to a module: is each instruction's result shape the one its
operands and attributes give, and is its opcode one XLA has?

The parser accepts any text of the right form; XLA's verifier and shape inference then reject
a transpose whose result does not match its permutation, a slice past the end of its operand,
a reshape that changes the element count, an opcode XLA does not have, and so on. hloidx
applies the same rules (:mod:`.shape_rules`) so that it analyses only what XLA would run; each
violation is a located error.
"""

from __future__ import annotations

import re

from ..errors import HloidxError, HloSemanticError
from ..source import Span
from .async_rules import async_phase, check_async, shared_wrapped_computations
from .ir import HloModule, Instruction
from .opcodes import XLA_OPCODES, async_sugar
from .shape_rules import RULES

# ---------------------------------------------------------------------------
# Checking a module
# ---------------------------------------------------------------------------


def _opcode_span(instr: Instruction) -> Span | None:
    span = instr.span
    if span is None:
        return None
    text = span.source.text
    match = re.compile(r"\s" + re.escape(instr.opcode) + r"\s*\(").search(
        text, span.start, span.end
    )
    if match is None:
        return span
    return span.source.span(match.start() + 1, match.start() + 1 + len(instr.opcode))


def _arity(opcode: str) -> int | None:
    """XLA's operand count of ``opcode`` (None: variadic; -1: no such opcode)."""
    arity = XLA_OPCODES.get(opcode, -1)
    sugar = async_sugar(opcode)
    if sugar is not None:  # reduce-scatter-start(...): the wrapped op's operands
        arity = XLA_OPCODES[sugar[0]] if sugar[1] == "start" else 1
    return arity


def unknown_opcode(instr: Instruction) -> HloSemanticError | None:
    """The error of an opcode XLA does not have (whatever the operands), or None."""
    if _arity(instr.opcode) != -1:
        return None
    return HloSemanticError(
        f"unknown opcode {instr.opcode!r}: XLA has no such op", _opcode_span(instr)
    )


def check_instruction(instr: Instruction) -> HloSemanticError | None:
    """The first violation of XLA's rules by ``instr`` (located), or None."""
    arity = _arity(instr.opcode)
    if arity == -1:
        return unknown_opcode(instr)
    if arity is not None and len(instr.operands) != arity:
        return HloSemanticError(
            f"{instr.name}: {instr.opcode} takes {arity} operand{'s' if arity != 1 else ''}, "
            f"{len(instr.operands)} given",
            _opcode_span(instr),
        )
    rule = RULES.get(instr.opcode)
    if (
        rule is None
        and instr.opcode.endswith(("-start", "-update", "-done"))
        and async_phase(instr.opcode) is not None
    ):
        rule = check_async
    if rule is None:
        return None
    try:
        problem = rule(instr)
    except HloidxError as error:
        return HloSemanticError(error.message, error.span or instr.span)
    except (IndexError, KeyError, TypeError, ValueError, ZeroDivisionError):
        return None  # a malformed attribute the rules report themselves; never a crash here
    if problem is None:
        return None
    message, attribute = problem
    span = instr.attribute_span(attribute) if attribute else None
    return HloSemanticError(message, span or instr.span)


def check_module(module: HloModule) -> list[tuple[Instruction, HloSemanticError]]:
    """Every instruction of ``module`` that breaks XLA's rules, with its error. An instruction
    that reads a broken one is checked only for its opcode (its shape would follow from the
    error before it; an unknown opcode does not): it is dropped with it."""
    found: list[tuple[Instruction, HloSemanticError]] = []
    for computation in module.computations.values():
        broken: set[int] = set()
        for instr in computation.instructions:
            if broken and any(id(o) in broken for o in instr.operands):
                broken.add(id(instr))
                opcode_error = unknown_opcode(instr)
                if opcode_error is not None:
                    found.append((instr, opcode_error))
                continue
            error = check_instruction(instr)
            if error is not None:
                broken.add(id(instr))
                found.append((instr, error))
    for instr, message in shared_wrapped_computations(module):
        found.append((instr, HloSemanticError(message, instr.attribute_span("calls"))))
    return found
