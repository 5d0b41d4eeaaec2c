"""Readable maps (issue 45), the ops and front ends ``tests/test_role_names.py`` leaves out:
fused attention, select-and-scatter, input-to-output maps (convolution, gather, dynamic
slices), ``--tree`` steps, the JSON's runtime variables and ``summary --names``.

Every expected name, role and map is written here by hand from the op's semantics (XLA's
operation semantics, TransformerEngine's attention); the named maps are checked as relations by
evaluating them at points worked out by hand, and renamed back by position against the plain
analysis.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.hlo.analysis import analyze
from hloidx.hlo.chains import composition_trees
from hloidx.hlo.role_names import name_module
from hloidx.hlo.syntax import parse_hlo
from hloidx.maps.expr import VarKind
from hloidx.maps.printer import format_map
from hloidx.maps.syntax import parse_map
from hloidx.maps.traversal import evaluate
from hloidx.maps.var_names import plain
from tests.paths import DATA as TEST_DATA

# TransformerEngine forward attention, BSHD (qkv_layout 9), no mask, no bias: B=2, Sq=3,
# Skv=5, H=4 query heads over Hk=2 key/value heads (a group of 2), Q/K head dim 6, V head dim 7.
_TE_CONFIG = (
    "{attn_heads = 4 : i64, bias_batch = 0 : i64, bias_heads = 0 : i64, bias_type = 0 : i64, "
    "deterministic = false, dropout_probability = 0.000000e+00 : f64, input_batch = 2 : i64, "
    "is_training = true, kv_max_seqlen = 5 : i64, mask_type = 0 : i64, max_segments_per_seq = "
    "1 : i64, num_gqa_groups = 2 : i64, q_max_seqlen = 3 : i64, qk_head_dim = 6 : i64, "
    "qkv_layout = 9 : i64, scaling_factor = 1.000000e+00 : f64, v_head_dim = 7 : i64, "
    "window_size_left = -1 : i64, window_size_right = -1 : i64}"
)
OPS = (
    "HloModule ops\n"
    "max {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
    "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
    "ENTRY e {\n"
    "  q = bf16[2,3,4,6] parameter(0)\n  k = bf16[2,5,2,6] parameter(1)\n"
    "  v = bf16[2,5,2,7] parameter(2)\n  bias = bf16[0] parameter(3)\n"
    "  seed = u32[2] parameter(4)\n  cu = s32[3] parameter(5)\n  z = f32[0] parameter(6)\n"
    "  att = (bf16[2,3,4,7], f32[2,4,3,1], u32[2,4], u8[48]) custom-call(q, k, v, bias, seed, "
    'cu, cu, z, z, z, z, z, z), custom_call_target="te_fused_attn_forward_ffi", '
    f"api_version=API_VERSION_TYPED_FFI, backend_config={_TE_CONFIG}\n"
    "  x = f32[8,16] parameter(7)\n  src = f32[8,8] parameter(8)\n"
    "  zero = f32[] constant(0)\n"
    "  sas = f32[8,16] select-and-scatter(x, src, zero), window={size=1x2 stride=1x2}, "
    "select=ge, scatter=max\n"
    "  img = f32[1,3,8,8] parameter(9)\n  ker = f32[5,3,3,3] parameter(10)\n"
    "  conv = f32[1,5,6,6] convolution(img, ker), window={size=3x3}, dim_labels=bf01_oi01->bf01\n"
    "  big = f32[64] parameter(11)\n  of1 = s32[] parameter(12)\n"
    "  ds = f32[16] dynamic-slice(big, of1), dynamic_slice_sizes={16}\n"
    "  o = bf16[2,3,4,7] get-tuple-element(att), index=0\n"
    "  ROOT out = (bf16[2,3,4,7], f32[8,16], f32[1,5,6,6], f32[16]) tuple(o, sas, conv, ds)\n"
    "}\n"
)


@pytest.fixture(scope="module")
def analyses():
    plain_analysis = analyze(parse_hlo(OPS), verify=False)
    return plain_analysis, name_module(plain_analysis)


def _operand(analysis, instr: str, index: int):
    ins = next(i for i in analysis.instructions if i.name == instr)
    return ins.operands[index]


def _head(m) -> str:
    return format_map(m).partition(", domain:")[0]


def _at(m, **values: int) -> tuple | None:
    """The map's results at the point given by the printed variable names (``d0`` for a
    plain one); None when the point is outside the domain."""
    groups = {VarKind.DIM: ("d", m.dim_vars), VarKind.RANGE: ("s", m.range_vars)}
    groups[VarKind.RUNTIME] = ("rt", m.rt_vars)

    def value(v):
        prefix, group = groups[v.kind]
        return values[group[v.index].name or f"{prefix}{v.index}"]

    for prefix, group in groups.values():
        for i, v in enumerate(group):
            if not v.bounds.lower <= values[v.name or f"{prefix}{i}"] <= v.bounds.upper:
                return None
    for expr, bounds in m.constraints:
        if not bounds.lower <= evaluate(expr, value) <= bounds.upper:
            return None
    return tuple(evaluate(r, value) for r in m.results)


@pytest.mark.parametrize(
    ("instr", "index"),
    [
        *[("att", j) for j in range(3)],
        *[("sas", j) for j in range(2)],
        *[("conv", j) for j in range(2)],
        ("ds", 0),
    ],
)
def test_renamed_back_by_position_is_the_plain_map(analyses, instr, index):
    before, after = (_operand(a, instr, index) for a in analyses)
    for direction in ("output_to_input", "input_to_output"):
        for m, n in zip(getattr(before, direction), getattr(after, direction), strict=True):
            assert format_map(plain(n)) == format_map(m)
            assert plain(n) == m


def test_attention_roles_from_the_index_patterns(analyses):
    # O[b, s, h, e] = sum_t softmax_t(Q[b, s, h, :] . K[b, t, h // 2, :]) V[b, t, h // 2, e]
    _, named_analysis = analyses
    q, k, v = (_operand(named_analysis, "att", j) for j in range(3))
    assert _head(q.output_to_input[0]) == "(b, sq, h, dv)[dqk] -> (b, sq, h, dqk)"
    assert _head(k.output_to_input[0]) == "(b, sq, h, dv)[skv, dqk] -> (b, skv, h floordiv 2, dqk)"
    assert _head(v.output_to_input[0]) == "(b, sq, h, dv)[skv] -> (b, skv, h floordiv 2, dv)"
    o2i = k.map_names[0][0]
    assert o2i.dim_roles == ("batch", "query position", "query head", "V head dim")
    assert o2i.range_roles == ("key/value position", "Q/K head dim")
    # the statistics [B, H, Sq, 1] read the whole Q row; the size-one dim stays plain
    assert _head(q.output_to_input[1]) == "(b, h, sq, d3)[dqk] -> (b, sq, h, dqk)"
    # input to output: K[b, t, hk, a] is used by O[b, s, 2 hk + hg, e] for every query s,
    # every head hg of its group and every V feature e
    i2o = k.input_to_output[0]
    assert [x.name for x in i2o.dim_vars] == ["b", "skv", "hkv", "dqk"]
    assert sorted(x.name for x in i2o.range_vars) == ["dv", "hg", "sq"]
    assert _at(i2o, b=1, skv=4, hkv=1, dqk=5, hg=1, sq=2, dv=6) == (1, 2, 3, 6)
    assert _at(i2o, b=0, skv=0, hkv=1, dqk=0, hg=0, sq=0, dv=0) == (0, 0, 2, 0)


def test_select_and_scatter_windows_and_covering_positions(analyses):
    # windows 1x2, stride 1x2 over x[8, 16]: output (i, j) lies in the window starting at
    # 2 (j // 2), at position j mod 2 in it, and that window's selection compares x[i, 2 (j // 2)
    # + w] for w in {0, 1}
    _, named_analysis = analyses
    op = _operand(named_analysis, "sas", 0)
    m = op.output_to_input[0]
    names = op.map_names[0][0]
    assert [x.name for x in m.range_vars] == ["w1", "c1"]
    assert names.range_roles == ("window position in dim 1", "position in a covering window, dim 1")
    assert _at(m, d0=3, d1=5, c1=1, w1=0) == (3, 4)
    assert _at(m, d0=3, d1=5, c1=1, w1=1) == (3, 5)
    assert _at(m, d0=3, d1=5, c1=0, w1=0) is None  # 5 is not the start of a window
    # the source: output (i, j) receives source (i, j // 2), found at position c1 = j mod 2
    source = _operand(named_analysis, "sas", 1).output_to_input[0]
    assert [x.name for x in source.range_vars] == ["c1"]
    assert _at(source, d0=2, d1=7, c1=1) == (2, 3)


def test_convolution_input_to_output(analyses):
    # out[b, f, y, x] = sum img[b, fi, y + w0, x + w1] ker[f, fi, w0, w1] (no padding/stride)
    _, named_analysis = analyses
    img = _operand(named_analysis, "conv", 0)
    i2o = img.input_to_output[0]
    assert [x.name for x in i2o.range_vars] == ["w0", "w1", "f"]
    assert img.map_names[1][0].range_roles == (
        "window position in spatial dim 0",
        "window position in spatial dim 1",
        "output feature",
    )
    # img[0, 2, 4, 7] is read by out[0, f, 4 - w0, 7 - w1] (when inside [0, 5])
    assert _at(i2o, d0=0, d1=2, d2=4, d3=7, w0=1, w1=2, f=3) == (0, 3, 3, 5)
    assert _at(i2o, d0=0, d1=2, d2=4, d3=7, w0=0, w1=0, f=3) is None  # x = 7 is outside
    ker = _operand(named_analysis, "conv", 1).input_to_output[0]
    # ker[f, fi, ky, kx] is read by out[b, f, x0, x1] for every output position and batch
    assert sorted(x.name for x in ker.range_vars) == ["x0", "x1"]  # batch 1: no variable
    assert _at(ker, d0=4, d1=1, d2=2, d3=0, x0=5, x1=3) == (0, 4, 5, 3)


def test_dynamic_slice_runtime_variables_in_both_directions(analyses):
    # ds[i] = big[i + of1]: big[j] is read by ds[j - of1]
    _, named_analysis = analyses
    op = _operand(named_analysis, "ds", 0)
    assert _head(op.output_to_input[0]) == "(d0){of1} -> (d0 + of1)"
    assert [x.name for x in op.input_to_output[0].rt_vars] == ["of1"]
    assert _at(op.input_to_output[0], d0=20, of1=7) == (13,)
    assert op.runtime_vars[0][:2] == ("of1", "of1")  # the name and the producer


def test_tree_steps_named_and_plain_when_renamed_back():
    # fused: d[b, m, n] = sum_k p0[b, k, m] p1[b, k, n]; t = transpose [m, b, n]; r = [8, 24]
    text = (
        "HloModule t\nfused {\n  p0 = f32[4,16,8] parameter(0)\n  p1 = f32[4,16,6] parameter(1)\n"
        "  d = f32[4,8,6] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, "
        "lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
        "  t = f32[8,4,6] transpose(d), dimensions={1,0,2}\n  ROOT r = f32[8,24] reshape(t)\n}\n"
        "ENTRY e {\n  a = f32[4,16,8] parameter(0)\n  b = f32[4,16,6] parameter(1)\n"
        "  ROOT f = f32[8,24] fusion(a, b), kind=kLoop, calls=fused\n}\n"
    )
    analysis = analyze(parse_hlo(text), verify=False)
    plain_trees = composition_trees(analysis)
    named_trees = composition_trees(analysis, names="roles")
    assert composition_trees(analysis, names="plain") == plain_trees
    for before, after in zip(plain_trees[0]["maps"], named_trees[0]["maps"], strict=True):
        for s, n in zip(before["steps"], after["steps"], strict=True):
            assert format_map(plain(parse_map(n["map"]))) == s["map"]
    steps = {s["instruction"]: s["map"] for s in named_trees[0]["maps"][0]["steps"]}
    # the fusion's output dims: m (lhs free) and b_n (b and n merged by the reshape)
    assert steps["r"].startswith("(m, b_n) -> (m, b_n floordiv 6, b_n mod 6)")
    assert steps["d"].startswith("(m, b_n)[k] -> (b_n floordiv 6, k, m)")


def test_json_runtime_variables_use_the_printed_names(tmp_path):
    path = tmp_path / "ds.hlo"
    path.write_text(
        "HloModule ds\nENTRY e {\n  big = f32[64] parameter(0)\n  of1 = s32[] parameter(1)\n"
        "  ROOT ds = f32[16] dynamic-slice(big, of1), dynamic_slice_sizes={16}\n}\n"
    )
    out = CliRunner().invoke(cli, ["maps", str(path), "--names", "roles", "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    op = next(i for i in doc["instructions"] if i["name"] == "ds")["operands"][0]
    rt = op["runtime_variables"][0]
    assert rt["name"] == "of1"
    assert "{of1}" in op["output_to_input"][0]
    assert "{of1}" in op["input_to_output"][0]
    kinds = {v["name"]: v["kind"] for v in op["variables"]["input_to_output"][0]}
    assert kinds["of1"] == "runtime"


DOT = (
    "HloModule dot\nENTRY e {\n  lhs = f32[2,5,3] parameter(0)\n  rhs = f32[2,4,5] parameter(1)\n"
    "  ROOT dot = f32[2,3,4] dot(lhs, rhs), lhs_batch_dims={0}, rhs_batch_dims={0}, "
    "lhs_contracting_dims={1}, rhs_contracting_dims={2}\n}\n"
)


def test_summary_names_roles(tmp_path):
    path = tmp_path / "dot.hlo"
    path.write_text(DOT)
    runner = CliRunner()
    plain_text = runner.invoke(cli, ["summary", str(path)]).output
    assert runner.invoke(cli, ["summary", str(path), "--names", "plain"]).output == plain_text
    plain_json = json.loads(runner.invoke(cli, ["summary", str(path), "--format", "json"]).output)
    out = runner.invoke(cli, ["summary", str(path), "--names", "roles", "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    # the figures are the same; each operand only gains its named maps and their variables
    for row, plain_row in zip(doc["rows"], plain_json["rows"], strict=True):
        for o, p in zip(row["operands"], plain_row["operands"], strict=True):
            assert {k: v for k, v in o.items() if k not in ("named_maps", "variables")} == p
            assert "named_maps" not in p
    lhs, rhs = doc["rows"][0]["operands"]
    # out[b, m, n] = sum_k lhs[b, k, m] rhs[b, n, k]
    assert lhs["named_maps"] == [
        "(b, m, n)[k] -> (b, k, m), domain: b in [0, 1], m in [0, 2], n in [0, 3], k in [0, 4]"
    ]
    assert rhs["named_maps"][0].startswith("(b, m, n)[k] -> (b, n, k)")
    assert [(v["name"], v["kind"], v["role"]) for v in lhs["variables"][0]] == [
        ("b", "dimension", "batch"),
        ("m", "dimension", "lhs free"),
        ("n", "dimension", "rhs free"),
        ("k", "range", "contracting"),
    ]
    text = runner.invoke(cli, ["summary", str(path), "--names", "roles"]).output
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "lhs f32[2,5,3]" in line)
    assert lines[at + 1].strip() == "(b, m, n)[k] -> (b, k, m)"
    assert lines[at + 1].index("(") > lines[at].index("lhs f32")  # under the operand column
    # the table itself is the plain one with the map lines taken out
    assert [x for x in lines if x not in (lines[at + 1], lines[at + 3])] == plain_text.splitlines()


ATTENTION_DATA = TEST_DATA / "gpu" / "attention"


@pytest.mark.parametrize(
    "name", ["bhsd_softmax_fwd_bwd", "bshd_flash_bias_fwd_bwd", "padding_dropout_fwd_bwd"]
)
def test_cudnn_attention_named_maps_renamed_back_are_plain(name):
    before = analyze(parse_hlo((ATTENTION_DATA / f"{name}.hlo").read_text()), verify=False)
    after = name_module(before)
    calls = 0
    for ins, named_ins in zip(before.instructions, after.instructions, strict=True):
        if ins.opcode != "custom-call":
            continue
        calls += 1
        for op, named_op in zip(ins.operands, named_ins.operands, strict=True):
            for direction in ("output_to_input", "input_to_output"):
                for m, n in zip(getattr(op, direction), getattr(named_op, direction), strict=True):
                    assert format_map(plain(n)) == format_map(m)
    assert calls >= 2


def test_cudnn_attention_roles():
    # XLA's cuDNN forward call [B=2, H=6, S=1024, D=64], causal: O[b, h, s, e] reads
    # K[b, h, t, :] for every key position t <= s
    module = parse_hlo((ATTENTION_DATA / "bhsd_softmax_fwd_bwd.hlo").read_text())
    named = name_module(analyze(module, verify=False))
    k = _operand(named, "fmha-bmm-softmax-bmm", 1).output_to_input[0]
    assert _head(k) == "(b, h, sq, dv)[skv, dqk] -> (b, h, skv, dqk)"
    assert _at(k, b=1, h=5, sq=3, dv=0, skv=3, dqk=63) == (1, 5, 3, 63)
    assert _at(k, b=1, h=5, sq=3, dv=0, skv=4, dqk=63) is None  # a later key: masked
    # the backward call's dK [B, Hk, Skv, D] output
    back = _operand(named, "fmha-bmm-softmax-bmm-backward", 0)
    dims = [[v.name for v in m.dim_vars] for m in back.output_to_input]
    assert ["b", "hkv", "skv", "dqk"] in dims
    assert ["b", "h", "sq", "dqk"] in dims


def test_padding_mask_sequence_lengths_named():
    # mask_type 1 (padding): batch b reads cu_seqlens[b] and cu_seqlens[b + 1]
    text = OPS.replace("mask_type = 0", "mask_type = 1")
    named = name_module(analyze(parse_hlo(text), verify=False))
    cu = _operand(named, "att", 5)
    m = cu.output_to_input[0]
    assert [v.name for v in m.range_vars] == ["edge"]
    assert _at(m, b=1, sq=0, h=0, dv=0, edge=0) == (1,)
    assert _at(m, b=1, sq=0, h=0, dv=0, edge=1) == (2,)
    # cu_seqlens[c] is read by batches c - 1 and c, at every query position, head and feature
    i2o = cu.input_to_output[0]
    assert [v.name for v in i2o.range_vars] == ["edge", "sq", "h", "dv"]
    assert _at(i2o, d0=2, edge=1, sq=2, h=3, dv=6) == (1, 2, 3, 6)
    assert _at(i2o, d0=2, edge=0, sq=2, h=3, dv=6) is None  # batch 2 does not exist


def test_notebook_summary_of_a_named_analysis():
    import hloidx

    named = hloidx.analyze(DOT, names="roles").summary()
    lhs = named.as_dict()["rows"][0]["operands"][0]
    assert lhs["named_maps"][0].startswith("(b, m, n)[k] -> (b, k, m), domain:")
    assert "(b, m, n)[k] -> (b, k, m)" in str(named)
    assert "named_maps" not in hloidx.analyze(DOT).summary().as_dict()["rows"][0]["operands"][0]


def test_from_to_chain_named():
    # s[i] = sum_j x[i, j]; b[i, k] = s[i]: b reads x[i, r] for every r (the reduced dim)
    from hloidx.hlo.chains import chain_report

    text = (
        "HloModule c\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[2,5] parameter(0)\n"
        "  zero = f32[] constant(0)\n  sum = f32[2] reduce(x, zero), dimensions={1}, to_apply=add\n"
        "  ROOT bc = f32[2,3] broadcast(sum), dimensions={0}\n}\n"
    )
    module = parse_hlo(text)
    before = chain_report(module, "bc", "x")
    assert chain_report(module, "bc", "x", names="plain") == before
    after = chain_report(module, "bc", "x", names="roles")
    assert after["maps"] == [
        "(d0, d1)[r] -> (d0, r), domain: d0 in [0, 1], d1 in [0, 2], r in [0, 4]"
    ]
    for m, p in zip(after["maps"], before["maps"], strict=True):
        assert format_map(plain(parse_map(m))) == p
    for path, plain_path in zip(after["paths"], before["paths"], strict=True):
        for s, p in zip(path, plain_path, strict=True):
            assert format_map(plain(parse_map(s["map"]))) == p["map"]
