"""Maps tracked along paths through a computation: the composition steps that built each map,
simplification after each step, deduplication, and runtime-variable folding (an offset produced
by a constant, an iota or integer arithmetic on them becomes an expression, as XLA folds it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ..caches import memo
from ..errors import HloidxError
from ..maps.expr import (
    Const,
    Expr,
    Var,
    VarKind,
    add,
    const,
    max_,
    min_,
    mul,
    replace_vars,
    variables,
)
from ..maps.indexing_map import IndexingMap, compose
from . import op_rules
from .ir import Instruction
from .op_rules import OperandIndexing, RuntimeVar

#: Give up on a fusion whose maps multiply beyond this (reported, never silently cut).
MAX_MAPS_PER_INSTRUCTION = 256


@dataclass(frozen=True)
class Step:
    """One composition step, for ``--tree``: through ``instruction`` the map became ``map``."""

    instruction: str
    opcode: str
    map: IndexingMap


@dataclass(frozen=True)
class Tracked:
    """A map from the start's output to some instruction's output, and how it was built."""

    map: IndexingMap
    runtime_vars: tuple[RuntimeVar, ...] = ()
    exact: bool = True
    steps: tuple[Step, ...] = ()
    #: for reads through an all-gather: start output index -> the replica whose data is read
    replica_id: IndexingMap | None = None


@dataclass
class Reached:
    maps: list[Tracked] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


class ReachedTargets(Mapping[int, Reached]):
    """What one start reaches at each target (by the target's id): the maps delivered to the
    targets it reached, and the notes of paths lost on the way, which concern every target
    alike. Nothing is stored for a target no path reached (a start read by one output of
    thousands costs one entry)."""

    __slots__ = ("maps", "order", "targets", "unknown")

    def __init__(self, order: list[int], targets: set[int]) -> None:
        self.order = order
        self.targets = targets
        self.maps: dict[int, list[Tracked]] = {}
        self.unknown: list[str] = []

    def __getitem__(self, target_id: int) -> Reached:
        if target_id not in self.targets:
            raise KeyError(target_id)
        return Reached(list(self.maps.get(target_id, ())), list(self.unknown))

    def __iter__(self) -> Iterator[int]:
        return iter(self.order)

    def __len__(self) -> int:
        return len(self.order)


def topological_from(start: Instruction) -> list[Instruction]:
    """Instructions reachable from ``start`` through operands, users before producers."""
    order: list[Instruction] = []
    state: dict[int, int] = {}
    stack: list[tuple[Instruction, int]] = [(start, 0)]
    while stack:
        node, i = stack.pop()
        if i == 0:
            if state.get(id(node)) is not None:
                continue
            state[id(node)] = 1
        if i < len(node.operands):
            stack.append((node, i + 1))
            child = node.operands[i]
            if state.get(id(child)) is None:
                stack.append((child, 0))
        else:
            state[id(node)] = 2
            order.append(node)
    order.reverse()
    return order


@memo(131072)
def compose_simplified(first: IndexingMap, second: IndexingMap) -> IndexingMap:
    from ..maps.simplify import simplify

    return simplify(compose(first, second))


def _trim(
    m: IndexingMap, runtime_vars: tuple[RuntimeVar, ...]
) -> tuple[IndexingMap, tuple[RuntimeVar, ...]]:
    """Drop unused range and runtime variables, keeping the runtime descriptions aligned.

    Without this, equal maps that differ only by a dead range variable (one path summed a
    dimension that a later broadcast discarded) would not be recognised as duplicates.
    """
    trimmed = m.remove_unused_symbols()
    if trimmed is m or trimmed.num_rt_vars == m.num_rt_vars:
        return trimmed, runtime_vars
    used = set()
    for r in m.results:
        used |= variables(r)
    for e, _ in m.constraints:
        used |= variables(e)
    kept = [i for i in range(m.num_rt_vars) if Var(VarKind.RUNTIME, i) in used]
    if len(kept) != trimmed.num_rt_vars or len(runtime_vars) != m.num_rt_vars:
        return m, runtime_vars
    return trimmed, tuple(runtime_vars[i] for i in kept)


def _compose_tracked(
    t: Tracked, rule_map: IndexingMap, cell: OperandIndexing, instr: Instruction, record: bool
) -> Tracked:
    if rule_map.is_known_empty:
        # nothing is read: the empty relation, over the reached map's dimensions (a rule's
        # known-empty map may not name the output's dimensions)
        empty = IndexingMap.known_empty(t.map.num_dims, len(rule_map.results))
        return Tracked(empty, (), t.exact and cell.exact, t.steps, t.replica_id)
    composed = compose_simplified(t.map, rule_map)
    # compose() orders runtime variables as [rule's, then the reached map's].
    rule_rts = (
        tuple(
            RuntimeVar(rv.producer, compose_simplified(t.map, rv.map), rv.note)
            for rv in _cell_rts(cell, rule_map)
        )
        if rule_map.rt_vars
        else ()
    )
    composed, rts = _trim(composed, rule_rts + t.runtime_vars)
    replica_id = t.replica_id
    rule_replica = getattr(cell, "replica_id_map", None)
    if rule_replica is not None:
        if replica_id is not None:
            # A collective over data already gathered from other replicas: which replica
            # holds an element is no longer one map (XLA gives up here too).
            return Tracked(IndexingMap.undefined(), (), False, t.steps)
        replica_id = compose_simplified(t.map, rule_replica)
    exact = t.exact and cell.exact
    if (
        composed is t.map
        and not record
        and exact == t.exact
        and replica_id is t.replica_id
        and not composed.rt_vars
        and rts == t.runtime_vars
    ):
        # through an op that reads the element it writes (three compositions in four on a
        # large module): every field as it was, and nothing to fold without runtime variables
        return t
    tracked = Tracked(
        composed,
        rts,
        exact,
        t.steps + ((Step(instr.name, instr.opcode, composed),) if record else ()),
        replica_id,
    )
    return fold_runtime_vars(tracked)


def _cell_rts(cell: OperandIndexing, rule_map: IndexingMap) -> tuple[RuntimeVar, ...]:
    """The runtime variables of one of the cell's maps (per map for composed cells)."""
    per_map = getattr(cell, "per_map_runtime_vars", None)
    if per_map is not None:
        for m, rts in zip(cell.maps, per_map, strict=True):
            if m is rule_map or m == rule_map:
                return rts
    return cell.runtime_vars


def _scalar_literal(instr: Instruction) -> int | None:
    if instr.opcode != "constant" or instr.shape.dims or instr.literal is None:
        return None
    text = instr.literal.strip().strip("{}").strip()
    try:
        value = float(text) if any(c in text for c in ".eE") else int(text, 0)
    except ValueError:
        if text in ("true", "false"):
            return int(text == "true")
        return None
    if isinstance(value, float):
        if not value.is_integer():
            return None
        value = int(value)
    return value


_PASS_THROUGH = {
    "broadcast",
    "reshape",
    "bitcast",
    "transpose",
    "copy",
    "convert",
    "slice",
    "reverse",
}


def value_expr(instr: Instruction, index: Sequence[Expr], depth: int = 0) -> Expr | None:
    """The value of ``instr`` at ``index`` as an expression, when it is computable statically."""
    if depth > 32:
        return None
    literal = _scalar_literal(instr)
    if literal is not None:
        return const(literal)
    if instr.opcode == "iota":
        dim_ = instr.iota_dimension
        if dim_ is None or dim_ >= len(index):
            return None
        return index[dim_]
    if instr.opcode in _PASS_THROUGH and len(instr.operands) == 1:
        if instr.opcode == "convert" and not instr.operands[0].shape.element_type.startswith(
            ("s", "u")
        ):
            return None
        try:
            table = op_rules.output_to_input(instr)
        except HloidxError:
            return None
        maps = table[0][0].maps if table and table[0] else ()
        if len(maps) != 1 or maps[0].range_vars or maps[0].rt_vars or maps[0].constraints:
            return None
        m = maps[0]
        sub = {Var(VarKind.DIM, i): e for i, e in enumerate(index)}
        return value_expr(instr.operands[0], [replace_vars(r, sub) for r in m.results], depth + 1)
    if instr.opcode in (
        "add",
        "subtract",
        "multiply",
        "negate",
    ) and instr.shape.element_type.startswith(("s", "u")):
        values = []
        for operand in instr.operands:
            scalar = not operand.shape.dims
            v = value_expr(operand, [] if scalar else index, depth + 1)
            if v is None:
                return None
            values.append(v)
        if instr.opcode == "negate":
            return mul(values[0], -1)
        if instr.opcode == "add":
            return add(values[0], values[1])
        if instr.opcode == "subtract":
            return add(values[0], mul(values[1], -1))
        if type(values[0]) is Const or type(values[1]) is Const:
            return mul(values[0], values[1])
    return None


def fold_runtime_vars(t: Tracked) -> Tracked:
    """Replace runtime variables whose value is known statically (constants, iotas)."""
    m = t.map
    if not m.rt_vars or len(t.runtime_vars) != len(m.rt_vars):
        return t
    from ..maps.range_eval import expr_range

    replacements: dict[Var, Expr] = {}
    keep: list[int] = []
    bounds = m.bounds()
    for i, rv in enumerate(t.runtime_vars):
        folded = value_expr(rv.producer, list(rv.map.results))
        # Only an expression of the dimensions means the same thing in both maps (range
        # variables of the runtime variable's own map are numbered differently).
        if folded is not None and all(v.kind == VarKind.DIM for v in variables(folded)):
            feasible = m.rt_vars[i].bounds
            if feasible.contains(expr_range(folded, bounds, m.constraints)):
                replacements[Var(VarKind.RUNTIME, i)] = folded
                continue
            if type(folded) is not Const:
                # The runtime value is this expression whatever range the rule declared; an
                # op that clamps its start index into the feasible range (the note says so)
                # gets the clamp spelled out, so the fold stays exact. A scalar constant out
                # of range is kept as a runtime variable, as XLA does.
                clamped = rv.note.startswith("clamp")
                replacements[Var(VarKind.RUNTIME, i)] = (
                    max_(min_(folded, feasible.upper), feasible.lower) if clamped else folded
                )
                continue
        keep.append(i)
    if not replacements:
        return t
    renumber = {
        Var(VarKind.RUNTIME, old): Var(VarKind.RUNTIME, new) for new, old in enumerate(keep)
    }
    substituted = m.substitute({**replacements, **{k: v for k, v in renumber.items() if k != v}})
    new_map = IndexingMap(
        substituted.results,
        m.dim_vars,
        m.range_vars,
        tuple(m.rt_vars[i] for i in keep),
        substituted.constraints,
    )
    from ..maps.simplify import simplify

    simplified, rts = _trim(simplify(new_map), tuple(t.runtime_vars[i] for i in keep))
    return Tracked(simplified, rts, t.exact, t.steps, t.replica_id)


def _dedupe(items: list[Tracked]) -> list[Tracked]:
    """Equal maps once. Equal maps over different runtime values are different reads.

    When a map is reached both exactly and inexactly, the inexact path means the op reads
    only a subset of it (e.g. one branch of a conditional): the union stays exact only if
    some path reaches it exactly, so the exact one is kept.
    """
    seen: dict[tuple[IndexingMap, tuple[RuntimeVar, ...]], Tracked] = {}
    for t in items:
        if t.map.is_known_empty:
            continue
        key = (t.map, t.runtime_vars, t.replica_id)
        previous = seen.get(key)
        if previous is None or (not previous.exact and t.exact):
            seen[key] = t
    return list(seen.values())


@dataclass(frozen=True)
class ComposedOperandIndexing(OperandIndexing):
    """An operand's maps through a called computation: each map has its own runtime variables.

    ``runtime_vars`` (the op-rule convention: one list for all maps) holds those of the first
    map that has any, for display; ``per_map_runtime_vars[k]`` describes ``maps[k]``.
    """

    per_map_runtime_vars: tuple[tuple[RuntimeVar, ...], ...] = ()
