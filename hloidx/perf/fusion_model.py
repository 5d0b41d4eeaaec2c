"""One fusion's estimate by XLA's indexing performance model (``EstimateRunTimeForFusion``) and
by hloidx's refinement of it.

``xla``: from each fusion root, the distinct output-to-input maps of every instruction; an
instruction inside the fusion costs its flops per element times each map's iteration-space
size; an operand of the fusion is read ``element bytes × iteration-space size`` bytes per map,
of which ``min(operand size, that)`` come from DRAM, at the bandwidth XLA's coalescing
heuristic leaves (a transpose of the minor dimension outside the transpose emitter makes every
read of the fusion uncoalesced). ``hloidx``: the same, except that each operand's bytes are
counted from the elements its maps really read (constrained iterations, distinct elements:
``hloidx.maps.utilization``) and its coalescing from the first warp's transactions of its
thread-id maps (``hloidx.gpu``), where hloidx models the emitter's threads.
"""

from __future__ import annotations

from math import ceil, prod
from typing import TYPE_CHECKING

from ..gpu.analysis import read_coalesced_heuristic
from ..gpu.emitters import choose_emitter
from ..gpu.launch import compute_launch
from ..hlo.element_types import element_bytes
from ..hlo.fusion import body_of, computation_outputs, grouped_output_to_input
from ..maps.utilization import utilization
from .coalescing import operand_verdicts
from .costs import KernelCost, OperandCost
from .flops import flops_per_element
from .model import (
    coalescing_utilization_rate,
    combine_ns,
    compute_time_ns,
    read_time_ns,
    write_time_ns,
)

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape
    from ..maps.indexing_map import IndexingMap
    from .devices import CostDevice

#: XLA's fallback launch when no emitter gives one: one thread per output element, 128 a block
FALLBACK_THREADS = 128


def shape_bytes(shape: Shape) -> int:
    if shape.is_tuple:
        return sum(shape_bytes(s) for s in shape.leaves())
    return shape.num_elements() * element_bytes(shape.element_type)


def _element_bytes(shape: Shape) -> int:
    leaves = shape.leaves() if shape.is_tuple else [shape]
    return element_bytes(leaves[0].element_type) if leaves else 4


def iteration_space(m: IndexingMap, shape: Shape) -> int:
    """XLA's ``GetIterationSpaceSize``: the box of dims × symbols (runtime ones included)."""
    if m.is_undefined:
        return (
            sum(s.num_elements() for s in shape.leaves())
            if shape.is_tuple
            else shape.num_elements()
        )
    if m.is_known_empty:
        return 0
    variables = (*m.dim_vars, *m.range_vars, *m.rt_vars)
    return prod(v.bounds.upper - v.bounds.lower + 1 for v in variables)


def grouped_maps(fusion: Instruction) -> dict[Instruction, list[IndexingMap]]:
    """Every instruction of the fused computation, and every fusion operand (keyed by the
    operand outside), with the distinct maps from the fusion's roots to it."""
    body = body_of(fusion)
    params = {p.parameter_number: p for p in body.parameters}
    outside = {
        id(params[k]): fusion.operands[k]
        for k in params
        if k is not None and k < len(fusion.operands)
    }
    grouped: dict[Instruction, list[IndexingMap]] = {}
    for root in computation_outputs(body):
        for instr, reached in grouped_output_to_input(root).items():
            key = outside.get(id(instr), instr)
            maps = grouped.setdefault(key, [])
            found = [t.map for t in reached.maps]
            if reached.unknown and not found:
                from ..maps.indexing_map import IndexingMap as _Map

                found = [_Map.undefined()]
            for m in found:
                if m not in maps:
                    maps.append(m)
    return grouped


def launch_of(fusion: Instruction, device: CostDevice):
    """(emitter choice, its label, launch config or None, blocks, threads per block)."""
    choice = choose_emitter(fusion)
    launch = compute_launch(fusion, choice, device.launch_profile)
    if launch is None:
        roots = computation_outputs(body_of(fusion))
        shape = roots[0].shape if roots else fusion.shape
        n = (
            sum(s.num_elements() for s in shape.leaves())
            if shape.is_tuple
            else shape.num_elements()
        )
        label = choice.label
        return choice, label, None, max(1, ceil(n / FALLBACK_THREADS)), FALLBACK_THREADS
    label = choice.kind if choice.kind == "dynamic-update-slice" else choice.label
    if launch.reduction is not None:
        label = f"reduction ({launch.reduction.detail})"
    return choice, label, launch, prod(launch.blocks), prod(launch.threads_per_block)


def estimate_fusion(fusion: Instruction, device: CostDevice, model: str = "xla") -> KernelCost:
    """The estimate of one fusion (or one-op fusion) by ``model`` (``xla`` or ``hloidx``)."""
    choice, emitter, launch, blocks, threads = launch_of(fusion, device)
    modelled = launch is not None
    body = body_of(fusion)
    grouped = grouped_maps(fusion)
    operands_outside = set(map(id, fusion.operands))
    profile = device.compute_capability
    xla_coalesced = read_coalesced_heuristic(choice.kind, fusion)
    view = (
        operand_verdicts(fusion, choice, launch, device.launch_profile)
        if model == "hloidx"
        else None
    )
    flops = 0
    heaviest: tuple[int, int] = (0, -1)
    position = {id(i): k for k, i in enumerate(body.instructions)}
    operands: list[OperandCost] = []
    notes: list[str] = []
    if not modelled:
        notes.append(
            f"launch: XLA's fallback (one thread per output element, {FALLBACK_THREADS} per "
            f"block): hloidx does not model the {emitter} emitter"
        )
    for instr, maps in grouped.items():
        if id(instr) not in operands_outside:
            if instr.opcode != "parameter":
                per = flops_per_element(instr, profile)
                these = sum(per * iteration_space(m, instr.shape) for m in maps)
                flops += these
                heaviest = max(heaviest, (these, position.get(id(instr), -1)))
            continue
        index = next(k for k, o in enumerate(fusion.operands) if o is instr)
        operands.append(_operand(instr, index, maps, blocks, device, xla_coalesced, view, fusion))
    operands.sort(key=lambda o: o.index)
    roots = computation_outputs(body)
    bytes_written = sum(shape_bytes(r.shape) for r in roots) if roots else shape_bytes(fusion.shape)
    read_ns = sum(o.read_time_ns for o in operands)
    write_ns = write_time_ns(device, bytes_written)
    compute_ns = compute_time_ns(device, flops, blocks, threads)
    exec_ns = combine_ns(compute_ns, read_ns + write_ns)
    if len(roots) > 1:
        notes.append(
            "several outputs: XLA's indexing model takes one root; hloidx sums the maps of "
            "every root and writes every output"
        )
    return KernelCost(
        name=fusion.name,
        opcode="fusion",
        kind=(fusion.fusion_kind or ""),
        emitter=emitter,
        blocks=blocks,
        threads_per_block=threads,
        flops=flops,
        bytes_read=sum(o.bytes_read for o in operands),
        bytes_written=bytes_written,
        read_time_ns=read_ns,
        write_time_ns=write_ns,
        compute_time_ns=compute_ns,
        exec_time_ns=exec_ns,
        operands=operands,
        notes=notes,
        heaviest_index=heaviest[1],
    )


def _operand(
    instr: Instruction,
    index: int,
    maps: list[IndexingMap],
    blocks: int,
    device: CostDevice,
    xla_coalesced: bool,
    view,
    fusion: Instruction,
) -> OperandCost:
    shape = instr.shape
    eb = _element_bytes(shape)
    size = shape_bytes(shape)
    xla_total = sum(eb * iteration_space(m, shape) for m in maps)
    xla_net = min(size, xla_total)
    if view is None:
        rate = coalescing_utilization_rate(eb, device, xla_coalesced)
        time = read_time_ns(device, blocks, xla_net, xla_total, rate)
        how = "XLA's heuristic" + ("" if xla_coalesced else ": a transpose of the minor dimension")
        return OperandCost(
            index, instr.name, xla_total, xla_net, xla_coalesced, time, rate, how, size
        )
    total, net, counted = xla_total, xla_net, "iteration space (a map hloidx cannot count)"
    if shape.is_array and all(not m.is_undefined for m in maps):
        u = utilization(maps, shape.dims)
        if u is not None and not u.is_unknown and u.distinct is not None and u.reads is not None:
            total = round(u.reads * size)
            net = min(size, round(u.distinct * size))
            counted = f"elements the maps read ({u.kind})"
            if u.kind != "exact":
                # runtime offsets (a gather's rows) pick different elements per value: which
                # are distinct is not known, so at most the operand, as XLA counts it
                net = min(size, total)
                counted += "; distinct bytes bounded as XLA bounds them (runtime offsets)"
            total = max(net, total)
    coalesced, rate, how = (
        xla_coalesced,
        coalescing_utilization_rate(eb, device, xla_coalesced),
        ("XLA's heuristic (hloidx does not model this emitter's threads)"),
    )
    warp = None
    seen = view[index] if index < len(view) else None
    if seen is not None and seen.method in ("thread maps", "scalar", "never read"):
        coalesced = seen.coalesced
        figures = seen.figures
        if figures is not None and figures.transactions:
            rate = min(1.0, figures.ideal_transactions / figures.transactions)
            warp = (figures.transactions, figures.ideal_transactions)
            how = (
                f"thread maps: the first warp touches {figures.transactions} transaction(s) "
                f"where {figures.ideal_transactions} would do"
            )
        else:
            rate = coalescing_utilization_rate(eb, device, coalesced)
            how = f"thread maps: {seen.reason}"
    time = read_time_ns(device, blocks, net, total, rate)
    out = OperandCost(index, instr.name, total, net, coalesced, time, rate, how, size, counted)
    out.warp_transactions = warp
    out.xla_bytes_read = xla_total
    out.xla_coalesced = xla_coalesced
    return out
