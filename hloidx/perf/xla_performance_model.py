"""XLA:GPU's classic performance model (``GpuPerformanceModel`` over ``GpuHloCostAnalysis``,
openxla at 1e203b533f9702298d8b17ef1281e880132614bf, ``xla/service/gpu/model/
gpu_performance_model.cc`` and ``gpu_performance_model_base.cc``): what XLA's priority fusion
and its SoL latency estimator time loop and input fusions with.

One kernel: its flops and written bytes from the cost analysis; each operand read
``operand_bytes_accessed`` bytes, of which at most the operand's size from DRAM (the rest from
a cache when it fits), at the bandwidth XLA's coalescing heuristic leaves; the launch of the
kernel's emitter (XLA's fallback of one thread per output element, 128 a block, where hloidx
does not model the emitter); compute and memory overlapped by 95%. A producer fused into a
consumer: the producer's flops scaled by the consumer's utilization of it, the shared operands
read once (``GetSharedOperandBytesAccessed``), the consumer's writes (and the producer's when it
stays an output), on the fused kernel's launch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import ceil, floor, inf, prod
from typing import TYPE_CHECKING

from ..gpu.analysis import read_coalesced_heuristic
from ..gpu.emitters import choose_emitter
from ..gpu.launch import compute_launch
from ..hlo.element_types import element_bytes
from ..hlo.fusion import body_of, computation_outputs
from .kernels import wrap_as_fusion
from .model import (
    KERNEL_LAUNCH_OVERHEAD_NS,
    L1_CACHE_SPEEDUP,
    L2_CACHE_SPEEDUP,
    MEMORY_COMPUTE_PARALLELISM,
    coalescing_utilization_rate,
    effective_flops_per_ns,
)
from .xla_cost_analysis import GpuCostAnalysis
from .xla_cost_base import elements_recursive, f32, is_elementwise, shape_size
from .xla_fusion_costs import llround
from .xla_producer_consumer import fuse

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .devices import CostDevice

#: threads per block of XLA's fallback launch (``EstimateFusionLaunchDimensions``)
FALLBACK_THREADS_PER_BLOCK = 128
#: element bytes XLA's coalescing rate takes for a tuple or token operand
_TUPLE_ELEMENT_BYTES = 4


@dataclass(frozen=True)
class OperandRead:
    index: int
    name: str
    bytes_total: int
    bytes_net: int
    coalesced: bool
    read_ns: float
    utilization_rate: float
    size: int


@dataclass(frozen=True)
class Launch:
    emitter: str
    label: str
    blocks: int
    threads_per_block: int
    modelled: bool


@dataclass(frozen=True)
class RunTimeData:
    """XLA's ``EstimateRunTimeData`` of one kernel, with the launch and reads behind it."""

    flops: int
    bytes_read: int
    bytes_written: int
    read_ns: float
    write_ns: float
    compute_ns: float
    exec_ns: float
    launch: Launch | None = None
    operands: tuple[OperandRead, ...] = field(default=())

    @property
    def is_infinite(self) -> bool:
        return self.exec_ns == inf


#: ``EstimateRunTimeData::Infinite()``
INFINITE = RunTimeData(0, 0, 0, inf, inf, inf, inf)


@dataclass(frozen=True)
class RunTimes:
    """``GpuPerformanceModel::RunTimes``: launch overheads included."""

    time_unfused_ns: float
    time_fused_ns: float


def duration_ns(ns: float) -> float:
    """``absl::Duration`` holds quarter nanoseconds: a time XLA makes is rounded to one."""
    return floor(ns * 4.0 + 0.5) / 4.0 if ns != inf else inf


def read_time_ns(device, blocks: int, net: int, total: int, rate: float) -> float:
    """``ReadTimeWithDRAMHeuristic`` in XLA's arithmetic (32-bit bandwidths, two durations)."""
    bandwidth = float(device.memory_bandwidth)
    dram = f32(bandwidth * rate)
    rest = f32(bandwidth)
    if net < device.l2_cache_size:
        rest = f32(rest * L2_CACHE_SPEEDUP)
        if net < device.l1_cache_size_per_sm * device.core_count:
            rest = f32(rest * L1_CACHE_SPEEDUP)
    else:
        rest = f32(rest * rate)
    per_block = f32(f32(device.clock_rate_ghz * 1.0e9) * device.memory_transactions_per_clock)
    cap = f32(blocks * per_block)
    dram, rest = min(dram, cap), min(rest, cap)
    from_dram = min(net, total)
    from_cache = total - from_dram
    return duration_ns(f32(from_dram / dram) * 1e9) + duration_ns(f32(from_cache / rest) * 1e9)


def write_time_ns(device, written: int) -> float:
    return duration_ns(f32(written / device.memory_bandwidth) * 1e9)


def compute_time_ns(device, flops: int, blocks: int, threads: int) -> float:
    rate = effective_flops_per_ns(device, blocks, threads)
    return duration_ns(f32(flops / rate)) if rate else 0.0


def combine_ns(compute: float, memory: float) -> float:
    """``CombineComputeAndMemoryAccessTime``: 95% of the shorter overlaps."""
    overlap = duration_ns(min(compute, memory) * MEMORY_COMPUTE_PARALLELISM)
    return compute + memory - overlap


def _element_bytes(shape) -> int:
    return element_bytes(shape.element_type) if shape.is_array else _TUPLE_ELEMENT_BYTES


def _module_of(instr: Instruction):
    comp = instr.computation
    return comp.module if comp is not None else None


class ClassicModel:
    """``GpuPerformanceModel`` for one device, with its cost analysis and run-time cache."""

    def __init__(self, device: CostDevice, analysis: GpuCostAnalysis | None = None) -> None:
        self.device = device
        self.analysis = analysis or GpuCostAnalysis(profile=device.compute_capability)
        self.cache: dict[int, RunTimeData] = {}
        self.fused_cache: dict[tuple[int, int], float] = {}

    # -- launch and coalescing ---------------------------------------------------------------
    def as_fusion(self, instr: Instruction) -> Instruction:
        if instr.opcode == "fusion":
            return instr
        module = _module_of(instr)
        if module is None:
            raise ValueError(f"{instr.name} belongs to no module")
        return wrap_as_fusion(instr, module)

    def launch(self, fusion: Instruction) -> Launch:
        """``EstimateFusionLaunchDimensions`` of a fusion (or one-op fusion)."""
        choice = choose_emitter(fusion)
        config = compute_launch(fusion, choice, self.device.launch_profile)
        if config is not None:
            label = choice.kind if choice.kind == "dynamic-update-slice" else choice.label
            if config.reduction is not None:
                label = f"reduction ({config.reduction.detail})"
            blocks, threads = prod(config.blocks), prod(config.threads_per_block)
            return Launch(choice.kind, label, blocks, threads, True)
        if choice.kind == "scatter" and choice.hero is not None and choice.hero.operands:
            # XLA's scatter emitter (after its scatter simplifier) launches over the updates:
            # CalculateLaunchDimensions of the updates' shape, one element a thread
            n = choice.hero.operands[-1].shape.num_elements()
            threads = min(FALLBACK_THREADS_PER_BLOCK, max(1, n))
            label = "scatter (distributed updates)"
            return Launch(choice.kind, label, max(1, ceil(n / threads)), threads, False)
        roots = computation_outputs(body_of(fusion))
        n = elements_recursive(roots[0].shape if roots else fusion.shape)
        blocks = ceil(n / FALLBACK_THREADS_PER_BLOCK)
        return Launch(choice.kind, choice.label, blocks, FALLBACK_THREADS_PER_BLOCK, False)

    def coalesced(self, kind: str, producer: Instruction, consumer=None) -> bool:
        """XLA's ``IsReadCoalescedHeuristic`` (``CoalescingAnalysis`` with the heuristic)."""
        if not read_coalesced_heuristic(kind, producer, consumer):
            return False
        if kind == "reduction" and consumer is not None:
            both = [self._is_reduction(x) for x in (producer, consumer)]
            return not all(both)
        return True

    def _is_reduction(self, instr: Instruction) -> bool:
        if instr.opcode not in ("fusion", "reduce"):
            return False
        return choose_emitter(self.as_fusion(instr)).kind == "reduction"

    def _read(self, k: int, operand: Instruction, total: int, blocks: int, coalesced: bool):
        size = shape_size(operand.shape)
        net = min(size, total)
        rate = coalescing_utilization_rate(_element_bytes(operand.shape), self.device, coalesced)
        time = read_time_ns(self.device, blocks, net, total, rate)
        return OperandRead(k, operand.name, total, net, coalesced, time, rate, size)

    # -- one kernel ------------------------------------------------------------------------
    def instruction(self, instr: Instruction) -> RunTimeData:
        """``EstimateRunTimeForInstruction`` (cached)."""
        found = self.cache.get(id(instr))
        if found is None:
            found = self.cache[id(instr)] = self._instruction(instr)
        return found

    def _instruction(self, instr: Instruction) -> RunTimeData:
        a = self.analysis
        flops = a.flop_count(instr)
        written = a.output_bytes_accessed(instr)
        launch = self.launch(self.as_fusion(instr))
        compute = compute_time_ns(self.device, flops, launch.blocks, launch.threads_per_block)
        coalesced = self.coalesced(launch.emitter, instr)
        reads = []
        for k, operand in enumerate(instr.operands):
            first = next(j for j, o in enumerate(instr.operands) if o is operand)
            total = a.operand_bytes_accessed(instr, first)
            reads.append(self._read(k, operand, total, launch.blocks, coalesced))
        read = sum(r.read_ns for r in reads)
        write = write_time_ns(self.device, written)
        exec_ns = combine_ns(compute, read + write)
        bytes_read = sum(r.bytes_total for r in reads)
        return RunTimeData(
            flops, bytes_read, written, read, write, compute, exec_ns, launch, tuple(reads)
        )

    # -- a producer fused into a consumer --------------------------------------------------
    def operand_utilization(self, instr: Instruction, operand: Instruction) -> float:
        """``GetOperandUtilization``: what ``instr`` uses of ``operand`` (of each of a
        multi-output fusion's outputs it reads)."""
        a = self.analysis
        if operand.opcode == "fusion" and operand.shape.is_tuple:
            return sum(
                a.operand_utilization(instr, k)
                for k, o in enumerate(instr.operands)
                if o.opcode == "get-tuple-element" and o.operands and o.operands[0] is operand
            )
        index = next((k for k, o in enumerate(instr.operands) if o is operand), None)
        return 0.0 if index is None else a.operand_utilization(instr, index)

    def _operand_bytes(self, instr: Instruction, operand: Instruction) -> int:
        index = next((k for k, o in enumerate(instr.operands) if o is operand), None)
        return 0 if index is None else self.analysis.operand_bytes_accessed(instr, index)

    def _uses_elementwise_from_root(self, fusion: Instruction, k: int) -> bool:
        body = body_of(fusion)
        param = next((p for p in body.parameters if p.parameter_number == k), None)
        if param is None or body.root is None:
            return False
        self.analysis.analyze(fusion.computation)
        return self.analysis.common_elementwise_utilization(param, body.root) == 1.0

    def common_utilization(self, producer: Instruction, k: int, consumer: Instruction) -> float:
        """``GetCommonUtilization`` of the producer's operand ``k`` and the consumer."""
        operand = producer.operands[k]
        if not any(o is operand for o in consumer.operands):
            return 0.0
        elementwise = is_elementwise(producer) or (
            producer.opcode == "fusion" and self._uses_elementwise_from_root(producer, k)
        )
        if not elementwise:
            return 0.0
        if consumer.opcode == "fusion":
            params = {p.parameter_number: p for p in body_of(consumer).parameters}
            common = next(j for j, o in enumerate(consumer.operands) if o is operand)
            if producer.opcode == "fusion" and producer.shape.is_tuple:
                reads = [
                    j
                    for j, o in enumerate(consumer.operands)
                    if o.opcode == "get-tuple-element" and o.operands and o.operands[0] is producer
                ]
            else:
                reads = [j for j, o in enumerate(consumer.operands) if o is producer][:1]
            return sum(
                self.analysis.common_elementwise_utilization(params[common], params[j])
                for j in reads
                if common in params and j in params
            )
        return 1.0 if is_elementwise(consumer) else 0.0

    def shared_operand_bytes(
        self, producer: Instruction, consumer: Instruction, operand: Instruction
    ) -> int:
        """``GetSharedOperandBytesAccessed``."""
        by_consumer_share = self.operand_utilization(consumer, producer)
        by_producer = self._operand_bytes(producer, operand)
        by_consumer = self._operand_bytes(consumer, operand)
        k = next((j for j, o in enumerate(producer.operands) if o is operand), None)
        common = 0.0 if k is None else self.common_utilization(producer, k, consumer)
        common_bytes = llround(shape_size(operand.shape) * common)
        return llround(by_producer * by_consumer_share) + by_consumer - common_bytes

    def fused(
        self,
        producer: Instruction,
        consumer: Instruction,
        producer_rt: RunTimeData | None = None,
        consumer_rt: RunTimeData | None = None,
        side_output: bool = False,
    ) -> float:
        """``EstimateRunTimeForFusion``: the fused kernel's time in ns (no launch overhead)."""
        key = (id(producer), id(consumer))
        if key in self.fused_cache:
            return self.fused_cache[key]
        p_rt = producer_rt or self.instruction(producer)
        c_rt = consumer_rt or self.instruction(consumer)
        if p_rt.is_infinite or c_rt.is_infinite:
            return inf
        share = sum(
            self.analysis.operand_utilization(consumer, k)
            for k, o in enumerate(consumer.operands)
            if o is producer
            or (o.opcode == "get-tuple-element" and o.operands and o.operands[0] is producer)
        )
        fusion = fuse(producer, consumer, side_output)
        launch = self.launch(fusion)
        flops = int(p_rt.flops * share + c_rt.flops)
        compute = compute_time_ns(self.device, flops, launch.blocks, launch.threads_per_block)
        coalesced = self.coalesced(launch.emitter, producer, consumer)
        read = 0.0
        for k, operand in enumerate(fusion.operands):
            total = self.shared_operand_bytes(producer, consumer, operand)
            read += self._read(k, operand, total, launch.blocks, coalesced).read_ns
        write = c_rt.write_ns + (p_rt.write_ns if side_output else 0.0)
        out = combine_ns(compute, read + write)
        self.fused_cache[key] = out
        return out

    def run_times(self, producer: Instruction, consumers: list[Instruction]) -> RunTimes:
        """``EstimateRunTimes``: the producer and its consumers apart, or the producer fused
        into each consumer."""
        producer_rt = self.instruction(producer)
        unfused = KERNEL_LAUNCH_OVERHEAD_NS * (len(consumers) + 1) + producer_rt.exec_ns
        fused = KERNEL_LAUNCH_OVERHEAD_NS * len(consumers)
        for consumer in consumers:
            consumer_rt = self.instruction(consumer)
            unfused += consumer_rt.exec_ns
            fused += self.fused(producer, consumer, producer_rt, consumer_rt)
        return RunTimes(unfused, fused)

    def multi_output_run_times(self, producer: Instruction, consumer: Instruction) -> RunTimes:
        """``EstimateRunTimesForMultiOutputFusion``."""
        p_rt, c_rt = self.instruction(producer), self.instruction(consumer)
        unfused = 2 * KERNEL_LAUNCH_OVERHEAD_NS + p_rt.exec_ns + c_rt.exec_ns
        fused = KERNEL_LAUNCH_OVERHEAD_NS + self.fused(
            producer, consumer, p_rt, c_rt, side_output=True
        )
        return RunTimes(unfused, fused)


def to_microseconds(ns: float) -> int:
    """``absl::ToInt64Microseconds``: truncated toward zero."""
    return int(ns / 1000.0) if ns != inf else 2**63 - 1
