"""What the language server estimates for a kernel: which computations launch kernels, and
one instruction's estimated cost (:mod:`hloidx.perf`, imported when first asked)."""

from __future__ import annotations

from typing import Any

__all__ = ["estimate_kernel_cost", "kernel_computations"]


def kernel_computations(module: Any) -> set[str]:
    """The entry computation and what it runs as control flow (while bodies, calls): the
    computations whose instructions launch kernels."""
    found: set[str] = set()
    if module.entry is None:
        return found
    todo = [module.entry]
    while todo:
        comp = todo.pop()
        if comp.name in found:
            continue
        found.add(comp.name)
        for instr in comp.instructions:
            if instr.opcode in ("while", "call", "conditional"):
                for called in instr.called_computations.values():
                    todo.extend(called)
    return found


def estimate_kernel_cost(module: Any, instr: Any, device: str) -> Any:
    """The estimated cost (a ``KernelCost``) of the kernel ``instr`` launches, or a sentence
    saying why it has none."""
    from ..errors import HloidxError
    from ..hlo.ir import Computation, HloModule
    from ..perf.devices import cost_device
    from ..perf.kernels import FREE, find_kernels
    from ..perf.report import estimate_kernel

    if instr.opcode in ("while", "call", "conditional"):
        return "control flow: the kernels of its computations have their own rows"
    if instr.opcode in FREE:
        return "launches no kernel (cost 0)"
    holder = Computation(f"{instr.name}.__hover", [instr], is_entry=True)
    shell = HloModule(module.name, module.attributes, module.computations, holder, None)
    try:
        profile = cost_device(device)
        kernels, skipped = find_kernels(shell)
        if not kernels:
            return skipped[0].reason if skipped else "launches no kernel"
        return estimate_kernel(kernels[0], profile)
    except HloidxError as error:
        return f"not estimated: {error.message}"
    except Exception as error:
        return f"not estimated (internal error: {type(error).__name__}: {error})"
