"""The command line's text, as plain strings, for the library's display objects
(:mod:`hloidx.notebook`): ``str()`` of a result is what the matching command prints, because it
is made here by the very functions the command uses. Imported lazily by the display layer,
so that analysing a module in a notebook never loads Rich until text is asked for."""

from __future__ import annotations

from typing import Any


def maps_text(analysis: Any, *, filtered: bool, spelling: str = "floordiv") -> str:
    """``hloidx maps FILE`` (``filtered``: with ``--instruction``): the instructions of
    ``analysis`` and, unfiltered, the triage table after them."""
    from .lines import maps_text_lines

    return "\n".join(maps_text_lines(analysis, spelling, filtered=filtered, plain=True))


def summary_text(doc: dict[str, Any], limit: int) -> str:
    """``hloidx summary FILE --limit N``."""
    from .summary import summary_lines

    return "\n".join(summary_lines(doc, limit))


def threads_text(doc: dict[str, Any]) -> str:
    """``hloidx threads FILE --instruction NAME``."""
    from .gpu import threads_lines

    return "\n".join(threads_lines(doc))


def coalescing_text(doc: dict[str, Any]) -> str:
    """``hloidx coalescing FILE``."""
    from .gpu import coalescing_lines

    return "\n".join(coalescing_lines(doc))


def auto_tiles_text(doc: dict[str, Any]) -> str:
    """``hloidx tile FILE --instruction NAME --tile auto``."""
    from .tiles import auto_tile_lines

    return "\n".join(auto_tile_lines(doc))


def picture_text(title: str, pic: Any, marked: str) -> str:
    """``hloidx show FILE --instruction NAME`` written to a pipe (characters, no colour)."""
    from .pictures import picture_lines

    return "\n".join(line.plain for line in picture_lines(title, pic, marked, plain=True))


def picture_document(name: str, operand: int, op: Any, pic: Any) -> dict[str, Any]:
    """``hloidx show ... --format json``."""
    from .pictures import picture_document as document

    return document(name, operand, op, pic)


def rich_text(text: str) -> Any:
    """``text`` as a Rich renderable that is never read as markup (map text has brackets)."""
    from rich.text import Text

    return Text(text)
