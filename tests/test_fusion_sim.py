"""hloidx's simulation of XLA:GPU's fusion passes (issue 47): which instructions end up in
which kernel. The first cases are XLA's own ``priority_fusion_test.cc`` (openxla/xla,
``xla/service/gpu/transforms/priority_fusion_test.cc``): each case's input HLO transcribed,
and the grouping its CHECK lines (or matchers) expect, compared as sets of instruction
names, never as text. The hand-built modules below carry their expected groups, derived by
hand from PriorityFusion's rules in the comment above each."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.fusion_sim import simulate
from hloidx.hlo.syntax import parse_hlo


def _groups(text: str, multi_output: bool = False) -> tuple[set[frozenset[str]], object]:
    sim = simulate(parse_hlo(text), partition=False, multi_output=multi_output)
    return {frozenset(k.holds) for k in sim.kernels}, sim


def _entry_ops(sim) -> dict[str, str]:
    return {i.name: i.opcode for i in sim.module.entry.instructions}


# -- XLA's priority_fusion_test.cc ---------------------------------------------------------

ADD = """
add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT add.13235 = f32[] add(p0, p1)
}
"""


def test_xla_fuse_with_shared_argument() -> None:
    """FuseWithSharedArgument: the root is one kLoop fusion of everything."""
    groups, sim = _groups("""HloModule test_module
ENTRY main {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  subtract = f32[] subtract(p0, p1)
  compare = pred[] compare(subtract, subtract), direction=NE
  add = f32[] add(p0, p1)
  abs = f32[] abs(subtract)
  ROOT select = f32[] select(compare, add, abs)
}""")
    assert groups == {frozenset({"subtract", "compare", "add", "abs", "select"})}
    assert sim.module.entry.root.attributes["kind"] == "kLoop"


def test_xla_fuse_broadcast_into_bitcast_consumers() -> None:
    """FuseBroadcastIntoBitcastConsumers: ROOT fusion(param)."""
    groups, sim = _groups("""HloModule test_module
ENTRY main {
  param_0 = f32[96]{0} parameter(0)
  broadcast = f32[8,96,128,7]{3,2,1,0} broadcast(param_0), dimensions={1}
  bitcast.6079.2 = f32[8,24,4,128,7]{4,3,2,1,0} bitcast(broadcast)
  ROOT transpose.1990.2 = f32[8,24,128,7,4]{4,3,2,1,0} transpose(bitcast.6079.2), dimensions={0,1,3,4,2}
}""")
    assert groups == {frozenset({"broadcast", "bitcast.6079.2", "transpose.1990.2"})}
    assert sim.module.entry.root.opcode == "fusion"


def test_xla_fuse_widening_convert_into_consumers() -> None:
    """FuseWideningConvertIntoConsumers: fusion(p) for the multiply (holding the add and the
    convert) and a second fusion(p) for the convert, which the bitcast reads."""
    groups, sim = _groups("""HloModule test_module
ENTRY main {
  p = f16[512]{0} parameter(0)
  a = f16[512]{0} add(p, p)
  c = f32[512]{0} convert(a)
  s = f32[512]{0} multiply(c, c)
  bc = s32[512]{0} bitcast(c)
  ROOT t = (f32[512], s32[512]) tuple(s, bc)
}""")
    assert groups == {frozenset({"a", "c", "s"}), frozenset({"a", "c"})}
    assert _entry_ops(sim)["bc"] == "bitcast"


def test_xla_do_not_fuse_bit_width_changing_bitcast() -> None:
    """DoNotFuseBitWidthChangingBitcast: no change (the negate and the multiply stay apart)."""
    groups, sim = _groups("""HloModule test_module
ENTRY e {
  a = s8[3,5,2]{2,1,0} parameter(0)
  n = s8[3,5,2]{2,1,0} negate(a)
  b = s16[3,5]{1,0} bitcast(n)
  ROOT m = s16[3,5]{1,0} multiply(b, b)
}""")
    assert groups == {frozenset({"n"}), frozenset({"m"})}
    assert _entry_ops(sim)["b"] == "bitcast"


def test_xla_fuse_convert_into_reduce() -> None:
    """FuseConvertIntoReduce: three fusions, each rooted at its reduction's convert."""
    groups, sim = _groups(
        "HloModule test_module\n"
        + ADD
        + """
ENTRY main {
  param_0_0.79 = bf16[1024,8192]{1,0} parameter(0)
  param_1_0.79 = bf16[1024,8192]{1,0} parameter(1)
  param_2.483 = f32[8192]{0} parameter(2)
  param_4.2892 = bf16[1024,8192]{1,0} parameter(3)
  convert.21854 = f32[1024,8192]{1,0} convert(param_0_0.79)
  convert.21855 = f32[1024,8192]{1,0} convert(param_1_0.79)
  constant_7773 = f32[] constant(0)
  broadcast.14555 = f32[1024,8192]{1,0} broadcast(param_2.483), dimensions={1}
  multiply.6906 = f32[1024,8192]{1,0} multiply(broadcast.14555, convert.21854)
  reduce.4813 = f32[1024]{0} reduce(multiply.6906, constant_7773), dimensions={1}, to_apply=add
  convert.13970 = bf16[1024]{0} convert(reduce.4813)
  convert.21534 = f32[1024,8192]{1,0} convert(param_4.2892)
  multiply.6910.clone.1 = f32[1024,8192]{1,0} multiply(broadcast.14555, convert.21534)
  reduce.4811.clone.1 = f32[1024]{0} reduce(multiply.6910.clone.1, constant_7773), dimensions={1}, to_apply=add
  convert.13967.clone.1 = bf16[1024]{0} convert(reduce.4811.clone.1)
  multiply.6908.clone.1 = f32[1024,8192]{1,0} multiply(broadcast.14555, convert.21855)
  reduce.4812.clone.1 = f32[1024]{0} reduce(multiply.6908.clone.1, constant_7773), dimensions={1}, to_apply=add
  convert.13969.clone.1 = bf16[1024]{0} convert(reduce.4812.clone.1)
  ROOT fusion.241 = (bf16[1024]{0}, bf16[1024]{0}, bf16[1024]{0}) tuple(convert.13970, convert.13967.clone.1, convert.13969.clone.1)
}"""
    )
    shared = {"constant_7773", "broadcast.14555"}
    assert groups == {
        frozenset(shared | {"convert.21854", "multiply.6906", "reduce.4813", "convert.13970"}),
        frozenset(
            shared
            | {"convert.21534", "multiply.6910.clone.1", "reduce.4811.clone.1"}
            | {"convert.13967.clone.1"}
        ),
        frozenset(
            shared
            | {"convert.21855", "multiply.6908.clone.1", "reduce.4812.clone.1"}
            | {"convert.13969.clone.1"}
        ),
    }
    assert {k.roots for k in sim.kernels} == {
        ("convert.13970",),
        ("convert.13967.clone.1",),
        ("convert.13969.clone.1",),
    }


def test_xla_reduction_epilogue_fusion_regression() -> None:
    """ReductionEpilogueFusionRegressionTest: one loop and one reduction fusion; the root is
    a bitcast of the reduction fusion (its convert fused as the reduction's epilogue)."""
    groups, sim = _groups(
        "HloModule test_module\n"
        + ADD
        + """
ENTRY main {
  param_1.15162 = f32[2752]{0} parameter(1)
  convert.44829 = bf16[2752]{0} convert(param_1.15162)
  bitcast.24686 = bf16[1,1,2752]{2,1,0} bitcast(convert.44829)
  convert.44468 = f32[1,1,2752]{2,1,0} convert(bitcast.24686)
  constant_13722 = bf16[] constant(1)
  convert.17451 = f32[] convert(constant_13722)
  broadcast.17565 = f32[1,1,2752]{2,1,0} broadcast(convert.17451), dimensions={}
  negate.167 = f32[1,1,2752]{2,1,0} negate(convert.44468)
  exponential.569 = f32[1,1,2752]{2,1,0} exponential(negate.167)
  add.1850 = f32[1,1,2752]{2,1,0} add(broadcast.17565, exponential.569)
  divide.1376 = f32[1,1,2752]{2,1,0} divide(broadcast.17565, add.1850)
  multiply.9709 = f32[1,1,2752]{2,1,0} multiply(convert.44468, divide.1376)
  param_0.15005 = f32[2752]{0} parameter(0)
  convert.44826 = bf16[2752]{0} convert(param_0.15005)
  bitcast.24683 = bf16[1,1,2752]{2,1,0} bitcast(convert.44826)
  convert.44467 = f32[1,1,2752]{2,1,0} convert(bitcast.24683)
  multiply.9708 = f32[1,1,2752]{2,1,0} multiply(multiply.9709, convert.44467)
  convert.16959 = bf16[1,1,2752]{2,1,0} convert(multiply.9708)
  fusion.3203 = bf16[2752]{0} bitcast(convert.16959)
  convert.15093 = f32[2752]{0} convert(fusion.3203)
  broadcast.13841 = f32[8192,2752]{1,0} broadcast(convert.15093), dimensions={1}
  param_0.15525 = bf16[8192,2752]{1,0} parameter(2)
  convert.13738 = f32[8192,2752]{1,0} convert(param_0.15525)
  multiply.6422 = f32[8192,2752]{1,0} multiply(broadcast.13841, convert.13738)
  constant_14382 = f32[] constant(0)
  fusion.339 = f32[8192]{0} reduce(multiply.6422, constant_14382), dimensions={1}, to_apply=add
  convert.44633 = bf16[8192]{0} convert(fusion.339)
  ROOT bitcast.24487 = bf16[1,1,8192]{2,1,0} bitcast(convert.44633)
}"""
    )
    assert sorted(k.kind for k in sim.kernels) == ["kInput", "kLoop"]
    (reduction,) = [g for g in groups if "fusion.339" in g]
    assert {"convert.44633", "multiply.6422", "broadcast.13841"} <= reduction
    root = sim.module.entry.root
    assert root.opcode == "bitcast"
    assert root.operands[0].opcode == "fusion"


@pytest.mark.parametrize(
    ("shape", "reduced", "middle", "out"),
    [
        # DoNotFuseReduceIntoReduce
        ("f32[8,4,128,226]{3,2,1,0}", "3", "f32[8,4,128]{2,1,0}", "f32[8,4]{1,0}"),
        # DoNotFuseReduceIntoReduceEvenIfOccupancyIsHigh
        ("f32[4,3584,128,168]{3,2,1,0}", "3", "f32[4,3584,128]{2,1,0}", "f32[4,3584]{1,0}"),
    ],
)
def test_xla_do_not_fuse_reduce_into_reduce(shape, reduced, middle, out) -> None:
    """Two kernels, each rooted at its reduce."""
    groups, sim = _groups(
        "HloModule test_module\n"
        + ADD
        + f"""
ENTRY main {{
  p0 = {shape} parameter(0)
  c0 = f32[] constant(0)
  r0 = {middle} reduce(p0, c0), dimensions={{{reduced}}}, to_apply=add
  ROOT r1 = {out} reduce(r0, c0), dimensions={{2}}, to_apply=add
}}"""
    )
    assert groups == {frozenset({"c0", "r0"}), frozenset({"c0", "r1"})}
    assert all(k.kind == "kInput" for k in sim.kernels)


SCATTER_ADD = """
add {
  lhs = s32[] parameter(0)
  rhs = s32[] parameter(1)
  ROOT add = s32[] add(lhs, rhs)
}
"""


def test_xla_dont_fuse_into_first_operand_of_scatter() -> None:
    """DontFuseIntoFirstOperandOfScatter: ROOT add(fusion, fusion), the scatter fusion a
    kInput with scatter(parameter, add, add): the indices and updates fused, not operand."""
    groups, sim = _groups(
        "HloModule test_module\n"
        + SCATTER_ADD
        + """
ENTRY FuseIntoScatter {
  p0 = s32[3,3] parameter(0)
  operand = s32[3,3] add(p0, p0)
  p1 = s32[2,1] parameter(1)
  indices = s32[2,1] add(p1, p1)
  p2 = s32[2,3] parameter(2)
  updates = s32[2,3] add(p2, p2)
  scatter = s32[3,3] scatter(operand, indices, updates), to_apply=add, update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1
  ROOT add = s32[3,3] add(scatter, scatter)
}"""
    )
    assert frozenset({"scatter", "indices", "updates"}) in groups
    assert frozenset({"operand"}) in groups
    (scatter,) = [k for k in sim.kernels if "scatter" in k.holds]
    assert scatter.kind == "kInput"
    assert all("scatter" not in g for g in groups - {frozenset(scatter.holds)})


def test_xla_dont_fuse_constant_into_first_operand_of_scatter() -> None:
    """DontFuseConstantIntoFirstOperandOfScatter: fusion(constant, parameter), kInput,
    scatter(parameter, parameter, broadcast(constant))."""
    groups, sim = _groups(
        "HloModule test_module\n"
        + SCATTER_ADD
        + """
ENTRY FuseIntoScatter {
  operand = s32[1] constant({0})
  indices = s32[24,1] parameter(0)
  constant = s32[] constant(1)
  updates = s32[24,1] broadcast(constant)
  ROOT scatter = s32[1] scatter(operand, indices, updates), to_apply=add, update_window_dims={1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1
}"""
    )
    assert groups == {frozenset({"scatter", "updates", "constant"})}
    root = sim.module.entry.root
    assert root.attributes["kind"] == "kInput"
    assert [o.opcode for o in root.operands] == ["constant", "parameter"]


# -- hand-built modules ----------------------------------------------------------------------


def test_elementwise_chain_is_one_loop_fusion() -> None:
    # every op is elementwise with one user: each producer fuses into the next
    groups, _ = _groups("""HloModule chain
ENTRY main {
  p = f32[1024,256] parameter(0)
  a = f32[1024,256] add(p, p)
  m = f32[1024,256] multiply(a, p)
  e = f32[1024,256] exponential(m)
  ROOT n = f32[1024,256] negate(e)
}""")
    assert groups == {frozenset({"a", "m", "e", "n"})}


SOFTMAX = (
    """HloModule softmax
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
"""
    + ADD
    + """
ENTRY main {
  x = f32[128,512] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[128] reduce(x, ninf), dimensions={1}, to_apply=max
  bm = f32[128,512] broadcast(m), dimensions={0}
  s = f32[128,512] subtract(x, bm)
  e = f32[128,512] exponential(s)
  zero = f32[] constant(0)
  sum = f32[128] reduce(e, zero), dimensions={1}, to_apply=add
  bs = f32[128,512] broadcast(sum), dimensions={0}
  ROOT out = f32[128,512] divide(e, bs)
}"""
)


def test_softmax_groups() -> None:
    # the reductions are roots; exp is expensive and read by two kernels (the sum and the
    # division), so it is not duplicated: its own kernel with the subtraction and broadcast.
    # Siblings: m reads x as a reduction, e's kernel as a loop: no multi-output fusion.
    groups, sim = _groups(SOFTMAX, multi_output=True)
    assert groups == {
        frozenset({"ninf", "m"}),
        frozenset({"bm", "s", "e"}),
        frozenset({"zero", "sum"}),
        frozenset({"bs", "out"}),
    }
    assert sorted(k.kind for k in sim.kernels) == ["kInput", "kInput", "kLoop", "kLoop"]


def test_layer_norm_groups() -> None:
    # sum1, sum2: reduction roots (their epilogue divides by a broadcast, not elementwise on
    # the result alone: no epilogue fusion). mean = divide is expensive and read by two
    # kernels: its own. inv = rsqrt [64] read through a broadcast by a [64,256] kernel: not
    # fused (recomputed per reuse): its own, with var (divide, same size) and the epsilon.
    # cent and bmean are cheap: duplicated into the sum2 kernel and the output kernel.
    groups, _ = _groups(
        "HloModule layer_norm\n"
        + ADD
        + """
ENTRY main {
  x = f32[64,256] parameter(0)
  gamma = f32[256] parameter(1)
  beta = f32[256] parameter(2)
  c0 = f32[] constant(0)
  n = f32[] constant(256)
  bn = f32[64] broadcast(n), dimensions={}
  eps = f32[] constant(1e-5)
  beps = f32[64] broadcast(eps), dimensions={}
  sum1 = f32[64] reduce(x, c0), dimensions={1}, to_apply=add
  mean = f32[64] divide(sum1, bn)
  bmean = f32[64,256] broadcast(mean), dimensions={0}
  cent = f32[64,256] subtract(x, bmean)
  sq = f32[64,256] multiply(cent, cent)
  sum2 = f32[64] reduce(sq, c0), dimensions={1}, to_apply=add
  var = f32[64] divide(sum2, bn)
  veps = f32[64] add(var, beps)
  inv = f32[64] rsqrt(veps)
  binv = f32[64,256] broadcast(inv), dimensions={0}
  norm = f32[64,256] multiply(cent, binv)
  bgamma = f32[64,256] broadcast(gamma), dimensions={1}
  scaled = f32[64,256] multiply(norm, bgamma)
  bbeta = f32[64,256] broadcast(beta), dimensions={1}
  ROOT y = f32[64,256] add(scaled, bbeta)
}"""
    )
    assert groups == {
        frozenset({"y", "scaled", "bbeta", "bgamma", "norm", "binv", "cent", "bmean"}),
        frozenset({"inv", "veps", "beps", "eps", "var", "bn", "n"}),
        frozenset({"sum2", "sq", "cent", "bmean", "c0"}),
        frozenset({"mean", "bn", "n"}),
        frozenset({"sum1", "c0"}),
    }


def test_matmul_bias_activation() -> None:
    # GemmRewriter: the dot is a cuBLAS call; a matrix bias (same shape, the dot's only user)
    # is folded (beta = 1); a vector bias through a broadcast and the ReLU stay a loop fusion
    groups, sim = _groups("""HloModule mlp
ENTRY main {
  x = f32[128,512] parameter(0)
  w = f32[512,256] parameter(1)
  b = f32[256] parameter(2)
  r = f32[128,256] parameter(3)
  d = f32[128,256] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  res = f32[128,256] add(d, r)
  d2 = f32[128,256] dot(res, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  w2 = f32[256,256] parameter(4)
  bb = f32[128,256] broadcast(b), dimensions={1}
  s = f32[128,256] add(d2, bb)
  zero = f32[] constant(0)
  bz = f32[128,256] broadcast(zero), dimensions={}
  ROOT act = f32[128,256] maximum(s, bz)
}""")
    assert groups == {frozenset({"bb", "s", "zero", "bz", "act"})}
    calls = [i for i in sim.module.entry.instructions if i.opcode == "custom-call"]
    assert sorted(c.name for c in calls) == ["d", "d2"]
    by_name = {c.name: c for c in calls}
    assert [o.name for o in by_name["d"].operands] == ["x", "w", "r"]
    config = json.loads(by_name["d"].attributes["backend_config"])["gemm_backend_config"]
    assert config["beta"] == 1
    assert by_name["d2"].operands[0] is by_name["d"]
    assert "dot" not in _entry_ops(sim).values()


def test_scan_with_per_layer_dynamic_update_slice() -> None:
    # the body: the dot a cuBLAS call; tanh a loop kernel of its own (a loop output, so it
    # stays); the DUS an in-place kernel holding the reshape of its update, never the buffer
    _, sim = _groups(
        """HloModule scan
cond {
  p = (s32[], f32[8,64], f32[12,8,64], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(12)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[8,64], f32[12,8,64], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[8,64] get-tuple-element(p), index=1
  buf = f32[12,8,64] get-tuple-element(p), index=2
  w = f32[64,64] get-tuple-element(p), index=3
  d = f32[8,64] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[8,64] tanh(d)
  u = f32[1,8,64] reshape(t)
  z = s32[] constant(0)
  dus = f32[12,8,64] dynamic-update-slice(buf, u, i, z, z)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT out = (s32[], f32[8,64], f32[12,8,64], f32[64,64]) tuple(next, t, dus, w)
}

ENTRY main {
  h0 = f32[8,64] parameter(0)
  buf0 = f32[12,8,64] parameter(1)
  w = f32[64,64] parameter(2)
  i0 = s32[] constant(0)
  init = (s32[], f32[8,64], f32[12,8,64], f32[64,64]) tuple(i0, h0, buf0, w)
  loop = (s32[], f32[8,64], f32[12,8,64], f32[64,64]) while(init), condition=cond, body=body
  ROOT r = f32[12,8,64] get-tuple-element(loop), index=2
}"""
    )
    by_computation = {}
    for k in sim.kernels:
        by_computation.setdefault(k.computation, set()).add(frozenset(k.holds))
    assert by_computation["body"] == {
        frozenset({"t"}),
        frozenset({"dus", "u", "z"}),
        frozenset({"next", "one"}),
    }
    assert by_computation["cond"] == {frozenset({"lt", "n"})}
    body = sim.module.computations["body"]
    assert {i.name for i in body.instructions if i.opcode == "custom-call"} == {"d"}
    loop = next(i for i in sim.module.entry.instructions if i.opcode == "while")
    assert '"known_trip_count":{"n":"12"}' in loop.attributes["backend_config"]


# -- per device ------------------------------------------------------------------------------

SHARDED_DOT = """HloModule fsdp

ENTRY main {
  x = f32[16,512] parameter(0), sharding={devices=[4,1]<=[4]}
  w = f32[512,256] parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT d = f32[16,256] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}"""


def test_sharded_dot_per_device_shapes() -> None:
    # by hand: x is split by rows, 16/4 = 4 per device; w is split along the contracted
    # dimension on one side only, so the partitioner all-gathers it whole (512/4 = 128 rows
    # each, gathered over dimension 0 back to 512); the product is [4,256] per device
    sim = simulate(parse_hlo(SHARDED_DOT), asynchronous=False)
    assert sim.devices == 4
    by_name = {i.name: i for i in sim.module.entry.instructions}
    assert by_name["x"].shape.dims == (4, 512)
    assert by_name["w"].shape.dims == (128, 256)
    (gather,) = [i for i in by_name.values() if i.opcode == "all-gather"]
    assert gather.shape.dims == (512, 256)
    assert gather.attributes["dimensions"] == "{0}"
    assert gather.operands[0] is by_name["w"]
    assert by_name["d"].opcode == "custom-call"
    assert by_name["d"].shape.dims == (4, 256)


def test_sharded_contraction_needs_an_all_reduce() -> None:
    # both sides split along the contracted dimension (512/4 = 128 each): each device
    # multiplies [16,128] by [128,256] into a partial [16,256], summed by an all-reduce
    text = SHARDED_DOT.replace(
        "x = f32[16,512] parameter(0), sharding={devices=[4,1]<=[4]}",
        "x = f32[16,512] parameter(0), sharding={devices=[1,4]<=[4]}",
    )
    sim = simulate(parse_hlo(text), asynchronous=False)
    ops = [(i.opcode, i.shape.dims) for i in sim.module.entry.instructions]
    assert ("custom-call", (16, 256)) in ops
    assert ("all-reduce", (16, 256)) in ops
    assert not [op for op in ops if op[0] == "all-gather"]


def test_cost_on_a_sharded_module_names_the_mesh_and_what_was_simulated(tmp_path) -> None:
    path = tmp_path / "fsdp.hlo"
    path.write_text(SHARDED_DOT)
    runner = CliRunner()
    doc = json.loads(runner.invoke(cli, ["cost", str(path), "--format", "json"]).output)
    stage = doc["stage"]
    assert "simulation" in stage["name"]
    assert "not by XLA" in stage["name"]
    assert "4 devices" in stage["simulated"]
    assert stage["num_partitions"] == 4
    assert "tile assignments" in stage["mesh"]
    assert any(k["opcode"] == "all-gather-start" for k in doc["kernels"])
    plain = json.loads(
        runner.invoke(cli, ["cost", str(path), "--format", "json", "--fusion", "none"]).output
    )
    assert plain["stage"]["name"] == "before SPMD partitioning"
    assert plain["stage"]["simulated"] is None
    assert [k["opcode"] for k in plain["kernels"]] == ["dot"]


@pytest.mark.parametrize("flag", [[], ["--fusion", "none"]])
def test_an_optimized_module_is_never_simulated(flag) -> None:
    from paths import ROOT

    path = ROOT / "tests/data/corpus/rnn_scan.opt.hlo"
    runner = CliRunner()
    doc = json.loads(runner.invoke(cli, ["cost", str(path), "--format", "json", *flag]).output)
    assert doc["stage"]["simulated"] is None


def test_a_reduction_too_large_for_one_kernel_is_split_in_two() -> None:
    # by hand: a row reduction over 50304 elements exceeds XLA's race-free bound of
    # 1024 threads x 16 = 16384: padded to 4 x 16384 = 65536, reduced over 16384 (a
    # [4,4] partial), then over the 4; two reduction kernels
    groups, sim = _groups(
        "HloModule big\n"
        + ADD
        + """
ENTRY main {
  x = f32[4,50304] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4] reduce(x, zero), dimensions={1}, to_apply=add
}"""
    )
    assert len(groups) == 2
    partial = next(i for i in sim.module.instructions() if i.name == "r.tree")
    assert partial.shape.dims == (4, 4)
    pad = next(i for i in sim.module.instructions() if i.name == "r.tree.pad")
    assert pad.shape.dims == (4, 65536)
    # a column reduction over 4096 rows is race free: one kernel
    groups, _ = _groups(
        "HloModule small\n"
        + ADD
        + """
ENTRY main {
  x = f32[4096,256] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[256] reduce(x, zero), dimensions={0}, to_apply=add
}"""
    )
    assert len(groups) == 1


@pytest.mark.parametrize("name", ["softmax", "sharded_dot", "scan"])
def test_xla_parses_the_simulated_module(name) -> None:
    """The fused module is HLO that XLA's own parser reads (skipped without jaxlib)."""
    hlo = pytest.importorskip("jaxlib._hlo")
    if name == "scan":
        from paths import ROOT

        text = (ROOT / "tests/data/corpus/rnn_scan.pre.hlo").read_text()
    else:
        text = {"softmax": SOFTMAX, "sharded_dot": SHARDED_DOT}[name]
    hlo.hlo_module_from_text(simulate(parse_hlo(text)).text)


def _dus_into_reduce():
    from paths import ROOT

    text = (ROOT / "tests/data/fusion_sim/do_not_fuse_dus_into_reduce.hlo").read_text()
    return _groups(text)


def test_xla_do_not_fuse_dynamic_update_slice_into_reduce() -> None:
    """DoNotFuseDynamicUpdateSliceIntoReduce: a reduction fusion whose ROOT is log(reduce),
    and a fusion whose ROOT is the dynamic-update-slice (the reduce is not fused into it)."""
    _, sim = _dus_into_reduce()
    by_root = {k.roots: k for k in sim.kernels}
    assert by_root[("log.38",)].kind == "kInput"
    assert "reduce.1154" in by_root[("log.38",)].holds
    dus = by_root[("dynamic-update-slice.307",)]
    assert "reduce.1154" not in dus.holds
    assert "log.38" not in dus.holds


@pytest.mark.xfail(
    strict=True,
    reason="XLA's CHECK-COUNT-3 expects three fusions; hloidx makes two: the reduction with "
    "its log epilogue, and the DUS kernel holding the whole index and gather chain "
    "(subtract.1111 to select.388). XLA's cost model keeps some of that chain apart (the "
    "test does not say which part); hloidx's rules have no cost model for it",
)
def test_xla_do_not_fuse_dynamic_update_slice_into_reduce_count() -> None:
    _, sim = _dus_into_reduce()
    assert len(sim.kernels) == 3


def _transpose_into_reduce():
    from paths import ROOT

    text = (ROOT / "tests/data/fusion_sim/do_not_fuse_transpose_into_reduce.hlo").read_text()
    return _groups(text)


def test_xla_do_not_fuse_transpose_into_reduce() -> None:
    """DoNotFuseTransposeIntoReduce: two reduction fusions and three transpose fusions (each
    transpose heads its own kernel; none is fused into a reduction)."""
    _, sim = _transpose_into_reduce()
    assert sum(k.kind == "kInput" for k in sim.kernels) == 2
    transposes = {"transpose.6582", "transpose.6580", "transpose.6584"}
    assert {k.roots[0] for k in sim.kernels} >= transposes
    for k in sim.kernels:
        if k.kind == "kInput":
            assert not transposes & set(k.holds)


@pytest.mark.xfail(
    strict=True,
    reason="XLA expects 3 loop, 2 reduction and 3 transpose fusions (8); hloidx makes 2 loop "
    "fusions (the tanh chain and the output's divide), so 7 kernels; which third loop "
    "fusion XLA keeps the test does not say",
)
def test_xla_do_not_fuse_transpose_into_reduce_count() -> None:
    _, sim = _transpose_into_reduce()
    assert len(sim.kernels) == 8


def test_xla_fuse_only_small_constant() -> None:
    """FuseOnlySmallConstant: ROOT fusion(constant, parameter) computing
    multiply(parameter, add(parameter, broadcast(constant))): the scalar constant is fused,
    the [32,32] one is not."""
    groups, sim = _groups("""HloModule module
ENTRY main {
  param_0 = f32[32,32]{1,0} parameter(0)
  c_1 = f32[] constant(1)
  c_2 = f32[32,32] constant({...})
  broadcast = f32[32,32]{1,0} broadcast(c_1), dimensions={}
  add = f32[32,32]{1,0} add(param_0, broadcast)
  ROOT mul = f32[32,32]{1,0} multiply(c_2, add)
}""")
    assert groups == {frozenset({"c_1", "broadcast", "add", "mul"})}
    root = sim.module.entry.root
    assert root.opcode == "fusion"
    assert sorted(o.opcode for o in root.operands) == ["constant", "parameter"]
