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

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..hlo.ir import Computation, HloModule, Instruction
from .backend_config import fusion_kind_of, is_dynamic_slice_fusion
from .in_place import aliased_operands, copy_reason
from .trip_count import known_trip_count

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
    #: the row's name: the instruction's, behind its while loops' (``while.6/fusion.2``)
    name: str = ""
    #: times it is launched: the product of the enclosing loops' known trip counts
    repeats: int = 1
    #: why the kernel is there when the text does not show it (a copy XLA inserts)
    note: str = ""

    def __post_init__(self) -> None:
        self.name = self.name or self.instruction.name


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
    if (op == "while" and known_trip_count(instr) is not None) or op == "call":
        return None
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


#: custom fusions a library runs: XLA:CPU's YNNPACK and oneDNN fusions
_LIBRARY_FUSION_KINDS = frozenset({"__ynn_fusion", "__onednn_fusion"})


def _is_library_fusion(fusion: Instruction) -> bool:
    """A custom fusion XLA hands to a library or to Triton's GEMM emitter (cuBLAS, cuDNN),
    XLA:CPU's library fusions (YNNPACK, oneDNN), and XLA:GPU's ``DynamicSliceFusion`` (a
    library call on slices whose addresses are computed at run time)."""
    kind = (fusion.fusion_kind or "").lower()
    config = fusion.attributes.get("backend_config", "")
    if kind not in ("kcustom", "custom"):
        return False
    if fusion_kind_of(fusion) in _LIBRARY_FUSION_KINDS or is_dynamic_slice_fusion(fusion):
        return True
    return "gemm" in config or "cudnn" in config or "cublas" in config


#: the computations of each module's one-op fusions: ``module``'s and theirs (one table for all
#: the wrappers of a module: a copy per wrapper made 19k wraps of a 2.9k-computation module
#: quadratic, 15 s of Llama 3.1 8B's 25)
_WRAPPED: weakref.WeakKeyDictionary[HloModule, dict[str, Computation]] = weakref.WeakKeyDictionary()


def _wrapped_computations(module: HloModule) -> dict[str, Computation]:
    table = _WRAPPED.get(module)
    if table is None:
        table = _WRAPPED[module] = dict(module.computations)
    return table


def _free_name(table: dict[str, Computation], name: str) -> str:
    found, k = name, 1
    while found in table:
        k += 1
        found = f"{name}.{k}"
    return found


def wrap_as_fusion(instr: Instruction, module: HloModule) -> Instruction:
    """A one-op fusion of ``instr`` (its operands become the fusion's parameters), in a module
    of its own that shares ``module``'s computations; ``module`` is left unchanged."""
    table = _wrapped_computations(module)
    body = Computation(_free_name(table, f"{instr.name}.__one_op"))
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
    holder = Computation(
        _free_name(table, f"{instr.name}.__holder"), instructions=[fusion], is_entry=True
    )
    fusion.computation = holder
    table[body.name] = body
    table[holder.name] = holder
    wrapper = HloModule(module.name, dict(module.attributes), table, holder, module.source)
    body.module = wrapper
    holder.module = wrapper
    return fusion


def find_kernels(module: HloModule) -> tuple[list[Kernel], list[Skipped]]:
    """Every kernel of the entry computation (and of the bodies of its while loops with a
    known trip count, launched that many times), and every other instruction with its
    reason."""
    kernels: list[Kernel] = []
    skipped: list[Skipped] = []
    if module.entry is not None:
        _collect(module, module.entry, "", 1, kernels, skipped, 0)
    return kernels, skipped


def _collect(
    module: HloModule,
    comp: Computation,
    prefix: str,
    repeats: int,
    kernels: list[Kernel],
    skipped: list[Skipped],
    depth: int,
) -> None:
    for instr in comp.instructions:
        op = instr.opcode
        name = prefix + instr.name
        reason = _skip_reason(instr)
        if reason is not None:
            skipped.append(Skipped(name, op, reason))
            continue
        if op == "call":
            body = (instr.called_computations.get("to_apply") or [None])[0]
            if body is None or depth > 8:
                skipped.append(Skipped(name, op, "control flow (call): no computation"))
                continue
            skipped.append(
                Skipped(name, op, f"a call (XLA inlines it): its kernels are rows named {name}/...")
            )
            _collect(module, body, name + "/", repeats, kernels, skipped, depth + 1)
            continue
        if op == "while":
            trips = known_trip_count(instr) or 0
            called = instr.called_computations
            body = (called.get("body") or [None])[0]
            condition = (called.get("condition") or [None])[0]
            if body is None or depth > 8:
                skipped.append(Skipped(name, op, "control flow (while): no body to estimate"))
                continue
            skipped.append(
                Skipped(
                    name,
                    op,
                    f"control flow (while, {trips} trips): its body's kernels are rows "
                    f"named {name}/..., launched {trips} times each",
                )
            )
            _collect(module, body, name + "/", repeats * trips, kernels, skipped, depth + 1)
            if condition is not None:
                inner = name + "/condition/"
                count = repeats * (trips + 1)
                _collect(module, condition, inner, count, kernels, skipped, depth + 1)
            continue
        kernels.append(kernel_of(instr, module, name, repeats))


def kernel_of(instr: Instruction, module: HloModule, name: str, repeats: int) -> Kernel:
    """The kernel an instruction that launches one is modelled as."""
    if instr.opcode == "fusion":
        if _is_triton(instr):
            kind = "triton"
        elif _is_library_fusion(instr):
            kind = "library"
        else:
            kind = "fusion"
        return Kernel(instr, kind, instr, name, repeats)
    if instr.opcode in LIBRARY_OPS:
        return Kernel(instr, "library", None, name, repeats)
    return Kernel(instr, "op", wrap_as_fusion(instr, module), name, repeats)


_IN_PLACE_OPS = frozenset({"fusion", "dynamic-update-slice", "scatter", "custom-call"})


def copies_before(instr: Instruction, module: HloModule, prefix: str, repeats: int) -> list[Kernel]:
    """The copies XLA's copy insertion puts before the in-place kernel ``instr``: one per
    operand whose buffer the kernel cannot update where it is (:func:`.in_place.copy_reason`),
    each a kernel of its own, as in XLA's optimized HLO."""
    if instr.opcode not in _IN_PLACE_OPS:
        return []
    out = []
    for k in aliased_operands(instr):
        if k >= len(instr.operands):
            continue
        operand = instr.operands[k]
        reason = copy_reason(instr, operand)
        if not reason:
            continue
        name = f"copy.{operand.name}"
        copy = Instruction(name, "copy", operand.shape, [operand], span=instr.span)
        copy.computation = instr.computation
        note = f"a copy XLA inserts before {instr.name} updates it in place: {reason}"
        fusion = wrap_as_fusion(copy, module)
        out.append(Kernel(copy, "op", fusion, prefix + copy.name, repeats, note))
    return out
