"""Sharing work between structurally equal instructions and computations: a structural key per
instruction and a structure key per computation, and rule tables computed once and re-pointed
at each copy's runtime-value producers."""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import Any

from ..caches import register
from .composition import (
    ComposedOperandIndexing,
)
from .ir import CALL_ATTRIBUTES, INDEXING_IRRELEVANT_ATTRIBUTES, Computation, Instruction
from .op_rules import IndexingTable, OperandIndexing, RuntimeVar
from .sparse_rows import distinct_cells, map_cells

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
            if not _CALLS.isdisjoint(instr.attributes)
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


def structural_key(instr: Instruction) -> tuple[Any, ...]:
    """Everything an op's rule reads, without names: opcode, shapes, relevant attributes, and
    which operands are constants (with their literal) or iotas."""
    # asked up to three times in a row for one instruction (its analysis key, then the table
    # of each direction): the last answer is kept
    if _LAST_KEY[0] is instr:
        return _LAST_KEY[1]
    # and twice for each instruction of a fused body, one walk apart (its output-to-input
    # walk, then its input-to-output walk): the keys of the last body asked about are kept
    comp = instr.computation
    if comp is None:
        key = _structural_key(instr)
        _LAST_KEY[:] = (instr, key)
        return key
    if _BODY_KEYS[0] is comp:
        keys = _BODY_KEYS[1]
    else:
        keys = {}
        _BODY_KEYS[:] = (comp, keys)
    key = keys.get(id(instr))  # the body holds its instructions: no id is reused meanwhile
    if key is None:
        key = keys[id(instr)] = _structural_key(instr)
    _LAST_KEY[:] = (instr, key)
    return key


_LAST_KEY: list[Any] = [None, ()]
_BODY_KEYS: list[Any] = [None, {}]


def _forget_keys() -> None:
    _LAST_KEY[:] = (None, ())
    _BODY_KEYS[:] = (None, {})


register(_forget_keys)


def _structural_key(instr: Instruction) -> tuple[Any, ...]:
    # Shapes are frozen dataclasses: hashing them is cheaper than printing them, and equal
    # shapes print equally, so keying on the objects never merges what the text would split.
    # A custom-call's backend_config says what it computes (a gemm's dimension numbers, an
    # attention's mask): it is part of the key there.
    # A called computation (a reduce's `to_apply=%region_17`) is keyed by its structure, not its
    # name, as :func:`structure_key` keys the calls inside a body: a module names a fresh region
    # for each of its thousands of reduces and all-reduces, all alike. A rule that reads the
    # computation (a sort's comparator, an async start's wrapped op) reads only what the
    # structure holds (opcodes, operand positions, parameter numbers as literals). A
    # collective's channel_id pairs it with its peers and changes no index: no rule reads it
    # (`hloidx summary` groups without it too).
    custom = instr.opcode == "custom-call"
    attributes = instr.attributes
    called = None if _CALLS.isdisjoint(attributes) else _called_or_none(instr)
    unkeyed = _UNKEYED_CUSTOM if custom else _UNKEYED
    operands = instr.operands
    return (
        instr.opcode,
        instr.shape,
        tuple([o.shape for o in operands]),
        tuple(
            sorted(
                [
                    (k, _called_structure(called, k) if called is not None and k in called else v)
                    for k, v in attributes.items()
                    if k not in unkeyed
                ]
            )
        ),
        tuple([o.literal if o.opcode == "constant" else o.opcode == "iota" for o in operands]),
    )


#: attributes left out of an op's structural key (a custom-call keeps its backend_config)
_UNKEYED = INDEXING_IRRELEVANT_ATTRIBUTES | {"channel_id"}
_UNKEYED_CUSTOM = _UNKEYED - {"backend_config"}
_CALLS = frozenset(CALL_ATTRIBUTES)


def _called_or_none(instr: Instruction) -> dict[str, list[Computation]] | None:
    """The computations ``instr`` calls; None when a call attribute does not parse (then the
    key keeps the attribute's text, and the rule reports the error)."""
    try:
        return instr.called_computations
    except Exception:
        return None


def _called_structure(called: dict[str, list[Computation]], attribute: str) -> tuple[Any, ...]:
    """The structures a call attribute names, in order, marked apart from any attribute text."""
    return ("called", tuple(structure_key(c) for c in called[attribute]))


def rebind(table: IndexingTable, first: Instruction, instr: Instruction) -> IndexingTable:
    """``table`` (computed for ``first``, structurally identical to ``instr``) with runtime
    variables re-pointed at ``instr``'s own operands."""
    if not _runtime_producers(table):
        return table  # nothing names an operand: the very table serves both
    positions = {id(o): i for i, o in enumerate(first.operands)}

    def fix(rv: RuntimeVar) -> RuntimeVar:
        pos = positions.get(id(rv.producer))
        if pos is None or pos >= len(instr.operands):
            return rv
        return replace(rv, producer=instr.operands[pos])

    return map_cells(
        table,
        lambda cell: (
            replace(cell, runtime_vars=tuple(fix(rv) for rv in cell.runtime_vars))
            if cell.runtime_vars
            else cell
        ),
    )


def _runtime_producers(table: IndexingTable) -> list[Instruction]:
    out = []
    for row in table:
        for cell in distinct_cells(row):
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

    def moved(cell: OperandIndexing) -> OperandIndexing:
        changes: dict[str, Any] = {"runtime_vars": move(cell.runtime_vars)}
        if isinstance(cell, ComposedOperandIndexing):
            changes["per_map_runtime_vars"] = tuple(move(r) for r in cell.per_map_runtime_vars)
        return replace(cell, **changes)

    return map_cells(table, moved)


def names_inside(table: IndexingTable) -> bool:
    """Whether a composed table carries notes: they name instructions of the body (`through
    add.3: ...`), which a structurally equal body calls otherwise."""
    return any(cell.notes for row in table for cell in distinct_cells(row))


# ---------------------------------------------------------------------------
# An op's rule table, shared by structure across the bodies composed
# ---------------------------------------------------------------------------

#: Fused bodies that differ somewhere still repeat most of their ops (the same bitcast on the
#: same shapes): their rule tables are computed once, by :func:`structural_key`, and
#: re-pointed at each op's own runtime-value producers. Errors are not kept: they name the op.
#: Each entry says whether its table names any producer: most do not, and the very table then
#: serves every copy without looking again.
_OP_TABLES: dict[tuple[Any, ...], tuple[Instruction, IndexingTable, bool]] = {}
register(_OP_TABLES.clear)


def op_table(instr: Instruction, direction: str, rule: Any) -> IndexingTable:
    key = (direction, *structural_key(instr))
    hit = _OP_TABLES.get(key)
    if hit is not None:
        first, table, named = hit
        return rebind(table, first, instr) if named and first is not instr else table
    table = rule(instr)
    if len(_OP_TABLES) < 65536:
        _OP_TABLES[key] = (instr, table, bool(_runtime_producers(table)))
    return table
