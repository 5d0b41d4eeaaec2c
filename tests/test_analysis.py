"""The analysis layer: runtime-variable descriptions stay aligned with the maps, and tables
shared between structurally identical instructions or fusions point at their own producers."""

from __future__ import annotations

from hloidx import parse_hlo
from hloidx.check.oracle import check_instruction
from hloidx.hlo.analysis import analyze
from hloidx.maps.domain import relation

DYNAMIC_SLICES = """HloModule m
ENTRY e {
  src = s32[2,2,258] parameter(0)
  of1 = s32[] parameter(1)
  of2 = s32[] parameter(2)
  of3 = s32[] parameter(3)
  ds = s32[1,2,32] dynamic-slice(src, of1, of2, of3), dynamic_slice_sizes={1,2,32}
  ROOT ds2 = s32[1,2,32] dynamic-slice(src, of3, of2, of1), dynamic_slice_sizes={1,2,32}
}
"""

FUSIONS = """HloModule m
fused {
  p0 = f32[64] parameter(0)
  i = s32[] parameter(1)
  ROOT d = f32[8] dynamic-slice(p0, i), dynamic_slice_sizes={8}
}
ENTRY e {
  a = f32[64] parameter(0)
  x = s32[] parameter(1)
  y = s32[] parameter(2)
  f1 = f32[8] fusion(a, x), kind=kLoop, calls=fused
  f2 = f32[8] fusion(a, y), kind=kLoop, calls=fused
  ROOT t = (f32[8], f32[8]) tuple(f1, f2)
}
"""


def _by_name(analysis):
    return {i.name: i for i in analysis.instructions}


def test_runtime_variables_follow_the_simplified_map():
    result = _by_name(analyze(parse_hlo(DYNAMIC_SLICES)))
    ds = result["ds"].operands[0]
    # of2 only ever reads offset 0 (the slice spans the whole dimension): its variable folds away.
    assert [(name, producer) for name, producer, _, _ in ds.runtime_vars] == [
        ("rt0", "of1"),
        ("rt1", "of3"),
    ]
    (m,) = ds.output_to_input
    assert m.num_rt_vars == 2
    assert "parameter(1)" in ds.runtime_vars[0][3]


def test_identical_instructions_keep_their_own_producers():
    result = _by_name(analyze(parse_hlo(DYNAMIC_SLICES)))
    ds2 = result["ds2"].operands[0]
    assert [producer for _, producer, _, _ in ds2.runtime_vars] == ["of3", "of1"]


def test_identical_fusions_keep_their_own_inner_producers():
    module = parse_hlo(FUSIONS)
    result = _by_name(analyze(module))
    first, second = result["f1"].operands[0], result["f2"].operands[0]
    assert first.output_to_input == second.output_to_input
    inner = module.computations["fused"].by_name["i"]
    for operand in (first, second):
        assert [producer for _, producer, _, _ in operand.runtime_vars] == [inner.name]
    # The maps stay sound against the provenance oracle for both fusions.
    entry = module.entry.by_name
    for name in ("f1", "f2"):
        assert not [x for x in check_instruction(entry[name]) if x.is_error]


def test_unused_range_variables_are_dropped_but_relation_is_kept():
    module = parse_hlo("""HloModule m
ENTRY e {
  p = f32[4,6] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[4] reduce(p, c), dimensions={1}, to_apply=add
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
""")
    r = _by_name(analyze(module))["r"].operands[0]
    (m,) = r.output_to_input
    assert relation(m) == {((i,), (i, j)) for i in range(4) for j in range(6)}
