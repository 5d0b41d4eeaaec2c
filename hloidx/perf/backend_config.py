"""An instruction's ``backend_config`` read as leniently as XLA reads it.

XLA keeps ``backend_config`` as text and turns it into its proto with protobuf's JSON reader
when a pass asks for it; that reader accepts a comma before a closing ``}`` or ``]`` (XLA's
own test texts carry them) and any whitespace. ``json.loads`` does not: the trailing commas
are dropped here (outside strings) before the JSON is read. A text that still cannot be read
is reported, never silently taken as an empty configuration.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hlo.ir import Instruction

#: a string literal, or a comma (and the whitespace after it) before a closing bracket
_TRAILING = re.compile(r'("(?:[^"\\]|\\.)*")|,(\s*[}\]])')


@dataclass(frozen=True)
class BackendConfig:
    """``value``: the configuration read (``{}`` when the instruction has none);
    ``error``: why the text could not be read (then ``value`` is ``{}``)."""

    value: dict[str, Any]
    error: str = ""

    @property
    def readable(self) -> bool:
        return not self.error


def lenient_json(text: str) -> Any:
    """``text`` read as JSON after dropping the commas before ``}`` and ``]``; raises
    ``ValueError`` when it is still not JSON."""
    cleaned = _TRAILING.sub(lambda m: m.group(1) or m.group(2), text)
    return json.loads(cleaned)


def read_backend_config(instr: Instruction) -> BackendConfig:
    """The instruction's ``backend_config`` as a dict (see the module's docstring)."""
    text = (instr.attributes.get("backend_config", "") or "").strip()
    if not text:
        return BackendConfig({})
    try:
        value = lenient_json(text)
    except ValueError as e:
        return BackendConfig({}, f"its backend_config is not JSON XLA could read ({e})")
    if not isinstance(value, dict):
        return BackendConfig({}, "its backend_config is not a JSON object")
    return BackendConfig(value)


def fusion_kind_of(instr: Instruction) -> str:
    """``fusion_backend_config.kind`` (``__triton_gemm``, ``__custom_fusion``...), or ``''``."""
    config = read_backend_config(instr).value
    for key in ("fusion_backend_config", "fusion_config"):
        kind = (config.get(key) or {}).get("kind") if isinstance(config.get(key), dict) else None
        if kind:
            return str(kind)
    return ""


def custom_fusion_name(instr: Instruction) -> str:
    """``custom_fusion_config.name`` of a ``__custom_fusion`` (``dynamic_address_computation``
    for XLA's ``DynamicSliceFusion``), or ``''``."""
    fusion = read_backend_config(instr).value.get("fusion_backend_config") or {}
    if not isinstance(fusion, dict):
        return ""
    return str((fusion.get("custom_fusion_config") or {}).get("name", ""))


def is_dynamic_slice_fusion(instr: Instruction) -> bool:
    """XLA:GPU's ``DynamicSliceFusion``: a ``__custom_fusion`` named
    ``dynamic_address_computation`` (or ``address_computation``)."""
    return fusion_kind_of(instr) == "__custom_fusion" and custom_fusion_name(instr) in (
        "dynamic_address_computation",
        "address_computation",
    )
