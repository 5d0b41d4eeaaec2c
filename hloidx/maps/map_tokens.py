"""Map text cut into tokens for the fast reader (.fast_map_parser), and the constant tables it
reads tokens by: default variable names and declaration lists, the small naturals."""

from __future__ import annotations

from .interval import make_interval
from .nodes import Var, VarKind

# Tokens are cut by spacing out the punctuation and splitting on white space: a few passes
# of str.replace and one str.split, each in C, cost a third of a regular-expression scan. Any
# other character stays glued to its neighbours, and the token it makes matches no rule.
_PUNCTUATION = "(),[]{}:+-*/%"
OPERATORS = "+-*/%"
SPACED_BRACKETS = [(mark, f" {mark} ") for mark in _PUNCTUATION if mark not in OPERATORS]
SPACED_ALL = [(mark, f" {mark} ") for mark in _PUNCTUATION]
#: The names a variable has by default (a declared name equal to its default is kept as "").
DEFAULT_NAMES = tuple(tuple(f"{kind.prefix}{i}" for i in range(64)) for kind in VarKind)
#: Declaration lists of up to LISTED - 1 variables under their default names, as tokens up
#: to the closing bracket (``d0 , d1 )``), with the variables they declare by name, and their
#: names as the map keeps them (a default name is kept as ""): constant tables.
LISTED = 17
_CLOSERS = (")", "]", "}")


def _default_list(names: tuple[str, ...], close: str) -> list[str]:
    tokens = [close]
    for name in reversed(names):
        tokens[:0] = [name, ","] if len(tokens) > 1 else [name]
    return tokens


DEFAULT_LISTS = tuple(
    tuple(_default_list(names[:count], close) for count in range(LISTED))
    for names, close in zip(DEFAULT_NAMES, _CLOSERS, strict=True)
)
DEFAULT_LEAVES = tuple(
    tuple({names[i]: Var(kind, i) for i in range(count)} for count in range(LISTED))
    for names, kind in zip(DEFAULT_NAMES, VarKind, strict=True)
)
NO_NAMES = tuple(("",) * count for count in range(LISTED))
#: The small naturals by their digits (a constant table, not a cache): the bounds of an
#: interval are read by one look-up each, which also tells that the token is plain digits.
NATURALS = dict(zip(map(str, range(4096)), range(4096), strict=True))
#: The intervals [0, n] by the digits of n, for n below 1024: a domain's usual interval is one
#: look-up (intervals are immutable values, so every map may hold the same one).
UP_TO = {str(n): make_interval(0, n) for n in range(1024)}


def cut_at_brackets(text: str) -> list[str]:
    """``cut(text, SPACED_BRACKETS)`` unrolled: every map has parentheses and commas, and
    the rarer marks are first looked for (a look costs less than a replace finding nothing)."""
    text = text.replace("(", " ( ").replace(")", " ) ").replace(",", " , ")
    if "[" in text:
        text = text.replace("[", " [ ")
    if "]" in text:
        text = text.replace("]", " ] ")
    if ":" in text:
        text = text.replace(":", " : ")
    if "{" in text:
        text = text.replace("{", " { ")
    if "}" in text:
        text = text.replace("}", " } ")
    return text.split()


def cut(text: str, spacing: list[tuple[str, str]]) -> list[str]:
    for mark, spaced in spacing:
        if mark in text:  # a look for one character costs less than a replace finding none
            text = text.replace(mark, spaced)
    return text.split()


__all__ = [
    "DEFAULT_LEAVES",
    "DEFAULT_LISTS",
    "DEFAULT_NAMES",
    "LISTED",
    "NATURALS",
    "NO_NAMES",
    "OPERATORS",
    "SPACED_ALL",
    "SPACED_BRACKETS",
    "UP_TO",
    "cut",
    "cut_at_brackets",
]
