"""Readable maps (issue 45): variables named by what they index, as metadata beside the maps.

Expected names and maps are written by hand from each op's semantics (XLA's operation
semantics), never copied from hloidx's output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.hlo.analysis import analyze
from hloidx.hlo.role_names import name_module
from hloidx.hlo.syntax import parse_hlo
from hloidx.maps.printer import format_map
from hloidx.maps.syntax import parse_map
from hloidx.maps.var_names import VarNames, is_role_name, named, plain

ADD = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""

OPS = (
    "HloModule ops\n"
    + ADD
    + """
fused {
  p0 = f32[4,16,8] parameter(0)
  p1 = f32[4,16,6] parameter(1)
  d = f32[4,8,6] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
  t = f32[8,4,6] transpose(d), dimensions={1,0,2}
  ROOT r = f32[8,24] reshape(t)
}

ENTRY e {
  lhs = f32[2,5,3] parameter(0)
  rhs = f32[2,4,5] parameter(1)
  dot = f32[2,3,4] dot(lhs, rhs), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={2}
  tr = f32[4,2,3] transpose(dot), dimensions={2,0,1}
  split = f32[4,2,3,1] reshape(tr)
  ex = f32[4,2,3] exponential(tr)
  bc = f32[4,7,2,3] broadcast(ex), dimensions={0,2,3}
  zero = f32[] constant(0)
  red = f32[2,3] reduce(bc, zero), dimensions={0,1}, to_apply=add
  rw = f32[2,2] reduce-window(red, zero), window={size=1x2}, to_apply=add
  img = f32[1,3,8,8] parameter(2)
  ker = f32[5,3,3,3] parameter(3)
  conv = f32[1,5,6,6] convolution(img, ker), window={size=3x3}, dim_labels=bf01_oi01->bf01
  src = f32[64] parameter(4)
  of1 = s32[] parameter(5)
  ds = f32[16] dynamic-slice(src, of1), dynamic_slice_sizes={16}
  a = f32[4,16,8] parameter(6)
  b = f32[4,16,6] parameter(7)
  f = f32[8,24] fusion(a, b), kind=kLoop, calls=fused
  ROOT out = (f32[4,2,3,1], f32[2,2], f32[1,5,6,6], f32[16], f32[8,24]) tuple(split, rw, conv, ds, f)
}
"""
)


@pytest.fixture(scope="module")
def analyses():
    plain_analysis = analyze(parse_hlo(OPS))
    return plain_analysis, name_module(plain_analysis)


def _operand(analysis, instr: str, index: int):
    ins = next(i for i in analysis.instructions if i.name == instr)
    return ins.operands[index]


def _text(analysis, instr: str, index: int) -> str:
    return format_map(_operand(analysis, instr, index).output_to_input[0])


@pytest.mark.parametrize(
    ("instr", "index"),
    [
        ("dot", 0),
        ("dot", 1),
        ("tr", 0),
        ("split", 0),
        ("ex", 0),
        ("bc", 0),
        ("red", 0),
        ("red", 1),
        ("rw", 0),
        ("conv", 0),
        ("conv", 1),
        ("ds", 0),
        ("f", 0),
        ("f", 1),
    ],
)
def test_renamed_back_by_position_is_the_plain_map(analyses, instr, index):
    plain_analysis, named_analysis = analyses
    before, after = _operand(plain_analysis, instr, index), _operand(named_analysis, instr, index)
    for direction in ("output_to_input", "input_to_output"):
        for m, n in zip(getattr(before, direction), getattr(after, direction), strict=True):
            assert plain(n) == m
            assert format_map(plain(n)) == format_map(m)  # character for character
            assert hash(plain(n)) == hash(m)
    # the analysis itself is untouched: its maps carry no names
    assert all(not v.name for m in before.output_to_input for v in m.all_vars())


def test_dot_roles_from_dimension_numbers(analyses):
    # lhs [b=2, k=5, m=3], rhs [b=2, n=4, k=5]; output [b, m, n]
    _, named_analysis = analyses
    assert _text(named_analysis, "dot", 0) == (
        "(b, m, n)[k] -> (b, k, m), domain: b in [0, 1], m in [0, 2], n in [0, 3], k in [0, 4]"
    )
    assert _text(named_analysis, "dot", 1) == (
        "(b, m, n)[k] -> (b, n, k), domain: b in [0, 1], m in [0, 2], n in [0, 3], k in [0, 4]"
    )
    roles = _operand(named_analysis, "dot", 0).map_names[0][0]
    assert roles.dim_roles == ("batch", "lhs free", "rhs free")
    assert roles.range_roles == ("contracting",)
    # input to output: lhs element (b, k, m) is used by out (b, m, n) for every rhs-free n
    i2o = format_map(_operand(named_analysis, "dot", 0).input_to_output[0])
    assert i2o.startswith("(d0, d1, d2)[n] -> (d0, d2, n), domain:")
    i2o_rhs = format_map(_operand(named_analysis, "dot", 1).input_to_output[0])
    assert i2o_rhs.startswith("(d0, d1, d2)[m] -> (d0, m, d1), domain:")


def test_names_carried_through_transpose_reshape_and_elementwise(analyses):
    _, named_analysis = analyses
    # tr[n, b, m] = dot[b, m, n]
    assert _text(named_analysis, "tr", 0).startswith("(n, b, m) -> (b, m, n)")
    # a trailing dim of size 1 stays plain
    assert _text(named_analysis, "split", 0).startswith("(n, b, m, d3) -> (n, b, m)")
    assert _text(named_analysis, "ex", 0).startswith("(n, b, m) -> (n, b, m)")
    # broadcast: the new dim (size 7) has no name
    assert _text(named_analysis, "bc", 0).startswith("(n, d1, b, m) -> (n, b, m)")
    # reduce over dims 0 (n) and 1 (the broadcast one): kept b, m; reduced r0, r1
    assert _text(named_analysis, "red", 0) == (
        "(b, m)[r0, r1] -> (r0, r1, b, m), domain: b in [0, 1], m in [0, 2], "
        "r0 in [0, 3], r1 in [0, 6]"
    )
    # reduce-window 1x2 over red[b, m]: out(b, m) reads red(b, m + w1); the size-1 window
    # of dim 0 has no variable, and the one left is named after the dim it slides along
    assert _text(named_analysis, "rw", 0) == (
        "(b, m)[w1] -> (b, m + w1), domain: b in [0, 1], m in [0, 1], w1 in [0, 1]"
    )


def test_convolution_roles_from_dim_labels(analyses):
    _, named_analysis = analyses
    op = _operand(named_analysis, "conv", 0)
    m = op.output_to_input[0]
    assert [v.name for v in m.dim_vars] == ["b", "f", "x0", "x1"]
    assert [v.name for v in m.range_vars] == ["w0", "w1", "fi"]
    names = op.map_names[0][0]
    assert names.dim_roles[1] == "output feature"
    assert names.range_roles[2] == "input feature"
    # the image is read at (b, fi, x0 + w0, x1 + w1) (bf01, no padding or stride)
    assert format_map(m).startswith("(b, f, x0, x1)[w0, w1, fi] -> (b, fi, x0 + w0, x1 + w1)")


def test_fusion_names_through_transpose_and_reshape(analyses):
    # fused: d[b, m, n] = sum_k p0[b, k, m] * p1[b, k, n]; t = transpose -> [m, b, n];
    # r = reshape [8, 4*6]: its dim 1 merges b and n (b = r1 floordiv 6, n = r1 mod 6)
    _, named_analysis = analyses
    assert _text(named_analysis, "f", 0) == (
        "(m, b_n)[k] -> (b_n floordiv 6, k, m), domain: m in [0, 7], b_n in [0, 23], k in [0, 15]"
    )
    assert _text(named_analysis, "f", 1) == (
        "(m, b_n)[k] -> (b_n floordiv 6, k, b_n mod 6), "
        "domain: m in [0, 7], b_n in [0, 23], k in [0, 15]"
    )
    roles = _operand(named_analysis, "f", 0).map_names[0][0]
    assert roles.dim_roles == ("lhs free", "merge of b, n")
    assert roles.range_roles == ("contracting (d)",)


def test_runtime_variable_named_after_its_offset(analyses):
    _, named_analysis = analyses
    op = _operand(named_analysis, "ds", 0)
    assert _text(named_analysis, "ds", 0) == (
        "(d0){of1} -> (d0 + of1), domain: d0 in [0, 15], of1 in [0, 48]"
    )
    assert op.runtime_vars[0][0] == "of1"


@pytest.mark.parametrize(
    "text",
    [
        # the seed's examples in their named form
        "(th_x, th_y, th_z, bl_x, bl_y, bl_z)[vector_elem] -> ("
        "(bl_x * 128 + th_x) floordiv 3000, ((bl_x * 128 + th_x) floordiv 75) mod 40, "
        "((bl_x * 128 + th_x) mod 75) * 4 + vector_elem), domain: th_x in [0, 127], "
        "th_y in [0, 0], th_z in [0, 0], bl_x in [0, 468], bl_y in [0, 0], bl_z in [0, 0], "
        "vector_elem in [0, 3], bl_x * 128 + th_x in [0, 59999]",
        "(d0, n, d2) -> (n), domain: d0 in [0, 9], n in [0, 19], d2 in [0, 29]",
        "(d0)[r] -> (r, d0), domain: d0 in [0, 9], r in [0, 255]",
        "(d0){i} -> (d0 + i), domain: d0 in [0, 15], i in [0, 47]",
        "(b, m, n)[k] -> (b, m, k), domain: b in [0, 3], m in [0, 7], n in [0, 5], k in [0, 15]",
        "(m_hi, m_lo)[k0] -> (m_hi * 4 + m_lo, k0), domain: m_hi in [0, 3], m_lo in [0, 3], "
        "k0 in [0, 3]",
    ],
)
def test_named_maps_read_and_printed_back(text):
    m = parse_map(text)
    assert format_map(m) == text
    # renamed back by position: the same relation over d/s/rt
    stripped = plain(m)
    assert parse_map(format_map(stripped)) == stripped
    assert len(stripped.results) == len(m.results)


def test_simplify_keeps_the_names():
    text = (
        "(m_hi, m_lo)[k] -> ((m_hi * 4 + m_lo) floordiv 4, k mod 8), "
        "domain: m_hi in [0, 3], m_lo in [0, 3], k in [0, 7]"
    )
    result = CliRunner().invoke(cli, ["simplify", text])
    assert result.exit_code == 0, result.output
    # (4 hi + lo) floordiv 4 = hi for lo in [0, 3]; k mod 8 = k for k in [0, 7]
    assert result.output.splitlines()[0] == (
        "(m_hi, m_lo)[k] -> (m_hi, k), domain: m_hi in [0, 3], m_lo in [0, 3], k in [0, 7]"
    )


def test_role_names_never_reserved():
    for reserved in ("d0", "s12", "rt3", "th_x", "bl_z", "chunk_id", "unroll_id", "in", "mod"):
        assert not is_role_name(reserved)
    for good in ("b", "m", "k0", "m_hi", "b_n", "fi", "of1"):
        assert is_role_name(good)
    m = parse_map("(d0, d1)[s0] -> (d0 + s0, d1), domain: d0 in [0, 3], d1 in [0, 3], s0 in [0, 1]")
    # a reserved spelling is left plain; a repeated name made unique
    shown = named(m, VarNames(dims=("s0", "k"), ranges=("k",)))
    assert format_map(shown).startswith("(d0, k)[k_2] -> (d0 + k_2, k)")
    assert plain(shown) == m


def test_cli_names_roles_json_variables(tmp_path, monkeypatch):
    runner = CliRunner()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ops.hlo").write_text(OPS)
    if True:
        result = runner.invoke(
            cli, ["maps", "ops.hlo", "--names", "roles", "--format", "json", "--instruction", "dot"]
        )
        assert result.exit_code == 0, result.output
        doc = json.loads(result.output)
        lhs = doc["instructions"][0]["operands"][0]
        assert lhs["output_to_input"][0].startswith("(b, m, n)[k] -> (b, k, m)")
        assert lhs["variables"]["output_to_input"][0] == [
            {"name": "b", "kind": "dimension", "role": "batch"},
            {"name": "m", "kind": "dimension", "role": "lhs free"},
            {"name": "n", "kind": "dimension", "role": "rhs free"},
            {"name": "k", "kind": "range", "role": "contracting"},
        ]
        plain_run = runner.invoke(cli, ["maps", "ops.hlo", "--instruction", "dot"])
        assert "(d0, d1, d2)[s0] -> (d0, s0, d1)" in plain_run.output


def test_notebook_api_names():
    import hloidx

    a = hloidx.analyze(OPS, names="roles", direction="o2i")
    assert "(b, m, n)[k] -> (b, k, m)" in str(a.instruction("dot"))
    assert "(d0, d1, d2)[s0] -> (d0, s0, d1)" in str(hloidx.analyze(OPS).instruction("dot"))


GATHER_SCATTER = (
    "HloModule gs\n"
    + ADD
    + """
ENTRY e {
  table = f32[5,6] parameter(0)
  idx = s32[3,1] parameter(1)
  g = f32[3,6] gather(table, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}
  upd = f32[3,6] parameter(2)
  ROOT sc = f32[5,6] scatter(table, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"""
)


def test_gather_and_scatter_roles():
    plain_analysis = analyze(parse_hlo(GATHER_SCATTER))
    named_analysis = name_module(plain_analysis)
    # gather: output (g, o0) reads table[idx[g, 0], o0]; idx is read at (g, 0) (its index
    # vector has one component: the range variable over it is simplified away)
    assert _text(named_analysis, "g", 0) == (
        "(g, o0){idx} -> (idx, o0), domain: g in [0, 2], o0 in [0, 5], idx in [0, 4]"
    )
    assert _text(named_analysis, "g", 1).startswith("(g, o0) -> (g, 0)")
    # scatter: an output element may receive update row u (any of 3) where idx lands
    updates = _operand(named_analysis, "sc", 2)
    m = updates.output_to_input[0]
    assert [v.name for v in m.range_vars] == ["u"]
    assert updates.map_names[0][0].range_roles == ("update scatter position",)
    for instr, count in (("g", 2), ("sc", 3)):
        for k in range(count):
            for a, b in zip(
                _operand(plain_analysis, instr, k).output_to_input,
                _operand(named_analysis, instr, k).output_to_input,
                strict=True,
            ):
                assert format_map(plain(b)) == format_map(a)


WINDOW_FUSION = (
    "HloModule w\n"
    + ADD
    + """
fused {
  p0 = f32[64,32] parameter(0)
  z = f32[] constant(0)
  rw = f32[64,30] reduce-window(p0, z), window={size=1x3}, to_apply=add
  ROOT e = f32[64,30] exponential(rw)
}
ENTRY e {
  x = f32[64,32] parameter(0)
  ROOT f = f32[64,30] fusion(x), kind=kLoop, calls=fused
}
"""
)


def test_threads_names_the_fusion_symbols(tmp_path):
    path = tmp_path / "w.hlo"
    path.write_text(WINDOW_FUSION)
    runner = CliRunner()
    docs = {}
    for names in ("plain", "roles"):
        result = runner.invoke(cli, ["threads", str(path), "--format", "json", "--names", names])
        assert result.exit_code == 0, result.output
        docs[names] = json.loads(result.output)
    plain_map = docs["plain"]["operands"][0]["maps"][0]["map"]
    named_item = docs["roles"]["operands"][0]["maps"][0]
    # the window of size 3 slides along dim 1 of p0: its variable is w1, before the emitter's
    # chunk_id and unroll_id (XLA's order: the fusion map's symbols first)
    assert "[w1, chunk_id, unroll_id]" in named_item["map"]
    assert format_map(plain(parse_map(named_item["map"]), keep_gpu_names=True)) == plain_map
    kinds = {v["name"]: (v["kind"], v["role"]) for v in named_item["variables"]}
    assert kinds["th_x"] == ("GPU", "thread id x")
    assert kinds["w1"] == ("range", "window position in dim 1 (rw)")


def test_tile_variables_named_after_the_output_dims(tmp_path):
    path = tmp_path / "ops.hlo"
    path.write_text(OPS)
    runner = CliRunner()
    docs = {}
    for names in ("plain", "roles"):
        result = runner.invoke(
            cli, ["tile", str(path), "--instruction", "f", "--format", "json", "--names", names]
        )
        assert result.exit_code == 0, result.output
        docs[names] = json.loads(result.output)
    named_lhs, plain_lhs = docs["roles"]["operands"][0], docs["plain"]["operands"][0]
    # f's output [m, b_n] (the fusion's reshape merges b and n): a tile of sizes (m, b_n)
    # needs lhs p0[b, k, m] over b_n ceildiv 6 batches, all 16 k and m columns
    assert named_lhs["size_map"] == (
        "(m, b_n) -> (b_n ceildiv 6, 16, m), domain: m in [1, 8], b_n in [1, 24]"
    )
    assert named_lhs["tile_variables"] == "m, b_n"
    for key in ("offset_map", "size_map", "stride_map"):
        assert format_map(plain(parse_map(named_lhs[key]))) == plain_lhs[key]


def test_show_prints_the_named_maps(tmp_path):
    path = tmp_path / "ops.hlo"
    path.write_text(OPS)
    runner = CliRunner()
    named = runner.invoke(cli, ["show", str(path), "--instruction", "dot", "--names", "roles"])
    assert named.exit_code == 0, named.output
    assert "  map: (b, m, n)[k] -> (b, k, m), domain:" in named.output
    doc = json.loads(
        runner.invoke(
            cli, ["show", str(path), "--instruction", "dot", "--names", "roles", "--format", "json"]
        ).output
    )
    assert [v["name"] for v in doc["variables"][0]] == ["b", "m", "n", "k"]
    plain_run = runner.invoke(cli, ["show", str(path), "--instruction", "dot"])
    assert "map:" not in plain_run.output


def test_editor_hover_names_the_maps(monkeypatch):
    from hloidx.lsp.document import FileAnalysis

    offset = OPS.index("dot(lhs, rhs)") + len("dot(")
    document = FileAnalysis("ops.hlo", OPS)
    document.parse()
    document.finish()
    plain_hover = document.hover(offset)
    assert plain_hover is not None
    assert "(d0, d1, d2)[s0] -> (d0, s0, d1)" in plain_hover[0]
    monkeypatch.setattr(FileAnalysis, "names", "roles")
    document = FileAnalysis("ops.hlo", OPS)
    document.parse()
    document.finish()
    named_hover = document.hover(offset)
    assert named_hover is not None
    assert "(b, m, n)[k] -> (b, k, m)" in named_hover[0]


def test_split_parts_ordered_by_stride_not_position():
    from hloidx.hlo.roles import names_through

    lhs_free = (("m", "lhs free"),)
    # row-major split of m (12) into [4, 3]: m = 3 * d0 + d1, d0 is the high part
    row_major = parse_map("(d0, d1) -> (d0 * 3 + d1), domain: d0 in [0, 3], d1 in [0, 2]")
    assert [n for n, _ in names_through(row_major, lhs_free)] == ["m_hi", "m_lo"]
    # a layout-changing bitcast may put the high part last: m = d0 + 4 * d1
    swapped = parse_map("(d0, d1) -> (d1 * 4 + d0), domain: d0 in [0, 3], d1 in [0, 2]")
    assert [n for n, _ in names_through(swapped, lhs_free)] == ["m_lo", "m_hi"]
    # one output dim alone in two operand results (floordiv and mod of it) is a merge
    mixed = parse_map("(d0) -> (d0 floordiv 3, d0 mod 3), domain: d0 in [0, 11]")
    assert names_through(mixed, (("b", ""), ("n", ""))) == [("b_n", "merge of b, n")]


SEEDS = sorted((Path(__file__).parent.parent / "samples" / "seed000").glob("*.hlo"))


@pytest.mark.parametrize("path", SEEDS, ids=lambda p: p.stem)
def test_every_sample_op_renamed_back_is_plain(path):
    # every op kind of the seed's samples (bitcast, concatenate, pad, reverse, slice,
    # dynamic-update-slice, variadic reduce, fusions, ...): names change no map
    plain_analysis = analyze(parse_hlo(path.read_text()))
    named_analysis = name_module(plain_analysis)
    for before, after in zip(plain_analysis.instructions, named_analysis.instructions, strict=True):
        for a, b in zip(before.operands, after.operands, strict=True):
            for direction in ("output_to_input", "input_to_output"):
                for m, n in zip(getattr(a, direction), getattr(b, direction), strict=True):
                    assert format_map(plain(n, keep_gpu_names=True)) == format_map(m)


def test_plain_analysis_after_a_named_one_carries_no_names():
    # the memo tables (simplification, composition, printing) are keyed by maps whose names
    # count in equality: a named walk never hands its maps to a later plain analysis
    for path in [*SEEDS, None]:
        text = OPS if path is None else path.read_text()
        module = parse_hlo(text)
        name_module(analyze(module))
        again = analyze(parse_hlo(text), share=False)
        for ins in again.instructions:
            for op in ins.operands:
                for m in (*op.output_to_input, *op.input_to_output):
                    assert not any(v.name for v in m.all_vars()), (ins.name, format_map(m))
