"""The sampled oracle check: an instruction's maps against the point-wise provenance oracle on a
deterministic sample of output elements, for instructions too large for the whole-tensor oracle.

Output points: every corner of each output leaf's box, then seeded random points, ``points`` in
all per leaf (every element when there are fewer). At each point ``p`` and for each operand:

* output-to-input: the union of the operand's maps at ``p`` must contain every element the
  oracle says ``p`` reads ("missing" otherwise), and equal it when the operand is exact
  ("extra");
* input-to-output: for (a bounded sample of) the elements ``q`` that ``p`` reads, the maps at
  ``q`` must give ``p``; when exact, a few other outputs they give must read ``q`` back.

Input points too: every corner of each operand's box and seeded random elements
(``INPUT_POINTS``). For each, a few of the outputs the input-to-output maps give are asked: an
output that reads the element must be given it by the output-to-input maps, and when the operand
is exact every output asked must read it (so maps that claim reads the op never makes, on
elements no sampled output reads, are caught too).

An operand that no sampled output reads and no input point shows read is unchecked, as is an
operand the analysis has no maps for, and an instruction with no element to sample.

Runtime variables are fixed to the values their producers have on the oracle's data. Anything
that cannot be evaluated (an op the oracle does not know, a read set or a range-variable box
beyond the caps, a runtime variable it cannot fix) makes that point unchecked: never agreement.
The instruction is confirmed only when every point was checked.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING, Any

import numpy as np

from .maps_at_point import map_at
from .point_oracle import PointOracle
from .point_values import PointUnchecked
from .tensors import Tag

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from ..hlo.op_rules import RuntimeVar
    from ..maps.indexing_map import IndexingMap

#: output points sampled per output leaf
DEFAULT_POINTS = 64
#: per point and operand: elements read whose input-to-output maps are evaluated
I2O_SOURCES = 6
#: per such element of an exact operand: other outputs checked to read it back
I2O_TARGETS = 3
#: operand elements sampled per operand (corners, then seeded random elements)
INPUT_POINTS = 16

Index = tuple[int, ...]


@dataclass
class SampledOutcome:
    """``agrees`` (every sampled point checked and agreeing), ``disagrees`` or ``unchecked``
    (no disagreement, but some point or operand could not be checked)."""

    status: str
    points: int = 0
    problems: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    #: points checked without any unchecked comparison
    checked_points: int = 0

    @property
    def agrees(self) -> bool:
        return self.status == "agrees"


def sample_points(dims: Sequence[int], count: int, seed: int = 0) -> list[Index]:
    """Every corner of the box ``dims``, then seeded random points: ``count`` distinct points
    (every point when the box has no more)."""
    dims = tuple(int(n) for n in dims)
    total = prod(dims)
    if total == 0:
        return []
    if total <= count:
        return [tuple(int(i) for i in p) for p in np.ndindex(*dims)]
    points: list[Index] = []
    seen: set[Index] = set()
    for corner in itertools.product(*[(0, n - 1) if n > 1 else (0,) for n in dims]):
        if len(points) >= count:
            break
        if corner not in seen:
            seen.add(corner)
            points.append(corner)
    rng = np.random.default_rng(seed)
    attempts = 0
    while len(points) < count and attempts < 100 * count:
        attempts += 1
        p = tuple(int(rng.integers(0, n)) for n in dims)
        if p not in seen:
            seen.add(p)
            points.append(p)
    return points


def runtime_descriptions(
    instr: Instruction, direction: str
) -> dict[int, dict[IndexingMap, tuple[RuntimeVar, ...]]]:
    """Per operand: each map (as computed, and as simplified) -> its runtime variables'
    descriptions, rebuilt from the rule tables as the analysis builds them."""
    from ..hlo.analysis import _rules_for, drop_unused_runtime_vars, simplify_map

    o2i_rule, i2o_rule = _rules_for(instr)
    table = (o2i_rule if direction == "output_to_input" else i2o_rule)(instr)
    out: dict[int, dict[IndexingMap, tuple[RuntimeVar, ...]]] = {}
    for i in range(len(instr.operands)):
        if direction == "output_to_input":
            cells = [row[i] for row in table if i < len(row)]
        else:
            cells = list(table[i]) if i < len(table) else []
        found = out.setdefault(i, {})
        for cell in cells:
            per_map = getattr(cell, "per_map_runtime_vars", ()) or (cell.runtime_vars,) * len(
                cell.maps
            )
            for m, rts in zip(cell.maps, per_map, strict=False):
                found.setdefault(m, tuple(rts))
                if m.is_undefined or m.is_known_empty:
                    continue
                s, kept = drop_unused_runtime_vars(simplify_map(m), tuple(rts))
                found.setdefault(s, kept)
    return out


class _Operand:
    """One operand's maps, ready to be evaluated at points."""

    def __init__(self, op: Any, descriptions: dict[str, dict[int, Any]]) -> None:
        self.index: int = op.index
        self.exact = bool(op.exact)
        self.o2i = [
            (m, _described(m, descriptions["output_to_input"].get(self.index, {})))
            for m in op.output_to_input
        ]
        self.i2o = [
            (m, _described(m, descriptions["input_to_output"].get(self.index, {})))
            for m in op.input_to_output
        ]


def _described(m: IndexingMap, known: dict[IndexingMap, tuple[RuntimeVar, ...]]) -> Any:
    """The runtime variables of ``m``: those of the same map in the rule tables, else (a map
    read back from text, say) the ones every map of the operand with as many shares; None
    when neither says."""
    if not m.rt_vars:
        return ()
    if m in known:
        return known[m]
    candidates = {rts for other, rts in known.items() if other.num_rt_vars == m.num_rt_vars}
    return candidates.pop() if len(candidates) == 1 else None


def _claimed(maps: list[tuple[IndexingMap, Any]], point: Index, value_of: Any) -> set[Index]:
    out: set[Index] = set()
    for m, rts in maps:
        out |= map_at(m, point, rts, value_of)
    return out


def sampled_oracle_check(
    instr: Instruction,
    analysed: Any,
    *,
    points: int = DEFAULT_POINTS,
    seed: int = 0,
    oracle: PointOracle | None = None,
) -> SampledOutcome:
    """Compare ``analysed``'s maps (an :class:`~hloidx.hlo.analysis.InstructionAnalysis`)
    with the point-wise oracle on ``points`` sampled output elements per output leaf."""
    oracle = oracle or PointOracle(instr, seed=seed)
    outcome = SampledOutcome("agrees")
    leaves = instr.shape.leaves()
    operands: list[_Operand] = []
    needs_runtime = any(m.rt_vars for op in analysed.operands for m in op.output_to_input) or any(
        m.rt_vars for op in analysed.operands for m in op.input_to_output
    )
    descriptions: dict[str, dict[int, Any]] = {"output_to_input": {}, "input_to_output": {}}
    if needs_runtime:
        for direction in descriptions:
            try:
                descriptions[direction] = runtime_descriptions(instr, direction)
            except Exception as error:  # the maps' runtime variables stay undescribed
                outcome.unchecked.append(f"runtime variables not described: {error}")
    covered = {op.index for op in analysed.operands}
    for j in range(len(instr.operands)):
        if j not in covered:
            outcome.unchecked.append(f"operand {j}: the analysis has no maps for it")
    for op in analysed.operands:
        if instr.operands[op.index].shape.is_tuple:
            outcome.unchecked.append(f"operand {op.index}: tuple-shaped")
            continue
        if not op.output_to_input or not op.input_to_output:
            outcome.unchecked.append(f"operand {op.index}: no maps")
            continue
        operands.append(_Operand(op, descriptions))
    sampled = {p for leaf in leaves for p in sample_points(leaf.dims, points, seed)}
    outcome.points = len(sampled)
    if not sampled:
        outcome.unchecked.append("the output has no element to sample")
    exercised: set[int] = set()  # operands some checked point showed read
    for p in sorted(sampled):
        before = len(outcome.unchecked)
        try:
            truth = _reads_at(oracle, leaves, p)
        except PointUnchecked as why:
            outcome.unchecked.append(f"output {p}: {why}")
            continue
        exercised.update(j for j, _, _ in truth)
        for operand in operands:
            try:
                _check_point(oracle, leaves, operand, p, truth, outcome)
            except PointUnchecked as why:
                outcome.unchecked.append(f"output {p} operand {operand.index}: {why}")
        if len(outcome.unchecked) == before:
            outcome.checked_points += 1
    for operand in operands:
        dims = instr.operands[operand.index].shape.dims
        for q in sample_points(dims, INPUT_POINTS, seed):
            try:
                if _check_input_point(oracle, leaves, operand, q, outcome):
                    exercised.add(operand.index)
            except PointUnchecked as why:
                outcome.unchecked.append(f"operand {operand.index} element {q}: {why}")
        if operand.index not in exercised:
            outcome.unchecked.append(
                f"operand {operand.index}: no sampled output reads it and no sampled element "
                "of it was shown read"
            )
    if outcome.problems:
        outcome.status = "disagrees"
    elif outcome.unchecked:
        outcome.status = "unchecked"
    return outcome


def _reads_at(oracle: PointOracle, leaves: Sequence[Any], p: Index) -> frozenset[Tag]:
    """What output ``p`` reads, over every output leaf that has an element ``p`` (an
    operand's maps are the union over the output leaves)."""
    sets = [
        oracle.reads(p, k)
        for k, leaf in enumerate(leaves)
        if len(leaf.dims) == len(p) and all(i < n for i, n in zip(p, leaf.dims, strict=True))
    ]
    return frozenset().union(*sets)


def _check_point(
    oracle: PointOracle,
    leaves: Sequence[Any],
    operand: _Operand,
    p: Index,
    truth: frozenset[Tag],
    outcome: SampledOutcome,
) -> None:
    k = operand.index
    read = {index for j, _, index in truth if j == k}
    claimed = _claimed(operand.o2i, p, oracle.value_of)
    missing = read - claimed
    if missing:
        outcome.problems.append(
            f"operand {k} output_to_input: at output {p} the op reads {len(missing)} "
            f"element(s) the maps miss, e.g. {sorted(missing)[:3]}"
        )
    extra = claimed - read
    if operand.exact and extra:
        outcome.problems.append(
            f"operand {k} output_to_input: at output {p} exact maps claim {len(extra)} "
            f"element(s) the op does not read, e.g. {sorted(extra)[:3]}"
        )
    for q in _spread(sorted(read), I2O_SOURCES):
        outputs = _claimed(operand.i2o, q, oracle.value_of)
        if p not in outputs:
            outcome.problems.append(
                f"operand {k} input_to_output: element {q} is read by output {p}, "
                "which its maps do not give"
            )
        if not operand.exact:
            continue
        for other in _spread(sorted(outputs - {p}), I2O_TARGETS):
            if (k, 0, q) not in _reads_at(oracle, leaves, other):
                outcome.problems.append(
                    f"operand {k} input_to_output: exact maps give output {other} for "
                    f"element {q}, which that output does not read"
                )


def _check_input_point(
    oracle: PointOracle, leaves: Sequence[Any], operand: _Operand, q: Index, outcome: Any
) -> bool:
    """Ask a few of the outputs the input-to-output maps give for element ``q`` (see the
    module doc); whether one of them was shown to read ``q``."""
    k = operand.index
    shown = False
    outputs = _claimed(operand.i2o, q, oracle.value_of)
    for other in _spread(sorted(outputs), I2O_TARGETS):
        if (k, 0, q) in _reads_at(oracle, leaves, other):
            shown = True
            if q not in _claimed(operand.o2i, other, oracle.value_of):
                outcome.problems.append(
                    f"operand {k} output_to_input: output {other} reads element {q}, "
                    "which the maps miss"
                )
        elif operand.exact:
            outcome.problems.append(
                f"operand {k} input_to_output: exact maps give output {other} for element "
                f"{q}, which that output does not read"
            )
    return shown


def _spread(items: Sequence[Index], count: int) -> list[Index]:
    """Up to ``count`` items spread evenly over ``items`` (first and last included)."""
    if len(items) <= count:
        return list(items)
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]
