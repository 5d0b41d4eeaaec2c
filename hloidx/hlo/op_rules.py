"""The registry of per-opcode indexing rules and the result types they produce.

A rule is a function of one instruction (its opcode, shapes, attributes and, for runtime
variables, its operands' producers). Rules live in the modules of :mod:`hloidx.hlo.rules`
and register themselves here with :func:`output_to_input_rule` /
:func:`input_to_output_rule`. Looking up an opcode with no rule raises
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

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import UnsupportedOpError
from ..maps.indexing_map import IndexingMap
from .ir import Instruction
from .opcodes import async_sugar


@dataclass(frozen=True)
class RuntimeVar:
    """What a runtime variable stands for: a value read from ``producer`` at ``map``."""

    producer: Instruction
    map: IndexingMap
    #: what XLA does to the value before use, e.g. "clamp to [0, 26]" (display only)
    note: str = ""

    def producer_text(self) -> str:
        """The producer as XLA names it: ``of1 = s32[] parameter(1)``."""
        p = self.producer
        literal = f"({p.literal})" if p.literal is not None else ""
        return f"{p.name} = {p.shape} {p.opcode}{literal}"


@dataclass(frozen=True)
class OperandIndexing:
    maps: tuple[IndexingMap, ...]
    exact: bool = True
    runtime_vars: tuple[RuntimeVar, ...] = ()
    notes: tuple[str, ...] = field(default=())
    #: collectives: output index -> position (in its replica group) of the replica whose
    #: copy of the operand is read (XLA's replica id map of all-gather); None otherwise
    replica_id_map: IndexingMap | None = None
    #: for a tuple-shaped operand: the element the maps index (a *-done reads one element of
    #: its *-start's tuple); None for an array operand, or element 0
    element: int | None = None

    @staticmethod
    def of(
        *maps: IndexingMap,
        exact: bool = True,
        runtime_vars: tuple[RuntimeVar, ...] = (),
        notes: tuple[str, ...] = (),
    ) -> OperandIndexing:
        return OperandIndexing(tuple(maps), exact, runtime_vars, notes)


#: result[output_id][operand_id] (output-to-input) or result[operand_id][output_id]
IndexingTable = list[list[OperandIndexing]]
Rule = Callable[[Instruction], IndexingTable]

_OUTPUT_TO_INPUT: dict[str, Rule] = {}
_INPUT_TO_OUTPUT: dict[str, Rule] = {}


def output_to_input_rule(*opcodes: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for opcode in opcodes:
            _OUTPUT_TO_INPUT[opcode] = fn
        return fn

    return register


def input_to_output_rule(*opcodes: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        for opcode in opcodes:
            _INPUT_TO_OUTPUT[opcode] = fn
        return fn

    return register


def _load_rules() -> None:
    # Importing the rule modules registers their rules.
    from . import rules  # noqa: F401


def _rule(table: dict[str, Rule], opcode: str) -> Rule | None:
    rule = table.get(opcode)
    if rule is None:
        sugar = async_sugar(opcode)  # reduce-scatter-start: the rule of async-start
        if sugar is not None:
            rule = table.get(f"async-{sugar[1]}")
    return rule


def has_output_to_input_rule(opcode: str) -> bool:
    _load_rules()
    return _rule(_OUTPUT_TO_INPUT, opcode) is not None


def has_input_to_output_rule(opcode: str) -> bool:
    _load_rules()
    return _rule(_INPUT_TO_OUTPUT, opcode) is not None


def output_to_input(instr: Instruction) -> IndexingTable:
    """``[output_id][operand_id]`` maps from the instruction's output to each operand."""
    _load_rules()
    rule = _rule(_OUTPUT_TO_INPUT, instr.opcode)
    if rule is None:
        raise UnsupportedOpError(
            f"unknown indexing: no output-to-input rule for {instr.opcode}", instr.span
        )
    return rule(instr)


def input_to_output(instr: Instruction) -> IndexingTable:
    """``[operand_id][output_id]`` maps from each operand to the instruction's output."""
    _load_rules()
    rule = _rule(_INPUT_TO_OUTPUT, instr.opcode)
    if rule is None:
        raise UnsupportedOpError(
            f"unknown indexing: no input-to-output rule for {instr.opcode}", instr.span
        )
    return rule(instr)


def supported_opcodes() -> tuple[list[str], list[str]]:
    _load_rules()
    return sorted(_OUTPUT_TO_INPUT), sorted(_INPUT_TO_OUTPUT)
