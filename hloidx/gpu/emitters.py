"""The one place that picks an emitter model for a fusion.

``choose_emitter`` (in ``emitter_choice``) decides which of XLA:GPU's emitters XLA would use,
as XLA decides it; ``emitter_for`` gives the model of that emitter (``emitter_interface.
Emitter``: its launch configuration and thread-id maps), or None for the emitters hloidx does
not model (Triton, custom fusions, library calls). The names of ``emitter_choice`` are
re-exported here, where they always were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .emitter_choice import (
    MIN_TILED_TRANSPOSE_DIMENSION,
    WARP_SIZE,
    EmitterChoice,
    ReductionDimensions,
    choose_emitter,
    find_hero,
    reduction_dimensions,
    reduction_emitter_is_faster,
)
from .loops import ConcatenateEmitter, InPlaceUpdateEmitter, InputSlicesEmitter, LoopEmitter
from .reductions import ReductionEmitter
from .scatters import ScatterEmitter
from .transposes import TransposeEmitter

if TYPE_CHECKING:
    from .emitter_interface import Emitter

__all__ = [
    "EMITTERS",
    "MIN_TILED_TRANSPOSE_DIMENSION",
    "WARP_SIZE",
    "EmitterChoice",
    "ReductionDimensions",
    "choose_emitter",
    "emitter_for",
    "find_hero",
    "reduction_dimensions",
    "reduction_emitter_is_faster",
]

#: every emitter model, by the ``EmitterChoice.kind`` it handles
EMITTERS: dict[str, Emitter] = {
    kind: emitter
    for emitter in (
        LoopEmitter(),
        ConcatenateEmitter(),
        InputSlicesEmitter(),
        InPlaceUpdateEmitter(),
        ReductionEmitter(),
        TransposeEmitter(),
        ScatterEmitter(),
    )
    for kind in emitter.kinds
}


def emitter_for(choice: EmitterChoice | str) -> Emitter | None:
    """The model of the emitter ``choice`` names (an ``EmitterChoice`` or its ``kind``), or
    None when hloidx does not model that emitter."""
    kind = choice if isinstance(choice, str) else choice.kind
    return EMITTERS.get(kind)
