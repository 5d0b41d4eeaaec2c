"""The provenance oracle: which operand elements each output element of an HLO op really reads.

The interpreter here evaluates an instruction (recursing into fusions, calls, conditionals and
whiles) on concrete data, carrying for every element a *value* and a *provenance*: the set of
operand elements it was computed from. It knows each op's semantics directly (elementwise ops
union their operands' sets at the same index, a reduce unions everything it combines, a
dynamic-slice reads where its clamped start indices say, ...). It never uses
:class:`~hloidx.maps.indexing_map.IndexingMap` or the op rules: it is the independent reference
that the indexing maps are tested against.

A provenance tag is ``(operand_number, tuple_leaf, index)``: ``tuple_leaf`` is 0 for array
operands and the position among the leaves for tuple-shaped ones (``while``).

Semantics that deliberately differ from index tracking (an analysis that over-approximates
these is sound, not exact):

* ``pad`` reads the padding value only where padding lands; ``dynamic-update-slice`` reads
  its base operand only outside the updated window; ``conditional`` runs one branch.
* ``gather``/``dynamic-slice``/``dynamic-update-slice`` start indices are clamped into range,
  so what is read depends on the index *values*; the data used is recorded in
  :class:`Reads` so that runtime variables can be fixed to the same values.
* A ``reduce``, ``reduce-window`` or ``sort`` output reads everything combined into it
  (including the init values), whatever the reducer computes; every index operand of a
  data-dependent op is read by every output element it positions.
* A ``while`` follows the values through its iterations (at most 1000), and its condition's
  reads are not added to the outputs.

Everything is bounded: a tensor of more than ``limit`` elements raises
:class:`~hloidx.errors.EnumerationLimitError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import HloidxError
from .interpreter import oracle_relation, reads
from .tensors import DEFAULT_LIMIT, Reads, Tensor

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from ..hlo.op_rules import IndexingTable, RuntimeVar
    from ..maps.indexing_map import IndexingMap


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Value semantics of elementwise ops (provenance is always the union)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Layout-aware bitcast
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The interpreter
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Operand data
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Comparing the analysis with the oracle
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    """One disagreement (or one comparison that could not be made).

    ``kind``: ``"missing"`` — the oracle reads elements the maps do not claim (the maps are
    unsound); ``"extra"`` — an *exact* map claims elements the oracle does not read;
    ``"unchecked"`` — no comparison was possible (undefined map, runtime variable whose value
    is unknown, enumeration limit), never a failure by itself. ``examples`` are up to five
    ``(output index, operand index)`` pairs of the difference.
    """

    instruction: str
    output_id: int
    operand_index: int
    kind: str
    message: str
    examples: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()

    @property
    def is_error(self) -> bool:
        return self.kind in ("missing", "extra")

    def __str__(self) -> str:
        where = f"{self.instruction} output {self.output_id} operand {self.operand_index}"
        more = (
            "; e.g. " + ", ".join(f"{o} -> {i}" for o, i in self.examples) if self.examples else ""
        )
        return f"{where}: {self.kind}: {self.message}{more}"


class _Unchecked(Exception):
    pass


def _runtime_value_array(rv: RuntimeVar, dims: np.ndarray, evaluation: Reads) -> np.ndarray:
    """The value of one runtime variable at each domain point (columns of ``dims``)."""
    from ..maps.expr import evaluate

    value = evaluation.value_of(rv.producer)
    if value is None or isinstance(value, tuple):
        raise _Unchecked(f"the value of {rv.producer.name} is not known to the oracle")
    if not value.known:
        raise _Unchecked(f"the oracle did not compute the values of {rv.producer.name}")
    m = rv.map
    if any(v.kind != 0 for r in m.results for v in _vars(r)):
        raise _Unchecked(
            f"the map of runtime variable {rv.producer.name} is not a function of the dims"
        )
    n = dims.shape[0]
    columns = [dims[:, i] for i in range(dims.shape[1])]
    index = [
        np.broadcast_to(np.asarray(evaluate(r, lambda v: columns[v.index]), dtype=np.int64), (n,))
        for r in m.results
    ]
    if not index:
        return np.full(
            n, int(value.values.reshape(-1)[0]) if value.values.size else 0, dtype=np.int64
        )
    return value.values[tuple(index)].astype(np.int64)


def _vars(expr: Any) -> set[Any]:
    from ..maps.expr import variables

    return variables(expr)


def map_relation(
    indexing_map: IndexingMap,
    runtime_vars: Sequence[RuntimeVar],
    evaluation: Reads,
    limit: int = 1_000_000,
) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The relation of ``indexing_map`` with its runtime variables fixed to ``evaluation``'s values.

    A runtime variable's value is clamped into its feasible range, as the data-dependent ops
    (dynamic-slice, dynamic-update-slice, gather) clamp their start indices.
    """
    from ..maps.domain import box_points, relation
    from ..maps.expr import Var, VarKind, const
    from ..maps.indexing_map import IndexingMap

    if not indexing_map.rt_vars:
        return relation(indexing_map, limit)
    if len(runtime_vars) != len(indexing_map.rt_vars):
        raise _Unchecked("the map's runtime variables are not described")
    dim_list = [Var(VarKind.DIM, i) for i in range(len(indexing_map.dim_vars))]
    columns = box_points(indexing_map, dim_list, limit)
    dims = (
        np.stack([columns[v] for v in dim_list], axis=1)
        if dim_list
        else np.zeros((1, 0), dtype=np.int64)
    )
    n = dims.shape[0]
    values = []
    for rv, var in zip(runtime_vars, indexing_map.rt_vars, strict=True):
        raw = _runtime_value_array(rv, dims, evaluation)
        values.append(np.clip(raw, var.bounds.lower, var.bounds.upper) if n else raw)
    table = np.stack(values, axis=1) if values else np.zeros((n, 0), dtype=np.int64)
    out: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    groups: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for point, rts in zip(dims.tolist(), table.tolist(), strict=True):
        groups.setdefault(tuple(rts), set()).add(tuple(point))
    for rts, points in groups.items():
        fixed = indexing_map.substitute(
            {Var(VarKind.RUNTIME, i): const(v) for i, v in enumerate(rts)}
        )
        fixed = IndexingMap(fixed.results, fixed.dim_vars, fixed.range_vars, (), fixed.constraints)
        out |= {pair for pair in relation(fixed, limit) if pair[0] in points}
    return out


def _claims(
    instr: Instruction,
) -> dict[tuple[int, int], tuple[list[tuple[IndexingMap, tuple[RuntimeVar, ...]]], bool]]:
    """``(output_id, operand) -> ([(map, runtime vars)], exact)`` from the analysis."""
    from ..hlo import fusion

    table = fusion.output_to_input(instr)
    out = {}
    for out_id, row in enumerate(table):
        for j, cell in enumerate(row):
            per_map = getattr(cell, "per_map_runtime_vars", None)
            pairs = [
                (m, per_map[k] if per_map is not None else cell.runtime_vars)
                for k, m in enumerate(cell.maps)
            ]
            out[(out_id, j)] = (pairs, cell.exact)
    return out


def _carries_the_result(instr: Instruction, operand: int) -> bool:
    """Whether output leaf k reads leaf k of this operand: a tuple operand of the result's own
    shape (a while's state, an opt-barrier's tuple). Any other operand (an element selected
    by get-tuple-element, a branch operand) is compared as a whole."""
    shape = instr.operands[operand].shape
    return shape.is_tuple and shape.without_layout() == instr.shape.without_layout()


def check_maps(
    instr: Instruction,
    table: IndexingTable | None = None,
    *,
    evaluation: Reads | None = None,
    seed: int = 0,
    limit: int = DEFAULT_LIMIT,
) -> list[Mismatch]:
    """Compare output-to-input maps (``table``, default: the analysis's) with the oracle.

    For each output leaf and operand, the union of the cell's maps, enumerated with runtime
    variables fixed to the oracle's values, must equal the oracle's reads when the cell is
    ``exact`` and contain them otherwise. A tuple operand of the result's own shape (``while``)
    is compared leaf by leaf with the output leaf of the same number.
    """
    if evaluation is None:
        evaluation = reads(instr, seed=seed, limit=limit)
    if table is None:
        claims = _claims(instr)
    else:
        claims = {
            (o, j): (
                [
                    (
                        m,
                        getattr(c, "per_map_runtime_vars", None)[k]
                        if getattr(c, "per_map_runtime_vars", None) is not None
                        else c.runtime_vars,
                    )
                    for k, m in enumerate(c.maps)
                ],
                c.exact,
            )
            for o, row in enumerate(table)
            for j, c in enumerate(row)
        }
    mismatches: list[Mismatch] = []
    for (out_id, j), (pairs, exact) in sorted(claims.items()):
        if out_id >= len(evaluation.outputs) or j >= len(instr.operands):
            continue
        leaf = out_id if _carries_the_result(instr, j) else None
        actual = oracle_relation(instr, j, out_id, operand_leaf=leaf, evaluation=evaluation)
        try:
            claimed: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
            for m, rts in pairs:
                if m.is_undefined:
                    raise _Unchecked("unknown indexing")
                if m.is_known_empty:
                    continue
                claimed |= map_relation(m, rts, evaluation)
        except _Unchecked as why:
            mismatches.append(Mismatch(instr.name, out_id, j, "unchecked", str(why)))
            continue
        except HloidxError as error:
            mismatches.append(Mismatch(instr.name, out_id, j, "unchecked", error.message))
            continue
        missing = actual - claimed
        if missing:
            mismatches.append(
                Mismatch(
                    instr.name,
                    out_id,
                    j,
                    "missing",
                    f"{len(missing)} read(s) not covered by the maps",
                    tuple(sorted(missing)[:5]),
                )
            )
        extra = claimed - actual
        if exact and extra:
            mismatches.append(
                Mismatch(
                    instr.name,
                    out_id,
                    j,
                    "extra",
                    f"exact maps claim {len(extra)} read(s) the op does not make",
                    tuple(sorted(extra)[:5]),
                )
            )
    return mismatches


def check_instruction(
    instr: Instruction,
    *,
    seed: int = 0,
    limit: int = DEFAULT_LIMIT,
    operand_values: Mapping[int, Any] | None = None,
) -> list[Mismatch]:
    """Check one instruction's output-to-input maps against the oracle. Stable API.

    The maps are hloidx's analysis (op rules, or composition for fusion/call/conditional/
    while). The instruction is interpreted once on data chosen as :func:`reads` does
    (``seed``, ``operand_values``); every runtime variable is fixed to the value its producer
    had there, clamped into its feasible range. Per output and operand, the union of the
    maps' relations must equal the oracle's reads when the analysis says ``exact``, and
    contain them otherwise. Returns the mismatches (empty: agreement); ``Mismatch.is_error``
    separates failures from ``"unchecked"`` notes. An instruction the oracle cannot
    interpret (unsupported op, a tensor beyond ``limit`` elements) gives a single
    ``"unchecked"`` entry with ``output_id`` and ``operand_index`` -1, never an exception.
    """
    try:
        evaluation = reads(instr, operand_values=operand_values, seed=seed, limit=limit)
        return check_maps(instr, evaluation=evaluation, seed=seed, limit=limit)
    except HloidxError as error:
        return [Mismatch(instr.name, -1, -1, "unchecked", error.message)]


__all__ = [
    "DEFAULT_LIMIT",
    "Mismatch",
    "Reads",
    "Tensor",
    "check_instruction",
    "check_maps",
    "map_relation",
    "oracle_relation",
    "reads",
]
