"""The copies XLA makes around buffers updated in place that the in-place kernel itself does
not decide: a while loop's carried state, and a sort's operands.

Facts (openxla/xla):

- A while loop's state is one set of buffers: the init tuple's, the body's parameter's, the
  body's root's and the loop's output are the same allocations (``HloDataflowAnalysis``'s
  while values, ``copy_insertion.cc``'s ``AddCopiesForWhile``, then ``RemoveUnnecessaryCopies``
  keeps the copies whose removal would make live ranges interfere). So:

  - before the loop, an init element the body rewrites (its root's slot ``i`` is not the
    parameter's slot ``i`` passed through) is copied when its buffer may not be written (a
    constant, an entry parameter the module does not donate, a value read after the loop
    starts): ``copy_reason`` with the init tuple as the way in;
  - in the body, slot ``i``'s new value is written into slot ``i``'s buffer: when it is not an
    in-place update of the old value, the old value is copied if it is still read by an
    instruction the new value does not depend on (before scheduling; after a reader later in
    the text once scheduled), or when the new value is another slot's old value; an in-place
    kernel updating the old value (a DUS or scatter on the carried buffer) copies it only under
    its own rule (:func:`hloidx.hlo.copy_insertion.copy_reason`), so the stacked results of a
    ``lax.scan`` or a KV cache are updated where they are.

  XLA's optimized HLO already holds these copies (``copy.10 = copy(h0)`` before the loop,
  ``copy.4 = copy(get-tuple-element)`` of the counter in the body): there the rules find
  nothing more to copy.
- A sort is no in-place pair for copy insertion; XLA's sort emitter (``EmitSort``) sorts in its
  output buffers and, for each operand whose buffer is not shared with its output, first adds
  a device-to-device copy of it. Buffer sharing (``HloDataflowAnalysis::CanShareBuffer``)
  requires the sort to be the operand's only user, and a buffer that may be written (not a
  constant or an entry parameter the module keeps).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from ..hlo.copy_insertion import ancestors, copy_reason, skip_bitcast, users_of
from .in_place import aliased_operands

if TYPE_CHECKING:
    from ..hlo.ir import Computation, HloModule, Instruction

#: each module's while bodies: id(body) -> the while that runs it
_BODIES: weakref.WeakKeyDictionary[HloModule, dict[int, Instruction]] = weakref.WeakKeyDictionary()
#: each body's rewritten slots by their new value: id(value) -> [slot, ...]
_SLOTS: weakref.WeakKeyDictionary[Computation, dict[int, list[int]]] = weakref.WeakKeyDictionary()


def _body(instr: Instruction) -> Computation | None:
    return (instr.called_computations.get("body") or [None])[0]


def _while_of(comp: Computation) -> Instruction | None:
    module = comp.module
    if module is None:
        return None
    table = _BODIES.get(module)
    if table is None:
        table = {}
        for c in module.computations.values():
            for instr in c.instructions:
                body = _body(instr) if instr.opcode == "while" else None
                if body is not None:
                    table[id(body)] = instr
        _BODIES[module] = table
    return table.get(id(comp))


def _gte_index(instr: Instruction, param: Instruction) -> int | None:
    """The slot of ``param`` that ``instr`` (behind bitcasts) is, if it is one."""
    value = skip_bitcast(instr)
    if value.opcode == "get-tuple-element" and value.operands and value.operands[0] is param:
        return value.tuple_index
    return None


def _state(body: Computation) -> tuple[Instruction, Instruction] | None:
    root = body.root
    params = [i for i in body.instructions if i.opcode == "parameter"]
    if root is None or root.opcode != "tuple" or len(params) != 1:
        return None
    return params[0], root


def rewritten_slots(body: Computation) -> dict[int, list[int]]:
    """The body's slots whose new value is not the old one passed through, by the id of the
    new value (behind bitcasts)."""
    found = _SLOTS.get(body)
    if found is None:
        found = {}
        state = _state(body)
        if state is not None:
            param, root = state
            for i, value in enumerate(root.operands):
                if _gte_index(value, param) != i:
                    found.setdefault(id(skip_bitcast(value)), []).append(i)
        _SLOTS[body] = found
    return found


def while_init_copies(loop: Instruction) -> list[tuple[Instruction, str]]:
    """The init elements XLA copies before ``loop`` starts, with why."""
    body = _body(loop)
    init = loop.operands[0] if loop.operands else None
    if body is None or init is None or init.opcode != "tuple":
        return []
    slots = sorted(i for found in rewritten_slots(body).values() for i in found)
    out: dict[int, tuple[Instruction, str]] = {}
    for i in slots:
        if i >= len(init.operands):
            continue
        element = init.operands[i]
        reason = copy_reason(loop, element, via=init)
        if reason and id(element) not in out:
            out[id(element)] = (
                element,
                f"a copy XLA inserts before {loop.name}, whose body rewrites slot {i} of the "
                f"loop state in its buffer: {reason}",
            )
    return list(out.values())


def _is_scheduled(comp: Computation) -> bool:
    module = comp.module
    return module is not None and module.attributes.get("is_scheduled", "").lower() == "true"


def body_copies(instr: Instruction) -> list[tuple[Instruction, str]]:
    """The copies XLA inserts in a while body before ``instr`` writes a slot's new value (see
    the module's docstring), with why."""
    comp = instr.computation
    if comp is None or _while_of(comp) is None:
        return []
    slots = rewritten_slots(comp).get(id(instr))
    state = _state(comp) if slots else None
    if not slots or state is None:
        return []
    param = state[0]
    out: list[tuple[Instruction, str]] = []
    for i in slots:
        source = _gte_index(instr, param)
        if source is not None:  # another slot's old value carried into this one
            out.append((instr, f"a copy XLA inserts in the loop body: slot {source}'s old "
                               f"value is carried into slot {i}"))  # fmt: skip
            continue
        old = [u for u in users_of(param) if _gte_index(u, param) == i]
        updated = {id(skip_bitcast(instr.operands[k])) for k in aliased_operands(instr)}
        if any(id(o) in updated for o in old):
            continue  # an in-place update of the old value: its own rule decides
        reader = _later_reader(instr, old)
        if reader is not None:
            out.append((old[0], f"a copy XLA inserts in the loop body: {instr.name} rewrites "
                                f"slot {i} of the loop state while {reader.name} still reads "
                                "its old value"))  # fmt: skip
    return out


def _later_reader(value: Instruction, old: list[Instruction]) -> Instruction | None:
    """A reader of the old value that may run after ``value`` is written."""
    comp = value.computation
    readers = [u for o in old for u in users_of(o) if u is not value and u.opcode != "bitcast"]
    if comp is not None and _is_scheduled(comp):
        order = {id(i): k for k, i in enumerate(comp.instructions)}
        here = order.get(id(value), -1)
        return next((u for u in readers if order.get(id(u), -1) > here), None)
    before = ancestors(value)
    return next((u for u in readers if id(u) not in before), None)


def sort_copies(sort: Instruction) -> list[tuple[Instruction, str]]:
    """The operands XLA's sort emitter copies into the sort's output buffers first."""
    out = []
    for operand in dict.fromkeys(sort.operands):
        reason = copy_reason(sort, operand, sole_reader=True)
        if reason:
            out.append(
                (
                    operand,
                    f"XLA's sort emitter first copies it into {sort.name}'s output buffer, "
                    f"where it sorts in place (a device-to-device copy): {reason}",
                )
            )
    return out
