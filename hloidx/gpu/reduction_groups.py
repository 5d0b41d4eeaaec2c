"""Which roots of a reduction fusion XLA's reduction emitter handles together.

XLA's ``GroupDisjointReductions`` (``xla/backends/gpu/codegen/emitters/reduction_base.cc``)
splits a fusion's roots into groups that share no work: roots reached from a common
instruction (a fusion parameter included) are one group, except that a broadcasted constant
or a scalar joins only the first reduction it reaches; every root that is no reduction (a
side output) goes into one group. Each group runs on its own ``blockIdx.y``. XLA numbers the
groups by its internal instruction ids; hloidx numbers them in the order of their first root.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..hlo.fusion import body_of, computation_outputs
from .emitter_choice import find_hero, reduction_dimensions

if TYPE_CHECKING:
    from ..hlo.ir import Instruction


@dataclass(frozen=True)
class ReductionGroups:
    """The reduction heroes (distinct, in root order) and side outputs of a fusion, and the
    group (``blockIdx.y``) of each."""

    heroes: tuple[Instruction, ...]
    hero_groups: tuple[int, ...]
    side_outputs: tuple[Instruction, ...]
    side_output_groups: tuple[int, ...]

    @property
    def count(self) -> int:
        return 1 + max((*self.hero_groups, *self.side_output_groups), default=0)


def _is_broadcasted_constant_or_scalar(instr: Instruction) -> bool:
    """XLA's ``hlo_query::IsBroadcastedConstantOrScalar``."""

    def constant_or_scalar(i: Instruction) -> bool:
        return i.opcode == "constant" or (i.shape.is_array and i.shape.rank == 0)

    if constant_or_scalar(instr):
        return True
    return (
        instr.opcode == "broadcast"
        and bool(instr.operands)
        and constant_or_scalar(instr.operands[0])
    )


def group_roots(roots: list[Instruction], is_reduction: list[bool]) -> list[int]:
    """The group of each root (numbered in the order of their first root)."""
    parent = list(range(len(roots)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def merge(i: int, j: int) -> None:
        parent[find(j)] = find(i)

    side = [k for k, reduction in enumerate(is_reduction) if not reduction]
    for k in side[1:]:
        merge(side[0], k)
    reached_by: dict[int, tuple[Instruction, set[int]]] = {}
    for k, root in enumerate(roots):
        stack, seen = [root], set()
        while stack:
            instr = stack.pop()
            if id(instr) in seen:
                continue
            seen.add(id(instr))
            reached_by.setdefault(id(instr), (instr, set()))[1].add(k)
            stack.extend(instr.operands)
    for instr, outputs in reached_by.values():
        reached: list[int] = []
        added_to_reduce = False
        for k in sorted(outputs):
            if is_reduction[k] and added_to_reduce and _is_broadcasted_constant_or_scalar(instr):
                continue  # recomputing a constant is cheaper than joining the groups
            reached.append(k)
            added_to_reduce = added_to_reduce or is_reduction[k]
        for k in reached[1:]:
            merge(reached[0], k)
    numbers: dict[int, int] = {}
    return [numbers.setdefault(find(k), len(numbers)) for k in range(len(roots))]


def reduction_groups(fusion: Instruction) -> tuple[ReductionGroups | None, str]:
    """The groups of a reduction fusion hloidx can model, or None and why not."""
    roots = computation_outputs(body_of(fusion))
    heroes = [find_hero(root) for root in roots]
    is_reduction = [hero.opcode == "reduce" for hero in heroes]
    if not any(is_reduction):
        return None, "no root is a reduction"
    for root, hero, reduction in zip(roots, heroes, is_reduction, strict=True):
        if reduction and tuple(root.shape.leaves()[0].dims) != tuple(hero.shape.leaves()[0].dims):
            return None, f"root {root.name} reshapes its reduction: not modelled"
    groups = group_roots(roots, is_reduction)
    distinct: list[Instruction] = []
    hero_groups: list[int] = []
    side: list[Instruction] = []
    side_groups: list[int] = []
    for root, hero, reduction, group in zip(roots, heroes, is_reduction, groups, strict=True):
        if not reduction:
            side.append(root)
            side_groups.append(group)
        elif hero not in distinct:
            distinct.append(hero)
            hero_groups.append(group)
    first = reduction_dimensions(distinct[0])
    # XLA fuses reductions only when their [a, b, c] views agree
    # (AreReductionsMultiOutputFusionCompatible); their operand shapes may differ
    if any(reduction_dimensions(hero) != first for hero in distinct[1:]):
        return None, "reductions of different [a, b, c] views in one fusion are not modelled"
    elements = distinct[0].operands[0].shape.num_elements()
    for root in side:
        if not root.shape.is_array or root.shape.num_elements() != elements:
            return None, (
                f"side output {root.name} has another number of elements than the reduction's "
                "input: not modelled"
            )
    found = ReductionGroups(tuple(distinct), tuple(hero_groups), tuple(side), tuple(side_groups))
    return found, ""
