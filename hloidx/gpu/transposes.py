"""XLA:GPU's shared-memory transpose emitter (``TransposeFusion``): parameters and thread maps.

The facts come from XLA's ``transpose.cc`` (``TransposeFusion``: 32x32 tiles in shared memory,
8 rows of 32 threads per block, vectorization when there is enough work and shared memory,
``GetThreadOffsets`` and ``GetIndexing``) and ``ir_emission_utils.cc``
(``GetTransposeSpec``, ``GetPackedTransposeTileSizes``). Elements narrower than 32 bits go to
XLA's ``PackedTranspose`` when its tile sizes exist: 4 warps, a ``32v x 32v`` shared tile of
``v``-element vectors (``v`` = 32 bits / element bits).

A fusion may have several roots: every root whose hero is a tiled transpose (all of one
normalised shape) gets its own shared-memory tile and is written in the write phase; the
other roots (side outputs, as many elements as the input) are written in the read phase, by
the thread that reads the same input element (XLA's ``shmem_transpose_roots_`` and
``side_output_roots_``).

The transpose is normalised first (adjacent dims that stay adjacent are merged, as XLA's
``TransposeDimensionGrouper`` does before the emitter runs); shapes must have default
layouts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import TYPE_CHECKING

from ..errors import HloidxError
from ..hlo.element_types import element_bits, element_bytes
from ..hlo.fusion import body_of, computation_outputs, parameter_cells
from ..hlo.ir import Shape
from ..hlo.rules.shape_ops import bitcast_map, minor_to_major
from ..maps.expr import Const, Expr, add, dim, floordiv, mod, mul, range_var
from ..maps.indexing_map import IndexingMap, compose
from ..maps.interval import Interval
from .emitter_choice import EmitterChoice, find_hero, is_tiled_transpose
from .grid import ceil_div, delinearize, grid_map, within
from .launch_config import NO_OVERRIDES, LaunchConfig, Overrides, tiled_overrides
from .thread_reads import add_reads, simplify_thread_map

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .devices import DeviceProfile
    from .thread_reads import ThreadMaps

TILE = 32
ROWS = 8
THREADS_PER_BLOCK = ROWS * TILE
MAX_VECTORIZED_BYTES = 16
SHMEM_BANKS = 32
BANK_BITS = 32


def permute(values: tuple[int, ...] | list, perm: tuple[int, ...]) -> list:
    """XLA's ``Permute``: ``out[i] = values[perm[i]]``."""
    return [values[p] for p in perm]


def inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def normalise(
    dims: tuple[int, ...], perm: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Output dims and permutation with unit dims dropped and runs of input dims that stay
    adjacent merged (a transpose of ``[a, b, c] -> [c, a, b]`` is ``[ab, c] -> [c, ab]``)."""
    in_dims = [0] * len(perm)
    for i, p in enumerate(perm):
        in_dims[p] = dims[i]
    keep = [p for p in perm if in_dims[p] != 1]
    groups: list[list[int]] = []
    for p in keep:
        if groups and groups[-1][-1] + 1 == p:
            groups[-1].append(p)
        else:
            groups.append([p])
    order = sorted(range(len(groups)), key=lambda g: groups[g][0])  # input order of groups
    rank_of = {g: k for k, g in enumerate(order)}
    new_perm = tuple(rank_of[g] for g in range(len(groups)))
    new_dims = tuple(prod(in_dims[p] for p in group) for group in groups)
    return new_dims, new_perm


@dataclass(frozen=True)
class TransposePlan:
    hero: Instruction
    dims: tuple[int, ...]  # normalised output dims
    permutation: tuple[int, ...]
    input_shape: tuple[int, ...]  # normalised input dims
    vector_size: int
    block_size: int
    block_sizes: tuple[int, ...]
    output_block_sizes: tuple[int, ...]
    block_counts: tuple[int, ...]
    #: rows of 32 threads per block (XLA's kNumRows)
    rows: int = ROWS
    #: every transpose the kernel tiles (``hero`` first) and the roots that are none
    heroes: tuple[Instruction, ...] = ()
    side_outputs: tuple[Instruction, ...] = ()

    @property
    def threads(self) -> int:
        return self.rows * TILE

    @property
    def minor_unchanged(self) -> bool:
        return self.permutation[-1] == len(self.permutation) - 1

    @property
    def blocks(self) -> int:
        return prod(self.block_counts)


@dataclass(frozen=True)
class TransposeSpec:
    """XLA's ``TransposeSpec``: the transpose made canonical, ``[.., T2, .., A, T1, B]`` ->
    ``[.., T1, .., A, T2, B]`` with size-1 ``A`` and ``B`` dims inserted where needed."""

    output_shape: tuple[int, ...]
    permutation: tuple[int, ...]
    inv_permutation: tuple[int, ...]
    input_shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.input_shape)

    @property
    def a_id(self) -> int:
        return self.rank - 3

    @property
    def t1_input_id(self) -> int:
        return self.rank - 2

    @property
    def t1_output_id(self) -> int:
        return self.inv_permutation[self.rank - 2]

    @property
    def t2_input_id(self) -> int:
        return self.permutation[self.rank - 2]

    @property
    def t2_output_id(self) -> int:
        return self.rank - 2


def transpose_spec(dims: tuple[int, ...], perm: tuple[int, ...]) -> TransposeSpec:
    """XLA's ``GetTransposeSpec`` (output dims, permutation)."""
    shape = list(dims)
    cperm = list(perm)
    if cperm[-1] != len(shape) - 1:
        cperm.append(len(shape))
        shape.append(1)
    t1 = next(i for i in range(len(cperm) - 1, -1, -1) if cperm[i] != i)
    rank = len(shape)
    if cperm[rank - 3] != rank - 3:
        shape.insert(t1, 1)
        cperm = [p + 1 if p > rank - 3 else p for p in cperm]
        cperm.insert(t1, t1)
    cinv = inverse(tuple(cperm))
    return TransposeSpec(tuple(shape), tuple(cperm), cinv, tuple(permute(shape, cinv)))


def packed_tile_sizes(spec: TransposeSpec, bits: int) -> tuple[int, ...] | None:
    """XLA's ``GetPackedTransposeTileSizes``: the output tile of the packed transpose emitter,
    or None when XLA does not use it."""
    if bits >= BANK_BITS:
        return None
    v = BANK_BITS // bits
    shmem = SHMEM_BANKS * v
    dim_t1 = spec.input_shape[spec.t1_input_id]
    dim_a = spec.input_shape[spec.a_id]
    dim_t2 = spec.input_shape[spec.t2_input_id]
    t1_tile = min(dim_t1, shmem)
    a_tile = min(dim_a, shmem // t1_tile)
    t2_tile = min(dim_t2, shmem)
    rows, cols = t2_tile, a_tile * t1_tile
    if cols < 10 * v or rows < 10 * v:
        return None
    if spec.input_shape[-1] != 1 or rows % v or cols % v or dim_t2 % t2_tile % v:
        return None
    tile = [1] * spec.rank
    tile[spec.t1_output_id] = t1_tile
    tile[spec.t2_output_id] = t2_tile
    tile[spec.a_id] = a_tile
    return tuple(tile)


@dataclass(frozen=True)
class PackedPlan:
    """XLA's ``PackedTranspose`` for elements narrower than a shared-memory bank."""

    hero: Instruction
    spec: TransposeSpec
    output_tile: tuple[int, ...]
    vector_size: int
    warps: int = 4
    #: every transpose the kernel tiles (``hero`` first) and the roots that are none
    heroes: tuple[Instruction, ...] = ()
    side_outputs: tuple[Instruction, ...] = ()

    @property
    def input_tile(self) -> tuple[int, ...]:
        return tuple(permute(self.output_tile, self.spec.inv_permutation))

    @property
    def block_counts(self) -> tuple[int, ...]:
        return tuple(
            ceil_div(n, t) for n, t in zip(self.spec.output_shape, self.output_tile, strict=True)
        )

    @property
    def blocks(self) -> int:
        return prod(self.block_counts)

    @property
    def threads(self) -> int:
        return self.warps * SHMEM_BANKS

    @property
    def tiles(self) -> tuple[int, int, int]:
        """(T1, A, T2) tile sizes in the input."""
        t = self.input_tile
        return t[self.spec.t1_input_id], t[self.spec.a_id], t[self.spec.t2_input_id]


def plan(
    fusion: Instruction,
    choice: EmitterChoice,
    device: DeviceProfile,
    overrides: Overrides = NO_OVERRIDES,
) -> tuple[TransposePlan | PackedPlan | None, str]:
    """XLA's choice of transpose emitter and its parameters, or None and why not.
    ``overrides`` set the vector size and the threads per block (rows of 32 threads, or
    warps)."""
    if overrides.threads_per_block is not None and (
        overrides.threads_per_block % TILE or overrides.threads_per_block < TILE
    ):
        raise HloidxError(
            "a transpose emitter runs whole warps: --threads-per-block must be a multiple of 32"
        )
    roots, tiled, side = transpose_roots(fusion)
    if not tiled:
        return None, "the transpose emitter for a layout-changing copy is not modelled"
    heroes: list[Instruction] = []
    for root in tiled:
        if find_hero(root) not in heroes:
            heroes.append(find_hero(root))
    hero = heroes[0]
    shapes = [s for h in heroes for s in (h.shape, h.operands[0].shape)]
    shapes += [r.shape for r in roots]
    for s in shapes:
        if not s.is_array or tuple(minor_to_major(s)) != tuple(reversed(range(s.rank))):
            return None, "the transpose emitter is modelled for default layouts only"
    if any(tuple(r.shape.dims) != tuple(find_hero(r).shape.dims) for r in tiled):
        return None, "a root that reshapes the transpose is not modelled"
    dims, perm = normalise(tuple(hero.shape.dims), tuple(hero.dimensions or ()))
    if len(perm) < 2:
        return None, "the transpose is trivial after normalisation"
    for other in heroes[1:]:
        if normalise(tuple(other.shape.dims), tuple(other.dimensions or ())) != (dims, perm):
            return None, "transposes of different shapes in one fusion are not modelled"
    for root in side:  # XLA: side outputs are bitcast-compatible with the input
        if root.shape.num_elements() != prod(dims):
            return None, (
                f"side output {root.name} has another number of elements than the "
                "transpose's input: not modelled"
            )
    chosen, why = _choose(hero, dims, perm, tiled, device, overrides)
    if chosen is None:
        return None, why
    return replace(chosen, heroes=tuple(heroes), side_outputs=tuple(side)), ""


def transpose_roots(
    fusion: Instruction,
) -> tuple[list[Instruction], list[Instruction], list[Instruction]]:
    """A fusion's roots, those whose hero XLA tiles in shared memory, and the rest (side
    outputs; XLA's ``shmem_transpose_roots_`` and ``side_output_roots_``)."""
    roots = computation_outputs(body_of(fusion))
    tiled = [r for r in roots if is_tiled_transpose(find_hero(r))]
    return roots, tiled, [r for r in roots if not is_tiled_transpose(find_hero(r))]


def _choose(
    hero: Instruction,
    dims: tuple[int, ...],
    perm: tuple[int, ...],
    tiled: list[Instruction],
    device: DeviceProfile,
    overrides: Overrides,
) -> tuple[TransposePlan | PackedPlan | None, str]:
    """The packed or the shared-memory transpose emitter and its parameters."""
    bits = element_bits(hero.shape.element_type)
    spec = transpose_spec(dims, perm)
    tile = packed_tile_sizes(spec, bits)
    if tile is not None:
        if overrides.vector is not None and overrides.vector != BANK_BITS // bits:
            raise HloidxError(
                f"the packed transpose's vectors fill a 32-bit shared-memory bank: "
                f"{BANK_BITS // bits} elements of {bits} bits, not {overrides.vector}"
            )
        warps = (
            overrides.threads_per_block // TILE if overrides.threads_per_block is not None else 4
        )
        return PackedPlan(hero, spec, tile, BANK_BITS // bits, warps), ""
    input_shape = tuple(permute(dims, inverse(perm)))
    minor_unchanged = perm[-1] == len(perm) - 1
    # one shared-memory tile per tiled root (XLA sums their usage, vectorizes by the widest)
    sizes = [element_bytes(find_hero(r).shape.element_type) for r in tiled]
    if minor_unchanged:
        sizes = [size * input_shape[-1] for size in sizes]
    size = max(sizes)
    shmem_usage = sum(TILE * (TILE + 1) * size for size in sizes)

    rows = overrides.threads_per_block // TILE if overrides.threads_per_block is not None else ROWS

    def blocks_for(v: int) -> TransposePlan:
        sizes = [1] * len(input_shape)
        if minor_unchanged:
            block = TILE
            sizes[-1] = v
            sizes[-2] = block
            sizes[perm[-2]] = block
        else:
            block = TILE * v
            sizes[-1] = block
            sizes[perm[-1]] = block
        counts = tuple(ceil_div(n, b) for n, b in zip(input_shape, sizes, strict=True))
        if block % rows:
            raise HloidxError(
                f"{rows} rows of threads do not divide the transpose tile of {block}: "
                "--threads-per-block must be 32 times a divisor of it"
            )
        return TransposePlan(
            hero, dims, perm, input_shape, v, block, tuple(sizes),
            tuple(permute(sizes, perm)), counts, rows,
        )  # fmt: skip

    if minor_unchanged:
        if overrides.vector is not None and overrides.vector != input_shape[-1]:
            raise HloidxError(
                "this transpose keeps its minor dimension: each thread moves all "
                f"{input_shape[-1]} elements of it, so --vector must be {input_shape[-1]}"
            )
        return blocks_for(input_shape[-1]), ""
    if overrides.vector is not None:
        v = overrides.vector
        if input_shape[-1] % v or input_shape[perm[-1]] % v:
            raise HloidxError(
                f"--vector {v} must divide both transposed dimensions "
                f"({input_shape[-1]} and {input_shape[perm[-1]]})"
            )
        return blocks_for(v), ""
    chosen = blocks_for(1)
    v = MAX_VECTORIZED_BYTES // size
    while v > 1:
        per_thread = v * v
        enough_work = chosen.blocks * chosen.threads >= (
            per_thread * device.sm_count * device.threads_per_sm
        )
        enough_shmem = shmem_usage * per_thread <= device.shared_memory_per_block
        aligned = input_shape[-1] % v == 0 and input_shape[perm[-1]] % v == 0
        if enough_work and enough_shmem and aligned:
            return blocks_for(v), ""
        v //= 2
    return chosen, ""


def _grid(p: TransposePlan, results: list[Expr]) -> IndexingMap:
    return grid_map(results, p.threads, (p.blocks, 1), (p.block_size // p.rows, p.vector_size))


def _indexing(p: TransposePlan, read: bool) -> IndexingMap:
    """XLA's ``GetIndexing``: thread ids -> normalised input (``read``) or output element."""
    stride = p.block_size * p.rows * (p.vector_size if p.minor_unchanged else 1)
    linear = add(mul(range_var(0), stride), mul(dim(0), p.vector_size), range_var(1))
    sizes = p.block_sizes if read else p.output_block_sizes
    offsets = delinearize(linear, sizes)
    block_ids = delinearize(dim(3), p.block_counts)
    if not read:
        block_ids = permute(block_ids, p.permutation)
    results = [add(mul(b, s), o) for b, s, o in zip(block_ids, sizes, offsets, strict=True)]
    shape = p.input_shape if read else p.dims
    return within(_grid(p, results), shape)


def input_map(p: TransposePlan, shape: Shape | None = None) -> IndexingMap:
    """Thread ids -> the element of the hero's input a thread reads (or of ``shape``, a
    tensor indexed like it: a side output)."""
    shape = p.hero.operands[0].shape if shape is None else shape
    return compose(_indexing(p, True), bitcast_map(shape, Shape(shape.element_type, p.input_shape)))


def output_map(p: TransposePlan, shape: Shape | None = None) -> IndexingMap:
    """Thread ids -> the element of the hero's output a thread writes (or of ``shape``)."""
    shape = p.hero.shape if shape is None else shape
    return compose(_indexing(p, False), bitcast_map(shape, Shape(shape.element_type, p.dims)))


def _packed_indexing(p: PackedPlan, read: bool) -> IndexingMap:
    """XLA's ``PackedTranspose::GetInputIndexing`` (``read``) / ``GetOutputIndexing``."""
    spec, v = p.spec, p.vector_size
    t1, a, t2 = p.tiles
    warp, lane = floordiv(dim(0), SHMEM_BANKS), mod(dim(0), SHMEM_BANKS)
    block_ids = delinearize(dim(3), p.block_counts)
    offsets: list[Expr] = [Const(0)] * spec.rank
    if read:
        block_ids = permute(block_ids, spec.inv_permutation)
        symbols = (ceil_div(t2, p.warps), v)
        row = add(mul(range_var(0), p.warps), warp)
        col = add(mul(lane, v), range_var(1))
        offsets[spec.t1_input_id] = mod(col, t1)
        offsets[spec.t2_input_id] = row
        tile, shape = p.input_tile, spec.input_shape
    else:
        symbols = (ceil_div(a * t1, v * p.warps), v, v)
        col = add(mul(add(mul(range_var(0), p.warps), warp), v), range_var(1))
        row = add(mul(lane, v), range_var(2))
        offsets[spec.t1_output_id] = mod(col, t1)
        offsets[spec.t2_output_id] = row
        tile, shape = p.output_tile, spec.output_shape
    offsets[spec.a_id] = floordiv(col, t1)
    results = [add(mul(b, t), o) for b, t, o in zip(block_ids, tile, offsets, strict=True)]
    m = grid_map(results, p.threads, (p.blocks, 1), symbols)
    m = m.add_constraints([(col, Interval(0, a * t1 - 1)), (row, Interval(0, t2 - 1))])
    return within(m, shape)


def packed_input_map(p: PackedPlan, shape: Shape | None = None) -> IndexingMap:
    shape = p.hero.operands[0].shape if shape is None else shape
    canonical = Shape(shape.element_type, p.spec.input_shape)
    return compose(_packed_indexing(p, True), bitcast_map(shape, canonical))


def packed_output_map(p: PackedPlan, shape: Shape | None = None) -> IndexingMap:
    shape = p.hero.shape if shape is None else shape
    canonical = Shape(shape.element_type, p.spec.output_shape)
    return compose(_packed_indexing(p, False), bitcast_map(shape, canonical))


class TransposeEmitter:
    """XLA's shared-memory and packed transpose emitters behind the ``Emitter`` interface."""

    kinds = ("transpose",)

    def launch(
        self,
        fusion: Instruction,
        choice: EmitterChoice,
        device: DeviceProfile,
        overrides: Overrides = NO_OVERRIDES,
    ) -> LaunchConfig | None:
        set_by_hand = tiled_overrides(overrides, "the transpose emitter", device)
        chosen, _ = plan(fusion, choice, device, overrides)
        if chosen is None:
            return None
        shape = chosen.spec.input_shape if isinstance(chosen, PackedPlan) else chosen.input_shape
        return LaunchConfig(
            (chosen.threads, 1, 1),
            (chosen.blocks, 1, 1),
            1,
            chosen.vector_size,
            shape,
            tuple(reversed(range(len(shape)))),
            tuple(set_by_hand),
            transpose=chosen,
        )

    def why_not(self, fusion: Instruction, choice: EmitterChoice, device: DeviceProfile) -> str:
        return plan(fusion, choice, device)[1]

    @staticmethod
    def _reads(p: TransposePlan | PackedPlan, shape: Shape) -> IndexingMap:
        """The read phase's map onto ``shape`` (the hero's input or a side output)."""
        return packed_input_map(p, shape) if isinstance(p, PackedPlan) else input_map(p, shape)

    @staticmethod
    def _writes(p: TransposePlan | PackedPlan, shape: Shape) -> IndexingMap:
        """The write phase's map onto ``shape`` (a tiled transpose's output)."""
        return packed_output_map(p, shape) if isinstance(p, PackedPlan) else output_map(p, shape)

    def fill_thread_maps(self, result: ThreadMaps) -> None:
        launch, fusion = result.launch, result.fusion
        assert launch is not None
        assert launch.transpose is not None
        p = launch.transpose
        if isinstance(p, PackedPlan):
            t1, a, t2 = p.tiles
            note = (
                f"XLA's packed transpose emitter: canonical {list(p.spec.input_shape)} -> "
                f"{list(p.spec.output_shape)}, output tile {list(p.output_tile)} (T1 {t1}, "
                f"A {a}, T2 {t2}), {p.blocks} blocks of {p.threads} threads, vectors of "
                f"{p.vector_size}"
            )
        else:
            note = (
                f"XLA's shared-memory transpose emitter: normalised {list(p.input_shape)} -> "
                f"{list(p.dims)} (permutation {list(p.permutation)}), tiles of "
                f"{list(p.block_sizes)}, {p.blocks} blocks of {p.threads} threads, vector size "
                f"{p.vector_size}"
            )
        body, n = body_of(fusion), len(fusion.operands)
        heroes = p.heroes or (p.hero,)
        first_root: dict[int, int] = {}
        for out_id, root in enumerate(result.choice.roots):
            if root in p.side_outputs:
                result.outputs.append(simplify_thread_map(self._reads(p, root.shape)))
            else:
                hero = find_hero(root)
                first_root.setdefault(id(hero), out_id)
                result.outputs.append(simplify_thread_map(self._writes(p, hero.shape)))
        for hero in heroes:
            cells = parameter_cells(hero.operands[0], body, n)
            reads = self._reads(p, hero.operands[0].shape)
            add_reads(result, reads, cells, first_root.get(id(hero), 0))
        for out_id, root in enumerate(result.choice.roots):
            if root in p.side_outputs:
                cells = parameter_cells(root, body, n)
                add_reads(result, self._reads(p, root.shape), cells, out_id)
        if len(heroes) > 1:
            note += f"; {len(heroes)} transposes share the grid, one shared-memory tile each"
        if p.side_outputs:
            note += (
                f"; side outputs ({', '.join(r.name for r in p.side_outputs)}) are written by "
                "the threads that read the same input element"
            )
        result.notes.append(note)

    def root_output_map(
        self, fusion: Instruction, launch: LaunchConfig, root: Instruction
    ) -> IndexingMap | None:
        p = launch.transpose
        if p is None:
            return None
        if root in p.side_outputs:
            return self._reads(p, root.shape)
        hero = find_hero(root)
        return self._writes(p, hero.shape) if hero in (p.heroes or (p.hero,)) else None

    def hero_input_map(
        self, fusion: Instruction, launch: LaunchConfig, hero: Instruction, operand: int
    ) -> IndexingMap | None:
        p = launch.transpose
        if p is None or hero not in (p.heroes or (p.hero,)) or operand != 0:
            return None
        return self._reads(p, hero.operands[0].shape)
