"""Locating the ``.lark`` grammars, the same way from a wheel and from a checkout.

A wheel carries them as ``hloidx/grammars/`` (force-included by the build); a checkout or an
editable install has them at ``<root>/grammars/``. :func:`grammar_text` tries both, in that
order, so every caller finds a grammar through this one function.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

_PACKAGE_DIR = Path(__file__).resolve().parent


def grammar_dirs() -> list[Path]:
    return [_PACKAGE_DIR / "grammars", _PACKAGE_DIR.parent / "grammars"]


@cache
def grammar_path(name: str) -> Path:
    for folder in grammar_dirs():
        candidate = folder / name
        if candidate.is_file():
            return candidate
    searched = ", ".join(str(d) for d in grammar_dirs())
    raise FileNotFoundError(f"grammar {name} not found (searched {searched})")


def grammar_text(name: str) -> str:
    return grammar_path(name).read_text(encoding="utf-8")


def lark_parser(grammar: str, **options: Any) -> Any:
    """``Lark(grammar, **options)``, without the terminal-collision report when not strict.

    With ``interegular`` installed (it is, for the strict grammar tests) Lark compares every
    pair of terminals' regular expressions each time a parser is built, only to log warnings:
    0.7 s of every ``hloidx`` run. Strict builds (the tests) still run it, and fail on any
    collision.
    """
    from lark import Lark, lexer

    if options.get("strict"):
        return Lark(grammar, **options)
    saved = getattr(lexer, "has_interegular", False)
    lexer.has_interegular = False
    try:
        return Lark(grammar, **options)
    finally:
        lexer.has_interegular = saved
