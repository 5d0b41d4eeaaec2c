"""XLA's ``gpu_hlo_cost_analysis_test.cc`` (openxla, zml/xla mirror at
1e203b533f9702298d8b17ef1281e880132614bf): each test's HLO and every assertion it makes, as
XLA states it (the test name is each function's name). The analysis counts multiple input
accesses (``count_multiple_input_accesses = true``) unless the test says otherwise."""

from __future__ import annotations

from hloidx.hlo.syntax import parse_hlo
from hloidx.perf.xla_cost_analysis import GpuCostAnalysis


def _analyse(text: str, **options) -> tuple[GpuCostAnalysis, object]:
    module = parse_hlo(text)
    analysis = GpuCostAnalysis(**options)
    analysis.analyze(module.entry)
    return analysis, module


def _fused_parameter(fusion, k: int):
    comp = fusion.called_computations["calls"][0]
    return next(p for p in comp.parameters if p.parameter_number == k)


def test_conv_custom_call():
    a, m = _analyse("""
HloModule module, is_scheduled=true

ENTRY entry {
  p0 = s8[128,12,24,24,4]{4,3,2,1,0} parameter(0)
  p1 = s8[16,12,5,5,4]{4,3,2,1,0} parameter(1)
  p2 = f32[16]{0} parameter(2)
  conv1 = (s8[128,4,24,24,4]{4,3,2,1,0}, u8[0]{0}) custom-call(p0, p1, p2),
              window={size=5x5 pad=2_2x2_2},
              dim_labels=bf01_oi01->bf01,
              custom_call_target="__cudnn$convBiasActivationForward"
  ROOT tuple = tuple(conv1)
}
""")
    conv1 = m.entry.by_name["conv1"]
    op0, op1, op2 = 128 * 12 * 24 * 24 * 4, 16 * 12 * 5 * 5 * 4, 4 * 16
    out = 128 * 4 * 24 * 24 * 4
    assert a.operand_bytes_accessed(conv1, 0) == op0
    assert a.operand_bytes_accessed(conv1, 1) == op1
    assert a.operand_bytes_accessed(conv1, 2) == op2
    assert a.output_bytes_accessed(conv1) == out
    assert a.bytes_accessed(conv1) == op0 + op1 + op2 + out
    assert a.flop_count(conv1) == 159694848


def test_reduce_window_with_overlaps_repeated_reads():
    a, m = _analyse("""
HloModule module, is_scheduled=true

add {
  a0 = f32[] parameter(0)
  a1 = f32[] parameter(1)
  ROOT _ = f32[] add(a0, a1)
}

ENTRY entry {
  p0 = f32[8,8] parameter(0)
  c0 = f32[] constant(0)
  ROOT _ = f32[3,4] reduce-window(p0, c0), window={size=4x5 stride=2x1}, to_apply=add
}
""")
    root = m.entry.root
    n = 3 * 4
    # each output element reduces 4x5 elements; each add is 3 flops
    assert a.total(m.entry, "flops") == 3 * n * (4 * 5 - 1)
    assert a.total(m.entry, "bytes") == 4 * (8 * 8 + 1 + n)
    assert a.operand_bytes_accessed(root, 0) == 4 * n * 4 * 5
    assert a.operand_bytes_accessed(root, 1) == 4
    assert a.output_bytes_accessed(root) == 4 * n


def test_broadcast_with_repeats():
    a, m = _analyse("""
HloModule m

f {
  p1 = s8[] parameter(0)
  c1 = s8[] constant(0)
  a1 = s8[] add(p1, c1)
  b1 = s8[10000] broadcast(a1), dimensions={}
  b2 = s8[10000] broadcast(c1), dimensions={}
  ROOT r1 = s8[10000] add(b1, b2)
}

ENTRY e {
  p0 = s8[] parameter(0)
  ROOT r0 = s8[10000] fusion(p0), kind=kInput, calls=f
}
""")
    root = m.entry.root
    assert a.output_bytes_accessed(root) == 10000
    assert a.operand_bytes_accessed(root, 0) == 10000
    assert a.bytes_accessed(root) == 2 * 10000
    assert a.total(m.entry, "bytes") == 2 * 10000


def test_without_repeats():
    a, m = _analyse(
        """
HloModule m

f {
  p1 = s8[] parameter(0)
  a1 = s8[] add(p1, p1)
  b1 = s8[10000] broadcast(a1), dimensions={}
  a2 = s8[10000] add(b1, b1)
  slice1 = s8[8000] slice(a2), slice={[0:8000]}
  slice2 = s8[8000] slice(a2), slice={[2000:10000]}
  c = s8[10000] constant({...})
  slicec1 = s8[8000] slice(c), slice={[0:8000]}
  slicec2 = s8[8000] slice(c), slice={[2000:10000]}
  a3 = s8[8000] add(slice1, slice2)
  a4 = s8[8000] add(slicec1, slicec2)
  ROOT a5 = s8[8000] add(a3, a4)
}

ENTRY e {
  p0 = s8[] parameter(0)
  ROOT r0 = s8[8000] fusion(p0), kind=kInput, calls=f
}
""",
        count_multiple_input_accesses=False,
    )
    root = m.entry.root
    assert a.output_bytes_accessed(root) == 8000
    assert a.operand_bytes_accessed(root, 0) == 1
    assert a.bytes_accessed(root) == 1 + 8000 + 10000
    assert a.total(m.entry, "bytes") == 1 + 8000 + 10000


def test_broadcast_flops():
    a, m = _analyse("""
HloModule m

f {
  i0 = f32[1024] iota(), iota_dimension=0
  m0 = f32[1024] add(i0, i0)
  s0 = f32[1024] multiply(m0, m0)
  b0 = f32[1024,1024] broadcast(s0), dimensions={0}
  ROOT r0 = f32[1024,1024] negate(b0)
}

ENTRY e {
  ROOT r = f32[1024,1024] fusion(), kind=kInput, calls=f
}
""")
    root = m.entry.root
    n = 1024 * 1024
    assert a.output_bytes_accessed(root) == n * 4
    assert a.bytes_accessed(root) == n * 4
    assert a.total(m.entry, "bytes") == n * 4
    assert a.total(m.entry, "flops") == n * 3 * 3
    assert a.ir_size(root) == 5


def test_slice():
    a, m = _analyse("""
HloModule m

f {
  p1 = s8[100000000] parameter(0)
  i1 = s8[100000000] iota(), iota_dimension=0
  a1 = s8[100000000] add(p1, i1)
  ROOT r1 = s8[1] slice(a1), slice={[0:1]}
}

ENTRY e {
  p0 = s8[100000000] parameter(0)
  ROOT r0 = s8[1] fusion(p0), kind=kInput, calls=f
}
""")
    root = m.entry.root
    assert a.output_bytes_accessed(root) == 1
    assert a.operand_bytes_accessed(root, 0) == 1
    assert a.bytes_accessed(root) == 2
    assert a.total(m.entry, "bytes") == 2
    assert a.ir_size(root) == 4


def test_two_slices():
    a, m = _analyse("""
HloModule m

f {
  p1 = s8[100] parameter(0)
  i1 = s8[100] iota(), iota_dimension=0
  a1 = s8[100] add(p1, i1)
  slice1 = s8[1] slice(a1), slice={[0:1]}
  slice2 = s8[1] slice(a1), slice={[3:4]}
  ROOT r = s8[1] add(slice1, slice2)
}

ENTRY e {
  p0 = s8[100] parameter(0)
  ROOT r0 = s8[1] fusion(p0), kind=kInput, calls=f
}
""")
    root = m.entry.root
    assert a.output_bytes_accessed(root) == 1
    assert a.operand_bytes_accessed(root, 0) == 2
    assert a.bytes_accessed(root) == 3
    assert a.total(m.entry, "bytes") == 3
    assert a.ir_size(root) == 9


def test_multiple_trivial_users():
    a, m = _analyse("""
HloModule m

f {
  p0 = s8[] parameter(0)
  m0 = s8[] multiply(p0, p0)
  n0 = s8[] negate(p0)
  ROOT a0 = s8[] add(m0, n0)
}

ENTRY e {
  param0 = s8[] parameter(0)
  ROOT r0 = s8[] fusion(param0), kind=kInput, calls=f
}
""")
    root = m.entry.root
    assert a.output_bytes_accessed(root) == 1
    assert a.operand_bytes_accessed(root, 0) == 1
    assert a.bytes_accessed(root) == 1 + 1
    assert a.total(m.entry, "bytes") == 1 + 1
    assert a.ir_size(root) == 4


def test_elementwise_bitcast():
    a, m = _analyse("""
HloModule m

f {
  p0 = s8[10] parameter(0)
  negate = s8[10] negate(p0)
  bitcast = u8[10] bitcast(p0)
  ROOT result = (s8[10], u8[10]) tuple(negate, bitcast)
}

ENTRY e {
  param0 = s8[10] parameter(0)
  ROOT fusion = (s8[10], u8[10]) fusion(param0), kind=kLoop, calls=f
}
""")
    root = m.entry.root
    assert a.ir_size(_fused_parameter(root, 0)) == 1
    assert a.ir_size(root) == 4


def test_mixed_users():
    a, m = _analyse("""
HloModule m

f {
  p0 = s8[10] parameter(0)
  n0 = s8[10] negate(p0)
  m0 = s8[10] multiply(n0, n0)
  a0 = s8[10] add(n0, n0)
  s0 = s8[5] slice(a0), slice={[0:5]}
  svar1 = s8[2] slice(n0), slice={[4:6]}
  n1 = s8[2] negate(svar1)
  ROOT c0 = s8[17] concatenate(s0, m0, n1), dimensions={0}
}

ENTRY e {
  param0 = s8[10] parameter(0)
  ROOT r0 = s8[17] fusion(param0), kind=kInput, calls=f
}
""")
    root = m.entry.root
    assert a.output_bytes_accessed(root) == 17
    assert a.operand_bytes_accessed(root, 0) == 17
    assert a.bytes_accessed(root) == 17 + 17
    assert a.total(m.entry, "bytes") == 17 + 17
    p0 = _fused_parameter(root, 0)
    assert a.ir_size(p0) == 3
    n0 = root.called_computations["calls"][0].by_name["n0"]
    assert a.ir_size(p0) == a.ir_size(n0)
    assert a.ir_size(root) == 12


def test_fractional_use_rounding_up():
    a, m = _analyse("""
HloModule m

add_s8 {
  lhs = s8[] parameter(0)
  rhs = s8[] parameter(1)
  ROOT add = s8[] add(lhs, rhs)
}

f {
  p0 = s8[] parameter(0)
  b0 = s8[10] broadcast(p0), dimensions={}
  c0 = s8[] constant(0)
  r0 = s8[] reduce(b0, c0), dimensions={0}, to_apply=add_s8
  bitcast0 = s8[1] bitcast(r0)
  i0 = s8[5] iota(), iota_dimension=0
  cat0 = s8[6] concatenate(bitcast0, i0), dimensions={0}
  p1 = s32[] parameter(1)
  ROOT s0 = s8[2] dynamic-slice(cat0, p1), dynamic_slice_sizes={2}
}

ENTRY e {
  p0 = s8[] parameter(0)
  p1 = s32[] parameter(1)
  ROOT r = s8[2] fusion(p0, p1), kind=kInput, calls=f
}
""")
    root = m.entry.root
    assert a.output_bytes_accessed(root) == 2
    assert a.operand_bytes_accessed(root, 0) == 10
    assert a.operand_bytes_accessed(root, 1) == 4
    assert a.bytes_accessed(root) == 2 + 10 + 4
    assert a.total(m.entry, "bytes") == 2 + 10 + 4


def test_large_constant():
    a, m = _analyse("""
HloModule m

f {
  p0 = s8[1000] parameter(0)
  c0 = s8[1000] constant({...})
  ROOT a0 = s8[1000] add(p0, c0)
}

ENTRY e {
  p0 = s8[1000] parameter(0)
  ROOT r = s8[1000] fusion(p0), kind=kInput, calls=f
}
""")
    root = m.entry.root
    assert a.output_bytes_accessed(root) == 1000
    assert a.operand_bytes_accessed(root, 0) == 1000
    assert a.bytes_accessed(root) == 3000
    assert a.total(m.entry, "bytes") == 3000
    assert a.ir_size(root) == 3


def test_dyn_update_slice_using_operand_data():
    a, m = _analyse("""
  HloModule m

  f {
    to_update = s8[3,1,1,1] parameter(0)
    update = s8[1,1,1,1] constant(0)
    a = s32[] constant(0)
    dus = s8[3,1,1,1] dynamic-update-slice(to_update, update, a, a, a, a)
    ROOT _ = s8[3,1,1,1] negate(dus)
  }

  ENTRY _ {
    to_update = s8[3,1,1,1] parameter(0)
    ROOT _ = s8[3,1,1,1] fusion(to_update), kind=kLoop, calls=f
  }
""")
    fusion = m.entry.root
    assert fusion.opcode == "fusion"
    assert a.operand_bytes_accessed(fusion, 0) == 3 - 1  # input size minus update size
    assert a.output_bytes_accessed(fusion) == 3


def test_dyn_update_slice_not_using_operand_data():
    a, m = _analyse("""
  HloModule m

  f {
    to_update = s8[3,1,1,1] parameter(0)
    update = s8[1,1,1,1] constant(0)
    a = s32[] constant(0)
    ROOT dus = s8[3,1,1,1] dynamic-update-slice(to_update, update, a, a, a, a)
  }

  ENTRY _ {
    to_update = s8[3,1,1,1] parameter(0)
    ROOT _ = s8[3,1,1,1] fusion(to_update), kind=kLoop, calls=f
  }
""")
    fusion = m.entry.root
    assert fusion.opcode == "fusion"
    assert a.operand_bytes_accessed(fusion, 0) == 0
    assert a.output_bytes_accessed(fusion) == 1


def test_common_elementwise_use_two_parameters():
    a, m = _analyse("""
  HloModule m

  add {
    p0 = s8[] parameter(0)
    p1 = s8[] parameter(1)
    ROOT _ = s8[] add(p0, p1)
  }

  f {
    p0 = s8[10] parameter(0)
    p1 = s8[10] parameter(1)
    a = s8[10] add(p0, p1)
    c0 = s8[] constant(0)
    r0 = s8[] reduce(a, c0), dimensions={0}, to_apply=add
    c1 = s8[] constant(100)
    r1 = s8[] reduce(a, c1), dimensions={0}, to_apply=add
    ROOT _ = s8[] add(r0, r1)
  }

  ENTRY _ {
    p0 = s8[10] parameter(0)
    p1 = s8[10] parameter(1)
    ROOT _ = s8[] fusion(p0, p1), kind=kLoop, calls=f
  }
""")
    fusion = m.entry.root
    p0, p1 = _fused_parameter(fusion, 0), _fused_parameter(fusion, 1)
    assert a.common_elementwise_utilization(p0, p1) == 2.0


_PARAMETER_AND_ROOT = """
  HloModule m

  f {
    p0 = s8[10] parameter(0)
    p1 = s8[] parameter(1)
    p1b = s8[10] broadcast(p1)
    a = s8[10] add(p0, p1b)
    ROOT _ = s8[10] negate(a)
  }

  ENTRY _ {
    p0 = s8[10] parameter(0)
    p1 = s8[] parameter(1)
    ROOT _ = s8[10] fusion(p0, p1), kind=kLoop, calls=f
  }
"""


def test_common_elementwise_use_parameter_and_root():
    a, m = _analyse(_PARAMETER_AND_ROOT)
    fusion = m.entry.root
    root = fusion.called_computations["calls"][0].root
    assert a.common_elementwise_utilization(_fused_parameter(fusion, 0), root) == 1.0
    assert a.common_elementwise_utilization(_fused_parameter(fusion, 1), root) == 0.0


def test_common_elementwise_use_parameter_and_root_multi_output_fusion():
    a, m = _analyse("""
  HloModule m

  f {
    p0 = s8[10] parameter(0)
    p1 = s8[] parameter(1)
    p1b = s8[10] broadcast(p1)
    a = s8[10] add(p0, p1b)
    neg = s8[10] negate(a)
    ROOT _ = (s8[10], s8[10]) tuple(a, neg)
  }

  ENTRY _ {
    p0 = s8[10] parameter(0)
    p1 = s8[] parameter(1)
    ROOT _ = (s8[10], s8[10]) fusion(p0, p1), kind=kLoop, calls=f
  }
""")
    fusion = m.entry.root
    root = fusion.called_computations["calls"][0].root
    assert a.common_elementwise_utilization(_fused_parameter(fusion, 0), root) == 1.0
    assert a.common_elementwise_utilization(_fused_parameter(fusion, 1), root) == 0.0


def test_reduce():
    a, m = _analyse("""
HloModule m

add {
  param_0 = f32[] parameter(0)
  param_1 = f32[] parameter(1)
  ROOT add.0 = f32[] add(param_0, param_1)
}

ENTRY entry_computation {
  param_0.3 = f32[32,40]{1,0} parameter(0)
  constant = f32[] constant(0)
  ROOT reduce = f32[32]{0} reduce(param_0.3, constant), dimensions={1}, to_apply=add
}
""")
    reduce = m.entry.root
    inputs, init, out = 4 * 32 * 40, 4 * 32, 4 * 32
    assert a.operand_bytes_accessed(reduce, 0) == inputs
    assert a.operand_bytes_accessed(reduce, 1) == init
    assert a.output_bytes_accessed(reduce) == out
    assert a.bytes_accessed(reduce) == inputs + init + out
    assert a.flop_count(reduce) == 32 * 39 * 3


def test_variadic_reduce():
    a, m = _analyse("""
HloModule m

add {
  param_0 = f32[] parameter(0)
  param_1 = f32[] parameter(1)
  param_2 = f32[] parameter(2)
  param_3 = f32[] parameter(3)
  add.0 = f32[] add(param_0, param_2)
  add.1 = f32[] add(param_1, param_3)
  ROOT t = (f32[], f32[]) tuple(add.0, add.1)
}

ENTRY entry_computation {
  param_0.3 = f32[32,40]{1,0} parameter(0)
  param_1.3 = f32[32,40]{1,0} parameter(1)
  param_2.2 = f32[] parameter(2)
  constant = f32[] constant(0)
  ROOT reduce = (f32[32]{0}, f32[32]{0}) reduce(param_0.3, param_1.3, param_2.2, constant), dimensions={1}, to_apply=add
}
""")
    reduce = m.entry.root
    inputs, init, out = 4 * 32 * 40, 4 * 32, 2 * 4 * 32
    assert a.operand_bytes_accessed(reduce, 0) == inputs
    assert a.operand_bytes_accessed(reduce, 1) == inputs
    assert a.operand_bytes_accessed(reduce, 2) == init
    assert a.operand_bytes_accessed(reduce, 3) == init
    assert a.output_bytes_accessed(reduce) == out
    assert a.bytes_accessed(reduce) == 2 * inputs + 2 * init + out
    assert a.flop_count(reduce) == 32 * 39 * 6


def test_async_all_reduce():
    a, m = _analyse("""
HloModule m

add {
  param_0 = f32[] parameter(0)
  param_1 = f32[] parameter(1)
  ROOT t = f32[] add(param_0, param_1)
}

ENTRY entry_computation {
  p = f32[4096] parameter(0)
  ar-start = f32[4096] all-reduce-start(p), to_apply=add
  ROOT _ = f32[4096] all-reduce-done(ar-start)
}
""")
    all_reduce = m.entry.root.operands[0]
    assert a.bytes_transferred(all_reduce) == 4096 * 4
    assert a.bytes_accessed(all_reduce) == 4096 * 4


def test_all_gather():
    a, m = _analyse("""
HloModule m, num_partitions=4

ENTRY entry_computation {
  p = f32[1024] parameter(0)
  ROOT _ = f32[4096] all-gather(p), dimensions={0}, use_global_device_ids=true,
    replica_groups={{0,1,2,3}}, channel_id=1
}
""")
    all_gather = m.entry.root
    assert a.bytes_transferred(all_gather) == 4096 * 4
    # write = (3 + 4) * 1024 * 4 bytes, read = 4 * 1024 * 4 bytes
    assert a.bytes_accessed(all_gather) == 45056


def test_async_all_gather():
    a, m = _analyse("""
HloModule m, num_partitions=4

ENTRY entry_computation {
  p.0 = f32[1024] parameter(0)
  p.1 = f32[512] parameter(1)
  ag-start = ((f32[1024],f32[512]), (f32[4096],f32[2048])) all-gather-start(p.0,p.1),
    dimensions={0}, use_global_device_ids=true, replica_groups={{0,1,2,3}},
    channel_id=1
  ROOT _ = (f32[4096],f32[2048]) all-gather-done(ag-start)
}
""")
    all_gather = m.entry.root.operands[0]
    assert a.bytes_transferred(all_gather) == 4096 * 4 + 2048 * 4
    # write = (3 + 4) * (1024 + 512) * 4 bytes, read = 4 * (1024 + 512) * 4 bytes
    assert a.bytes_accessed(all_gather) == 67584


def test_reduce_scatter():
    a, m = _analyse("""
HloModule m, num_partitions=4

add {
  param_0 = f32[] parameter(0)
  param_1 = f32[] parameter(1)
  ROOT t = f32[] add(param_0, param_1)
}

ENTRY entry_computation {
  p = f32[4096] parameter(0)
  ROOT _ = f32[1024] reduce-scatter(p), dimensions={0}, to_apply=add,
      use_global_device_ids=true, replica_groups={{0,1,2,3}}, channel_id=1
}
""")
    reduce_scatter = m.entry.root
    assert a.bytes_transferred(reduce_scatter) == 4096 * 4
    # read = (3 + 4) * 1024 * 4 bytes, write = 4 * 1024 * 4 bytes
    assert a.bytes_accessed(reduce_scatter) == 45056


def test_async_reduce_scatter():
    a, m = _analyse("""
HloModule m, num_partitions=4

add {
  param_0 = f32[] parameter(0)
  param_1 = f32[] parameter(1)
  ROOT t = f32[] add(param_0, param_1)
}

async_computation {
  param_3 = f32[4096] parameter(0)
  param_4 = f32[2048] parameter(1)
  ROOT r = (f32[1024],f32[512]) reduce-scatter(param_3,param_4),
    dimensions={0}, to_apply=add, use_global_device_ids=true,
    replica_groups={{0,1,2,3}}, channel_id=1
}

ENTRY entry_computation {
  p.0 = f32[4096] parameter(0)
  p.1 = f32[2048] parameter(1)
  rs-start = ((f32[4096],f32[2048]),(f32[1024],f32[512])) async-start(p.0,p.1),
    calls=async_computation
  ROOT _ = (f32[1024],f32[512]) async-done(rs-start)
}
""")
    reduce_scatter = m.entry.root.operands[0]
    assert a.bytes_transferred(reduce_scatter) == 4096 * 4 + 2048 * 4
    # read = (3 + 4) * (1024 + 512) * 4 bytes, write = 4 * (1024 + 512) * 4 bytes
    assert a.bytes_accessed(reduce_scatter) == 67584


def test_custom_op_profile_is_used():
    clamp_flops, multiply_flops, tanh_flops, n = 7, 11, 13, 10
    profile = {("clamp", "f32"): clamp_flops, ("multiply", "f32"): multiply_flops}
    profile[("tanh", "f32")] = tanh_flops
    a, m = _analyse(
        """
HloModule m

ENTRY entry_computation {
  param_0 = f32[10] parameter(0)
  param_1 = f32[10] parameter(1)
  param_2 = f32[10] parameter(2)
  param_3 = f32[10] parameter(3)
  tanh = f32[10] tanh(param_0)
  mul = f32[10] multiply(tanh, param_1)
  ROOT clamp = f32[10] clamp(mul, param_2, param_3)
}
""",
        op_profile=profile,
    )
    clamp = m.entry.root
    mul = clamp.operands[0]
    tanh = mul.operands[0]
    assert a.flop_count(clamp) == clamp_flops * n
    assert a.flop_count(mul) == multiply_flops * n
    assert a.flop_count(tanh) == tanh_flops * n
