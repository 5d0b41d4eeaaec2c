"""A kernel's launch configuration and the launch arithmetic every emitter shares.

Modelled on XLA's ``CalculateLaunchDimensions`` (``xla/service/gpu/launch_dimensions.cc``,
the CUDA branch: four warps per block, blocks split over x and y past the x limit) and
``ComputeLoopFusionConfig`` (``gpu_fusible.cc``: unroll by up to 4 when the output has at
least as many elements as the GPU has resident threads and nothing in the fusion prevents
vectorization; at least enough to fill a byte with sub-byte outputs). Every value can be
overridden (``Overrides``); an overridden configuration says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

from ..errors import HloidxError
from ..hlo.element_types import element_bits
from ..hlo.fusion import body_of
from .grid import ceil_div, split_blocks

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape
    from .devices import DeviceProfile

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
    order (``minor_to_major``); ``overridden`` names the values the user set.

    The tiled emitters keep their parameters here (their modules define the plan types:
    ``reductions.ReductionPlan``, ``transposes.TransposePlan`` or ``PackedPlan``,
    ``scatters.ScatterPlan``); typed ``Any`` so that this module, which every emitter
    imports, imports none of them."""

    threads_per_block: tuple[int, int, int]
    blocks: tuple[int, int, int]
    unroll_factor: int
    vector_size: int
    indexing_shape: tuple[int, ...]
    minor_to_major: tuple[int, ...]
    overridden: tuple[str, ...] = field(default=())
    #: the reduction emitter's parameters (None for the other emitters)
    reduction: Any = None
    #: the transpose emitter's parameters (None for the other emitters)
    transpose: Any = None
    #: the scatter emitter's parameters (None for the other emitters)
    scatter: Any = None

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


def smallest_output_bits(fusion: Instruction) -> int:
    """The narrowest element type among the fusion's outputs, in bits."""
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
    return max(unroll, -(-8 // smallest_output_bits(fusion)))


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


def tiled_overrides(overrides: Overrides, emitter: str, device: DeviceProfile) -> list[str]:
    """What a tiled emitter takes by hand (``--vector`` its vector size,
    ``--threads-per-block`` its threads: the plans read them); they do not unroll."""
    if overrides.unroll is not None:
        raise HloidxError(
            f"{emitter} does not unroll: --vector sets its vector size and "
            "--threads-per-block its threads"
        )
    return apply_overrides(1, overrides, device)[1]  # checks the ranges
