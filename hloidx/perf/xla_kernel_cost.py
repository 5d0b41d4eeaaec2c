"""A kernel's row of ``--model xla`` by XLA's classic ``GpuPerformanceModel``: its run-time data
as a :class:`~hloidx.perf.costs.KernelCost`, with XLA's counting quirks named where the default
model counts otherwise."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from ..caches import register
from ..hlo.fusion import body_of
from .costs import KernelCost, OperandCost
from .xla_performance_model import ClassicModel

if TYPE_CHECKING:
    from ..hlo.ir import HloModule, Instruction
    from .devices import CostDevice

TIMED_CLASSIC = "XLA's GpuPerformanceModel (classic)"
TIMED_INDEXING = "XLA's indexing model (Triton)"

#: one model (and cost analysis) per module and device, dropped with the module
_MODELS: weakref.WeakKeyDictionary[HloModule, dict[str, ClassicModel]] = weakref.WeakKeyDictionary()
register(_MODELS.clear)


def classic_model(instr: Instruction, device: CostDevice) -> ClassicModel:
    comp = instr.computation
    module = comp.module if comp is not None else None
    if module is None:
        return ClassicModel(device)
    per_device = _MODELS.setdefault(module, {})
    found = per_device.get(device.name)
    if found is None or found.device != device:
        found = per_device[device.name] = ClassicModel(device)
    return found


def quirks(instr: Instruction) -> list[str]:
    """XLA's counting quirks that apply to ``instr``: where XLA counts bytes the kernel does not
    move (the default model counts what the kernel moves)."""
    if instr.opcode == "dynamic-update-slice":
        return []
    if instr.opcode != "fusion":
        return []
    body = body_of(instr)
    root = body.root
    if root is None:
        return []
    out = []
    roots = root.operands if root.opcode == "tuple" else [root]
    if any(
        r.opcode == "bitcast" and r.operands and r.operands[0].opcode == "dynamic-update-slice"
        for r in roots
    ):
        out.append(
            "XLA's quirk: a bitcast(dynamic-update-slice) root is counted as reading and writing "
            "the whole buffer, though the kernel updates it in place (XLA's cost analysis sees "
            "an in-place update only when the dynamic-update-slice itself is the root)"
        )
    custom = (instr.fusion_kind or "").lower() in ("kcustom", "custom")
    held = {i.opcode for i in body.instructions}
    if custom and held & {"gather", "scatter"}:
        out.append(
            "XLA's quirk: a custom fusion holding a gather or scatter is costed as that op "
            "alone, its operand counts taken as the fusion's"
        )
    elif "scatter" in held:
        out.append(
            "XLA's quirk: a scatter fusion is counted as reading and writing its whole operand "
            "(the fused scatter leaves the operand at full utilization), though the kernel "
            "updates only the rows its updates reach"
        )
    return out


def _heaviest_index(model: ClassicModel, instr: Instruction) -> int:
    if instr.opcode != "fusion":
        return len(instr.operands)
    props = model.analysis.properties
    best, index = 0.0, -1
    for k, i in enumerate(body_of(instr).instructions):
        p = props.get(id(i))
        if p is None or i.opcode == "parameter":
            continue
        flops = p["flops"] * p["utilization"]
        if flops > best:
            best, index = flops, k
    return index


def classic_kernel_cost(instr: Instruction, device: CostDevice) -> KernelCost:
    """``instr`` (a fusion or an unfused op) by XLA's classic model."""
    model = classic_model(instr, device)
    data = model.instruction(instr)
    launch = data.launch
    assert launch is not None
    how = "XLA's heuristic" + (
        "" if all(r.coalesced for r in data.operands) else ": a transpose of the minor dimension"
    )
    operands = [
        OperandCost(
            r.index,
            r.name,
            r.bytes_total,
            r.bytes_net,
            r.coalesced,
            r.read_ns,
            r.utilization_rate,
            how,
            r.size,
            "as XLA's GpuHloCostAnalysis counts them (operand_bytes_accessed)",
        )
        for r in data.operands
    ]
    notes = [f"timed by {TIMED_CLASSIC} over GpuHloCostAnalysis", *quirks(instr)]
    if instr.opcode == "fusion" and (instr.fusion_kind or "").lower() in ("kcustom", "custom"):
        notes.append(
            "a custom fusion: XLA's SoL latency estimator times only loop and input fusions "
            "with this model (it gives other kernels a nominal cost); the classic model's "
            "figures are shown"
        )
    if not launch.modelled and launch.emitter == "scatter":
        notes.append(
            "launch: over the updates, one element a thread (XLA's scatter emitter with "
            "distributed updates); hloidx does not model this scatter's emitter in detail"
        )
    elif not launch.modelled:
        notes.append(
            "launch: XLA's fallback (one thread per output element, 128 per block): hloidx "
            f"does not model the {launch.label} emitter"
        )
    return KernelCost(
        name=instr.name,
        opcode=instr.opcode,
        kind=(instr.fusion_kind or "") if instr.opcode == "fusion" else "",
        emitter=launch.label,
        blocks=launch.blocks,
        threads_per_block=launch.threads_per_block,
        flops=data.flops,
        bytes_read=data.bytes_read,
        bytes_written=data.bytes_written,
        read_time_ns=data.read_ns,
        write_time_ns=data.write_ns,
        compute_time_ns=data.compute_ns,
        exec_time_ns=data.exec_ns,
        operands=operands,
        notes=notes,
        heaviest_index=_heaviest_index(model, instr),
        timed_by=TIMED_CLASSIC,
    )
