"""XLA's copy insertion (``xla/service/copy_insertion.cc``) for one in-place operand: whether
the buffer an in-place instruction updates can be updated where it is, or must be copied first.

An operand is copied when its buffer may not be written: a constant (read-only), an entry
parameter the module does not donate (``input_output_alias`` / ``buffer_donor``; the caller
keeps its buffer), or a value still read after the update (the old value is live). "After" is
the text's order when the module says ``is_scheduled=true`` (the text is XLA's schedule);
before scheduling, copy insertion orders by dependencies (``DependencyHloOrdering``): only a
reader the update depends on surely runs first.
"""

from __future__ import annotations

import re
import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .ir import Computation, Instruction


def skip_bitcast(instr: Instruction) -> Instruction:
    """``instr`` behind its bitcasts (no-ops for aliasing)."""
    while instr.opcode == "bitcast" and instr.operands:
        instr = instr.operands[0]
    return instr


_USERS: weakref.WeakKeyDictionary[Computation, dict[int, list[Instruction]]] = (
    weakref.WeakKeyDictionary()
)


def users_of(instr: Instruction) -> list[Instruction]:
    """The instructions of ``instr``'s computation that read it."""
    comp = instr.computation
    if comp is None:
        return []
    table = _USERS.get(comp)
    if table is None:
        table = {}
        for user in comp.instructions:
            for operand in user.operands:
                found = table.setdefault(id(operand), [])
                if not found or found[-1] is not user:
                    found.append(user)
        _USERS[comp] = table
    return table.get(id(instr), [])


def donated_parameters(module) -> set[int]:
    """Entry parameters the module lets the outputs reuse (``input_output_alias``,
    ``buffer_donor``)."""
    found: set[int] = set()
    aliases = module.attributes.get("input_output_alias", "") if module is not None else ""
    for m in re.finditer(r":\s*\(\s*(\d+)", aliases):
        found.add(int(m.group(1)))
    donors = module.attributes.get("buffer_donor", "") if module is not None else ""
    for m in re.finditer(r"\(\s*(\d+)\s*,", donors):
        found.add(int(m.group(1)))
    return found


def copy_reason(
    instr: Instruction,
    operand: Instruction,
    via: Instruction | None = None,
    sole_reader: bool = False,
) -> str:
    """Why XLA's copy insertion copies ``operand`` before the in-place kernel ``instr`` updates
    it ('' when the kernel can update it where it is). ``via``: the instruction ``operand``
    reaches ``instr`` through (a while's init tuple), not a reader of its own;
    ``sole_reader``: any other reader forces the copy (a sort's buffer sharing)."""
    value = skip_bitcast(operand)
    if value.opcode == "constant":
        return f"{operand.name} is a constant (read-only)"
    comp = instr.computation
    if value.opcode == "parameter" and comp is not None and comp.is_entry:
        module = comp.module
        if value.parameter_number not in donated_parameters(module):
            return f"{operand.name} is an entry parameter the module does not donate"
    if comp is None:
        return ""
    caller = _caller(comp) if value.opcode == "parameter" and not comp.is_entry else None
    number = value.parameter_number
    if caller is not None and number is not None and number < len(caller.operands):
        # a call's computation runs inlined (XLA's CallInliner): its parameter is the call's
        # operand, which must be writable and not read after the call
        outer = copy_reason(caller, caller.operands[number], sole_reader=sole_reader)
        if outer:
            return f"{operand.name} is {caller.name}'s operand {number}: {outer}"
    readers = [
        user
        for v in dict.fromkeys([operand, value])
        for user in users_of(v)
        if user is not instr and user is not via and user.opcode != "bitcast"
    ]
    if not readers:
        return ""
    if sole_reader:
        return f"{operand.name} is read by {readers[0].name} too"
    module = comp.module
    if module is not None and module.attributes.get("is_scheduled", "").lower() == "true":
        # the text's order is the schedule: a reader after the kernel needs the old value
        order = {id(i): k for k, i in enumerate(comp.instructions)}
        here = order.get(id(instr), -1)
        later = [u for u in readers if order.get(id(u), -1) > here]
    else:
        # before scheduling, copy insertion orders by dependencies: only a reader the kernel
        # depends on surely runs first
        before = ancestors(instr)
        later = [u for u in readers if id(u) not in before]
    if later:
        return f"{operand.name} is still read by {later[0].name} after {instr.name} updates it"
    return ""


_CALLERS: weakref.WeakKeyDictionary[object, dict[int, Instruction]] = weakref.WeakKeyDictionary()


def _caller(comp: Computation) -> Instruction | None:
    """The ``call`` whose computation ``comp`` is, when one call alone runs it."""
    module = comp.module
    if module is None:
        return None
    table = _CALLERS.get(module)
    if table is None:
        table, seen = {}, set()
        for c in module.computations.values():
            for instr in c.instructions:
                if instr.opcode != "call":
                    continue
                for callee in instr.called_computations.get("to_apply") or []:
                    if id(callee) in seen:
                        table.pop(id(callee), None)  # called from several places: not inlined once
                    else:
                        seen.add(id(callee))
                        table[id(callee)] = instr
        _CALLERS[module] = table
    return table.get(id(comp))


def ancestors(instr: Instruction) -> set[int]:
    """The instructions ``instr`` depends on, transitively, in its computation."""
    seen: set[int] = set()
    stack = list(instr.operands)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(node.operands)
    return seen


def base_copy_reason(fusion: Instruction, root: Instruction) -> str:
    """Why XLA's copy insertion copies the base of the fusion's dynamic-update-slice ``root``
    before the fusion updates it ('' when the fusion updates the base's buffer itself: copy
    insertion makes the output share it)."""
    base = skip_bitcast(skip_bitcast(root).operands[0])
    number = base.parameter_number
    if number is None or number >= len(fusion.operands):
        return ""
    return copy_reason(fusion, fusion.operands[number])
