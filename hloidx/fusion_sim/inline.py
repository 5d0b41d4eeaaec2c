"""XLA's ``CallInliner`` (the first passes of ``gpu_compiler.cc``): every ``call`` is replaced
by a copy of its callee, and the ``Sharding`` custom-calls (SPMD annotations, removed by the
partitioner) by their operand. Gives new, unparented :class:`Instruction` objects in the
callee's order, each name unique in the module."""

from __future__ import annotations

from ..hlo.ir import Computation, Instruction
from .grouping import topological

_IDENTITY_TARGETS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")


class Flattener:
    """Inlines calls; one per module so that names stay unique across computations."""

    def __init__(self) -> None:
        self.taken: set[str] = set()
        #: the ``sharding=`` of each identity custom-call dropped, by its operand's new value
        self.annotations: dict[int, str] = {}

    def _unique(self, name: str) -> str:
        if name not in self.taken:
            self.taken.add(name)
            return name
        n = 1
        while f"{name}.i{n}" in self.taken:
            n += 1
        self.taken.add(f"{name}.i{n}")
        return f"{name}.i{n}"

    def flatten(
        self, comp: Computation, args: list[Instruction] | None = None
    ) -> tuple[list[Instruction], Instruction]:
        """The computation's instructions with calls inlined, and its root. With ``args``
        its parameters are replaced by them (inlining); without, they are kept."""
        out: list[Instruction] = []
        new: dict[int, Instruction] = {}
        root: Instruction | None = None
        for ins in topological(comp.instructions):
            operands = [new[id(o)] for o in ins.operands]
            if ins.opcode == "parameter" and args is not None:
                value = args[ins.parameter_number or 0]
            elif ins.opcode == "call" and "to_apply" in ins.attributes:
                callee = ins.called_computations.get("to_apply", [None])[0]
                if callee is None:
                    value = self._copy(ins, operands)
                    out.append(value)
                else:
                    body, value = self.flatten(callee, operands)
                    out.extend(body)
            elif (
                ins.opcode == "custom-call"
                and ins.attributes.get("custom_call_target", "").strip('"') in _IDENTITY_TARGETS
                and len(operands) == 1
            ):
                value = operands[0]
                if "sharding" in ins.attributes:
                    self.annotations[id(value)] = ins.attributes["sharding"]
            else:
                value = self._copy(ins, operands)
                out.append(value)
            new[id(ins)] = value
            if ins.is_root:
                root = value
        if root is None:
            root = new[id(comp.instructions[-1])]
        return out, root

    def _copy(self, ins: Instruction, operands: list[Instruction]) -> Instruction:
        return Instruction(
            name=self._unique(ins.name),
            opcode=ins.opcode,
            shape=ins.shape,
            operands=operands,
            attributes=ins.attributes,
            literal=ins.literal,
            computation=ins.computation,
        )
