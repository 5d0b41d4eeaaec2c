"""Element types: how many bits (and bytes, as XLA's ``ByteSizeOfPrimitiveType`` counts
them) one element of each HLO element type takes."""

from __future__ import annotations

_BITS = {
    "pred": 8,
    "s2": 2,
    "u2": 2,
    "s4": 4,
    "u4": 4,
    "f4e2m1fn": 4,
    "s8": 8,
    "u8": 8,
    "s16": 16,
    "u16": 16,
    "f16": 16,
    "bf16": 16,
    "s32": 32,
    "u32": 32,
    "f32": 32,
    "s64": 64,
    "u64": 64,
    "f64": 64,
    "c64": 64,
    "c128": 128,
}


def element_bits(element_type: str) -> int:
    """Bits per element (fp8 variants 8; an unknown type counts as 32)."""
    if element_type in _BITS:
        return _BITS[element_type]
    if element_type.startswith("f8"):
        return 8
    return 32


def element_bytes(element_type: str) -> int:
    """Bytes per element as XLA's ``ByteSizeOfPrimitiveType`` counts them (sub-byte -> 1)."""
    return max(1, element_bits(element_type) // 8)
