"""XLA:GPU's scatter emitters: parameters and thread-id maps.

The facts come from XLA's ``scatter.cc`` (``CreateScatterFusion``,
``ScatterWithDistributedUpdates``, ``ScatterWithDistributedIndices``,
``GetSingleSliceVectorSize``). The emitter handles scatters in XLA's simplified form
(``ScatterSimplifier``): indices ``[slices, index_vector_length]``, updates ``[slices,
...window]`` with every window dim an update window dim.

Threads read the updates and the indices at positions the maps give; where a thread writes
in the output (and which operand element it combines with) depends on the index values, so
the output and the scattered-into operand are UNDEFINED, as in XLA's own analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import gcd, prod
from typing import TYPE_CHECKING

from ..errors import HloidxError
from ..hlo.attributes import scatter_dimension_numbers
from ..hlo.element_types import element_bits
from ..hlo.fusion import body_of, computation_outputs, parameter_cells
from ..hlo.rules.shape_ops import minor_to_major
from ..maps.expr import Expr, add, dim, floordiv, mod, mul, range_var
from ..maps.indexing_map import IndexingMap, Variable
from ..maps.interval import Interval
from .emitter_choice import EmitterChoice, find_hero
from .grid import ceil_div, delinearize, grid_map
from .launch_config import (
    NO_OVERRIDES,
    LaunchConfig,
    Overrides,
    apply_overrides,
    launch_dimensions,
    loop_unroll_factor,
    tiled_overrides,
)
from .thread_reads import add_reads, add_undefined, default_thread_map, simplify_thread_map

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .devices import DeviceProfile
    from .thread_reads import ThreadMaps

WARP = 32
WARPS_PER_BLOCK = 4
MAX_VECTORIZED_BITS = 128


@dataclass(frozen=True)
class ScatterPlan:
    scatter: Instruction
    variant: str  # "distributed updates" or "distributed indices"
    num_slices: int
    index_vector_length: int
    slice_shape: tuple[int, ...]
    vector_size: int
    threads_per_block: int
    blocks: tuple[int, int]
    # distributed indices only
    indices_per_warp: int = 1
    indices_vector_size: int = 1
    warps_per_slice: int = 1


def _flag(instr: Instruction, name: str) -> bool:
    return str(instr.attributes.get(name, "false")).strip().lower() == "true"


def _simplified(scatter: Instruction) -> str:
    """Why ``scatter`` is not in XLA's simplified form (empty when it is)."""
    if len(scatter.operands) != 3:
        return "variadic scatters are not modelled"
    operand, indices, updates = (o.shape for o in scatter.operands)
    dn = scatter_dimension_numbers(scatter)
    if indices.rank != 2 or dn.index_vector_dim != 1:
        return "the scatter is not in XLA's simplified form (indices of rank 2)"
    if tuple(dn.update_window_dims) != tuple(range(1, updates.rank)):
        return "the scatter is not in XLA's simplified form (update window dims)"
    if dn.inserted_window_dims or dn.input_batching_dims or dn.scatter_indices_batching_dims:
        return "the scatter is not in XLA's simplified form (inserted or batching dims)"
    if tuple(dn.scatter_dims_to_operand_dims) != tuple(range(indices.dims[1])):
        return "the scatter is not in XLA's simplified form (scatter dims)"
    if operand.rank != updates.rank - 1:
        return "the scatter is not in XLA's simplified form (ranks)"
    return ""


def single_slice_vector_size(elements: int, max_elements: int) -> int:
    """XLA's ``GetSingleSliceVectorSize``."""
    v = gcd(elements, max_elements)
    per_warp = WARP * v
    while v > 1 and per_warp > elements:
        v //= 2
        per_warp //= 2
    return v


def plan(
    fusion: Instruction,
    choice: EmitterChoice,
    device: DeviceProfile,
    overrides: Overrides = NO_OVERRIDES,
) -> tuple[ScatterPlan | None, str]:
    """XLA's scatter emitter and its parameters, or None and why not. ``overrides`` (distributed
    indices) replace the vector size and the threads per block (whole warps)."""
    roots = computation_outputs(body_of(fusion))
    if len(roots) != 1 or find_hero(roots[0]).opcode != "scatter":
        return None, "scatter fusions with several outputs are not modelled"
    scatter = find_hero(roots[0])
    why = _simplified(scatter)
    if why:
        return None, why
    indices, updates = scatter.operands[1].shape, scatter.operands[2].shape
    num_slices, ivl = indices.dims[0], indices.dims[1]
    slice_shape = tuple(updates.dims[1:])
    elements = prod(slice_shape)
    bits = element_bits(scatter.operands[0].shape.element_type)
    v = overrides.vector or single_slice_vector_size(elements, MAX_VECTORIZED_BITS // bits)
    max_active_warps = WARPS_PER_BLOCK * device.sm_count
    sorted_indices = _flag(scatter, "indices_are_sorted")
    unique = _flag(scatter, "unique_indices")
    if sorted_indices and not unique and num_slices > max_active_warps:
        operand = scatter.operands[0].shape.dims
        possible = prod(operand[i] - slice_shape[i] + 1 for i in range(ivl))
        per_warp = ceil_div(num_slices, max(max_active_warps, possible))
        index_bits = element_bits(indices.element_type)
        max_indices = MAX_VECTORIZED_BITS // index_bits
        ivs = 1
        if ivl == 1 and per_warp > max_indices:
            per_warp = ceil_div(per_warp, max_indices) * max_indices
            ivs = max_indices
        warps = WARPS_PER_BLOCK
        if overrides.threads_per_block is not None:
            if overrides.threads_per_block % WARP:
                raise HloidxError(
                    "the scatter emitter with distributed indices runs whole warps: "
                    "--threads-per-block must be a multiple of 32"
                )
            warps = overrides.threads_per_block // WARP
        blocks = ceil_div(num_slices, per_warp * warps)
        return ScatterPlan(
            scatter, "distributed indices", num_slices, ivl, slice_shape, v,
            warps * WARP, (blocks, 1), per_warp, ivs,
        ), ""  # fmt: skip
    v = gcd(elements, loop_unroll_factor(fusion, updates, device))
    threads, blocks = launch_dimensions(updates.num_elements(), v, device)
    return ScatterPlan(
        scatter, "distributed updates", num_slices, ivl, slice_shape, v,
        prod(threads), (blocks[0], blocks[1]),
    ), ""  # fmt: skip


def _grid(p: ScatterPlan, symbols: list[tuple[int, str]], results: list[Expr]) -> IndexingMap:
    return grid_map(results, p.threads_per_block, p.blocks, symbols)


def _distributed_indices(p: ScatterPlan) -> tuple[IndexingMap, IndexingMap]:
    warp = floordiv(dim(0), WARP)
    lane = mod(dim(0), WARP)
    global_warp = add(mul(dim(3), p.threads_per_block // WARP), warp)
    slice_id = floordiv(global_warp, p.warps_per_slice)
    warp_in_slice = mod(global_warp, p.warps_per_slice)
    elements = prod(p.slice_shape)
    v = p.vector_size
    index_id = add(mul(slice_id, p.indices_per_warp), range_var(0))
    linear = add(
        mul(warp_in_slice, WARP * v),
        mul(range_var(1), v * WARP * p.warps_per_slice),
        mul(lane, v),
        range_var(2),
    )
    loops = ceil_div(elements, p.warps_per_slice * WARP * v)
    updates = _grid(
        p,
        [(p.indices_per_warp, "index_id_loop"), (loops, "update_loop"), (v, "vector_id")],
        [index_id, *delinearize(linear, p.slice_shape)],
    ).add_constraints(
        [(index_id, Interval(0, p.num_slices - 1)), (linear, Interval(0, elements - 1))]
    )
    vectorized = add(
        mul(slice_id, p.indices_per_warp),
        mul(range_var(0), p.indices_vector_size),
        range_var(1),
    )
    indices = _grid(
        p,
        [
            (p.indices_per_warp // p.indices_vector_size, "index_id_loop"),
            (p.indices_vector_size, "index_vector_id"),
            (p.index_vector_length, "index_dim"),
        ],
        [vectorized, range_var(2)],
    ).add_constraints([(vectorized, Interval(0, p.num_slices - 1))])
    return updates, indices


def thread_maps(p: ScatterPlan, updates_map: IndexingMap | None) -> tuple[IndexingMap, IndexingMap]:
    """Thread ids -> (update element, index element) each thread reads. ``updates_map`` is the
    loop emitter's default map over the updates (distributed updates)."""
    if p.variant == "distributed indices":
        return _distributed_indices(p)
    assert updates_map is not None
    k = updates_map.num_range_vars
    index_dim = Variable(Interval(0, p.index_vector_length - 1), "index_dim")
    indices = IndexingMap(
        (updates_map.results[0], range_var(k)),
        updates_map.dim_vars,
        (*updates_map.range_vars, index_dim),
        (),
        updates_map.constraints,
    )
    return updates_map, indices


class ScatterEmitter:
    """XLA's scatter emitters (distributed updates, distributed indices) behind the
    ``Emitter`` interface."""

    kinds = ("scatter",)

    def launch(
        self,
        fusion: Instruction,
        choice: EmitterChoice,
        device: DeviceProfile,
        overrides: Overrides = NO_OVERRIDES,
    ) -> LaunchConfig | None:
        chosen, _ = plan(fusion, choice, device)
        if chosen is None:
            return None
        updates = chosen.scatter.operands[2].shape
        set_by_hand: list[str] = []
        if overrides != NO_OVERRIDES and chosen.variant != "distributed updates":
            set_by_hand = tiled_overrides(
                overrides, "the scatter emitter with distributed indices", device
            )
            chosen, _ = plan(fusion, choice, device, overrides)
            assert chosen is not None
        elif overrides != NO_OVERRIDES:
            vector, set_by_hand = apply_overrides(chosen.vector_size, overrides, device)
            threads, blocks = launch_dimensions(
                updates.num_elements(), vector, device, overrides.threads_per_block
            )
            chosen = replace(
                chosen, vector_size=vector, threads_per_block=prod(threads), blocks=blocks[:2]
            )
        return LaunchConfig(
            (chosen.threads_per_block, 1, 1),
            (chosen.blocks[0], chosen.blocks[1], 1),
            chosen.vector_size,
            chosen.vector_size,
            tuple(updates.dims),
            minor_to_major(updates),
            tuple(set_by_hand),
            scatter=chosen,
        )

    def why_not(self, fusion: Instruction, choice: EmitterChoice, device: DeviceProfile) -> str:
        return plan(fusion, choice, device)[1]

    @staticmethod
    def _maps(launch: LaunchConfig) -> tuple[IndexingMap, IndexingMap]:
        p = launch.scatter
        default = default_thread_map(launch) if p.variant == "distributed updates" else None
        return thread_maps(p, default)

    def fill_thread_maps(self, result: ThreadMaps) -> None:
        launch, fusion = result.launch, result.fusion
        assert launch is not None
        assert launch.scatter is not None
        p = launch.scatter
        updates_map, indices_map = self._maps(launch)
        updates_map = simplify_thread_map(updates_map)
        indices_map = simplify_thread_map(indices_map)
        body, n = body_of(fusion), len(fusion.operands)
        result.outputs.append(None)
        operand_cells = parameter_cells(p.scatter.operands[0], body, n)
        index_cells = parameter_cells(p.scatter.operands[1], body, n)
        update_cells = parameter_cells(p.scatter.operands[2], body, n)
        add_reads(result, indices_map, index_cells, 0)
        add_reads(result, updates_map, update_cells, 0)
        note = "read where the indices say, at run time (XLA's analysis has no map either)"
        add_undefined(result, operand_cells, note)
        result.notes.append(
            f"XLA's scatter emitter ({p.variant}): {p.num_slices} slices of "
            f"{list(p.slice_shape)}, vector size {p.vector_size}; where each thread writes "
            "(output 0) depends on the index values: UNDEFINED"
        )

    def root_output_map(
        self, fusion: Instruction, launch: LaunchConfig, root: Instruction
    ) -> IndexingMap | None:
        return None  # where a thread writes depends on the index values

    def hero_input_map(
        self, fusion: Instruction, launch: LaunchConfig, hero: Instruction, operand: int
    ) -> IndexingMap | None:
        p = launch.scatter
        if p is None or hero is not p.scatter or operand not in (1, 2):
            return None
        updates_map, indices_map = self._maps(launch)
        return updates_map if operand == 2 else indices_map
