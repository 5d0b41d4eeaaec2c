"""An ``HloModuleProto`` as the HLO text XLA prints for it (what jaxlib's
``XlaComputation(proto).as_hlo_text()`` returns), for the text parser to read: the same
module header, computations in the same order, instructions in schedule order (a scheduled
module) or XLA's post order, async wrappers folded into their ``*-start`` as XLA prints them.

Instruction ids in a proto are unique in their computation (often in the module) and may be
large; they are only ever keys of dictionaries here."""

from __future__ import annotations

from typing import Any

from .proto_attributes import Context, extra_attributes, frontend_attributes_text
from .proto_values import literal_text, shape_text

__all__ = ["module_proto_text"]


def _post_order(instructions: list[Any], by_id: dict[int, Any]) -> list[Any]:
    """XLA's HloComputation::MakeInstructionPostOrder: a depth-first walk from every
    instruction nobody uses, operands first (first operand first), then control
    predecessors."""
    used: set[int] = set()
    for ins in instructions:
        used.update(ins.operand_ids)
        used.update(ins.control_predecessor_ids)
    order: list[Any] = []
    state: dict[int, int] = {}  # 1 visiting, 2 done
    for root in instructions:
        if root.id in used or root.id in state:
            continue
        stack = [root.id]
        while stack:
            current = stack[-1]
            seen = state.get(current)
            if seen is not None:
                stack.pop()
                if seen == 1:
                    state[current] = 2
                    order.append(by_id[current])
                continue
            state[current] = 1
            ins = by_id[current]
            for pred in reversed(ins.control_predecessor_ids):
                if pred in by_id and pred not in state:
                    stack.append(pred)
            for operand in reversed(ins.operand_ids):
                if operand in by_id and operand not in state:
                    stack.append(operand)
    # instructions on a cycle or otherwise unreached keep their place at the end
    order.extend(ins for ins in instructions if ins.id not in state)
    return order


def _listed(computation: Any) -> list[Any]:
    """A computation's instructions in the order XLA keeps them once read from a proto:
    sorted by id (HloComputation::CreateFromProto)."""
    return sorted(computation.instructions, key=lambda ins: ins.id)


def _computation_order(module: Any) -> tuple[list[Any], dict[int, list[Any]]]:
    """XLA's HloModule::MakeComputationPostOrder: for every computation nobody calls (by id,
    the order XLA keeps computations read from a proto), the computations it embeds, depth
    first in instruction order (a called computation is claimed when its caller is reached),
    then itself. Also each computation's instructions by id."""
    computations = sorted(module.computations, key=lambda c: c.id)
    by_id = {c.id: c for c in computations}
    listed = {c.id: _listed(c) for c in computations}
    called: set[int] = set()
    for c in computations:
        for ins in c.instructions:
            called.update(ins.called_computation_ids)
    order: list[Any] = []
    added: set[int] = set()
    for top in computations:
        if top.id in called:
            continue
        visited: set[int] = set()
        embedded: list[Any] = []
        for ins in listed[top.id]:
            stack: list[list[Any]] = []

            def push(ids: Any, stack: list[list[Any]] = stack, visited: set[int] = visited) -> None:
                for cid in reversed(list(ids)):
                    if cid in by_id and cid not in visited:
                        visited.add(cid)
                        stack.append([by_id[cid], 0])

            push(ins.called_computation_ids)
            while stack:
                frame = stack[-1]
                computation, at = frame
                instructions = listed[computation.id]
                if at == len(instructions):
                    stack.pop()
                    embedded.append(computation)
                else:
                    frame[1] = at + 1
                    push(instructions[at].called_computation_ids)
        for c in embedded:
            if c.id not in added:
                added.add(c.id)
                order.append(c)
        if top.id not in added:
            added.add(top.id)
            order.append(top)
    return order, listed


def _single_wrapped(computation: Any) -> Any | None:
    """The one instruction of an async computation that XLA prints folded into its
    ``*-start``: parameters feeding a root, in order, and nothing else."""
    root = next((i for i in computation.instructions if i.id == computation.root_id), None)
    if root is None or root.opcode == "parameter":
        return None
    params = [i for i in computation.instructions if i.opcode == "parameter"]
    if len(computation.instructions) != len(params) + 1:
        return None
    by_id = {i.id: i for i in params}
    for number, operand in enumerate(root.operand_ids):
        param = by_id.get(operand)
        if param is None or param.parameter_number != number:
            return None
    if len(root.operand_ids) != len(params):
        return None
    return root


def _alias_text(module: Any) -> str:
    entries = []
    for e in module.input_output_alias.entries:
        kind = "must-alias" if e.kind == 2 else "may-alias"
        output = "{" + ", ".join(str(i) for i in e.output_shape_index) + "}"
        param = "{" + ", ".join(str(i) for i in e.parameter_shape_index) + "}"
        entries.append(f"{output}: ({e.parameter_number}, {param}, {kind})")
    return "{ " + ", ".join(entries) + " }"


def _donor_text(module: Any) -> str:
    entries = []
    for e in module.buffer_donor.entries:
        param = "{" + ", ".join(str(i) for i in e.parameter_shape_index) + "}"
        entries.append(f"({e.parameter_number}, {param})")
    return "{ " + ", ".join(entries) + " }"


def _entry_layout(program_shape: Any) -> str:
    params = []
    for i, p in enumerate(program_shape.parameters):
        params.append((f"/*index={i}*/" if i and i % 5 == 0 else "") + shape_text(p))
    return "{(" + ", ".join(params) + ")->" + shape_text(program_shape.result) + "}"


def _header(module: Any) -> str:
    parts = [f"HloModule {module.name}"]
    if module.HasField("schedule") and module.schedule.sequences:
        parts.append("is_scheduled=true")
    if module.input_output_alias.entries:
        parts.append("input_output_alias=" + _alias_text(module))
    if module.buffer_donor.entries:
        parts.append("buffer_donor=" + _donor_text(module))
    if module.HasField("host_program_shape"):
        parts.append("entry_computation_layout=" + _entry_layout(module.host_program_shape))
    if module.frontend_attributes.map:
        parts.append(
            "frontend_attributes=" + frontend_attributes_text(module.frontend_attributes.map)
        )
    return ", ".join(parts)


_ASYNC = ("async-start", "async-update", "async-done")


def _async_wrapped(
    ins: Any, by_id: dict[int, Any], wrapped: dict[int, tuple[Any, str]]
) -> tuple[Any, str] | None:
    """The folded instruction (and thread) of an async-start, -update or -done: by its called
    computation, or (newer XLA writes none on -update and -done) by its start's."""
    for _ in range(64):  # a chain start -> update -> ... -> done; bounded
        if ins.opcode not in _ASYNC:
            return None
        if ins.called_computation_ids:
            return wrapped.get(ins.called_computation_ids[0])
        if ins.opcode == "async-start" or not ins.operand_ids:
            return None
        ins = by_id.get(ins.operand_ids[0])
        if ins is None:
            return None
    return None


def _instruction_line(
    ins: Any,
    ctx: Context,
    names: dict[int, str],
    is_root: bool,
    folded: tuple[Any, str] | None,
) -> str:
    opcode = ins.opcode
    inner = None
    thread = ""
    if folded is not None:
        inner, thread = folded
        opcode = inner.opcode + opcode[len("async") :]
    if ins.opcode == "constant":
        operands = literal_text(ins.literal, ins.shape)
    elif ins.opcode == "parameter":
        operands = str(ins.parameter_number)
    else:
        operands = ", ".join(names[i] for i in ins.operand_ids)
    attrs = extra_attributes(
        ins, ctx, names, inner if ins.opcode == "async-start" else None, thread
    )
    if inner is not None and ins.opcode != "async-start":
        # -update and -done print only what they carry themselves
        attrs = [a for a in attrs if not a.startswith("calls=")]
    text = f"{ins.name} = {shape_text(ins.shape)} {opcode}({operands})"
    if attrs:
        text += ", " + ", ".join(attrs)
    return ("ROOT " if is_root else "") + text


def module_proto_text(module: Any) -> str:
    """The HLO text of an ``HloModuleProto`` message."""
    names = {c.id: c.name for c in module.computations}
    ctx = Context(names)
    # async computations folded into their -start (printed nowhere else)
    wrapped: dict[int, tuple[Any, str]] = {}
    folded: set[int] = set()
    for c in module.computations:
        for ins in c.instructions:
            if ins.opcode == "async-start" and ins.called_computation_ids:
                target = next(
                    (k for k in module.computations if k.id == ins.called_computation_ids[0]),
                    None,
                )
                inner = _single_wrapped(target) if target is not None else None
                if inner is not None:
                    wrapped[target.id] = (inner, target.execution_thread)
                    folded.add(target.id)
    schedule = module.schedule.sequences if module.HasField("schedule") else {}
    entry_id = module.entry_computation_id
    if not any(c.id == entry_id for c in module.computations):
        entry_id = next(
            (c.id for c in module.computations if c.name == module.entry_computation_name),
            module.computations[-1].id if module.computations else -1,
        )
    blocks = [_header(module)]
    order, listed = _computation_order(module)
    for c in order:
        if c.id in folded:
            continue
        instructions = listed[c.id]
        by_id = {ins.id: ins for ins in instructions}
        local = {key: ins.name for key, ins in by_id.items()}
        ctx.instructions = by_id
        sequence = schedule.get(c.id) if schedule else None
        if sequence is not None and len(sequence.instruction_ids) == len(instructions):
            ordered = [by_id[i] for i in sequence.instruction_ids if i in by_id]
        else:
            ordered = _post_order(instructions, by_id)
        lines = [("ENTRY " if c.id == entry_id else "") + c.name + " {"]
        for ins in ordered:
            folded_into = _async_wrapped(ins, by_id, wrapped) if ins.opcode in _ASYNC else None
            line = _instruction_line(ins, ctx, local, ins.id == c.root_id, folded_into)
            lines.append("  " + line)
        closing = "}"
        if c.execution_thread and c.execution_thread != "main":
            closing += f', execution_thread="{c.execution_thread}"'
        lines.append(closing)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n\n"
