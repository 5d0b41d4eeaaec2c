"""Every memo table of the library, bounded and clearable in one call.

Analysis shares work by structure (rules by opcode and shapes, simplifications by map), so the
library memoises at several layers. A long-running process (a notebook, a CI job over many
models) must keep flat memory: every table is created here with a bound, or registered here
with its own bound, and :func:`clear_caches` empties them all (benchmarks call it between cold
runs). Imports nothing of hloidx.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])
_CLEARERS: list[Callable[[], None]] = []


def memo(maxsize: int) -> Callable[[_F], _F]:
    """``functools.lru_cache(maxsize)`` registered with :func:`clear_caches`."""
    if maxsize is None or maxsize <= 0:
        raise ValueError("a memo table needs a positive bound")

    def decorate(function: _F) -> _F:
        cached = lru_cache(maxsize=maxsize)(function)
        _CLEARERS.append(cached.cache_clear)
        return cached  # type: ignore[return-value]

    return decorate


def register(clear: Callable[[], None]) -> Callable[[], None]:
    """Register the clear function of a table that bounds itself (a dict with a size check)."""
    _CLEARERS.append(clear)
    return clear


def clear_caches() -> None:
    """Forget every memoised result (maps, verdicts, rule tables, printed text)."""
    for clear in _CLEARERS:
        clear()


def registered_count() -> int:
    """How many tables are registered (a test checks that none is missed)."""
    return len(_CLEARERS)
