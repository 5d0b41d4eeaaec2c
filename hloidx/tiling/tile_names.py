"""``hloidx tile --names roles``: tile maps whose variables are named after the output dims.

A tile map's dimension variables are the tile's sizes (symbolic) or its index (concrete), one
per output dimension: each takes that output dimension's name (:mod:`hloidx.hlo.role_names`),
in the maps, the conditions and the counts alike. Only the spelling changes: renamed back by
position the text is the plain one.
"""

from __future__ import annotations

import re
from typing import Any

from ..hlo.ir import Instruction
from ..hlo.role_names import Namer
from ..maps.var_names import is_role_name

_DIM = re.compile(r"\bd([0-9]+)\b")
_NAMED_KEYS = ("offset_map", "size_map", "stride_map", "constraints", "when", "count")


def output_dim_names(instr: Instruction) -> list[str]:
    """The name of each output dim (``d<i>`` where none is known)."""
    try:
        names = Namer().output_names(instr)
    except Exception:  # a reading aid: plain names then
        names = ()
    out = [n if n and is_role_name(n) else "" for n, _ in names]
    seen: set[str] = set()
    for i, n in enumerate(out):
        if not n or n in seen:
            out[i] = f"d{i}"
        seen.add(out[i])
    return out


def _rename(text: Any, names: list[str]) -> Any:
    if not isinstance(text, str):
        return text
    return _DIM.sub(lambda m: names[int(m[1])] if int(m[1]) < len(names) else m[0], text)


def name_tile_document(doc: dict[str, Any], instr: Instruction) -> dict[str, Any]:
    """``doc`` (``tiles_document``) with each tile variable named after its output dim."""
    names = output_dim_names(instr)
    if all(n == f"d{i}" for i, n in enumerate(names)):
        return doc
    for operand in doc.get("operands", ()):
        for description in _descriptions(operand):
            for key in _NAMED_KEYS:
                if key in description:
                    description[key] = _rename(description[key], names)
            description["tile_variables"] = ", ".join(names)
    return doc


def _descriptions(operand: dict[str, Any]) -> list[dict[str, Any]]:
    out = [operand] if operand.get("offset_map") is not None else []
    for value in operand.values():
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, dict) and "offset_map" in item:
                out.append(item)
    return out


__all__ = ["name_tile_document", "output_dim_names"]
