"""The simulation's entry point and its result."""

from __future__ import annotations

from dataclasses import dataclass

from ..hlo.ir import HloModule
from ..hlo.syntax import parse_hlo
from ..perf.stage import module_stage
from .emit import SimulatedKernel, emit_module

SIMULATED = (
    "calls inlined; dots as cuBLAS calls (bias and scaling epilogues folded); PriorityFusion "
    "(producers fused into all consumers or none) and sibling multi-output fusion"
)


@dataclass(frozen=True)
class Simulation:
    """The fused module, its text, and each simulated kernel with what it holds."""

    module: HloModule
    text: str
    kernels: tuple[SimulatedKernel, ...]
    simulated: str
    devices: int


def simulate(module: HloModule, partition: bool = True) -> Simulation:
    """The module XLA:GPU would run; per device when ``partition`` and the module carries
    sharding annotations for more than one device."""
    stage = module_stage(module)
    devices = stage.num_partitions if partition and not stage.partitioned else 1
    text, kernels = emit_module(module, devices)
    fused = parse_hlo(text, f"{module.name} (fused by hloidx's simulation)", verify=False)
    what = SIMULATED
    if devices > 1:
        what = (
            f"SPMD partitioning over {devices} devices (per-device shapes from the sharding "
            "annotations, the partitioner's collectives added); " + SIMULATED
        )
    return Simulation(fused, text, tuple(kernels), what, devices)
