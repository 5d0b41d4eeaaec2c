"""Launch configurations (threads per block, blocks, unroll factor) as XLA:GPU computes them.

Modelled on XLA's ``CalculateLaunchDimensions`` (``xla/service/gpu/launch_dimensions.cc``,
the CUDA branch: four warps per block, blocks split over x and y past the x limit) and
``ComputeLoopFusionConfig`` (``gpu_fusible.cc``: unroll by up to 4 when the output has at
least as many elements as the GPU has resident threads and nothing in the fusion prevents
vectorization; at least enough to fill a byte with sub-byte outputs). Every value can be
overridden; an overridden configuration says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd, prod
from typing import TYPE_CHECKING, Any

from ..errors import HloidxError
from ..hlo.element_types import element_bits
from ..hlo.fusion import body_of
from ..hlo.rules.shape_ops import minor_to_major
from .emitters import EmitterChoice
from .grid import ceil_div, split_blocks

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape
    from .devices import DeviceProfile
    from .reductions import ReductionPlan
    from .scatters import ScatterPlan
    from .transposes import PackedPlan, TransposePlan

#: XLA: four warp schedulers per SM, one warp each per block
WARP_SCHEDULERS = 4
MAX_UNROLL_FACTOR = 4
#: XLA's kMaxConcatArgumentsForUnrolling
MAX_CONCAT_ARGUMENTS_FOR_UNROLLING = 10


@dataclass(frozen=True)
class Overrides:
    threads_per_block: int | None = None
    unroll: int | None = None
    vector: int | None = None


NO_OVERRIDES = Overrides()


@dataclass(frozen=True)
class LaunchConfig:
    """One kernel launch. ``indexing_shape`` is the shape the threads walk in physical
    order (``minor_to_major``); ``overridden`` names the values the user set."""

    threads_per_block: tuple[int, int, int]
    blocks: tuple[int, int, int]
    unroll_factor: int
    vector_size: int
    indexing_shape: tuple[int, ...]
    minor_to_major: tuple[int, ...]
    overridden: tuple[str, ...] = field(default=())
    #: the reduction emitter's parameters (None for the other emitters)
    reduction: ReductionPlan | None = None
    #: the transpose emitter's parameters (None for the other emitters)
    transpose: TransposePlan | PackedPlan | None = None
    #: the scatter emitter's parameters (None for the other emitters)
    scatter: ScatterPlan | None = None

    @property
    def total_threads(self) -> int:
        return prod(self.threads_per_block) * prod(self.blocks)

    def as_json(self) -> dict[str, Any]:
        return {
            "threads_per_block": {
                "x": self.threads_per_block[0],
                "y": self.threads_per_block[1],
                "z": self.threads_per_block[2],
            },
            "blocks": {"x": self.blocks[0], "y": self.blocks[1], "z": self.blocks[2]},
            "unroll_factor": self.unroll_factor,
            "vector_size": self.vector_size,
            "indexing_shape": list(self.indexing_shape),
            "overridden": list(self.overridden),
        }


def _may_prevent_vectorization(fusion: Instruction) -> bool:
    for instr in body_of(fusion).instructions:
        if instr.opcode in ("reduce-window", "sort", "dot"):
            return True
        if (
            instr.opcode == "concatenate"
            and len(instr.operands) > MAX_CONCAT_ARGUMENTS_FOR_UNROLLING
        ):
            return True
        if instr.opcode == "reduce" and instr.shape.is_tuple and len(instr.shape.leaves()) > 1:
            return True
    return False


def _smallest_output_bits(fusion: Instruction) -> int:
    return min((element_bits(s.element_type) for s in fusion.shape.leaves()), default=32)


def _max_unroll(num_elements: int) -> int:
    factor = MAX_UNROLL_FACTOR
    while factor > 1 and num_elements % factor:
        factor //= 2
    return factor


def loop_unroll_factor(fusion: Instruction, element_shape: Shape, device: DeviceProfile) -> int:
    """XLA's ``ComputeLoopFusionConfig`` unroll factor."""
    n = element_shape.num_elements()
    unroll = 1
    if n >= device.max_resident_threads and not _may_prevent_vectorization(fusion):
        unroll = _max_unroll(n)
    return max(unroll, -(-8 // _smallest_output_bits(fusion)))


def launch_dimensions(
    num_elements: int, unroll: int, device: DeviceProfile, threads_per_block: int | None = None
) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """XLA's ``CalculateLaunchDimensions`` (CUDA): (threads per block, blocks)."""
    if num_elements <= 1:
        return (1, 1, 1), (1, 1, 1)
    n = ceil_div(num_elements, unroll)
    per_block = threads_per_block or min(device.warp_size * WARP_SCHEDULERS, n)
    blocks_x, blocks_y = split_blocks(ceil_div(n, per_block), device.block_dim_limit_x)
    return (per_block, 1, 1), (blocks_x, blocks_y, 1)


def _concatenate_shape(hero: Instruction) -> Shape:
    """The largest operand of a concatenate (XLA's ``GetLargestConcatOperandShape``)."""
    return max(hero.operands, key=lambda o: o.shape.num_elements()).shape


def _tiled_overrides(overrides: Overrides, emitter: str, device: DeviceProfile) -> list[str]:
    """What a tiled emitter takes by hand (``--vector`` its vector size,
    ``--threads-per-block`` its threads: the plans read them); they do not unroll."""
    if overrides.unroll is not None:
        raise HloidxError(
            f"{emitter} does not unroll: --vector sets its vector size and "
            "--threads-per-block its threads"
        )
    return apply_overrides(1, overrides, device)[1]  # checks the ranges


def _scatter_launch(
    fusion: Instruction, choice: EmitterChoice, device: DeviceProfile, overrides: Overrides
) -> LaunchConfig | None:
    from dataclasses import replace

    from .scatters import plan

    chosen, _ = plan(fusion, choice, device)
    if chosen is None:
        return None
    updates = chosen.scatter.operands[2].shape
    set_by_hand: list[str] = []
    if overrides != NO_OVERRIDES and chosen.variant != "distributed updates":
        set_by_hand = _tiled_overrides(
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


def _transpose_launch(
    fusion: Instruction, choice: EmitterChoice, device: DeviceProfile, overrides: Overrides
) -> LaunchConfig | None:
    from .transposes import PackedPlan, plan

    set_by_hand = _tiled_overrides(overrides, "the transpose emitter", device)
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


def _reduction_launch(
    fusion: Instruction, choice: EmitterChoice, device: DeviceProfile, overrides: Overrides
) -> LaunchConfig | None:
    from .reductions import plan

    set_by_hand = _tiled_overrides(overrides, "a reduction emitter", device)
    chosen, _ = plan(fusion, choice, device, overrides)
    if chosen is None:
        return None
    return LaunchConfig(
        (chosen.threads_per_block, 1, 1),
        (chosen.gpu_blocks[0], chosen.gpu_blocks[1], 1),
        1,
        chosen.vector_size,
        chosen.input_shape,
        tuple(reversed(range(len(chosen.input_shape)))),
        tuple(set_by_hand),
        reduction=chosen,
    )


def apply_overrides(
    unroll: int, overrides: Overrides, device: DeviceProfile
) -> tuple[int, list[str]]:
    """The unroll factor after ``--unroll``/``--vector``, and what was set by hand (a
    ``--threads-per-block`` override is checked here and passed to ``launch_dimensions``)."""
    set_by_hand: list[str] = []
    if overrides.unroll is not None or overrides.vector is not None:
        wanted = overrides.vector if overrides.vector is not None else overrides.unroll
        if wanted is None or wanted < 1:
            raise HloidxError("the unroll factor and vector size must be at least 1")
        unroll = wanted
        set_by_hand.append("vector" if overrides.vector is not None else "unroll")
    if overrides.threads_per_block is not None:
        if not 1 <= overrides.threads_per_block <= device.threads_per_block_limit:
            raise HloidxError(
                f"--threads-per-block must be in [1, {device.threads_per_block_limit}] "
                f"on {device.name}"
            )
        set_by_hand.append("threads_per_block")
    return unroll, set_by_hand


def compute_launch(
    fusion: Instruction,
    choice: EmitterChoice,
    device: DeviceProfile,
    overrides: Overrides = NO_OVERRIDES,
) -> LaunchConfig | None:
    """The launch configuration of ``fusion``, or None for an emitter hloidx does not model."""
    if choice.kind == "reduction":
        return _reduction_launch(fusion, choice, device, overrides)
    if choice.kind == "transpose":
        return _transpose_launch(fusion, choice, device, overrides)
    if choice.kind == "scatter":
        return _scatter_launch(fusion, choice, device, overrides)
    if choice.kind == "dynamic-update-slice" and choice.hero is not None:
        # XLA's InPlaceDynamicUpdateSliceFusion: threads walk the update, unroll 1
        dus = choice.hero
        while dus.opcode == "bitcast":
            dus = dus.operands[0]
        shape, unroll = dus.operands[1].shape, 1
    elif choice.kind == "input-slices" and choice.roots:
        # XLA's InputSlicesFusion: a loop over the slices' common input, unrolled only to fill
        # a byte with sub-byte outputs
        shape = choice.roots[0].operands[0].shape
        unroll = -(-8 // _smallest_output_bits(fusion))
    elif choice.kind == "loop":
        shape = (choice.roots[0] if choice.roots else fusion).shape.leaves()[0]
        unroll = loop_unroll_factor(fusion, shape, device)
    elif choice.kind == "concatenate" and choice.hero is not None:
        shape = _concatenate_shape(choice.hero)
        unroll = loop_unroll_factor(fusion, shape, device)
        axis = (choice.hero.dimensions or (0,))[0]
        for operand in choice.hero.operands:  # every operand must split into whole vectors
            unroll = gcd(unroll, operand.shape.dims[axis])
    else:
        return None
    unroll, set_by_hand = apply_overrides(unroll, overrides, device)
    threads, blocks = launch_dimensions(
        shape.num_elements(), unroll, device, overrides.threads_per_block
    )
    return LaunchConfig(
        threads,
        blocks,
        unroll,
        unroll,  # the loop over unroll_id reads consecutive elements: one vector load
        shape.dims,
        minor_to_major(shape),
        tuple(set_by_hand),
    )
