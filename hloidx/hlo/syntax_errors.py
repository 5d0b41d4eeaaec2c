"""Lark's parse errors in our words: the expected tokens named for a person, specific hints for
common mistakes, and a located HloSyntaxError with the line and a caret."""

from __future__ import annotations

import re
from functools import cache

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..errors import HloSyntaxError
from ..source import Source
from .hlo_builder import (
    _parser,
)

#: Every element type XLA prints (xla/xla_data.proto PrimitiveType, lower-cased).
ELEMENT_TYPE = re.compile(
    r"pred|[su](?:2|4|8|16|32|64)|f(?:16|32|64)|bf16|c(?:64|128)|token|opaque"
    r"|f8e4m3(?:fn|b11fnuz|fnuz)?|f8e5m2(?:fnuz)?|f8e3m4|f8e8m0fnu|f4e2m1fn"
)


_TERMINAL_WORDS = {
    "ARRAY_SHAPE": "a shape such as f32[10,20]",
    "NAME": "a name",
    "ELEMENT_NAME": "a name",  # `%t#1`: where a name may come, an element operand may
    "ATTRIBUTES": "',' and an attribute such as dimensions={0}",
    "NUMBER": "a number",
    "INT": "a number",
    "BLOB": "a {...} literal",
    "PAREN_LITERAL": "a (...) literal",
    "MODULE_NAME_COLON": "a name",
    "STRING": "a string",
    "DEFINED_NAME": "an instruction such as p0 = f32[2] parameter(0)",
    "CALL": "an opcode and '(' such as add(",
    "RPAR": "')'",
    "INLINE_KEY": "a computation written inline such as calls={ ... }",
    "_COMMA": "','",
    "ROOT": "ROOT",
    "ENTRY": "ENTRY",
    "$END": "the end of the input",
}


_WORD_ORDER = [
    "a shape such as f32[10,20] or (f32[], s32[])",
    "a shape such as f32[10,20]",
    "a name",
    "ROOT",
    "ENTRY",
    "'('",
    "')'",
    "'{'",
    "'}'",
    "'='",
    "','",
]


@cache
def _anonymous_words() -> dict[str, str]:
    lark, _ = _parser()
    words: dict[str, str] = {}
    for terminal in lark.terminals:
        pattern = terminal.pattern
        if pattern.type == "str" and terminal.name not in _TERMINAL_WORDS:
            words[terminal.name] = f"'{pattern.value}'"
    return words


def _expected_words(names: set[str] | frozenset[str] | None) -> str:
    if not names:
        return ""
    anonymous = _anonymous_words()
    words = {_TERMINAL_WORDS.get(n) or anonymous.get(n) or n.lower() for n in names}
    if "a shape such as f32[10,20]" in words and "'('" in words:
        words.discard("'('")  # where a shape may come, '(' opens a tuple shape
        words.discard("a shape such as f32[10,20]")
        words.add("a shape such as f32[10,20] or (f32[], s32[])")
    if "a {...} literal" in words and "a number" in words:
        words.discard("a {...} literal")
        words.discard("a number")
        words.discard("a (...) literal")  # a tuple or complex literal: a literal too
        words.add("a literal")
    order = {w: i for i, w in enumerate(_WORD_ORDER)}
    ranked = sorted(words, key=lambda w: (order.get(w, len(order)), w))
    if len(ranked) > 6:
        ranked = [*ranked[:6], "..."]
    return ", ".join(ranked)


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "the end of the input"
    text = str(token).rstrip()
    if len(text) > 30:
        text = text[:27] + "..."
    return repr(text)


_ELEMENT_TYPE_AT = re.compile(r"([a-z][a-z0-9]*)[ \t]*\[")


_KEY_AT = re.compile(r"\s*,\s*([A-Za-z_][\w.\-]*)\s*=")


def _specific(source: Source, at: int, expected: set[str]) -> HloSyntaxError | None:
    """A clearer message for the common mistakes at ``at``, or None."""
    text = source.text
    if "ARRAY_SHAPE" in expected:
        match = _ELEMENT_TYPE_AT.match(text, at)
        if match:
            element_type = match.group(1)
            if not ELEMENT_TYPE.fullmatch(element_type):
                return HloSyntaxError(
                    f"unknown element type {element_type!r}; expected a shape such as f32[10,20]",
                    source.span(at, match.end(1)),
                )
            line_end = text.find("\n", at)
            line = text[at : line_end if line_end >= 0 else len(text)]
            close = line.find("]")
            shown = line[: close + 1] if close >= 0 else line[:20]
            return HloSyntaxError(
                f"malformed shape {shown!r}; expected a shape such as "
                f"f32[10,20] or f32[<=10,?]{{1,0}}",
                source.span(at, match.end()),
            )
    if "ATTRIBUTES" in expected or "INLINE_KEY" in expected:
        match = _KEY_AT.match(text, at)
        if match:
            key = match.group(1)
            return HloSyntaxError(
                f"malformed value of attribute {key}: unbalanced braces, brackets or quotes?",
                source.span(match.start(1), match.end(1)),
            )
    return None


def _convert(error: UnexpectedInput, source: Source, base: int, piece: str) -> HloSyntaxError:
    """A lark exception as our error: located, with the expected tokens in words."""
    if isinstance(error, UnexpectedToken) and error.token.type != "$END":
        token = error.token
        names = set(error.accepts or error.expected)
        at = base + token.start_pos
        specific = _specific(source, at, names)
        if specific:
            return specific
        expected = _expected_words(names)
        message = f"unexpected {_describe_token(token)}" + (
            f"; expected {expected}" if expected else ""
        )
        return HloSyntaxError(message, source.span(at, at + max(1, len(str(token).rstrip()))))
    if isinstance(error, UnexpectedCharacters):
        at = base + error.pos_in_stream
        names = set(error.allowed or ())
        specific = _specific(source, at, names)
        if specific:
            return specific
        char = source.text[at] if at < len(source.text) else ""
        shown = "NUL byte" if char == "\0" else f"character {char!r}"
        expected = _expected_words(names)
        message = f"unexpected {shown}" + (f"; expected {expected}" if expected else "")
        return HloSyntaxError(message, source.span(at, at + 1))
    if isinstance(error, UnexpectedToken | UnexpectedEOF):
        names = (
            set(error.accepts or error.expected)
            if isinstance(error, UnexpectedToken)
            else set(error.expected)
        )
        content_end = len(piece.rstrip())
        at = base + content_end
        if content_end == 0:
            return HloSyntaxError(
                "empty input; expected an HLO module, a computation or "
                "instructions such as p0 = f32[2] parameter(0)",
                source.span(at, at),
            )
        expected = _expected_words(names)
        return HloSyntaxError(
            "unexpected end of the input" + (f"; expected {expected}" if expected else ""),
            source.span(at, at),
        )
    return HloSyntaxError(str(error).splitlines()[0], source.span(base, base))
