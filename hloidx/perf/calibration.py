"""What hloidx's default model (``--model hloidx``) adds to XLA's formulas from measured runs:
figures kept as data (``data/measured_calibration.json``, each with how it was measured; the
interconnects in ``data/interconnects.json`` from the vendors' datasheets). ``--model xla``
reads none of them.

- **Kernel floor**: a kernel that does no work still takes ``floor`` on the GPU (launch to
  completion as the profile sees it); every kernel's estimate is its work plus the floor (a
  time XLA's measured GEMM table gives is already a whole kernel's: it is only raised to the
  floor).
- **Launch gap**: the idle time between two kernels on the compute stream; the step counts it
  per launch instead of XLA's 1 µs.
- **GEMM efficiency**: a GEMM on a device without XLA's measured tables runs at this share of
  the dense matrix-unit peak (the median achieved share of the measured compute-bound GEMMs).
- **Collectives on one host**: ``latency + bytes on the wire / (efficiency x link bandwidth)``,
  the bytes a ring sends per GPU ((n-1)/n of the data, twice for an all-reduce).
- **Contention**: the part of a kernel that runs while a collective is in flight in the step's
  timeline runs slower by a measured factor (NCCL's kernels take SMs and memory bandwidth);
  the step is then timed again with those kernels.
- **Out-of-order reads that fit in L2**: an operand whose distinct bytes fit in L2 costs its
  lines once from DRAM, without the coalescing penalty.
- **Data-dependent kernels**: a scatter without ``unique_indices`` gets a range from no
  collision (its estimate) to every update on one row (each element's updates serialized, one
  L2 round trip each).

A device without its own measurement takes the one the data names as default, and says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from math import prod
from typing import TYPE_CHECKING, Any

from ..errors import HloidxError
from ..hlo.fusion import body_of, computation_outputs
from .model import combine_ns, read_time_ns

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from .costs import KernelCost
    from .devices import CostDevice
    from .kernels import Kernel

#: collectives whose bytes a ring sends twice per GPU (reduce-scatter then all-gather)
_TWICE = frozenset({"all-reduce", "all-reduce-start"})
#: collectives that send the whole buffer once (one hop)
_ONE_HOP = frozenset(
    {"collective-permute", "collective-permute-start", "collective-broadcast", "send", "recv"}
)


@dataclass(frozen=True)
class Figure:
    """One calibrated figure: its value, where it comes from, and whether this device's own."""

    value: float
    source: str
    #: False when the figure was measured on another device (the default entry)
    own: bool = True

    @property
    def label(self) -> str:
        return self.source if self.own else f"{self.source} (not measured on this device)"


@cache
def _read(name: str) -> dict[str, Any]:
    return json.loads(resources.files("hloidx.perf").joinpath(f"data/{name}").read_text())


def _per_device(key: str, device: CostDevice) -> Figure:
    table = _read("measured_calibration.json")[key]
    entry = table["devices"].get(device.compute_capability)
    if entry is not None:
        return Figure(float(entry["value"]), entry["source"])
    fallback = table["devices"][table["default"]]
    return Figure(float(fallback["value"]), fallback["source"], own=False)


def kernel_floor(device: CostDevice) -> Figure:
    """The time of a kernel that does no work, in ns."""
    return _per_device("kernel_floor_ns", device)


def launch_gap(device: CostDevice) -> Figure:
    """The idle time between consecutive kernels on the compute stream, in ns."""
    return _per_device("launch_gap_ns", device)


def _global(key: str) -> Figure:
    entry = _read("measured_calibration.json")[key]
    return Figure(float(entry["value"]), entry["source"])


def gemm_efficiency() -> Figure:
    """The share of the dense matrix-unit peak a GEMM reaches."""
    return _global("gemm_efficiency")


def collective_latency() -> Figure:
    """The time of a collective that moves (almost) nothing on one host, in ns."""
    return _global("collective_latency_ns")


def collective_efficiency() -> Figure:
    """The share of the link bandwidth a collective's ring reaches on one host."""
    return _global("collective_bandwidth_efficiency")


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").replace("_", " ").split())


def device_entry(data: dict[str, Any], name: str) -> Any:
    """The entry of ``data["devices"]`` for a device: by its name, an alias (XLA's spec-file
    names), or the first of ``data["patterns"]`` (longest first) found in its description
    (``NVIDIA A100-SXM4-40GB``, as a profile names it); None when nothing matches."""
    devices = data["devices"]
    key = data.get("aliases", {}).get(name, name)
    if key in devices:
        return devices[key]
    text = _normal(name)
    found = [
        (len(p), k)
        for k, patterns in data.get("patterns", {}).items()
        for p in patterns
        if _normal(p) in text
    ]
    return devices[max(found)[1]] if found else None


def interconnect(device: CostDevice) -> tuple[float, str, bool]:
    """``(bytes per second per direction, the link and its source, own)`` of ``device``."""
    data = _read("interconnects.json")
    entry = device_entry(data, device.name)
    own = entry is not None
    if entry is None:
        entry = data["devices"]["default"]
    link = f"{entry['link']}, {entry['gb_per_s']:g} GB/s per direction ({entry['source']})"
    return entry["gb_per_s"] * 1e9, link, own


def wire_bytes(opcode: str, data_bytes: int, group_size: int) -> float:
    """The bytes one GPU sends for a collective over ``group_size`` GPUs of ``data_bytes``
    (the gathered output, the scattered input, the reduced buffer): a ring's (n-1)/n of the
    data, twice for an all-reduce; the whole buffer for a permute or broadcast."""
    if opcode in _ONE_HOP:
        return float(data_bytes)
    if group_size <= 1:
        return 0.0
    share = (group_size - 1) / group_size
    return share * data_bytes * (2 if opcode in _TWICE else 1)


def single_host_collective_ns(
    device: CostDevice, opcode: str, data_bytes: int, group_size: int
) -> tuple[float, str]:
    """One collective on one host: latency + bytes on the wire at the measured share of the
    device's link bandwidth, with how it was found."""
    bandwidth, link, own = interconnect(device)
    latency, efficiency = collective_latency(), collective_efficiency()
    wire = wire_bytes(opcode, data_bytes, group_size)
    time_ns = latency.value + wire / (efficiency.value * bandwidth) * 1e9
    how = (
        f"hloidx's link model, not XLA's: {latency.value / 1e3:g} us latency + {wire:.0f} bytes "
        f"on the wire per GPU ({group_size} GPUs) at {efficiency.value:g} x {link}; latency and "
        f"efficiency measured on the A100 step ({latency.source}; {efficiency.source})"
    )
    if not own:
        how += "; no interconnect figures for this device: assumed"
    return time_ns, how


# -- kernels ---------------------------------------------------------------------------------


def apply_floor(cost: KernelCost, device: CostDevice) -> None:
    """The kernel floor added to ``cost`` (a whole-kernel time from a measured table is only
    raised to it)."""
    if cost.exec_time_ns is None:
        return
    floor = kernel_floor(device)
    if "measured GEMM table" in cost.emitter:
        if cost.exec_time_ns < floor.value:
            cost.exec_time_ns = floor.value
            cost.notes.append(
                f"raised to the kernel floor {floor.value / 1e3:g} us ({floor.label})"
            )
        return
    cost.exec_time_ns += floor.value
    cost.notes.append(f"+ the kernel floor {floor.value / 1e3:g} us ({floor.label})")


def _scatter_of(kernel: Kernel) -> Instruction | None:
    """The scatter a kernel's output comes from (its fusion's only root's hero)."""
    from ..gpu.emitter_choice import find_hero

    instr = kernel.instruction
    if instr.opcode == "scatter":
        return instr
    if kernel.fusion is None:
        return None
    try:
        roots = computation_outputs(body_of(kernel.fusion))
    except HloidxError:  # no fused computation: not a scatter fusion
        return None
    if len(roots) != 1:
        return None
    hero = find_hero(roots[0])
    return hero if hero.opcode == "scatter" else None


def _unique(scatter: Instruction) -> bool:
    return str(scatter.attributes.get("unique_indices", "false")).strip().lower() == "true"


def update_rows(scatter: Instruction) -> tuple[int, int] | None:
    """``(N, S)``: the number of update slices of a scatter and the elements of each."""
    if len(scatter.operands) < 3:
        return None
    updates = scatter.operands[-1].shape
    window = set(scatter.scatter_dimension_numbers.update_window_dims)
    n = prod(d for i, d in enumerate(updates.dims) if i not in window)
    s = prod(d for i, d in enumerate(updates.dims) if i in window)
    return n, s


def serialized_update_ns(device: CostDevice, slices: int) -> tuple[float, str]:
    """The time ``slices`` updates of one row take when they all collide: each element's
    updates serialize, one L2 round trip each (the row's elements proceed in parallel)."""
    entry = _read("measured_calibration.json")["l2_round_trip_cycles"]
    cycles = float(entry["value"])
    ns = slices * cycles / device.clock_rate_ghz
    how = (
        f"{slices} colliding updates x {cycles:g} cycles at {device.clock_rate_ghz:g} GHz "
        f"({entry['source']})"
    )
    return ns, how


def apply_data_range(kernel: Kernel, cost: KernelCost, device: CostDevice) -> None:
    """A scatter without ``unique_indices`` (rows may collide): the range of its time, from no
    collision (the estimate) to every update on one row."""
    if cost.exec_time_ns is None:
        return
    scatter = _scatter_of(kernel)
    if scatter is None or _unique(scatter):
        return
    rows = update_rows(scatter)
    if rows is None:
        return
    slices, _ = rows
    extra, how = serialized_update_ns(device, slices)
    low = cost.exec_time_ns
    cost.exec_time_range_ns = (low, low + extra)
    cost.range_reason = (
        f"{scatter.name} has no unique_indices: its {slices} update rows may collide; from no "
        f"collision (the estimate) to every update on one row (+ {how})"
    )
    cost.notes.append(
        f"time depends on the data: {low / 1e3:.2f} .. {(low + extra) / 1e3:.2f} us "
        "(exec_time_range_ns; the estimate assumes no collision)"
    )


def apply_l2_lines(cost: KernelCost, device: CostDevice) -> None:
    """An operand read out of order whose distinct bytes fit in L2 costs its lines once from
    DRAM: the parts of a line one warp does not use are read by others from L2. Its DRAM
    time is then that of a coalesced read (XLA's heuristic too stops scaling re-reads by the
    coalescing rate once the operand fits in L2)."""
    if cost.exec_time_ns is None or cost.kind == "library" or cost.tile_sizes is not None:
        return
    changed = []
    for operand in cost.operands:
        fits = 0 < operand.bytes_distinct < device.l2_cache_size
        if operand.utilization_rate >= 1.0 or not fits:
            continue
        time = read_time_ns(device, cost.blocks, operand.bytes_distinct, operand.bytes_read, 1.0)
        if time < operand.read_time_ns:
            operand.read_time_ns = time
            changed.append(operand.name)
    if not changed:
        return
    cost.read_time_ns = sum(o.read_time_ns for o in cost.operands)
    cost.exec_time_ns = combine_ns(cost.compute_time_ns, cost.read_time_ns + cost.write_time_ns)
    cost.notes.append(
        f"{', '.join(changed)}: read out of order but fits in L2: its lines come from DRAM "
        "once (the unused part of a line serves other warps from L2)"
    )


def calibrate_kernel(kernel: Kernel, cost: KernelCost, device: CostDevice) -> None:
    """The default model's measured additions to one kernel's estimate: an out-of-order
    operand that fits in L2 read a line at a time, the floor, then the range of a
    data-dependent kernel."""
    apply_l2_lines(cost, device)
    apply_floor(cost, device)
    apply_data_range(kernel, cost, device)


# -- contention with collectives -------------------------------------------------------------


def contention_factor() -> Figure:
    """How much longer a kernel takes while a collective is in flight beside it."""
    return _global("collective_contention_factor")


def _merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def contended_kernels(slices: list[Any]) -> dict[str, float]:
    """The kernels of a step's timeline that run while a collective is in flight, with the
    share of their time that does (a compute slice of kind ``kernel`` against the union of
    the communication slices)."""
    spans = _merged([(s.start_ns, s.end_ns) for s in slices if s.lane == "communication"])
    out: dict[str, float] = {}
    if not spans:
        return out
    for s in slices:
        length = s.end_ns - s.start_ns
        if s.lane != "compute" or s.kind != "kernel" or length <= 0:
            continue
        shared = sum(max(0.0, min(b, s.end_ns) - max(a, s.start_ns)) for a, b in spans)
        if shared > 0:
            out[s.name] = max(out.get(s.name, 0.0), min(1.0, shared / length))
    return out


def apply_contention(costs: list[KernelCost], slices: list[Any]) -> bool:
    """The kernels that run beside a collective in the step's timeline, the part that does
    slowed by the measured contention factor (NCCL's kernels take SMs and memory bandwidth);
    True when any was."""
    shares = contended_kernels(slices)
    if not shares:
        return False
    factor = contention_factor()
    changed = False
    for cost in costs:
        share = shares.get(cost.name)
        if share is None or cost.exec_time_ns is None:
            continue
        # the part of the kernel that shares the GPU with the collective runs slower
        scale = 1.0 + (factor.value - 1.0) * share
        cost.exec_time_ns *= scale
        if cost.exec_time_range_ns is not None:
            low, high = cost.exec_time_range_ns
            cost.exec_time_range_ns = (low * scale, high * scale)
        cost.notes.append(
            f"{share:.0%} of it runs while a collective is in flight: that part x "
            f"{factor.value:g} ({factor.source})"
        )
        changed = True
    return changed
