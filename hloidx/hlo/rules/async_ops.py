"""Asynchronous wrappers and point-to-point transfers.

``async-start`` runs one op (the root of its ``calls=`` computation) asynchronously; XLA also
prints it in a short form, ``reduce-scatter-start(...)`` with the op's attributes inline. Its
result is a tuple ``((operands...), result, context...)``: element 1 holds what the wrapped
op computes, so it reads what the op reads; ``async-update`` passes the tuple on and
``async-done`` returns element 1. ``send``/``recv`` and their ``-done`` halves move a buffer
between devices: nothing a recv delivers is read from this module's values.
"""

from __future__ import annotations

from dataclasses import replace

from ...maps.indexing_map import IndexingMap
from ..ir import Instruction, Shape
from ..opcodes import async_sugar
from ..rule_registry import (
    IndexingTable,
    OperandIndexing,
    input_to_output,
    input_to_output_rule,
    output_to_input,
    output_to_input_rule,
)
from ._common import identity, no_reads, output_shapes, single, unsupported

#: element 1 of an async tuple is the wrapped op's result
RESULT_ELEMENT = 1

_OPERANDS_NOTE = "element 0 of the tuple holds the operands as they are (operand k at {0, k})"


def _start_elements(instr: Instruction) -> list[Shape]:
    outputs = output_shapes(instr)
    if len(outputs) < 2 or not outputs[0].is_tuple:
        raise unsupported(instr, "an async start returns ((operands...), result, context...)")
    if not outputs[RESULT_ELEMENT].is_array:
        raise unsupported(instr, "the wrapped op's result is a tuple: nested tuples")
    return outputs


def wrapped_instruction(instr: Instruction) -> Instruction:
    """The op an async start runs, with the start's operands and result shape."""
    result = _start_elements(instr)[RESULT_ELEMENT]
    sugar = async_sugar(instr.opcode)
    if sugar is not None:
        return replace(instr, opcode=sugar[0], shape=result)
    called = instr.called_computations.get("calls") or []
    root = called[0].root if called else None
    if root is None:
        raise unsupported(instr, "names no computation to run (calls=)")
    if not root.operands or any(o.opcode != "parameter" for o in root.operands):
        raise unsupported(instr, "only a computation that is one op over its parameters")
    operands = []
    for parameter in root.operands:
        k = parameter.parameter_number
        if k is None or not 0 <= k < len(instr.operands):
            raise unsupported(instr, "the wrapped op reads a parameter the start does not pass")
        operands.append(instr.operands[k])
    return replace(root, operands=operands, shape=result)


def _not_the_result(element: Shape) -> OperandIndexing:
    # the contexts are handles that read no element
    return no_reads() if element.is_array else OperandIndexing((), notes=(_OPERANDS_NOTE,))


@output_to_input_rule("async-start")
def async_start_output_to_input(instr: Instruction) -> IndexingTable:
    outputs = _start_elements(instr)
    wrapped = wrapped_instruction(instr)
    row = output_to_input(wrapped)[0]
    operands = [
        OperandIndexing((identity(o.shape.dims),), notes=(_OPERANDS_NOTE,))
        if o.shape.is_array
        else OperandIndexing(())
        for o in instr.operands
    ]
    table: IndexingTable = [operands, list(row)]
    table.extend([no_reads() for _ in instr.operands] for _ in outputs[2:])
    return table


@input_to_output_rule("async-start")
def async_start_input_to_output(instr: Instruction) -> IndexingTable:
    outputs = _start_elements(instr)
    wrapped = wrapped_instruction(instr)
    rows = input_to_output(wrapped)
    table: IndexingTable = []
    for k, operand in enumerate(instr.operands):
        into_operands = (
            OperandIndexing((identity(operand.shape.dims),), notes=(_OPERANDS_NOTE,))
            if operand.shape.is_array
            else OperandIndexing(())
        )
        into_result = rows[k][0] if k < len(rows) else no_reads()
        table.append([into_operands, into_result, *(no_reads() for _ in outputs[2:])])
    return table


def _pass_on(instr: Instruction) -> list[OperandIndexing]:
    """One cell per element of the tuple an async-update passes on unchanged."""
    cells = []
    for k, element in enumerate(output_shapes(instr)):
        if element.is_array:
            cells.append(replace(single(identity(element.dims)), element=k))
        else:
            cells.append(OperandIndexing((), notes=(_OPERANDS_NOTE,)))
    return cells


@output_to_input_rule("async-update")
def async_update_output_to_input(instr: Instruction) -> IndexingTable:
    if not instr.operands or instr.operands[0].shape != instr.shape:
        raise unsupported(instr, "an async update returns its operand's tuple")
    return [[cell] for cell in _pass_on(instr)]


@input_to_output_rule("async-update")
def async_update_input_to_output(instr: Instruction) -> IndexingTable:
    if not instr.operands or instr.operands[0].shape != instr.shape:
        raise unsupported(instr, "an async update returns its operand's tuple")
    return [_pass_on(instr)]


def _done_cell(instr: Instruction) -> OperandIndexing:
    start = instr.operands[0].shape if instr.operands else None
    elements = start.tuple_shapes if start is not None else None
    if not elements or len(elements) <= RESULT_ELEMENT:
        raise unsupported(instr, "reads the tuple of an async start")
    if elements[RESULT_ELEMENT].dims != instr.shape.dims or not instr.shape.is_array:
        raise unsupported(instr, "returns element 1 of its start's tuple")
    return replace(single(identity(instr.shape.dims)), element=RESULT_ELEMENT)


@output_to_input_rule("async-done")
def async_done_output_to_input(instr: Instruction) -> IndexingTable:
    return [[_done_cell(instr)]]


@input_to_output_rule("async-done")
def async_done_input_to_output(instr: Instruction) -> IndexingTable:
    return [[_done_cell(instr)]]


# ---------------------------------------------------------------------------
# send / recv: (buffer, context, token) tuples
# ---------------------------------------------------------------------------

_SENT = "sent to another device (channel_id)"
_RECEIVED = "received from another device: no value of this module is read"


@output_to_input_rule("send")
def send_output_to_input(instr: Instruction) -> IndexingTable:
    # element 0 is the buffer being sent, the data operand as it is; the rest are handles
    outputs = output_shapes(instr)
    data = instr.operands[0].shape
    if not outputs or outputs[0].dims != data.dims:
        raise unsupported(instr, "send returns (data, context, token)")
    first = [OperandIndexing((identity(data.dims),), notes=(_SENT,)), no_reads()]
    return [first] + [[no_reads(), no_reads()] for _ in outputs[1:]]


@input_to_output_rule("send")
def send_input_to_output(instr: Instruction) -> IndexingTable:
    outputs = output_shapes(instr)
    data = instr.operands[0].shape
    if not outputs or outputs[0].dims != data.dims:
        raise unsupported(instr, "send returns (data, context, token)")
    rest = [no_reads() for _ in outputs[1:]]
    return [
        [OperandIndexing((identity(data.dims),), notes=(_SENT,)), *rest],
        [no_reads() for _ in outputs],
    ]


@output_to_input_rule("recv")
def recv_output_to_input(instr: Instruction) -> IndexingTable:
    # the token operand carries no data; the buffer is filled from another device
    received = OperandIndexing((IndexingMap.known_empty(),), notes=(_RECEIVED,))
    return [[received if out.is_array else no_reads()] for out in output_shapes(instr)]


@input_to_output_rule("recv")
def recv_input_to_output(instr: Instruction) -> IndexingTable:
    return [[no_reads() for _ in output_shapes(instr)]]


@output_to_input_rule("recv-done")
def recv_done_output_to_input(instr: Instruction) -> IndexingTable:
    # (data, token): element 0 of recv's (data, context, token)
    outputs = output_shapes(instr)
    if not outputs or not outputs[0].is_array:
        raise unsupported(instr, "recv-done returns (data, token)")
    data = replace(single(identity(outputs[0].dims)), element=0)
    return [[data]] + [[no_reads()] for _ in outputs[1:]]


@input_to_output_rule("recv-done")
def recv_done_input_to_output(instr: Instruction) -> IndexingTable:
    outputs = output_shapes(instr)
    if not outputs or not outputs[0].is_array:
        raise unsupported(instr, "recv-done returns (data, token)")
    data = replace(single(identity(outputs[0].dims)), element=0)
    return [[data, *(no_reads() for _ in outputs[1:])]]


@output_to_input_rule("send-done")
def send_done_output_to_input(instr: Instruction) -> IndexingTable:
    return [[no_reads()]]  # a token: no elements


@input_to_output_rule("send-done")
def send_done_input_to_output(instr: Instruction) -> IndexingTable:
    return [[no_reads()]]
