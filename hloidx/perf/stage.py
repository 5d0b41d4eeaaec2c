"""Which stage of XLA's pipeline a module is at, and what that means for its estimate
(issue 36): a module before optimization has no fusions and no schedule (every op is costed
as a kernel of its own, which XLA would fuse); a module before SPMD partitioning has
``num_partitions > 1`` with ``sharding=`` annotations and no collectives yet (its shapes are
global, not what one device runs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hlo.ir import HloModule

_COLLECTIVE_PREFIXES = ("all-", "reduce-scatter", "collective-", "ragged-all-to-all")


@dataclass(frozen=True)
class Stage:
    scheduled: bool
    optimized: bool
    partitioned: bool
    num_partitions: int

    @property
    def name(self) -> str:
        if not self.partitioned:
            return "before SPMD partitioning"
        if not self.optimized:
            return "before optimization"
        return "optimized"

    @property
    def order(self) -> str:
        if self.scheduled:
            return "the text's order is XLA's schedule (is_scheduled=true)"
        return "not scheduled: the text's order is taken as the order kernels run"

    @property
    def meanings(self) -> list[str]:
        out = []
        if not self.optimized:
            out.append(
                "before optimization (no fusions): every op is estimated as a kernel of its "
                "own, as written; XLA would fuse most of them, so the estimate is high"
            )
        if not self.partitioned:
            out.append(
                f"before SPMD partitioning ({self.num_partitions} partitions, sharding "
                "annotations, no collectives): shapes are global, not per device, and the "
                "communication the partitioner will add is missing"
            )
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "scheduled": self.scheduled,
            "optimized": self.optimized,
            "spmd_partitioned": self.partitioned,
            "num_partitions": self.num_partitions,
            "order": self.order,
            "meaning": self.meanings,
        }


def module_stage(module: HloModule) -> Stage:
    scheduled = module.attributes.get("is_scheduled", "").lower() == "true"
    try:
        partitions = int(module.attributes.get("num_partitions", "1"))
    except ValueError:
        partitions = 1
    fused = collectives = sharded = False
    for comp in module.computations.values():
        for instr in comp.instructions:
            op = instr.opcode
            if op == "fusion":
                fused = True
            elif op.startswith(_COLLECTIVE_PREFIXES) or op == "async-start":
                collectives = True
            if not sharded and "sharding" in instr.attributes:
                sharded = True
    partitioned = not (partitions > 1 and sharded and not collectives)
    return Stage(scheduled, fused or scheduled, partitioned, partitions)
