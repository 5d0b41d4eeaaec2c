"""``--tile auto``: which power-of-two tile sizes give exact single-rectangle tiles, and what
each loads per output element."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from math import prod
from typing import TYPE_CHECKING

from .operand_tiles import tile_instruction

if TYPE_CHECKING:
    from ..hlo.ir import Instruction

#: tile-size combinations considered at most (the largest sizes of each dim are kept)
MAX_CANDIDATES = 4096


@dataclass(frozen=True)
class Candidate:
    sizes: tuple[int, ...]
    #: every operand's tile is one strided rectangle, described exactly
    exact: bool
    #: bytes each operand loads per output tile (None: not described)
    operand_bytes: tuple[int | None, ...]

    @property
    def bytes_per_tile(self) -> int | None:
        if any(b is None for b in self.operand_bytes):
            return None
        return sum(b for b in self.operand_bytes if b is not None)

    @property
    def bytes_per_output_element(self) -> float | None:
        total = self.bytes_per_tile
        return None if total is None else total / prod(self.sizes)


def size_choices(extent: int) -> list[int]:
    """Powers of two up to the extent, and the extent itself."""
    out = []
    p = 1
    while p <= extent:
        out.append(p)
        p *= 2
    if extent > 0 and extent not in out:
        out.append(extent)
    return out or [1]


def candidates(instr: Instruction, extents: tuple[int, ...]) -> list[Candidate]:
    """Every combination (at most ``MAX_CANDIDATES``), best first: by bytes per output element
    (undescribed last), then exact before not, then larger tiles."""
    choices = [size_choices(n) for n in extents]
    while prod(len(c) for c in choices) > MAX_CANDIDATES:
        longest = max(range(len(choices)), key=lambda i: len(choices[i]))
        choices[longest] = choices[longest][1:]
    found = []
    for sizes in product(*choices):
        result = tile_instruction(instr, tuple(sizes), witness=False)
        exact = all(o.rectangle and o.exact and not o.undefined for o in result.operands)
        found.append(
            Candidate(tuple(sizes), exact, tuple(o.bytes_per_tile() for o in result.operands))
        )

    def key(c: Candidate):
        per = c.bytes_per_output_element
        return (per is None, per or 0.0, not c.exact, -prod(c.sizes))

    return sorted(found, key=key)
