"""Plain-dict reports: the JSON documents hloidx prints (and the data the renderer shows)."""

from __future__ import annotations

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
    op: OperandAnalysis, spelling: str = "floordiv", direction: str = "both"
) -> dict[str, Any]:
    return {
        "index": op.index,
        "name": op.name,
        "shape": op.shape,
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
    ins: InstructionAnalysis, spelling: str = "floordiv", direction: str = "both"
) -> dict[str, Any]:
    return {
        "computation": ins.computation,
        "name": ins.name,
        "opcode": ins.opcode,
        "shape": ins.shape,
        "operands": [operand_to_json(o, spelling, direction) for o in ins.operands],
        "notes": list(ins.notes),
    }


def module_to_json(analysis: ModuleAnalysis, spelling: str = "floordiv") -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "module": analysis.module,
        "direction": analysis.direction,
        "instructions": [
            instruction_to_json(i, spelling, analysis.direction) for i in analysis.instructions
        ],
        "errors": [error_to_json(e) for e in analysis.errors],
    }
