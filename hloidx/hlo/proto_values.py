"""Values of XLA's HLO protos as HLO text: shapes with their layouts, literals, shardings and
replica groups, written the way XLA's printer writes them (``xla/shape_util.cc``,
``xla/layout.cc``, ``xla/literal.cc``, ``xla/hlo/ir/hlo_sharding.cc``), so that a module read
from ``HloModuleProto`` parses exactly as the text XLA prints for the same proto.

Every function takes messages of :mod:`hloidx.protos.xla_data_pb2` (duck-typed: nothing here
imports protobuf)."""

from __future__ import annotations

import math
import struct
from typing import Any

from ..caches import register

__all__ = [
    "element_type_name",
    "layout_text",
    "literal_text",
    "replica_groups_text",
    "shape_text",
    "sharding_text",
]

# xla.PrimitiveType numbers -> the lowercase names of HLO text
_TYPE_NAMES = {
    1: "pred", 2: "s8", 3: "s16", 4: "s32", 5: "s64", 6: "u8", 7: "u16", 8: "u32", 9: "u64",
    10: "f16", 11: "f32", 12: "f64", 13: "tuple", 14: "opaque", 15: "c64", 16: "bf16",
    17: "token", 18: "c128", 19: "f8e5m2", 20: "f8e4m3fn", 21: "s4", 22: "u4",
    23: "f8e4m3b11fnuz", 24: "f8e5m2fnuz", 25: "f8e4m3fnuz", 26: "s2", 27: "u2", 28: "f8e4m3",
    29: "f8e3m4", 30: "s1", 31: "u1", 32: "f4e2m1fn", 33: "f8e8m0fnu", 34: "buffer",
}  # fmt: skip
_TUPLE, _OPAQUE, _TOKEN = 13, 14, 17
_DYNAMIC_UNBOUNDED = -(2**63)  # a `?` dimension
_DIM_LEVEL = {0: "D", 1: "C", 2: "S", 3: "H"}


def element_type_name(number: int) -> str:
    name = _TYPE_NAMES.get(number)
    if name is None:
        raise ValueError(f"unknown element type number {number}")
    return name


def layout_text(layout: Any, rank: int) -> str:
    """``{1,0}``, ``{1,0:T(8,128)(2,1)E(4)S(1)}``; scalars print nothing unless the layout
    says more than ``{}``."""
    parts = []
    if any(t != 0 for t in layout.dim_level_types):
        parts.append("D(" + ",".join(_DIM_LEVEL.get(t, "?") for t in layout.dim_level_types) + ")")
    if layout.tiles:
        tiles = "".join(
            "(" + ",".join("*" if d == _DYNAMIC_UNBOUNDED else str(d) for d in t.dimensions) + ")"
            for t in layout.tiles
        )
        parts.append("T" + tiles)
    if layout.tail_padding_alignment_in_elements not in (0, 1):
        parts.append(f"L({layout.tail_padding_alignment_in_elements})")
    if layout.index_primitive_type:
        parts.append(f"#({element_type_name(layout.index_primitive_type)})")
    if layout.pointer_primitive_type:
        parts.append(f"*({element_type_name(layout.pointer_primitive_type)})")
    if layout.element_size_in_bits:
        parts.append(f"E({layout.element_size_in_bits})")
    if layout.memory_space:
        parts.append(f"S({layout.memory_space})")
    if layout.dynamic_shape_metadata_prefix_bytes:
        parts.append(f"M({layout.dynamic_shape_metadata_prefix_bytes})")
    text = "{" + ",".join(str(d) for d in layout.minor_to_major)
    if parts:
        text += ":" + "".join(parts)
    text += "}"
    return "" if rank == 0 and text == "{}" else text


_SHAPE_TEXTS: dict[bytes, str] = {}
register(_SHAPE_TEXTS.clear)


def shape_text(shape: Any, with_layout: bool = True) -> str:
    """``f32[8,<=16]{1,0}``, ``(f32[2]{0}, /*index=5*/...)``, ``token[]``; memoised by the
    shape's wire bytes (a large module repeats a few hundred shapes tens of thousands of
    times), bounded."""
    if not with_layout:
        return _shape_text(shape, False)
    key = shape.SerializeToString()
    found = _SHAPE_TEXTS.get(key)
    if found is None:
        if len(_SHAPE_TEXTS) > 50_000:
            _SHAPE_TEXTS.clear()
        found = _SHAPE_TEXTS[key] = _shape_text(shape, True)
    return found


def _shape_text(shape: Any, with_layout: bool) -> str:
    element = shape.element_type
    if element == _TUPLE:
        items = []
        for i, sub in enumerate(shape.tuple_shapes):
            prefix = f"/*index={i}*/" if i and i % 5 == 0 else ""
            items.append(prefix + _shape_text(sub, with_layout))
        return "(" + ", ".join(items) + ")"
    name = element_type_name(element)
    if element in (_TOKEN, _OPAQUE):
        return f"{name}[]"
    dynamic = shape.is_dynamic_dimension
    dims = []
    for i, d in enumerate(shape.dimensions):
        if d == _DYNAMIC_UNBOUNDED:
            dims.append("?")
        elif i < len(dynamic) and dynamic[i]:
            dims.append(f"<={d}")
        else:
            dims.append(str(d))
    text = f"{name}[{','.join(dims)}]"
    if with_layout and shape.HasField("layout"):
        text += layout_text(shape.layout, len(shape.dimensions))
    return text


# ---------------------------------------------------------------------------------------------
# Literals
# ---------------------------------------------------------------------------------------------

#: literals with more elements print as `{...}` (XLA's default, print_large_constants=false)
MAX_PRINTED_ELEMENTS = 10

# (field of LiteralProto, struct format or a decoder) for the types stored as bytes
_BYTE_FIELDS = {
    "s8": ("s8s", "b"), "u8": ("u8s", "B"), "s16": ("s16s", "<h"), "u16": ("u16s", "<H"),
    "s4": ("s4s", "b"), "u4": ("u4s", "B"), "s2": ("s2s", "b"), "u2": ("u2s", "B"),
    "s1": ("s1s", "b"), "u1": ("u1s", "B"),
}  # fmt: skip
_REPEATED_FIELDS = {
    "s32": "s32s", "s64": "s64s", "u32": "u32s", "u64": "u64s", "f32": "f32s", "f64": "f64s",
}  # fmt: skip
# small floats: (LiteralProto field, exponent bits, mantissa bits, bias, kind, max_digits10)
# kind: "ieee" (inf and nan), "fn" (nan is all ones, no inf), "fnuz" (nan is -0, no inf),
# "e8m0" (no sign, no mantissa)
_SMALL_FLOATS = {
    "f16": ("f16s", 5, 10, 15, "ieee", 5),
    "bf16": ("bf16s", 8, 7, 127, "ieee", 4),
    "f8e5m2": ("f8e5m2s", 5, 2, 15, "ieee", 2),
    "f8e4m3": ("f8e4m3s", 4, 3, 7, "ieee", 3),
    "f8e3m4": ("f8e3m4s", 3, 4, 3, "ieee", 3),
    "f8e4m3fn": ("f8e4m3fns", 4, 3, 7, "fn", 3),
    "f8e4m3fnuz": ("f8e4m3fnuzs", 4, 3, 8, "fnuz", 3),
    "f8e5m2fnuz": ("f8e5m2fnuzs", 5, 2, 16, "fnuz", 2),
    "f8e4m3b11fnuz": ("f8e4m3b11fnuzs", 4, 3, 11, "fnuz", 3),
    "f4e2m1fn": ("f4e2m1fns", 2, 1, 1, "finite", 2),
    "f8e8m0fnu": ("f8e8m0fnus", 8, 0, 127, "e8m0", 2),
}
_FLOAT_BITS = {"f16": 16, "bf16": 16}


def _small_float(bits: int, exp_bits: int, man_bits: int, bias: int, kind: str) -> float:
    if kind == "e8m0":
        return math.nan if bits == 0xFF else 2.0 ** (bits - bias)
    sign = -1.0 if bits >> (exp_bits + man_bits) & 1 else 1.0
    exponent = (bits >> man_bits) & ((1 << exp_bits) - 1)
    mantissa = bits & ((1 << man_bits) - 1)
    top = (1 << exp_bits) - 1
    if kind == "fnuz" and sign < 0 and exponent == 0 and mantissa == 0:
        return math.nan
    if kind == "ieee" and exponent == top:
        return sign * math.inf if mantissa == 0 else math.copysign(math.nan, sign)
    if kind == "fn" and exponent == top and mantissa == (1 << man_bits) - 1:
        return math.copysign(math.nan, sign)
    if exponent == 0:
        return sign * mantissa * 2.0 ** (1 - bias - man_bits)
    return sign * (1 + mantissa / (1 << man_bits)) * 2.0 ** (exponent - bias)


def _float_text(value: float, digits: int, max_digits: int, width: str | None) -> str:
    """XLA's RoundTripFpToString: the shortest of ``%.{digits}g`` that reads back as the same
    value of the type, else ``%.{max_digits}g``; ``nan``/``-nan``, ``inf``/``-inf``."""
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    if digits:
        short = f"{value:.{digits}g}"
        back = float(short)
        if width == "f32":
            back = struct.unpack("<f", struct.pack("<f", back))[0]
        if back == value:
            return short
    return f"{value:.{max_digits}g}"


def _elements(literal: Any, type_name: str) -> list[str] | None:
    """Every element of an array literal as text, in row-major order; None when the literal
    carries no values for its type."""
    if type_name == "pred":
        return ["1" if v else "0" for v in literal.preds]
    if type_name in _REPEATED_FIELDS:
        values = getattr(literal, _REPEATED_FIELDS[type_name])
        if type_name == "f32":
            return [_float_text(v, 6, 9, "f32") for v in values]
        if type_name == "f64":
            return [_float_text(v, 15, 17, None) for v in values]
        return [str(v) for v in values]
    if type_name in _BYTE_FIELDS:
        field, fmt = _BYTE_FIELDS[type_name]
        raw = getattr(literal, field)
        size = struct.calcsize(fmt)
        return [str(struct.unpack_from(fmt, raw, i)[0]) for i in range(0, len(raw), size)]
    if type_name in ("c64", "c128"):
        values = literal.c64s if type_name == "c64" else literal.c128s
        digits, top, width = (6, 9, "f32") if type_name == "c64" else (15, 17, None)
        return [
            f"({_float_text(values[i], digits, top, width)}, "
            f"{_float_text(values[i + 1], digits, top, width)})"
            for i in range(0, len(values) - 1, 2)
        ]
    if type_name in _SMALL_FLOATS:
        field, exp_bits, man_bits, bias, kind, max_digits = _SMALL_FLOATS[type_name]
        raw = getattr(literal, field)
        if type_name in _FLOAT_BITS:
            words = [raw[i] | raw[i + 1] << 8 for i in range(0, len(raw) - 1, 2)]
        else:
            words = list(raw)
        return [
            _float_text(_small_float(w, exp_bits, man_bits, bias, kind), 0, max_digits, None)
            for w in words
        ]
    return None


def _nest(items: list[str], dims: list[int], at: int, spaced: bool) -> tuple[str, int]:
    """Row-major elements nested as XLA prints them: ``{1, 2}`` for rank 1, and every level
    spaced for a higher rank: ``{ { 1, 2 }, { 3, 4 } }``."""
    if len(dims) == 1:
        body = ", ".join(items[at : at + dims[0]])
        return ("{ " + body + " }" if spaced else "{" + body + "}"), at + dims[0]
    parts = []
    for _ in range(dims[0]):
        inner, at = _nest(items, dims[1:], at, spaced)
        parts.append(inner)
    return "{ " + ", ".join(parts) + " }", at


def literal_text(literal: Any, shape: Any) -> str:
    """A constant's operand text: ``0.1``, ``{1, 2}``, ``{ { 1, 2 }, { 3, 4 } }``, ``{...}``
    for more than ten elements, ``(1, 2)`` for a complex number."""
    if shape.element_type == _TUPLE:
        subs = literal.tuple_literals
        return (
            "("
            + ", ".join(literal_text(s, t) for s, t in zip(subs, shape.tuple_shapes, strict=False))
            + ")"
        )
    dims = list(shape.dimensions)
    count = math.prod(dims)
    if count > MAX_PRINTED_ELEMENTS:
        return "{...}"
    type_name = element_type_name(shape.element_type)
    items = _elements(literal, type_name)
    if items is None or len(items) < count:
        return "{...}"
    if not dims:
        text = items[0]
        if type_name == "pred":
            return "true" if text == "1" else "false"
        return text
    if count == 0:
        return "{}"
    return _nest(items, dims, 0, len(dims) > 1)[0]


# ---------------------------------------------------------------------------------------------
# Shardings and replica groups
# ---------------------------------------------------------------------------------------------

_SHARDING_TYPES = {0: "replicated", 4: "manual", 5: "unknown", 6: "unreduced"}
_LAST_TILE_DIMS = {0: "replicated", 4: "manual", 5: "unknown", 6: "unreduced"}


def _iota_text(reshape: Any, perm: Any) -> str:
    text = "<=[" + ",".join(str(d) for d in reshape) + "]"
    if list(perm) and list(perm) != list(range(len(perm))):
        text += "T(" + ",".join(str(p) for p in perm) + ")"
    return text


def _sharding_body(sharding: Any) -> str:
    kind = sharding.type
    if kind == 2:  # TUPLE
        items = [
            (f"/*index={i}*/" if i and i % 5 == 0 else "") + _sharding_body(s)
            for i, s in enumerate(sharding.tuple_shardings)
        ]
        return "{" + ", ".join(items) + "}"
    if kind in _SHARDING_TYPES:
        return "{" + _SHARDING_TYPES[kind] + "}"
    if kind == 1:  # MAXIMAL
        return "{maximal device=" + str(sharding.tile_assignment_devices[0]) + "}"
    dims = "[" + ",".join(str(d) for d in sharding.tile_assignment_dimensions) + "]"
    if sharding.iota_reshape_dims:
        devices = _iota_text(sharding.iota_reshape_dims, sharding.iota_transpose_perm)
    else:
        devices = ",".join(str(d) for d in sharding.tile_assignment_devices)
    text = "{devices=" + dims + devices
    if sharding.replicate_on_last_tile_dim:
        text += " last_tile_dim_replicate"
    if sharding.last_tile_dims:
        text += (
            " last_tile_dims={"
            + ", ".join(_LAST_TILE_DIMS[t] for t in sharding.last_tile_dims)
            + "}"
        )
    return text + "}"


def sharding_text(sharding: Any) -> str:
    """``{replicated}``, ``{devices=[4,1]<=[4]}``, ``{maximal device=0}``, tuples nested."""
    return _sharding_body(sharding)


def replica_groups_text(groups: Any, device_list: Any | None, iota: Any | None = None) -> str:
    """``{{0,1},{2,3}}``, or the iota form ``[2,2]<=[4]`` / ``[2,2]<=[2,2]T(1,0)``."""
    if iota is None and device_list is not None and device_list.HasField("iota_replica_group_list"):
        iota = device_list.iota_replica_group_list
    if iota is not None:
        head = f"[{iota.num_replica_groups},{iota.num_devices_per_group}]"
        return head + _iota_text(iota.iota_reshape_dims, iota.iota_transpose_perm)
    if device_list is not None and device_list.replica_groups:
        groups = device_list.replica_groups
    return "{" + ",".join("{" + ",".join(str(i) for i in g.replica_ids) + "}" for g in groups) + "}"
