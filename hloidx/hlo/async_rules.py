"""XLA's rules for asynchronous ops: ``async-start`` / ``-update`` / ``-done`` (and the short
forms ``custom-call-start(...)`` XLA prints for a wrapped op) pair up as XLA's parser requires.

* a start's (and an update's) shape is a tuple whose first element is the tuple of the
  wrapped operands' shapes;
* an update or a done reads the previous op of its chain (a start or an update of the same
  kind); the computation and execution thread it names, if it names them, are the start's;
* no computation is wrapped by two starts.

The analysis reads an async chain through the wrapped computation, so a chain that does not
pair up is rejected rather than read wrongly. Used by :mod:`.shape_check`.
"""

from __future__ import annotations

from .ir import HloModule, Instruction
from .opcodes import async_sugar

Problem = tuple[str, str | None]  # (message, attribute at fault or None)

_GENERIC = {"async-start": "start", "async-update": "update", "async-done": "done"}


def async_phase(opcode: str) -> tuple[str, str] | None:
    """``(kind, phase)``: kind ``async`` for XLA's generic form, else the wrapped opcode."""
    if opcode in _GENERIC:
        return "async", _GENERIC[opcode]
    sugar = async_sugar(opcode)
    return sugar


def check_async(instr: Instruction) -> Problem | None:
    """The first rule ``instr`` (an async op) breaks, or None."""
    kind, phase = async_phase(instr.opcode) or (None, None)
    if kind is None:
        return None
    if phase in ("start", "update"):
        elements = instr.shape.tuple_shapes
        if elements is None or len(elements) < 2 or elements[0].tuple_shapes is None:
            return (
                f"{instr.name}: an async {phase}'s shape is a tuple whose first element is "
                "the tuple of the wrapped operands' shapes",
                None,
            )
        if phase == "start":
            return None
    previous = instr.operands[0] if len(instr.operands) == 1 else None
    before = async_phase(previous.opcode) if previous is not None else None
    if (
        before is None
        or before[1] == "done"
        or not (before[0] == kind or "async" in (kind, before[0]))
    ):
        return (
            f"{instr.name}: an async update or done reads the previous async op of its chain "
            f"(a start or an update of the same kind)",
            None,
        )
    start = previous
    while async_phase(start.opcode)[1] == "update" and len(start.operands) == 1:
        following = async_phase(start.operands[0].opcode)
        if following is None:
            break
        start = start.operands[0]
    for key, default in (("calls", None), ("async_execution_thread", '"main"')):
        mine = instr.attributes.get(key)  # left out: the start's
        theirs = start.attributes.get(key, default)
        if mine is not None and theirs is not None and _name(mine) != _name(theirs):
            return (f"{instr.name}: {key}={mine} differs from its start's ({theirs})", key)
    return None


def _name(value: str) -> str:
    return value.strip().strip('"').lstrip("%")


def shared_wrapped_computations(module: HloModule) -> list[tuple[Instruction, str]]:
    """Async starts wrapping a computation an earlier start already wraps."""
    seen: dict[str, Instruction] = {}
    found = []
    for instr in module.instructions():
        phase = async_phase(instr.opcode)
        if phase is None or phase[1] != "start" or "calls" not in instr.attributes:
            continue
        called = _name(instr.attributes["calls"])
        if called in seen:
            found.append(
                (
                    instr,
                    f"{instr.name}: computation {called} is already wrapped by {seen[called].name}",
                )
            )
        else:
            seen[called] = instr
    return found
