"""The tiled (block-level, Triton) model: XLA's ``EstimateRunTimeForTiledHloComputation`` and
``TryFindBestTilingForFusion`` (openxla ab4462695acd54607187163f9435fec284f86a0c).

One block computes one output tile. Every instruction of the fused computation gets the tile
its maps from the root give for the output tile (hloidx's symbolic tiles,
``hloidx.tiling.symbolic_tile``); equal tiles of one instruction are one tile. An instruction
inside costs its flops per element on every element of its tile padded to powers of two, in
every block; a parameter's tile is loaded by every block (unpadded: the padding is masked), at
the share of the bandwidth its contiguous bytes fill of whole transactions. A tiling whose
root, parameter or iota tiles need more than 40% of a block's registers spills: it "does not
fit" and gets no number. Without a configured tiling, every tiling XLA would try (powers of
two below each dimension and the dimension itself, tiles of at most 2^20 padded elements,
root tiles that are powers of two or whole dimensions) is estimated and the fastest kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from math import ceil, prod
from typing import TYPE_CHECKING

from ..caches import memo
from ..gpu.coalescing import tile_bandwidth_utilization
from ..hlo.element_types import element_bytes
from ..hlo.fusion import body_of, computation_outputs, grouped_output_to_input
from ..maps.expr import dim
from ..maps.traversal import evaluate
from ..tiling.symbolic_tile import NoTile, derive
from .backend_config import read_backend_config
from .costs import KernelCost, OperandCost
from .flops import flops_per_element
from .fusion_model import shape_bytes
from .model import (
    combine_ns,
    compute_time_ns,
    num_warps_for,
    padded_size,
    read_time_ns,
    tile_fits_in_registers,
)

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from ..maps.indexing_map import IndexingMap
    from .devices import CostDevice

#: XLA's kMaxTensorNumElements: a Triton tile holds at most this many (padded) elements
MAX_TILE_ELEMENTS = 1 << 20
#: tilings estimated at most by the search
MAX_TILINGS = 4096


class NotTileable(Exception):
    """The fusion has no tiling hloidx can describe (the message says why)."""


@dataclass(frozen=True)
class TiledInstruction:
    instruction: Instruction
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    is_parameter: bool


@dataclass
class TiledEstimate:
    cost: KernelCost
    tiles: list[TiledInstruction] = field(default_factory=list)


def configured_tiling(fusion: Instruction) -> tuple[list[list[int]] | None, int | None]:
    """Output tile sizes and ``num_warps`` from ``block_level_fusion_config`` (None: none)."""
    config = read_backend_config(fusion).value
    block = (config.get("fusion_backend_config") or {}).get("block_level_fusion_config") or {}
    tiles = block.get("output_tiles")
    sizes: list[list[int]] | None = None
    if tiles:
        sizes = [[int(s) for s in t.get("sizes", [])] for t in tiles]
    elif block.get("output_tile_sizes"):
        sizes = [[int(s) for s in block["output_tile_sizes"]]]
    warps = block.get("num_warps")
    return sizes, (int(warps) if warps is not None else None)


@memo(256)
def _walk(root: Instruction):
    """The maps from ``root`` to everything it reads (one walk per root for all tilings)."""
    return grouped_output_to_input(root)


@memo(256)
def real_root(fusion: Instruction) -> Instruction:
    """The root no other root reads (XLA's "real root", tiled by the output tile sizes)."""
    roots = computation_outputs(body_of(fusion))
    for r in roots:
        if not any(r in _walk(o) for o in roots if o is not r):
            return r
    return roots[0]


@memo(8192)
def _formula(m: IndexingMap, extents: tuple[int, ...]):
    try:
        return derive(m, extents, frozenset())
    except NoTile as e:
        return str(e)


def _sample_tiles(extents: tuple[int, ...], sizes: tuple[int, ...]) -> list[dict]:
    """A few tile indices (first, last, middle) at which two tiles' offsets are compared."""
    counts = [ceil(n / t) for n, t in zip(extents, sizes, strict=True)]
    picks = [sorted({0, c - 1, c // 2}) for c in counts]
    points = list(product(*picks))[:8]
    return [{dim(i): v * sizes[i] for i, v in enumerate(p)} for p in points]


def _tile_of(m: IndexingMap, extents: tuple[int, ...], sizes: tuple[int, ...], samples):
    """Sizes, strides and (when ``samples`` is given) offsets at those tiles of ``m``'s tile."""
    formula = _formula(m, extents)
    if isinstance(formula, str):
        raise NotTileable(formula)
    values = {dim(i): s for i, s in enumerate(sizes)}
    if not formula.conditions.holds(values):
        raise NotTileable("the tile sizes break a constraint of the symbolic tile")
    t_sizes = tuple(int(evaluate(d.size, values)) for d in formula.dims)
    t_strides = tuple(int(evaluate(d.stride, values)) for d in formula.dims)
    if samples is None:
        return t_sizes, t_strides, ()
    adjust = [int(evaluate(d.adjust, values)) for d in formula.dims]
    offsets = tuple(
        tuple(int(evaluate(d.base, point)) + a for d, a in zip(formula.dims, adjust, strict=True))
        for point in samples
    )
    return t_sizes, t_strides, offsets


def tile_computation(fusion: Instruction, sizes: tuple[int, ...]) -> list[TiledInstruction]:
    """Every distinct tile of every instruction for an output tile of ``sizes`` (two maps
    that give the same tile, as XLA's deduplication sees it, are one tile)."""
    body = body_of(fusion)
    roots = computation_outputs(body)
    if not roots:
        raise NotTileable("the fused computation has no root")
    real = real_root(fusion)
    if not real.shape.is_array:
        # a variadic reduce (or sort) yields a tuple from one instruction: XLA's Triton
        # emitter takes no such root, so there is no tiling to describe
        raise NotTileable(f"{real.name}: a tuple-shaped {real.opcode} root is not tiled")
    extents = tuple(real.shape.dims)
    walks = [_walk(real)]
    if any(r.shape.dims != real.shape.dims for r in roots if r.shape.is_array):
        # XLA tiles the root no other root reads and propagates its tiling to the others
        if any(r not in walks[0] for r in roots):
            raise NotTileable("outputs of different shapes that one root does not read")
    else:
        walks += [_walk(r) for r in roots if r is not real]
    maps: dict[Instruction, list[IndexingMap]] = {}
    for walk in walks:
        for instr, reached in walk.items():
            if reached.unknown:
                raise NotTileable(f"{instr.name}: {reached.unknown[0]}")
            if instr.opcode == "concatenate":
                raise NotTileable("concatenate is not supported by XLA's tiled cost model")
            if not instr.shape.is_array:
                continue
            found = maps.setdefault(instr, [])
            found.extend(t.map for t in reached.maps if t.map not in found)
    samples = None
    out: list[TiledInstruction] = []
    for instr, these in maps.items():
        if len(these) > 1 and samples is None:
            samples = _sample_tiles(extents, sizes)
        seen = set()
        for m in these:
            t_sizes, t_strides, offsets = _tile_of(
                m, extents, sizes, samples if len(these) > 1 else None
            )
            key = (t_sizes, t_strides, offsets)
            if key not in seen:
                seen.add(key)
                out.append(TiledInstruction(instr, t_sizes, t_strides, instr.opcode == "parameter"))
    return out


def num_output_tiles(fusion: Instruction, sizes: tuple[int, ...]) -> int:
    root = real_root(fusion)
    extents = root.shape.dims if root.shape.is_array else ()
    return prod(ceil(n / t) for n, t in zip(extents, sizes, strict=True))


def launch_for_tiles(
    tiles: list[TiledInstruction], blocks: int, device: CostDevice
) -> tuple[int, int]:
    """XLA's ``GetLaunchDimensionsForTiledFusion``: blocks, and warps from the largest tile."""
    largest = max([1, *(padded_size(t.sizes) for t in tiles)])
    return blocks, num_warps_for(largest) * device.warp_size


def estimate_tiled(
    fusion: Instruction,
    device: CostDevice,
    sizes: tuple[int, ...],
    launch: tuple[int, int] | None = None,
    tiles: list[TiledInstruction] | None = None,
) -> TiledEstimate:
    """The estimate of ``fusion`` tiled by output tiles of ``sizes``; ``launch`` (blocks,
    threads per block) defaults to XLA's for the tiling. Raises :class:`NotTileable`."""
    if tiles is None:
        tiles = tile_computation(fusion, sizes)
    blocks = num_output_tiles(fusion, sizes)
    if launch is None:
        launch = launch_for_tiles(tiles, blocks, device)
    num_blocks, threads = launch
    body = body_of(fusion)
    roots = computation_outputs(body)
    root_ids = set(map(id, roots))
    params = {p.parameter_number: p for p in body.parameters}
    outside = {id(params[k]): k for k in params if k is not None}
    fits = all(
        tile_fits_in_registers(padded_size(t.sizes), device)
        for t in tiles
        if t.is_parameter or t.instruction.opcode == "iota" or id(t.instruction) in root_ids
    )
    warps = threads // device.warp_size
    cost = KernelCost(
        name=fusion.name,
        opcode="fusion",
        kind=fusion.fusion_kind or "",
        emitter="triton (block-level)",
        blocks=num_blocks,
        threads_per_block=threads,
        flops=0,
        bytes_read=0,
        bytes_written=sum(shape_bytes(r.shape) for r in roots),
        read_time_ns=0.0,
        write_time_ns=0.0,
        compute_time_ns=0.0,
        exec_time_ns=None,
        fits=fits,
        tile_sizes=[_root_sizes(r, tiles) for r in roots],
        num_warps=warps,
    )
    if not fits:
        cost.why = "registers spill: a tile needs more than 40% of a block's registers"
        return TiledEstimate(cost, tiles)
    profile = device.compute_capability
    reads: dict[int, list] = {}
    heaviest: tuple[int, int] = (0, -1)
    position = {id(i): k for k, i in enumerate(body.instructions)}
    for t in tiles:
        if t.is_parameter:
            index = outside.get(id(t.instruction), 0)
            eb = element_bytes(t.instruction.shape.element_type)
            nbytes = eb * num_blocks * prod(t.sizes)
            rate = tile_bandwidth_utilization(
                t.instruction.shape, t.sizes, t.strides, device.dram_to_l2_transaction_size_bytes
            )
            entry = reads.setdefault(index, [0, 1.0, t.instruction])
            entry[0] += nbytes
            entry[1] = min(entry[1], rate)
        else:
            these = flops_per_element(t.instruction, profile) * num_blocks * padded_size(t.sizes)
            cost.flops += these
            if these > heaviest[0]:
                heaviest = (these, position.get(id(t.instruction), -1))
    cost.heaviest_index = heaviest[1]
    for index, (total, rate, param) in sorted(reads.items()):
        operand = fusion.operands[index] if index < len(fusion.operands) else param
        size = shape_bytes(param.shape)
        net = min(size, total)
        time = read_time_ns(device, num_blocks, net, total, rate)
        coalesced = rate >= 1.0
        how = f"tile: {rate:.0%} of each transaction used"
        cost.operands.append(
            OperandCost(index, operand.name, total, net, coalesced, time, rate, how, size)
        )
        cost.bytes_read += total
        cost.read_time_ns += time
    for t in tiles:
        if id(t.instruction) in root_ids:
            rate = tile_bandwidth_utilization(
                t.instruction.shape, t.sizes, t.strides, device.dram_to_l2_transaction_size_bytes
            )
            bandwidth = int(rate * device.memory_bandwidth)
            cost.write_time_ns += shape_bytes(t.instruction.shape) / bandwidth * 1e9
    cost.compute_time_ns = compute_time_ns(device, cost.flops, num_blocks, threads)
    cost.exec_time_ns = combine_ns(cost.compute_time_ns, cost.read_time_ns + cost.write_time_ns)
    return TiledEstimate(cost, tiles)


def _root_sizes(root: Instruction, tiles: list[TiledInstruction]) -> list[int]:
    return next((list(t.sizes) for t in tiles if t.instruction is root), [])


def candidate_tilings(fusion: Instruction, device: CostDevice) -> list[tuple[int, ...]]:
    """The output tilings XLA's search tries, in its order (before the symbolic constraints)."""
    root = real_root(fusion)
    extents = tuple(root.shape.dims) if root.shape.is_array else ()
    choices = []
    for n in extents:
        sizes, s = [], 1
        while s < n:
            sizes.append(s)
            s *= 2
        sizes.append(max(n, 1))
        choices.append(sizes)
    out = []
    for sizes in product(*choices):
        if num_output_tiles(fusion, sizes) >= device.launch_profile.block_dim_limit_x:
            continue
        out.append(tuple(sizes))
        if len(out) >= MAX_TILINGS:
            break
    return out


def _satisfies_triton(tiles: list[TiledInstruction], root_ids: set[int]) -> bool:
    for t in tiles:
        if padded_size(t.sizes) > MAX_TILE_ELEMENTS:
            return False
        if id(t.instruction) in root_ids:
            dims = t.instruction.shape.dims
            if any(s & (s - 1) and s != n for s, n in zip(t.sizes, dims, strict=True)):
                return False
    return True


def search_tilings(fusion: Instruction, device: CostDevice) -> list[TiledEstimate]:
    """Every valid tiling's estimate, fastest first (those that do not fit last)."""
    roots = computation_outputs(body_of(fusion))
    root_ids = set(map(id, roots))
    found: list[TiledEstimate] = []
    for sizes in candidate_tilings(fusion, device):
        try:
            tiles = tile_computation(fusion, sizes)
        except NotTileable:
            continue
        if not _satisfies_triton(tiles, root_ids):
            continue
        found.append(estimate_tiled(fusion, device, sizes, tiles=tiles))
    order = {id(e): k for k, e in enumerate(found)}
    found.sort(
        key=lambda e: (e.cost.exec_time_ns is None, e.cost.exec_time_ns or 0.0, order[id(e)])
    )
    return found


def best_tiling(fusion: Instruction, device: CostDevice) -> TiledEstimate | None:
    """XLA's ``TryFindBestTilingForFusion``: the fastest tiling that fits, or None."""
    ranked = search_tilings(fusion, device)
    return ranked[0] if ranked and ranked[0].cost.exec_time_ns is not None else None
