"""The rule registry: the types rules produce, the tables they register in, the lookup.

The rule families of :mod:`hloidx.hlo.rules` import this module to register (and, for ops
that wrap another op, to look up the wrapped op's rule); :mod:`.op_rules`, the entry point
the analysis uses, imports the families first and then looks up here. The conventions every
rule follows are in :mod:`.op_rules`.
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


#: opcode -> what imports the family that registers its rules, on first use (the rules
#: package puts its custom-call families here: see ``rules.__init__``)
_LAZY_FAMILIES: dict[str, Callable[[], None]] = {}


def register_lazy_family(load: Callable[[], None], *opcodes: str) -> None:
    """``load()`` registers the rules of ``opcodes``; call it when one is first looked up."""
    for opcode in opcodes:
        _LAZY_FAMILIES[opcode] = load


def _load_lazy(opcode: str | None = None) -> None:
    loads = [_LAZY_FAMILIES.pop(opcode)] if opcode in _LAZY_FAMILIES else []
    if opcode is None:
        loads = list(dict.fromkeys(_LAZY_FAMILIES.values()))
        _LAZY_FAMILIES.clear()
    for load in loads:
        load()


def _rule(table: dict[str, Rule], opcode: str) -> Rule | None:
    if _LAZY_FAMILIES:
        _load_lazy(opcode)
    rule = table.get(opcode)
    if rule is None:
        sugar = async_sugar(opcode)  # reduce-scatter-start: the rule of async-start
        if sugar is not None:
            rule = table.get(f"async-{sugar[1]}")
    return rule


def has_output_to_input_rule(opcode: str) -> bool:
    return _rule(_OUTPUT_TO_INPUT, opcode) is not None


def has_input_to_output_rule(opcode: str) -> bool:
    return _rule(_INPUT_TO_OUTPUT, opcode) is not None


def output_to_input(instr: Instruction) -> IndexingTable:
    """``[output_id][operand_id]`` maps from the instruction's output to each operand."""
    rule = _rule(_OUTPUT_TO_INPUT, instr.opcode)
    if rule is None:
        raise UnsupportedOpError(
            f"unknown indexing: no output-to-input rule for {instr.opcode}", instr.span
        )
    return rule(instr)


def input_to_output(instr: Instruction) -> IndexingTable:
    """``[operand_id][output_id]`` maps from each operand to the instruction's output."""
    rule = _rule(_INPUT_TO_OUTPUT, instr.opcode)
    if rule is None:
        raise UnsupportedOpError(
            f"unknown indexing: no input-to-output rule for {instr.opcode}", instr.span
        )
    return rule(instr)


def supported_opcodes() -> tuple[list[str], list[str]]:
    _load_lazy()
    return sorted(_OUTPUT_TO_INPUT), sorted(_INPUT_TO_OUTPUT)
