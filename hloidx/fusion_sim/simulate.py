"""The simulation's entry point and its result."""

from __future__ import annotations

from dataclasses import dataclass

from ..hlo.ir import HloModule
from ..hlo.syntax import parse_hlo
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


def simulate(module: HloModule) -> Simulation:
    text, kernels = emit_module(module)
    fused = parse_hlo(text, f"{module.name} (fused by hloidx's simulation)", verify=False)
    return Simulation(fused, text, tuple(kernels), SIMULATED)
