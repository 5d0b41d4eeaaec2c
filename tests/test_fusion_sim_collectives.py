"""The simulated partitioner's collectives as XLA:GPU emits them: slices and pads that keep a
split, combined collectives, asynchronous start/done pairs and their overlap in the step.
Every expectation is derived by hand in the test."""

from __future__ import annotations

from hloidx.fusion_sim import simulate
from hloidx.hlo.syntax import parse_hlo


def _all_instructions(module):
    comps = module.computations
    for comp in comps.values() if isinstance(comps, dict) else comps:
        yield from comp.instructions


SLICE_PAD = """HloModule slice_pad

ENTRY main {
  x = f32[3,16,8] parameter(0), sharding={devices=[1,4,1]<=[4]}
  c = f32[] constant(0)
  s = f32[1,16,8] slice(x), slice={[1:2], [0:16], [0:8]}
  p = f32[3,16,10] pad(x, c), padding=0_0x0_0x1_1
  ROOT t = (f32[1,16,8], f32[3,16,10]) tuple(s, p)
}"""


def test_a_slice_or_pad_of_whole_split_dimensions_stays_split() -> None:
    # by hand: x is split 4 ways along dimension 1 (16/4 = 4 rows each). The slice cuts
    # dimension 0 only and the pad pads dimension 2 only, so each device slices / pads its
    # own part: slice [1,4,8] with bounds {[1:2], [0:4], [0:8]}, pad [3,4,10]; nothing is
    # gathered.
    sim = simulate(parse_hlo(SLICE_PAD))
    ops = {i.name: i for i in _all_instructions(sim.module)}
    assert not [i for i in ops.values() if i.opcode.startswith("all-")]
    assert ops["s"].shape.dims == (1, 4, 8)
    assert ops["s"].attributes["slice"] == "{[1:2], [0:4], [0:8]}"
    assert ops["p"].shape.dims == (3, 4, 10)


def test_a_slice_cutting_a_split_dimension_gathers_it() -> None:
    # by hand: the slice keeps rows 0..7 of the split dimension 1, which no device holds
    # alone: dimension 1 is all-gathered back to 16 first, then sliced to [1,8,8]
    text = (
        SLICE_PAD.replace("[1:2], [0:16], [0:8]", "[1:2], [0:8], [0:8]")
        .replace("f32[1,16,8] slice", "f32[1,8,8] slice")
        .replace("(f32[1,16,8],", "(f32[1,8,8],")
    )
    sim = simulate(parse_hlo(text))
    ops = {i.name: i for i in _all_instructions(sim.module)}
    gathers = [i for i in ops.values() if i.opcode == "all-gather-done"]
    assert gathers
    assert gathers[0].shape.dims[-3:] == (3, 16, 8)
    assert ops["s"].shape.dims == (1, 8, 8)
