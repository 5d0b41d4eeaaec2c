"""Small words of the text every front end prints."""

from __future__ import annotations


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 instruction``, ``2 instructions``."""
    return f"{count:,} {word if count == 1 else (words or word + 's')}"
