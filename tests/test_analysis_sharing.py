"""Whole analyses shared between structurally identical instructions: the key tells apart what
can differ, and sharing changes nothing in what is reported."""

from __future__ import annotations

import json

import paths
import pytest

from hloidx import parse_hlo
from hloidx.hlo.analysis import analysis_key, analyze
from hloidx.hlo.report import module_to_json

_MODULE = """HloModule m
fused (p: f32[8,4]) -> f32[4,8] {
  p = f32[8,4]{1,0} parameter(0)
  ROOT t = f32[4,8]{1,0} transpose(p), dimensions={1,0}
}
other (q: f32[8,4]) -> f32[4,8] {
  q = f32[8,4]{1,0} parameter(0)
  ROOT u = f32[4,8]{1,0} transpose(q), dimensions={1,0}
}
ENTRY e {
  a = f32[8,4]{1,0} parameter(0)
  b = f32[8,4]{1,0} parameter(1)
  i = s32[] parameter(2)
  r1 = f32[4,8]{1,0} transpose(a), dimensions={1,0}, metadata={op_name="x"}
  r2 = f32[4,8]{1,0} transpose(b), dimensions={1,0}, metadata={op_name="y"}
  r3 = f32[8,4]{1,0} transpose(b), dimensions={0,1}
  f1 = f32[4,8]{1,0} fusion(a), kind=kLoop, calls=fused
  f2 = f32[4,8]{1,0} fusion(b), kind=kLoop, calls=other
  d1 = f32[2,4]{1,0} dynamic-slice(a, i, i), dynamic_slice_sizes={2,4}
  d2 = f32[2,4]{1,0} dynamic-slice(b, i, i), dynamic_slice_sizes={2,4}
  ROOT s = f32[8,4]{1,0} add(a, b)
}
"""


def _instr(module, name):
    return module.instruction(name)


def test_instructions_differing_only_in_names_share_a_key() -> None:
    module = parse_hlo(_MODULE)
    assert analysis_key(_instr(module, "r1")) == analysis_key(_instr(module, "r2"))
    # fusions of bodies equal up to names
    assert analysis_key(_instr(module, "f1")) == analysis_key(_instr(module, "f2"))


def test_instructions_differing_in_an_attribute_do_not() -> None:
    module = parse_hlo(_MODULE)
    assert analysis_key(_instr(module, "r2")) != analysis_key(_instr(module, "r3"))
    reversed_ = """HloModule m
one (p: f32[8,4]) -> f32[8,4] {
  p = f32[8,4]{1,0} parameter(0)
  ROOT t = f32[8,4]{1,0} reverse(p), dimensions={0}
}
two (q: f32[8,4]) -> f32[8,4] {
  q = f32[8,4]{1,0} parameter(0)
  ROOT u = f32[8,4]{1,0} reverse(q), dimensions={1}
}
ENTRY e {
  a = f32[8,4]{1,0} parameter(0)
  f1 = f32[8,4]{1,0} fusion(a), kind=kLoop, calls=one
  ROOT f2 = f32[8,4]{1,0} fusion(a), kind=kLoop, calls=two
}
"""
    changed = parse_hlo(reversed_)
    assert analysis_key(_instr(changed, "f1")) != analysis_key(_instr(changed, "f2"))
    maps = {
        i.name: i.operands[0].output_to_input for i in analyze(changed).instructions if i.operands
    }
    assert maps["f1"] != maps["f2"]


def test_a_shared_analysis_carries_its_own_names() -> None:
    by_name = {i.name: i for i in analyze(parse_hlo(_MODULE)).instructions}
    r1, r2 = by_name["r1"], by_name["r2"]
    assert (r1.name, [o.name for o in r1.operands]) == ("r1", ["a"])
    assert (r2.name, [o.name for o in r2.operands]) == ("r2", ["b"])
    assert r1.operands[0].output_to_input == r2.operands[0].output_to_input
    # analyses are read-only: a reused one holds the lists of the one it reuses (no copies,
    # so that `hloidx summary` holds tens of thousands of them cheaply)
    assert r2.operands[0].output_to_input is r2.operands[0].shared_from.output_to_input
    # runtime variables name their producers: never shared, each keeps its own
    d1, d2 = by_name["d1"], by_name["d2"]
    assert d1.operands[0].runtime_vars[0][1] == "i"
    assert d2.operands[0].runtime_vars[0][1] == "i"
    assert d1.operands[0].runtime_vars is not d2.operands[0].runtime_vars


@pytest.mark.parametrize(
    "name",
    [
        "large_resnet12_fwd_bwd.opt.hlo",
        "transformer_block.opt.hlo",
        "embedding_gather_scatter.opt.hlo",
        "rnn_scan.opt.hlo",
        "cumsum_sort_argmax_topk.opt.hlo",
    ],
)
def test_sharing_changes_nothing_reported(name: str) -> None:
    module = parse_hlo((paths.CORPUS / name).read_text(encoding="utf-8"))
    shared = json.dumps(module_to_json(analyze(module)))
    alone = json.dumps(module_to_json(analyze(module, share=False)))
    assert shared == alone


def test_a_body_with_a_malformed_called_computation_is_reported_not_raised() -> None:
    from hloidx.hlo.syntax import parse_hlo_lenient

    text = """HloModule m
add (x: f32[], y: f32[]) -> f32[] {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused (p: f32[8,4]) -> f32[4] {
  p = f32[8,4]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4]{0} reduce(p, z), dimensions={0}, to_apply=\x00add
}
ENTRY e {
  a = f32[8,4]{1,0} parameter(0)
  ROOT f = f32[4]{0} fusion(a), kind=kLoop, calls=fused
}
"""
    module, errors = parse_hlo_lenient(text, "m.hlo")
    assert errors
    assert analysis_key(module.instruction("f")) is None
    shared = json.dumps(module_to_json(analyze(module)))
    assert shared == json.dumps(module_to_json(analyze(module, share=False)))


def test_repeated_unknown_ops_name_themselves() -> None:
    """An error names its instruction: a repeat must not report the first one's name (the rule
    tables used to keep the first error and raise it again for every repeat)."""
    text = """HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c1 = f32[4] custom-call(p), custom_call_target="foo"
  c2 = f32[4] custom-call(p), custom_call_target="foo"
  ROOT t = (f32[4], f32[4]) tuple(c1, c2)
}
"""
    by_name = {i.name: i for i in analyze(parse_hlo(text)).instructions}
    assert "custom-call c1:" in by_name["c1"].notes[0]
    assert "custom-call c2:" in by_name["c2"].notes[0]


def test_structurally_equal_fusions_name_their_own_inner_instructions() -> None:
    text = """HloModule m
one (p: f32[4]) -> f32[4] {
  p = f32[4] parameter(0)
  ROOT inner_one = f32[4] custom-call(p), custom_call_target="foo"
}
two (q: f32[4]) -> f32[4] {
  q = f32[4] parameter(0)
  ROOT inner_two = f32[4] custom-call(q), custom_call_target="foo"
}
ENTRY e {
  a = f32[4] parameter(0)
  f1 = f32[4] fusion(a), kind=kLoop, calls=one
  ROOT f2 = f32[4] fusion(a), kind=kLoop, calls=two
}
"""
    from hloidx import clear_caches

    clear_caches()
    by_name = {i.name: i for i in analyze(parse_hlo(text)).instructions}

    def said(name: str) -> str:
        ins = by_name[name]
        return " ".join(ins.notes + [n for o in ins.operands for n in o.notes])

    assert "inner_one" in said("f1")
    assert "inner_two" in said("f2")
    assert "inner_one" not in said("f2")


def test_an_op_shared_across_different_bodies_keeps_its_own_producers() -> None:
    """The same dynamic-slice in two different fused bodies: one rule table, re-pointed, so
    each fusion's runtime variable names its own body's parameter."""
    text = """HloModule m
one (p: f32[8], i: s32[]) -> f32[2] {
  p = f32[8] parameter(0)
  i = s32[] parameter(1)
  ROOT ds_one = f32[2] dynamic-slice(p, i), dynamic_slice_sizes={2}
}
two (q: f32[8], j: s32[]) -> f32[2] {
  q = f32[8] parameter(0)
  j = s32[] parameter(1)
  d = f32[2] dynamic-slice(q, j), dynamic_slice_sizes={2}
  ROOT n = f32[2] negate(d)
}
ENTRY e {
  a = f32[8] parameter(0)
  k = s32[] parameter(1)
  f1 = f32[2] fusion(a, k), kind=kLoop, calls=one
  ROOT f2 = f32[2] fusion(a, k), kind=kLoop, calls=two
}
"""
    from hloidx import clear_caches

    clear_caches()
    by_name = {i.name: i for i in analyze(parse_hlo(text)).instructions}
    assert by_name["f1"].operands[0].runtime_vars[0][1] == "i"
    assert by_name["f2"].operands[0].runtime_vars[0][1] == "j"


_COLLECTIVES = """HloModule m
add_a (x: f32[], y: f32[]) -> f32[] {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
add_b (u: f32[], v: f32[]) -> f32[] {
  u = f32[] parameter(0)
  v = f32[] parameter(1)
  ROOT t = f32[] add(u, v)
}
max_c (m: f32[], n: f32[]) -> f32[] {
  m = f32[] parameter(0)
  n = f32[] parameter(1)
  ROOT w = f32[] maximum(m, n)
}
ENTRY e {
  a = f32[8,4]{1,0} parameter(0)
  z = f32[] constant(0)
  r1 = f32[4]{0} reduce(a, z), dimensions={0}, to_apply=add_a
  r2 = f32[4]{0} reduce(a, z), dimensions={0}, to_apply=add_b
  r3 = f32[4]{0} reduce(a, z), dimensions={0}, to_apply=max_c
  g1 = f32[8,32]{1,0} all-gather(a), channel_id=1, replica_groups=[1,8]<=[8], dimensions={1}
  g2 = f32[8,32]{1,0} all-gather(a), channel_id=2, replica_groups=[1,8]<=[8], dimensions={1}
  ROOT t = (f32[4]{0}, f32[4]{0}, f32[4]{0}, f32[8,32]{1,0}, f32[8,32]{1,0}) tuple(r1, r2, r3, g1, g2)
}
"""


def test_called_regions_by_structure_and_channels_aside() -> None:
    """XLA names a fresh region for each reduce and a channel for each collective: structurally
    equal regions share a key and an analysis, whatever their names; a region that computes
    something else does not share the key; a collective's channel_id is no part of it; an op's
    rule notes (the all-gather's replica position) do not stop sharing."""
    module = parse_hlo(_COLLECTIVES)
    key = {n: analysis_key(module.instruction(n)) for n in ("r1", "r2", "r3", "g1", "g2")}
    assert key["r1"] == key["r2"] != key["r3"]
    assert key["g1"] == key["g2"]
    by_name = {i.name: i for i in analyze(module).instructions}
    assert by_name["r2"].operands[0].shared_from is by_name["r1"].operands[0]
    assert by_name["g1"].operands[0].notes  # the rule's note, shared with the op's table
    assert by_name["g2"].operands[0].shared_from is by_name["g1"].operands[0]
    shared = json.dumps(module_to_json(analyze(module)))
    assert shared == json.dumps(module_to_json(analyze(module, share=False)))
