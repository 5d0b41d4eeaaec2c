"""Fusion composition (hloidx.hlo.fusion) checked against the provenance oracle.

Every composed map is compared, by enumeration, with what the oracle interpreter says the
fused computation really reads (equal when the analysis claims ``exact``, a superset
otherwise); where the seed document or XLA states how many distinct maps an operand has,
that count is checked too.
"""

from __future__ import annotations

import numpy as np
import pytest

from hloidx import parse_hlo, parse_map
from hloidx.check.oracle import check_instruction, oracle_relation, reads
from hloidx.hlo import chains, composition, fusion
from hloidx.hlo.op_rules import RuntimeVar
from hloidx.maps.domain import relation
from hloidx.maps.indexing_map import IndexingMap
from hloidx.maps.interval import Interval
from hloidx.maps.printer import format_map


def root(text: str):
    return parse_hlo(text).entry.root


def assert_agrees_with_oracle(instr, seeds=(0, 1)) -> None:
    for seed in seeds:
        problems = check_instruction(instr, seed=seed)
        assert problems == [], "\n".join(str(p) for p in problems)


def maps_of(instr, operand: int, output: int = 0) -> list[IndexingMap]:
    return list(fusion.output_to_input(instr)[output][operand].maps)


# ---------------------------------------------------------------------------
# The seed document's fusion examples ("Indexing Maps for Fusion"), at small sizes
# ---------------------------------------------------------------------------

ADD_TRANSPOSE = """
HloModule m
f {
  p0 = f32[4,4] parameter(0)
  transpose_p0 = f32[4,4]{0,1} transpose(p0), dimensions={1,0}
  ROOT a0 = f32[4,4] add(p0, transpose_p0)
}
ENTRY e {
  p0 = f32[4,4] parameter(0)
  ROOT fusion = f32[4,4] fusion(p0), kind=kLoop, calls=f
}
"""

TRANSPOSE_CHAINS = """
HloModule m
f {
  p0 = f32[4,3,5] parameter(0)
  lhs_transpose_1 = f32[3,4,5] transpose(p0), dimensions={1,0,2}
  lhs_e = f32[3,4,5] exponential(lhs_transpose_1)
  lhs_transpose_2 = f32[3,5,4] transpose(lhs_e), dimensions={0,2,1}
  rhs_transpose_1 = f32[5,3,4] transpose(p0), dimensions={2,1,0}
  rhs_log = f32[5,3,4] exponential(rhs_transpose_1)
  rhs_transpose_2 = f32[3,5,4] transpose(rhs_log), dimensions={1,0,2}
  ROOT add = f32[3,5,4] add(lhs_transpose_2, rhs_transpose_2)
}
ENTRY e {
  p0 = f32[4,3,5] parameter(0)
  ROOT fusion = f32[3,5,4] fusion(p0), kind=kLoop, calls=f
}
"""

SOFTMAX = """
HloModule m
add_computation {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT add = f32[] add(p0, p1)
}
max_computation {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT max = f32[] maximum(p0, p1)
}
softmax {
  p0 = f32[2,3,5]{2,1,0} parameter(0)
  bitcast0 = f32[3,2,5]{2,1,0} bitcast(p0)
  constant_neg_inf_1 = f32[] constant(-inf)
  reduce0 = f32[2,3]{1,0} reduce(p0, constant_neg_inf_1), dimensions={2}, to_apply=max_computation
  bitcast1 = f32[6]{0} bitcast(reduce0)
  bcast1 = f32[6,5]{1,0} broadcast(bitcast1), dimensions={0}
  bitcast2 = f32[3,2,5]{2,1,0} bitcast(bcast1)
  subtract0 = f32[3,2,5]{2,1,0} subtract(bitcast0, bitcast2)
  exponential0 = f32[3,2,5]{2,1,0} exponential(subtract0)
  bitcast3 = f32[3,2,5]{2,1,0} bitcast(p0)
  reduce1 = f32[2,3]{1,0} reduce(p0, constant_neg_inf_1), dimensions={2}, to_apply=max_computation
  bitcast4 = f32[6]{0} bitcast(reduce1)
  bcast2 = f32[6,5]{1,0} broadcast(bitcast4), dimensions={0}
  bitcast5 = f32[3,2,5]{2,1,0} bitcast(bcast2)
  subtract1 = f32[3,2,5]{2,1,0} subtract(bitcast3, bitcast5)
  exponential1 = f32[3,2,5]{2,1,0} exponential(subtract1)
  constant_zero_1 = f32[] constant(0)
  reduce2 = f32[3,2]{1,0} reduce(exponential1, constant_zero_1), dimensions={2}, to_apply=add_computation
  bitcast6 = f32[6]{0} bitcast(reduce2)
  bcast3 = f32[6,5]{1,0} broadcast(bitcast6), dimensions={0}
  bitcast7 = f32[3,2,5]{2,1,0} bitcast(bcast3)
  divide = f32[3,2,5]{2,1,0} divide(exponential0, bitcast7)
  ROOT bitcast8 = f32[2,3,5]{2,1,0} bitcast(divide)
}
ENTRY e {
  p0 = f32[2,3,5]{2,1,0} parameter(0)
  ROOT fusion = f32[2,3,5]{2,1,0} fusion(p0), kind=kLoop, calls=softmax
}
"""

RESHAPE_RESHAPE = """
HloModule m
f {
  p0 = f32[4,3,2] parameter(0)
  reshape1 = f32[6,4] reshape(p0)
  ROOT reshape2 = f32[4,3,2] reshape(reshape1)
}
ENTRY e {
  p0 = f32[4,3,2] parameter(0)
  ROOT fusion = f32[4,3,2] fusion(p0), kind=kLoop, calls=f
}
"""


def test_seed_add_transpose_gives_two_maps():
    instr = root(ADD_TRANSPOSE)
    maps = maps_of(instr, 0)
    assert len(maps) == 2
    assert {format_map(m) for m in maps} == {
        "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 3]",
        "(d0, d1) -> (d1, d0), domain: d0 in [0, 3], d1 in [0, 3]",
    }
    assert_agrees_with_oracle(instr)


def test_seed_transpose_chains_deduplicate_to_one_map():
    instr = root(TRANSPOSE_CHAINS)
    maps = maps_of(instr, 0)
    assert len(maps) == 1
    expected = {((a, b, c), (c, a, b)) for a in range(3) for b in range(5) for c in range(4)}
    assert relation(maps[0]) == expected
    assert_agrees_with_oracle(instr)


def test_seed_softmax_two_maps_one_with_a_range_variable():
    instr = root(SOFTMAX)
    maps = maps_of(instr, 0)
    assert len(maps) == 2
    assert sorted(m.num_range_vars for m in maps) == [0, 1]
    reduced = next(m for m in maps if m.num_range_vars)
    assert reduced.range_vars[0].bounds == Interval(0, 4)  # the reduced (inner-most) dimension
    assert_agrees_with_oracle(instr)


def test_seed_reshape_of_reshape_is_identity():
    instr = root(RESHAPE_RESHAPE)
    (m,) = maps_of(instr, 0)
    assert m == IndexingMap.identity((4, 3, 2))
    assert_agrees_with_oracle(instr)


# ---------------------------------------------------------------------------
# Nesting, layouts, calls, control flow
# ---------------------------------------------------------------------------

NESTED = """
HloModule m
inner {
  q0 = f32[6,4] parameter(0)
  t = f32[4,6] transpose(q0), dimensions={1,0}
  ROOT s = f32[4,3] slice(t), slice={[0:4], [1:6:2]}
}
outer {
  p0 = f32[6,4] parameter(0)
  p1 = f32[4,3] parameter(1)
  f = f32[4,3] fusion(p0), kind=kLoop, calls=inner
  r = f32[4,3] reverse(f), dimensions={0}
  ROOT m = f32[4,3] multiply(r, p1)
}
ENTRY e {
  p0 = f32[6,4] parameter(0)
  p1 = f32[4,3] parameter(1)
  ROOT fusion = f32[4,3] fusion(p0, p1), kind=kLoop, calls=outer
}
"""

BITCAST_LAYOUTS = """
HloModule m
f {
  p0 = f32[3,4]{0,1} parameter(0)
  b = f32[12]{0} bitcast(p0)
  b2 = f32[2,6]{1,0} bitcast(b)
  b3 = f32[6,2]{0,1} bitcast(b2)
  ROOT n = f32[6,2]{0,1} negate(b3)
}
ENTRY e {
  p0 = f32[3,4]{0,1} parameter(0)
  ROOT fusion = f32[6,2]{0,1} fusion(p0), kind=kLoop, calls=f
}
"""

CALL = """
HloModule m
g {
  a = f32[5,2] parameter(0)
  c = f32[5] parameter(1)
  bc = f32[5,2] broadcast(c), dimensions={0}
  ROOT s = f32[5,2] subtract(a, bc)
}
ENTRY e {
  p0 = f32[5,2] parameter(0)
  p1 = f32[5] parameter(1)
  ROOT call = f32[5,2] call(p0, p1), to_apply=g
}
"""

PAD_CONCAT = """
HloModule m
f {
  p0 = f32[3,2] parameter(0)
  p1 = f32[2,2] parameter(1)
  z = f32[] constant(0)
  c = f32[5,2] concatenate(p0, p1), dimensions={0}
  p = f32[10,4] pad(c, z), padding=1_0_1x1_1
  ROOT s = f32[5,4] slice(p), slice={[1:10:2], [0:4]}
}
ENTRY e {
  p0 = f32[3,2] parameter(0)
  p1 = f32[2,2] parameter(1)
  ROOT fusion = f32[5,4] fusion(p0, p1), kind=kLoop, calls=f
}
"""

TWO_DYNAMIC_SLICES = """
HloModule m
f {
  src = s32[10] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  a = s32[4] dynamic-slice(src, i), dynamic_slice_sizes={4}
  b = s32[4] dynamic-slice(src, j), dynamic_slice_sizes={4}
  ROOT s = s32[4] add(a, b)
}
ENTRY e {
  src = s32[10] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT fusion = s32[4] fusion(src, i, j), kind=kLoop, calls=f
}
"""

GATHER_OF_IOTA = """
HloModule m
f {
  p0 = f32[5,3] parameter(0)
  iota = s32[7,1] iota(), iota_dimension=0
  ROOT gather = f32[7,1,3] gather(p0, iota), offset_dims={1,2}, collapsed_slice_dims={},
    start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
}
ENTRY e {
  p0 = f32[5,3] parameter(0)
  ROOT fusion = f32[7,1,3] fusion(p0), kind=kInput, calls=f
}
"""

REDUCE_OF_DYNAMIC_SLICE = """
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[6,5] parameter(0)
  off = s32[] parameter(1)
  zero = s32[] constant(0)
  ds = f32[3,5] dynamic-slice(p0, off, zero), dynamic_slice_sizes={3,5}
  init = f32[] constant(0)
  ROOT r = f32[5] reduce(ds, init), dimensions={0}, to_apply=add
}
ENTRY e {
  p0 = f32[6,5] parameter(0)
  off = s32[] parameter(1)
  ROOT fusion = f32[5] fusion(p0, off), kind=kInput, calls=f
}
"""

CASES = {
    "nested": NESTED,
    "bitcast_layouts": BITCAST_LAYOUTS,
    "call": CALL,
    "pad_concat": PAD_CONCAT,
    "two_dynamic_slices": TWO_DYNAMIC_SLICES,
    "gather_of_iota": GATHER_OF_IOTA,
    "reduce_of_dynamic_slice": REDUCE_OF_DYNAMIC_SLICE,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_composition_equals_oracle(name):
    instr = root(CASES[name])
    table = fusion.output_to_input(instr)
    assert all(cell.exact for row in table for cell in row)
    assert_agrees_with_oracle(instr, seeds=(0, 1, 2))


def test_bitcast_layouts_compose_to_the_physical_reinterpretation():
    instr = root(BITCAST_LAYOUTS)
    (m,) = maps_of(instr, 0)
    # NumPy reference: same bytes in column-major order on both sides.
    source = np.arange(12).reshape(4, 3).T  # logical [3,4], layout {0,1}
    flat = source.T.reshape(-1)
    target = flat.reshape(2, 6).T  # logical [6,2], layout {0,1}
    expected = set()
    for i in range(6):
        for j in range(2):
            k = int(target[i, j])
            expected.add(((i, j), tuple(int(x) for x in np.argwhere(source == k)[0])))
    assert relation(m) == expected


def test_equal_maps_over_different_runtime_values_are_both_kept():
    instr = root(TWO_DYNAMIC_SLICES)
    cell = fusion.output_to_input(instr)[0][0]
    assert len(cell.maps) == 2
    assert cell.maps[0] == cell.maps[1]
    producers = [rts[0].producer.name for rts in cell.per_map_runtime_vars]
    assert sorted(producers) == ["i", "j"]
    assert_agrees_with_oracle(instr, seeds=(0, 1, 2, 3))


def test_iota_runtime_variable_folds_with_the_gathers_clamp():
    instr = root(GATHER_OF_IOTA)
    (m,) = maps_of(instr, 0)
    assert not m.rt_vars
    assert relation(m) == {((i, 0, k), (min(i, 4), k)) for i in range(7) for k in range(3)}


# ---------------------------------------------------------------------------
# Conditionals and loops
# ---------------------------------------------------------------------------

CONDITIONAL = """
HloModule m
on_true {
  t = f32[4] parameter(0)
  ROOT n = f32[4] negate(t)
}
on_false {
  f = f32[4] parameter(0)
  ROOT r = f32[4] reverse(f), dimensions={0}
}
ENTRY e {
  pred = pred[] parameter(0)
  a = f32[4] parameter(1)
  b = f32[4] parameter(2)
  ROOT c = f32[4] conditional(pred, a, b), true_computation=on_true, false_computation=on_false
}
"""

WHILE = """
HloModule m
body {
  s = (s32[], f32[3,2], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[3,2] get-tuple-element(s), index=1
  y = f32[4] get-tuple-element(s), index=2
  y2 = f32[4] reverse(y), dimensions={0}
  ROOT t = (s32[], f32[3,2], f32[4]) tuple(next, x, y2)
}
cond {
  s = (s32[], f32[3,2], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[3,2] parameter(0)
  y = f32[4] parameter(1)
  init = (s32[], f32[3,2], f32[4]) tuple(zero, x, y)
  ROOT w = (s32[], f32[3,2], f32[4]) while(init), condition=cond, body=body
}
"""


@pytest.mark.parametrize("selector", [0, 1])
def test_conditional_is_the_union_of_branches_marked_inexact(selector):
    instr = root(CONDITIONAL)
    table = fusion.output_to_input(instr)
    assert not table[0][1].exact
    assert not table[0][2].exact
    problems = check_instruction(instr, operand_values={0: np.array(selector)})
    assert [p for p in problems if p.is_error] == []
    # the branch that did not run reads nothing
    idle = 2 if selector else 1
    assert oracle_relation(instr, idle, runtime_values={0: np.array(selector)}) == set()


def test_while_passes_loop_carried_elements_through_exactly():
    instr = root(WHILE)
    table = fusion.output_to_input(instr)
    assert table[1][0].exact
    assert table[1][0].maps == (IndexingMap.identity((3, 2)),)
    assert table[2][0].maps[0].is_undefined
    assert not table[2][0].exact
    assert any("unknown indexing" in n for n in table[2][0].notes)
    counter = {0: [np.array(0), None, None]}  # start the loop counter at 0: three iterations
    problems = check_instruction(instr, operand_values=counter)
    assert [p for p in problems if p.is_error] == []
    # the oracle agrees: element 1 is read at the same index; element 2 three times reversed
    evaluation = reads(instr, operand_values=counter)
    assert oracle_relation(instr, 0, 1, operand_leaf=1, evaluation=evaluation) == {
        ((i, j), (i, j)) for i in range(3) for j in range(2)
    }
    assert oracle_relation(instr, 0, 2, operand_leaf=2, evaluation=evaluation) == {
        ((i,), (3 - i,)) for i in range(4)
    }


def test_unknown_path_makes_the_operand_undefined():
    text = """
HloModule m
f {
  p0 = f32[4,4] parameter(0)
  ts = f32[4,4] triangular-solve(p0, p0), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  ROOT a = f32[4,4] add(p0, ts)
}
ENTRY e {
  p0 = f32[4,4] parameter(0)
  ROOT fusion = f32[4,4] fusion(p0), kind=kLoop, calls=f
}
"""
    cell = fusion.output_to_input(root(text))[0][0]
    assert cell.maps[0].is_undefined
    assert not cell.exact


# ---------------------------------------------------------------------------
# Input-to-output
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nested", "bitcast_layouts", "call", "pad_concat"])
def test_input_to_output_is_the_inverse_of_the_oracles_reads(name):
    instr = root(CASES[name])
    table = fusion.input_to_output(instr)
    evaluation = reads(instr)
    for j in range(len(instr.operands)):
        cell = table[j][0]
        claimed = set()
        for m in cell.maps:
            claimed |= {(o, i) for i, o in relation(m)}
        actual = oracle_relation(instr, j, evaluation=evaluation)
        if cell.exact:
            assert claimed == actual, (name, j)
        else:
            assert actual <= claimed, (name, j)


# ---------------------------------------------------------------------------
# Runtime-variable folding (seed 001) and producer chains
# ---------------------------------------------------------------------------

RUNTIME_PRODUCER = """
HloModule m
ENTRY e {
  c = s64[] constant(42)
  broadcast = s64[12,13,24] broadcast(c), dimensions={}
  iota = s64[12,13,24] iota(), iota_dimension=2
  ROOT add = s64[12,13,24] add(broadcast, iota)
  c99 = s64[] constant(99)
}
"""


def _runtime_tracked(producer_name: str, read: str, bounds: Interval) -> composition.Tracked:
    module = parse_hlo(RUNTIME_PRODUCER)
    producer = module.entry.by_name[producer_name]
    m = IndexingMap.build(
        [
            parse_map("(d0)[s0] -> (d0, s0), domain: d0 in [0, 11], s0 in [0, 0]").results[0],
            __import__("hloidx.maps.expr", fromlist=["rt_var"]).rt_var(0),
        ],
        [12],
        rt_bounds=[bounds],
    )
    return composition.Tracked(m, (RuntimeVar(producer, parse_map(read)),))


def test_seed001_runtime_variable_folds_to_an_affine_expression():
    t = _runtime_tracked("add", "(d0) -> (d0, 7, d0 * 2), domain: d0 in [0, 11]", Interval(0, 47))
    folded = composition.fold_runtime_vars(t)
    assert not folded.map.rt_vars
    assert folded.runtime_vars == ()
    assert format_map(folded.map) == "(d0) -> (d0, d0 * 2 + 42), domain: d0 in [0, 11]"
    assert relation(folded.map) == {((d,), (d, 2 * d + 42)) for d in range(12)}


@pytest.mark.parametrize(("bounds", "folds"), [(Interval(0, 100), True), (Interval(0, 90), False)])
def test_scalar_constant_folds_only_inside_the_feasible_range(bounds, folds):
    t = _runtime_tracked("c99", "(d0) -> (), domain: d0 in [0, 11]", bounds)
    folded = composition.fold_runtime_vars(t)
    assert (not folded.map.rt_vars) is folds
    if folds:
        assert relation(folded.map) == {((d,), (d, 99)) for d in range(12)}


CHAIN = """
HloModule m
ENTRY e {
  p0 = f32[4,6] parameter(0)
  t = f32[6,4] transpose(p0), dimensions={1,0}
  r = f32[3,2,4] reshape(t)
  s = f32[3,2,2] slice(r), slice={[0:3], [0:2], [1:4:2]}
  ROOT n = f32[3,2,2] negate(s)
}
"""


def test_chain_report_composes_the_path_between_two_instructions():
    module = parse_hlo(CHAIN)
    report = chains.chain_report(module, "t", "n")
    assert report["from"] == "n"
    assert report["to"] == "t"
    assert report["exact"]
    (text,) = report["maps"]
    m = parse_map(text)
    reference = np.arange(24).reshape(6, 4).reshape(3, 2, 4)[:, :, 1:4:2]
    expected = {
        ((a, b, c), divmod(int(reference[a, b, c]), 4))
        for a in range(3)
        for b in range(2)
        for c in range(2)
    }
    assert relation(m) == expected
    assert [step["instruction"] for step in report["paths"][0]] == ["n", "s", "r"]


def test_chain_without_a_path_is_an_error():
    from hloidx.errors import HloidxError

    module = parse_hlo(CHAIN.replace("ROOT n", "q = f32[2] parameter(1)\n  ROOT n"))
    with pytest.raises(HloidxError, match="no path"):
        chains.chain_maps(module, "q", "n")


def test_chained_all_gathers_inside_a_fusion_are_unknown():
    """Data gathered twice comes from no single replica map: the operand is UNDEFINED (as XLA)."""
    module = parse_hlo("""HloModule m
fused {
  p0 = f32[128] parameter(0)
  g0 = f32[256] all-gather(p0), replica_groups={{0,1}}, dimensions={0}
  ROOT g1 = f32[512] all-gather(g0), replica_groups={{0,1}}, dimensions={0}
}
ENTRY e {
  p = f32[128] parameter(0)
  ROOT f = f32[512] fusion(p), kind=kLoop, calls=fused
}
""")
    cell = fusion.output_to_input(module.entry.root)[0][0]
    assert [m.is_undefined for m in cell.maps] == [True]
    assert not cell.exact
