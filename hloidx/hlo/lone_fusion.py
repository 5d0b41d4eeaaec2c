"""A fused computation on its own is a kernel too: wrap it as a fusion in a synthetic entry.

XLA's emitter tests (``xla/backends/gpu/codegen/emitters/tests/``, ``xla/codegen/emitters/
tests/``) and computations copied out of a dump hold just a fused computation. XLA's test
tools load them with ``LoadTestModule`` (``xla/codegen/tools/test_lib.cc``): when the entry
computation has no fusion, a new entry ``generated_main`` is built whose only instruction is a
fusion of the old entry, its parameters the fusion's operands. ``wrap_lone_fusion`` does the
same for a module that has no fusion instruction anywhere and either no computation marked
``ENTRY`` (the last computation is the fused body, XLA's rule for such text) or, besides a
declared entry, exactly one computation nothing calls whose name says it is fused
(``fused_computation.3``, ``fusion``). The fusion's kind comes from its root, which XLA's
loader leaves as kLoop ("irrelevant"): kInput when a root is (a unary chain above) a
reduction, kLoop otherwise. ``lone_fusion_note`` says what was done, for the output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .assembly import SNIPPET_MODULE
from .ir import Computation, Instruction
from .rules.basic import ELEMENTWISE

if TYPE_CHECKING:
    from .ir import HloModule

#: XLA's name for the entry ``LoadTestModule`` builds
GENERATED_ENTRY = "generated_main"

#: what a root is looked through to find a reduction (XLA's FindNonTrivialHero walks unary
#: elementwise ops and bitcasts)
_PASS_THROUGH = frozenset(op for op in ELEMENTWISE if op != "copy") | {"bitcast", "reshape"}


def _declares_entry(comp: Computation) -> bool:
    """Whether the text marks ``comp`` with ``ENTRY`` (a computation built in code counts as
    declared: only text without the mark is read as a lone fused body)."""
    span = comp.span
    if span is None:
        return True
    return span.source.text[: span.start].rstrip().endswith("ENTRY")


def _looks_fused(name: str) -> bool:
    return name.startswith(("fused", "fusion"))


def _called(module: HloModule) -> set[int]:
    called: set[int] = set()
    for instr in module.instructions():
        for comps in instr.called_computations.values():
            called.update(id(c) for c in comps)
    return called


def lone_fused_computation(module: HloModule) -> Computation | None:
    """The computation ``wrap_lone_fusion`` would wrap, or None (see the module's doc)."""
    if module.name == SNIPPET_MODULE or module.entry is None:
        return None
    if any(i.opcode == "fusion" for i in module.instructions()):
        return None
    if not _declares_entry(module.entry):
        body = module.entry
    else:
        called = _called(module)
        lone = [
            c
            for c in module.computations.values()
            if c is not module.entry and id(c) not in called and _looks_fused(c.name)
        ]
        if len(lone) != 1:
            return None
        body = lone[0]
    if body.root is None:
        return None
    numbers = sorted(p.parameter_number for p in body.parameters)
    if any(n != k for k, n in enumerate(numbers)):
        return None
    return body


def _reduction_root(body: Computation) -> Instruction | None:
    root = body.root
    roots = list(root.operands) if root is not None and root.opcode == "tuple" else [root]
    for r in roots:
        hero = r
        while hero is not None and hero.opcode in _PASS_THROUGH and len(hero.operands) == 1:
            hero = hero.operands[0]
        if hero is not None and hero.opcode == "reduce":
            return hero
    return None


def _free_name(module: HloModule, name: str) -> str:
    candidate, k = name, 1
    while candidate in module.computations:
        k += 1
        candidate = f"{name}.{k}"
    return candidate


def wrap_lone_fusion(module: HloModule) -> HloModule:
    """``module`` with its lone fused computation wrapped as a fusion instruction (named like
    the computation) in a synthetic entry ``generated_main``, as XLA's test tools load such a
    file; ``module`` itself when there is nothing to wrap. The wrapping happens in place (the
    old entry stops being the entry) and the same module is returned."""
    body = lone_fused_computation(module)
    if body is None:
        return module
    root = body.root
    assert root is not None
    entry = Computation(_free_name(module, GENERATED_ENTRY), [], is_entry=True, module=module)
    params = [
        Instruction(
            p.name, "parameter", p.shape, literal=str(p.parameter_number), computation=entry
        )
        for p in body.parameters
    ]
    kind = "kInput" if _reduction_root(body) is not None else "kLoop"
    fusion = Instruction(
        body.name,
        "fusion",
        root.shape,
        list(params),
        attributes={"kind": kind, "calls": body.name},
        is_root=True,
        computation=entry,
    )
    entry.instructions = [*params, fusion]
    body.is_entry = False
    module.computations[entry.name] = entry
    module.entry = entry
    return module


def lone_fusion_note(fusion: Instruction) -> str | None:
    """What ``wrap_lone_fusion`` did, for a fusion it made (None for any other instruction)."""
    entry = fusion.computation
    if (
        fusion.opcode != "fusion"
        or fusion.span is not None
        or entry is None
        or entry.span is not None
        or not entry.name.startswith(GENERATED_ENTRY)
    ):
        return None
    body = fusion.called_computations.get("calls")
    if not body:
        return None
    kind = fusion.fusion_kind or "kLoop"
    hero = _reduction_root(body[0])
    why = f"its root is the reduction {hero.name}" if hero is not None else "no root is a reduction"
    return (
        f"the file holds the fused computation {body[0].name} on its own: hloidx analyses it "
        f"as the fusion instruction {fusion.name} of kind {kind} ({why}) in a synthetic entry "
        f"{entry.name}, its parameters the fusion's operands (as XLA's emitter test tools "
        "load such a file)"
    )
