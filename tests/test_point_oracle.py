"""The point-wise provenance oracle against the whole-tensor one, at every output element.

Both oracles answer "which operand elements does this output element read" with the same tags;
the point-wise one walks backwards from one element, the whole one evaluates whole tensors.
They must give the same set at every output element of every instruction both can interpret:
the samples, XLA's own test modules, the corpus samples and hand-written modules with awkward
parameters. Elements the point-wise oracle leaves unchecked are counted and must be the few
ops it does not interpret.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import paths
import pytest

from hloidx import parse_hlo
from hloidx.check.interpreter import _operand_data
from hloidx.check.oracle import reads
from hloidx.check.point_oracle import PointOracle
from hloidx.check.point_values import OperandData, PointUnchecked
from hloidx.errors import HloidxError
from hloidx.stablehlo import parse_module_lenient

#: instructions larger than this are left to the sampled check (the whole oracle is slow)
MAX_OUTPUT = 2_500
MAX_OPERANDS = 30_000


HAND_WRITTEN = {
    "pad_interior_negative": """
HloModule pad
ENTRY e {
  p0 = f32[4,5] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[8,14] pad(p0, z), padding=-1_2_1x3_-2_2
}
""",
    "reduce_window_strided_dilated_padded": """
HloModule rw
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[7,9] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[7,3] reduce-window(p0, z), window={size=3x2 stride=2x3 pad=1_2x0_1 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=add
}
""",
    "bitcast_layouts": """
HloModule bc
ENTRY e {
  p0 = f32[2,3,4]{0,2,1} parameter(0)
  a = f32[4,6]{0,1} bitcast(p0)
  b = f32[24]{0} bitcast(p0)
  c = f32[3,2,4]{1,0,2} bitcast(p0)
  ROOT t = (f32[4,6]{0,1}, f32[24]{0}, f32[3,2,4]{1,0,2}) tuple(a, b, c)
}
""",
    "variadic_reduce": """
HloModule vr
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  v = f32[] select(gt, av, bv)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  p0 = f32[3,4,5] parameter(0)
  p1 = s32[3,4,5] parameter(1)
  c0 = f32[] constant(-inf)
  c1 = s32[] parameter(2)
  ROOT r = (f32[4], s32[4]) reduce(p0, p1, c0, c1), dimensions={0,2}, to_apply=argmax
}
""",
    "dot_several_batch_and_contracting_dims": """
HloModule dot
ENTRY e {
  lhs = f32[2,3,4,5] parameter(0)
  rhs = f32[3,5,2,4,6] parameter(1)
  ROOT d = f32[2,3,6] dot(lhs, rhs), lhs_batch_dims={0,1}, rhs_batch_dims={2,0}, lhs_contracting_dims={2,3}, rhs_contracting_dims={3,1}
}
""",
    "dynamic_slice_clamped_starts": """
HloModule ds
ENTRY e {
  p0 = f32[6,9] parameter(0)
  big = s32[] constant(7)
  neg = s32[] constant(-3)
  i = s32[] parameter(1)
  a = f32[2,4] dynamic-slice(p0, big, neg), dynamic_slice_sizes={2,4}
  b = f32[3,3] dynamic-slice(p0, i, big), dynamic_slice_sizes={3,3}
  u = f32[2,2] parameter(2)
  c = f32[6,9] dynamic-update-slice(p0, u, i, big)
  ROOT t = (f32[2,4], f32[3,3], f32[6,9]) tuple(a, b, c)
}
""",
    "gather_index_vector_first": """
HloModule g
ENTRY e {
  operand = f32[5,6,7] parameter(0)
  idx = s32[2,4] parameter(1)
  ROOT g = f32[4,6,3] gather(operand, idx), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,2}, index_vector_dim=0, slice_sizes={1,6,3}
}
""",
    "convolution_groups_dilation_reversal": """
HloModule conv
ENTRY e {
  lhs = f32[2,5,6,4] parameter(0)
  rhs = f32[3,2,2,6] parameter(1)
  a = f32[2,3,10,6] convolution(lhs, rhs), window={size=3x2 stride=2x1 pad=1_1x0_1 lhs_dilate=1x2 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f, feature_group_count=2
  lhs2 = f32[4,5,5,2] parameter(2)
  rhs2 = f32[2,2,2,4] parameter(3)
  b = f32[2,5,4,4] convolution(lhs2, rhs2), window={size=2x2 pad=1_0x0_0 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, batch_group_count=2
  ROOT t = (f32[2,3,10,6], f32[2,5,4,4]) tuple(a, b)
}
""",
    "fusion_call_moves_and_elementwise": """
HloModule moves
inner {
  q0 = f32[4,3] parameter(0)
  ROOT r = f32[3,4] transpose(q0), dimensions={1,0}
}
fused {
  f0 = f32[3,4] parameter(0)
  f1 = f32[4] parameter(1)
  b = f32[4,3] broadcast(f1), dimensions={0}
  c = f32[3,4] call(b), to_apply=inner
  s = f32[3,4] add(f0, c)
  rv = f32[3,4] reverse(s), dimensions={0,1}
  sl = f32[2,2] slice(rv), slice={[1:3], [0:4:2]}
  sl2 = f32[2,4] slice(f0), slice={[1:3], [0:4]}
  cat = f32[2,6] concatenate(sl, sl2), dimensions={1}
  ROOT t = (f32[2,6], f32[3,4]) tuple(cat, s)
}
ENTRY e {
  p0 = f32[3,4] parameter(0)
  p1 = f32[4] parameter(1)
  fus = (f32[2,6], f32[3,4]) fusion(p0, p1), kind=kLoop, calls=fused
  g = f32[2,6] get-tuple-element(fus), index=0
  io = s32[2,6] iota(), iota_dimension=1
  cv = f32[2,6] convert(io)
  cmp = pred[2,6] compare(g, cv), direction=LT
  sel = f32[2,6] select(cmp, g, cv)
  lo = f32[] constant(0)
  hi = f32[] parameter(2)
  cl = f32[2,6] clamp(lo, sel, hi)
  rs = f32[3,4] reshape(cl)
  ROOT bc = f32[2,3,4] broadcast(rs), dimensions={1,2}
}
""",
    "bitcast_convert_widths": """
HloModule bcc
ENTRY e {
  p0 = f64[3] parameter(0)
  a = f32[3,2] bitcast-convert(p0)
  p1 = s16[4,2] parameter(1)
  b = s32[4] bitcast-convert(p1)
  c = u32[4] bitcast-convert(b)
  ROOT t = (f32[3,2], s32[4], u32[4]) tuple(a, b, c)
}
""",
    "dynamic_slice_in_a_fusion_with_computed_start": """
HloModule dsf
fused {
  x = f32[10,8] parameter(0)
  i = s32[] parameter(1)
  two = s32[] constant(2)
  j = s32[] multiply(i, two)
  zero = s32[] constant(0)
  ROOT d = f32[3,8] dynamic-slice(x, j, zero), dynamic_slice_sizes={3,8}
}
ENTRY e {
  p0 = f32[10,8] parameter(0)
  p1 = s32[] parameter(1)
  ROOT f = f32[3,8] fusion(p0, p1), kind=kLoop, calls=fused
}
""",
}


def _sample_modules() -> list[tuple[str, str]]:
    files = sorted(paths.SAMPLES.rglob("*.hlo"))
    files += sorted((paths.SAMPLES / "xla_dump").glob("*_optimizations.txt"))
    return [(str(f.relative_to(paths.SAMPLES)), f.read_text(encoding="utf-8")) for f in files]


def _xla_modules() -> list[tuple[str, str]]:
    cases = json.loads((paths.XLA_TESTS / "analysis_cases.json").read_text(encoding="utf-8"))
    return [(f"xla:{c['test']}", c["hlo"]) for c in cases if c.get("hlo")]


GROUPS = {
    "samples": _sample_modules,
    "xla": _xla_modules,
    "hand": lambda: sorted(HAND_WRITTEN.items()),
}

#: ops the point-wise oracle does not interpret, by group: the only unchecked elements allowed
EXPLAINED = {"samples": set(), "xla": {"scaled-dot", "all-gather"}, "hand": set()}
#: at least this many output elements compared per group (so "agrees" is never vacuous)
AT_LEAST = {"samples": 25_000, "xla": 15_000, "hand": 1_800}


def _small(instr) -> bool:
    out = sum(s.num_elements() for s in instr.shape.leaves())
    ins = sum(s.num_elements() for o in instr.operands for s in o.shape.leaves())
    return out <= MAX_OUTPUT and ins <= MAX_OPERANDS


def compare_everywhere(instr) -> tuple[int, str | None, list[str]]:
    """(elements agreeing, the opcode of an unchecked element or None, disagreements);
    None as opcode also when the whole oracle itself cannot interpret ``instr``."""
    try:
        evaluation = reads(instr)
    except HloidxError:
        return 0, None, []
    oracle = PointOracle(instr)
    agreed, problems = 0, []
    for leaf, output in enumerate(evaluation.outputs):
        for index in np.ndindex(*output.provenance.shape):
            try:
                got = oracle.reads(index, leaf)
            except PointUnchecked:
                return agreed, instr.opcode, problems
            if got != output.provenance[index]:
                problems.append(
                    f"{instr.name} output {leaf} {index}: point-wise {sorted(got)[:4]}, "
                    f"whole {sorted(output.provenance[index])[:4]}"
                )
            else:
                agreed += 1
    return agreed, None, problems


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_point_oracle_agrees_with_the_whole_oracle_everywhere(group: str) -> None:
    agreed, unchecked, problems = 0, Counter(), []
    for name, text in GROUPS[group]():
        module, errors = parse_module_lenient(text, name)
        if module is None:
            continue
        assert group != "hand" or not errors, errors
        for instr in module.instructions():
            if not instr.operands or instr.opcode == "parameter" or not _small(instr):
                continue
            n, opcode, wrong = compare_everywhere(instr)
            agreed += n
            problems += [f"{name}: {w}" for w in wrong]
            if opcode is not None:
                unchecked[opcode] += 1
    assert not problems, problems[:10]
    assert set(unchecked) <= EXPLAINED[group], unchecked
    assert agreed >= AT_LEAST[group], agreed


def test_corpus_samples_agree_everywhere() -> None:
    agreed = 0
    for path in sorted((paths.SAMPLES / "corpus").glob("*.hlo")):
        module = parse_hlo(path.read_text(encoding="utf-8"))
        for instr in module.entry.instructions:
            if instr.operands and _small(instr):
                n, opcode, wrong = compare_everywhere(instr)
                assert not wrong, wrong[:5]
                assert opcode is None, (path.name, instr.name)
                agreed += n
    assert agreed >= 7_000


def test_operand_data_is_the_whole_oracles() -> None:
    instr = parse_hlo(HAND_WRITTEN["dynamic_slice_clamped_starts"]).entry.root.operands[2]
    whole = _operand_data(instr, None, 0, 200_000)
    data = OperandData(instr)
    for j in (3, 0, 1, 2):  # asked out of order: the draws still follow operand order
        assert np.array_equal(data.value(j).values, whole[j].values), j


def _root(text: str):
    return parse_hlo(text).entry.root


def test_unknown_ops_are_unchecked_not_guessed() -> None:
    sort = _root(
        "HloModule m\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT c = pred[] compare(a, b), direction=LT\n}\n"
        "ENTRY e {\n  p = f32[4] parameter(0)\n"
        "  ROOT s = f32[4] sort(p), dimensions={0}, to_apply=lt\n}\n"
    )
    with pytest.raises(PointUnchecked, match="does not interpret sort"):
        PointOracle(sort).reads((0,))


def test_caps_leave_large_elements_unchecked() -> None:
    reduce = _root(HAND_WRITTEN["variadic_reduce"])
    assert len(PointOracle(reduce).reads((1,))) == 2 * 3 * 5 + 2  # both inputs, both inits
    with pytest.raises(PointUnchecked, match="combines 30 elements"):
        PointOracle(reduce, read_cap=10).reads((1,))
    two_rows = _root(
        "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\nf {\n  x = f32[4,8] parameter(0)\n"
        "  y = f32[4,8] parameter(1)\n  z = f32[] constant(0)\n"
        "  a = f32[4] reduce(x, z), dimensions={1}, to_apply=add\n"
        "  b = f32[4] reduce(y, z), dimensions={1}, to_apply=add\n"
        "  ROOT s = f32[4] add(a, b)\n}\nENTRY e {\n  p = f32[4,8] parameter(0)\n"
        "  q = f32[4,8] parameter(1)\n  ROOT r = f32[4] fusion(p, q), kind=kLoop, calls=f\n}\n"
    )
    assert len(PointOracle(two_rows).reads((2,))) == 16
    with pytest.raises(PointUnchecked, match="reads more than 10 elements"):
        PointOracle(two_rows, read_cap=10).reads((2,))
    fusion = parse_hlo(HAND_WRITTEN["fusion_call_moves_and_elementwise"]).entry.by_name["fus"]
    assert PointOracle(fusion).reads((0, 0), leaf=0)
    with pytest.raises(PointUnchecked, match="more than 5 steps"):
        PointOracle(fusion, step_cap=5).reads((0, 0), leaf=0)


def test_index_values_beyond_the_value_limit_are_unchecked() -> None:
    gather = _root(HAND_WRITTEN["gather_index_vector_first"])
    assert PointOracle(gather).reads((0, 0, 0))
    with pytest.raises(PointUnchecked, match="too large"):
        PointOracle(gather, value_limit=4).reads((0, 0, 0))


def test_points_outside_the_output_are_refused() -> None:
    with pytest.raises(PointUnchecked):
        PointOracle(_root(HAND_WRITTEN["pad_interior_negative"])).reads((8, 0))
