"""A compare's attributes from its ``HloInstructionProto``: its direction, and its comparison
type (older XLA) or order (newer XLA), each printed only where it is not the element type's own,
as XLA's printer does (``proto_attributes`` dispatches ``compare`` here)."""

from __future__ import annotations

from typing import Any

from .proto_values import element_type_name

__all__ = ["compare_attributes", "default_comparison"]


_DEFAULT_COMPARISON = {"pred": "UNSIGNED"}


def default_comparison(type_name: str) -> str:
    if type_name in _DEFAULT_COMPARISON:
        return _DEFAULT_COMPARISON[type_name]
    if type_name.startswith("s"):
        return "SIGNED"
    if type_name.startswith("u"):
        return "UNSIGNED"
    return "FLOAT"


#: ``HloInstructionProto.comparison_order`` (field 102): newer XLA (jaxlib 0.12) writes the
#: order here instead of ``comparison_type``; read from the unknown fields, as our schema
#: predates it
_COMPARISON_ORDER_FIELD = 102


def _comparison_order(ins: Any) -> str:
    from google.protobuf import unknown_fields

    for field in unknown_fields.UnknownFieldSet(ins):
        if field.field_number == _COMPARISON_ORDER_FIELD and isinstance(field.data, bytes):
            return field.data.decode("utf-8", errors="replace")
    return ""


def compare_attributes(ins: Any, out: list[str], ctx: Any) -> None:
    """A compare's attributes as the XLA that wrote the proto prints them."""
    out.append(f"direction={ins.comparison_direction}")
    operand = ctx.operand_shape(ins)
    kind = ins.comparison_type
    if (
        kind
        and operand is not None
        and operand.element_type not in (13, 14, 17)
        and kind.upper() != default_comparison(element_type_name(operand.element_type))
    ):
        out.append(f"type={kind.upper()}")
    order = _comparison_order(ins) if not kind and operand is not None else ""
    if order:
        # printed as newer XLA prints it: only when it is not the element type's own order
        # (floats compare partially, integers and predicates totally)
        floating = default_comparison(element_type_name(operand.element_type)) == "FLOAT"
        if order.upper() != ("PARTIAL" if floating else "TOTAL"):
            out.append(f"order={order.upper()}")
