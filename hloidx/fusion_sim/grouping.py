"""PriorityFusion and sibling multi-output fusion, as rules over one flattened computation.

The simulation visits producers from the outputs towards the inputs (a producer after all of
its consumers, as XLA's priority queue ends up doing for a chain), and fuses a producer into
*all* of the fusions that consume it or into none (PriorityFusion never leaves a producer both
fused and alone). It declines when:

- the producer is not loop fusible as a producer (a reduction, a scatter, a DUS, a dot, a
  custom-call, a sort, a collective, control flow, a parameter: ``IsLoopFusibleAsProducer``);
- a consumer is not fusible (a library call, a collective, the computation's result);
- the consumer is a scatter or a dynamic-update-slice and the producer is its operand 0
  (``FusionDecision`` "in-place op operand");
- the fusion would not save time: an expensive op (exp, log, divide, ...) duplicated into
  more than one consumer, or into a consumer that reuses each of its elements (a broadcast:
  XLA's cost model charges the recomputation; hloidx declines always);
- the fusion would be too large (``kMaxFusionInstructions``-like bound, here 512 ops).

Then siblings (fusions reading the same value, with the same hero shape: equal reduce inputs
and dimensions, or equal loop output shapes) become one multi-output fusion when no path joins
them (``MultiOutputFusion::FuseSiblings``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo.ir import Instruction
from .ops import IN_PLACE, is_consumer, is_expensive, is_producer

MAX_FUSED_OPS = 512
#: consumers that read an operand element more than once (``ReusesOperandElements``)
REUSES = frozenset({"broadcast", "gather", "reduce-window", "pad", "concatenate"})
MAX_SIBLING_OUTPUTS = 8
#: siblings further apart than this (in the topological order) are not merged, and a path
#: search that visits more values than this counts as a path (both bound the pass's time)
MAX_SIBLING_DISTANCE = 400
MAX_PATH_SEARCH = 2000


@dataclass
class Group:
    """One simulated kernel: its roots (outputs) and every instruction it holds."""

    roots: list[Instruction]
    members: set[Instruction] = field(default_factory=set)
    merged: bool = False

    @property
    def hero(self) -> Instruction:
        return self.roots[0]


def topological(instrs: list[Instruction]) -> list[Instruction]:
    """Operands before users (the text order already is, after inlining; kept stable)."""
    index = {id(i): n for n, i in enumerate(instrs)}
    if all(index.get(id(o), -1) < index[id(i)] for i in instrs for o in i.operands):
        return instrs
    seen: set[int] = set()
    out: list[Instruction] = []
    for start in instrs:
        stack = [(start, False)]
        while stack:
            node, done = stack.pop()
            if done:
                out.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((o, False) for o in node.operands if id(o) not in seen)
    return out


def _sibling_key(group: Group) -> tuple | None:
    hero = group.hero
    if (
        not hero.shape.is_array
        or hero.opcode in IN_PLACE
        or len(group.roots) >= MAX_SIBLING_OUTPUTS
    ):
        return None
    if hero.opcode == "reduce":
        source = hero.operands[0].shape
        return ("reduce", source.dims, hero.attributes.get("dimensions", ""))
    if hero.shape.is_array:
        return ("loop", hero.shape.dims)
    return None


def fuse(instrs: list[Instruction], outputs: set[int]) -> list[Group]:
    """The groups of ``instrs`` (operands before users). ``outputs``: ids of the values the
    computation returns (the root and what its tuple holds)."""
    order = topological(instrs)
    users: dict[int, list[Instruction]] = {}
    for ins in order:
        for o in ins.operands:
            users.setdefault(id(o), []).append(ins)
    groups: dict[int, Group] = {}  # keyed by id of the group's first root
    owners: dict[int, set[int]] = {}
    for ins in reversed(order):
        if not is_consumer(ins.opcode) or not (ins.shape.is_array or ins.opcode == "reduce"):
            continue
        gid = id(ins)
        groups[gid] = Group([ins], {ins})
        owners[gid] = {gid}
        if _fuse_into_users(ins, users.get(gid, []), groups, owners, outputs):
            del groups[gid]
    result = [g for g in groups.values()]
    return _siblings(order, result, users)


def _fuse_into_users(ins, users, groups, owners, outputs) -> bool:
    if not users or id(ins) in outputs or not is_producer(ins.opcode):
        return False
    targets: set[int] = set()
    for user in users:
        held = owners.get(id(user))
        if not held:
            return False
        if user.opcode in IN_PLACE and user.operands[0] is ins:
            return False
        if user.opcode in REUSES and is_expensive(ins.opcode, ins.shape.element_type):
            return False  # the consumer would recompute it for every element it reuses it for
        targets |= held
    if len(targets) > 1 and is_expensive(ins.opcode, ins.shape.element_type):
        return False
    if any(len(groups[t].members) >= MAX_FUSED_OPS for t in targets):
        return False
    for t in targets:
        groups[t].members.add(ins)
    owners[id(ins)] = targets
    return True


def _siblings(order, groups: list[Group], users) -> list[Group]:
    position = {id(i): n for n, i in enumerate(order)}
    root_group: dict[int, Group] = {id(g.hero): g for g in groups}
    for g in groups:
        for r in g.roots:
            root_group[id(r)] = g
    alive = {id(g): g for g in groups}

    cache: dict[int, list[Instruction]] = {}

    def inputs(g: Group) -> list[Instruction]:
        found = cache.get(id(g))
        if found is None:
            found = cache[id(g)] = list(
                {id(o): o for m in g.members for o in m.operands if o not in g.members}.values()
            )
        return found

    def reaches(src: Group, dst: Group) -> bool:
        """Does a value of ``src`` flow into ``dst`` (through anything)?"""
        floor = min(position[id(r)] for r in src.roots)
        roots = {id(r) for r in src.roots}
        stack = list(inputs(dst))
        seen: set[int] = set()
        while stack:
            v = stack.pop()
            if id(v) in seen or position.get(id(v), -1) < floor:
                continue
            seen.add(id(v))
            if len(seen) > MAX_PATH_SEARCH:
                return True  # not proven free of a path: do not merge
            if id(v) in roots:
                return True
            owner = root_group.get(id(v))
            stack.extend(inputs(owner) if owner is not None else v.operands)
        return False

    readers_of: dict[int, dict[int, Group]] = {}
    for g in groups:
        for v in inputs(g):
            readers_of.setdefault(id(v), {})[id(g)] = g
    for value in order:
        readers = {k: g for k, g in readers_of.get(id(value), {}).items() if k in alive}
        if len(readers) < 2:
            continue
        by_key: dict[tuple, list[Group]] = {}
        for g in readers.values():
            key = _sibling_key(g)
            if key is not None:
                by_key.setdefault(key, []).append(g)
        for candidates in by_key.values():
            candidates.sort(key=lambda g: position[id(g.hero)])
            while len(candidates) > 1:
                first = candidates.pop(0)
                rest = []
                for other in candidates:
                    if (
                        position[id(other.hero)] - position[id(first.hero)] <= MAX_SIBLING_DISTANCE
                        and len(first.roots) + len(other.roots) <= MAX_SIBLING_OUTPUTS
                        and len(first.members) + len(other.members) <= MAX_FUSED_OPS
                        and not reaches(first, other)
                        and not reaches(other, first)
                    ):
                        first.roots.extend(other.roots)
                        first.members |= other.members
                        first.merged = True
                        for r in other.roots:
                            root_group[id(r)] = first
                        for v in inputs(other):
                            readers_of.setdefault(id(v), {})[id(first)] = first
                        cache.pop(id(first), None)
                        del alive[id(other)]
                    else:
                        rest.append(other)
                candidates = rest
    return list(alive.values())
