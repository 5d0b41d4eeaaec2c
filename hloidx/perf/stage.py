"""Which stage of XLA's pipeline a module is at, and what that means for its estimate
(issue 36): a module before optimization has no fusions and no schedule (every op is costed
as a kernel of its own, which XLA would fuse); a module before SPMD partitioning has
``num_partitions > 1`` with ``sharding=`` annotations and no collectives yet (its shapes are
global, not what one device runs)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hlo.ir import HloModule

_COLLECTIVE_PREFIXES = ("all-", "reduce-scatter", "collective-", "ragged-all-to-all")
#: a tile assignment: ``devices=[4,1]<=[4]`` (iota form) or ``devices=[2,2]0,1,2,3``
_TILES = re.compile(r"devices=\[([\d,]+)\](?:<=\[([\d,]+)\]|([\d,]+))")


def sharding_devices(sharding: str) -> int:
    """How many devices a ``sharding=`` annotation's tile assignments name (1 if none)."""
    most = 1
    for match in _TILES.finditer(sharding):
        if match.group(2):
            count = 1
            for d in match.group(2).split(","):
                count *= int(d)
        else:
            count = len(match.group(3).strip(",").split(","))
        most = max(most, count)
    return most


@dataclass(frozen=True)
class Stage:
    scheduled: bool
    optimized: bool
    partitioned: bool
    num_partitions: int
    #: where the partition count comes from (the header, or the annotations' tile assignments)
    mesh: str = ""
    #: what hloidx simulated of XLA's passes before costing (None: costed as written)
    simulated: str | None = None

    def simulated_as(self, what: str) -> Stage:
        return replace(self, simulated=what)

    @property
    def name(self) -> str:
        if self.simulated:
            return "before optimization, compiled by hloidx's simulation of XLA:GPU (not by XLA)"
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
        if self.simulated:
            return [
                "simulated by hloidx, not compiled by XLA: " + self.simulated,
                f"mesh: {self.mesh}" if self.mesh else "mesh: one device (no sharding annotations)",
                "the kernels are hloidx's prediction of XLA's; costed as an optimized module",
            ]
        if not self.optimized:
            out.append(
                "before optimization (no fusions): every op is estimated as a kernel of its "
                "own, as written; XLA would fuse most of them, so the estimate is high"
            )
        if not self.partitioned:
            out.append(
                f"before SPMD partitioning ({self.num_partitions} partitions, {self.mesh}, "
                "no collectives): shapes are global, not per device, and the "
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
            "mesh": self.mesh,
            "simulated": self.simulated,
            "order": self.order,
            "meaning": self.meanings,
        }


def module_stage(module: HloModule) -> Stage:
    scheduled = module.attributes.get("is_scheduled", "").lower() == "true"
    header = module.attributes.get("num_partitions")
    try:
        partitions = int(header) if header is not None else 0
    except ValueError:
        partitions = 0
    devices = 1
    fused = collectives = sharded = False
    for comp in module.computations.values():
        for instr in comp.instructions:
            op = instr.opcode
            if op == "fusion":
                fused = True
            elif op.startswith(_COLLECTIVE_PREFIXES) or op == "async-start":
                collectives = True
            annotation = instr.attributes.get("sharding")
            if annotation is not None:
                sharded = True
                if "devices=" in annotation:
                    devices = max(devices, sharding_devices(annotation))
    if partitions:
        mesh = f"num_partitions={partitions} in the header"
    elif devices > 1:
        partitions = devices
        mesh = f"{devices} devices named by the sharding annotations' tile assignments"
    else:
        partitions = 1
        mesh = ""
    if sharded and partitions > 1 and not mesh.startswith("num"):
        mesh += "; no num_partitions in the header"
    partitioned = not (partitions > 1 and sharded and not collectives)
    return Stage(scheduled, fused or scheduled, partitioned, partitions, mesh)
