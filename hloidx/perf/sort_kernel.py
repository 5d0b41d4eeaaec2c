"""XLA:GPU's sort as it runs (``IrEmitterUnnested::EmitSort``, openxla/xla): a bitonic sort in
the sort's output buffers, in place, as a sequence of kernels.

With ``S = ceil(log2(n))`` stages over the sorted dimension of size ``n``, every stage ``s``
compares with the xor masks ``2^(s+1) - 1`` then ``2^(s-1), ..., 1``. Masks smaller than the
tile (``min(4 * threads_per_block_limit, shared_memory_per_block / bytes of one element of
every operand, 2^S)``, rounded down to a power of two) are run together by one tiled kernel
(the tile loaded into shared memory, every mask applied, written back); each larger mask is a
kernel of its own over the whole buffer (one thread per compared pair). Every kernel reads the
buffers once and writes them back once (an untiled pass writes only the pairs it swaps: its
write is counted whole, an upper bound). The copy of an operand into the output buffer that
XLA adds first when the two are not shared is a row of its own (:mod:`.carried`).

Before optimization, a sort XLA:GPU's ``SortRewriter`` hands to CUB's radix sort (one or two
operands, the minor dimension sorted, at least 16385 elements, a comparator that compares two
adjacent parameters) is not this kernel: it is a library call out of place (a roofline, no
copy first); JAX's float comparators (NaN-aware) are not simple and stay bitonic.

XLA's cost analysis (``HloCostAnalysis::HandleSort``) counts one read and one write of the
buffers (and ``N log2(N)`` comparisons of its ``N`` elements, kept here as the flops); hloidx
counts the bytes of the kernels the emitter launches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hlo.element_types import element_bytes
from .costs import KernelCost, OperandCost
from .flops import flop_count
from .model import KERNEL_LAUNCH_OVERHEAD_NS, combine_ns, compute_time_ns, write_time_ns

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .devices import CostDevice

UNROLL = 4
#: ``SortRewriter::sort_size_threshold_``: smaller sorts stay bitonic
CUB_SORT_MIN_ELEMENTS = 16385


def rewritten_to_cub(sort: Instruction) -> bool:
    """XLA:GPU's ``SortRewriter`` would make ``sort`` a CUB radix sort custom call (only in a
    module XLA has not optimized yet: a scheduled module's sort is what XLA runs)."""
    comp = sort.computation
    module = comp.module if comp is not None else None
    if module is None or module.attributes.get("is_scheduled", "").lower() == "true":
        return False
    if len(sort.operands) not in (1, 2):
        return False
    shape = sort.operands[0].shape
    dim = (sort.dimensions or (0,))[0]
    if dim != shape.rank - 1 or shape.num_elements() < CUB_SORT_MIN_ELEMENTS:
        return False
    comparator = (sort.called_computations.get("to_apply") or [None])[0]
    root = comparator.root if comparator is not None else None
    if root is None or root.opcode != "compare" or len(root.operands) != 2:
        return False
    direction = str(root.attributes.get("direction", "")).upper()
    numbers = [o.parameter_number if o.opcode == "parameter" else None for o in root.operands]
    if direction in ("EQ", "NE", "") or None in numbers:
        return False
    first, second = sorted(numbers)
    return first % 2 == 0 and second == first + 1


def _log2_ceiling(n: int) -> int:
    return max(0, (n - 1).bit_length())


def sort_kernels(n: int, element_size: int, threads_limit: int, shared_memory: int) -> int:
    """How many kernels XLA's sort emitter launches for a sorted dimension of ``n``."""
    stages = _log2_ceiling(n)
    if stages == 0:
        return 1
    tile = min(threads_limit * UNROLL, shared_memory // max(1, element_size), 1 << stages)
    tile = 1 << (max(1, tile).bit_length() - 1)
    kernels, pending = 0, False
    for stage in range(stages):
        for mask in range(stage, -1, -1):
            xor_mask = (1 << (stage + 1)) - 1 if mask == stage else 1 << mask
            if xor_mask >= tile:
                kernels += 1 + int(pending)
                pending = False
            else:
                pending = True
    return kernels + int(pending)


def estimate_sort(instr: Instruction, device: CostDevice) -> KernelCost:
    """The sort's kernels as one row: their bytes, time and launches (see the module)."""
    keys = instr.operands[0].shape
    dim = (instr.dimensions or (0,))[0]
    n = keys.dims[dim] if dim < len(keys.dims) else 1
    element_size = sum(element_bytes(o.shape.element_type) for o in instr.operands)
    profile = device.launch_profile
    kernels = sort_kernels(
        n, element_size, profile.threads_per_block_limit, profile.shared_memory_per_block
    )
    size = sum(o.shape.num_elements() * element_bytes(o.shape.element_type) for o in instr.operands)
    flops = flop_count(instr, device.compute_capability)
    operands = [
        OperandCost(
            k,
            o.name,
            kernels * (b := o.shape.num_elements() * element_bytes(o.shape.element_type)),
            b,
            True,
            kernels * b / device.memory_bandwidth * 1e9,
            1.0,
            f"read once by each of the sort's {kernels} kernels",
            b,
        )
        for k, o in enumerate(instr.operands)
    ]
    read_ns = sum(o.read_time_ns for o in operands)
    write_ns = kernels * write_time_ns(device, size)
    compute_ns = compute_time_ns(device, flops, device.core_count, device.fpus_per_core)
    exec_ns = combine_ns(compute_ns, read_ns + write_ns)
    return KernelCost(
        name=instr.name,
        opcode="sort",
        kind="library",
        emitter=f"sort (XLA's bitonic sort emitter: {kernels} kernels, in place)",
        blocks=device.core_count,
        threads_per_block=device.fpus_per_core,
        flops=flops,
        bytes_read=kernels * size,
        bytes_written=kernels * size,
        read_time_ns=read_ns,
        write_time_ns=write_ns,
        compute_time_ns=compute_ns,
        # the row is launched once; its other kernels' launches are in its time
        exec_time_ns=exec_ns + (kernels - 1) * KERNEL_LAUNCH_OVERHEAD_NS,
        operands=operands,
        notes=[
            f"XLA's sort emitter: {kernels} kernels over the sorted dimension of {n} "
            f"({_log2_ceiling(n)} bitonic stages), each reading and writing the "
            f"{size} bytes of the buffers in place (an untiled pass writes only the pairs it "
            f"swaps: counted whole); {kernels - 1} of its launches are in its time; flops: "
            "XLA's cost analysis count"
        ],
    )
