"""A fusion as XLA's ``GpuHloCostAnalysis`` counts it (``HandleFusion``): output bytes with the
in-place ``dynamic-update-slice`` root, the utilization of every fused instruction propagated
from the roots (``FusionCalculateUtilizations``), large constants, and each parameter's bytes
as ``size × utilization`` (``FusionParameterReadBytes``).

``analysis`` is a :class:`hloidx.perf.xla_cost_analysis.GpuCostAnalysis` (not imported here:
the analysis calls this module).
"""

from __future__ import annotations

from collections import defaultdict
from math import ceil, floor
from typing import TYPE_CHECKING, Any

from ..hlo.fusion import body_of
from .xla_cost_base import (
    IMMEDIATE_CONSTANT_MAX_ELEMENTS,
    Props,
    elements_recursive,
    f32,
    is_elementwise,
    operand_key,
    out_key,
    post_order,
    shape_size,
    util_key,
)

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape


def llround(x: float) -> int:
    """C's ``llround``: halves away from zero."""
    return floor(x + 0.5) if x >= 0 else -floor(-x + 0.5)


def fusion_props(analysis: Any, fusion: Instruction) -> Props:
    body = body_of(fusion)
    if (fusion.fusion_kind or "").lower() in ("kcustom", "custom"):
        # a custom fusion holding a gather or a scatter is costed as that op alone
        for instr in body.instructions:
            if instr.opcode in ("gather", "scatter"):
                p = analysis.preprocess(fusion)
                handler = analysis.gather if instr.opcode == "gather" else analysis.scatter
                return handler(instr, p)
    p = Props(analysis.analyze(body))
    p["bytes"] = 0.0
    _output_bytes(analysis, fusion, body.root, p)
    _utilizations(analysis, body, p)
    props = analysis.properties
    for instr in body.instructions:
        if (
            instr.opcode == "constant"
            and elements_recursive(instr.shape) > IMMEDIATE_CONSTANT_MAX_ELEMENTS
        ):
            utilization = props[id(instr)]["utilization"]
            if not analysis.count_multiple:
                utilization = min(utilization, 1.0)
            p["bytes"] = f32(p["bytes"] + shape_size(instr.shape) * utilization)
    params = {q.parameter_number: q for q in body.parameters}
    for k in range(len(fusion.operands)):
        param = params.get(k)
        if param is None:
            continue
        size = _parameter_bytes(analysis, body, param)
        p["bytes"] = f32(p["bytes"] + size)
        p[operand_key(k)] = float(size)
        p[util_key(k)] = props[id(param)]["utilization"]
    return p


def _read_bytes(analysis: Any, instr: Instruction) -> int:
    utilization = analysis.properties[id(instr)]["utilization"]
    if not analysis.count_multiple:
        utilization = min(utilization, 1.0)
    return llround(shape_size(instr.shape) * utilization)


def _parameter_bytes(analysis: Any, body, param: Instruction) -> int:
    if not param.shape.is_tuple:
        return _read_bytes(analysis, param)
    total = 0
    for j in range(len(param.shape.tuple_shapes or ())):
        gte = next(
            (
                u
                for u in body.instructions
                if u.opcode == "get-tuple-element"
                and u.operands
                and u.operands[0] is param
                and u.tuple_index == j
            ),
            param,
        )
        total += _read_bytes(analysis, gte)
    return total


def _output_bytes(analysis: Any, fusion: Instruction, root: Instruction, p: Props) -> None:
    """``FusionProcessOutputBytesAccessed``."""

    def visit(shape: Shape, index: tuple[int, ...]) -> None:
        if shape.is_tuple:
            for j, sub in enumerate(shape.tuple_shapes or ()):
                visit(sub, (*index, j))
            return
        if not shape.is_array:
            return
        r = root
        if len(index) == 1 and root.opcode == "tuple":
            r = root.operands[index[0]]
        if r.opcode == "dynamic-update-slice":
            size = shape_size(r.operands[1].shape)
            p["bytes"] += size
            p[out_key(index)] = float(size)
            analysis.properties[id(r)][util_key(0)] = 0.0
            return
        p["bytes"] += shape_size(shape)
        p[out_key(index)] = float(shape_size(shape))

    visit(fusion.shape, ())
    if fusion.shape.is_tuple:
        p[out_key(())] = 0.0

        def propagate(shape: Shape, index: tuple[int, ...]) -> float:
            if p[out_key(index)] != 0 or not shape.is_tuple:
                return p[out_key(index)]
            for j, sub in enumerate(shape.tuple_shapes or ()):
                p[out_key(index)] += propagate(sub, (*index, j))
            return p[out_key(index)]

        propagate(fusion.shape, ())


def _passes_roots(instr: Instruction, operand: Instruction) -> bool:
    """Whether ``instr`` reads ``operand`` element for element (the roots pass through)."""
    if instr.opcode in ("tuple", "get-tuple-element") or is_elementwise(instr):
        return True
    return (
        instr.opcode == "bitcast"
        and operand.shape.dims == instr.shape.dims
        and operand.shape.layout == instr.shape.layout
    )


def _utilizations(analysis: Any, body, p: Props) -> None:
    """``GpuHloCostAnalysis::FusionCalculateUtilizations``."""
    props = analysis.properties
    roots = analysis.elementwise_use_roots
    root_util = analysis.root_utilizations
    order = list(reversed(post_order(body)))
    root_ir: dict[int, float] = defaultdict(float)
    for instr in order:
        props[id(instr)]["utilization"] = 0.0
        props[id(instr)]["ir_size"] = 0.0
        roots[id(instr)] = set()
        root_util[id(instr)] = 0.0
    root = body.root
    root_util[id(root)] = 1.0
    root_ir[id(root)] = 1.0
    roots[id(root)].add(id(root))
    p["flops"] = 0.0
    p["ir_size"] = 0.0
    for instr in order:
        mine = props[id(instr)]
        for r in roots[id(instr)]:
            mine["utilization"] = f32(mine["utilization"] + root_util[r])
            mine["ir_size"] += root_ir[r]
        utilization = mine["utilization"]
        emitted = mine["ir_size"]
        p["flops"] = f32(p["flops"] + f32(utilization * mine["flops"]))
        p["ir_size"] += emitted
        for k, operand in enumerate(instr.operands):
            if id(operand) not in roots:
                continue
            if _passes_roots(instr, operand):
                roots[id(operand)] |= roots[id(instr)]
                continue
            roots[id(operand)].add(id(operand))
            share = f32(utilization * mine[util_key(k)])
            n = elements_recursive(operand.shape)
            share = 0.0 if n == 0 else f32(ceil(f32(share * n)) / n)
            root_util[id(operand)] = f32(root_util[id(operand)] + share)
            root_ir[id(operand)] += emitted
