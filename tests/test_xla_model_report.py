"""``hloidx cost --model xla``: non-Triton kernels by XLA's classic ``GpuPerformanceModel`` over
``GpuHloCostAnalysis`` (what XLA's SoL latency estimator and priority fusion use), Triton
fusions by XLA's indexing model; each row names the model that timed it and XLA's quirks.
Expected figures are derived by hand from the bytes XLA counts and the RTX A6000's DRAM
bandwidth (768.096 GB/s)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hloidx.cli.main import cli
from hloidx.perf.report import estimate_module
from hloidx.perf.xla_kernel_cost import TIMED_CLASSIC, TIMED_INDEXING

BANDWIDTH = 768_096_000_000  # bytes/s, XLA's RTXA6000DeviceInfo
UPDATE_BYTES = 4096 * 4096 * 4

_ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""

IN_PLACE = (
    "HloModule inplace, is_scheduled=true\n"
    + _ADD
    + """
dus_body {
  p0 = f32[64,4096,4096] parameter(0)
  p1 = f32[1,4096,4096] parameter(1)
  p2 = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[64,4096,4096] dynamic-update-slice(p0, p1, p2, z, z)
}

bitcast_dus_body {
  p0 = f32[64,4096,4096] parameter(0)
  p1 = f32[1,4096,4096] parameter(1)
  p2 = s32[] parameter(2)
  z = s32[] constant(0)
  d = f32[64,4096,4096] dynamic-update-slice(p0, p1, p2, z, z)
  ROOT b = f32[64,16777216] bitcast(d)
}

scatter_body {
  op = f32[1000000,256] parameter(0)
  idx = s32[1024,1] parameter(1)
  upd = f32[1024,256] parameter(2)
  ROOT s = f32[1000000,256] scatter(op, idx, upd), update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    to_apply=add
}

ENTRY e {
  big = f32[64,4096,4096] parameter(0)
  upd = f32[1,4096,4096] parameter(1)
  i = s32[] parameter(2)
  table = f32[1000000,256] parameter(3)
  idx = s32[1024,1] parameter(4)
  rows = f32[1024,256] parameter(5)
  dus = f32[64,4096,4096] fusion(big, upd, i), kind=kLoop, calls=dus_body
  bdus = f32[64,16777216] fusion(big, upd, i), kind=kLoop, calls=bitcast_dus_body
  sc = f32[1000000,256] fusion(table, idx, rows), kind=kInput, calls=scatter_body
  ROOT t = (f32[64,4096,4096], f32[64,16777216], f32[1000000,256]) tuple(dus, bdus, sc)
}
"""
)


def _rows(text: str) -> dict:
    report = estimate_module(text, "rtx-a6000", "xla")
    return {k.name: k for k in report.kernels}


def test_dus_fusion_is_timed_in_place_by_the_classic_model():
    dus = _rows(IN_PLACE)["dus"]
    assert dus.timed_by == TIMED_CLASSIC
    assert dus.why.startswith(TIMED_CLASSIC)
    # the update and the s32 index are read, the aliased 4 GiB buffer is not
    assert dus.bytes_read == UPDATE_BYTES + 4
    assert dus.bytes_written == UPDATE_BYTES
    # launched over the update: 16,777,216 elements, 128 a block
    assert (dus.blocks, dus.threads_per_block) == (131072, 128)
    # no flops; the update in and out at the DRAM bandwidth (+4 bytes of index)
    expected_ns = (2 * UPDATE_BYTES + 4) / BANDWIDTH * 1e9
    assert abs(dus.exec_time_ns - expected_ns) < 1.0
    assert not any("quirk" in n for n in dus.notes)


def test_unfused_dus_is_in_place_too():
    text = """HloModule before_optimizations

ENTRY e {
  big = f32[64,4096,4096] parameter(0)
  upd = f32[1,4096,4096] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[64,4096,4096] dynamic-update-slice(big, upd, i, z, z)
}
"""
    (row,) = _rows(text).values()
    assert row.timed_by == TIMED_CLASSIC
    assert row.bytes_read == UPDATE_BYTES + 3 * 4
    assert row.bytes_written == UPDATE_BYTES
    expected_ns = (2 * UPDATE_BYTES + 12) / BANDWIDTH * 1e9
    assert abs(row.exec_time_ns - expected_ns) < 1.0


def test_bitcast_of_dus_root_is_xla_quirk_named_in_its_row():
    bdus = _rows(IN_PLACE)["bdus"]
    whole = 64 * UPDATE_BYTES
    # XLA counts the whole buffer written, and the buffer read but for the updated slice
    assert bdus.bytes_written == whole
    assert bdus.bytes_read == whole - UPDATE_BYTES + UPDATE_BYTES + 4
    assert any("bitcast(dynamic-update-slice)" in n and "quirk" in n for n in bdus.notes)
    assert "XLA's quirk: a bitcast(dynamic-update-slice) root" in bdus.why


def test_scatter_fusion_at_full_operand_size_is_xla_quirk_named_in_its_row():
    sc = _rows(IN_PLACE)["sc"]
    operand = 1_000_000 * 256 * 4
    assert sc.bytes_written == operand
    assert sc.bytes_read == operand + 1024 * 4 + 1024 * 256 * 4
    assert any("scatter fusion" in n and "quirk" in n for n in sc.notes)
    assert "XLA's quirk: a scatter fusion" in sc.why
    # XLA's scatter emitter launches over the updates
    assert sc.blocks * sc.threads_per_block == 1024 * 256


TRITON = """HloModule triton

triton_softmax {
  p = f32[8,256] parameter(0)
  ROOT e = f32[8,256] exponential(p)
}

loop_body {
  p = f32[8,256] parameter(0)
  ROOT n = f32[8,256] negate(p)
}

ENTRY main {
  x = f32[8,256] parameter(0)
  soft = f32[8,256] fusion(x), kind=kCustom, calls=triton_softmax, backend_config={"fusion_backend_config":{"kind":"__triton","block_level_fusion_config":{"output_tiles":[{"sizes":["1","256"]}],"num_warps":"4"}}}
  ROOT neg = f32[8,256] fusion(soft), kind=kLoop, calls=loop_body
}
"""


def test_each_row_names_the_xla_model_that_timed_it():
    rows = _rows(TRITON)
    assert rows["soft"].timed_by == TIMED_INDEXING
    assert rows["neg"].timed_by == TIMED_CLASSIC
    # the default model names no XLA model
    default = estimate_module(TRITON, "rtx-a6000", "hloidx")
    assert all(k.timed_by == "" for k in default.kernels)


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, ["cost", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_formats_and_step_with_model_xla(tmp_path):
    path = tmp_path / "triton.hlo"
    path.write_text(TRITON)
    doc = json.loads(_cli(str(path), "--model", "xla", "--format", "json"))
    timed = {k["name"]: k.get("timed_by") for k in doc["kernels"]}
    assert timed == {"soft": TIMED_INDEXING, "neg": TIMED_CLASSIC}
    kernels_ns = sum(k["exec_time_ns"] for k in doc["kernels"])
    # the step: the two kernels plus XLA's 1 us launch overhead each
    assert abs(doc["step"]["time_ns"] - (kernels_ns + 2 * 1000.0)) < 0.01
    text = _cli(str(path), "--model", "xla")
    assert TIMED_CLASSIC in text
    assert TIMED_INDEXING in text
    html = _cli(str(path), "--model", "xla", "--format", "html")
    assert "GpuPerformanceModel (classic)" in html
    assert "indexing model (Triton)" in html


def _dus_module(rows: int) -> str:
    return f"""HloModule dus

body {{
  p0 = f32[{rows},64] parameter(0)
  p1 = f32[1,64] parameter(1)
  p2 = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[{rows},64] dynamic-update-slice(p0, p1, p2, z)
}}

ENTRY e {{
  buffer = f32[{rows},64] parameter(0)
  update = f32[1,64] parameter(1)
  i = s32[] parameter(2)
  ROOT f = f32[{rows},64] fusion(buffer, update, i), kind=kLoop, calls=body
}}
"""


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(min_value=1, max_value=1 << 24))
def test_in_place_dus_cost_does_not_depend_on_the_aliased_buffer(rows):
    """XLA's DusScalesWithUpdates as a property: the bytes and time of an in-place DUS are the
    update's, whatever the size of the buffer it writes into."""
    (row,) = _rows(_dus_module(rows)).values()
    assert row.bytes_read == 64 * 4 + 4
    assert row.bytes_written == 64 * 4
    (one,) = _rows(_dus_module(1)).values()
    assert row.exec_time_ns == one.exec_time_ns


def _scatter_module(rows: int) -> str:
    return f"""HloModule scatter

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY e {{
  table = f32[{rows},64] parameter(0)
  idx = s32[16,1] parameter(1)
  upd = f32[16,64] parameter(2)
  ROOT s = f32[{rows},64] scatter(table, idx, upd), update_window_dims={{1}},
    inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1,
    to_apply=add
}}
"""


@settings(max_examples=10, deadline=None)
@given(rows=st.integers(min_value=16, max_value=1 << 24))
def test_unfused_scatter_bytes_do_not_depend_on_the_aliased_operand(rows):
    """HloCostAnalysis::HandleScatter: the updates read, the rows they update read and
    written, the indices read; the operand's size does not enter."""
    (row,) = _rows(_scatter_module(rows)).values()
    updates, indices = 16 * 64 * 4, 16 * 4
    assert row.bytes_read == 2 * updates + indices
    assert row.bytes_written == updates
