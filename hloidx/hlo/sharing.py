"""Sharing work between structurally equal computations: a structure key per computation, and
rule tables computed once and re-pointed at each copy's runtime-value producers."""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import Any

from .composition import (
    ComposedOperandIndexing,
)
from .ir import CALL_ATTRIBUTES, INDEXING_IRRELEVANT_ATTRIBUTES, Computation, Instruction
from .op_rules import IndexingTable, RuntimeVar

_STRUCTURE: weakref.WeakKeyDictionary[Computation, tuple[Any, ...]] = weakref.WeakKeyDictionary()


def structure_key(comp: Computation) -> tuple[Any, ...]:
    """Everything about a computation that its maps depend on, without names.

    Equal keys mean equal indexing: the same instructions in the same order with the same
    opcodes, shapes, relevant attributes, literals, operand positions and called structures.
    """
    got = _STRUCTURE.get(comp)
    if got is not None:
        return got
    position = {id(i): k for k, i in enumerate(comp.instructions)}
    rows = []
    for instr in comp.instructions:
        called = (
            tuple(
                (key, tuple(structure_key(c) for c in comps))
                for key, comps in instr.called_computations.items()
            )
            if any(k in instr.attributes for k in CALL_ATTRIBUTES)
            else ()
        )
        rows.append(
            (
                instr.opcode,
                # the Shape itself, not its text: equal shapes print equally, and printing a
                # big tuple shape costs more than hashing it
                instr.shape,
                instr.is_root,
                instr.literal,
                tuple(position.get(id(o), -1) for o in instr.operands),
                tuple(
                    sorted(
                        (k, v)
                        for k, v in instr.attributes.items()
                        if k not in INDEXING_IRRELEVANT_ATTRIBUTES and k not in CALL_ATTRIBUTES
                    )
                ),
                called,
            )
        )
    got = tuple(rows)
    _STRUCTURE[comp] = got
    return got


def _runtime_producers(table: IndexingTable) -> list[Instruction]:
    out = []
    for row in table:
        for cell in row:
            out.extend(rv.producer for rv in cell.runtime_vars)
            for rvs in getattr(cell, "per_map_runtime_vars", ()):
                out.extend(rv.producer for rv in rvs)
    return out


def _repointable(table: IndexingTable, comp: Computation) -> bool:
    """Only tables whose runtime variables come from the computation itself are shared."""
    inside = {id(i) for i in comp.instructions}
    return all(id(p) in inside for p in _runtime_producers(table))


def _repoint(table: IndexingTable, first: Computation, comp: Computation) -> IndexingTable:
    """``table`` (computed for ``first``) with runtime producers moved to ``comp``'s
    instructions."""
    if not _runtime_producers(table):
        return table
    position = {id(i): k for k, i in enumerate(first.instructions)}

    def move(rvs: tuple[RuntimeVar, ...]) -> tuple[RuntimeVar, ...]:
        return tuple(
            replace(rv, producer=comp.instructions[position[id(rv.producer)]]) for rv in rvs
        )

    out: IndexingTable = []
    for row in table:
        new_row = []
        for cell in row:
            changes: dict[str, Any] = {"runtime_vars": move(cell.runtime_vars)}
            if isinstance(cell, ComposedOperandIndexing):
                changes["per_map_runtime_vars"] = tuple(move(r) for r in cell.per_map_runtime_vars)
            new_row.append(replace(cell, **changes))
        out.append(new_row)
    return out
