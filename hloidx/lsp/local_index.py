"""A name index of a few instructions alone (the one under the cursor and what it reads),
for a hover asked before the whole text is indexed (:mod:`.index` scans the whole text)."""

from __future__ import annotations

from collections.abc import Container

from .index import (
    _INSTRUCTION_START,
    HloIndex,
    InstructionInfo,
    Occurrence,
    _scan_instruction,
)
from .index_links import link

__all__ = ["scan_pieces"]


def scan_pieces(
    text: str,
    computation: str,
    pieces: list[tuple[int, int]],
    defined: Container[str],
    computations: Container[str],
) -> HloIndex:
    """An index of a few instructions of ``computation`` alone: ``pieces`` are their texts'
    (start, end), ``defined`` the names of the computation's instructions, ``computations``
    the module's (what a name in ``calls=`` may refer to)."""
    index = HloIndex(text)
    for begin, stop in sorted(set(pieces)):
        start = _INSTRUCTION_START.match(text, begin, stop)
        if start is None:
            continue
        info = InstructionInfo(
            start.group(2).lstrip("%"),
            computation,
            start.start(1) if start.group(1) else start.start(2),
            stop,
            start.start(2),
            start.end(2),
            is_root=start.group(1) is not None,
        )
        index.instructions[(computation, info.name)] = info
        index.occurrences.append(
            Occurrence("instruction", computation, info.name, info.name_start, info.name_end, True)
        )
        _scan_instruction(text, info, defined, index)
    link(index, computations)
    return index
