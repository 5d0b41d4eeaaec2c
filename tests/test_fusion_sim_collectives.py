"""The simulated partitioner's collectives as XLA:GPU emits them: slices and pads that keep a
split, combined collectives, asynchronous start/done pairs and their overlap in the step.
Every expectation is derived by hand in the test."""

from __future__ import annotations

import pytest

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


# -- combining (XLA's AllGatherCombiner / AllReduceCombiner, 30 MiB + 7 default) -----------

TWO_WEIGHTS = """HloModule fsdp2

ENTRY main {
  x = f32[16,4096] parameter(0), sharding={devices=[4,1]<=[4]}
  w1 = f32[4096,COLS] parameter(1), sharding={devices=[4,1]<=[4]}
  w2 = f32[4096,COLS] parameter(2), sharding={devices=[4,1]<=[4]}
  d1 = f32[16,COLS] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[16,COLS] dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[16,COLS], f32[16,COLS]) tuple(d1, d2)
}"""


def _ops(sim, opcode: str):
    return [i for i in _all_instructions(sim.module) if i.opcode == opcode]


def test_two_independent_weight_gathers_are_combined_into_one() -> None:
    # by hand: each weight is split along its contracted rows, so each is all-gathered
    # whole: f32[4096,512] = 4096*512*4 = 8,388,608 bytes each, 16,777,216 together, under
    # 30 MiB + 7 = 31,457,287; neither depends on the other: one all-gather of two operands
    sim = simulate(parse_hlo(TWO_WEIGHTS.replace("COLS", "512")))
    (start,) = _ops(sim, "all-gather-start")
    assert [o.name for o in start.operands] == ["w1", "w2"]
    assert start.operands[0].shape.dims == (1024, 512)
    (done,) = _ops(sim, "all-gather-done")
    assert [s.dims for s in done.shape.tuple_shapes] == [(4096, 512), (4096, 512)]
    gtes = [i for i in _ops(sim, "get-tuple-element") if i.operands[0] is done]
    assert sorted(g.tuple_index for g in gtes) == [0, 1]


def test_gathers_over_the_threshold_stay_apart() -> None:
    # by hand: f32[4096,1024] = 16,777,216 bytes each, 33,554,432 together > 31,457,287:
    # two all-gathers
    sim = simulate(parse_hlo(TWO_WEIGHTS.replace("COLS", "1024")))
    starts = _ops(sim, "all-gather-start")
    assert sorted(o.name for s in starts for o in s.operands) == ["w1", "w2"]
    assert len(starts) == 2


def test_partial_sums_are_combined_in_one_all_reduce() -> None:
    # by hand: x and both weights split along the contracted dimension: each device holds
    # partial sums f32[16,64] of d1 and d2, independent of each other: one all-reduce of
    # two operands (2 * 16*64*4 = 8,192 bytes)
    text = TWO_WEIGHTS.replace("COLS", "64").replace(
        "f32[16,4096] parameter(0), sharding={devices=[4,1]<=[4]}",
        "f32[16,4096] parameter(0), sharding={devices=[1,4]<=[4]}",
    )
    sim = simulate(parse_hlo(text))
    (start,) = _ops(sim, "all-reduce-start")
    assert [o.shape.dims for o in start.operands] == [(16, 64), (16, 64)]
    assert not _ops(sim, "all-reduce")


# -- asynchronous, overlapped in the step view ----------------------------------------------

OVERLAP = """HloModule overlap

ENTRY main {
  x = f32[16,512] parameter(0), sharding={devices=[4,1]<=[4]}
  w = f32[512,256] parameter(1), sharding={devices=[4,1]<=[4]}
  e = f32[16,512] exponential(x)
  ROOT d = f32[16,256] dot(e, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}"""


def _step_us(sim) -> tuple[float, float, int]:
    from hloidx.perf.loops import walk_module
    from hloidx.perf.step import CollectiveTime, simulate_step

    program = walk_module(sim.module)
    kernels = []

    def kernel_ns(kernel):
        kernels.append(kernel.name)
        return 10_000.0  # every kernel 10 us

    def collective_time(instr):
        return CollectiveTime(25_000.0)  # the all-gather 25 us

    step = simulate_step(program, kernel_ns, collective_time)
    return step.time_ns / 1000, step.exposed_ns / 1000, len(kernels)


def test_the_weight_gather_overlaps_the_kernel_before_the_gemm() -> None:
    # by hand: the all-gather of w needs nothing computed, the exp kernel does not need it,
    # the GEMM needs both. Asynchronous: start (1 us of the compute stream, XLA's kLowCost),
    # the exp kernel (10 us) beside the gather (25 us, from 1 to 26), the done waits 26 - 11
    # = 15 us then takes 1 us, the GEMM 10 us: 1 + 10 + 15 + 1 + 10 = 37 us, 15 us exposed.
    # Synchronous: 10 + 25 + 10 = 45 us, all 25 us exposed.
    sim = simulate(parse_hlo(OVERLAP))
    order = [i.opcode for i in sim.module.entry.instructions if i.opcode != "parameter"]
    assert order == ["all-gather-start", "fusion", "all-gather-done", "custom-call"]
    assert _step_us(sim) == (37.0, 15.0, 2)
    assert _step_us(simulate(parse_hlo(OVERLAP), asynchronous=False)) == (45.0, 25.0, 2)


DEPENDENT_SUMS = """HloModule dependent

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[16,4096] parameter(0), sharding={devices=[1,4]<=[4]}
  zero = f32[] constant(0)
  sum1 = f32[16] reduce(x, zero), dimensions={1}, to_apply=add
  b = f32[16,4096] broadcast(sum1), dimensions={0}
  m = f32[16,4096] multiply(x, b)
  ROOT sum2 = f32[16] reduce(m, zero), dimensions={1}, to_apply=add
}"""


def test_a_sum_that_needs_the_other_is_not_combined_with_it() -> None:
    # by hand: x is split along the reduced dimension, so sum1 is a partial sum (all-reduce);
    # sum2 reduces x times the summed sum1, so its all-reduce needs the first one's result: two
    # all-reduces of f32[16], the first done before the second starts
    sim = simulate(parse_hlo(DEPENDENT_SUMS))
    order = [i.opcode for i in sim.module.entry.instructions]
    assert order.count("all-reduce-start") == 2
    first_done = order.index("all-reduce-done")
    second_start = len(order) - 1 - order[::-1].index("all-reduce-start")
    assert first_done < second_start
    assert [i.shape.dims for i in _ops(sim, "all-reduce-start")] == [(16,), (16,)]


def test_xla_parses_the_combined_and_asynchronous_collectives() -> None:
    """XLA's own parser reads the start/done pairs and the combined tuples (skipped without
    jaxlib)."""
    hlo = pytest.importorskip("jaxlib._hlo")
    for text in (TWO_WEIGHTS.replace("COLS", "512"), DEPENDENT_SUMS, OVERLAP):
        hlo.hlo_module_from_text(simulate(parse_hlo(text)).text)
