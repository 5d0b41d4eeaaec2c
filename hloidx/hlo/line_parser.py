"""The line parser: HLO as XLA prints it, one instruction per line, read with a few whole-line
regular expressions and no lark at all.

XLA's printer puts every instruction on its own line, every computation header on one line and
its closing brace on another. This parser reads exactly that layout: the module header, the
debug tables, computation headers, instruction lines, closing braces and blank lines. It builds
the same IR as the grammar (the same names, shapes, raw attribute values and their offsets,
literals, spans and unresolved operands for :func:`.assembly._assemble`).

It declines (returns None) on anything else: a comment other than XLA's ``/*index=N*/`` or a
``//`` comment to the end of a line, an instruction split over lines, a spaced layout, an
unusual literal, and any text the grammar would reject or report (a duplicate attribute, a
literal with the wrong element count, a non-name operand). The caller then parses with the
grammar, which finds and locates the error. So a text this parser accepts reads the same as
through the grammar, and the tests compare the two on every corpus file, XLA's test modules and
mutated text.

The regular expressions below restate terminals of ``grammars/hlo.lark`` (a test checks that
ATTRIBUTE is the grammar's own pattern).
"""

from __future__ import annotations

import re
from functools import cache
from sys import intern
from typing import Any

from ..errors import HloidxError
from ..source import Source, Span
from .assembly import (
    LITERAL_OPCODES,
    SNIPPET_COMPUTATION,
    _Body,
    _Header,
    _Pending,
)
from .ir import CALL_ATTRIBUTES, Computation, Instruction, Shape
from .shape_text import (
    MAX_TUPLE_DEPTH,
    literal_element_count,
    literal_nests_as,
    literal_value_error,
    parse_shape,
)

_NAME = r"%?[A-Za-z_][\w.\-]*"
_ELEMENT_TYPE = (
    r"(?:pred|[su](?:2|4|8|16|32|64)|f(?:16|32|64)|bf16|c(?:64|128)"
    r"|f8e4m3(?:fn|b11fnuz|fnuz)?|f8e5m2(?:fnuz)?|f8e3m4|f8e8m0fnu|f4e2m1fn|token|opaque)"
)
_DIM = r"(?:<=\s*)?(?:\d+|\?)"
# No space before the layout: XLA prints `f32[2]{0}`; a spaced layout (`f32[2] {0}`, only in
# hand-written tests) is declined.
_ARRAY_SHAPE = (
    _ELEMENT_TYPE + r"[ \t]*\[\s*(?:" + _DIM + r"(?:\s*,\s*" + _DIM + r")*\s*)?\]"
    r"(?:\{[\d,\s]*(?::[^{}]*)?\})?"
)
_STRING = r'"(?:[^"\\]++|\\.)*+"'


def _blob(levels: int) -> str:
    """The grammar's BLOB: braces balanced to six levels, strings inside holding any brace
    (spelled as lark compiles it, so that ATTRIBUTE is the grammar's pattern to the letter)."""
    inner = _STRING + r'|[^{}"]++'
    blob = r"\{(?:(?:" + inner + r"))*\}"
    for _ in range(levels - 1):
        blob = r"\{(?:(?:" + blob + "|" + inner + r"))*\}"
    return blob


_BLOB = _blob(6)
_BARE = (
    r'(?:[^\s,{}()\[\]"]++|\[(?:[^\[\]]++|\[(?:[^\[\]]++|\[[^\[\]]*+\])*+\])*+\]'
    r"|\((?:[^()]++|\((?:[^()]++|\([^()]*+\))*+\))*+\))++"
)
#: One `, key=value` (the grammar's ATTRIBUTE); ATTRIBUTES is a run of them.
# A value of several parts: adjacent ones (`s32[2]{0}`), then after blanks a braced part, a
# parenthesised pair or a number (`literal=s32[2]{0} {1, 2}`, `mesh['a'=2] {'a'}`).
_NEXT_PART = (
    "(?:[ \t]+(?:" + _BLOB + r"|\([^()]*\)|[-+]?(?:\d|\.\d|inf|nan)[^\s,{}()\[\]" + '"' + "]*+))*"
)
# A call attribute whose value is a computation written inline (`calls=\n{ ... }`) is not an
# ATTRIBUTE: the grammar reads the body (INLINE_KEY), and this parser declines the line.
_NOT_INLINE = (
    r"(?!(?:"
    + "|".join(CALL_ATTRIBUTES)
    + r")\s*=\s*\{(?!\s*(?:"
    + _NAME
    + r"\s*,\s*)*(?:"
    + _NAME
    + r"\s*)?\}))"
)
ATTRIBUTE = (
    r"\s*,\s*"
    + _NOT_INLINE
    + r"[A-Za-z_][\w.\-]*\s*=\s*(?:"
    + _BLOB
    + "|"
    + _STRING
    + "|"
    + _BARE
    + ")(?:(?:"
    + _BLOB
    + "|"
    + _BARE
    + "))*"
    + _NEXT_PART
)
_NUMBER = (
    r"[-+]?(?:0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
    r"|[-+](?:inf|nan(?:\(0x[0-9a-fA-F]+\))?)"
)

# `[ROOT] name = shape opcode(`, the shape an array or the `(` of a tuple.
_INSTRUCTION = re.compile(
    r"[ \t]*(?:(ROOT)[ \t]+)?(" + _NAME + r")[ \t]*=[ \t]*"
    r"(?:(" + _ARRAY_SHAPE + r")|(?=\())"
)
_CALL = re.compile(r"[ \t]*([A-Za-z_][\w.\-]*)[ \t]*\(")
# The common operand list: names and commas up to the closing parenthesis.
_PLAIN_OPERANDS = re.compile(r"[ \t]*(?:" + _NAME + r"(?:[ \t]*,[ \t]*" + _NAME + r")*)?[ \t]*\)")
_OPERAND_NAME = re.compile(_NAME)
# Any operand: a name, or an element of a tuple-shaped instruction as XLA's dumps write it
# (`%t#1`, `%t#1#0`; the assembly reads it), read by :meth:`_LineParser._operands` (so that
# the common list above costs nothing more). Spaced (`%t #1`) is for the grammar.
_OPERAND = _NAME + r"(?:#\d+)*"
# A tuple or complex literal, `( {1}, {2} )`, `(0, 0)`: the grammar's PAREN_LITERAL.
_PAREN_LITERAL = r"\(\s*[^\s()\[\]](?:[^()\[\]]|\([^()\[\]]*\))*\)"
_LITERAL = r"[ \t]*(?:" + _BLOB + "|" + _NUMBER + "|" + _NAME + "|" + _PAREN_LITERAL + r")[ \t]*\)"


# The long patterns (braces nested six deep) are compiled on first use, and most lines never
# use them: a compiled pattern is not kept between runs, and compiling these two was a tenth of
# `hloidx maps` on a small file. What most lines hold is read by the short patterns below, which
# match exactly where the long ones would, with the same end, or not at all (then the long one
# decides): an integer literal (`parameter(0)`, `constant(1)`), and an attribute whose value is
# one run of plain characters or one brace pair without braces or quotes inside, followed by a
# comma or the end of the line. After such a value the long pattern can add nothing: its further
# parts start with a brace, a bracket, a parenthesis, a quote, or blanks and then a brace, a
# parenthesis or a number.
@cache
def _literal() -> re.Pattern[str]:
    return re.compile(_LITERAL)


@cache
def _one_attribute() -> re.Pattern[str]:
    return re.compile(ATTRIBUTE)


_SIMPLE_LITERAL = re.compile(r"[ \t]*[-+]?\d+[ \t]*\)")
_SIMPLE_ATTRIBUTE = re.compile(
    r"\s*,\s*"
    + _NOT_INLINE
    + r"[A-Za-z_][\w.\-]*\s*=\s*(?:[^\s,{}()\[\]\"]++|\{[^{}\"]*\})(?=,|[ \t\r]*(?://|\Z))"
)


_COMMA = re.compile(r"\s*,")


def _attribute_at(text: str, position: int, end: int) -> re.Match[str] | None:
    """One `, key=value` at ``position`` (the grammar's ATTRIBUTE), or None: without a comma
    there (the end of every line) the long pattern is not asked."""
    found = _SIMPLE_ATTRIBUTE.match(text, position, end)
    if found is None and _COMMA.match(text, position, end) is not None:
        found = _one_attribute().match(text, position, end)
    return found


# What may end a line after its last token: blanks and a `//` comment (the grammar ignores both).
_LINE_END = re.compile(r"[ \t\r]*(?://[^\n]*)?")
# Between the tokens of a tuple shape or an operand list XLA prints `/*index=5*/`.
_GAP = re.compile(r"(?:[ \t]|/\*index=\d+\*/)*")
_ARRAY = re.compile(_ARRAY_SHAPE)
_GAP_NAME = re.compile(r"(?:[ \t]|/\*index=\d+\*/)*(" + _OPERAND + ")")

_HEADER_LINE = re.compile(r"[ \t]*HloModule[ \t]+(" + _NAME + ")")
_TABLE_NAME = re.compile(
    r"[ \t]*(?:FileNames|FunctionNames|FileLocations|StackFrames)[ \t\r]*(?://[^\n]*)?"
)
_TABLE_ENTRY = r"[ \t]*\d+[ \t]*(?:" + _STRING + "|" + _BLOB + r")[ \t\r]*(?://[^\n]*)?"


@cache
def _table_entry() -> re.Pattern[str]:
    """A debug table's entry line, compiled on first use: most files have no tables."""
    return re.compile(_TABLE_ENTRY)


_COMPUTATION = re.compile(r"[ \t]*(?:(ENTRY)[ \t]+)?(" + _NAME + r")[ \t]*")
_SIGNATURE_OPEN = re.compile(r"\([ \t]*")
_PARAMETER = re.compile(r"(?:[ \t]|/\*index=\d+\*/)*(" + _NAME + r")[ \t]*:[ \t]*")
_ARROW = re.compile(r"[ \t]*->[ \t]*")
_BODY_OPEN = re.compile(r"[ \t]*\{[ \t\r]*(?://[^\n]*)?")
_BODY_CLOSE = re.compile(r"[ \t]*\}")
_BLANK = re.compile(r"[ \t\r]*(?://[^\n]*)?")

#: Names the grammar reads as keywords, not as instruction or computation names.
_KEYWORDS = frozenset({"ROOT", "ENTRY", "HloModule"})


class Declined(Exception):
    """The text is not in the layout this parser reads; the grammar parses it instead."""


class LineParseState:
    """What the assembly needs from a parse (see :class:`.assembly.ParseState`)."""

    __slots__ = ("errors", "inline_calls", "pending", "rootless", "shapeless", "single", "source")

    def __init__(self, source: Source) -> None:
        self.source = source
        self.errors: list[Any] = []
        self.pending: dict[Instruction, _Pending] = {}
        self.rootless: set[str] = set()
        self.shapeless = False  # this parser declines an instruction without its shape
        self.inline_calls: list[Any] = []  # and a computation written inline
        self.single = False


def parse_lines(text: str, source: Source) -> tuple[tuple[_Header | None, _Body], Any] | None:
    """``((header, body), state)`` as the grammar's builder would give them, or None."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return None  # lines ended by a lone CR (old Mac files): the grammar reads them
    try:
        return _LineParser(text, source).module()
    except (Declined, HloidxError):  # a malformed number in a shape: the grammar locates it
        return None


class _LineParser:
    def __init__(self, text: str, source: Source) -> None:
        self.text = text
        self.source = source
        self.state = LineParseState(source)
        # (start, end) of each line, the newline excluded
        self.lines: list[tuple[int, int]] = []
        start = 0
        find = text.find
        while True:
            end = find("\n", start)
            if end < 0:
                self.lines.append((start, len(text)))
                break
            self.lines.append((start, end))
            start = end + 1
        self.at = 0  # index of the next line to read

    # -- lines -------------------------------------------------------------------------------
    def _next_nonblank(self) -> tuple[int, int] | None:
        text, lines, blank = self.text, self.lines, _BLANK.fullmatch
        while self.at < len(lines):
            begin, end = lines[self.at]
            if blank(text, begin, end) is None:
                return begin, end
            self.at += 1
        return None

    # -- module --------------------------------------------------------------------------------
    def module(self) -> tuple[tuple[_Header | None, _Body], LineParseState]:
        header = self._header()
        self._debug_tables()
        computations: list[Computation] = []
        while (line := self._next_nonblank()) is not None:
            begin, end = line
            if _INSTRUCTION.match(self.text, begin, end) is not None and not computations:
                return (header, self._snippet()), self.state
            computations.append(self._computation(begin, end))
        if not computations:
            raise Declined
        return (header, _Body(computations, is_snippet=False)), self.state

    def _header(self) -> _Header | None:
        line = self._next_nonblank()
        if line is None:
            raise Declined
        begin, end = line
        match = _HEADER_LINE.match(self.text, begin, end)
        if match is None:
            return None
        attributes: dict[str, str] = {}
        self._attributes(match.end(), end, attributes, {})
        self.at += 1
        name = match.group(1)
        return _Header(name[1:] if name.startswith("%") else name, attributes)

    def _debug_tables(self) -> None:
        """XLA's debug tables (`FileNames`, `FunctionNames`, ...), skipped."""
        text = self.text
        while (line := self._next_nonblank()) is not None:
            begin, end = line
            if _TABLE_NAME.fullmatch(text, begin, end) is None:
                return
            self.at += 1
            while (line := self._next_nonblank()) is not None:
                if _table_entry().fullmatch(text, line[0], line[1]) is None:
                    break
                self.at += 1

    # -- computations --------------------------------------------------------------------------
    def _computation(self, begin: int, end: int) -> Computation:
        text = self.text
        match = _COMPUTATION.match(text, begin, end)
        if match is None or match.group(2) in _KEYWORDS:
            raise Declined
        position = match.end()
        result_shape = None
        if position < end and text[position] == "(":
            position, result_shape = self._signature(position, end)
        if _BODY_OPEN.fullmatch(text, position, end) is None:
            raise Declined
        self.at += 1
        instructions: list[Instruction] = []
        lines = self.lines
        while True:
            line = self._next_nonblank()
            if line is None:
                raise Declined  # no closing brace
            line_begin, line_end = line
            close = _BODY_CLOSE.match(text, line_begin, line_end)
            if close is not None:
                # `}` alone, or followed by computation attributes (accepted, not kept)
                after = close.end()
                # one attribute after another: what `(?:ATTRIBUTE)+` would match, without
                # compiling a second copy of the long pattern at start-up
                while (attribute := _attribute_at(text, after, line_end)) is not None:
                    after = attribute.end()
                if _LINE_END.fullmatch(text, after, line_end) is None:
                    raise Declined
                self.at += 1
                break
            instructions.append(self._instruction(*lines[self.at]))
            self.at += 1
        if not instructions:
            raise Declined
        name = match.group(2)
        name_start = match.start(2)
        return Computation(
            name=name[1:] if name[0] == "%" else name,
            instructions=instructions,
            is_entry=match.group(1) is not None,
            span=Span(self.source, name_start, instructions[-1].span.end),
            result_shape=result_shape,
        )

    def _signature(self, position: int, end: int) -> tuple[int, Shape]:
        """Past `(p: shape, ...) -> shape`, and the result shape (the rest is not kept)."""
        text = self.text

        def parameter(at: int) -> int:
            found = _PARAMETER.match(text, at, end)
            if found is None:
                raise Declined
            return self._shape(found.end(), end, 0)[1]

        position = self._list(position + 1, end, parameter)
        arrow = _ARROW.match(text, position, end)
        if arrow is None:
            raise Declined
        shape, after = self._shape(arrow.end(), end, 0)
        return after, shape

    def _list(self, position: int, end: int, item: Any) -> int:
        """Items separated by commas up to `)` (the `(` already read), as the grammar's
        `[item (_COMMA item)*] ")"`: ``item(offset)`` reads one and returns the offset after
        it. Returns the offset after the `)`."""
        text, gap = self.text, _GAP.match
        position = gap(text, position, end).end()
        if position < end and text[position] == ")":
            return position + 1
        while True:
            position = gap(text, item(position), end).end()
            if position >= end:
                raise Declined
            if text[position] == ")":
                return position + 1
            if text[position] != ",":
                raise Declined
            position = gap(text, position + 1, end).end()

    def _snippet(self) -> _Body:
        instructions: list[Instruction] = []
        while (line := self._next_nonblank()) is not None:
            instructions.append(self._instruction(*line))
            self.at += 1
        self.state.single = len(instructions) == 1
        first, last = instructions[0].span, instructions[-1].span
        computation = Computation(
            name=SNIPPET_COMPUTATION,
            instructions=instructions,
            is_entry=True,
            span=Span(self.source, first.start, last.end),
        )
        return _Body([computation], is_snippet=True)

    # -- shapes --------------------------------------------------------------------------------
    def _shape(self, position: int, end: int, depth: int) -> tuple[Shape, int]:
        """The shape at ``position`` (an array or a tuple) and the offset after it."""
        text = self.text
        if position < end and text[position] == "(":
            if depth >= MAX_TUPLE_DEPTH:
                raise Declined  # the grammar reports it, located
            elements: list[Shape] = []

            def element(at: int) -> int:
                shape, after = self._shape(at, end, depth + 1)
                elements.append(shape)
                return after

            position = self._list(position + 1, end, element)
            return Shape("tuple", tuple_shapes=tuple(elements)), position
        match = _ARRAY.match(text, position, end)
        if match is None:
            raise Declined
        return parse_shape(match.group()), match.end()

    # -- instructions --------------------------------------------------------------------------
    def _instruction(self, begin: int, end: int) -> Instruction:
        text = self.text
        head = _INSTRUCTION.match(text, begin, end)
        if head is None:
            raise Declined
        name = head.group(2)
        if name in _KEYWORDS:
            raise Declined
        array = head.group(3)
        if array is not None:
            shape = parse_shape(array)
            position = head.end()
        else:
            shape, position = self._shape(head.end(), end, 0)
        call = _CALL.match(text, position, end)
        if call is None:
            raise Declined
        opcode = intern(call.group(1))  # a few dozen opcodes, tens of thousands of instructions
        lpar_end = call.end()
        operands: list[tuple[str, int, int]] = []
        literal = None
        typed: dict[int, Shape] | None = None
        if opcode in LITERAL_OPCODES:
            found = _SIMPLE_LITERAL.match(text, lpar_end, end) or _literal().match(
                text, lpar_end, end
            )
            if found is None:
                raise Declined
            rpar_end = found.end()
            literal = text[lpar_end : rpar_end - 1].strip()
        else:
            found = _PLAIN_OPERANDS.match(text, lpar_end, end)
            if found is not None:
                rpar_end = found.end()
                for operand in _OPERAND_NAME.finditer(text, lpar_end, rpar_end - 1):
                    value = operand.group()
                    operands.append(
                        (value[1:] if value[0] == "%" else value, operand.start(), operand.end())
                    )
            else:
                typed = {}
                rpar_end = self._operands(lpar_end, end, operands, typed)
        attributes: dict[str, str] = {}
        offsets: dict[str, int] = {}
        stop = self._attributes(rpar_end, end, attributes, offsets)
        if name[0] == "%":
            name = name[1:]
        root = head.group(1) is not None
        instruction = Instruction(
            name=name,
            opcode=opcode,
            shape=shape,
            attributes=attributes,
            attribute_offsets=offsets,
            span=Span(self.source, head.start(2), stop),
            is_root=root,
        )
        if literal is not None:
            instruction.literal = literal
            if not _literal_accepted(opcode, literal, shape):
                raise Declined  # the grammar's builder reports it
        self.state.pending[instruction] = _Pending(
            operands, head.start(1) if root else None, typed or None
        )
        return instruction

    def _operands(
        self,
        position: int,
        end: int,
        operands: list[tuple[str, int, int]],
        typed: dict[int, Shape],
    ) -> int:
        """Operands with XLA's `/*index=N*/` comments or inline shapes (`f32[2] %p`, kept in
        ``typed`` by operand position to be checked); the offset after the parenthesis."""
        text = self.text

        def operand(at: int) -> int:
            if at >= end:
                raise Declined  # the line (or the file) ends inside the operand list
            if text[at] == "(" or _ARRAY.match(text, at, end) is not None:
                typed[len(operands)], at = self._shape(at, end, 0)
            found = _GAP_NAME.match(text, at, end)
            if found is None:
                raise Declined
            value = found.group(1)
            operands.append((value[1:] if value[0] == "%" else value, found.start(1), found.end(1)))
            return found.end()

        return self._list(position, end, operand)

    def _attributes(
        self, position: int, end: int, attributes: dict[str, str], offsets: dict[str, int]
    ) -> int:
        """`, key=value` pairs up to the end of the line; the offset after the last value."""
        text = self.text
        stop = position
        # ATTRIBUTES is ATTRIBUTE repeated, and nothing follows it in the token: matching one
        # ATTRIBUTE after another finds the same pairs in one pass
        one = _attribute_at
        while (match := one(text, stop, end)) is not None:
            stop = match.end()
            piece = match.group()
            eq = piece.index("=")
            key = intern(piece[piece.index(",") + 1 : eq].strip())
            value_at = eq + 1
            while piece[value_at] in " \t\r\n":
                value_at += 1
            if key in attributes:
                raise Declined  # the grammar's builder reports the duplicate
            attributes[key] = piece[value_at:]
            offsets[key] = match.start() + value_at
        if _LINE_END.fullmatch(text, stop, end) is None:
            raise Declined
        return stop


def _literal_accepted(opcode: str, literal: str, shape: Shape) -> bool:
    """Whether the grammar's builder takes this literal without an error (the same checks)."""
    if opcode == "parameter":
        return literal.isdigit()
    if not literal:
        return False
    if not shape.is_array or shape.dynamic or "..." in literal:
        return True
    if literal_value_error(literal, shape.element_type) is not None:
        return False
    count = literal_element_count(literal)
    expected = shape.num_elements()
    if count == expected != 1:
        return literal_nests_as(literal, shape.dims)
    return count == expected or count == 1
