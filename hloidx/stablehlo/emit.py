"""The steps every op handler shares (:mod:`.ops`, :mod:`.op_forms`): an op's operands and
result shape, one instruction written for it, a window attribute, an unknown op as a
custom-call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .attributes import OpPieces
    from .syntax import Stmt
    from .types import TensorType
    from .values import LoweringContext as Lowering
    from .values import Scope, Value


def _operands(lowering: Lowering, scope: Scope, op: OpPieces) -> list[Value]:
    return lowering.use_all(scope, op.operands)


def _result_shape(op: OpPieces, lowering: Lowering, stmt: Stmt) -> tuple[str, list[TensorType]]:
    types = op.result_types
    if not types:
        raise lowering.error(
            f"{op.name}: no result type (expected `: type` after the op)", stmt.head
        )
    if len(types) == 1:
        return types[0].hlo, types
    return "(" + ", ".join(t.hlo for t in types) + ")", types


def _simple(
    lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces, opcode: str, attrs: str
) -> None:
    shape, types = _result_shape(op, lowering, stmt)
    name = lowering.emit(
        scope, stmt.results[0], shape, opcode, _operands(lowering, scope, op), attrs, stmt.start
    )
    lowering.bind(scope, stmt, name, types)


def _window(
    sizes: list[int], strides: list[int], pads: list[Any], lhs: list[int], rhs: list[int]
) -> str:
    n = len(sizes)
    strides = strides or [1] * n
    lhs = lhs or [1] * n
    rhs = rhs or [1] * n
    if not pads or len(pads) != n:
        pads = [[0, 0]] * n
    pad = "x".join(f"{p[0]}_{p[1]}" if isinstance(p, list) else f"{p}_{p}" for p in pads)
    return (
        f"window={{size={'x'.join(map(str, sizes))} stride={'x'.join(map(str, strides))} "
        f"pad={pad} lhs_dilate={'x'.join(map(str, lhs))} rhs_dilate={'x'.join(map(str, rhs))}}}"
    )


def _unknown(lowering: Lowering, scope: Scope, stmt: Stmt, op: OpPieces) -> None:
    if stmt.kind != "op":
        return
    shape, types = _result_shape(op, lowering, stmt) if op.result_types else ("()", [])
    target = op.name.replace('"', "")
    name = lowering.emit(
        scope,
        stmt.results[0],
        shape,
        "custom-call",
        _operands(lowering, scope, op),
        f'custom_call_target="{target}"',
        stmt.start,
    )
    lowering.bind(scope, stmt, name, types)
