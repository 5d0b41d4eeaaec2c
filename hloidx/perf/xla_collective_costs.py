"""Collectives and custom calls as XLA's ``GpuHloCostAnalysis`` counts them: bytes transferred
and accessed from the number of ranks of the replica groups (``NumRanks``), cuBLAS GEMM flops
from the ``gemm_backend_config``, cuDNN convolutions without their scratch buffer, any other
custom call unknown (-1, as ``HloCostAnalysis::HandleCustomCall`` marks it).

``analysis`` is a :class:`hloidx.perf.xla_cost_analysis.GpuCostAnalysis`.
"""

from __future__ import annotations

import json
import re
from math import prod
from typing import TYPE_CHECKING, Any

from .flops import convolution_flops
from .xla_cost_base import (
    CUBLAS_GEMMS,
    CUDNN_CONVOLUTIONS,
    Props,
    array_leaf_bytes,
    first_array,
    operand_key,
    out_key,
    shape_size,
)

if TYPE_CHECKING:
    from ..hlo.ir import Instruction


def _module_counts(instr: Instruction) -> tuple[int, int]:
    comp = instr.computation
    attrs = comp.module.attributes if comp is not None and comp.module is not None else {}

    def read(key: str) -> int:
        try:
            return int(str(attrs.get(key, "1")).strip() or 1)
        except ValueError:
            return 1

    return read("replica_count"), read("num_partitions")


def _group_sizes(text: str) -> list[int]:
    text = text.strip()
    if not text or text == "{}":
        return []
    iota = re.match(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]", text)
    if iota:
        return [int(iota.group(2))] * int(iota.group(1))
    return [len([x for x in g.split(",") if x.strip()]) for g in re.findall(r"\{([^{}]*)\}", text)]


def num_ranks(instr: Instruction) -> int:
    """XLA's ``NumRanks``: the largest participant count of the instruction's groups."""
    replicas, partitions = _module_counts(instr)
    has_channel = "channel_id" in instr.attributes
    global_ids = instr.attributes.get("use_global_device_ids")
    sizes = _group_sizes(instr.attributes.get("replica_groups", ""))
    if not has_channel:
        mode = "replica"
    elif global_ids is None:
        mode = "partition"
    elif global_ids.strip() != "true":
        mode = "replica_and_partition"
    else:
        mode = "flattened"
    if not sizes:
        full = {"replica": replicas, "partition": partitions}.get(mode, replicas * partitions)
        return max(1, full)
    if mode == "replica_and_partition":
        sizes = [s * partitions for s in sizes]
    return max(1, *sizes)


def all_reduce(analysis: Any, instr: Instruction, p: Props) -> None:
    out = array_leaf_bytes(instr.shape)
    p[out_key()] = float(out)
    p["bytes"] = float(out + sum(shape_size(o.shape) for o in instr.operands))
    p["transferred"] = float(out)
    p["flops"] = float(analysis.reducer_flops(instr))


def all_gather(analysis: Any, instr: Instruction, p: Props, transferred: int) -> None:
    ranks = num_ranks(instr)
    per_rank = transferred // ranks
    p["bytes"] = float(per_rank * (2 * ranks - 1) + per_rank * ranks)
    p["transferred"] = float(transferred)


def reduce_scatter(analysis: Any, instr: Instruction, p: Props) -> None:
    ranks = num_ranks(instr)
    transferred = sum(array_leaf_bytes(o.shape) for o in instr.operands)
    per_rank = transferred // ranks
    p["bytes"] = float(per_rank * ranks + per_rank * (2 * ranks - 1))
    p["transferred"] = float(transferred)
    p["flops"] = float(analysis.reducer_flops(instr))


def async_start(analysis: Any, instr: Instruction, p: Props) -> Props:
    """``GpuHloCostAnalysis::HandleAsyncStart``: the wrapped op is visited on its own; the
    start keeps only what a wrapped reduce-scatter or all-to-all sets."""
    called = instr.called_computations.get("calls") or []
    wrapped = called[0].root if called else None
    out = Props()
    if wrapped is None:
        return out
    if id(wrapped) not in analysis.properties:
        analysis.visit(wrapped)
    if wrapped.opcode == "reduce-scatter":
        reduce_scatter(analysis, wrapped, out)
    elif wrapped.opcode == "all-to-all":
        out["transferred"] = float(array_leaf_bytes(wrapped.shape))
    return out


def _gemm_contracting(instr: Instruction) -> list[int] | None:
    text = instr.attributes.get("backend_config", "")
    text = re.sub(r",\s*([}\]])", r"\1", text)
    try:
        config = json.loads(text)
    except ValueError:
        return None
    gemm = config.get("gemm_backend_config", config) if isinstance(config, dict) else {}
    dnums = gemm.get("dot_dimension_numbers", {}) if isinstance(gemm, dict) else {}
    dims = dnums.get("lhs_contracting_dimensions", []) if isinstance(dnums, dict) else []
    return [int(d) for d in dims]


def custom_call_props(analysis: Any, instr: Instruction, p: Props) -> Props:
    target = instr.attributes.get("custom_call_target", "").strip().strip('"')
    if target in CUBLAS_GEMMS:
        dims = _gemm_contracting(instr)
        if dims is not None and instr.operands:
            lhs = instr.operands[0].shape
            width = prod(lhs.dims[d] for d in dims if d < lhs.rank)
            p["flops"] = float(2 * first_array(instr.shape).num_elements() * width)
            return p
    if target in CUDNN_CONVOLUTIONS:
        p["flops"] = float(convolution_flops(instr))
        if instr.shape.is_tuple:
            real = shape_size(first_array(instr.shape))
            p["bytes"] = p["bytes"] - p[out_key()] + real
            p[out_key()] = float(real)
        return p
    p["bytes"] = -1.0
    p[out_key()] = -1.0
    for k in range(len(instr.operands)):
        p[operand_key(k)] = -1.0
    p["flops"] = -1.0
    return p
