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
from ..gpu.emitter_choice import EmitterChoice
from ..gpu.emitters import choose_emitter
from ..gpu.launch import compute_launch
from ..gpu.launch_config import launch_dimensions
from ..hlo.element_types import element_bytes
from ..hlo.fusion import body_of, computation_outputs, grouped_output_to_input
from ..maps.indexing_map import IndexingMap
from ..maps.utilization import utilization
from .coalescing import operand_verdicts
from .costs import KernelCost, OperandCost
from .flops import flop_count, flops_per_element
from .in_place import InPlaceKernel, dus_fallback_reason, in_place_kernel
from .model import (
    coalescing_utilization_rate,
    combine_ns,
    compute_time_ns,
    read_time_ns,
    write_time_ns,
)

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape
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


def launch_of(fusion: Instruction, device: CostDevice, choice: EmitterChoice | None = None):
    """(emitter choice, its label, launch config or None, blocks, threads per block)."""
    choice = choice or choose_emitter(fusion)
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
    """The estimate of one fusion (or one-op fusion) by ``model`` (``xla`` or ``hloidx``).

    ``hloidx`` runs in-place kernels as XLA:GPU does (:mod:`.in_place`): a dynamic-update-slice
    or scatter launches over its updates and does not read the buffer it updates; a DUS fusion
    XLA cannot emit in place is the loop fusion XLA falls back to."""
    if model == "xla":
        return _estimate(fusion, device, model)
    plan = in_place_kernel(fusion)
    if plan is not None and plan.kind == "memcpy":
        return estimate_memcpy(fusion, plan, device)
    if plan is not None:
        return _estimate(fusion, device, model, plan)
    choice = choose_emitter(fusion)
    if choice.kind == "dynamic-update-slice":
        loop = EmitterChoice("loop", choice.roots[0], choice.roots)
        cost = _estimate(fusion, device, model, choice=loop)
        cost.notes.append(
            f"not in place ({dus_fallback_reason(fusion)}): XLA's loop emitter over the whole "
            "output, reading the base"
        )
        return cost
    return _estimate(fusion, device, model)


def _in_place_maps(
    fusion: Instruction, plan: InPlaceKernel
) -> dict[Instruction, list[IndexingMap]]:
    """What an in-place kernel reads: the maps from its updates and start indices (not from
    its output, whose other elements it leaves where they are)."""
    body = body_of(fusion)
    params = {p.parameter_number: p for p in body.parameters}
    outside = {
        id(params[k]): fusion.operands[k]
        for k in params
        if k is not None and k < len(fusion.operands)
    }
    grouped: dict[Instruction, list[IndexingMap]] = {}
    for start in plan.reads_from:
        for instr, reached in grouped_output_to_input(start).items():
            key = outside.get(id(instr), instr)
            maps = grouped.setdefault(key, [])
            found = [t.map for t in reached.maps]
            if reached.unknown and not found:
                found = [IndexingMap.undefined()]
            for m in found:
                if m not in maps:
                    maps.append(m)
    return grouped


def estimate_memcpy(fusion: Instruction, plan: InPlaceKernel, device: CostDevice) -> KernelCost:
    """XLA's ``DynamicMemcpyFusion``: the slice's bytes read and written at the DRAM
    bandwidth, no kernel of XLA's emitters."""
    size = plan.bytes_written
    read_ns = size / device.memory_bandwidth * 1e9
    write_ns = write_time_ns(device, size)
    operands = []
    source = plan.reads_from[0]
    for k, operand in enumerate(fusion.operands):
        param = next((p for p in body_of(fusion).parameters if p.parameter_number == k), None)
        moved = size if param is not None and param is source else 0
        how = "the slice copied" if moved else "not read (an offset, or the buffer written)"
        operands.append(
            OperandCost(
                k, operand.name, moved, moved, True, read_ns if moved else 0.0, 1.0, how,
                shape_bytes(operand.shape), how,
            )
        )  # fmt: skip
    return KernelCost(
        name=fusion.name,
        opcode="fusion",
        kind=(fusion.fusion_kind or ""),
        emitter=plan.emitter,
        blocks=1,
        threads_per_block=1,
        flops=0,
        bytes_read=size,
        bytes_written=size,
        read_time_ns=read_ns,
        write_time_ns=write_ns,
        compute_time_ns=0.0,
        exec_time_ns=read_ns + write_ns,
        operands=operands,
        notes=[plan.detail + "; launch: a memcpy, not a kernel of XLA's emitters"],
    )


def _estimate(
    fusion: Instruction,
    device: CostDevice,
    model: str,
    plan: InPlaceKernel | None = None,
    choice: EmitterChoice | None = None,
) -> KernelCost:
    choice, emitter, launch, blocks, threads = launch_of(fusion, device, choice)
    notes: list[str] = []
    if plan is not None:
        emitter = plan.emitter
        if launch is None:
            # a scatter XLA would first simplify: its threads walk the updates all the same
            per, grid = launch_dimensions(prod(plan.launch_dims), 1, device.launch_profile)
            blocks, threads = prod(grid), prod(per)
            notes.append(
                "launch: one thread per update element (XLA first rewrites the scatter to its "
                "simplified form; hloidx does not, and takes no vector size)"
            )
    modelled = launch is not None or plan is not None
    body = body_of(fusion)
    grouped = grouped_maps(fusion) if plan is None else _in_place_maps(fusion, plan)
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
    if not modelled:
        notes.append(
            f"launch: XLA's fallback (one thread per output element, {FALLBACK_THREADS} per "
            f"block): hloidx does not model the {emitter} emitter"
        )
    for instr, maps in grouped.items():
        if id(instr) not in operands_outside:
            if instr.opcode != "parameter":
                per = flops_per_element(instr, profile)
                these = sum(per * _elements(m, instr.shape, model) for m in maps)
                flops += these
                heaviest = max(heaviest, (these, position.get(id(instr), -1)))
            continue
        index = next(k for k, o in enumerate(fusion.operands) if o is instr)
        operands.append(_operand(instr, index, maps, blocks, device, xla_coalesced, view, fusion))
    roots = computation_outputs(body)
    bytes_written = sum(shape_bytes(r.shape) for r in roots) if roots else shape_bytes(fusion.shape)
    if plan is not None:
        if plan.combiner is not None:
            flops += flop_count(plan.combiner, profile)
        _add_aliased(operands, fusion, plan, device, blocks)
        bytes_written = plan.bytes_written
        notes.append(plan.detail)
    operands.sort(key=lambda o: o.index)
    read_ns = sum(o.read_time_ns for o in operands)
    write_ns = write_time_ns(device, bytes_written)
    compute_ns = compute_time_ns(device, flops, blocks, threads)
    exec_ns = combine_ns(compute_ns, read_ns + write_ns)
    if len(roots) > 1 and plan is None:
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
    out.xla_over_runtime_values = any(not m.is_undefined and m.rt_vars for m in maps)
    out.xla_coalesced = xla_coalesced
    return out


def _elements(m: IndexingMap, shape: Shape, model: str) -> int:
    """Elements an instruction computes for one map: XLA's iteration space (``xla``), or
    (``hloidx``) its box without the runtime variables, each of which takes one value per
    point (a gather's row index picks one row, it does not compute every row)."""
    if model == "xla" or m.is_undefined or m.is_known_empty or not m.rt_vars:
        return iteration_space(m, shape)
    return prod(v.bounds.upper - v.bounds.lower + 1 for v in (*m.dim_vars, *m.range_vars))


def _add_aliased(
    operands: list[OperandCost],
    fusion: Instruction,
    plan: InPlaceKernel,
    device: CostDevice,
    blocks: int,
) -> None:
    """The buffers an in-place kernel updates: only the elements it combines are read."""
    for index in plan.aliased:
        instr = fusion.operands[index]
        size = shape_bytes(instr.shape)
        existing = next((o for o in operands if o.index == index), None)
        extra = plan.aliased_bytes_read
        if existing is not None:
            existing.counted += "; the buffer is updated in place"
            if not extra:
                continue
            operands.remove(existing)
        rate = 1.0
        time = read_time_ns(device, blocks, extra, extra, rate) if extra else 0.0
        how = (
            "updated in place: only the elements the updates land on are read"
            if extra
            else "updated in place: not read"
        )
        out = OperandCost(index, instr.name, extra, extra, True, time, rate, how, size, how)
        out.xla_bytes_read = None
        operands.append(out)
