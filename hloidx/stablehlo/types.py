"""MLIR tensor types as HLO shapes: ``tensor<4x?xf32>`` is ``f32[4,?]``, ``tensor<i1>`` is
``pred[]``, ``complex<f32>`` is ``c64``, a quantized type is its storage type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .syntax import Group, Tok

_ELEMENTS = {
    "i1": "pred",
    "f16": "f16",
    "f32": "f32",
    "f64": "f64",
    "bf16": "bf16",
    "index": "s64",
    "f8E4M3FN": "f8e4m3fn",
    "f8E5M2": "f8e5m2",
    "f8E4M3FNUZ": "f8e4m3fnuz",
    "f8E5M2FNUZ": "f8e5m2fnuz",
    "f8E4M3B11FNUZ": "f8e4m3b11fnuz",
    "f8E4M3": "f8e4m3",
    "f8E3M4": "f8e3m4",
    "f4E2M1FN": "f4e2m1fn",
    "f8E8M0FNU": "f8e8m0fnu",
}


@dataclass(frozen=True, slots=True)
class TensorType:
    element: str  # HLO element type: f32, s32, pred, c64, token, ...
    dims: tuple[int | None, ...]  # None for a dynamic (`?`) dimension

    @property
    def hlo(self) -> str:
        if self.element == "token":
            return "token[]"
        body = ",".join("?" if d is None else str(d) for d in self.dims)
        return f"{self.element}[{body}]"

    @property
    def rank(self) -> int:
        return len(self.dims)


def element_type(name: str, args: Group | None = None) -> str:
    if name in _ELEMENTS:
        return _ELEMENTS[name]
    if name.startswith("ui") and name[2:].isdigit():
        return f"u{name[2:]}"
    if name.startswith("si") and name[2:].isdigit():
        return f"s{name[2:]}"
    if name.startswith("i") and name[1:].isdigit():
        return f"s{name[1:]}"
    if name == "complex" and args is not None:
        inner = next((t.value for t in args.items if isinstance(t, Tok)), "f32")
        return "c128" if inner == "f64" else "c64"
    if name.startswith("!quant") and args is not None:
        storage = next((t.value for t in args.items if isinstance(t, Tok)), "i8")
        return element_type(storage)
    return name.lower()


def read_type(items: list[Any], at: int) -> tuple[TensorType | None, int]:
    """The type starting at ``items[at]`` (``tensor<...>``, ``!stablehlo.token``, a bare
    element type) and the index after it; ``(None, at)`` when none starts there."""
    if at >= len(items):
        return None, at
    head = items[at]
    if not isinstance(head, Tok):
        return None, at
    if head.type == "BANG_ID" and head.value.endswith("token"):
        return TensorType("token", ()), at + 1
    if head.type == "BARE_ID" and head.value == "tensor":
        if at + 1 < len(items) and isinstance(items[at + 1], Group) and items[at + 1].kind == "<":
            return _tensor(items[at + 1]), at + 2
        return None, at
    if head.type == "BANG_ID" or (head.type == "BARE_ID" and is_element_name(head.value)):
        nxt = items[at + 1] if at + 1 < len(items) else None
        if isinstance(nxt, Group) and nxt.kind == "<":
            return TensorType(element_type(head.value, nxt), ()), at + 2
        return TensorType(element_type(head.value), ()), at + 1
    return None, at


def is_element_name(name: str) -> bool:
    if name in _ELEMENTS or name == "complex":
        return True
    for prefix in ("ui", "si", "i"):
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            return True
    return False


def _tensor(group: Group) -> TensorType:
    items = group.items
    dims: tuple[int | None, ...] = ()
    k = 0
    if k < len(items) and isinstance(items[k], Tok) and items[k].type == "DIMS":
        parts = items[k].value.rstrip("x").split("x")
        dims = tuple(None if p == "?" else int(p) for p in parts)
        k += 1
    if k < len(items) and isinstance(items[k], Tok):
        name = items[k].value
        args = items[k + 1] if k + 1 < len(items) and isinstance(items[k + 1], Group) else None
        return TensorType(element_type(name, args), dims)
    return TensorType("f32", dims)


def read_types(items: list[Any]) -> list[TensorType]:
    """Every type in a comma-separated list (``tensor<a>, tensor<b>``), skipping other items."""
    out: list[TensorType] = []
    k = 0
    while k < len(items):
        t, nxt = read_type(items, k)
        if t is not None:
            out.append(t)
            k = nxt
        else:
            k += 1
    return out
