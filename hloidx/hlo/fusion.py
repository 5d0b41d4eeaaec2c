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
from typing import Any

from ..caches import register
from ..errors import HloidxError, UnsupportedOpError
from ..maps.indexing_map import IndexingMap
from . import op_rules
from .composition import (
    MAX_MAPS_PER_INSTRUCTION,
    ComposedOperandIndexing,
    Reached,
    ReachedTargets,
    Tracked,
    _compose_tracked,
    _dedupe,
    compose_simplified,
    topological_from,
)
from .ir import Computation, Instruction
from .op_rules import IndexingTable, OperandIndexing, RuntimeVar
from .sharing import _repoint, _repointable, names_inside, op_table, structure_key
from .sharing import _runtime_producers as producers
from .sparse_rows import SparseRow, stored_items

# ---------------------------------------------------------------------------
# Walking a computation
# ---------------------------------------------------------------------------


def parameters_reached(start: Instruction) -> list[Instruction]:
    """The parameters ``start`` depends on (directly or through other instructions)."""
    return [i for i in topological_from(start) if i.opcode == "parameter"]


def _tuple_leaf_count(instr: Instruction) -> int:
    return len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1


def _nested_tuple_step(instr: Instruction, out_id: int) -> str | None:
    """Why a path through ``instr``'s element ``out_id`` cannot be followed, or None."""
    if instr.opcode == "get-tuple-element" and instr.shape.is_tuple:
        return f"unknown indexing: {instr.name} selects a tuple inside a tuple"
    if (
        instr.opcode == "tuple"
        and out_id < len(instr.operands)
        and instr.operands[out_id].shape.is_tuple
    ):
        return f"unknown indexing: {instr.name} holds a tuple inside a tuple"
    return None


def grouped_output_to_input(
    start: Instruction,
    output_id: int = 0,
    record: bool = False,
    stop_at: Instruction | None = None,
    rules: Any = None,
) -> dict[Instruction, Reached]:
    """Maps from ``start``'s output ``output_id`` to every instruction it (transitively) reads.

    Keys are instructions; each ``Reached`` lists the distinct maps (start output index →
    that instruction's output index, for array-shaped instructions) and why any path was lost.
    Walking stops at ``stop_at`` (it is recorded, not walked through) and at parameters.
    ``rules`` replaces each op's table (``--names roles`` walks with named symbols).
    """
    rule_table = output_to_input if rules is None else rules
    shape = start.shape.tuple_shapes[output_id] if start.shape.is_tuple else start.shape
    identity = Tracked(IndexingMap.identity(shape.dims))
    # reached[(instr, output_id)] -> maps from the start's output to that output
    reached: dict[tuple[int, int], list[Tracked]] = {(id(start), output_id): [identity]}
    result: dict[Instruction, Reached] = {}
    for instr in topological_from(start):
        record_here = result.setdefault(instr, Reached())
        if record_here.unknown and instr is not stop_at and instr.opcode != "parameter":
            # What an instruction of unknown indexing reads is unknown, and so is everything
            # that instruction reads in turn: the path is lost all the way down.
            note = record_here.unknown[0]
            for operand in instr.operands:
                lost = result.setdefault(operand, Reached()).unknown
                if note not in lost:
                    lost.append(note)
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
            nested = _nested_tuple_step(instr, out_id)
            if nested is not None:
                # maps are keyed by one tuple index: an element of an element would be
                # confused with another element, so the path is given up, not guessed
                record_here.unknown.append(nested)
                for operand in instr.operands:
                    result.setdefault(operand, Reached()).unknown.append(nested)
                continue
            if instr.opcode == "get-tuple-element":
                key = (id(instr.operands[0]), instr.tuple_index or 0)
                reached.setdefault(key, []).extend(incoming)
                continue
            if instr.opcode == "tuple":
                reached.setdefault((id(instr.operands[out_id]), 0), []).extend(incoming)
                continue
            try:
                table = rule_table(instr)
            except HloidxError as error:
                record_here.unknown.append(error.message)
                for operand in instr.operands:
                    result.setdefault(operand, Reached()).unknown.append(
                        f"through {instr.name}: {error.message}"
                    )
                continue
            row = table[out_id] if out_id < len(table) else table[0]
            for j, cell in stored_items(row):
                if j >= len(instr.operands):
                    break
                operand = instr.operands[j]
                produced = [
                    _compose_tracked(t, rule_map, cell, instr, record)
                    for t in incoming
                    for rule_map in cell.maps
                ]
                if (
                    cell.element is None
                    and operand.shape.is_tuple
                    and any(m.is_undefined for m in cell.maps)
                ):
                    # read somehow (an op without a rule, a loop-updated element): which
                    # element is unknown, so every element is read, through UNDEFINED
                    for leaf in range(len(operand.shape.tuple_shapes or ())):
                        reached.setdefault((id(operand), leaf), []).extend(produced)
                    continue
                # a tuple-shaped operand is read at one element (a *-done reads its start's)
                bucket = reached.setdefault((id(operand), cell.element or 0), [])
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
    order_of_targets = list(dict.fromkeys(id(t) for t in targets))
    out: dict[int, ReachedTargets] = {
        id(s): ReachedTargets(order_of_targets, target_ids) for s in starts
    }

    def deliver(target_id: int, entries: list[_Entry]) -> None:
        for t, sources in entries:
            for source in sources:
                out[source].maps.setdefault(target_id, []).append(t)

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
                if user.opcode in ("get-tuple-element", "tuple") and (
                    user.shape.is_tuple
                    if user.opcode == "get-tuple-element"
                    else node.shape.is_tuple
                ):
                    for _, sources in incoming:
                        for source in sources:
                            out[source].unknown.append(
                                f"unknown indexing: {user.name}: a tuple inside a tuple"
                            )
                    continue
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
                            out[source].unknown.append(f"through {user.name}: {error.message}")
                    continue
                if j >= len(table):
                    continue
                for user_out, cell in stored_items(table[j]):
                    if (cell.element or 0) != out_id:
                        continue  # the user reads another element of this tuple
                    produced = [
                        (_compose_tracked(t, rule_map, cell, user, False), sources)
                        for t, sources in incoming
                        for rule_map in cell.maps
                    ]
                    reached.setdefault((id(user), user_out), []).extend(produced)
                heapq.heappush(pending, (order.get(id(user), 0), id(user)))
    for per_target in out.values():
        for target_id, maps in per_target.maps.items():
            per_target.maps[target_id] = _dedupe(maps)
    return out


# ---------------------------------------------------------------------------
# Fusion, call, conditional, while as op rules
# ---------------------------------------------------------------------------


def body_of(instr: Instruction) -> Computation:
    """The computation a fusion or call runs (its ``calls``/``to_apply``)."""
    called = instr.called_computations
    key = "calls" if instr.opcode == "fusion" else "to_apply"
    comps = called.get(key) or called.get("calls") or called.get("to_apply")
    if not comps:
        raise UnsupportedOpError(
            f"unknown indexing: {instr.opcode} {instr.name} names no computation", instr.span
        )
    return comps[0]


def computation_outputs(comp: Computation) -> list[Instruction]:
    root = comp.root
    if root is None:
        return []
    if root.opcode == "tuple":
        return list(root.operands)
    return [root]


#: a parameter no path reaches, or reached only through provably empty maps: never read
_NEVER_READ = OperandIndexing((IndexingMap.known_empty(),), exact=True)


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


def _parameter_positions(comp: Computation, num_operands: int) -> dict[int, int]:
    """``id(parameter) -> its number`` for the parameters the caller passes an operand to."""
    params = {p.parameter_number: p for p in comp.parameters}
    return {id(p): k for k, p in params.items() if k is not None and 0 <= k < num_operands}


def parameter_cells(
    start: Instruction,
    comp: Computation,
    num_operands: int,
    record: bool = False,
    positions: dict[int, int] | None = None,
) -> SparseRow:
    """The maps from ``start``'s output (an instruction of ``comp``) to each parameter: one
    cell per parameter a path reaches, KNOWN EMPTY (never read) for the others."""
    if positions is None:
        positions = _parameter_positions(comp, num_operands)
    reached = grouped_output_to_input(start, record=record)
    cells = {}
    for instr, r in reached.items():
        k = positions.get(id(instr))
        if k is not None and (r.maps or r.unknown):
            cells[k] = _cell(r)
    return SparseRow(num_operands, cells, _NEVER_READ)


def _computation_o2i(comp: Computation, num_operands: int, record: bool = False) -> IndexingTable:
    positions = _parameter_positions(comp, num_operands)
    return [
        parameter_cells(out, comp, num_operands, record, positions)
        for out in computation_outputs(comp)
    ]


#: every output of a tuple-shaped parameter: its elements are not followed
_TUPLE_PARAMETER = OperandIndexing(
    (IndexingMap.undefined(),), exact=False, notes=("unknown indexing: tuple-shaped parameter",)
)


def _computation_i2o(comp: Computation, num_operands: int) -> IndexingTable:
    params = {p.parameter_number: p for p in comp.parameters}
    outputs = computation_outputs(comp)
    starts = [
        p for k in range(num_operands) if (p := params.get(k)) is not None and p.shape.is_array
    ]
    walked = grouped_input_to_output_many(comp, starts, outputs)
    places: dict[int, list[int]] = {}  # an output may appear more than once in the root tuple
    for position, o in enumerate(outputs):
        places.setdefault(id(o), []).append(position)
    table: IndexingTable = []
    for k in range(num_operands):
        p = params.get(k)
        if p is None or not p.shape.is_array:
            table.append(SparseRow(len(outputs), {}, _TUPLE_PARAMETER))
            continue
        reached = walked[id(p)]
        if reached.unknown:
            # a lost path may read anything: every output's cell is the same UNDEFINED one
            table.append(SparseRow(len(outputs), {}, _cell(Reached([], list(reached.unknown)))))
            continue
        cells = {}
        for target_id, maps in reached.maps.items():
            if maps:
                cell = _cell(Reached(list(maps)))
                for position in places.get(target_id, ()):
                    cells[position] = cell
        table.append(SparseRow(len(outputs), cells, _NEVER_READ))
    return table


# ---------------------------------------------------------------------------
# Fused computations that are structurally equal are composed once
# ---------------------------------------------------------------------------


#: with each table: whether it names a runtime producer (most do not: they serve every copy)
_TABLES: dict[tuple[Any, ...], tuple[Computation, IndexingTable, bool]] = {}
register(_TABLES.clear)


def _cached_table(instr: Instruction, direction: str) -> IndexingTable:
    comp = body_of(instr)
    key = (direction, instr.opcode, len(instr.operands), structure_key(comp))
    hit = _TABLES.get(key)
    if hit is not None:
        first, table, named = hit
        return _repoint(table, first, comp) if named and first is not comp else table
    compute = _computation_o2i if direction == "o2i" else _computation_i2o
    table = compute(comp, len(instr.operands))
    if len(_TABLES) < 4096 and _repointable(table, comp) and not names_inside(table):
        _TABLES[key] = (comp, table, bool(producers(table)))
    return table


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
    return op_table(instr, "o2i", op_rules.output_to_input)


def input_to_output(instr: Instruction) -> IndexingTable:
    if instr.opcode in ("fusion", "call"):
        return _cached_table(instr, "i2o")
    if instr.opcode in ("conditional", "while"):
        raise UnsupportedOpError(
            f"unknown indexing: no input-to-output rule for {instr.opcode}", instr.span
        )
    return op_table(instr, "i2o", op_rules.input_to_output)


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
    # each branch's maps, composed once for all outputs
    subs: dict[int, IndexingTable] = {}
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
            sub = subs.get(k)
            if sub is None:
                sub = subs[k] = _computation_o2i(branch, 1)
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
                        element=out_id,
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
