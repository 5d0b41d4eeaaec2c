"""The time of a collective as XLA's ``SolLatencyEstimator::ComputeCollectiveTime``
(``xla/service/gpu/model/sol_latency_estimator.cc``) computes it.

The communication type comes from the replica groups and the GPUs per node (XLA's
``CommunicationType``): a collective whose every group lives on one node is **single-host** and
takes its time from XLA's measured NVLink tables (:mod:`.collective_table`; ``sm_90`` and
``sm_100`` only); otherwise it is **multi-host**: the HBM traffic XLA's cost analysis counts at
the device's memory bandwidth, plus the reduction's compute for an all-reduce or
reduce-scatter, plus :func:`.ring_latency.ring_latency_ticks` over the participating hosts
(world level: group size / GPUs per node hosts, one communicator per group; non-world level:
the group size as hosts). Where XLA itself falls back it says so: an all-to-all across hosts
is the HBM time plus a 5 µs NCCL launch only; a collective-permute is not a collective XLA's
estimator times (its latency then comes from the scheduler's wrapped estimator, not modelled
here). A ``-done`` costs 0 (the time is the ``-start``'s).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..hlo.element_types import element_bytes
from .calibration import collective_latency, single_host_collective_ns
from .collective_table import (
    SINGLE_HOST,
    CollectiveError,
    bytes_transferred,
    communication_type,
    default_table,
    group_count_and_size,
    participant_counts,
    sync_opcode,
    wrapped_instruction,
)
from .devices import CostDevice, cost_device
from .model import effective_flops_per_ns
from .op_profiles import clock_cycles
from .ring_latency import (
    TICKS_PER_US,
    RingLatencyError,
    SolConfig,
    default_config,
    ring_latency_ticks,
    seconds,
)
from .step import CollectiveTime

if TYPE_CHECKING:
    from ..hlo.ir import HloModule, Instruction, Shape

#: XLA's ``GpuPerformanceModelBase::kNcclKernelLaunchOverhead``
NCCL_KERNEL_LAUNCH_TICKS = 5 * TICKS_PER_US

#: hloidx device → the device description string XLA keys its network defaults by
XLA_DEVICE_NAMES = {"h100": "NVIDIA H100 80GB HBM3", "b200": "NVIDIA B200"}

_COLLECTIVES = frozenset(
    {
        "all-reduce",
        "all-reduce-start",
        "all-gather",
        "all-gather-start",
        "reduce-scatter",
        "reduce-scatter-start",
        "all-to-all",
        "ragged-all-to-all",
        "collective-permute",
        "collective-permute-start",
        "collective-broadcast",
    }
)
_DONE = frozenset(
    {
        "all-reduce-done",
        "all-gather-done",
        "reduce-scatter-done",
        "collective-permute-done",
        "async-done",
        "send-done",
    }
)


def is_collective(instr: Instruction) -> bool:
    if instr.opcode in _COLLECTIVES:
        return True
    if instr.opcode == "async-start":
        inner = wrapped_instruction(instr)
        return inner is not None and inner.opcode in _COLLECTIVES
    return False


# -- XLA's cost analysis of a collective -----------------------------------------------------


def _bytes(shape: Shape, skip: int | None = None) -> int:
    if shape.is_tuple:
        return sum(_bytes(s) for i, s in enumerate(shape.tuple_shapes or ()) if i != skip)
    return shape.num_elements() * element_bytes(shape.element_type)


def _num_ranks(instr: Instruction) -> int:
    return max([1, *participant_counts(instr)])


def bytes_accessed(instr: Instruction) -> int:
    """``GpuHloCostAnalysis``'s ``bytes accessed`` of a collective (a float32 property)."""
    op = instr.opcode
    if op == "all-reduce":
        exact = _bytes(instr.shape) + sum(_bytes(o.shape) for o in instr.operands)
    elif op == "all-reduce-start":
        exact = _bytes(instr.shape)
    elif op in ("all-gather", "all-gather-start"):
        total = _bytes(instr.shape, 0 if op == "all-gather-start" else None)
        ranks = _num_ranks(instr)
        rank = total // ranks
        exact = rank * (2 * ranks - 1) + rank * ranks
    elif op in ("reduce-scatter", "reduce-scatter-start"):
        total = sum(_bytes(o.shape) for o in instr.operands)
        ranks = _num_ranks(instr)
        rank = total // ranks
        exact = rank * ranks + rank * (2 * ranks - 1)
    else:  # HloCostAnalysis's default: operands read, output written
        exact = _bytes(instr.shape) + sum(_bytes(o.shape) for o in instr.operands)
    return int(np.float32(exact))


def _reduction_compute_ticks(instr: Instruction, device: CostDevice) -> tuple[int, str]:
    """The GPU performance model's compute time of an all-reduce / reduce-scatter: the
    reduction's elementwise flops over the whole device (the launch assumed to fill every
    SM; hloidx does not derive XLA's launch of a collective)."""
    bodies = instr.called_computations.get("to_apply") or []
    root = bodies[0].root if bodies and bodies[0].root is not None else None
    op = root.opcode if root is not None else "add"
    leaves = instr.shape.leaves() if instr.shape.is_tuple else [instr.shape]
    etype = leaves[0].element_type if leaves else "f32"
    flops = clock_cycles(device.compute_capability, op, etype) * sum(
        s.num_elements() for s in leaves
    )
    rate = effective_flops_per_ns(device, device.core_count, device.fpus_per_core)
    ns = float(np.float32(1.0) * np.float32(flops) / np.float32(rate))
    ticks = seconds(ns * 1e-9) if ns < 1e9 else int(ns * 4)
    return ticks, (
        f"+ the reduction's compute ({flops} flops over the whole device, launch assumed to "
        "fill every SM)"
    )


# -- the estimator ---------------------------------------------------------------------------


class CollectiveTimer:
    """``timer(instruction) -> CollectiveTime | None``; ``why_not[name]`` says why a
    collective got None."""

    def __init__(
        self,
        device: CostDevice,
        description: str,
        gpus_per_node: int,
        config: SolConfig,
        model: str = "xla",
    ) -> None:
        self.device = device
        self.model = model
        self.description = description
        self.config = replace(config, gpus_per_node=gpus_per_node)
        self.table = default_table(device.compute_capability, gpus_per_node)
        self.why_not: dict[str, str] = {}

    def __call__(self, instr: Instruction) -> CollectiveTime | None:
        if instr.opcode in _DONE:
            return CollectiveTime(
                0.0, None, None, None, ("a -done costs 0 in XLA's estimator: see its -start",)
            )
        if not is_collective(instr):
            return None
        try:
            return self._estimate(instr)
        except (CollectiveError, RingLatencyError) as error:
            self.why_not[instr.name] = str(error)
            return None

    def _estimate(self, instr: Instruction) -> CollectiveTime | None:
        collective = wrapped_instruction(instr) if instr.opcode == "async-start" else instr
        assert collective is not None
        if collective.opcode.startswith("collective-permute"):
            raise CollectiveError(
                "collective-permute: not a collective XLA's SoL estimator times (the scheduler "
                "falls back to its wrapped estimator, not modelled); not estimated"
            )
        gpus = self.config.gpus_per_node
        comm = communication_type(collective, gpus)
        count_size = group_count_and_size(collective)
        if count_size is None:
            raise CollectiveError("replica groups of different sizes")
        groups, size = count_size
        moved = bytes_transferred(collective)
        if comm == SINGLE_HOST and self.model == "hloidx":
            return self._single_host(collective, size, moved)
        if comm == SINGLE_HOST:
            if self.table is None:
                raise CollectiveError(
                    f"single-host collective: XLA has no measured table for "
                    f"{self.device.compute_capability} (only sm_90, sm_100); not estimated"
                )
            got = self.table.estimate(collective)
            return CollectiveTime(
                got.time_ns, got.bytes, size, "single-host", (got.how + f", {got.bytes} bytes",)
            )
        hosts = size // gpus if comm.endswith("world-level") and "non" not in comm else size
        hbm = bytes_accessed(collective)
        rate = np.float32(np.float32(hbm) / np.float32(self.device.memory_bandwidth))
        ticks = seconds(float(rate))
        notes = [
            f"{comm} ({size} GPUs per group, {groups} groups, {gpus} GPUs per node): "
            f"HBM traffic {hbm} bytes at {self.device.memory_bandwidth / 1e9:g} GB/s"
        ]
        op = collective.opcode
        kind = {
            "all-gather": "all-gather",
            "all-gather-start": "all-gather",
            "all-reduce": "all-reduce",
            "all-reduce-start": "all-reduce",
            "reduce-scatter": "reduce-scatter",
            "reduce-scatter-start": "reduce-scatter",
        }.get(op)
        if kind in ("all-reduce", "reduce-scatter"):
            compute, how = _reduction_compute_ticks(collective, self.device)
            ticks += compute
            notes.append(how)
        if kind is None:
            ticks += NCCL_KERNEL_LAUNCH_TICKS
            notes.append(
                f"XLA's fallback: {op} across hosts is not modelled by XLA's estimator, only "
                "the HBM time + a 5 µs NCCL launch"
            )
        else:
            ticks += ring_latency_ticks(self.config, moved, hosts, kind, groups)
            notes.append(
                f"+ XLA's ring latency over {hosts} hosts, {groups} communicators "
                f"(network defaults of {self.config.device}, × 0.45)"
            )
        return CollectiveTime(ticks / 4, moved, size, "multi-host", tuple(notes))

    def _single_host(self, collective: Instruction, size: int, moved: int) -> CollectiveTime:
        """hloidx's model on one host: XLA's measured table where XLA has one (raised to the
        measured collective latency), else latency + bytes on the wire at the link's measured
        share (:mod:`.calibration`)."""
        latency = collective_latency()
        if self.table is not None:
            got = self.table.estimate(collective)
            notes = [got.how + f", {got.bytes} bytes"]
            time_ns = got.time_ns
            if time_ns < latency.value:
                time_ns = latency.value
                notes.append(f"raised to the measured collective latency ({latency.source})")
            return CollectiveTime(time_ns, got.bytes, size, "single-host", tuple(notes))
        opcode = sync_opcode(collective)
        time_ns, how = single_host_collective_ns(self.device, opcode, moved, size)
        return CollectiveTime(time_ns, moved, size, "single-host", (how,))


def collective_timer(
    module: HloModule,
    device_name: str | CostDevice,
    gpus_per_node: int = 8,
    config: dict | None = None,
    model: str = "xla",
) -> Callable[[Instruction], CollectiveTime | None]:
    """A timer of ``module``'s collectives on ``device_name`` (hloidx's device names).

    ``config``: XLA's ``xla_gpu_analytical_latency_estimator_options`` (``nccl_op_launch_us``,
    ``nic_speed_gbps``, ``chunk_prep_us``, ``rtt_us``, ``gpus_per_node``, ``chunk_size_bytes``);
    a ``gpus_per_node`` there wins over the argument, as XLA reads it from the options."""
    del module  # XLA's options come from the caller here, not the module's debug options
    device = device_name if isinstance(device_name, CostDevice) else cost_device(device_name)
    description = XLA_DEVICE_NAMES.get(device.name, "<unknown>")
    sol = default_config(description).with_options(config or {})
    gpus = sol.gpus_per_node if config and "gpus_per_node" in config else gpus_per_node
    return CollectiveTimer(device, description, gpus, sol, model)
