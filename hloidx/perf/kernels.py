"""Which instructions of the entry computation XLA:GPU runs as kernels, and how each is modelled.

A fusion is a kernel (its emitter decides the launch); a ``__triton`` fusion is a block-level
kernel (the tiled model); an unfused op that XLA:GPU emits with its own kernel (an elementwise
op, a reduce, a transpose, a copy...) is modelled as XLA models it, as a one-op fusion (XLA's
``HloFusionAnalysis::Create`` of a single instruction); library calls (cuBLAS, cuDNN custom
calls, unfused dots and convolutions) and sorts are kernels whose internals hloidx does not
model (a roofline of their flops and bytes). Parameters, constants, tuples, get-tuple-elements
and bitcasts launch nothing and cost 0; control flow, collectives and host transfers are listed
with the reason they get no row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..hlo.ir import Computation, HloModule, Instruction

if TYPE_CHECKING:
    pass

#: instructions that launch nothing
FREE = frozenset(
    {
        "parameter",
        "constant",
        "tuple",
        "get-tuple-element",
        "bitcast",
        "after-all",
        "add-dependency",
        "opt-barrier",
        "domain",
        "partition-id",
        "replica-id",
    }
)
#: ops XLA:GPU hands to a library or a kernel of its own that the model does not look inside
LIBRARY_OPS = frozenset(
    {
        "dot",
        "convolution",
        "custom-call",
        "sort",
        "fft",
        "cholesky",
        "triangular-solve",
        "rng-bit-generator",
        "rng",
        "top-k",
    }
)
_COLLECTIVE_WORDS = (
    "all-",
    "reduce-scatter",
    "collective-",
    "send",
    "recv",
    "async-",
    "copy-start",
    "copy-done",
    "infeed",
    "outfeed",
    "ragged-all-to-all",
)
_CONTROL = frozenset({"while", "conditional", "call"})


@dataclass
class Kernel:
    """One entry instruction and how it is modelled.

    ``kind``: ``fusion`` (a fusion with an emitter), ``triton`` (a block-level fusion),
    ``op`` (an unfused op, modelled as a one-op fusion ``fusion``), ``library``."""

    instruction: Instruction
    kind: str
    #: the fusion to model: the instruction itself, or a one-op fusion wrapping it
    fusion: Instruction | None = None


@dataclass(frozen=True)
class Skipped:
    """An entry instruction with no row, and why."""

    name: str
    opcode: str
    reason: str


def _skip_reason(instr: Instruction) -> str | None:
    op = instr.opcode
    if op in FREE:
        return "launches no kernel (cost 0)"
    if op in _CONTROL:
        return (
            f"control flow ({op}): its computations' kernels run a number of times hloidx "
            "does not know; they are not estimated"
        )
    if any(op.startswith(w) for w in _COLLECTIVE_WORDS) or op.endswith("-done"):
        return f"{op}: communication or host transfer, not a compute kernel; not estimated"
    return None


def _is_triton(fusion: Instruction) -> bool:
    kind = (fusion.fusion_kind or "").lower()
    config = fusion.attributes.get("backend_config", "")
    return kind in ("kcustom", "custom") and "__triton" in config and "gemm" not in config


def _is_library_fusion(fusion: Instruction) -> bool:
    """A custom fusion XLA hands to a library or to Triton's GEMM emitter (cuBLAS, cuDNN)."""
    kind = (fusion.fusion_kind or "").lower()
    config = fusion.attributes.get("backend_config", "")
    return kind in ("kcustom", "custom") and (
        "gemm" in config or "cudnn" in config or "cublas" in config
    )


def wrap_as_fusion(instr: Instruction, module: HloModule) -> Instruction:
    """A one-op fusion of ``instr`` (its operands become the fusion's parameters), in a module
    of its own that shares ``module``'s computations; ``module`` is left unchanged."""
    body = Computation(f"{instr.name}.__one_op")
    params = []
    for k, operand in enumerate(instr.operands):
        p = Instruction(f"param_{k}", "parameter", operand.shape, literal=str(k))
        p.computation = body
        params.append(p)
    clone = Instruction(
        instr.name,
        instr.opcode,
        instr.shape,
        operands=params,
        attributes=dict(instr.attributes),
        attribute_offsets=dict(instr.attribute_offsets),
        span=instr.span,
        is_root=True,
        literal=instr.literal,
    )
    clone.computation = body
    body.instructions = [*params, clone]
    kind = "kInput" if instr.opcode in ("reduce", "scatter") else "kLoop"
    fusion = Instruction(
        instr.name,
        "fusion",
        instr.shape,
        operands=list(instr.operands),
        attributes={"kind": kind, "calls": body.name},
        span=instr.span,
    )
    holder = Computation(f"{instr.name}.__holder", instructions=[fusion], is_entry=True)
    fusion.computation = holder
    wrapper = HloModule(
        module.name,
        dict(module.attributes),
        {**module.computations, body.name: body, holder.name: holder},
        holder,
        module.source,
    )
    body.module = wrapper
    holder.module = wrapper
    return fusion


def find_kernels(module: HloModule) -> tuple[list[Kernel], list[Skipped]]:
    """Every kernel of the entry computation, and every other instruction with its reason."""
    kernels: list[Kernel] = []
    skipped: list[Skipped] = []
    entry = module.entry
    if entry is None:
        return kernels, skipped
    for instr in entry.instructions:
        op = instr.opcode
        reason = _skip_reason(instr)
        if reason is not None:
            skipped.append(Skipped(instr.name, op, reason))
            continue
        if op == "fusion":
            if _is_triton(instr):
                kernels.append(Kernel(instr, "triton", instr))
            elif _is_library_fusion(instr):
                kernels.append(Kernel(instr, "library", instr))
            else:
                kernels.append(Kernel(instr, "fusion", instr))
        elif op in LIBRARY_OPS:
            kernels.append(Kernel(instr, "library"))
        else:
            kernels.append(Kernel(instr, "op", wrap_as_fusion(instr, module)))
    return kernels, skipped
