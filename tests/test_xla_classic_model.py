"""XLA's ``gpu_performance_model_test.cc`` (openxla, zml/xla mirror at
1e203b533f9702298d8b17ef1281e880132614bf), every test's HLO and assertions as XLA states them,
on XLA's test device (``RTXA6000DeviceInfo``, the ``sm_86`` op profile): the classic
``GpuPerformanceModel`` over ``GpuHloCostAnalysis``. Times are compared as XLA compares them,
truncated to whole microseconds (``absl::ToInt64Microseconds``) within XLA's tolerance; the
launch overhead is XLA's 1 µs per kernel."""

from __future__ import annotations

import pytest

from hloidx.hlo.syntax import parse_hlo
from hloidx.perf.devices import cost_device
from hloidx.perf.fusion_model import estimate_fusion
from hloidx.perf.xla_performance_model import INFINITE, ClassicModel
from hloidx.perf.xla_performance_model import to_microseconds as us

A6000 = cost_device("rtx-a6000")
LAUNCH_NS = 1000.0


def _model(text: str):
    module = parse_hlo(text)
    model = ClassicModel(A6000)
    model.analysis.analyze(module.entry)
    return module, model


def _near(value: float, expected: float, tolerance: float) -> bool:
    return abs(value - expected) <= tolerance


def _indexing_unfused_us(fusion) -> int:
    """``GpuPerformanceModelWithIndexingAnalysis::EstimateRunTimes(root).time_unfused``."""
    return us(estimate_fusion(fusion, A6000, "xla").exec_time_ns + LAUNCH_NS)


def test_large_write():
    m, model = _model("""
HloModule m

f {
  c0 = f32[] constant(0)
  ROOT b0 = f32[10000000] broadcast(c0)
}

ENTRY e {
  ROOT r.1 = f32[10000000] fusion(), kind=kLoop, calls=f
}
""")
    root = m.entry.root
    # dominated by the DRAM bandwidth: 40 MB / 768.096 GB/s = 52.1 us, plus the launch
    assert _near(us(model.run_times(root, []).time_unfused_ns), 53, 10)
    assert _near(_indexing_unfused_us(root), 53, 10)


def test_small_read_write():
    m, model = _model("""
HloModule m

f {
  p0 = f32[1000] parameter(0)
  p1 = f32[1000] parameter(1)
  ROOT b0 = f32[1000] add(p0, p1)
}

ENTRY e {
  p0 = f32[1000] parameter(0)
  p1 = f32[1000] parameter(1)
  ROOT r.1 = f32[1000] fusion(p0, p1), kind=kLoop, calls=f
}
""")
    root = m.entry.root
    assert _near(us(model.run_times(root, []).time_unfused_ns), 1, 1)
    data = model.instruction(root)
    # RecordEstimatedRunTime's reification cost: cycles = exec time x the 1.41 GHz clock
    assert _near(data.exec_ns * A6000.clock_rate_ghz, 38.4, 0.1)
    assert _near(data.exec_ns / 1000.0, 0, 1)
    assert _near(_indexing_unfused_us(root), 1, 1)


def test_large_read_write():
    m, model = _model("""
HloModule m

f {
 p0 = f32[10000000] parameter(0)
 p1 = f32[10000000] parameter(1)
 ROOT a0 = f32[10000000] add(p0, p1)
}

ENTRY e {
 p0 = f32[10000000] parameter(0)
 p1 = f32[10000000] parameter(1)
 ROOT r.1 = f32[10000000] fusion(p0, p1), kind=kLoop, calls=f
}
""")
    root = m.entry.root
    assert _near(us(model.run_times(root, []).time_unfused_ns), 175, 30)
    data = model.instruction(root)
    assert _near(data.exec_ns * A6000.clock_rate_ghz, 220284, 100)
    assert _near(data.exec_ns / 1000.0, 156, 10)
    assert _near(data.compute_ns / 1000.0, 1, 1)
    assert _near((data.read_ns + data.write_ns) / 1000.0, 156, 10)


def _cache_effect(broadcast: int) -> str:
    repeat = 10000000 // broadcast
    return f"""
HloModule m

f {{
  p0 = f32[{broadcast}] parameter(0)
  bc0 = f32[{broadcast},{repeat}] broadcast(p0), dimensions={{0}}
  b0 = f32[10000000] bitcast(bc0)
  p1 = f32[10000000] parameter(1)
  ROOT a0 = f32[10000000] add(b0, p1)
}}

ENTRY e {{
  p0 = f32[{broadcast}] parameter(0)
  p1 = f32[10000000] parameter(1)
  ROOT r.1 = f32[10000000] fusion(p0, p1), kind=kLoop, calls=f
}}
"""


def test_l1_cache_effect():
    m, model = _model(_cache_effect(10000))
    # parameter 0's re-reads come from L1 (40 kB): faster than LargeReadWrite
    assert _near(us(model.run_times(m.entry.root, []).time_unfused_ns), 118, 12)


def test_l2_cache_effect():
    m, model = _model(_cache_effect(1000000))
    # parameter 0's re-reads come from L2 (4 MB does not fit in L1)
    assert _near(us(model.run_times(m.entry.root, []).time_unfused_ns), 123, 12)


def test_unused_parameter():
    # XLA builds this module with HloComputation::Builder; the same module as text
    m, model = _model("""
HloModule m

subcomp {
  p0f = f32[100000] parameter(0)
  p1f = f32[100000] parameter(1)
  ROOT negate = f32[100000] negate(p0f)
}

ENTRY b {
  p0 = f32[100000] parameter(0)
  p1 = f32[100000] parameter(1)
  ROOT fusion = f32[100000] fusion(p0, p1), kind=kLoop, calls=subcomp
}
""")
    assert _near(us(model.run_times(m.entry.root, []).time_unfused_ns), 1, 1)


_LOGS = """
max {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  log0 = f32[] log(p0)
  log1 = f32[] log(log0)
  log2 = f32[] log(log1)
  log3 = f32[] log(log2)
  log4 = f32[] log(log3)
  ROOT max = f32[] maximum(log4, p1)
}
"""


def test_compute_bound_reduces_with_same_launch_dimensions():
    m, model = _model(
        "HloModule testmodule\n"
        + _LOGS
        + """
ENTRY fusion {
  c = f32[] constant(-inf)
  p0 = f32[150,32,128] parameter(0)
  reduce.1 = f32[150,32] reduce(p0, c), dimensions={2}, to_apply=max
  reduce.2 = f32[150] reduce(reduce.1, c), dimensions={1}, to_apply=max

  p1 = f32[150,128,32] parameter(1)
  reduce.3 = f32[150,128] reduce(p1, c), dimensions={2}, to_apply=max
  reduce.4 = f32[150] reduce(reduce.3, c), dimensions={1}, to_apply=max

  ROOT res = (f32[150], f32[150]) tuple(reduce.2, reduce.4)
}
"""
    )
    e = m.entry.by_name
    large_small = model.run_times(e["reduce.1"], [e["reduce.2"]])
    small_large = model.run_times(e["reduce.3"], [e["reduce.4"]])
    assert _near(us(large_small.time_fused_ns), us(small_large.time_fused_ns), 2)


_MAX = """
max {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT max = f32[] maximum(p0, p1)
}
"""


def test_fusing_transpose_into_reduce_is_slow():
    m, model = _model(
        "HloModule testmodule\n"
        + _MAX
        + """
ENTRY fusion {
  c = f32[] constant(-inf)
  p0 = f32[1500,32,128] parameter(0)
  transpose.1 = f32[1500,128,32] transpose(p0), dimensions={0,2,1}
  ROOT reduce.1 = f32[1500,32] reduce(transpose.1, c), dimensions={1}, to_apply=max
}
"""
    )
    e = m.entry.by_name
    t = model.run_times(e["transpose.1"], [e["reduce.1"]])
    assert _near(us(t.time_unfused_ns), 105, 10)
    assert _near(us(t.time_fused_ns), 514, 10)


def test_fusing_transpose_multi_output_fusion_into_reduce_is_slow():
    m, model = _model(
        "HloModule testmodule\n"
        + _MAX
        + """
transpose_fusion {
  param0 = f32[1500,32,128] parameter(0)
  transpose.1 = f32[1500,128,32] transpose(param0), dimensions={0,2,1}
  ROOT res = (f32[1500,128,32]) tuple(transpose.1)
}

ENTRY fusion {
  c = f32[] constant(-inf)
  p0 = f32[1500,32,128] parameter(0)
  fusion = (f32[1500,128,32]) fusion(p0), kind=kInput, calls=transpose_fusion
  gte = f32[1500,128,32] get-tuple-element(fusion), index=0
  ROOT reduce.1 = f32[1500,32] reduce(gte, c), dimensions={1}, to_apply=max
}
"""
    )
    e = m.entry.by_name
    t = model.run_times(e["fusion"], [e["reduce.1"]])
    assert _near(us(t.time_unfused_ns), 105, 10)
    assert _near(us(t.time_fused_ns), 514, 10)


def test_fusing_non_minor_transpose_into_reduce_is_fast():
    m, model = _model(
        "HloModule testmodule\n"
        + _MAX
        + """
ENTRY fusion {
  c = f32[] constant(-inf)
  p0 = f32[1500,32,128]{1,2,0} parameter(0)
  transpose.1 = f32[1500,128,32]{2,0,1} transpose(p0), dimensions={0,2,1}
  ROOT reduce.1 = f32[1500,32] reduce(transpose.1, c), dimensions={1}, to_apply=max
}
"""
    )
    e = m.entry.by_name
    t = model.run_times(e["transpose.1"], [e["reduce.1"]])
    assert t.time_fused_ns < t.time_unfused_ns


_DUS = (
    "HloModule testmodule\n"
    + _MAX
    + """
fusion.1 {
  p0 = f32[1073741824] parameter(0)
  p1 = f32[1024,1048576] parameter(1)
  p2 = s32[] parameter(2)
  c0 = f32[] constant(0)

  r = f32[1024] reduce(p1, c0), dimensions={1}, to_apply=max
  ROOT dus.1 = f32[1073741824] dynamic-update-slice(p0, r, p2)
}

fusion.2 {
  p0 = f32[1024] parameter(0)
  p1 = f32[1024,1048576] parameter(1)
  p2 = s32[] parameter(2)
  c0 = f32[] constant(0)

  r = f32[1024] reduce(p1, c0), dimensions={1}, to_apply=max
  ROOT dus.1 = f32[1024] dynamic-update-slice(p0, r, p2)
}

ENTRY main {
  p0 = f32[1073741824] parameter(0)
  p1 = f32[1024,1048576] parameter(1)
  p2 = s32[] parameter(2)
  p3 = f32[1024] parameter(3)

  dus1 = f32[1073741824] fusion(p0, p1, p2), kind=kInput, calls=fusion.1
  dus2 = f32[1024] fusion(p3, p1, p2), kind=kInput, calls=fusion.2

  ROOT tuple = (f32[1073741824], f32[1024]) tuple(dus1, dus2)
}
"""
)


def test_dus_scales_with_updates():
    m, model = _model(_DUS)
    root = m.entry.root
    t1 = model.run_times(root.operands[0], [])
    t2 = model.run_times(root.operands[1], [])
    # the DUS scales with its updates: the 4 GiB buffer and the 4 kB one cost the same
    assert _near(us(t1.time_unfused_ns), us(t2.time_unfused_ns), 10)


def test_equal_cost_before_and_after_fusion():
    m, model = _model("""
HloModule m

f1 {
  p0 = f32[4194304] parameter(0)
  p1 = f32[4194304] parameter(1)
  ROOT tmp_3 = f32[4194304] multiply(f32[4194304] p0, f32[4194304] p1)
}

e1 {
  p0 = f32[4194304] parameter(0)
  p1 = f32[4194304] parameter(1)

  f.1 = f32[4194304] fusion(f32[4194304] p0, f32[4194304] p1), kind=kLoop, calls=f1
  ROOT r.1 = f32[4194304] tanh(f32[4194304] f.1)
}

f2 {
  p0 = f32[4194304] parameter(0)
  p1 = f32[4194304] parameter(1)
  mul = f32[4194304] multiply(f32[4194304] p0, f32[4194304] p1)
  ROOT res = f32[4194304] tanh(f32[4194304] mul)
}

ENTRY e2 {
  p0 = f32[4194304] parameter(0)
  p1 = f32[4194304] parameter(1)

  ROOT f.2 = f32[4194304] fusion(f32[4194304] p0, f32[4194304] p1), kind=kLoop, calls=f2
}
""")
    without_fusion = m.computations["e1"]
    model.analysis.analyze(without_fusion)
    consumer = without_fusion.root
    t1 = model.run_times(consumer.operands[0], [consumer])
    t2 = model.run_times(m.entry.root, [])
    assert t1.time_fused_ns == t2.time_unfused_ns


_ADD = """
add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT add = f32[] add(p0, p1)
}
"""


def test_do_not_fuse_divide_into_small_reduce():
    m, model = _model(
        "HloModule testmodule\n"
        + _ADD
        + """
ENTRY fusion {
  c = f32[] constant(0)
  p0 = f32[3072] parameter(0)
  p1 = f32[] parameter(1)
  reduce = f32[] reduce(p0, c), dimensions={0}, to_apply=add
  ROOT divide = f32[] divide(reduce, p1)
}
"""
    )
    e = m.entry.by_name
    t = model.run_times(e["reduce"], [e["divide"]])
    assert t.time_unfused_ns < t.time_fused_ns


def test_prefer_fusing_expensive_instructions_into_producer():
    m, model = _model(
        "HloModule testmodule\n"
        + _ADD
        + """
fused_computation.0 {
  p0 = f32[4,8,8] parameter(0)
  bc = f32[1,4,1424,8,8] broadcast(p0), dimensions={1,3,4}
  p1 = f32[1,4,1424,8,8] parameter(1)
  ROOT sub = f32[1,4,1424,8,8] subtract(bc, p1)
}

fused_computation.1 {
  p0 = f32[1,4,1424,8,8] parameter(0)
  bc = f32[4,1424,8,8] bitcast(p0)
  c0 = f32[] constant(0)
  ROOT reduce = f32[4,8,8] reduce(bc, c0), to_apply=add, dimensions={1}
}

ENTRY fusion {
  p0 = f32[4,8,8] parameter(0)
  p1 = f32[1,4,1424,8,8] parameter(1)
  fusion.0 = f32[1,4,1424,8,8] fusion(p0, p1), kind=kLoop, calls=fused_computation.0
  exp = f32[1,4,1424,8,8] exponential(fusion.0)
  ROOT fusion.1 = f32[4,8,8] fusion(exp), kind=kInput, calls=fused_computation.1
}
"""
    )
    e = m.entry.by_name
    consumer_side = model.run_times(e["fusion.0"], [e["exp"]])
    producer_side = model.run_times(e["exp"], [e["fusion.1"]])
    exp_consumer_priority = consumer_side.time_unfused_ns - consumer_side.time_fused_ns
    exp_producer_priority = producer_side.time_unfused_ns - producer_side.time_fused_ns
    assert exp_producer_priority < exp_consumer_priority


def test_dont_fuse_expensive_elementwise_into_small_reduce():
    m, model = _model(
        "HloModule testmodule\n"
        + _ADD
        + """
fused_computation.0 {
  p0 = f32[4,256,32] parameter(0)
  tanh = f32[4,256,32] tanh(p0)
  c1 = f32[] constant(72)
  broadcast = f32[4,256, 32] broadcast(c1), dimensions={}
  ROOT mul = f32[4,256,32] multiply(tanh, broadcast)
}

ENTRY fusion {
  p0 = f32[4,256,32] parameter(0)
  fusion = f32[4,256,32] fusion(p0), kind=kLoop, calls=fused_computation.0
  c0 = f32[] constant(0)
  ROOT reduce = f32[4,32] reduce(fusion, c0), to_apply=add, dimensions={1}
}
"""
    )
    e = m.entry.by_name
    t = model.run_times(e["fusion"], [e["reduce"]])
    assert t.time_unfused_ns < t.time_fused_ns


_EXP_ADD = """
HloModule testmodule

ENTRY fusion {
  p0 = f32[32] parameter(0)
  exp = f32[32] exponential(p0)
  ROOT add = f32[32] add(p0, exp)
}
"""


def test_estimate_run_time_for_fusion_infinite_producer_returns_infinite():
    m, model = _model(_EXP_ADD)
    producer, consumer = m.entry.by_name["exp"], m.entry.by_name["add"]
    model.cache[id(producer)] = INFINITE
    consumer_rt = model.instruction(consumer)
    assert model.fused(producer, consumer, INFINITE, consumer_rt) == float("inf")


def test_estimate_run_time_for_fusion_infinite_consumer_returns_infinite():
    m, model = _model(_EXP_ADD)
    producer, consumer = m.entry.by_name["exp"], m.entry.by_name["add"]
    producer_rt = model.instruction(producer)
    assert model.fused(producer, consumer, producer_rt, INFINITE) == float("inf")


def test_estimate_run_time_for_fusion_multi_output_write_returns_correct_time():
    m, model = _model("""
HloModule m

fused_power {
  constant.1 = f32[] constant(2)
  broadcast = f32[4,28672,28672] broadcast(constant.1), dimensions={}
  iota = s32[28672,28672] iota(), iota_dimension=0
  iota.1 = s32[28672,28672] iota(), iota_dimension=1
  compare = pred[28672,28672] compare(iota, iota.1), direction=GE
  broadcast.1 = pred[4,28672,28672] broadcast(compare), dimensions={1,2}
  param_0.3 = f32[4,28672,28672] parameter(0)
  constant.2 = f32[] constant(-1e+30)
  broadcast.2 = f32[4,28672,28672] broadcast(constant.2), dimensions={}
  select = f32[4,28672,28672] select(broadcast.1, param_0.3, broadcast.2)
  param_1.2 = f32[4,28672] parameter(1)
  broadcast.3 = f32[4,28672,28672] broadcast(param_1.2), dimensions={0,1}
  subtract = f32[4,28672,28672] subtract(select, broadcast.3)
  ROOT power = f32[4,28672,28672] power(broadcast, subtract)
}

region.1 {
  param_0.1 = f32[] parameter(0)
  param_1.1 = f32[] parameter(1)
  ROOT add = f32[] add(param_0.1, param_1.1)
}

fused_reduce {
  param_0.2 = f32[4,28672,28672] parameter(0)
  bitcast = f32[4,28672,128,224] bitcast(param_0.2)
  constant = f32[] constant(0)
  ROOT reduce = f32[4,28672,128] reduce(bitcast, constant), dimensions={3}, to_apply=region.1
}

ENTRY entry_computation.1 {
  param_1.3 = f32[4,28672,28672] parameter(1)
  param_0.4 = f32[4,28672] parameter(0)
  loop_power_fusion = f32[4,28672,28672] fusion(param_1.3, param_0.4), kind=kLoop, calls=fused_power
  input_reduce_fusion = f32[4,28672,128] fusion(loop_power_fusion), kind=kInput, calls=fused_reduce
  ROOT tuple = (f32[4,28672,28672], f32[4,28672,128]) tuple(loop_power_fusion, input_reduce_fusion)
}
""")
    e = m.entry.by_name
    t = model.multi_output_run_times(e["loop_power_fusion"], e["input_reduce_fusion"])
    assert _near(int(t.time_unfused_ns / 1e6), 162, 1)  # absl::ToInt64Milliseconds
    assert _near(int(t.time_fused_ns / 1e6), 145, 1)


@pytest.mark.parametrize("size", [1024, 1 << 20, 1 << 30])
def test_dus_time_does_not_depend_on_the_aliased_buffer(size):
    """DusScalesWithUpdates on any buffer: a 1024-element update costs the same whatever the
    size of the buffer it is written into in place."""
    text = _DUS.replace("f32[1073741824]", f"f32[{size}]")
    m, model = _model(text)
    small = _model(_DUS.replace("f32[1073741824]", "f32[1024]"))
    t = model.run_times(m.entry.root.operands[0], []).time_unfused_ns
    t_small = small[1].run_times(small[0].entry.root.operands[0], []).time_unfused_ns
    assert t == t_small
