"""The last pass of a name index (:class:`.index.HloIndex`): its occurrences in text order,
and every name's references and definition."""

from __future__ import annotations

from collections.abc import Container, Iterator
from operator import attrgetter
from typing import Any

__all__ = ["link", "link_steps"]

#: Occurrences linked between two yields.
_STEP_OCCURRENCES = 16_000


def link(index: Any, computations: Container[str]) -> None:
    """:func:`link_steps` at once."""
    for _ in link_steps(index, computations):
        pass


def link_steps(index: Any, computations: Container[str]) -> Iterator[None]:
    """Occurrences in text order, references and definitions by name (``computations``: the
    names a computation occurrence may refer to); yields between slices."""
    kept = [
        o for o in index.occurrences if o.kind != "computation" or o.name in computations
    ]  # `calls=` naming no computation of the text is not a reference
    yield
    kept.sort(key=attrgetter("start"))
    index.occurrences = kept
    index._starts = [o.start for o in kept]
    yield
    references, definitions = index.references, index.definitions
    for k, occurrence in enumerate(kept):
        key = (occurrence.kind, occurrence.scope, occurrence.name)
        found = references.get(key)
        if found is None:
            references[key] = [occurrence]
        else:
            found.append(occurrence)
        if occurrence.is_definition and key not in definitions:
            definitions[key] = occurrence
        if k % (_STEP_OCCURRENCES) == 0:
            yield
    for comp in index.computations:
        for instr in comp.instructions:
            for names in instr.calls.values():
                names[:] = [n for n in names if n in computations]
    index.metadata.sort(key=attrgetter("start"))
