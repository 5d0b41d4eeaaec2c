"""Maps of fusions, calls, conditionals and whiles, and of any producer chain, by composition.

Output-to-input: starting from an output with the identity map, walk the computation from
its root towards the parameters; at every instruction compose each map that reached it with
that instruction's own output-to-input maps (``compose(reached, rule)``), simplify, and pass the
results to the operands. What reaches a parameter is the fusion's map for that operand; equal
maps (after simplification) are kept once. Input-to-output walks the other way, from a
parameter through the users, with the instructions' input-to-output rules.

Runtime variables are folded during composition where their value is known: a scalar
``constant`` inside the feasible range becomes that constant; an ``iota`` (through broadcasts,
reshapes, transposes, bitcasts, copies and converts, and sums/products with constants) becomes
its index expression. Compose-and-simplify is memoised by structure, so equal sub-chains are
composed once.
"""

from __future__ import annotations

import heapq
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..caches import memo, register
from ..errors import HloidxError, UnsupportedOpError
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
from .ir import CALL_ATTRIBUTES, INDEXING_IRRELEVANT_ATTRIBUTES, Computation, HloModule, Instruction
from .op_rules import IndexingTable, OperandIndexing, RuntimeVar

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


# ---------------------------------------------------------------------------
# Compose + simplify, memoised by structure
# ---------------------------------------------------------------------------


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
    tracked = Tracked(
        composed,
        rts,
        t.exact and cell.exact,
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


# ---------------------------------------------------------------------------
# Runtime-variable folding
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Walking a computation
# ---------------------------------------------------------------------------


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


def _topological_from(start: Instruction) -> list[Instruction]:
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


def _tuple_leaf_count(instr: Instruction) -> int:
    return len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1


def grouped_output_to_input(
    start: Instruction, output_id: int = 0, record: bool = False, stop_at: Instruction | None = None
) -> dict[Instruction, Reached]:
    """Maps from ``start``'s output ``output_id`` to every instruction it (transitively) reads.

    Keys are instructions; each ``Reached`` lists the distinct maps (start output index →
    that instruction's output index, for array-shaped instructions) and why any path was lost.
    Walking stops at ``stop_at`` (it is recorded, not walked through) and at parameters.
    """
    shape = start.shape.tuple_shapes[output_id] if start.shape.is_tuple else start.shape
    identity = Tracked(IndexingMap.identity(shape.dims))
    # reached[(instr, output_id)] -> maps from the start's output to that output
    reached: dict[tuple[int, int], list[Tracked]] = {(id(start), output_id): [identity]}
    result: dict[Instruction, Reached] = {}
    for instr in _topological_from(start):
        record_here = result.setdefault(instr, Reached())
        for out_id in range(_tuple_leaf_count(instr)):
            incoming = reached.pop((id(instr), out_id), None)
            if not incoming:
                continue
            incoming = _dedupe(incoming)
            record_here.maps.extend(incoming)
            if instr is stop_at and instr is not start:
                continue
            if instr.opcode == "parameter" or not instr.operands:
                continue
            if instr.opcode == "get-tuple-element":
                key = (id(instr.operands[0]), instr.tuple_index or 0)
                reached.setdefault(key, []).extend(incoming)
                continue
            if instr.opcode == "tuple":
                reached.setdefault((id(instr.operands[out_id]), 0), []).extend(incoming)
                continue
            try:
                table = output_to_input(instr)
            except HloidxError as error:
                record_here.unknown.append(error.message)
                for operand in instr.operands:
                    result.setdefault(operand, Reached()).unknown.append(
                        f"through {instr.name}: {error.message}"
                    )
                continue
            row = table[out_id] if out_id < len(table) else table[0]
            for j, operand in enumerate(instr.operands):
                if j >= len(row):
                    continue
                cell = row[j]
                produced = [
                    _compose_tracked(t, rule_map, cell, instr, record)
                    for t in incoming
                    for rule_map in cell.maps
                ]
                bucket = reached.setdefault((id(operand), 0), [])
                bucket.extend(produced)
                if len(bucket) > MAX_MAPS_PER_INSTRUCTION:
                    bucket[:] = _dedupe(bucket)
                    if len(bucket) > MAX_MAPS_PER_INSTRUCTION:
                        raise UnsupportedOpError(
                            f"more than {MAX_MAPS_PER_INSTRUCTION} distinct maps reach "
                            f"{operand.name}; giving up on this composition",
                            instr.span,
                        )
    for r in result.values():
        r.maps = _dedupe(r.maps)
    return result


class _ComputationIndex:
    """Per-computation tables the input-to-output walk needs, built once per computation.

    Walking from every parameter of a large fused computation used to rebuild the users map
    and re-evaluate the users' rules per parameter: quadratic in the computation's size.
    """

    __slots__ = ("by_id", "order", "tables", "users")

    def __init__(self, comp: Computation) -> None:
        self.users: dict[int, list[tuple[Instruction, int]]] = {}
        for instr in comp.instructions:
            for j, operand in enumerate(instr.operands):
                self.users.setdefault(id(operand), []).append((instr, j))
        self.order = {id(i): k for k, i in enumerate(comp.instructions)}
        self.by_id = {id(i): i for i in comp.instructions}
        self.tables: dict[int, IndexingTable | HloidxError] = {}

    def input_to_output(self, user: Instruction) -> IndexingTable:
        table = self.tables.get(id(user))
        if table is None:
            try:
                table = input_to_output(user)
            except HloidxError as error:
                table = error
            self.tables[id(user)] = table
        if isinstance(table, HloidxError):
            raise table
        return table


_INDEXES: weakref.WeakKeyDictionary[Computation, _ComputationIndex] = weakref.WeakKeyDictionary()


def _index(comp: Computation) -> _ComputationIndex:
    index = _INDEXES.get(comp)
    if index is None or len(index.order) != len(comp.instructions):
        index = _ComputationIndex(comp)
        _INDEXES[comp] = index
    return index


def grouped_input_to_output(
    comp: Computation, start: Instruction, targets: Sequence[Instruction]
) -> dict[int, Reached]:
    """Maps from ``start``'s index to each target's output index, through the users."""
    return grouped_input_to_output_many(comp, [start], targets)[id(start)]


_Entry = tuple[Tracked, frozenset[int]]


def _merge(entries: list[_Entry]) -> list[_Entry]:
    """Entries with the same map (and runtime variables and exactness) travel together."""
    merged: dict[tuple[Any, ...], _Entry] = {}
    for t, sources in entries:
        if t.map.is_known_empty:
            continue
        key = (t.map, t.runtime_vars, t.exact, t.replica_id)
        previous = merged.get(key)
        merged[key] = (t, sources) if previous is None else (previous[0], previous[1] | sources)
    return list(merged.values())


def grouped_input_to_output_many(
    comp: Computation, starts: Sequence[Instruction], targets: Sequence[Instruction]
) -> dict[int, dict[int, Reached]]:
    """For every start, maps from its index to each target's output index, in one walk.

    Each distinct map travels once, carrying the set of starts it stands for: a fused
    computation that accumulates hundreds of parameters through a chain of adds composes one
    identity map per add, not one per parameter and add.
    """
    index = _index(comp)
    users, order, by_id = index.users, index.order, index.by_id
    reached: dict[tuple[int, int], list[_Entry]] = {}
    pending: list[tuple[int, int]] = []
    for start in starts:
        dims = start.shape.dims if start.shape.is_array else ()
        reached.setdefault((id(start), 0), []).append(
            (Tracked(IndexingMap.identity(dims)), frozenset((id(start),)))
        )
        heapq.heappush(pending, (order.get(id(start), -1), id(start)))
    target_ids = {id(t) for t in targets}
    out: dict[int, dict[int, Reached]] = {
        id(s): {id(t): Reached() for t in targets} for s in starts
    }

    def deliver(target_id: int, entries: list[_Entry]) -> None:
        for t, sources in entries:
            for source in sources:
                out[source][target_id].maps.append(t)

    # Visit in program order (a heap of positions), so every map reaching an instruction has
    # arrived before the instruction is walked through.
    visited: set[int] = set()
    while pending:
        _, node_id = heapq.heappop(pending)
        if node_id in visited:
            continue
        visited.add(node_id)
        node = by_id[node_id]
        for out_id in range(_tuple_leaf_count(node)):
            incoming = _merge(reached.pop((node_id, out_id), []))
            if not incoming:
                continue
            if node_id in target_ids:
                deliver(node_id, incoming)
            for user, j in users.get(node_id, []):
                if user.opcode == "get-tuple-element":
                    if (user.tuple_index or 0) == out_id:
                        reached.setdefault((id(user), 0), []).extend(incoming)
                        heapq.heappush(pending, (order.get(id(user), 0), id(user)))
                    continue
                if user.opcode == "tuple":
                    if id(user) in target_ids:
                        deliver(id(user), incoming)
                    reached.setdefault((id(user), j), []).extend(incoming)
                    heapq.heappush(pending, (order.get(id(user), 0), id(user)))
                    continue
                try:
                    table = index.input_to_output(user)
                except HloidxError as error:
                    for _, sources in incoming:
                        for source in sources:
                            for r in out[source].values():
                                r.unknown.append(f"through {user.name}: {error.message}")
                    continue
                if j >= len(table):
                    continue
                for user_out, cell in enumerate(table[j]):
                    produced = [
                        (_compose_tracked(t, rule_map, cell, user, False), sources)
                        for t, sources in incoming
                        for rule_map in cell.maps
                    ]
                    reached.setdefault((id(user), user_out), []).extend(produced)
                heapq.heappush(pending, (order.get(id(user), 0), id(user)))
    for per_target in out.values():
        for r in per_target.values():
            r.maps = _dedupe(r.maps)
    return out


# ---------------------------------------------------------------------------
# Fusion, call, conditional, while as op rules
# ---------------------------------------------------------------------------


def _body(instr: Instruction) -> Computation:
    called = instr.called_computations
    key = "calls" if instr.opcode == "fusion" else "to_apply"
    comps = called.get(key) or called.get("calls") or called.get("to_apply")
    if not comps:
        raise UnsupportedOpError(
            f"unknown indexing: {instr.opcode} {instr.name} names no computation", instr.span
        )
    return comps[0]


def _outputs(comp: Computation) -> list[Instruction]:
    root = comp.root
    if root is None:
        return []
    if root.opcode == "tuple":
        return list(root.operands)
    return [root]


@dataclass(frozen=True)
class ComposedOperandIndexing(OperandIndexing):
    """An operand's maps through a called computation: each map has its own runtime variables.

    ``runtime_vars`` (the op-rule convention: one list for all maps) holds those of the first
    map that has any, for display; ``per_map_runtime_vars[k]`` describes ``maps[k]``.
    """

    per_map_runtime_vars: tuple[tuple[RuntimeVar, ...], ...] = ()


def _cell(reached: Reached | None, exact_default: bool = True) -> OperandIndexing:
    if reached is None or reached.unknown:
        # A path we cannot follow may read anything: the known maps alone would be unsound.
        notes = tuple(reached.unknown) if reached else ("unknown indexing",)
        return OperandIndexing((IndexingMap.undefined(),), exact=False, notes=notes)
    if any(t.map.is_undefined for t in reached.maps):
        return OperandIndexing(
            (IndexingMap.undefined(),),
            exact=False,
            notes=("unknown indexing: data gathered from other replicas twice",),
        )
    maps = tuple(t.map for t in reached.maps)
    rts: tuple[RuntimeVar, ...] = next((t.runtime_vars for t in reached.maps if t.runtime_vars), ())
    exact = all(t.exact for t in reached.maps) and exact_default
    replicas = {t.replica_id for t in reached.maps if t.replica_id is not None}
    notes: tuple[str, ...] = ()
    if len(replicas) > 1:
        notes = ("the maps read from different replicas; replica_id_map describes the first",)
    return ComposedOperandIndexing(
        maps,
        exact=exact,
        runtime_vars=rts,
        notes=notes,
        per_map_runtime_vars=tuple(t.runtime_vars for t in reached.maps),
        replica_id_map=next((t.replica_id for t in reached.maps if t.replica_id is not None), None),
    )


def _computation_o2i(comp: Computation, num_operands: int, record: bool = False) -> IndexingTable:
    params = {p.parameter_number: p for p in comp.parameters}
    table: IndexingTable = []
    for output in _outputs(comp):
        reached = grouped_output_to_input(output, record=record)
        row = []
        for k in range(num_operands):
            p = params.get(k)
            r = reached.get(p) if p is not None else None
            if r is None:
                r = Reached()  # the output does not read this operand at all
            row.append(_cell(r) if (r.maps or r.unknown) else OperandIndexing((), exact=True))
        table.append(row)
    return table


def _computation_i2o(comp: Computation, num_operands: int) -> IndexingTable:
    params = {p.parameter_number: p for p in comp.parameters}
    outputs = _outputs(comp)
    starts = [
        p for k in range(num_operands) if (p := params.get(k)) is not None and p.shape.is_array
    ]
    walked = grouped_input_to_output_many(comp, starts, outputs)
    table: IndexingTable = []
    for k in range(num_operands):
        p = params.get(k)
        if p is None or not p.shape.is_array:
            table.append(
                [
                    OperandIndexing(
                        (IndexingMap.undefined(),),
                        exact=False,
                        notes=("unknown indexing: tuple-shaped parameter",),
                    )
                    for _ in outputs
                ]
            )
            continue
        reached = walked[id(p)]
        table.append(
            [
                _cell(reached[id(o)])
                if (reached[id(o)].maps or reached[id(o)].unknown)
                else OperandIndexing((), exact=True)
                for o in outputs
            ]
        )
    return table


# ---------------------------------------------------------------------------
# Fused computations that are structurally equal are composed once
# ---------------------------------------------------------------------------

_STRUCTURE: weakref.WeakKeyDictionary[Computation, tuple[Any, ...]] = weakref.WeakKeyDictionary()


def structure_key(comp: Computation) -> tuple[Any, ...]:
    """Everything about a computation that its maps depend on, without names.

    Equal keys mean equal indexing: the same instructions in the same order with the same
    opcodes, shapes, relevant attributes, literals, operand positions and called structures.
    """
    got = _STRUCTURE.get(comp)
    if got is not None:
        return got
    position = {id(i): k for k, i in enumerate(comp.instructions)}
    rows = []
    for instr in comp.instructions:
        called = (
            tuple(
                (key, tuple(structure_key(c) for c in comps))
                for key, comps in instr.called_computations.items()
            )
            if any(k in instr.attributes for k in CALL_ATTRIBUTES)
            else ()
        )
        rows.append(
            (
                instr.opcode,
                str(instr.shape),
                instr.is_root,
                instr.literal,
                tuple(position.get(id(o), -1) for o in instr.operands),
                tuple(
                    sorted(
                        (k, v)
                        for k, v in instr.attributes.items()
                        if k not in INDEXING_IRRELEVANT_ATTRIBUTES and k not in CALL_ATTRIBUTES
                    )
                ),
                called,
            )
        )
    got = tuple(rows)
    _STRUCTURE[comp] = got
    return got


_TABLES: dict[tuple[Any, ...], tuple[Computation, IndexingTable]] = {}
register(_TABLES.clear)


def _cached_table(instr: Instruction, direction: str) -> IndexingTable:
    comp = _body(instr)
    key = (direction, instr.opcode, len(instr.operands), structure_key(comp))
    hit = _TABLES.get(key)
    if hit is not None:
        first, table = hit
        return table if first is comp else _repoint(table, first, comp)
    compute = _computation_o2i if direction == "o2i" else _computation_i2o
    table = compute(comp, len(instr.operands))
    if len(_TABLES) < 4096 and _repointable(table, comp):
        _TABLES[key] = (comp, table)
    return table


def _runtime_producers(table: IndexingTable) -> list[Instruction]:
    out = []
    for row in table:
        for cell in row:
            out.extend(rv.producer for rv in cell.runtime_vars)
            for rvs in getattr(cell, "per_map_runtime_vars", ()):
                out.extend(rv.producer for rv in rvs)
    return out


def _repointable(table: IndexingTable, comp: Computation) -> bool:
    """Only tables whose runtime variables come from the computation itself are shared."""
    inside = {id(i) for i in comp.instructions}
    return all(id(p) in inside for p in _runtime_producers(table))


def _repoint(table: IndexingTable, first: Computation, comp: Computation) -> IndexingTable:
    """``table`` (computed for ``first``) with runtime producers moved to ``comp``'s
    instructions."""
    if not _runtime_producers(table):
        return table
    position = {id(i): k for k, i in enumerate(first.instructions)}

    def move(rvs: tuple[RuntimeVar, ...]) -> tuple[RuntimeVar, ...]:
        return tuple(
            replace(rv, producer=comp.instructions[position[id(rv.producer)]]) for rv in rvs
        )

    out: IndexingTable = []
    for row in table:
        new_row = []
        for cell in row:
            changes: dict[str, Any] = {"runtime_vars": move(cell.runtime_vars)}
            if isinstance(cell, ComposedOperandIndexing):
                changes["per_map_runtime_vars"] = tuple(move(r) for r in cell.per_map_runtime_vars)
            new_row.append(replace(cell, **changes))
        out.append(new_row)
    return out


def clear_caches() -> None:
    _TABLES.clear()
    compose_simplified.cache_clear()


def output_to_input(instr: Instruction) -> IndexingTable:
    if instr.opcode in ("fusion", "call"):
        return _cached_table(instr, "o2i")
    if instr.opcode == "conditional":
        return _conditional(instr, "o2i")
    if instr.opcode == "while":
        return _while_o2i(instr)
    return op_rules.output_to_input(instr)


def input_to_output(instr: Instruction) -> IndexingTable:
    if instr.opcode in ("fusion", "call"):
        return _cached_table(instr, "i2o")
    if instr.opcode in ("conditional", "while"):
        raise UnsupportedOpError(
            f"unknown indexing: no input-to-output rule for {instr.opcode}", instr.span
        )
    return op_rules.input_to_output(instr)


def _branches(instr: Instruction) -> list[Computation]:
    called = instr.called_computations
    if "branch_computations" in called:
        return called["branch_computations"]
    return called.get("true_computation", []) + called.get("false_computation", [])


def _conditional(instr: Instruction, direction: str) -> IndexingTable:
    """Union over branches: operand k+1 feeds branch k's parameter; operand 0 selects."""
    branches = _branches(instr)
    if not branches:
        raise UnsupportedOpError("unknown indexing: conditional without branches", instr.span)
    outputs = instr.shape.tuple_shapes if instr.shape.is_tuple else (instr.shape,)
    table: IndexingTable = []
    for out_id, out_shape in enumerate(outputs):
        row = [OperandIndexing((IndexingMap.build([], out_shape.dims),), exact=True)]
        for k, branch in enumerate(branches):
            operand = instr.operands[k + 1] if k + 1 < len(instr.operands) else None
            if operand is None:
                continue
            if not operand.shape.is_array:
                row.append(
                    OperandIndexing(
                        (IndexingMap.undefined(),),
                        exact=False,
                        notes=("unknown indexing: tuple-shaped branch operand",),
                    )
                )
                continue
            sub = _computation_o2i(branch, 1)
            cell = sub[out_id][0] if out_id < len(sub) else OperandIndexing((), exact=True)
            # Only one branch runs: its reads are a subset of the union (exact per branch).
            row.append(
                OperandIndexing(
                    cell.maps,
                    exact=False,
                    runtime_vars=cell.runtime_vars,
                    notes=(f"read only when branch {k} runs",),
                )
            )
        table.append(row)
    return table


def _while_o2i(instr: Instruction) -> IndexingTable:
    """Exact identity for loop-carried elements the body passes through unchanged."""
    called = instr.called_computations
    body = (called.get("body") or [None])[0]
    outputs = instr.shape.tuple_shapes if instr.shape.is_tuple else (instr.shape,)
    root = body.root if body is not None else None
    table: IndexingTable = []
    for out_id, out_shape in enumerate(outputs):
        passthrough = False
        if root is not None and root.opcode == "tuple" and out_id < len(root.operands):
            element = root.operands[out_id]
            passthrough = (
                element.opcode == "get-tuple-element"
                and element.operands[0].opcode == "parameter"
                and element.tuple_index == out_id
            )
        if passthrough and out_shape.is_array:
            table.append(
                [
                    OperandIndexing(
                        (IndexingMap.identity(out_shape.dims),),
                        exact=True,
                        notes=(f"tuple element {out_id} passes through the loop unchanged",),
                    )
                ]
            )
        else:
            table.append(
                [
                    OperandIndexing(
                        (IndexingMap.undefined(),),
                        exact=False,
                        notes=(
                            f"unknown indexing: tuple element {out_id} is updated by the loop body",
                        ),
                    )
                ]
            )
    return table


# ---------------------------------------------------------------------------
# Chains inside one computation (--from/--to), and composition trees (--tree)
# ---------------------------------------------------------------------------


def _find(module: HloModule, name: str) -> Instruction:
    for instr in module.instructions():
        if instr.name == name:
            return instr
    raise HloidxError(f"no instruction named {name}")


def chain_maps(module: HloModule, a: str, b: str) -> tuple[Instruction, Instruction, Reached]:
    """Maps from the later instruction's output to the earlier one's, along every path."""
    first, second = _find(module, a), _find(module, b)
    if first.computation is not second.computation:
        raise HloidxError(f"{a} and {b} are in different computations")
    for consumer, producer in ((first, second), (second, first)):
        reached = grouped_output_to_input(consumer, record=True, stop_at=producer)
        if producer in reached and (reached[producer].maps or reached[producer].unknown):
            return consumer, producer, reached[producer]
    raise HloidxError(
        f"{b} does not read {a} and {a} does not read {b}: there is no path between them"
    )


def chain_report(
    module: HloModule,
    a: str,
    b: str,
    *,
    simplify: bool = True,
    verify: bool = True,
    spelling: str = "floordiv",
) -> dict[str, Any]:
    from ..maps.printer import format_map
    from ..maps.utilization import utilization

    consumer, producer, reached = chain_maps(module, a, b)
    maps = [t.map for t in reached.maps]
    util = utilization(maps, producer.shape.dims) if producer.shape.is_array and maps else None
    return {
        "schema_version": 1,
        "from": consumer.name,
        "to": producer.name,
        "maps": [format_map(m, spelling) for m in maps] or ["UNDEFINED"],
        "exact": all(t.exact for t in reached.maps) and not reached.unknown,
        "utilization": util.to_json() if util else None,
        "paths": [
            [
                {
                    "instruction": s.instruction,
                    "opcode": s.opcode,
                    "map": format_map(s.map, spelling),
                }
                for s in t.steps
            ]
            for t in reached.maps
        ],
        "notes": list(reached.unknown),
    }


def render_trees(
    console: Any, module: HloModule, analysis: Any, spelling: str = "floordiv"
) -> None:
    """``--tree``: for each fusion, each operand map with the composition steps that built it."""
    from rich.text import Text

    from ..maps.printer import format_map

    for ins in analysis.instructions:
        instr = ins.instruction
        if instr is None or instr.opcode not in ("fusion", "call"):
            continue
        try:
            comp = _body(instr)
        except HloidxError:
            continue
        params = {p.parameter_number: p for p in comp.parameters}
        console.print(Text(f"composition of {instr.name} ({comp.name})", style="bold underline"))
        for out_id, output in enumerate(_outputs(comp)):
            reached = grouped_output_to_input(output, record=True)
            for k in range(len(instr.operands)):
                p = params.get(k)
                r = reached.get(p) if p is not None else None
                if r is None:
                    continue
                for t in r.maps:
                    console.print(
                        Text(
                            f"  output {out_id} → operand {k} ({instr.operands[k].name}):",
                            style="bold",
                        )
                    )
                    for step in t.steps:
                        line = Text(f"    {step.instruction} [{step.opcode}]: ", style="dim")
                        line.append(format_map(step.map, spelling))
                        console.print(line)
