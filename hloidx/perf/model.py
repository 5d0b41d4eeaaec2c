"""The memory and compute formulas of XLA:GPU's performance model, as functions of numbers.

They follow ``gpu_performance_model_base.cc`` and ``coalescing_analysis.cc`` at openxla
ab4462695acd54607187163f9435fec284f86a0c: the first read of an operand's bytes comes from
DRAM at the coalescing-scaled bandwidth; re-reads come from L2 (2.5× faster) or L1 (8× more)
when the operand fits there; every bandwidth is capped by what the launched blocks can issue
(one 32-byte transaction per clock per block, ``AdjustBandwidth``); writes go at the DRAM
bandwidth; compute runs on ``min(threads, FPUs per SM) × min(blocks, SMs)`` FPUs at two flops
per cycle (the clock truncated to an integer number of flops per ns, as XLA does); memory and
compute overlap by 95%. Times are in nanoseconds.
"""

from __future__ import annotations

from math import ceil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .devices import CostDevice

L2_CACHE_SPEEDUP = 2.5
L1_CACHE_SPEEDUP = 8.0
MEMORY_COMPUTE_PARALLELISM = 0.95
KERNEL_LAUNCH_OVERHEAD_NS = 1000.0
#: share of the registers a tile may fill before XLA expects spills
FRACTION_OF_REGISTERS_FOR_TILES = 0.4


def adjust_bandwidth(device: CostDevice, bandwidth: float, num_blocks: int) -> float:
    """The bandwidth ``num_blocks`` blocks can reach (XLA's ``AdjustBandwidth``)."""
    per_block = device.clock_rate_ghz * 1.0e9 * device.memory_transactions_per_clock
    return min(bandwidth, num_blocks * per_block)


def read_time_ns(
    device: CostDevice,
    num_blocks: int,
    n_bytes_net: int,
    n_bytes_total: int,
    utilization_rate: float = 1.0,
) -> float:
    """XLA's ``ReadTimeWithDRAMHeuristic``: ``n_bytes_net`` distinct bytes first from DRAM,
    the rest of ``n_bytes_total`` from a cache when ``n_bytes_net`` fits in it."""
    dram = device.memory_bandwidth * utilization_rate
    rest = float(device.memory_bandwidth)
    if n_bytes_net < device.l2_cache_size:
        rest *= L2_CACHE_SPEEDUP
        if n_bytes_net < device.l1_cache_size_per_sm * device.core_count:
            rest *= L1_CACHE_SPEEDUP
    else:
        rest *= utilization_rate
    dram = adjust_bandwidth(device, dram, num_blocks)
    rest = adjust_bandwidth(device, rest, num_blocks)
    from_dram = min(n_bytes_net, n_bytes_total)
    from_cache = n_bytes_total - from_dram
    return (from_dram / dram + from_cache / rest) * 1e9


def write_time_ns(device: CostDevice, bytes_written: int, utilization_rate: float = 1.0) -> float:
    """XLA's ``WriteTime`` (the tiled model scales the bandwidth by the write's utilization)."""
    return bytes_written / (device.memory_bandwidth * utilization_rate) * 1e9


def effective_flops_per_ns(device: CostDevice, num_blocks: int, threads_per_block: int) -> int:
    """XLA's ``CalculateEffectiveFlopsPerNs`` (integer arithmetic, as XLA's)."""
    fpus_per_core = min(threads_per_block, device.fpus_per_core)
    cores = min(num_blocks, device.core_count)
    flops_per_ns_per_fpu = int(device.clock_rate_ghz * 2)
    return flops_per_ns_per_fpu * cores * fpus_per_core


def compute_time_ns(
    device: CostDevice, flops: int, num_blocks: int, threads_per_block: int
) -> float:
    rate = effective_flops_per_ns(device, num_blocks, threads_per_block)
    return flops / rate if rate else 0.0


def combine_ns(compute_ns: float, memory_ns: float) -> float:
    """XLA's ``CombineComputeAndMemoryAccessTime``: 95% of the shorter one overlaps."""
    return compute_ns + memory_ns - min(compute_ns, memory_ns) * MEMORY_COMPUTE_PARALLELISM


def coalescing_utilization_rate(element_bytes: int, device: CostDevice, coalesced: bool) -> float:
    """XLA's ``GetCoalescingUtilizationRate``: an uncoalesced read uses one element of each
    DRAM-to-L2 transaction."""
    if coalesced:
        return 1.0
    return element_bytes / device.dram_to_l2_transaction_size_bytes


def transaction_utilization(contiguous_bytes: int, device: CostDevice) -> float:
    """XLA's ``BandwidthUtilizationRateHeuristicForTiledMemoryAccess`` from the contiguous bytes
    of one tile: the share of the whole transactions they occupy."""
    size = device.dram_to_l2_transaction_size_bytes
    if contiguous_bytes <= 0:
        return 1.0
    return contiguous_bytes / (size * ceil(contiguous_bytes / size))


def tile_fits_in_registers(padded_tile_elements: int, device: CostDevice) -> bool:
    """XLA's ``DoesTileFitInRegisters``: at most 40% of a block's registers, one per element."""
    return (
        padded_tile_elements <= FRACTION_OF_REGISTERS_FOR_TILES * device.registers_per_block_limit
    )


def num_warps_for(largest_live_tile: int) -> int:
    """XLA's ``GetNumWarps`` from the largest padded tile."""
    if largest_live_tile <= 256:
        return 1
    if largest_live_tile <= 1024:
        return 2
    if largest_live_tile <= 4096:
        return 4
    return 8


def padded_size(sizes: tuple[int, ...]) -> int:
    """Elements of a tile after padding each dimension to a power of two."""
    out = 1
    for s in sizes:
        out *= 1 << max(0, (s - 1).bit_length())
    return out
