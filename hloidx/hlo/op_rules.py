"""Per-opcode indexing rules: the entry point the analysis uses.

A rule is a function of one instruction (its opcode, shapes, attributes and, for runtime
variables, its operands' producers). Rules live in the modules of :mod:`hloidx.hlo.rules`
and register themselves in :mod:`.rule_registry` with :func:`output_to_input_rule` /
:func:`input_to_output_rule`; this module loads those families, then looks up there (so the
families never import this module). Looking up an opcode with no rule raises
:class:`UnsupportedOpError`: an op we cannot analyse says so, it is never silently wrong.

Conventions every rule follows:

* ``output_to_input(instr)`` returns ``result[output_id][operand_id]``: for each output of
  the instruction (one, or one per tuple element for multi-output ops such as variadic
  reduce and sort) and each operand, an :class:`OperandIndexing`.
* ``input_to_output(instr)`` returns ``result[operand_id][output_id]``: maps from an
  operand's index to the output indices that read that element.
* ``OperandIndexing.maps`` may hold several maps; the relation is their union.
* ``exact`` is True when, for every feasible assignment of the runtime variables, that union
  is exactly the set of elements the op reads; False marks a sound over-approximation.
* Runtime variable ``rt<i>`` of every map in one ``OperandIndexing`` is described by
  ``runtime_vars[i]``: which instruction produces its value and with which map from the
  instruction's output index to that producer's index (``(d0, d1) -> ()`` for a scalar offset).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UnsupportedOpError
from . import rule_registry
from .rule_registry import (
    IndexingTable,
    OperandIndexing,
    Rule,
    RuntimeVar,
    input_to_output_rule,
    output_to_input_rule,
)

if TYPE_CHECKING:
    from .ir import Instruction

__all__ = [
    "IndexingTable",
    "OperandIndexing",
    "Rule",
    "RuntimeVar",
    "UnsupportedOpError",
    "has_input_to_output_rule",
    "has_output_to_input_rule",
    "input_to_output",
    "input_to_output_rule",
    "output_to_input",
    "output_to_input_rule",
    "supported_opcodes",
]


def _load_rules() -> None:
    # Importing the rule families registers their rules in the registry.
    from . import rules  # noqa: F401


def has_output_to_input_rule(opcode: str) -> bool:
    _load_rules()
    return rule_registry.has_output_to_input_rule(opcode)


def has_input_to_output_rule(opcode: str) -> bool:
    _load_rules()
    return rule_registry.has_input_to_output_rule(opcode)


def output_to_input(instr: Instruction) -> IndexingTable:
    """``[output_id][operand_id]`` maps from the instruction's output to each operand."""
    _load_rules()
    return rule_registry.output_to_input(instr)


def input_to_output(instr: Instruction) -> IndexingTable:
    """``[operand_id][output_id]`` maps from each operand to the instruction's output."""
    _load_rules()
    return rule_registry.input_to_output(instr)


def supported_opcodes() -> tuple[list[str], list[str]]:
    _load_rules()
    return rule_registry.supported_opcodes()
