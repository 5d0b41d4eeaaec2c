"""Tiles of every operand of an instruction (a fusion is tiled through its fused computation).

For each operand map: one strided rectangle per tile when one describes every tile; else the
exact description as a loop of rectangles, holding the fewest output dims at one position per
rectangle (seed 004: a slice of a linearized dimension is a loop over ``delinearize_index``);
else no description, with the reason. A claim that a tile is *not* one rectangle is checked
on a few tiles by bounded enumeration when they are small ("witnessed"); otherwise the tool
only says that it found no single-rectangle description.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations, pairwise, product
from math import prod
from typing import TYPE_CHECKING

from ..caches import memo
from ..errors import HloidxError
from ..hlo.element_types import element_bytes
from ..maps.indexing_map import IndexingMap
from ..maps.interval import Interval
from ..maps.simplify import simplify
from ..maps.traversal import variables
from .symbolic_tile import NoTile, TileFormula, derive
from .tile_maps import TileMaps, concrete_maps, conditions_hold, symbolic_maps

if TYPE_CHECKING:
    from ..hlo.ir import Instruction

#: points of one tile enumerated to witness that it is not a rectangle
WITNESS_LIMIT = 100_000
#: tiles looked at for a witness
WITNESS_TILES = 64
#: output rank above which only small sets of held dims are tried
MAX_FULL_SEARCH_RANK = 8


@dataclass
class MapTile:
    """The tile of one operand map."""

    map: IndexingMap
    rectangle: bool
    formula: TileFormula | None = None
    maps: TileMaps | None = None
    #: output dims held at one position per rectangle (empty for one rectangle)
    held: tuple[int, ...] = ()
    #: why no single rectangle (or no description at all)
    reason: str = ""
    #: what was seen when a tile was checked not to be one rectangle (empty: not checked)
    witness: str = ""
    #: the tile index that was checked
    witness_tile: tuple[int, ...] | None = None

    @property
    def described(self) -> bool:
        return self.maps is not None


@dataclass
class OperandTile:
    index: int
    name: str
    shape: str
    element_bytes: int
    operand_dims: tuple[int, ...] | None
    map_tiles: list[MapTile] = field(default_factory=list)
    #: the maps are exact (False: the op rule over-approximates what is read)
    exact: bool = True
    undefined: bool = False
    notes: list[str] = field(default_factory=list)
    #: what each runtime variable of the maps stands for (``of1 = s32[] parameter(1)``)
    producers: list[str] = field(default_factory=list)

    @property
    def rectangle(self) -> bool:
        return len(self.map_tiles) == 1 and self.map_tiles[0].rectangle

    def bytes_per_tile(self) -> int | None:
        """Bytes one output tile loads from this operand (full rectangles, as a masked load
        reads them; one load per map when several maps read it); None when symbolic or not
        described."""
        total = 0
        for t in self.map_tiles:
            if t.maps is None or t.maps.sizes is None:
                return None
            total += int(t.maps.count) * prod(t.maps.sizes) * self.element_bytes
        return total


@dataclass
class InstructionTiles:
    instruction: str
    opcode: str
    output_shape: tuple[int, ...]
    sizes: tuple[int, ...] | None
    operands: list[OperandTile]
    notes: list[str] = field(default_factory=list)


@memo(4096)
def _formula(
    m: IndexingMap, extents: tuple[int, ...], held: frozenset[int], rt_dims: frozenset[int]
) -> TileFormula | str:
    try:
        return derive(m, extents, held, rt_dims)
    except NoTile as e:
        return str(e)


def _held_candidates(rank: int, sizes: tuple[int, ...] | None) -> list[frozenset[int]]:
    if rank <= MAX_FULL_SEARCH_RANK:
        sets = [frozenset(c) for r in range(1, rank + 1) for c in combinations(range(rank), r)]
    else:
        sets = [frozenset(c) for r in (1, 2) for c in combinations(range(rank), r)]
        sets.append(frozenset(range(rank)))
    if sizes is None:
        return sorted(sets, key=lambda s: (len(s), sorted(s)))
    return sorted(sets, key=lambda s: (prod(sizes[i] for i in s), len(s), sorted(s)))


def _is_rectangle(points: set[tuple[int, ...]]) -> bool:
    if not points:
        return True
    rank = len(next(iter(points)))
    axes = [sorted({p[k] for p in points}) for k in range(rank)]
    for values in axes:
        steps = {b - a for a, b in pairwise(values)}
        if len(steps) > 1:
            return False
    return len(points) == prod(len(a) for a in axes)


def _witness(
    m: IndexingMap, extents: tuple[int, ...], sizes: tuple[int, ...]
) -> tuple[str, tuple[int, ...] | None]:
    """A tile index whose elements are not one strided rectangle, checked by enumeration of
    that tile alone; empty when none was found or the tiles are too big to look at."""
    from ..maps.domain import relation

    per_tile = prod(sizes) * max(1, m.box_size() // max(1, prod(extents)))
    if m.rt_vars or per_tile > WITNESS_LIMIT:
        return "", None
    tiles = [-(-n // t) for n, t in zip(extents, sizes, strict=True)]
    # at most WITNESS_LIMIT points in all
    budget = min(WITNESS_TILES, WITNESS_LIMIT // per_tile)
    for index in product(*(range(min(n, WITNESS_TILES)) for n in tiles)):
        budget -= 1
        if budget < 0:
            break
        if any((i + 1) * t > n for i, t, n in zip(index, sizes, extents, strict=True)):
            continue  # a partial tile reads a subset: only full tiles are judged
        tile_map = m.restrict_dims(
            [Interval(i * t, (i + 1) * t - 1) for i, t in zip(index, sizes, strict=True)]
        )
        try:
            points = {target for _, target in relation(tile_map, WITNESS_LIMIT)}
        except HloidxError:
            return "", None
        if not _is_rectangle(points):
            seen = (
                f"tile {list(index)} reads {len(points)} elements that no strided rectangle holds"
            )
            return seen, tuple(index)
    return "", None


def describe_map(
    m: IndexingMap,
    extents: tuple[int, ...],
    sizes: tuple[int, ...] | None,
    *,
    witness: bool = True,
    rt_dims: frozenset[int] = frozenset(),
) -> MapTile:
    """The tile of one output-to-input map for tile ``sizes`` (None: symbolic)."""
    if m.is_undefined:
        return MapTile(m, False, reason="UNDEFINED: no indexing rule reaches this operand")
    simplified = simplify(m)
    first = _formula(simplified, extents, frozenset(), rt_dims)
    if isinstance(first, TileFormula):
        if sizes is None or conditions_hold(first, sizes):
            built = symbolic_maps(first) if sizes is None else concrete_maps(first, sizes)
            return MapTile(m, True, first, built)
        reason = "the conditions for one rectangle do not hold for these tile sizes"
    else:
        reason = first
    seen, seen_tile = (
        _witness(simplified, extents, sizes) if sizes is not None and witness else ("", None)
    )
    for held in _held_candidates(len(extents), sizes):
        formula = _formula(simplified, extents, held, rt_dims)
        if not isinstance(formula, TileFormula):
            continue
        if sizes is None and not formula.conditions.is_true:
            continue
        if sizes is not None and not conditions_hold(formula, sizes):
            continue
        built = symbolic_maps(formula) if sizes is None else concrete_maps(formula, sizes)
        return MapTile(m, False, formula, built, tuple(sorted(held)), reason, seen, seen_tile)
    return MapTile(m, False, reason=reason, witness=seen, witness_tile=seen_tile)


def output_dims(instr: Instruction) -> tuple[int, ...]:
    shape = instr.shape
    if not shape.is_array:
        leaves = shape.leaves()
        shape = leaves[0] if leaves else shape
    return tuple(shape.dims) if shape.is_array else ()


def check_sizes(sizes: tuple[int, ...], extents: tuple[int, ...], what: str) -> None:
    if len(sizes) != len(extents):
        raise HloidxError(
            f"{what} has {len(extents)} output dimensions {list(extents)}; "
            f"--tile gives {len(sizes)} sizes"
        )
    for i, (s, n) in enumerate(zip(sizes, extents, strict=True)):
        if not 1 <= s <= max(1, n):
            raise HloidxError(f"tile size {s} along dimension {i} is not in [1, {max(1, n)}]")


def _partial_tile_notes(sizes: tuple[int, ...] | None, extents: tuple[int, ...]) -> list[str]:
    if sizes is None:
        return []
    return [
        f"tile size {s} does not divide {n} (dim {i}): the last tile is partial and reads a "
        "subset of the rectangle described (a masked load)"
        for i, (s, n) in enumerate(zip(sizes, extents, strict=True))
        if n % s
    ]


def tile_instruction(
    instr: Instruction, sizes: tuple[int, ...] | None, *, witness: bool = True
) -> InstructionTiles:
    """Every operand's tile for an output tile of ``sizes`` (None: symbolic)."""
    from ..hlo import fusion
    from ..hlo.op_rules import UnsupportedOpError

    extents = output_dims(instr)
    if sizes is not None:
        check_sizes(sizes, extents, instr.name)
    notes = _partial_tile_notes(sizes, extents)
    if not instr.shape.is_array:
        notes.append("the instruction has several outputs: output 0 is tiled")
    try:
        row = fusion.output_to_input(instr)[0]
    except UnsupportedOpError as e:
        row = None
        notes.append(str(e))
    operands = []
    for k, operand in enumerate(instr.operands):
        shape = operand.shape
        eb = element_bytes(shape.element_type) if shape.is_array else 1
        dims = tuple(shape.dims) if shape.is_array else None
        out = OperandTile(k, operand.name, str(shape), eb, dims)
        cell = row[k] if row is not None and k < len(row) else None
        if cell is None or any(m.is_undefined for m in cell.maps):
            out.undefined = True
            out.map_tiles.append(describe_map(IndexingMap.undefined(), extents, sizes))
        else:
            out.exact = cell.exact
            out.notes.extend(cell.notes)
            out.notes.extend(
                f"{rv.producer.name}: {rv.note}" for rv in cell.runtime_vars if rv.note
            )
            out.producers = [rv.producer_text() for rv in cell.runtime_vars]
            rt_dims = frozenset(
                v.index for rv in cell.runtime_vars for r in rv.map.results for v in variables(r)
            )
            for m in cell.maps:
                if not m.is_known_empty:
                    tile = describe_map(m, extents, sizes, witness=witness, rt_dims=rt_dims)
                    out.map_tiles.append(tile)
        operands.append(out)
    return InstructionTiles(instr.name, instr.opcode, extents, sizes, operands, notes)


def tile_map(
    m: IndexingMap, sizes: tuple[int, ...] | None, element_bytes: int = 4
) -> InstructionTiles:
    """The tile of one operand given only its output-to-input map (XLA's
    ``SymbolicTile::FromIndexingMap``); the output extents are the dims' upper bounds + 1."""
    extents = tuple(v.bounds.upper + 1 for v in m.dim_vars)
    if sizes is not None:
        check_sizes(sizes, extents, "the map")
    operand = OperandTile(0, "operand", "?", element_bytes, None)
    if m.rt_vars:
        operand.notes.append(
            "runtime variables are taken as one value per tile (what they depend on is not "
            "in a pasted map)"
        )
    operand.map_tiles.append(describe_map(m, extents, sizes))
    notes = _partial_tile_notes(sizes, extents)
    return InstructionTiles("<map>", "map", extents, sizes, [operand], notes)
