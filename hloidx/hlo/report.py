"""Plain-dict reports: the JSON documents hloidx prints (and the data the renderer shows)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..caches import memo
from ..errors import HloidxError
from ..maps.indexing_map import IndexingMap
from ..maps.printer import format_map as _format_map
from .analysis import InstructionAnalysis, ModuleAnalysis, OperandAnalysis


@memo(65536)
def format_map(m: IndexingMap, spelling: str = "floordiv") -> str:
    """Printed maps are memoised: a large module prints the same few thousand maps many times."""
    return _format_map(m, spelling)


SCHEMA_VERSION = 1


def error_to_json(error: HloidxError) -> dict[str, Any]:
    out: dict[str, Any] = {"message": error.message, "kind": type(error).__name__}
    if error.span is not None:
        out["location"] = error.span.location()
        out["line"] = error.span.line
        out["column"] = error.span.column
    return out


_NO_LABEL = object()


def verdict_label(verdict: Any) -> str:
    # not getattr(verdict, "label", str(verdict)): that prints every verdict only to drop it
    label = getattr(verdict, "label", _NO_LABEL)
    return str(verdict) if label is _NO_LABEL else label


def _maps_json(maps: Any, spelling: str, asked: bool) -> list[str]:
    # a direction that was not asked for is empty; one asked for with no map is UNDEFINED
    if not asked:
        return []
    return [format_map(m, spelling) for m in maps] or ["UNDEFINED"]


def operand_to_json(
    op: OperandAnalysis,
    spelling: str = "floordiv",
    direction: str = "both",
    printed: dict[int, tuple[OperandAnalysis, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """One operand's JSON. With ``printed`` (a dict kept for one report), the part an operand
    shares with the one it reuses (:attr:`OperandAnalysis.shared_from`) is built once."""
    source = op.shared_from
    if printed is None or source is None:
        body = _operand_body(op, spelling, direction)
    else:
        # the entry holds the source itself, so its id is not reused while the entry lives
        entry = printed.get(id(source))
        if entry is None:
            entry = printed[id(source)] = (source, _operand_body(source, spelling, direction))
        body = entry[1]
    return {"index": op.index, "name": op.name, "shape": op.shape, **body}


def _operand_body(op: OperandAnalysis, spelling: str, direction: str) -> dict[str, Any]:
    """Everything of an operand's JSON but its index, name and shape."""
    if op.map_names is not None:  # --names roles: each map's variables, name, kind and role
        from ..maps.var_names import variables_json

        o2i, i2o = op.map_names
        variables = {
            "output_to_input": [
                variables_json(m, n) for m, n in zip(op.output_to_input, o2i, strict=False)
            ],
            "input_to_output": [
                variables_json(m, n) for m, n in zip(op.input_to_output, i2o, strict=False)
            ],
        }
        return {**_operand_maps_body(op, spelling, direction), "variables": variables}
    return _operand_maps_body(op, spelling, direction)


def _operand_maps_body(op: OperandAnalysis, spelling: str, direction: str) -> dict[str, Any]:
    return {
        "output_to_input": _maps_json(op.output_to_input, spelling, direction != "i2o"),
        "input_to_output": _maps_json(op.input_to_output, spelling, direction != "o2i"),
        "output_to_input_verdicts": [
            verdict_label(v) if v is not None else None for v in op.output_to_input_verdicts
        ],
        "input_to_output_verdicts": [
            verdict_label(v) if v is not None else None for v in op.input_to_output_verdicts
        ],
        "exact": bool(op.exact) and not op.is_undefined if op.exact is not None else False,
        "status": op.status or None,
        "tuple_element": op.element,
        "notes": list(op.notes),
        "utilization": op.utilization.to_json() if op.utilization is not None else None,
        "runtime_variables": [
            {"name": name, "producer": producer, "map": format_map(m, spelling)}
            for name, producer, m, _ in op.runtime_vars
        ],
        "verdicts": [verdict_label(v) for v in op.verdicts],
    }


def instruction_to_json(
    ins: InstructionAnalysis,
    spelling: str = "floordiv",
    direction: str = "both",
    printed: dict[int, tuple[OperandAnalysis, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    return {
        "computation": ins.computation,
        "name": ins.name,
        "opcode": ins.opcode,
        "shape": ins.shape,
        "operands": [operand_to_json(o, spelling, direction, printed) for o in ins.operands],
        "notes": list(ins.notes),
    }


def module_to_json(analysis: ModuleAnalysis, spelling: str = "floordiv") -> dict[str, Any]:
    printed: dict[int, tuple[OperandAnalysis, dict[str, Any]]] = {}  # see operand_to_json
    return {
        "schema_version": SCHEMA_VERSION,
        "module": analysis.module,
        "direction": analysis.direction,
        "instructions": [
            instruction_to_json(i, spelling, analysis.direction, printed)
            for i in analysis.instructions
        ],
        "errors": [error_to_json(e) for e in analysis.errors],
    }


def module_json_text(
    module: str,
    direction: str,
    instructions: Iterable[InstructionAnalysis],
    errors: list[HloidxError],
    spelling: str = "floordiv",
    every: int = 256,
) -> Iterator[str]:
    """``json.dumps(module_to_json(...))`` in pieces, instruction by instruction (``every``
    instructions a piece): the document is never held whole, as dicts or as text."""
    head = {"schema_version": SCHEMA_VERSION, "module": module, "direction": direction}
    yield json.dumps(head)[:-1] + ', "instructions": ['
    printed: dict[int, tuple[OperandAnalysis, str]] = {}
    batch: list[str] = []
    first = True
    for ins in instructions:
        batch.append(_instruction_json_text(ins, spelling, direction, printed))
        if len(batch) == every:
            yield ("" if first else ", ") + ", ".join(batch)
            first, batch = False, []
    if batch:
        yield ("" if first else ", ") + ", ".join(batch)
    yield '], "errors": ' + json.dumps([error_to_json(e) for e in errors]) + "}"


def _instruction_json_text(
    ins: InstructionAnalysis,
    spelling: str,
    direction: str,
    printed: dict[int, tuple[OperandAnalysis, str]],
) -> str:
    """``json.dumps(instruction_to_json(ins, ...))``, each operand's body encoded once for all
    the operands that reuse it (``printed``, as in :func:`operand_to_json`)."""
    dumps, quote = json.dumps, _quote
    operands = []
    for op in ins.operands:
        source = op.shared_from
        if source is None:
            body = dumps(_operand_body(op, spelling, direction))
        else:
            entry = printed.get(id(source))
            if entry is None:
                text = dumps(_operand_body(source, spelling, direction))
                entry = printed[id(source)] = (source, text)
            body = entry[1]
        # the body is a dict of eleven keys: `{"output_to_input": ...` follows index, name, shape
        operands.append(
            f'{{"index": {op.index:d}, "name": {quote(op.name)}, '
            f'"shape": {quote(op.shape)}, {body[1:]}'
        )
    notes = dumps(list(ins.notes)) if ins.notes else "[]"
    return (
        f'{{"computation": {quote(ins.computation)}, "name": {quote(ins.name)}, '
        f'"opcode": {quote(ins.opcode)}, "shape": {quote(ins.shape)}, '
        f'"operands": [{", ".join(operands)}], "notes": {notes}}}'
    )


#: ``json.dumps`` of a string, without its dispatch (the same text: ASCII, escaped)
_quote = json.encoder.encode_basestring_ascii
