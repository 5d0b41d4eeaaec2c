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
  more than one consumer, or into a kernel that iterates over more elements than it has (a
  broadcast downstream recomputes it per reuse: XLA's cost model charges the recomputation;
  hloidx declines always);
- a bit-width-changing bitcast is no producer; a lone bitcast user is no consumer (the
  producer is fused into its other users and also kept for the bitcast, as XLA does).

A reduction is fused into its only user when that is elementwise on its result (reduction
epilogue fusion: a convert, a bitcast).
- the fusion would be too large (``kMaxFusionInstructions``-like bound, here 512 ops).

Then siblings (fusions reading the same value, with the same hero shape: equal reduce inputs
and dimensions, or equal loop output shapes) become one multi-output fusion when no path joins
them (``MultiOutputFusion::FuseSiblings``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo.ir import Instruction
from .ops import ELEMENTWISE, IN_PLACE, is_consumer, is_expensive, is_fusible_producer

MAX_FUSED_OPS = 512
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


def fuse(instrs: list[Instruction], outputs: set[int], multi_output: bool = True) -> list[Group]:
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
    result = list(groups.values())
    return _siblings(order, result, users) if multi_output else result


def _space(group: Group) -> int:
    """The elements the group's kernel iterates over: its reduction's input, else its root."""
    reduces = [m for m in group.members if m.opcode == "reduce"]
    if reduces:  # the largest: a set's order is memory order, not the same from run to run
        return max(m.operands[0].shape.num_elements() for m in reduces)
    return max(r.shape.num_elements() if r.shape.is_array else 1 for r in group.roots)


def _epilogue(ins: Instruction, users, groups, owners) -> bool:
    """A reduction fused into its only consumer when that is elementwise on the reduction's
    result (XLA's reduction epilogue fusion): a convert, a bitcast, a unary op."""
    if ins.opcode != "reduce" or not ins.shape.is_array or len(users) != 1:
        return False
    user = users[0]
    if user.opcode not in ELEMENTWISE and user.opcode not in ("bitcast", "reshape"):
        return False
    if any(o is not ins and o.shape.dims for o in user.operands):
        return False
    targets = owners.get(id(user)) or set()
    if len(targets) != 1:
        return False
    group = groups[next(iter(targets))]
    if group.hero.opcode == "bitcast" and len(group.members) == 1:
        return False
    size = ins.shape.num_elements()
    if any(m.opcode == "reduce" for m in group.members) or any(
        not r.shape.is_array or r.shape.num_elements() != size for r in group.roots
    ):
        return False
    group.members.add(ins)
    owners[id(ins)] = targets
    return True


def _fuse_into_users(ins, users, groups, owners, outputs) -> bool:
    """Fuse ``ins`` into every group holding one of its users; True when its own kernel is
    gone (a producer kept for lone bitcast users stays a kernel too)."""
    if not users or id(ins) in outputs:
        return False
    if _epilogue(ins, users, groups, owners):
        return True
    if not is_fusible_producer(ins):
        return False
    targets: set[int] = set()
    bitcast_users = False
    for user in users:
        held = owners.get(id(user))
        if not held:
            return False
        if user.opcode in IN_PLACE and user.operands[0] is ins:
            return False
        if held == {id(user)} and user.opcode == "bitcast":
            bitcast_users = True  # a lone bitcast reads the producer's buffer as it is
            continue
        targets |= held
    if not targets:
        return False
    expensive = is_expensive(ins.opcode, ins.shape.element_type)
    if expensive and len(targets) > 1:
        return False
    size = ins.shape.num_elements() if ins.shape.is_array else 0
    for t in targets:
        group = groups[t]
        if len(group.members) >= MAX_FUSED_OPS:
            return False
        if expensive and size < _space(group):
            return False  # the kernel would recompute it for each element that reuses it
    for t in targets:
        groups[t].members.add(ins)
    owners[id(ins)] = targets | ({id(ins)} if bitcast_users else set())
    return not bitcast_users


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
            members = sorted(g.members, key=lambda m: position[id(m)])  # not memory order
            found = cache[id(g)] = list(
                {id(o): o for m in members for o in m.operands if o not in g.members}.values()
            )
        return found

    def reaches(src: Group, dst: Group) -> bool:
        """Does a value of ``src`` flow into ``dst`` (through anything)?"""
        floor = min(position[id(r)] for r in src.roots)
        roots = {id(r) for r in src.roots}
        where = position.get
        # values before the floor cannot lead back to src: they are never pushed (the same
        # visit order as pushing and skipping them)
        stack = [v for v in inputs(dst) if where(id(v), -1) >= floor]
        seen: set[int] = set()
        while stack:
            v = stack.pop()
            key = id(v)
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > MAX_PATH_SEARCH:
                return True  # not proven free of a path: do not merge
            if key in roots:
                return True
            owner = root_group.get(key)
            for o in inputs(owner) if owner is not None else v.operands:
                if where(id(o), -1) >= floor:
                    stack.append(o)
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
