"""Issue 42: every kernel's bytes as the GPU moves them (the default model, ``--model hloidx``).

Each case of the issue's table is a small module XLA's own parser accepts; each expectation is
physical and derived here by hand: the bytes the kernel must move over the device's DRAM
bandwidth, plus the default model's measured kernel floor and gap between kernels (facts: XLA's ``InPlaceDynamicUpdateSliceFusion``,
``ScatterFusion``, ``DynamicSliceFusion``, ``DynamicMemcpyFusion``, copy insertion).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from in_place_modules import ns as _ns
from in_place_modules import report as _report

from hloidx.perf.backend_config import lenient_json
from hloidx.perf.op_profiles import clock_cycles
from hloidx.perf.report import estimate_module

ADD = "b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)"
# the default model's time per kernel beside its bytes: the measured kernel floor and gap between
# kernels (hloidx/perf/data/measured_calibration.json), not XLA's 1 us launch overhead
PER_KERNEL_NS = 1874.0 + 1152.0
F32, BF16, S32 = 4, 2, 4


def _row(report, name: str):
    return next(k for k in report.kernels if k.name == name)


DUS_FUSED = """HloModule dus_fused, input_output_alias={ {}: (0, {}, may-alias) }

fused_dus {
  p0 = f32[%(n)d,4096,4096] parameter(0)
  p1 = f32[1,4096,4096] parameter(1)
  p2 = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[%(n)d,4096,4096] dynamic-update-slice(p0, p1, p2, z, z)
}

ENTRY e {
  stack = f32[%(n)d,4096,4096] parameter(0)
  layer = f32[1,4096,4096] parameter(1)
  i = s32[] parameter(2)
  ROOT f = f32[%(n)d,4096,4096] fusion(stack, layer, i), kind=kLoop, calls=fused_dus
}
"""

DUS_UNFUSED = """HloModule dus_unfused, input_output_alias={ {}: (0, {}, may-alias) }

ENTRY e {
  stack = f32[64,4096,4096] parameter(0)
  layer = f32[1,4096,4096] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[64,4096,4096] dynamic-update-slice(stack, layer, i, z, z)
}
"""


def test_a_dus_fusion_writes_its_update_in_place() -> None:
    """Table row 1: 67 MB in, 67 MB out (the update, and the one s32 start index outside the
    fusion), ~40 µs; the 4.3 GB stack is neither read nor rewritten."""
    report = _report(DUS_FUSED % {"n": 64})
    row = _row(report, "f")
    update = 4096 * 4096 * F32
    assert row.bytes_read == update + S32
    assert row.bytes_written == update
    assert row.blocks * row.threads_per_block >= 4096 * 4096  # one thread per update element
    assert row.blocks * row.threads_per_block < 2 * 4096 * 4096
    expected = _ns(2 * update + S32) + PER_KERNEL_NS
    assert report.total_time_ns == pytest.approx(expected, rel=1e-3)
    assert report.total_time_ns < 50_000


def test_an_unfused_dus_is_in_place_too() -> None:
    """Table row 2: the same op before optimization; its start indices (the s32 parameter
    and the constant 0 written twice) are read once each."""
    report = _report(DUS_UNFUSED)
    row = _row(report, "d")
    update = 4096 * 4096 * F32
    assert row.bytes_written == update
    assert row.bytes_read == update + 2 * S32
    assert report.total_time_ns == pytest.approx(
        _ns(2 * update + 2 * S32) + PER_KERNEL_NS, rel=1e-3
    )


SCATTER = """HloModule scatter_fused, input_output_alias={ {}: (0, {}, may-alias) }

add {
  a = f32[] parameter(0)
  %(combine)s
}

fused_scatter {
  p0 = f32[%(n)d,256] parameter(0)
  p1 = s32[1024,1] parameter(1)
  p2 = f32[1024,256] parameter(2)
  ROOT s = f32[%(n)d,256] scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}

ENTRY e {
  table = f32[%(n)d,256] parameter(0)
  idx = s32[1024,1] parameter(1)
  upd = f32[1024,256] parameter(2)
  ROOT f = f32[%(n)d,256] fusion(table, idx, upd), kind=kInput, calls=fused_scatter
}
"""


def test_a_scatter_fusion_moves_the_updated_rows_only() -> None:
    """Table row 3: an embedding gradient. Threads walk the 1024x256 updates; each adds into
    the row it lands on (read, added, written back): updates 1 MB + indices 4 kB + rows read
    1 MB in, rows 1 MB out: ~3 MB, not the 1 GB table."""
    report = _report(SCATTER % {"n": 1_000_000, "combine": ADD})
    row = _row(report, "f")
    updates = 1024 * 256 * F32
    indices = 1024 * S32
    assert row.bytes_read == updates + indices + updates
    assert row.bytes_written == updates
    assert row.blocks * row.threads_per_block == 1024 * 256
    memory = _ns(2 * updates + indices) + _ns(updates)
    assert report.total_time_ns == pytest.approx(memory + PER_KERNEL_NS, rel=0.01)
    # one f32 add per update element (XLA's flop count of the combiner)
    assert row.flops == 1024 * 256 * clock_cycles("sm_90", "add", "f32")


def test_an_assigning_scatter_does_not_read_the_rows_it_overwrites() -> None:
    row = _row(_report(SCATTER % {"n": 5000, "combine": "ROOT b = f32[] parameter(1)"}), "f")
    assert row.bytes_read == 1024 * 256 * F32 + 1024 * S32


def test_a_scatter_reason_quotes_only_real_amounts_of_data() -> None:
    """Table row 8: no reason may quote XLA's iteration space over runtime index values."""
    report = _report(SCATTER % {"n": 1_000_000, "combine": ADD})
    why = _row(report, "f").why
    assert "1048576000000" not in why
    module_bytes = 1_000_000 * 256 * F32 * 2 + 1024 * 256 * F32 + 1024 * S32
    for value, unit in re.findall(r"([\d.]+) (MB|kB|GB)", why):
        scale = {"kB": 1e3, "MB": 1e6, "GB": 1e9}[unit]
        assert float(value) * scale <= module_bytes


GATHER = """HloModule xent

fused_gather {
  logits = f32[512,32000] parameter(0)
  lse = f32[512] parameter(1)
  idx = s32[512,2] parameter(2)
  b = f32[512,32000] broadcast(lse), dimensions={0}
  sub = f32[512,32000] subtract(logits, b)
  ROOT g = f32[512] gather(sub, idx), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
}

ENTRY e {
  logits = f32[512,32000] parameter(0)
  lse = f32[512] parameter(1)
  idx = s32[512,2] parameter(2)
  ROOT f = f32[512] fusion(logits, lse, idx), kind=kLoop, calls=fused_gather
}
"""


def test_a_gather_of_a_subtraction_computes_only_its_outputs() -> None:
    """Table row 4: take_along_axis(log_softmax): 512 outputs, 512 subtractions, each reading
    one logit and one lse (and two s32 indices): a few µs at most."""
    report = _report(GATHER)
    row = _row(report, "f")
    assert row.flops == 512 * clock_cycles("sm_90", "subtract", "f32")
    assert row.bytes_read == 512 * F32 + 512 * F32 + 512 * 2 * S32
    assert row.bytes_written == 512 * F32
    assert report.total_time_ns < PER_KERNEL_NS + 1000
    assert "33554" not in row.why  # XLA's iteration space is no amount of data


GEMM_CONFIG = (
    '{"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":'
    '{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],'
    '"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"alpha_imag":0,'
    '"precision_config":{"operand_precision":["DEFAULT","DEFAULT"]},"epilogue":"DEFAULT"}}'
)
DYNAMIC_SLICE_FUSION = (
    """HloModule dsf

dynamic-slice-fusion {
  w = bf16[32,4096,4096] parameter(0)
  i = s32[] parameter(1)
  z = s32[] parameter(2)
  x = bf16[1024,4096] parameter(3)
  ds = bf16[1,4096,4096] dynamic-slice(w, i, z, z), dynamic_slice_sizes={1,4096,4096}
  b = bf16[4096,4096] bitcast(ds)
  ROOT cc = bf16[1024,4096] custom-call(x, b), custom_call_target="__cublas$gemm", backend_config=CONFIG
}

ENTRY e {
  w = bf16[32,4096,4096] parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  x = bf16[1024,4096] parameter(2)
  ROOT f = bf16[1024,4096] fusion(w, i, z, x), kind=kCustom, calls=dynamic-slice-fusion, backend_config={"fusion_backend_config":{"kind":"__custom_fusion","custom_fusion_config":{"name":"dynamic_address_computation"}}}
}
"""
).replace("CONFIG", GEMM_CONFIG)
UNFUSED_GEMM = """HloModule g
ENTRY e {
  x = bf16[1024,4096] parameter(0)
  b = bf16[4096,4096] parameter(1)
  ROOT cc = bf16[1024,4096] custom-call(x, b), custom_call_target="__cublas$gemm", backend_config=CONFIG
}
""".replace("CONFIG", GEMM_CONFIG)


def test_a_dynamic_slice_fusion_is_its_gemm_on_the_slice() -> None:
    """Table row 5: cuBLAS on one layer of stacked weights takes the time of the same GEMM
    unfused, and reads the layer (32 MB), not the 1 GB stack."""
    fused = _row(_report(DYNAMIC_SLICE_FUSION), "f")
    alone = _row(_report(UNFUSED_GEMM), "cc")
    assert fused.exec_time_ns == pytest.approx(alone.exec_time_ns)
    layer, x = 4096 * 4096 * BF16, 1024 * 4096 * BF16
    assert fused.bytes_read == layer + x + 2 * S32
    assert fused.bytes_written == 1024 * 4096 * BF16
    assert fused.flops == 2 * 1024 * 4096 * 4096


YNN = """HloModule cpu_library

fused_dot {
  a = f32[256,256] parameter(0)
  b = f32[256,512] parameter(1)
  ROOT d = f32[256,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY e {
  a = f32[256,256] parameter(0)
  b = f32[256,512] parameter(1)
  ROOT f = f32[256,512] fusion(a, b), kind=kCustom, calls=fused_dot, backend_config={"fusion_config":{"kind":"__KIND"},"outer_dimension_partitions":[]}
}
"""


@pytest.mark.parametrize("kind", ["ynn_fusion", "onednn_fusion"])
def test_a_cpu_library_fusion_is_the_matmul_once(kind: str) -> None:
    """Table row 6: the library's matmul once (2 flops per multiply-add), each operand read
    once, counted the same way."""
    row = _row(_report(YNN.replace("KIND", kind)), "f")
    assert row.flops == 2 * 256 * 512 * 256
    assert [o.bytes_read for o in row.operands] == [256 * 256 * F32, 256 * 512 * F32]
    assert row.bytes_written == 256 * 512 * F32


TRITON = """HloModule t

triton_gemm {
  a = bf16[1024,4096] parameter(0)
  b = bf16[4096,4096] parameter(1)
  ROOT d = bf16[1024,4096] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY e {
  a = bf16[1024,4096] parameter(0)
  b = bf16[4096,4096] parameter(1)
  ROOT f = bf16[1024,4096] fusion(a, b), kind=kCustom, calls=triton_gemm, backend_config={"fusion_backend_config":{"kind":"__triton_gemm","triton_gemm_config":{"block_m":"128","block_n":"128","block_k":"64","split_k":"1","num_stages":"3","num_warps":"8","num_ctas":"1"END}}}
}
"""


def test_a_triton_gemm_config_with_a_trailing_comma_is_read_as_xla_reads_it() -> None:
    """Table row 7: the trailing comma changes nothing: the GEMM's table time, as unfused."""
    comma = _row(_report(TRITON.replace("END", ",")), "f")
    plain = _row(_report(TRITON.replace("END", "")), "f")
    alone = _row(_report(UNFUSED_GEMM), "cc")
    assert comma.exec_time_ns == pytest.approx(plain.exec_time_ns)
    assert comma.exec_time_ns == pytest.approx(alone.exec_time_ns)
    assert "measured GEMM table" in comma.emitter


def test_an_unreadable_backend_config_says_so_in_its_row() -> None:
    text = TRITON.replace('"num_ctas":"1"END', '"num_ctas":"1" "x":1')
    row = _row(estimate_module(text, "h100"), "f")
    assert "backend_config is not JSON" in row.why


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a":[1,2,],}', {"a": [1, 2]}),
        ('{ "a" : { "b" : "x,}" , } }', {"a": {"b": "x,}"}}),
        ('{"a":"\\",]"}', {"a": '",]'}),
        ("{}", {}),
    ],
)
def test_lenient_json_drops_only_trailing_commas(text: str, value: object) -> None:
    assert lenient_json(text) == value


COPY_FIRST = """HloModule dus_copy

ENTRY e {
  stack = f32[64,256,256] parameter(0)
  layer = f32[1,256,256] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  d = f32[64,256,256] dynamic-update-slice(stack, layer, i, z, z)
  ROOT t = (f32[64,256,256], f32[64,256,256]) tuple(d, stack)
}
"""


def test_a_base_xla_must_keep_is_copied_first_in_a_row_of_its_own() -> None:
    """The stack is an entry parameter the module does not donate, and is returned too:
    copy insertion copies it (read and write 16 MB) before the DUS updates the copy."""
    report = _report(COPY_FIRST)
    names = [k.name for k in report.kernels]
    assert names == ["copy.stack", "d"]
    stack = 64 * 256 * 256 * F32
    copy = _row(report, "copy.stack")
    assert (copy.bytes_read, copy.bytes_written) == (stack, stack)
    assert _row(report, "d").bytes_written == 256 * 256 * F32


NOT_IN_PLACE = """HloModule dus_loop, input_output_alias={ {}: (0, {}, may-alias) }

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused {
  p0 = f32[64,256] parameter(0)
  p1 = f32[1,256] parameter(1)
  p2 = s32[] parameter(2)
  z = s32[] constant(0)
  zero = f32[] constant(0)
  total = f32[] reduce(p0, zero), dimensions={0,1}, to_apply=add
  bt = f32[1,256] broadcast(total), dimensions={}
  u = f32[1,256] add(p1, bt)
  ROOT d = f32[64,256] dynamic-update-slice(p0, u, p2, z)
}

ENTRY e {
  s = f32[64,256] parameter(0)
  l = f32[1,256] parameter(1)
  i = s32[] parameter(2)
  ROOT f = f32[64,256] fusion(s, l, i), kind=kLoop, calls=fused
}
"""


def test_a_dus_fusion_that_reads_its_base_otherwise_is_xlas_loop_fusion() -> None:
    """A reduce of the base besides the DUS: XLA cannot update it in place (a race); the loop
    emitter walks the whole output and writes all of it."""
    row = _row(_report(NOT_IN_PLACE), "f")
    assert row.emitter.startswith("loop")
    assert row.bytes_written == 64 * 256 * F32
    assert row.blocks * row.threads_per_block >= 64 * 256 // 4


MEMCPY = """HloModule memcpy, input_output_alias={ {}: (0, {}, may-alias) }

fused {
  p0 = f32[64,1024] parameter(0)
  p1 = f32[1,1024] parameter(1)
  c = s32[] constant(5)
  z = s32[] constant(0)
  ROOT d = f32[64,1024] dynamic-update-slice(p0, p1, c, z)
}

ENTRY e {
  s = f32[64,1024] parameter(0)
  l = f32[1,1024] parameter(1)
  ROOT f = f32[64,1024] fusion(s, l), kind=kLoop, calls=fused
}
"""


def test_a_contiguous_dus_at_constant_offsets_is_a_memcpy() -> None:
    """XLA's DynamicMemcpyFusion: 4 kB copied into the buffer (read once, written once)."""
    report = _report(MEMCPY)
    row = _row(report, "f")
    assert "memcpy" in row.emitter
    assert (row.bytes_read, row.bytes_written) == (1024 * F32, 1024 * F32)
    assert report.total_time_ns == pytest.approx(_ns(2 * 1024 * F32) + PER_KERNEL_NS)


SMALL_DUS = DUS_FUSED.replace("4096,4096", "64,32")


@settings(max_examples=12, deadline=None)
@given(rows=st.integers(2, 5000))
def test_in_place_bytes_do_not_depend_on_the_aliased_buffer(rows: int) -> None:
    """XLA's ``DusScalesWithUpdates``: a DUS's and a scatter's bytes are their updates'."""
    dus = _row(estimate_module(SMALL_DUS % {"n": rows}, "h100"), "f")
    assert (dus.bytes_read, dus.bytes_written) == (64 * 32 * F32 + S32, 64 * 32 * F32)
    scatter = _row(estimate_module(SCATTER % {"n": rows, "combine": ADD}, "h100"), "f")
    updates = 1024 * 256 * F32
    assert scatter.bytes_read == 2 * updates + 1024 * S32
    assert scatter.bytes_written == updates


SLICE_ROOT = """HloModule s

fused {
  p = f32[1048576] parameter(0)
  e = f32[1048576] exponential(p)
  ROOT s = f32[1024] slice(e), slice={[0:1024]}
}

ENTRY e {
  p = f32[1048576] parameter(0)
  ROOT f = f32[1024] fusion(p), kind=kLoop, calls=fused
}
"""


def test_a_sliced_root_computes_and_reads_only_the_slice() -> None:
    """Item 2: 1024 exponentials of the 1024 elements read, not of the whole input."""
    row = _row(_report(SLICE_ROOT), "f")
    assert row.flops == 1024 * clock_cycles("sm_90", "exponential", "f32")
    assert (row.bytes_read, row.bytes_written) == (1024 * F32, 1024 * F32)


KV_CACHE = """HloModule kv, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }

fused {
  k = f32[8,128,64] parameter(0)
  v = f32[8,128,64] parameter(1)
  nk = f32[8,1,64] parameter(2)
  nv = f32[8,1,64] parameter(3)
  i = s32[] parameter(4)
  z = s32[] constant(0)
  dk = f32[8,128,64] dynamic-update-slice(k, nk, z, i, z)
  dv = f32[8,128,64] dynamic-update-slice(v, nv, z, i, z)
  ROOT t = (f32[8,128,64], f32[8,128,64]) tuple(dk, dv)
}

ENTRY e {
  k = f32[8,128,64] parameter(0)
  v = f32[8,128,64] parameter(1)
  nk = f32[8,1,64] parameter(2)
  nv = f32[8,1,64] parameter(3)
  i = s32[] parameter(4)
  ROOT f = (f32[8,128,64], f32[8,128,64]) fusion(k, v, nk, nv, i), kind=kLoop, calls=fused
}
"""


def test_a_kv_cache_update_of_two_outputs_writes_both_updates_in_place() -> None:
    """Both caches updated in place: the two 2 kB updates (and the s32 index) in, both out."""
    report = _report(KV_CACHE)
    row = _row(report, "f")
    update = 8 * 64 * F32
    assert (row.bytes_read, row.bytes_written) == (2 * update + S32, 2 * update)
    assert [k.name for k in report.kernels] == ["f"]  # donated: no copy


CUSTOM_CALL_ALIAS = """HloModule cc%(alias)s

ENTRY e {
  p = f32[1024] parameter(0)
  ROOT c = f32[1024] custom-call(p), custom_call_target="foo", output_to_operand_aliasing={{}: (0, {})}
}
"""


@pytest.mark.parametrize(("alias", "copies"), [("", 1), (", buffer_donor={ (0, {}) }", 0)])
def test_a_custom_call_updating_an_operand_copies_it_unless_donated(alias, copies) -> None:
    report = _report(CUSTOM_CALL_ALIAS % {"alias": alias})
    assert [k.name for k in report.kernels].count("copy.p") == copies
    if copies:
        copy = _row(report, "copy.p")
        assert (copy.bytes_read, copy.bytes_written) == (1024 * F32, 1024 * F32)


READ_FIRST = """HloModule read_first, input_output_alias={ {}: (0, {}, may-alias) }

max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}

ENTRY e {
  stack = s32[64,256] parameter(0)
  layer = s32[1,256] parameter(1)
  low = s32[] constant(-2147483648)
  top = s32[] reduce(stack, low), dimensions={0,1}, to_apply=max
  z = s32[] constant(0)
  ROOT d = s32[64,256] dynamic-update-slice(stack, layer, top, z)
}
"""


def test_a_reader_the_update_depends_on_needs_no_copy() -> None:
    """The reduce reads the stack before the DUS can run (the DUS needs its result): copy
    insertion orders it first and copies nothing."""
    report = _report(READ_FIRST)
    assert not any(k.name.startswith("copy.") for k in report.kernels)
    assert _row(report, "d").bytes_written == 256 * S32
