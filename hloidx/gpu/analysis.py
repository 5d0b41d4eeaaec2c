"""The GPU view of a module: per fusion, its emitter, launch, thread-id maps and coalescing."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..hlo.element_types import element_bytes
from ..hlo.fusion import body_of
from ..hlo.lone_fusion import lone_fusion_note
from ..hlo.rules.basic import ELEMENTWISE
from ..hlo.rules.shape_ops import minor_to_major
from .coalescing import Figures, Verdict, is_coalesced, measure
from .emitters import EmitterChoice, choose_emitter, emitter_for
from .launch import NO_OVERRIDES, LaunchConfig, Overrides, compute_launch
from .thread_maps import ThreadMaps, thread_maps, to_physical

if TYPE_CHECKING:
    from ..hlo.ir import HloModule, Instruction
    from ..maps.indexing_map import IndexingMap
    from .devices import DeviceProfile

#: ops whose operand may be read through a broadcast without hurting coalescing (XLA's hack
#: in IsReadCoalescedHeuristic: transposes of broadcasts and iotas are allowed)
_BROADCAST_LIKE = ("broadcast", "iota")


@dataclass
class OperandCoalescing:
    index: int
    name: str
    shape: str
    coalesced: bool
    #: "thread maps" (XLA's analysis on hloidx's maps), "heuristic" (the emitter's thread
    #: maps are not modelled), "scalar" or "never read"
    method: str
    reason: str
    figures: Figures | None = None
    physical_maps: list[IndexingMap] = field(default_factory=list)


@dataclass
class FusionGpuView:
    computation: str
    name: str
    fusion: Instruction
    choice: EmitterChoice
    launch: LaunchConfig | None
    threads: ThreadMaps
    operands: list[OperandCoalescing] = field(default_factory=list)
    #: what ``wrap_lone_fusion`` did when the fusion wraps a fused computation found on its own
    wrapped: str | None = None


def _minor_non_unit(shape, dims_order) -> int | None:
    for d in dims_order:
        if shape.dims[d] != 1:
            return d
    return None


def transposes_minor_dimension(instr: Instruction) -> bool:
    """Whether ``instr`` (a transpose or copy) moves the physically minor-most non-unit
    dimension elsewhere."""
    if instr.opcode not in ("transpose", "copy") or not instr.operands:
        return False
    src, out = instr.operands[0].shape, instr.shape
    if not src.is_array or not out.is_array or src.rank != out.rank or src.rank == 0:
        return False
    out_minor = _minor_non_unit(out, minor_to_major(out))
    src_minor = _minor_non_unit(src, minor_to_major(src))
    if out_minor is None or src_minor is None:
        return False
    perm = instr.dimensions if instr.opcode == "transpose" else tuple(range(out.rank))
    return perm[out_minor] != src_minor


def _is_broadcast(instr: Instruction) -> bool:
    while True:
        if instr.opcode in _BROADCAST_LIKE:
            return True
        if len(instr.operands) != 1:
            return False
        if instr.opcode != "bitcast" and instr.opcode not in ELEMENTWISE:
            return False
        instr = instr.operands[0]


def read_coalesced_heuristic(
    emitter_kind: str, producer: Instruction, consumer: Instruction | None = None
) -> bool:
    """XLA's ``IsReadCoalescedHeuristic``: a transpose of the minor dimension (other than of a
    broadcast or iota) breaks coalescing unless the transpose emitter handles it; fusing two
    row reductions breaks it too."""

    def bad_transpose(instr: Instruction) -> bool:
        candidates = body_of(instr).instructions if instr.opcode == "fusion" else [instr]
        return any(
            transposes_minor_dimension(i) and not _is_broadcast(i.operands[0])
            for i in candidates
            if i.opcode in ("transpose", "copy") and i.operands
        )

    transposed = bad_transpose(producer) or (consumer is not None and bad_transpose(consumer))
    if emitter_kind != "transpose" and transposed:
        return False
    if emitter_kind == "reduction" and consumer is not None:
        both = [choose_emitter(x).kind for x in (producer, consumer) if x.opcode == "fusion"]
        if both.count("reduction") == 2:
            return False
    return True


def _operand_verdict(
    view: FusionGpuView, k: int, operand: Instruction, device: DeviceProfile
) -> OperandCoalescing:
    shape = operand.shape
    base = dict(index=k, name=operand.name, shape=str(shape))
    if shape.is_array and shape.rank == 0:
        return OperandCoalescing(**base, coalesced=True, method="scalar", reason="a scalar")
    if view.launch is None:
        ok = read_coalesced_heuristic(view.choice.kind, view.fusion)
        why = (
            f"XLA's heuristic: hloidx does not model the thread maps of the "
            f"{view.choice.label} emitter"
        )
        return OperandCoalescing(**base, coalesced=ok, method="heuristic", reason=why)
    reads = view.threads.operands[k]
    maps = [m for r in reads for m in r.maps]
    if not maps:
        return OperandCoalescing(**base, coalesced=True, method="never read", reason="not read")
    nbytes = element_bytes(shape.element_type) if shape.is_array else 1
    physical = [to_physical(m, shape) if shape.is_array else m for m in maps]
    verdict = Verdict(True, "")
    for m in physical:
        verdict = is_coalesced(m, nbytes)
        if not verdict.coalesced:
            break
    figures = measure(physical, nbytes, device)
    return OperandCoalescing(
        **base,
        coalesced=verdict.coalesced,
        method="thread maps",
        reason=verdict.reason,
        figures=figures,
        physical_maps=physical,
    )


def launched_choice(choice: EmitterChoice, launch: LaunchConfig | None) -> EmitterChoice:
    """``choice`` with the variant its launch settled: which reduction emitter (multi-row,
    small column) and which scatter emitter depend on the device, so only the launch knows."""
    if launch is not None and launch.reduction is not None:
        choice = replace(choice, detail=launch.reduction.detail)
    if launch is not None and launch.scatter is not None:
        choice = replace(choice, detail=launch.scatter.variant)
    return choice


def analyze_fusion(
    fusion: Instruction, device: DeviceProfile, overrides: Overrides = NO_OVERRIDES
) -> FusionGpuView:
    """Emitter, launch, thread-id maps and per-operand coalescing of one fusion."""
    choice = choose_emitter(fusion)
    launch = compute_launch(fusion, choice, device, overrides)
    choice = launched_choice(choice, launch)
    threads = thread_maps(fusion, choice, launch)
    emitter = emitter_for(choice)
    if launch is None and emitter is not None:
        why = emitter.why_not(fusion, choice, device)
        if why:
            threads.notes.append(why)
    wrapped = lone_fusion_note(fusion)
    if wrapped is not None:
        threads.notes.insert(0, wrapped)
    comp = fusion.computation.name if fusion.computation else ""
    view = FusionGpuView(comp, fusion.name, fusion, choice, launch, threads, wrapped=wrapped)
    view.operands = [
        _operand_verdict(view, k, operand, device) for k, operand in enumerate(fusion.operands)
    ]
    return view


def entry_fusions(module: HloModule) -> list[Instruction]:
    entry = module.entry
    if entry is None:
        return []
    return [i for i in entry.instructions if i.opcode == "fusion"]


def analyze_module(
    module: HloModule, device: DeviceProfile, overrides: Overrides = NO_OVERRIDES
) -> list[FusionGpuView]:
    """The GPU view of every fusion of the entry computation."""
    return [analyze_fusion(f, device, overrides) for f in entry_fusions(module)]
