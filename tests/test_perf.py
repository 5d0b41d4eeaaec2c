"""The cost view: invariants of the formulas and of the hloidx model, and ``hloidx cost``."""

from __future__ import annotations

import json

import paths
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import hloidx
from hloidx.cli.main import cli
from hloidx.perf import compare_reports, estimate_module
from hloidx.perf.devices import COST_DEVICES, cost_device
from hloidx.perf.model import (
    coalescing_utilization_rate,
    padded_size,
    read_time_ns,
    tile_fits_in_registers,
    transaction_utilization,
)
from hloidx.perf.tiled import estimate_tiled

ROOT = paths.ROOT
COST = ROOT / "tests" / "data" / "xla" / "cost"
VIEW = ROOT / "tests" / "data" / "gpu" / "view" / "coalescing.hlo"
DEVICE = cost_device("rtx-a6000")

#: modules whose every kernel the invariants are checked on: XLA's test modules and the corpus
MODULES = [
    *sorted(COST.glob("*.hlo")),
    VIEW,
    ROOT / "tests" / "data" / "corpus" / "transformer_block.opt.hlo",
    ROOT / "tests" / "data" / "corpus" / "mlp_layernorm_gelu.opt.hlo",
    ROOT / "tests" / "data" / "corpus" / "embedding_gather_scatter.opt.hlo",
    ROOT / "tests" / "data" / "corpus" / "cumsum_sort_argmax_topk.opt.hlo",
    ROOT / "tests" / "data" / "corpus" / "rnn_scan.opt.hlo",
    ROOT / "tests" / "data" / "corpus" / "einsum_heavy.opt.hlo",
    ROOT / "tests" / "data" / "corpus" / "cnn_pool_batchnorm.opt.hlo",
    ROOT / "tests" / "data" / "corpus" / "large_resnet12_fwd_bwd.opt.hlo",
]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_hloidx_model_never_reads_more_distinct_bytes_than_the_operand_holds(path) -> None:
    report = estimate_module(path.read_text(), "rtx-a6000", "hloidx")
    for kernel in report.kernels:
        for operand in kernel.operands:
            assert 0 <= operand.bytes_distinct <= operand.size, (kernel.name, operand.name)
            assert operand.bytes_distinct <= operand.bytes_read or operand.bytes_read == 0
        assert kernel.exec_time_ns is None or kernel.exec_time_ns >= 0
        assert kernel.why


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_every_entry_instruction_has_a_row_or_a_reason(path) -> None:
    module = hloidx.parse_hlo(path.read_text())
    report = estimate_module(module, "rtx-a6000", "hloidx")
    named = {k.name for k in report.kernels} | {s.name for s in report.skipped}
    assert {i.name for i in module.entry.instructions} <= named
    assert all(s.reason for s in report.skipped)


@settings(max_examples=200, deadline=None)
@given(
    net=st.integers(0, 10**10),
    extra=st.integers(0, 10**10),
    more=st.integers(1, 10**9),
    blocks=st.integers(1, 10**6),
    rate=st.floats(0.01, 1.0),
    device=st.sampled_from(sorted(COST_DEVICES)),
)
def test_read_time_grows_with_bytes(net, extra, more, blocks, rate, device) -> None:
    d = COST_DEVICES[device]
    total = net + extra
    base = read_time_ns(d, blocks, net, total, rate)
    assert read_time_ns(d, blocks, net, total + more, rate) >= base
    assert read_time_ns(d, blocks, net + more, total + more, rate) >= base


@settings(max_examples=100, deadline=None)
@given(
    nbytes=st.integers(1, 10**10),
    element=st.sampled_from([1, 2, 4, 8]),
    device=st.sampled_from(sorted(COST_DEVICES)),
)
def test_uncoalesced_over_coalesced_is_the_transaction_waste(nbytes, element, device) -> None:
    d = COST_DEVICES[device]
    blocks = 10**6  # enough blocks that the bandwidth is not capped by the launch
    rate = coalescing_utilization_rate(element, d, coalesced=False)
    waste = d.dram_to_l2_transaction_size_bytes / element
    ratio = read_time_ns(d, blocks, nbytes, nbytes, rate) / read_time_ns(
        d, blocks, nbytes, nbytes, 1.0
    )
    assert ratio == pytest.approx(waste)


@settings(max_examples=100, deadline=None)
@given(contiguous=st.integers(1, 10**6))
def test_tile_utilization_is_used_over_fetched_bytes(contiguous) -> None:
    rate = transaction_utilization(contiguous, DEVICE)
    fetched = -(-contiguous // 64) * 64
    assert rate == pytest.approx(contiguous / fetched)
    assert 0 < rate <= 1


_SPILL = hloidx.parse_hlo((COST / "softmax_register_spill.hlo").read_text()).entry.root


@settings(max_examples=40, deadline=None)
@given(rows=st.sampled_from([1, 2, 4, 8, 16]), cols=st.sampled_from([256, 1024, 4096, 16000]))
def test_a_spilling_tiling_never_gets_a_number(rows, cols) -> None:
    cost = estimate_tiled(_SPILL, DEVICE, (rows, cols)).cost
    # the parameter's tile is whole rows (the reduce reads them), the root's is the tile
    spills = not all(
        tile_fits_in_registers(padded_size(t), DEVICE) for t in ((rows, 16000), (rows, cols))
    )
    assert cost.fits is not spills
    assert (cost.exec_time_ns is None) is spills
    if spills:
        assert "spill" in cost.why


_TRANSPOSED_LOOP = """HloModule m
fused {
  p0 = f32[2048,8]{1,0} parameter(0)
  p1 = f32[8,2048]{1,0} parameter(1)
  t = f32[8,2048]{1,0} transpose(p0), dimensions={1,0}
  ROOT a = f32[8,2048]{1,0} add(t, p1)
}
ENTRY e {
  p0 = f32[2048,8]{1,0} parameter(0)
  p1 = f32[8,2048]{1,0} parameter(1)
  ROOT f = f32[8,2048]{1,0} fusion(p0, p1), kind=kLoop, calls=fused
}"""


def test_hloidx_shows_coalesced_where_xla_heuristic_says_not() -> None:
    xla = estimate_module(_TRANSPOSED_LOOP, model="xla").kernels[0]
    ours = estimate_module(_TRANSPOSED_LOOP, model="hloidx").kernels[0]
    assert [o.coalesced for o in xla.operands] == [False, False]
    assert [o.coalesced for o in ours.operands] == [False, True]
    assert "p1: coalesced by its thread maps" in ours.why
    assert ours.operands[1].read_time_ns < xla.operands[1].read_time_ns


def test_hloidx_shows_uncoalesced_where_xla_heuristic_says_coalesced() -> None:
    # operand b of `added` has layout {0,1}: a transpose through the layout, no transpose op
    report = estimate_module(VIEW.read_text(), model="hloidx")
    added = next(k for k in report.kernels if k.name == "added")
    b = next(o for o in added.operands if o.name == "b")
    assert b.xla_coalesced is True
    assert b.coalesced is False
    assert "b: not coalesced by its thread maps" in added.why


def test_hloidx_counts_the_elements_a_gather_really_reads() -> None:
    ours = estimate_module(VIEW.read_text(), model="hloidx")
    (go,) = [k for k in ours.kernels if k.name == "gathered"]
    operand_o = go.operands[0]
    # XLA's indexing model counts the gather's operand over its iteration space
    assert operand_o.xla_bytes_read is not None
    assert operand_o.bytes_read < operand_o.xla_bytes_read
    assert operand_o.bytes_distinct <= operand_o.size
    assert "XLA's iteration space also runs over the runtime index values" in go.why


def test_report_contract() -> None:
    report = estimate_module(VIEW.read_text(), device="h100")
    doc = report.as_dict()
    assert doc["schema_version"] == 1
    assert doc["device"] == "h100"
    assert doc["model"] == "hloidx"
    keys = {
        "name", "opcode", "kind", "emitter", "launch", "flops", "bytes_read", "bytes_written",
        "read_time_ns", "write_time_ns", "compute_time_ns", "exec_time_ns", "bound", "fits",
        "tile_sizes", "num_warps", "operands", "why",
    }  # fmt: skip
    for k in doc["kernels"]:
        assert keys <= set(k)
        assert set(k["launch"]) == {"blocks", "threads_per_block"}
        for o in k["operands"]:
            assert set(o) == {
                "index", "name", "bytes_read", "bytes_distinct", "coalesced", "read_time_ns"
            }  # fmt: skip
    times = sum(k.exec_time_ns for k in report.kernels)
    # plus the measured gap between kernels, 1152 ns (data/measured_calibration.json)
    assert report.total_time_ns == pytest.approx(times + 1152 * len(report.kernels))
    assert str(report).splitlines()[0].startswith("coalescing_examples on h100")


def test_compare_matches_kernels_by_name_and_by_structure() -> None:
    before = estimate_module((COST / "triton_softmax.hlo").read_text())
    after_text = (COST / "triton_softmax.hlo").read_text().replace("triton_softmax =", "sm =")
    after_text = after_text.replace('"sizes":["1","911"]', '"sizes":["4","911"]')
    after = estimate_module(after_text)
    comparison = compare_reports(before, after)
    (change,) = comparison.changes
    assert change.matched_by == "structure"
    assert change.after.tile_sizes == [[4, 911]]
    assert comparison.delta_ns == pytest.approx(after.total_time_ns - before.total_time_ns)


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_cli_cost_text_json_html() -> None:
    text = _run("cost", str(VIEW))
    assert text.exit_code == 0, text.output
    assert "estimated module time" in text.output
    doc = json.loads(_run("cost", str(VIEW), "--format", "json", "--limit", "2").output)
    assert doc["schema_version"] == 1
    assert len(doc["kernels"]) == 2
    html = _run("cost", str(VIEW), "--format", "html").output
    assert html.startswith("<!DOCTYPE html>")
    assert html.count("<svg") == 3  # the step timeline, the time bar, the roofline
    assert "<circle" in html
    assert "<script>" in html


def test_cli_cost_compare() -> None:
    a, b = str(COST / "triton_softmax.hlo"), str(COST / "triton_softmax_best_tiling.hlo")
    result = _run("cost", a, "--compare", b)
    assert result.exit_code == 0, result.output
    assert "triton_softmax  [name]" in result.output
    assert "tiles [[1, 911]] -> [[4, 911]]" in result.output
    doc = json.loads(_run("cost", a, "--compare", b, "--format", "json").output)
    assert doc["schema_version"] == 1
    assert doc["kernels"][0]["before"]["tile_sizes"] == [[1, 911]]
    assert doc["delta_time_ns"] < 0


def test_cli_cost_bad_input_is_one_line_and_exit_2(tmp_path) -> None:
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  ROOT p = f32[4] paramter(0)\n}\n")
    result = _run("cost", str(bad))
    assert result.exit_code == 2
    assert "bad.hlo:3:" in result.output
    assert "Traceback" not in result.output
    result = _run("cost", str(VIEW), "--device", "v200")
    assert result.exit_code == 2
    assert "unknown device" in result.output


def test_cli_tile_ranks_tilings_by_estimated_time() -> None:
    path = str(COST / "triton_softmax.hlo")
    args = ("tile", path, "--instruction", "triton_softmax", "--tile", "auto")
    doc = json.loads(_run(*args, "--device", "rtx-a6000", "--format", "json").output)
    assert doc["ranked_by"].startswith("estimated time")
    assert doc["candidates"][0]["tile_sizes"] == [[4, 911]]
    times = [c["exec_time_ns"] for c in doc["candidates"] if c["exec_time_ns"] is not None]
    assert times == sorted(times)
    one = _run(
        "tile", path, "--instruction", "triton_softmax", "--tile", "16,911", "--device", "h100"
    )
    assert one.exit_code == 0, one.output
    assert "estimate on h100" in one.output
    spill = str(COST / "softmax_register_spill.hlo")
    doc = json.loads(
        _run(
            "tile", spill, "--instruction", "triton_softmax", "--tile", "2,16000",
            "--device", "rtx-a6000", "--format", "json",
        ).output
    )  # fmt: skip
    assert doc["estimate"]["fits"] is False
    assert doc["estimate"]["exec_time_ns"] is None


def test_cli_tile_of_a_variadic_reduce_says_it_has_no_tiling() -> None:
    """A tuple-shaped root (variadic reduce) has no tiling; the ranking says so (it raised an
    IndexError before) and a fixed tile's estimate says why."""
    path = str(paths.SAMPLES / "seed000" / "reduce_variadic.hlo")
    args = ("tile", path, "--instruction", "reduce", "--device", "a100")
    ranked = _run(*args, "--tile", "auto", "--format", "json")
    assert ranked.exit_code == 0, ranked.output
    assert json.loads(ranked.output)["candidates"] == []
    one = _run(*args, "--tile", "1")
    assert one.exit_code == 0, one.output
    assert "a tuple-shaped reduce root is not tiled" in one.output


def test_cli_summary_gains_estimated_time_and_sorts_by_it() -> None:
    doc = json.loads(
        _run("summary", str(VIEW), "--device", "a100", "--sort", "time", "--format", "json").output
    )
    times = [r["estimated_time_ns"] for r in doc["rows"]]
    assert doc["sort"] == "time"
    assert times == sorted(times, reverse=True)
    assert all(t is not None for t in times)
    text = _run("summary", str(VIEW), "--device", "a100").output
    assert "est. time" in text
    assert _run("summary", str(VIEW), "--sort", "time").exit_code == 2


def test_maps_html_report_gains_the_estimated_time_column() -> None:
    from hloidx.pictures.page_data import unpack

    html = _run("maps", str(VIEW), "--format", "html").output
    _, data = unpack(html)  # the page's table travels packed (hloidx.pictures.page_data)
    assert data["header"][-1] == "est. time ns (rtx-a6000, an estimate)"
    report = estimate_module(VIEW.read_text(), "rtx-a6000")
    reduced = next(k for k in report.kernels if k.name == "reduced")
    strings = data["s"]
    cells = [row[-1] for row in data["rows"] if strings[row[0]] == "reduced"]
    assert cells
    for text, value in cells:
        assert strings[text] == f"{reduced.exec_time_ns:.0f}"
        assert value == pytest.approx(reduced.exec_time_ns)


def test_a_while_loop_with_a_known_trip_count_launches_its_body_that_many_times() -> None:
    path = ROOT / "tests" / "data" / "corpus" / "rnn_scan.opt.hlo"
    report = estimate_module(path.read_text())
    body = [k for k in report.kernels if k.name.startswith("while.6/")]
    assert body
    assert {k.launches for k in body if "/condition/" not in k.name} == {10}
    assert {k.launches for k in body if "/condition/" in k.name} == {11}
    total = sum((k.exec_time_ns or 0.0) * k.launches for k in report.kernels)
    launches = sum(k.launches for k in report.kernels)
    assert report.total_time_ns == pytest.approx(total + 1152 * launches)  # the measured gap
    (loop,) = [s for s in report.skipped if s.name == "while.6"]
    assert "10 trips" in loop.reason


def test_html_page_svgs_are_well_formed_and_escape_names() -> None:
    import re
    import xml.etree.ElementTree as ET

    from hloidx.render.cost_html import report_html

    report = estimate_module(VIEW.read_text())
    report.kernels[0].why += " <b>&"
    page = report_html(report)
    svgs = re.findall(r"<svg.*?</svg>", page, re.DOTALL)
    assert len(svgs) == 3  # the step timeline, the time bar, the roofline
    for svg in svgs:
        ET.fromstring(svg)  # well-formed XML: every name and tooltip escaped
    assert "&lt;b&gt;&amp;" in page
    assert "<b>&" not in page
    circles = re.findall(r"<circle", svgs[2])
    assert len(circles) == sum(1 for k in report.kernels if k.flops and k.exec_time_ns)


_MIX = """HloModule mix
ENTRY e {
  p = f32[64,128]{1,0} parameter(0)
  i = s32[10,1] parameter(1)
  t = f32[128,64]{1,0} transpose(p), dimensions={1,0}
  cp = f32[64,128]{0,1} copy(p)
  g = f32[10,128]{1,0} gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}
  ROOT out = (f32[128,64]{1,0}, f32[64,128]{0,1}, f32[10,128]{1,0}) tuple(t, cp, g)
}"""

ORACLE_CASES = [
    ((COST / "broadcast_elementwise.hlo").read_text(), "multiply", None),
    ((COST / "reduce.hlo").read_text(), "reduce", {1: 0.0}),
    (_TRANSPOSED_LOOP, "f", None),
    (VIEW.read_text(), "added", None),
    (_MIX, "t", None),
    (_MIX, "cp", None),
    (_MIX, "g", None),
]


@pytest.mark.parametrize(("text", "name", "values"), ORACLE_CASES, ids=lambda v: str(v)[:12])
def test_hloidx_bytes_are_what_the_provenance_interpreter_reads(text, name, values) -> None:
    """Bytes read (pairs of output element and operand element) and distinct bytes against
    hloidx's provenance interpreter, which never uses maps: equal where the maps are exact,
    never fewer distinct bytes where runtime offsets make them a bound."""
    import numpy as np

    from hloidx.check.interpreter import oracle_relation, reads
    from hloidx.hlo.element_types import element_bytes
    from hloidx.perf.kernels import find_kernels

    module = hloidx.parse_hlo(text)
    report = estimate_module(module, "rtx-a6000", "hloidx")
    kernel = next(k for k in find_kernels(module)[0] if k.name == name)
    cost = next(k for k in report.kernels if k.name == name)
    data = None if values is None else {j: np.asarray(v) for j, v in values.items()}
    evaluation = reads(kernel.fusion, operand_values=data)
    for o in cost.operands:
        relation = oracle_relation(kernel.fusion, o.index, evaluation=evaluation)
        eb = element_bytes(kernel.fusion.operands[o.index].shape.element_type)
        distinct = len({source for _, source in relation}) * eb
        if "(exact)" in o.counted:
            assert o.bytes_distinct == distinct, o.name
            assert o.bytes_read == len(relation) * eb, o.name
        else:
            assert distinct <= o.bytes_distinct <= o.size, o.name


def test_a_call_is_inlined_its_kernels_are_rows() -> None:
    report = estimate_module(
        hloidx.parse_hlo(
            """HloModule m
f {
  x = f32[8,16] parameter(0)
  ROOT e = f32[8,16] exponential(x)
}
ENTRY main {
  p = f32[8,16] parameter(0)
  ROOT c = f32[8,16] call(p), to_apply=f
}"""
        )
    )
    assert [k.name for k in report.kernels] == ["c/e"]
    assert report.kernels[0].launches == 1
    (call,) = [s for s in report.skipped if s.name == "c"]
    assert "inlines" in call.reason
