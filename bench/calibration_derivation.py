"""The measured calibration figures of ``hloidx/perf/data/measured_calibration.json``
recomputed from the A100 step (``python bench/accuracy.py --derive``).

Each figure uses only the measurement and what the model counts (bytes, flops, the collective's
bytes and group), never an estimated time, so the figures do not depend on themselves. The
launch gap needs the Nsight trace (not in the repository): its derivation is in the data file.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from hloidx.perf.calibration import (
    collective_latency,
    contention_factor,
    interconnect,
    wire_bytes,
)
from hloidx.perf.collective_table import sync_opcode
from hloidx.perf.report import CostReport
from hloidx.perf.step_costs import tensor_core_peak

_COLLECTIVE_OPCODES = ("all-gather-start", "all-reduce-start", "reduce-scatter-start")


def _kernel_rows(report: CostReport, measured: dict) -> list[tuple[Any, float]]:
    """(kernel row, measured ns per launch) of the measured kernels (not collectives)."""
    kernels = {k.name: k for k in report.kernels}
    ops = measured["ops"]
    out = []
    for name, op in ops.items():
        if op.get("fusion_caller") in ops or op["opcode"] in _COLLECTIVE_OPCODES:
            continue
        extra = sum(
            o["mean_us"] * o["count_per_step"] / op["count_per_step"]
            for o in ops.values()
            if o.get("fusion_caller") == name
        )
        if name in kernels:
            out.append((kernels[name], (op["mean_us"] + extra) * 1e3))
    return out


def derive(report: CostReport, measured: dict) -> str:
    device = report.device
    rows = _kernel_rows(report, measured)
    lines = [f"calibration figures from the A100 step on {device.name}:"]

    tiny = [ns for k, ns in rows if k.kind != "library" and k.bytes_read + k.bytes_written < 1024]
    lines.append(
        f"- kernel_floor_ns: median of {len(tiny)} kernels moving < 1 KiB: "
        f"{statistics.median(tiny):.0f} ns"
    )

    peak = tensor_core_peak(device.name, "bf16")
    assert peak is not None
    shares = []
    for k, ns in rows:
        if k.kind != "library" or "roofline" not in k.emitter or not k.flops:
            continue
        compute_s = k.flops / peak[0]
        memory_s = (k.bytes_read + k.bytes_written) / device.memory_bandwidth
        if compute_s > memory_s:
            shares.append(k.flops / (ns * 1e-9) / peak[0])
    lines.append(
        f"- gemm_efficiency: median achieved share of the bf16 peak {peak[0] / 1e12:g} TFLOP/s "
        f"over {len(shares)} compute-bound GEMMs: {statistics.median(shares):.3f}"
    )

    factor = contention_factor().value
    beside, alone = [], []
    for k, ns in rows:
        if not k.exec_time_ns:
            continue
        note = next((n for n in k.notes if "collective is in flight" in n), None)
        share = float(note.split("%")[0]) / 100 if note else 0.0
        own = k.exec_time_ns / (1 + (factor - 1) * share)
        if share >= 0.99:
            beside.append(math.log2(ns / own))
        elif share == 0:
            alone.append(math.log2(ns / own))
    if beside:
        lines.append(
            f"- collective_contention_factor: median log2(measured / estimate) {statistics.median(beside):.3f} "
            f"over {len(beside)} kernels wholly beside a collective, {statistics.median(alone):.3f} over "
            f"{len(alone)} others: x {2 ** (statistics.median(beside) - statistics.median(alone)):.3f}"
        )

    wrapped_starts = {}
    collectives = {c.name: c for c in report.collective_rows()}
    small, large = [], []
    bandwidth, _, _ = interconnect(device)
    latency = collective_latency().value
    for name, op in measured["ops"].items():
        if op["opcode"] not in _COLLECTIVE_OPCODES:
            continue
        target = op.get("async_wrapped", {}).get("async_start", name)
        wrapped_starts[name] = target
        row = collectives.get(target)
        if row is None or row.estimate is None or row.estimate.bytes is None:
            continue
        ns = op["mean_us"] * 1e3
        data = row.estimate.bytes
        if op["opcode"] == "all-reduce-start" and data <= 1024:
            small.append(ns)
        wire = wire_bytes(sync_opcode_of(row.opcode), data, row.estimate.participants or 1)
        if wire >= 16 * 2**20:
            large.append(wire / ((ns - latency) * 1e-9) / bandwidth)
    lines.append(
        f"- collective_latency_ns: median of {len(small)} all-reduces <= 1 KiB: "
        f"{statistics.median(small):.0f} ns"
    )
    lines.append(
        f"- collective_bandwidth_efficiency: median over {len(large)} collectives >= 16 MiB on "
        f"the wire of achieved / link bandwidth: {statistics.median(large):.3f}"
    )
    return "\n".join(lines) + "\n"


def sync_opcode_of(opcode: str) -> str:
    class _Op:
        def __init__(self, opcode: str) -> None:
            self.opcode = opcode

    return sync_opcode(_Op(opcode))  # type: ignore[arg-type]
