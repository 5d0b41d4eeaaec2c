"""Kernels whose internals hloidx does not model: library calls (cuBLAS, cuDNN custom calls,
unfused dots and convolutions, GEMM fusions) and XLA's own sort, FFT and RNG kernels.

Their estimate is a roofline, labelled as such: every operand read once and the output written
once at the DRAM bandwidth, the flops XLA's cost analysis counts run on every SM's FPUs, 95%
overlap. Tensor cores, tiling and workspace traffic are not modelled.

A GEMM (a dot, a cuBLAS / cuBLASLt custom call, a Triton GEMM fusion) on a device XLA has
measured (``sm_90``, ``sm_100``) takes instead the time of XLA's measured GEMM tables
(:mod:`.matmul_table`), as XLA's latency estimator does.
"""

from __future__ import annotations

import json
from math import prod
from typing import TYPE_CHECKING

from .costs import KernelCost, OperandCost
from .flops import FMA_FLOPS, convolution_flops, flop_count
from .fusion_model import shape_bytes
from .matmul_table import has_table
from .model import combine_ns, compute_time_ns, write_time_ns
from .step_costs import gemm_time_ns, matrix_unit

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .devices import CostDevice


def _gemm_flops(instr: Instruction) -> int | None:
    try:
        config = json.loads(instr.attributes.get("backend_config", "") or "{}")
    except json.JSONDecodeError:
        return None
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
