"""A producer fused into its consumer, built as one fusion instruction (what XLA's
``HloFusionAnalysisCache::Get(producer, consumer)`` analyses): the emitter and launch of the
fused kernel and its coalescing come from it. Neither instruction nor its module is changed:
the fusion lives in a module of its own that shares the original computations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hlo.fusion import body_of
from ..hlo.ir import Computation, HloModule, Instruction, Shape
from .xla_cost_base import post_order

if TYPE_CHECKING:
    pass


class _Builder:
    def __init__(self, name: str) -> None:
        self.body = Computation(name)
        self.params: list[Instruction] = []
        self.outside: list[Instruction] = []
        self.by_outside: dict[int, Instruction] = {}
        self.made: list[Instruction] = []

    def parameter(self, operand: Instruction) -> Instruction:
        found = self.by_outside.get(id(operand))
        if found is None:
            k = len(self.params)
            found = Instruction(f"param_{k}", "parameter", operand.shape, literal=str(k))
            found.computation = self.body
            self.params.append(found)
            self.outside.append(operand)
            self.by_outside[id(operand)] = found
        return found

    def clone(self, instr: Instruction, operands: list[Instruction], prefix: str) -> Instruction:
        made = Instruction(
            prefix + instr.name,
            instr.opcode,
            instr.shape,
            operands=operands,
            attributes=dict(instr.attributes),
            literal=instr.literal,
        )
        made.computation = self.body
        self.made.append(made)
        return made

    def inline(self, instr: Instruction, args: list[Instruction], prefix: str) -> Instruction:
        """``instr`` (a fusion's body, or one op) applied to ``args``; its root's clone."""
        if instr.opcode != "fusion":
            return self.clone(instr, args, prefix)
        inner = body_of(instr)
        mapping: dict[int, Instruction] = {}
        for i in post_order(inner):
            if i.opcode == "parameter":
                number = i.parameter_number or 0
                mapping[id(i)] = args[number] if number < len(args) else self.parameter(i)
            else:
                mapping[id(i)] = self.clone(i, [mapping[id(o)] for o in i.operands], prefix)
        root = inner.root
        assert root is not None
        return mapping[id(root)]


def _fusion_kind(producer: Instruction, consumer: Instruction) -> str:
    for instr in (consumer, producer):
        kind = instr.fusion_kind if instr.opcode == "fusion" else None
        if kind and kind.lower() not in ("kloop", "loop"):
            return kind
    return "kInput" if "reduce" in (producer.opcode, consumer.opcode) else "kLoop"


def fuse(producer: Instruction, consumer: Instruction, side_output: bool = False) -> Instruction:
    """``consumer`` with ``producer`` fused in (and the producer's result as a second output of
    a multi-output fusion when ``side_output``)."""
    module = consumer.computation.module if consumer.computation is not None else None
    table = dict(module.computations) if module is not None else {}
    name = f"{producer.name}.{consumer.name}.__fused"
    b = _Builder(name)
    produced = b.inline(producer, [b.parameter(o) for o in producer.operands], "p.")
    args = []
    for o in consumer.operands:
        if o is producer:
            args.append(produced)
        elif o.opcode == "get-tuple-element" and o.operands and o.operands[0] is producer:
            if produced.opcode == "tuple":
                args.append(produced.operands[o.tuple_index or 0])
            else:
                args.append(b.clone(o, [produced], "p."))
        else:
            args.append(b.parameter(o))
    consumed = b.inline(consumer, args, "c.")
    root = consumed
    if side_output:
        outputs = [*(produced.operands if produced.opcode == "tuple" else [produced]), consumed]
        shape = Shape("tuple", tuple_shapes=tuple(o.shape for o in outputs))
        root = Instruction(f"{name}.outputs", "tuple", shape, operands=outputs)
        root.computation = b.body
        b.made.append(root)
    root.is_root = True
    b.body.instructions = [*b.params, *b.made]
    fusion = Instruction(
        name,
        "fusion",
        root.shape,
        operands=list(b.outside),
        attributes={"kind": _fusion_kind(producer, consumer), "calls": name},
    )
    holder = Computation(f"{name}.__holder", instructions=[fusion], is_entry=True)
    fusion.computation = holder
    table[name] = b.body
    table[holder.name] = holder
    attributes = dict(module.attributes) if module is not None else {}
    wrapper = HloModule(name, attributes, table, holder, module.source if module else None)
    b.body.module = wrapper
    holder.module = wrapper
    return fusion
