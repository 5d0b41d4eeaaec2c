"""Launch configurations (threads per block, blocks, unroll factor) as XLA:GPU computes them.

``compute_launch`` asks the fusion's emitter model (``emitters.emitter_for``) for its launch;
the arithmetic the emitters share (``CalculateLaunchDimensions``, the loop unroll factor,
overrides) is in ``launch_config`` and re-exported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .emitters import emitter_for
from .launch_config import (
    MAX_CONCAT_ARGUMENTS_FOR_UNROLLING,
    MAX_UNROLL_FACTOR,
    NO_OVERRIDES,
    WARP_SCHEDULERS,
    LaunchConfig,
    Overrides,
    apply_overrides,
    launch_dimensions,
    loop_unroll_factor,
    smallest_output_bits,
    tiled_overrides,
)

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .devices import DeviceProfile
    from .emitter_choice import EmitterChoice

__all__ = [
    "MAX_CONCAT_ARGUMENTS_FOR_UNROLLING",
    "MAX_UNROLL_FACTOR",
    "NO_OVERRIDES",
    "WARP_SCHEDULERS",
    "LaunchConfig",
    "Overrides",
    "apply_overrides",
    "compute_launch",
    "launch_dimensions",
    "loop_unroll_factor",
    "smallest_output_bits",
    "tiled_overrides",
]


def compute_launch(
    fusion: Instruction,
    choice: EmitterChoice,
    device: DeviceProfile,
    overrides: Overrides = NO_OVERRIDES,
) -> LaunchConfig | None:
    """The launch configuration of ``fusion``, or None for an emitter hloidx does not model."""
    emitter = emitter_for(choice)
    return None if emitter is None else emitter.launch(fusion, choice, device, overrides)
