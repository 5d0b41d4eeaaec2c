"""Kernels whose internals hloidx does not model: library calls (cuBLAS, cuDNN custom calls,
unfused dots and convolutions, GEMM fusions) and XLA's own sort, FFT and RNG kernels.

Their estimate is a roofline, labelled as such: every operand read once and the output written
once at the DRAM bandwidth, the flops XLA's cost analysis counts run on every SM's FPUs, 95%
overlap. Tensor cores, tiling and workspace traffic are not modelled.

A GEMM (a dot, a cuBLAS / cuBLASLt custom call, a Triton GEMM fusion) on a device XLA has
measured (``sm_90``, ``sm_100``) takes instead the time of XLA's measured GEMM tables
(:mod:`.matmul_table`), as XLA's latency estimator does. ``hloidx``: a fused attention call
(cuDNN, TransformerEngine) is the roofline of its GEMMs' flops (:mod:`.attention_cost`) at the
measured matrix-unit rate.
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING

from ..hlo.fusion import body_of, computation_outputs
from .attention_cost import attention_work
from .backend_config import fusion_kind_of, is_dynamic_slice_fusion, read_backend_config
from .costs import KernelCost, OperandCost
from .flops import FMA_FLOPS, convolution_flops, flop_count
from .fusion_model import estimate_fusion, shape_bytes
from .matmul_table import has_table
from .model import combine_ns, compute_time_ns, write_time_ns
from .sort_kernel import estimate_sort, rewritten_to_cub
from .step_costs import gemm_time_ns, matrix_unit, matrix_unit_time_ns

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .devices import CostDevice


def _gemm_flops(instr: Instruction) -> int | None:
    config = read_backend_config(instr).value
    gemm = config.get("gemm_backend_config")
    if not gemm or len(instr.operands) < 2:
        return None
    dnums = gemm.get("dot_dimension_numbers", {})
    lhs = instr.operands[0].shape
    width = prod(lhs.dims[int(d)] for d in dnums.get("lhs_contracting_dimensions", []))
    out = instr.shape.leaves()[0] if instr.shape.is_tuple else instr.shape
    return FMA_FLOPS * out.num_elements() * width


def library_flops(instr: Instruction, profile: str) -> tuple[int, str]:
    """The flops of a library kernel and how they were counted."""
    target = instr.attributes.get("custom_call_target", "").strip('"')
    if instr.opcode == "custom-call":
        gemm = _gemm_flops(instr)
        if gemm is not None:
            return gemm, f"{target}: 2 flops per multiply-add of the GEMM"
        if "conv" in target.lower():
            return convolution_flops(
                instr
            ), f"{target}: 2 flops per multiply-add of the convolution"
        return 0, f"{target}: a custom call whose flops are unknown (counted as 0)"
    if instr.opcode == "fusion":
        return flop_count(instr, profile), "the fused computation's flops (XLA's cost analysis)"
    return flop_count(instr, profile), f"{instr.opcode}: XLA's cost analysis"


def estimate_library(instr: Instruction, device: CostDevice, model: str = "hloidx") -> KernelCost:
    """The roofline (or GEMM table time) of a library kernel. ``hloidx``: a
    ``DynamicSliceFusion`` is its library call on the slices."""
    kind = fusion_kind_of(instr) if instr.opcode == "fusion" else ""
    if instr.opcode == "fusion" and is_dynamic_slice_fusion(instr):
        if model == "xla":  # XLA's indexing model estimates it as any fusion
            return estimate_fusion(instr, device, model)
        found = estimate_dynamic_slice_fusion(instr, device, model)
        if found is not None:
            return found
    if instr.opcode == "sort" and model != "xla" and instr.operands:
        if not rewritten_to_cub(instr):
            return estimate_sort(instr, device)
        cost = _estimate_library(instr, device, model)
        cost.notes.append("XLA:GPU's SortRewriter makes it a CUB radix sort (out of place)")
        return cost
    if model == "xla" and kind in ("__ynn_fusion", "__onednn_fusion"):
        return estimate_fusion(instr, device, model)
    cost = _estimate_library(instr, device, model)
    if kind in ("__ynn_fusion", "__onednn_fusion"):
        cost.emitter = f"library ({kind.strip('_')}, XLA:CPU)"
        cost.notes.append("the library runs the fused computation once: each operand read once")
    return cost


#: ops a DynamicSliceFusion computes its library call's addresses with
_ADDRESSING = frozenset({"dynamic-slice", "slice", "bitcast", "get-tuple-element", "tuple"})


def estimate_dynamic_slice_fusion(
    fusion: Instruction, device: CostDevice, model: str
) -> KernelCost | None:
    """XLA's ``DynamicSliceFusion``: the library call runs on the slices (its GEMM table time
    when it is a GEMM), reading only the slices of the sliced operands and writing its result
    (into a dynamic-update-slice's buffer in place, when the root is one)."""
    body = body_of(fusion)
    calls = [
        i
        for i in body.instructions
        if i.opcode not in _ADDRESSING
        and i.opcode not in ("parameter", "constant", "dynamic-update-slice")
        and i.shape.num_elements() > 0
    ]
    if len(calls) != 1 or calls[0].opcode not in ("custom-call", "dot", "convolution"):
        return None
    call = calls[0]
    cost = _estimate_library(call, device, model)
    written = cost.bytes_written
    roots = [_through(r) for r in computation_outputs(body)]
    updates = [r for r in roots if r.opcode == "dynamic-update-slice"]
    in_place = {id(_through(u.operands[0])) for u in updates}
    if updates:
        written = sum(shape_bytes(u.operands[1].shape) for u in updates)
    operands = []
    for param in body.parameters:
        k = param.parameter_number or 0
        if k >= len(fusion.operands):
            continue
        slices = [
            u
            for u in _users(body, param)
            if u.opcode in ("dynamic-slice", "slice") and _through(u.operands[0]) is param
        ]
        if id(param) in in_place and not slices:
            size, how = 0, "updated in place by the root's dynamic-update-slice: not read"
        elif slices:
            size, how = sum(shape_bytes(u.shape) for u in slices), "its slices read once"
        else:
            size, how = shape_bytes(param.shape), "read once (roofline)"
        time = size / device.memory_bandwidth * 1e9
        full = shape_bytes(fusion.operands[k].shape)
        operands.append(
            OperandCost(k, fusion.operands[k].name, size, size, True, time, 1.0, how, full, how)
        )
    read_ns = sum(o.read_time_ns for o in operands)
    write_ns = write_time_ns(device, written)
    if "measured GEMM table" not in cost.emitter:
        cost.exec_time_ns = combine_ns(cost.compute_time_ns, read_ns + write_ns)
    cost.operands, cost.read_time_ns, cost.write_time_ns = operands, read_ns, write_ns
    cost.bytes_read, cost.bytes_written = sum(o.bytes_read for o in operands), written
    cost.name, cost.opcode = fusion.name, "fusion"
    cost.emitter = f"{cost.emitter} (XLA's DynamicSliceFusion)"
    cost.notes.append(
        f"a dynamic-slice fusion: {call.opcode} {call.name} runs on the slices (addresses "
        "computed at run time), only the slices are read"
    )
    return cost


def _through(instr: Instruction) -> Instruction:
    while instr.opcode in ("bitcast", "get-tuple-element", "tuple") and len(instr.operands) == 1:
        instr = instr.operands[0]
    return instr


def _users(body, instr: Instruction) -> list[Instruction]:
    """Users of ``instr`` in ``body``, looking through bitcasts."""
    found = []
    for user in body.instructions:
        if instr in user.operands:
            if user.opcode == "bitcast":
                found.extend(_users(body, user))
            else:
                found.append(user)
    return found


def _estimate_library(instr: Instruction, device: CostDevice, model: str) -> KernelCost:
    flops, how = library_flops(instr, device.compute_capability)
    operands = []
    for k, operand in enumerate(instr.operands):
        size = shape_bytes(operand.shape)
        time = size / device.memory_bandwidth * 1e9
        operands.append(
            OperandCost(k, operand.name, size, size, True, time, 1.0, "read once (roofline)", size)
        )
    out = instr.shape
    written = shape_bytes(out.leaves()[0] if out.is_tuple and out.leaves() else out)
    read_ns = sum(o.read_time_ns for o in operands)
    write_ns = write_time_ns(device, written)
    threads = device.fpus_per_core
    compute_ns = compute_time_ns(device, flops, device.core_count, threads)
    target = instr.attributes.get("custom_call_target", "").strip('"')
    cost = KernelCost(
        name=instr.name,
        opcode=instr.opcode,
        kind="library",
        emitter=f"library ({target})" if target else f"library ({instr.opcode})",
        blocks=device.core_count,
        threads_per_block=threads,
        flops=flops,
        bytes_read=sum(o.bytes_read for o in operands),
        bytes_written=written,
        read_time_ns=read_ns,
        write_time_ns=write_ns,
        compute_time_ns=compute_ns,
        exec_time_ns=combine_ns(compute_ns, read_ns + write_ns),
        operands=operands,
    )
    if model != "xla":
        attention = _attention_cost(cost, instr, device)
        if attention is not None:
            return attention
    gemm = gemm_time_ns(instr, None, device, model)
    if gemm is not None:
        time_ns, gemm_how = gemm
        measured = has_table(device.compute_capability)
        cost.compute_time_ns = time_ns
        # XLA's table time is the whole kernel's; a roofline still waits for its bytes
        cost.exec_time_ns = time_ns if measured else combine_ns(time_ns, read_ns + write_ns)
        source = (
            f"XLA's measured GEMM table ({device.compute_capability})"
            if measured
            else f"{matrix_unit(device.name)} roofline (datasheet peak)"
            if model == "xla"
            else f"{matrix_unit(device.name)} roofline (measured share of the datasheet peak)"
        )
        cost.emitter = f"{cost.emitter}: {source}"
        if measured:
            cost.notes.append(
                f"{gemm_how}; interpolated from XLA's measurements (MatmulInterpolator); the "
                "bytes shown are the FP32 roofline's, not part of the time"
            )
        else:
            cost.notes.append(f"{gemm_how}; bytes at the DRAM bandwidth, 95% overlapped")
        return cost
    cost.notes.append(
        "a roofline, not XLA's model: the kernel's internals (tensor cores, tiling, "
        f"workspace) are not modelled; launch shown as one block per SM; flops: {how}"
    )
    return cost


def _attention_cost(cost: KernelCost, instr: Instruction, device: CostDevice) -> KernelCost | None:
    """``hloidx``: a fused attention call's GEMM flops at the measured matrix-unit rate, every
    operand read and every result written once (XLA counts no flops for a custom call)."""
    work = attention_work(instr)
    if work is None:
        return None
    dtype = instr.operands[0].shape.element_type if instr.operands else "bf16"
    timed = matrix_unit_time_ns(device, work.flops, dtype)
    if timed is None:
        return None
    time_ns, how = timed
    leaves = instr.shape.leaves() if instr.shape.is_tuple else [instr.shape]
    if len(leaves) > 1 and leaves[-1].element_type == "u8":
        leaves = leaves[:-1]  # the workspace: scratch, not a result
    cost.bytes_written = sum(shape_bytes(s) for s in leaves)
    cost.write_time_ns = write_time_ns(device, cost.bytes_written)
    cost.flops, cost.compute_time_ns = work.flops, time_ns
    cost.exec_time_ns = combine_ns(time_ns, cost.read_time_ns + cost.write_time_ns)
    cost.emitter = f"{cost.emitter}: {matrix_unit(device.name)} roofline of its GEMMs"
    cost.notes.append(f"{work.describe()}: {work.flops} flops; {how}")
    return cost
