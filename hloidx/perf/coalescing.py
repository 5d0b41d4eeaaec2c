"""Each operand's coalescing from the thread-id maps of its kernel (hloidx's GPU view), judged
once per distinct (maps, operand shape): a fusion with hundreds of operands usually reads most
of them through a handful of distinct maps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..caches import memo
from ..errors import HloidxError
from ..gpu.analysis import launched_choice
from ..gpu.coalescing import Figures, is_coalesced, measure
from ..gpu.thread_maps import thread_maps, to_physical
from ..hlo.element_types import element_bytes

if TYPE_CHECKING:
    from ..gpu.devices import DeviceProfile
    from ..gpu.emitters import EmitterChoice
    from ..gpu.launch import LaunchConfig
    from ..hlo.ir import Instruction, Shape
    from ..maps.indexing_map import IndexingMap


@dataclass(frozen=True)
class OperandVerdict:
    coalesced: bool
    #: "thread maps", "scalar", "never read" or "heuristic" (no thread maps for the emitter)
    method: str
    reason: str
    figures: Figures | None = None


def operand_verdicts(
    fusion: Instruction,
    choice: EmitterChoice,
    launch: LaunchConfig | None,
    device: DeviceProfile,
) -> list[OperandVerdict | None]:
    """The verdict of each operand of ``fusion`` (None: its emitter's threads are not
    modelled, so XLA's heuristic stands)."""
    if launch is None:
        return [None] * len(fusion.operands)
    try:
        threads = thread_maps(fusion, launched_choice(choice, launch), launch)
    except HloidxError:
        return [None] * len(fusion.operands)  # no thread maps: XLA's heuristic stands
    out: list[OperandVerdict | None] = []
    for k, operand in enumerate(fusion.operands):
        reads = threads.operands[k] if k < len(threads.operands) else []
        maps = tuple(m for r in reads for m in r.maps)
        out.append(_verdict(maps, operand.shape, device))
    return out


@memo(4096)
def _verdict(maps: tuple[IndexingMap, ...], shape: Shape, device: DeviceProfile) -> OperandVerdict:
    if shape.is_array and shape.rank == 0:
        return OperandVerdict(True, "scalar", "a scalar")
    if not maps:
        return OperandVerdict(True, "never read", "not read")
    nbytes = element_bytes(shape.element_type) if shape.is_array else 1
    physical = [to_physical(m, shape) if shape.is_array else m for m in maps]
    coalesced, reason = True, ""
    for m in physical:
        verdict = is_coalesced(m, nbytes)
        coalesced, reason = verdict.coalesced, verdict.reason
        if not coalesced:
            break
    return OperandVerdict(coalesced, "thread maps", reason, measure(physical, nbytes, device))
