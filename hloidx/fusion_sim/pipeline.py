"""The simulation's entry point and its result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..hlo.ir import HloModule
from ..hlo.syntax import parse_hlo
from ..perf.stage import module_stage
from .emit import SimulatedKernel, emit_module

SIMULATED = (
    "calls inlined; dots as cuBLAS calls (bias and scaling epilogues folded); PriorityFusion "
    "(producers fused into all consumers or none) and sibling multi-output fusion"
)
ASYNC = (
    "; the partitioner's collectives combined (XLA:GPU's default 30 MiB thresholds) and "
    "asynchronous, each start as soon as its operands are computed and each done only when "
    "nothing else can run"
)


@dataclass(frozen=True)
class Simulation:
    """The fused module, its text, and each simulated kernel with what it holds."""

    module: HloModule
    text: str
    kernels: tuple[SimulatedKernel, ...]
    simulated: str
    devices: int


def simulate(
    module: HloModule,
    partition: bool = True,
    multi_output: bool = True,
    asynchronous: bool = True,
) -> Simulation:
    """The module XLA:GPU would run; per device when ``partition`` and the module carries
    sharding annotations for more than one device; ``multi_output=False`` stops after
    PriorityFusion (what XLA's ``priority_fusion_test.cc`` checks); ``asynchronous=False``
    leaves the partitioner's collectives uncombined and synchronous."""
    stage = module_stage(module)
    devices = stage.num_partitions if partition and not stage.partitioned else 1
    text, kernels = emit_module(module, devices, multi_output, asynchronous)
    fused = parse_hlo(text, f"{module.name} (fused by hloidx's simulation)", verify=False)
    what = SIMULATED
    if devices > 1:
        what = (
            f"SPMD partitioning over {devices} devices (per-device shapes from the sharding "
            "annotations, the partitioner's collectives added); " + SIMULATED
        )
        if asynchronous:
            what += ASYNC
    return Simulation(fused, text, tuple(kernels), what, devices)


def needs_simulation(module: HloModule) -> bool:
    """A module before optimization (no fusions, not scheduled): what ``cost`` simulates."""
    return not module_stage(module).optimized


def estimate_simulated(
    module: HloModule, device: Any = "rtx-a6000", model: str = "hloidx", **options: Any
) -> Any:
    """The cost report of the module XLA:GPU would run (:func:`simulate`), its stage saying
    what was simulated; ``options`` go to :func:`hloidx.perf.estimate_module`."""
    from ..perf.report import estimate_module

    simulation = simulate(module)
    report = estimate_module(simulation.module, device, model, **options)
    stage = module_stage(module)
    report.stage = stage.simulated_as(simulation.simulated)
    report.simulation = simulation
    held = {k.name: k for k in simulation.kernels}
    for cost in report.kernels:
        kernel = held.get(cost.name)
        if kernel is not None:
            names = ", ".join(kernel.holds[:12]) + (", ..." if len(kernel.holds) > 12 else "")
            cost.notes.append(
                f"simulated kernel: holds {len(kernel.holds)} instruction(s) of the module "
                f"before optimization: {names}"
            )
    return report
