"""The syntax of attributes and layout details hloidx keeps as raw text, checked as XLA's
parser checks it: ``input_output_alias`` and ``buffer_donor`` of the module header; a
custom-call's ``api_version`` and ``operand_layout_constraints``; a parameter's
``parameter_replication``; ``result_accuracy`` (on the unary ops that take one); dimension
level types and physical shapes in layouts. Each check returns located errors; the values
themselves stay raw text."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..errors import HloidxError, HloSemanticError, HloSyntaxError
from ..source import Span
from .ir import HloModule, Instruction, Shape

#: The unary ops that take ``result_accuracy=`` (the transcendental ones).
RESULT_ACCURACY_OPCODES = frozenset(
    {
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atanh",
        "cbrt",
        "cos",
        "cosh",
        "erf",
        "exponential",
        "exponential-minus-one",
        "log",
        "log-plus-one",
        "logistic",
        "rsqrt",
        "sin",
        "sinh",
        "sqrt",
        "tan",
        "tanh",
    }
)

#: The custom-call API versions a module may name (``API_VERSION_UNSPECIFIED`` is not one).
API_VERSIONS = frozenset(
    {
        "API_VERSION_ORIGINAL",
        "API_VERSION_STATUS_RETURNING",
        "API_VERSION_STATUS_RETURNING_UNIFIED",
        "API_VERSION_TYPED_FFI",
    }
)

_ACCURACY_MODES = frozenset({"default", "highest"})
_TOLERANCE_FIELDS = frozenset({"rtol", "atol", "ulps"})
_DIM_LEVEL = re.compile(r"[DCSH]\+?~?")


def compatible_shapes(a: Shape, b: Shape) -> bool:
    """The same element type and dimensions (layouts aside), element by element for tuples."""
    if a.tuple_shapes is not None or b.tuple_shapes is not None:
        return (
            a.tuple_shapes is not None
            and b.tuple_shapes is not None
            and len(a.tuple_shapes) == len(b.tuple_shapes)
            and all(
                compatible_shapes(x, y) for x, y in zip(a.tuple_shapes, b.tuple_shapes, strict=True)
            )
        )
    return a.element_type == b.element_type and a.dims == b.dims


def leaf_count(shape: Shape) -> int:
    """How many arrays (leaf buffers) a shape holds: 1, or the sum over a tuple's elements."""
    if shape.tuple_shapes is None:
        return 1
    return sum(leaf_count(s) for s in shape.tuple_shapes)


# -- tokens ---------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(-?\d+)|([A-Za-z_][\w.\-]*)|(\S))")


def _tokens(text: str) -> list[tuple[str, int]]:
    """(token, offset) of each integer, name or single punctuation mark of ``text``."""
    out = []
    at = 0
    while True:
        match = _TOKEN.match(text, at)
        if match is None:
            break
        start = match.start(match.lastindex)
        out.append((match.group(match.lastindex), start))
        at = match.end()
    return out


class _Reader:
    """A cursor over the tokens of one attribute value; errors point into the value."""

    def __init__(self, text: str, what: str, error_at) -> None:
        self.tokens = _tokens(text)
        self.end = len(text)
        self.at = 0
        self.what = what
        self.error_at = error_at

    def peek(self) -> str | None:
        return self.tokens[self.at][0] if self.at < len(self.tokens) else None

    def offset(self) -> int:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else self.end

    def fail(self, expected: str) -> HloidxError:
        seen = self.peek()
        seen_text = f"{seen!r}" if seen is not None else "the end"
        return self.error_at(self.offset(), f"{self.what}: expected {expected}, found {seen_text}")

    def take(self, token: str, expected: str) -> None:
        if self.peek() != token:
            raise self.fail(expected)
        self.at += 1

    def integer(self, expected: str) -> None:
        token = self.peek()
        if token is None or not re.fullmatch(r"-?\d+", token):
            raise self.fail(expected)
        self.at += 1

    def shape_index(self) -> None:
        """``{}`` or ``{0, 1, ...}``."""
        self.take("{", "a shape index such as {0}")
        if self.peek() != "}":
            self.integer("an integer in the shape index")
            while self.peek() == ",":
                self.at += 1
                self.integer("an integer in the shape index")
        self.take("}", "'}' to end the shape index")


# -- the module header ----------------------------------------------------------------------------

_ALIAS_FORMAT = "<output index>: (<parameter>, <parameter index>[, may-alias|must-alias])"


def _read_aliases(reader: _Reader) -> None:
    reader.take("{", "'{' to start the aliases")
    while reader.peek() not in ("}", None):
        reader.shape_index()
        reader.take(":", _ALIAS_FORMAT)
        reader.take("(", _ALIAS_FORMAT)
        reader.integer("a parameter number")
        reader.take(",", _ALIAS_FORMAT)
        reader.shape_index()
        if reader.peek() == ",":
            reader.at += 1
            if reader.peek() not in ("may-alias", "must-alias"):
                raise reader.fail("may-alias or must-alias")
            reader.at += 1
        reader.take(")", _ALIAS_FORMAT)
        if reader.peek() != ",":
            break
        reader.at += 1
    reader.take("}", "'}' to end the aliases")
    if reader.peek() is not None:
        raise reader.fail("nothing after the aliases")


def _read_donors(reader: _Reader) -> None:
    reader.take("{", "'{' to start the buffer donors")
    while reader.peek() not in ("}", None):
        reader.take("(", "(<parameter>, <parameter index>)")
        reader.integer("a parameter number")
        reader.take(",", "(<parameter>, <parameter index>)")
        reader.shape_index()
        reader.take(")", "(<parameter>, <parameter index>)")
        if reader.peek() != ",":
            break
        reader.at += 1
    reader.take("}", "'}' to end the buffer donors")
    if reader.peek() is not None:
        raise reader.fail("nothing after the buffer donors")


_HEADER_READERS = {"input_output_alias": _read_aliases, "buffer_donor": _read_donors}


def module_attribute_errors(module: HloModule) -> list[HloidxError]:
    """``input_output_alias`` and ``buffer_donor`` of the header read as XLA reads them."""
    errors: list[HloidxError] = []
    source = module.source
    for key, read in _HEADER_READERS.items():
        value = module.attributes.get(key)
        if value is None:
            continue
        base, exact = None, False
        if source is not None:
            header = source.text.find("HloModule")
            found = re.compile(rf"\b{key}\s*=\s*").search(source.text, max(header, 0))
            if found is not None:
                # the value as written; if the header reader normalised it, its start
                base, exact = found.end(), source.text.startswith(value, found.end())

        def error_at(offset: int, message: str, _base=base, _exact=exact) -> HloidxError:
            if _base is None:
                return HloSyntaxError(message)
            at = _base + offset if _exact else _base
            return HloSyntaxError(message, source.span(at, at + 1))

        try:
            read(_Reader(value, key, error_at))
        except HloidxError as error:
            errors.append(error)
    return errors


# -- instructions ---------------------------------------------------------------------------------


def _value_error_at(instruction: Instruction, key: str):
    span = instruction.attribute_span(key)
    exact = key in instruction.attribute_offsets and span is not None

    def error_at(offset: int, message: str, length: int = 1) -> HloidxError:
        if not exact:
            return HloSyntaxError(message, span)
        return HloSyntaxError(
            message, span.source.span(span.start + offset, span.start + offset + length)
        )

    return error_at


def instruction_attribute_errors(
    instruction: Instruction, operands_resolved: bool
) -> list[HloidxError]:
    """The checks of this module for one instruction (its operands linked when
    ``operands_resolved``)."""
    errors: list[HloidxError] = []
    attributes = instruction.attributes
    if "result_accuracy" in attributes:
        _collect(errors, _check_result_accuracy, instruction)
    if "parameter_replication" in attributes and instruction.opcode == "parameter":
        _collect(errors, _check_replication, instruction)
    if instruction.opcode == "custom-call":
        if "api_version" in attributes:
            _collect(errors, _check_api_version, instruction)
        if "operand_layout_constraints" in attributes and operands_resolved:
            _collect(errors, _check_layout_constraints, instruction)
    if instruction.shape is not None:
        for message, piece in _layout_problems(instruction.shape):
            errors.append(HloSyntaxError(message, _piece_span(instruction, piece)))
    return errors


def _collect(errors: list[HloidxError], check, instruction: Instruction) -> None:
    try:
        check(instruction)
    except HloidxError as error:
        errors.append(error)


def _check_result_accuracy(instruction: Instruction) -> None:
    value = instruction.attributes["result_accuracy"]
    error_at = _value_error_at(instruction, "result_accuracy")
    if instruction.opcode not in RESULT_ACCURACY_OPCODES:
        raise HloSemanticError(
            f"{instruction.opcode} takes no result_accuracy (only transcendental unary ops do)",
            instruction.attribute_span("result_accuracy"),
        )
    reader = _Reader(value, "result_accuracy", error_at)
    reader.take("{", "'{' to start result_accuracy")
    field = reader.peek()
    if field == "mode":
        reader.at += 1
        reader.take("=", "'=' after mode")
        mode = reader.peek()
        if mode is None or mode.lower() not in _ACCURACY_MODES:
            raise reader.fail("an accuracy mode (default or highest)")
        reader.at += 1
    elif field == "tolerance":
        reader.at += 1
        reader.take("=", "'=' after tolerance")
        _read_tolerance(value, reader)
    else:
        raise reader.fail("mode=... or tolerance={...}")
    reader.take("}", "'}' to end result_accuracy")
    if reader.peek() is not None:
        raise reader.fail("nothing after result_accuracy")


def _read_tolerance(value: str, reader: _Reader) -> None:
    reader.take("{", "'{' to start the tolerance")
    if reader.peek() == "}":
        reader.at += 1
        return
    while True:
        name = reader.peek()
        if name not in _TOLERANCE_FIELDS:
            raise reader.fail("a tolerance field (rtol, atol or ulps)")
        reader.at += 1
        reader.take("=", f"'=' after {name}")
        # the number: every character up to the next ',' or '}'
        start = reader.offset()
        stop = start
        while stop < len(value) and value[stop] not in ",}":
            stop += 1
        try:
            float(value[start:stop])
        except ValueError:
            raise reader.fail(f"a number for {name}") from None
        while reader.at < len(reader.tokens) and reader.tokens[reader.at][1] < stop:
            reader.at += 1
        if reader.peek() != ",":
            break
        reader.at += 1
    reader.take("}", "'}' to end the tolerance")


def _check_replication(instruction: Instruction) -> None:
    value = instruction.attributes["parameter_replication"]
    error_at = _value_error_at(instruction, "parameter_replication")
    reader = _Reader(value, "parameter_replication", error_at)
    reader.take("{", "'{' to start parameter_replication")
    count = 0
    if reader.peek() != "}":
        while True:
            if reader.peek() not in ("true", "false"):
                raise reader.fail("true or false")
            reader.at += 1
            count += 1
            if reader.peek() != ",":
                break
            reader.at += 1
    reader.take("}", "'}' to end parameter_replication")
    if reader.peek() is not None:
        raise reader.fail("nothing after parameter_replication")
    if instruction.shape is not None and count != leaf_count(instruction.shape):
        raise HloSemanticError(
            f"parameter {instruction.name} has {leaf_count(instruction.shape)} leaf buffers "
            f"but parameter_replication lists {count}",
            instruction.attribute_span("parameter_replication"),
        )


def _check_api_version(instruction: Instruction) -> None:
    value = instruction.attributes["api_version"].strip()
    if value not in API_VERSIONS:
        raise HloSyntaxError(
            f"custom-call api_version {value} is not one of {', '.join(sorted(API_VERSIONS))}",
            instruction.attribute_span("api_version"),
        )


def _split_top_level(text: str) -> Iterator[tuple[str, int]]:
    """The comma-separated parts of ``text`` (outside brackets), with their offsets."""
    depth = 0
    start = 0
    for at, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            yield text[start:at], start
            start = at + 1
    yield text[start:], start


def _check_layout_constraints(instruction: Instruction) -> None:
    from .shape_text import parse_shape

    value = instruction.attributes["operand_layout_constraints"]
    error_at = _value_error_at(instruction, "operand_layout_constraints")
    inner = value.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise error_at(0, "operand_layout_constraints: expected a list of shapes in { }")
    base = value.find("{") + 1
    body = inner[1:-1]
    parts = [] if not body.strip() else list(_split_top_level(body))
    operands = instruction.operands
    if len(parts) != len(operands):
        raise HloSemanticError(
            f"{instruction.name} has {len(operands)} operands but operand_layout_constraints "
            f"lists {len(parts)} shape(s)",
            instruction.attribute_span("operand_layout_constraints"),
        )
    for position, ((text, offset), operand) in enumerate(zip(parts, operands, strict=True)):
        stripped = text.strip()
        at = base + offset + (len(text) - len(text.lstrip()))
        shape = _read_shape(stripped, parse_shape)
        if shape is None:
            continue  # a form this check does not read: left to the shape readers
        if operand.shape is not None and not compatible_shapes(shape, operand.shape):
            raise error_at(
                at,
                f"operand layout constraint {stripped} for operand {position} "
                f"({operand.name}) does not match its shape {operand.shape}",
                len(stripped),
            )


def _read_shape(text: str, parse_shape) -> Shape | None:
    """An array or tuple shape written in an attribute, or None when it does not read."""
    if text.startswith("(") and text.endswith(")"):
        inner = text[1:-1]
        if not inner.strip():
            return Shape("tuple", tuple_shapes=())
        elements = []
        for part, _ in _split_top_level(inner):
            element = _read_shape(part.strip(), parse_shape)
            if element is None:
                return None
            elements.append(element)
        return Shape("tuple", tuple_shapes=tuple(elements))
    try:
        return parse_shape(text)
    except (HloidxError, ValueError, IndexError):
        return None


# -- layouts --------------------------------------------------------------------------------------


def _layout_items(tiling: str) -> Iterator[tuple[str, str]]:
    """(prefix, text inside the parentheses) of each item of a layout's suffix
    (``D(D,C)T(8,128)(2,1)S(1)`` gives ``D``, ``T``, ``T``, ``S``)."""
    at = 0
    prefix = ""
    while at < len(tiling):
        if tiling[at] != "(":
            start = at
            while at < len(tiling) and tiling[at] != "(":
                at += 1
            prefix = tiling[start:at].strip()
            continue
        depth = 0
        for stop in range(at, len(tiling)):
            depth += {"(": 1, ")": -1}.get(tiling[stop], 0)
            if depth == 0:
                break
        else:
            return  # unbalanced: the shape reader reports it
        yield prefix, tiling[at + 1 : stop]
        at = stop + 1


def _layout_problems(shape: Shape) -> Iterator[tuple[str, str]]:
    """(message, the offending text) for each layout detail XLA rejects in ``shape``."""
    if shape.tuple_shapes is not None:
        for element in shape.tuple_shapes:
            yield from _layout_problems(element)
        return
    if shape.layout is None or not shape.layout.tiling:
        return
    levels: list[str] = []
    for prefix, inside in _layout_items(shape.layout.tiling):
        if prefix == "D":
            for level in (p.strip() for p in inside.split(",")) if inside.strip() else ():
                if not _DIM_LEVEL.fullmatch(level):
                    yield (
                        f"dimension level type {level!r} in a layout is not one of D, C, S, H",
                        f"D({inside})",
                    )
                    return
                levels.append(level[0])
        elif prefix == "P" and all(level == "D" for level in levels):
            yield (
                "a layout's physical shape P(...) is for sparse arrays only; this layout "
                "has no sparse (C, S or H) dimension",
                f"P({inside})",
            )


def _piece_span(instruction: Instruction, piece: str) -> Span | None:
    span = instruction.span
    if span is None:
        return None
    at = span.source.text.find(piece, span.start, span.end)
    if at < 0:
        return span
    return span.source.span(at, at + len(piece))
