"""Conformance with XLA's own per-op expectations (``tests/data/xla/analysis_cases.json``).

Every output-to-input / input-to-output expectation of XLA's ``indexing_analysis_test.cc``
whose module's ENTRY root is not a fusion (fusions belong to the analysis layer's suite) is
checked against the op rules of :mod:`hloidx.hlo.rules`. The comparison is *semantic*: the
union of the relations of our maps equals the union of XLA's, enumerated with
:func:`hloidx.maps.domain.relation` (runtime variables kept as part of the key when both sides
have the same ones). Large domains are compared at sampled dimension points.

Where hloidx is deliberately tighter than XLA (the pad value, read only at padded positions;
the dynamic-update-slice base operand, read only outside the updated window) our relation
must be a subset of XLA's; the op-rule oracle tests show it is exactly what the op reads.
"""

from __future__ import annotations

import json
import random

import paths
import pytest

import hloidx
from hloidx.hlo import op_rules
from hloidx.hlo.ir import Instruction, Shape
from hloidx.maps.domain import relation
from hloidx.maps.expr import dim, replace_vars
from hloidx.maps.indexing_map import IndexingMap
from hloidx.maps.interval import Interval

CASES_FILE = paths.XLA_TESTS / "analysis_cases.json"
FULL_ENUMERATION = 60_000  # points of a map's box enumerated whole; above that, sampled
SAMPLES = 24

#: (opcode, kind, operand id) where our relation is a strict, deliberate subset of XLA's
TIGHTER_THAN_XLA = {
    ("pad", "output_to_input", 1),
    ("dynamic-update-slice", "output_to_input", 0),
    # XLA reads every kernel element for every output and every batch group for every
    # output feature; hloidx reads the kernel only where it meets real (unpadded,
    # undilated) input, and only the output feature's own batch group
    ("convolution", "output_to_input", 0),
    ("convolution", "output_to_input", 1),
}


def _entries() -> list[tuple[str, int, dict]]:
    cases = json.loads(CASES_FILE.read_text())
    out = []
    for case in cases:
        for k, entry in enumerate(case["expected"]):
            if entry["kind"] in ("output_to_input", "input_to_output"):
                out.append((case["test"], k, {"hlo": case["hlo"], **entry}))
    return out


ENTRIES = _entries()


def _expected_operands(entry: dict) -> dict[int, list[dict]]:
    """operand (or output) id -> XLA's maps for it (several entries form a union)."""
    items = entry.get("operands")
    if items is None and "operand_id" in entry:
        items = [{"operand_id": entry["operand_id"], "map": entry["map"]}]
    grouped: dict[int, list[dict]] = {}
    for item in items or []:
        grouped.setdefault(item["operand_id"], []).append(item)
    return grouped


# -- physical layouts (XLA's use_physical_layout mode) --------------------------------


def _physical_order(shape: Shape) -> list[int]:
    """Logical dimensions listed major to minor (default layout: descending)."""
    if shape.layout is not None and len(shape.layout.minor_to_major) == shape.rank:
        return list(reversed(shape.layout.minor_to_major))
    return list(range(shape.rank))


def _to_physical(m: IndexingMap, src: Shape, dst: Shape) -> IndexingMap:
    """Re-express a logical src-index -> dst-index map on both physical index spaces."""
    src_order, dst_order = _physical_order(src), _physical_order(dst)
    renumber = {dim(logical): dim(position) for position, logical in enumerate(src_order)}
    results = [replace_vars(m.results[logical], renumber) for logical in dst_order]
    return IndexingMap(
        tuple(results),
        tuple(m.dim_vars[logical] for logical in src_order),
        m.range_vars,
        m.rt_vars,
        tuple((replace_vars(e, renumber), i) for e, i in m.constraints),
    )


# -- semantic comparison ------------------------------------------------------------


def _fix_dims(m: IndexingMap, point: tuple[int, ...]) -> IndexingMap:
    return m.add_constraints([(dim(i), Interval(v, v)) for i, v in enumerate(point)])


def _union(maps: list[IndexingMap], rt: bool, point: tuple[int, ...] | None = None) -> set:
    out: set = set()
    for m in maps:
        if point is not None:
            if m.num_dims != len(point):
                raise AssertionError(f"{m} has {m.num_dims} dims, expected {len(point)}")
            m = _fix_dims(m, point)
        out |= relation(m, with_runtime=rt)
    return out


def _dim_box(maps: list[IndexingMap]) -> list[Interval]:
    box = [v.bounds for v in maps[0].dim_vars]
    for m in maps[1:]:
        box = [a.union(v.bounds) for a, v in zip(box, m.dim_vars, strict=True)]
    return box


def _sample_points(box: list[Interval], rng: random.Random) -> list[tuple[int, ...]]:
    points = {tuple(b.lower for b in box), tuple(b.upper for b in box)}
    while len(points) < SAMPLES:
        points.add(tuple(rng.randint(b.lower, b.upper) for b in box))
    return sorted(points)


def _in_shape(pairs: set, shape: tuple[int, ...]) -> set:
    return {(k, r) for k, r in pairs if all(0 <= x < n for x, n in zip(r, shape, strict=True))}


def _compare(
    ours: list[IndexingMap], theirs: list[IndexingMap], subset: bool, target: tuple[int, ...]
) -> None:
    """XLA leaves some results unconstrained (dynamic-update-slice's update index can go
    negative): only pairs whose result lies inside the ``target`` shape mean anything, so
    XLA's side is clipped to it; ours must lie inside it already."""
    ours = [m for m in ours if not m.is_known_empty]  # an empty map adds nothing to a union
    theirs = [m for m in theirs if not m.is_known_empty]
    rt = (
        bool(ours)
        and bool(theirs)
        and {m.num_rt_vars for m in ours + theirs} == {ours[0].num_rt_vars}
    )
    if ours and theirs:
        assert {m.num_dims for m in ours + theirs} == {theirs[0].num_dims}, (ours, theirs)
    biggest = max((m.box_size() for m in ours + theirs), default=0)
    if biggest <= FULL_ENUMERATION:
        pairs = [(_union(ours, rt), _union(theirs, rt))]
    else:
        rng = random.Random(0)
        points = _sample_points(_dim_box(ours + theirs), rng)
        pairs = [(_union(ours, rt, p), _union(theirs, rt, p)) for p in points]
    for mine, xla in pairs:
        assert _in_shape(mine, target) == mine, (
            f"out of bounds: {sorted(mine - _in_shape(mine, target))[:5]}"
        )
        xla = _in_shape(xla, target)
        if subset:
            assert mine <= xla, f"not within XLA's relation: {sorted(mine - xla)[:5]}"
        else:
            assert mine == xla, (
                f"only ours: {sorted(mine - xla)[:5]}; only XLA's: {sorted(xla - mine)[:5]}"
            )


def _root(entry: dict) -> Instruction:
    module = hloidx.parse_hlo(entry["hlo"])
    return module.entry.root


@pytest.mark.parametrize(
    ("test", "index", "entry"), ENTRIES, ids=[f"{t}-{i}" for t, i, _ in ENTRIES]
)
def test_xla_expectation_holds(test: str, index: int, entry: dict) -> None:
    root = _root(entry)
    if root.opcode == "fusion":
        pytest.skip("fusion roots are checked by the analysis layer's conformance suite")
    kind = entry["kind"]
    rule_exists = (
        op_rules.has_output_to_input_rule
        if kind == "output_to_input"
        else op_rules.has_input_to_output_rule
    )(root.opcode)
    expected = _expected_operands(entry)
    undefined = all(
        item["map"].strip() == "UNDEFINED" for items in expected.values() for item in items
    )
    if undefined and expected:
        with pytest.raises(hloidx.errors.UnsupportedOpError):
            (op_rules.output_to_input if kind == "output_to_input" else op_rules.input_to_output)(
                root
            )
        return
    if not rule_exists:
        pytest.xfail(f"no {kind} rule for {root.opcode} yet")
    if kind == "output_to_input":
        table = op_rules.output_to_input(root)
        row = table[entry["output_id"]]
    else:
        table = op_rules.input_to_output(root)
        row = table[entry["input_id"]]
    if entry.get("matcher") == "IsEmpty":
        assert all(not cell.maps for cell in row), row
        return
    for operand_id, items in expected.items():
        cell = row[operand_id]
        ours = list(cell.maps)
        if entry.get("physical_layout"):
            if kind == "output_to_input":
                src, dst = root.shape, root.operands[operand_id].shape
            else:
                src, dst = root.operands[entry["input_id"]].shape, root.shape
            ours = [_to_physical(m, src, dst) for m in ours]
        theirs = [hloidx.parse_map(item["map"]) for item in items]
        subset = (root.opcode, kind, operand_id) in TIGHTER_THAN_XLA
        if kind == "output_to_input":
            target = root.operands[operand_id].shape.dims
        else:
            outputs = root.shape.tuple_shapes or (root.shape,)
            target = outputs[operand_id].dims
        if entry.get("physical_layout"):
            target = tuple(dst.dims[k] for k in _physical_order(dst))
        _compare(ours, theirs, subset, target)
        if subset:  # still exactly what the op reads: checked by the oracle tests
            assert cell.exact
        for item in items:
            if "replica_id" in item:
                assert cell.replica_id_map is not None
                replicas = (2**62,)  # replica positions: no shape to clip to
                _compare(
                    [cell.replica_id_map], [hloidx.parse_map(item["replica_id"])], False, replicas
                )


def test_conformance_cases_are_present() -> None:
    assert CASES_FILE.exists()
    assert len(ENTRIES) > 40
