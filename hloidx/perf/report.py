"""``estimate_module``: every kernel of a module with its estimated cost, as a report (the JSON
document of ``hloidx cost --format json`` and the text table)."""

from __future__ import annotations

from copy import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import HloidxError
from ..hlo.fusion import body_of
from ..hlo.ir import CALL_ATTRIBUTES, INDEXING_IRRELEVANT_ATTRIBUTES
from ..hlo.sharing import structure_key
from .backend_config import read_backend_config
from .calibration import apply_contention, calibrate_kernel, launch_gap
from .costs import KernelCost
from .devices import CostDevice
from .fusion_model import estimate_fusion
from .gpu_specs import resolve_device
from .kernels import Kernel, Skipped, wrap_as_fusion
from .library import estimate_library
from .loops import Loop, Program, walk_module
from .model import KERNEL_LAUNCH_OVERHEAD_NS
from .stage import Stage, module_stage
from .step import CollectiveTimer, StepResult, simulate_step
from .tiled import NotTileable, best_tiling, configured_tiling, estimate_tiled, num_output_tiles
from .why import explain
from .xla_kernel_cost import TIMED_INDEXING, classic_kernel_cost

if TYPE_CHECKING:
    from ..hlo.ir import HloModule

MODELS = ("xla", "hloidx")
SORT_KEYS = ("time", "bytes", "flops", "name")


@dataclass
class CostReport:
    module: str
    device: CostDevice
    model: str
    kernels: list[KernelCost]
    skipped: list[Skipped] = field(default_factory=list)
    #: the module's loops, its step on a timeline and its stage (``estimate_module`` fills them)
    loops: list[Loop] = field(default_factory=list)
    step: StepResult | None = None
    stage: Stage | None = None
    #: the time per launch between kernels: XLA's 1 µs, the measured launch gap in hloidx's
    launch_ns: float = KERNEL_LAUNCH_OVERHEAD_NS
    #: a measured profile joined onto the rows (``hloidx.perf.measured.join_measured``)
    measured: Any = None

    @property
    def total_time_ns(self) -> float:
        """Sum of the kernels' estimates plus ``launch_ns`` per launch."""
        return self.kernels_time_ns + self.launch_ns * self.launches

    @property
    def launches(self) -> int:
        return sum(k.launches for k in self.kernels)

    @property
    def kernels_time_ns(self) -> float:
        return sum(k.time_ns for k in self.kernels)

    def sorted(self, key: str = "time") -> list[KernelCost]:
        if key not in SORT_KEYS:
            raise HloidxError(f"unknown sort key {key!r}; one of {', '.join(SORT_KEYS)}")
        if key == "name":
            return sorted(self.kernels, key=lambda k: k.name)
        value = {
            "time": lambda k: (k.exec_time_ns is not None, k.time_ns),
            "bytes": lambda k: (True, k.bytes_read + k.bytes_written),
            "flops": lambda k: (True, k.flops),
        }[key]
        return sorted(self.kernels, key=value, reverse=True)

    def as_dict(self, sort: str = "time", limit: int | None = None) -> dict[str, Any]:
        rows = self.sorted(sort)
        if limit is not None:
            rows = rows[:limit]
        total = self.kernels_time_ns
        doc = {
            "schema_version": 1,
            "module": self.module,
            "device": self.device.name,
            "model": self.model,
            "estimate": "estimated from XLA's GPU cost model formulas, not measured",
            "share_of": "the kernels' estimated time, launch overhead excluded",
            "stage": None if self.stage is None else self.stage.as_json(),
            "kernels": [_with_count(k.as_json(total), k.launches) for k in rows]
            + [c.as_json() for c in self.collective_rows()],
            "not_kernels": [
                {"name": s.name, "opcode": s.opcode, "reason": s.reason} for s in self.skipped
            ],
            "totals": {
                "kernels": len(self.kernels),
                "kernels_time_ns": round(total, 3),
                "launches": self.launches,
                "launch_overhead_ns": self.launch_ns * self.launches,
                "bytes_read": sum(k.bytes_read for k in self.kernels),
                "bytes_written": sum(k.bytes_written for k in self.kernels),
                "flops": sum(k.flops for k in self.kernels),
                "not_fitting": sum(1 for k in self.kernels if k.exec_time_ns is None),
            },
            "total_time_ns": round(self.total_time_ns, 3),
            "loops": [loop.as_json() for loop in self.loops],
            "step": None if self.step is None else self.step.as_json(),
        }
        if self.measured is not None:
            self.measured.annotate(doc)
        return doc

    def collective_rows(self) -> list[Any]:
        """The collectives' rows, most exposed first, then the longest."""
        if self.step is None:
            return []
        return sorted(
            self.step.collectives, key=lambda r: (r.total_exposed_ns, r.time_ns), reverse=True
        )

    def text(self, sort: str = "time", limit: int | None = None) -> str:
        from .text import report_text

        return report_text(self, sort, limit)

    def __str__(self) -> str:
        return self.text()


def _with_count(row: dict[str, Any], count: int) -> dict[str, Any]:
    row["count"] = count
    return row


def _op_key(instr: Any) -> tuple[Any, ...]:
    """What the one-op fusion of an unfused op is, without names: its structure key's content
    (opcode, shapes, literal, relevant attributes, called structures), read from the op."""
    attributes = tuple(
        sorted(
            (k, v)
            for k, v in instr.attributes.items()
            if k not in INDEXING_IRRELEVANT_ATTRIBUTES and k not in CALL_ATTRIBUTES
        )
    )
    called = (
        tuple(
            (key, tuple(structure_key(c) for c in comps))
            for key, comps in instr.called_computations.items()
        )
        if any(k in instr.attributes for k in CALL_ATTRIBUTES)
        else ()
    )
    return (
        "op",
        instr.opcode,
        instr.shape,
        instr.literal,
        tuple(o.shape for o in instr.operands),
        attributes,
        called,
    )


def _fingerprint(kernel: Kernel) -> Any:
    """The kernel's computation without names (what ``--compare`` matches kernels by)."""
    instr = kernel.instruction
    if kernel.kind == "op" and kernel.fusion is None:
        return _op_key(instr)
    if kernel.fusion is None:
        return (instr.opcode, str(instr.shape), tuple(str(o.shape) for o in instr.operands))
    try:
        return (instr.opcode, structure_key(body_of(kernel.fusion)))
    except HloidxError:
        return None


def _estimate_key(kernel: Kernel) -> Any:
    """Equal keys, equal estimates: the computation, the fusion kind and its configuration."""
    if kernel.kind == "op" and kernel.fusion is None:
        return _op_key(kernel.instruction)
    if kernel.kind == "library" or kernel.fusion is None or kernel.note:
        return None
    found = _fingerprint(kernel)
    if found is None:
        return None
    fusion = kernel.fusion
    return (kernel.kind, fusion.fusion_kind, fusion.attributes.get("backend_config", ""), found)


def _heaviest(kernel: Kernel, index: int) -> str:
    """The instruction at ``index`` of the kernel's fused computation, as ``opcode name``."""
    if kernel.kind == "op" and kernel.fusion is None:
        # the one-op fusion: its parameters, then the op
        instr = kernel.instruction
        if index == len(instr.operands):
            return f"{instr.opcode} {instr.name}"
        return f"parameter param_{index}" if 0 <= index < len(instr.operands) else ""
    if kernel.fusion is None or index < 0:
        return ""
    instructions = body_of(kernel.fusion).instructions
    if index >= len(instructions):
        return ""
    instr = instructions[index]
    return f"{instr.opcode} {instr.name}"


def _renamed(template: KernelCost, kernel: Kernel) -> KernelCost:
    """A copy of an equal kernel's estimate, with this kernel's names."""
    instr = kernel.instruction
    # shallow copies (``dataclasses.replace`` re-runs ``__init__``: a third of the time of a
    # module of 18k equal ops); every field set here, the rest shared read-only
    operands = []
    for o in template.operands:
        op = copy(o)
        if o.index < len(instr.operands):
            op.name = instr.operands[o.index].name
        operands.append(op)
    cost = copy(template)
    cost.heaviest_op = _heaviest(kernel, template.heaviest_index)
    cost.name = kernel.name
    cost.operands = operands
    cost.notes = list(template.notes)
    cost.launches = kernel.repeats
    cost.why = explain(cost)
    if cost.timed_by:
        cost.why = _with_model(cost)
    return cost


def _with_model(cost: KernelCost) -> str:
    """The row's reason led by the XLA model that timed it, XLA's quirks after it."""
    quirks = [n.split(", though")[0].split(" (")[0] for n in cost.notes if n.startswith("XLA's q")]
    return "; ".join([f"{cost.timed_by}: {cost.why}", *quirks])


def _estimate_triton(kernel: Kernel, device: CostDevice, model: str) -> KernelCost:
    fusion = kernel.fusion
    assert fusion is not None
    sizes, warps = configured_tiling(fusion)
    try:
        if sizes:
            launch = None
            if warps is not None:
                launch = (num_output_tiles(fusion, tuple(sizes[0])), warps * device.warp_size)
            cost = estimate_tiled(fusion, device, tuple(sizes[0]), launch).cost
            cost.notes.append("tiling from block_level_fusion_config")
            return cost
        best = best_tiling(fusion, device)
        if best is not None:
            best.cost.notes.append(
                "no block_level_fusion_config: the fastest tiling of XLA's search"
            )
            return best.cost
        why = "no tiling fits in registers"
    except NotTileable as e:
        why = str(e)
    cost = estimate_fusion(fusion, device, model)
    cost.notes.append(f"the tiled model does not apply ({why}): estimated as a fusion")
    return cost


def estimate_kernel(kernel: Kernel, device: CostDevice, model: str = "hloidx") -> KernelCost:
    """The estimate of one kernel by ``model``."""
    instr = kernel.instruction
    fingerprint = _fingerprint(kernel)
    if kernel.kind == "op" and kernel.fusion is None:
        module = instr.computation.module if instr.computation is not None else None
        if module is None:
            raise HloidxError(f"{instr.name} belongs to no module")
        kernel.fusion = wrap_as_fusion(instr, module)
    if kernel.kind == "library" or kernel.fusion is None:
        cost = estimate_library(instr, device, model)
    elif kernel.kind == "triton":
        cost = _estimate_triton(kernel, device, model)
        if model == "hloidx" and cost.tile_sizes is not None:
            cost.notes.append("the tiled model is XLA's in both models (hloidx adds nothing)")
        if model == "xla":
            # priority fusion times Triton fusions with the indexing model
            cost.timed_by = TIMED_INDEXING
    elif model == "xla":
        # XLA's SoL latency estimator and priority fusion time other kernels with the classic
        # GpuPerformanceModel over GpuHloCostAnalysis, on the kernel as it is in the module
        cost = classic_kernel_cost(instr, device)
    else:
        cost = estimate_fusion(kernel.fusion, device, model)
    cost.name = kernel.name
    cost.heaviest_op = _heaviest(kernel, cost.heaviest_index)
    cost.opcode = instr.opcode
    cost.launches = kernel.repeats
    if kernel.kind == "op":
        cost.kind = "unfused op"
    if kernel.note:
        cost.notes.append(kernel.note)
    config = read_backend_config(instr)
    if not config.readable:
        cost.notes.append(f"{instr.name}: {config.error}; estimated without it")
    cost.fingerprint = fingerprint
    if model == "hloidx":
        calibrate_kernel(kernel, cost, device)
    cost.why = explain(cost)
    if cost.timed_by:
        cost.why = _with_model(cost)
    return cost


def _as_module(module_or_text: HloModule | str) -> HloModule:
    if isinstance(module_or_text, str):
        from ..hlo.syntax import parse_hlo

        return parse_hlo(module_or_text)
    return module_or_text


def estimate_module(
    module_or_text: HloModule | str,
    device: str | CostDevice = "rtx-a6000",
    model: str = "hloidx",
    collective_time: CollectiveTimer | None = None,
    gpus_per_node: int = 8,
    collective_config: dict[str, str] | None = None,
) -> CostReport:
    """Every kernel of the module's entry computation (and of its loops, calls and
    conditionals), estimated on ``device`` by ``model`` (``hloidx``: distinct bytes and
    thread-map coalescing; ``xla``: what XLA uses where it uses it, its classic
    ``GpuPerformanceModel`` for non-Triton kernels and its indexing model for Triton fusions),
    with the step on a timeline.
    ``collective_time``: the duration of a collective; by default XLA's
    ``SolLatencyEstimator`` (:func:`hloidx.perf.collectives.collective_timer`, with
    ``gpus_per_node`` and XLA's ``collective_config`` options), which gives None (not
    estimated, with its reason) where XLA has no estimate."""
    if model not in MODELS:
        raise HloidxError(f"unknown cost model {model!r}; one of {', '.join(MODELS)}")
    module = _as_module(module_or_text)
    profile = resolve_device(device)
    program = walk_module(module, model)
    kernels, skipped = program.kernels, program.skipped
    costs = []
    seen: dict[Any, KernelCost] = {}
    for kernel in kernels:
        try:
            key = _estimate_key(kernel)
            if key is not None and key in seen:
                costs.append(_renamed(seen[key], kernel))
                continue
            cost = estimate_kernel(kernel, profile, model)
            costs.append(cost)
            if key is not None:
                seen[key] = cost
        except HloidxError as e:
            skipped.append(Skipped(kernel.name, kernel.instruction.opcode, str(e)))
    report = CostReport(module.name, profile, model, costs, skipped)
    report.loops = program.loops
    report.stage = module_stage(module)
    if collective_time is None:
        from .collectives import collective_timer

        collective_time = collective_timer(module, profile, gpus_per_node, collective_config, model)
    if model == "hloidx":
        report.launch_ns = launch_gap(profile).value
    report.step = step_of(program, costs, collective_time, report.launch_ns)
    if model == "hloidx" and apply_contention(costs, report.step.slices):
        # the kernels beside a collective are slower: the step again with their times
        report.step = step_of(program, costs, collective_time, report.launch_ns)
    for cost in costs:
        if cost.name in report.step.inactive_kernels:
            cost.launches = 0
            cost.notes.append("in a conditional's branch that is not counted (count 0)")
    return report


def step_of(
    program: Program,
    costs: list[KernelCost],
    collective_time: CollectiveTimer | None,
    launch_ns: float = KERNEL_LAUNCH_OVERHEAD_NS,
) -> StepResult:
    """The program's step with each kernel row's estimate plus ``launch_ns`` per launch
    (XLA's launch overhead; the measured launch gap in hloidx's model)."""
    by_name = {c.name: c for c in costs}

    def kernel_ns(kernel: Kernel) -> float | None:
        cost = by_name.get(kernel.name)
        if cost is None:
            return None
        return (cost.exec_time_ns or 0.0) + launch_ns

    return simulate_step(program, kernel_ns, collective_time)
