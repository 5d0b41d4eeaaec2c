"""Shape text (f32[8,16]{1,0}, tuples, layouts with tiling, dynamic dimensions) into IR
shapes, memoised; literal element counts."""

from __future__ import annotations

import re

from ..caches import register
from ..errors import HloSyntaxError
from .ir import Layout, Shape

#: The deepest tuple nesting accepted in a shape (XLA prints a handful of levels at most).
MAX_TUPLE_DEPTH = 64


def _tuple_depth(shape: Shape) -> int:
    """Tuple nesting of an already accepted shape (so at most MAX_TUPLE_DEPTH levels)."""
    if shape.tuple_shapes is None:
        return 0
    return 1 + max((_tuple_depth(s) for s in shape.tuple_shapes), default=0)


_SHAPE_CACHE: dict[str, Shape] = {}


register(_SHAPE_CACHE.clear)


def parse_shape(text: str) -> Shape:
    """One array shape token: ``f32[10,<=20,?]{1,0:T(8,128)}``.

    The grammar validates the token's outline; a malformed number inside it (a stray newline in
    a layout, ``<=`` with nothing after it) raises :class:`HloSyntaxError` for the caller to
    locate.
    """
    shape = _SHAPE_CACHE.get(text)
    if shape is not None:
        return shape
    try:
        return _parse_shape_uncached(text)
    except (ValueError, IndexError):
        shown = " ".join(text.split())
        raise HloSyntaxError(
            f"malformed shape {shown!r}; expected a shape such as f32[10,20] or f32[<=10,?]{{1,0}}"
        ) from None


def _parse_shape_uncached(text: str) -> Shape:
    key, text = text, text.rstrip()  # the token carries the whitespace after it
    open_at = text.index("[")
    close_at = text.index("]", open_at)
    element_type = text[:open_at].rstrip()  # XLA also reads `s32 [5696,10,4]`
    dims: list[int] = []
    dynamic: list[bool] = []
    body = text[open_at + 1 : close_at].strip()
    if body:
        for part in body.split(","):
            part = part.strip()
            if part == "?":
                dims.append(-1)
                dynamic.append(True)
            elif part.startswith("<="):
                dims.append(int(part[2:].strip()))
                dynamic.append(True)
            else:
                dims.append(int(part))
                dynamic.append(False)
    layout = None
    rest = text[close_at + 1 :].lstrip()  # XLA's tests also write `f32[2,3] {0,1}`
    if rest:
        inner = rest[1:-1]
        order, _, tiling = inner.partition(":")
        minor_to_major = tuple(int(p) for p in order.replace(" ", "").split(",") if p.strip())
        layout = Layout(minor_to_major, tiling.strip())
    shape = Shape(element_type, tuple(dims), tuple(dynamic) if any(dynamic) else (), layout)
    if len(_SHAPE_CACHE) < 100_000:
        _SHAPE_CACHE[key] = shape
    return shape


_PAIR = re.compile(r"\([^()]*\)")


_ELEMENT = re.compile(r"[^\s{},]+")
# XLA prints the index of each row of a constant of rank 4 and more: `{ /*i0=0*/ {1} }`.
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


def literal_element_count(literal: str) -> int:
    """How many values a literal holds: ``{ {1, 2}, {3, 4} }`` -> 4, ``-inf`` -> 1.

    Complex values are written as pairs ``(1, 2)`` and count once; comments count not at all.
    """
    if "/*" in literal:
        literal = _COMMENT.sub(" ", literal)
    return len(_ELEMENT.findall(_PAIR.sub("x", literal)))


_LITERAL_TOKEN = re.compile(r"[{},]|[^\s{},]+")


def literal_nests_as(literal: str, dims: tuple[int, ...]) -> bool:
    """Whether an array literal's braces nest as its dimensions: ``{ {1, 2}, {3, 4} }`` for
    ``[2,2]``, not ``{1, 2, 3, 4}`` nor ``{ {1, 2, 3, 4} }`` (XLA's parser checks the same)."""
    if "/*" in literal:
        literal = _COMMENT.sub(" ", literal)
    tokens = _LITERAL_TOKEN.findall(_PAIR.sub("x", literal))
    at = _nested(tokens, 0, dims, 0)
    return at == len(tokens)


def _nested(tokens: list[str], at: int, dims: tuple[int, ...], level: int) -> int:
    """The index after the literal of ``dims[level:]`` starting at ``at``, or -1."""
    if at >= len(tokens):
        return -1
    if level == len(dims):
        return at + 1 if tokens[at] not in ("{", "}", ",") else -1
    if tokens[at] != "{":
        return -1
    at += 1
    count = 0
    if at < len(tokens) and tokens[at] == "}":
        return at + 1 if dims[level] == 0 else -1
    while True:
        at = _nested(tokens, at, dims, level + 1)
        if at < 0 or at >= len(tokens):
            return -1
        count += 1
        if tokens[at] == "}":
            return at + 1 if count == dims[level] else -1
        if tokens[at] != ",":
            return -1
        at += 1


#: the finite range of integer types (XLA reads a u64 literal as an int64 too: -1 is accepted)
_INTEGER_RANGES = {
    **{f"s{b}": (-(1 << (b - 1)), (1 << (b - 1)) - 1) for b in (2, 4, 8, 16, 32, 64)},
    **{f"u{b}": (0, (1 << b) - 1) for b in (2, 4, 8, 16, 32)},
    "u64": (-(1 << 63), (1 << 64) - 1),
}
#: magnitudes that round to infinity in a float type (its largest finite value plus half an
#: ulp; ties round to even, and the largest finite value's last bit is odd)
_FLOAT_LIMITS = {
    "f16": 65504.0 + 16.0,
    "bf16": (2 - 2**-7) * 2.0**127 + 2.0**119,
    "f32": (2 - 2**-23) * 2.0**127 + 2.0**103,
    "c64": (2 - 2**-23) * 2.0**127 + 2.0**103,
}
_VALUE = re.compile(r"[^\s{},()]+")


#: mantissa bits of float types: a NaN's payload must fit them (types without NaN payloads,
#: such as f8e4m3fn, have none)
_PAYLOAD_BITS = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52, "f8e5m2": 2, "f8e4m3": 3}
_NAN_PAYLOAD = re.compile(r"nan\((0x[0-9a-fA-F]+)\)")


def literal_value_error(literal: str, element_type: str) -> str | None:
    """Why a literal's values do not fit its element type (XLA's parser refuses them), or None:
    an integer out of range, a finite float that rounds to infinity, a NaN payload wider than
    the mantissa."""
    if "nan(" in literal:
        bits = _PAYLOAD_BITS.get(element_type.replace("c64", "f32").replace("c128", "f64"), 0)
        for payload in _NAN_PAYLOAD.findall(literal):
            if int(payload, 16) >= 1 << bits:
                return f"the NaN payload {payload} does not fit {element_type}"
    low_high = _INTEGER_RANGES.get(element_type)
    limit = _FLOAT_LIMITS.get(element_type)
    if low_high is None and limit is None and element_type not in ("f64", "c128"):
        return None
    if "/*" in literal:
        literal = _COMMENT.sub(" ", literal)
    for value in _VALUE.findall(literal):
        if low_high is not None:
            try:
                number = int(value, 0)
            except ValueError:
                continue
            if not low_high[0] <= number <= low_high[1]:
                return f"{value} is out of range for {element_type}"
        else:
            lowered = value.lower()
            if "inf" in lowered or "nan" in lowered:
                continue
            try:
                number = float(value)
            except ValueError:
                continue
            if number in (float("inf"), float("-inf")) or (limit and abs(number) >= limit):
                return f"{value} overflows {element_type}"
    return None
