"""The command line's text, as plain strings, for the library's display objects
(:mod:`hloidx.notebook`): ``str()`` of a result is what the matching command prints, because it
is made here by the very functions the command uses. Imported lazily by the display layer,
so that analysing a module in a notebook never loads Click or Rich until text is asked for."""

from __future__ import annotations

from typing import Any


def maps_text(analysis: Any, *, filtered: bool, spelling: str = "floordiv") -> str:
    """``hloidx maps FILE`` (``filtered``: with ``--instruction``): the instructions of
    ``analysis`` and, unfiltered, the triage table after them."""
    from .module_outcome import MapsOptions, maps_text_lines

    options = MapsOptions(
        instructions=("*",) if filtered else (),
        computations=(),
        opcodes=(),
        kind=None,
        hide_trivial=False,
        spelling=spelling,
    )
    return "\n".join(maps_text_lines(analysis, options, None, plain=True))


def summary_text(doc: dict[str, Any], limit: int) -> str:
    """``hloidx summary FILE --limit N``."""
    from .summary_command import summary_lines

    return "\n".join(summary_lines(doc, limit))


def threads_text(doc: dict[str, Any]) -> str:
    """``hloidx threads FILE --instruction NAME``."""
    from .gpu_commands import threads_lines

    return "\n".join(threads_lines(doc))


def coalescing_text(doc: dict[str, Any]) -> str:
    """``hloidx coalescing FILE``."""
    from .gpu_commands import coalescing_lines

    return "\n".join(coalescing_lines(doc))


def auto_tiles_text(doc: dict[str, Any]) -> str:
    """``hloidx tile FILE --instruction NAME --tile auto``."""
    from .tile_command import _auto_lines

    return "\n".join(_auto_lines(doc))


def picture_text(title: str, pic: Any, marked: str) -> str:
    """``hloidx show FILE --instruction NAME`` written to a pipe (characters, no colour)."""
    from .show_command import picture_lines

    return "\n".join(line.plain for line in picture_lines(title, pic, marked, plain=True))


def picture_document(name: str, operand: int, op: Any, pic: Any) -> dict[str, Any]:
    """``hloidx show ... --format json``."""
    from .show_command import _picture_json

    return _picture_json(name, operand, op, pic)


def rich_text(text: str) -> Any:
    """``text`` as a Rich renderable that is never read as markup (map text has brackets)."""
    from rich.text import Text

    return Text(text)
