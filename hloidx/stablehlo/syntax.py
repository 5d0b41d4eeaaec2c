"""Reading StableHLO (MLIR) text into statements, groups and tokens (``grammars/stablehlo.lark``).

The grammar fixes what every op's printed form shares; :mod:`hloidx.stablehlo.ops` reads each
op's pieces. Errors are located in the MLIR text (``file:line:col``, caret).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..errors import HloSyntaxError
from ..grammar_files import grammar_text, lark_parser
from ..source import Source, Span


class StableHloSyntaxError(HloSyntaxError):
    """Malformed StableHLO text, or a form of a known op that hloidx cannot read."""


@dataclass(frozen=True, slots=True)
class Tok:
    type: str  # the grammar's terminal name: VALUE, BARE_ID, NUMBER, ...
    value: str
    start: int  # character offset in the source

    def __repr__(self) -> str:
        return f"{self.type}:{self.value}"


@dataclass(slots=True)
class Group:
    kind: str  # "(", "[", "{", "<"
    items: list[Any]
    start: int

    @property
    def statements(self) -> list[Stmt]:
        return [i for i in self.items if isinstance(i, Stmt)]

    @property
    def is_region(self) -> bool:
        return self.kind == "{" and any(isinstance(i, Stmt) for i in self.items)

    def __repr__(self) -> str:
        return f"{self.kind}{self.items!r}"


@dataclass(slots=True)
class Stmt:
    """A statement: ``op`` (``%0 = stablehlo.add ...``), ``return``, ``func`` or ``module``."""

    kind: str
    head: Tok  # the results token (`%0:2 =`), the return keyword, `func.func`, `module`
    pieces: list[Any] = field(default_factory=list)

    @property
    def start(self) -> int:
        return self.head.start

    @property
    def result_groups(self) -> list[tuple[str, int]]:
        """``[("%0", 2)]`` for ``%0:2 =``; ``[("%values", 1), ("%indices", 1)]`` for
        ``%values, %indices =`` (MLIR's named results; a group may have a count too)."""
        text = self.head.value.rstrip("=").strip()
        groups = []
        for part in text.split(","):
            name, _, count = part.strip().partition(":")
            groups.append((name.strip(), int(count) if count else 1))
        return groups

    @property
    def results(self) -> tuple[str, int]:
        """``("%0", 2)`` for ``%0:2 =``; ``("%0", 1)`` for ``%0 =``; for named results a name
        for the whole (the names joined: the HLO tuple's name) and the number of results
        (``("%values_indices", 2)``)."""
        groups = self.result_groups
        count = sum(c for _, c in groups)
        if len(groups) == 1:
            return groups[0][0], count
        return "%" + "_".join(name.lstrip("%") for name, _ in groups), count

    @property
    def result_names(self) -> list[str]:
        """How each result is used, in order: ``%0#0, %0#1`` for ``%0:2 =``; ``%values,
        %indices`` for ``%values, %indices =``; ``%0`` for ``%0 =``."""
        names: list[str] = []
        for name, count in self.result_groups:
            names += [name] if count == 1 else [f"{name}#{k}" for k in range(count)]
        return names

    def __repr__(self) -> str:
        return f"Stmt({self.kind} {self.head.value!r} {self.pieces!r})"


_GROUPS = {"paren": "(", "bracket": "[", "brace": "{", "angle": "<"}
_STATEMENTS = {"op_with_results": "op", "return_op": "return", "func": "func", "module": "module"}

_LOCK = threading.Lock()


@cache
def _parser() -> Any:
    # not strict: the shift/reduce choices of the grammar are deliberate (see its header)
    return lark_parser(
        grammar_text("stablehlo.lark"),
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=False,
    )


def _convert(node: Any) -> Any:
    from lark import Token, Tree

    if isinstance(node, Token):
        return Tok(node.type, str(node), node.start_pos or 0)
    assert isinstance(node, Tree)
    data = node.data if isinstance(node.data, str) else node.data.value
    if data == "atom":
        return _convert(node.children[0])
    if data in _GROUPS:
        # the opening token is dropped by the grammar: locate the group at its first item
        items = [_convert(c) for c in node.children]
        start = node.meta.start_pos if not node.meta.empty else (items[0].start if items else 0)
        return Group(_GROUPS[data], items, start)
    if data in _STATEMENTS:
        head = _convert(node.children[0])
        return Stmt(_STATEMENTS[data], head, [_convert(c) for c in node.children[1:]])
    return [_convert(c) for c in node.children]


# `%0 =`, `%0:2 =`, and MLIR's named results `%values, %indices =` (then an op name: a while
# loop's `%iterArg = %c, %iterArg_1 = %d` bindings are followed by a value, never a name)
_NAME = r"%[A-Za-z0-9_$.\-]+(?::[0-9]+)?"
_RESULTS = rf"{_NAME}\s*=(?!=)|{_NAME}(?:\s*,\s*{_NAME})+\s*=(?!=)(?=\s*[A-Za-z_\"])"

# The grammar's terminals, in the order Lark's lexer tries them (priority first); the fast
# reader below uses them to read well-formed text without Lark's generic machinery.
_FAST_TOKEN = re.compile(
    "|".join(
        f"(?P<{name}>{pattern})"
        for name, pattern in (
            ("DIMS", r"(?:(?:[0-9]+|\?)x)+(?=[a-z!])"),
            ("HEX", r"0x[0-9A-Fa-f]+(?![0-9A-Za-z])"),
            ("RESULTS", _RESULTS),
            (
                "RETURN",
                r'(?:stablehlo\.return|func\.return|mhlo\.return|"stablehlo\.return"'
                r'|"func\.return"|return)(?![A-Za-z0-9_$.])',
            ),
            ("FUNC", r"func\.func(?![A-Za-z0-9_$.])"),
            ("MODULE", r"module(?![A-Za-z0-9_$.])"),
            ("ARROW", r"->"),
            ("VALUE", r"%[A-Za-z0-9_$.\-]+(?:#[0-9]+)?"),
            ("SYMBOL", r'@[A-Za-z0-9_$.\-]+|@"(?:\\.|[^"\\])*"'),
            ("HASH_ID", r"#[A-Za-z0-9_$.\-]+"),
            ("BANG_ID", r"![A-Za-z0-9_$.\-]+"),
            ("BLOCK", r"\^[A-Za-z0-9_$.\-]+"),
            ("STRING", r'"(?:\\.|[^"\\])*"'),
            ("NUMBER", r"[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"),
            ("BARE_ID", r"[A-Za-z_][A-Za-z0-9_$.]*"),
            ("OPEN", r"[(\[{<]"),
            ("CLOSE", r"[)\]}>]"),
            ("COLON", r":"),
            ("COMMA", r","),
            ("EQUAL", r"="),
            ("QUESTION", r"\?"),
            ("STAR", r"\*"),
            ("SKIP", r"\s+|//[^\n]*"),
        )
    )
)
_CLOSES = {"(": ")", "[": "]", "{": "}", "<": ">"}
_STARTS = {"RESULTS": "op", "RETURN": "return", "FUNC": "func", "MODULE": "module"}


def _fast_items(text: str) -> list[Any] | None:
    """The items of well-formed text, as the grammar reads them; None at anything else (the
    Lark parser then reads it, or words the error)."""
    frames: list[tuple[str, int, list[Any], list[Stmt | None]]] = [("", 0, [], [None])]
    pos, end = 0, len(text)
    match = _FAST_TOKEN.match
    while pos < end:
        m = match(text, pos)
        if m is None:
            return None
        kind, value, start = m.lastgroup, m.group(), pos
        pos = m.end()
        if kind == "SKIP":
            continue
        _, _, items, current = frames[-1]
        if kind == "OPEN":
            frames.append((value, start, [], [None]))
            continue
        if kind == "CLOSE":
            opening, group_start, group_items, _ = frames.pop()
            if not frames or _CLOSES.get(opening) != value:
                return None
            item: Any = Group(opening, group_items, group_start)
            _, _, items, current = frames[-1]
        elif kind in _STARTS:
            stmt = Stmt(_STARTS[kind], Tok(kind, value, start))
            items.append(stmt)
            current[0] = stmt
            continue
        else:
            item = Tok(kind, value, start)
        if current[0] is not None:
            current[0].pieces.append(item)
        else:
            items.append(item)
    if len(frames) != 1:
        return None
    return frames[0][2]


def parse_stablehlo_text(text: str, name: str = "<string>") -> tuple[Source, list[Any]]:
    """The top-level items (statements and pieces) of StableHLO text."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

    source = Source(name, text)
    fast = _fast_items(text)
    if fast is not None:
        return source, fast
    with _LOCK:
        try:
            tree = _parser().parse(text)
        except UnexpectedCharacters as error:
            raise StableHloSyntaxError(
                f"unexpected character {text[error.pos_in_stream]!r}",
                source.span(error.pos_in_stream, error.pos_in_stream + 1),
            ) from None
        except UnexpectedEOF:
            raise StableHloSyntaxError(
                "unexpected end of text (an unclosed bracket or brace?)",
                source.span(len(text)),
            ) from None
        except UnexpectedInput as error:
            token = getattr(error, "token", None)
            if token is not None and token.type == "$END":
                raise StableHloSyntaxError(
                    "unexpected end of text (an unclosed brace or bracket?)",
                    source.span(len(text)),
                ) from None
            offset = getattr(token, "start_pos", None) or 0
            what = f"{token!s}" if token is not None else "input"
            raise StableHloSyntaxError(
                f"unexpected {what!r} (an unbalanced bracket?)",
                source.span(offset, offset + max(1, len(what))),
            ) from None
    return source, _convert(tree)


def span_of(source: Source, item: Any) -> Span:
    start = getattr(item, "start", 0)
    return source.span(start, start + 1)
