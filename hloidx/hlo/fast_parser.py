"""The fast path: one master regular expression lexes the text and drives Lark's own LALR tables
directly, falling back to Lark wherever they would read differently and on any error."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from lark import Lark, Token

from .hlo_builder import (
    _parser,
)


@cache
def _fast_parser() -> _FastParser | None:
    """The fast path over the parser's own tables, or None if lark's internals have moved."""
    try:
        return _FastParser(_parser()[0])
    except (AttributeError, KeyError, TypeError, ValueError):
        return None


class _Fallback(Exception):
    """The fast path met something it does not decide itself (any error, an odd token)."""


class _FastParser:
    """Lexes with ONE compiled regular expression and drives lark's own LALR tables.

    lark's contextual lexer picks, in each parser state, the first alternative of its ordered
    terminal list that matches among the terminals that state accepts; this path matches with
    the same ordered list over ALL terminals (lark's root scanner, keyword re-typing included)
    and accepts the token only if the state accepts its type. Then both lexers chose the same
    token: every alternative ordered before it failed here, so it failed there too. Anything
    else (an unexpected character or token, a token only the contextual lexer would read) raises
    :class:`_Fallback`, and the caller re-parses with lark itself, whose errors we convert. The
    callbacks (child filters around :class:`_Builder`) are lark's, so results are identical;
    tokens carry ``type``, ``value``, ``start_pos`` and ``end_pos``, all the builder reads.
    """

    def __init__(self, lark: Lark) -> None:
        lalr = lark.parser.parser.parser
        table = lalr.parse_table
        self.start_states: dict[str, int] = dict(table.start_states)
        self.end_states: dict[str, int] = dict(table.end_states)
        self.callbacks = lalr.callbacks
        root = lark.parser.lexer.root_lexer
        scanner = root.scanner
        if len(scanner._mres) != 1:
            raise ValueError("lark split the terminals over several regular expressions")
        self.regex: re.Pattern[str] = scanner._mres[0]
        self.ignore: frozenset[str] = frozenset(root.ignore_types)
        # Keywords that a regex terminal also matches (`ROOT` is a NAME too): lark re-types the
        # token when its whole text is the keyword.
        self.keywords: dict[str, dict[str, str]] = {}
        for kind, callback in root.callback.items():
            strings = callback.scanner.terminals
            if type(callback).__name__ != "UnlessCallback" or any(t.pattern.flags for t in strings):
                raise ValueError(f"unexpected lexer callback on {kind}")
            self.keywords[kind] = {t.pattern.value: t.name for t in strings}
        # Per state: symbol -> (True, next state) or (False, (size, nonterminal, callback)).
        # Keys are plain strings: lark's nonterminal names are Tokens, whose == is slow.
        self.states: dict[int, dict[str, tuple[bool, Any]]] = {}
        for state, actions in table.states.items():
            row: dict[str, tuple[bool, Any]] = {}
            for symbol, (action, arg) in actions.items():
                if action.name == "Shift":
                    row[str(symbol)] = (True, arg)
                else:
                    reduce = (len(arg.expansion), str(arg.origin.name), self.callbacks[arg])
                    row[str(symbol)] = (False, reduce)
            self.states[state] = row
        if any(kind in self.callbacks for row in self.states.values() for kind in row):
            raise ValueError("terminal callbacks are not supported by the fast path")
        # Terminals every rule filters out (punctuation, `_COMMA`): no callback reads them, so
        # they are shifted as None rather than built as tokens.
        kept = {
            symbol.name
            for rule in lark.rules
            for symbol in rule.expansion
            if symbol.is_term and (not symbol.filter_out or rule.options.keep_all_tokens)
        }
        self.unread: frozenset[str] = frozenset(
            symbol.name
            for rule in lark.rules
            for symbol in rule.expansion
            if symbol.is_term and symbol.name not in kept
        )
        self.state_lexers = lark.parser.lexer.lexers

    def relex(self, state: int, text: str, position: int) -> tuple[str, str]:
        """The token lark's contextual lexer reads at ``position`` in ``state``."""
        lexer = self.state_lexers[state]
        for regex in lexer.scanner._mres:
            found = regex.match(text, position)
            if found is not None:
                break
        else:
            raise _Fallback(position)
        value, kind = found.group(), found.lastgroup
        callback = lexer.callback.get(kind)
        if callback is not None:
            kind = callback(Token(kind, value)).type
        return kind, value

    def parse(self, text: str, start: str) -> Any:
        states = self.states
        match = self.regex.match
        ignore = self.ignore
        keywords = self.keywords
        unread = self.unread
        end_state = self.end_states[start]
        new_str = str.__new__
        token_class = Token
        state = self.start_states[start]
        state_stack = [state]
        value_stack: list[Any] = []
        row = states[state]
        position = 0
        length = len(text)
        at_end = False
        while True:
            if position < length:
                found = match(text, position)
                if found is None:
                    raise _Fallback(position)
                kind = found.lastgroup
                end = found.end()
                if kind in ignore:
                    position = end
                    continue
                value = found.group()
                if kind in keywords:
                    kind = keywords[kind].get(value, kind)
                if kind not in row:
                    # What lark's lexer for this state reads (`{` opens a body, not a BLOB).
                    kind, value = self.relex(state, text, position)
                    end = position + len(value)
                    if kind in ignore:
                        position = end
                        continue
                if kind in unread:
                    token = None
                else:
                    token = new_str(token_class, value)
                    token.type = kind
                    token.value = value
                    token.start_pos = position
                    token.end_pos = end
                position = end
            else:
                kind = "$END"
                token = None
                at_end = True
            while True:
                action = row.get(kind)
                if action is None:
                    raise _Fallback(position)
                if action[0]:
                    if at_end:
                        raise _Fallback(position)  # lark never shifts the end marker
                    state = action[1]
                    state_stack.append(state)
                    value_stack.append(token)
                    row = states[state]
                    break
                size, origin, callback = action[1]
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value = callback(children)
                state = states[state_stack[-1]][origin][1]
                state_stack.append(state)
                value_stack.append(value)
                row = states[state]
                if at_end and state == end_state:
                    return value_stack[-1]
