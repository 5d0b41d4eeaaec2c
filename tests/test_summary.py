"""The triage summary (`hloidx summary`, and the end of `hloidx maps`): rows over the entry
computation's memory-reading ops, Triton block sizes, unknown targets, totals, sorting."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import hloidx
from hloidx.check.oracle import oracle_relation
from hloidx.cli.main import cli
from hloidx.hlo.summary import summarize, triton_blocks

MODULE = """HloModule triage

triton_softmax {
  p = f32[8,256] parameter(0)
  ROOT e = f32[8,256] exponential(p)
}

triton_gemm {
  a = f32[64,32] parameter(0)
  b = f32[32,16] parameter(1)
  ROOT d = f32[64,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY main {
  x = f32[8,256] parameter(0)
  v = f32[256] parameter(1)
  a = f32[64,32] parameter(2)
  b = f32[32,16] parameter(3)
  soft = f32[8,256] fusion(x), kind=kCustom, calls=triton_softmax, backend_config={"fusion_backend_config":{"kind":"__triton","block_level_fusion_config":{"output_tiles":[{"sizes":["1","256"]}],"num_warps":"4"}}}
  gemm = f32[64,16] fusion(a, b), kind=kCustom, calls=triton_gemm, backend_config={"fusion_backend_config":{"kind":"__triton_gemm","triton_gemm_config":{"block_m":"64","block_n":"16","block_k":"32","split_k":"1","num_stages":"2","num_warps":"4"}}}
  bc = f32[8,256] broadcast(v), dimensions={1}
  m = f32[8,256] custom-call(soft, bc), custom_call_target="mystery"
  ROOT t = (f32[8,256], f32[64,16]) tuple(m, gemm)
}
"""


def _doc(sort: str = "reads") -> dict:
    return summarize(hloidx.analyze(hloidx.parse_hlo(MODULE)), sort)


def _rows(doc: dict) -> dict:
    return {row["name"]: row for row in doc["rows"]}


def test_rows_are_the_entry_ops_that_read_memory() -> None:
    assert sorted(_rows(_doc())) == ["bc", "gemm", "m", "soft"]


def test_a_triton_fusion_shows_its_block_sizes() -> None:
    rows = _rows(_doc())
    assert rows["soft"]["blocks"] == "tile 1x256 num_warps=4"
    assert rows["soft"]["kind"] == "kCustom __triton"
    assert rows["gemm"]["blocks"] == (
        "block_m=64 block_n=16 block_k=32 split_k=1 num_stages=2 num_warps=4"
    )
    assert rows["bc"]["blocks"] is None
    module = hloidx.parse_hlo(MODULE)
    assert triton_blocks(module.entry.root) is None


def test_an_unknown_target_is_named_with_the_operands_it_leaves_undefined() -> None:
    doc = _doc()
    assert doc["totals"]["without_rule"] == {"custom-call mystery": 2}
    assert [o["status"] for o in _rows(doc)["m"]["operands"]] == ["unknown", "unknown"]


def test_reads_and_distinct_are_what_the_op_reads() -> None:
    module = hloidx.parse_hlo(MODULE)
    bc = next(i for i in module.entry.instructions if i.name == "bc")
    pairs = oracle_relation(bc, 0)
    (operand,) = _rows(_doc())["bc"]["operands"]
    assert operand["reads"] == len(pairs) / 256
    assert operand["distinct"] == len({src for _, src in pairs}) / 256
    assert operand["status"] == "exact"


def test_totals_count_what_the_analysis_says() -> None:
    analysis = hloidx.analyze(hloidx.parse_hlo(MODULE))
    doc = summarize(analysis)
    statuses = [op.status for ins in analysis.instructions for op in ins.operands]
    assert sum(doc["totals"]["operands_by_status"].values()) == len(statuses)
    assert doc["totals"]["operands_by_status"]["unknown"] == statuses.count("unknown")
    verdicts = [v.kind for ins in analysis.instructions for op in ins.operands for v in op.verdicts]
    assert doc["totals"]["verdicts"]["proved"] == verdicts.count("proved")
    assert doc["totals"]["instructions"] == len(analysis.instructions)
    assert doc["totals"]["by_opcode"]["parameter"] == 7


@pytest.mark.parametrize("key", ["total", "reads", "distinct", "name", "size"])
def test_sorting(key: str) -> None:
    rows = _doc(key)["rows"]
    names = [r["name"] for r in rows]
    if key == "name":
        assert names == sorted(names)
    if key == "total":
        known = [r["total_reads"] * r["count"] for r in rows if r["total_reads"] is not None]
        assert known == sorted(known, reverse=True)
        assert names[-1] == "m"  # unknown reads last
    if key == "size":
        sizes = [r["elements"] for r in rows]
        assert sizes == sorted(sizes, reverse=True)
    if key == "reads":
        known = [r["max_reads"] for r in rows if r["max_reads"] is not None]
        assert known == sorted(known, reverse=True)
        assert names[-1] == "m"  # unknown reads last
    if key == "distinct":
        known = [r["min_distinct"] for r in rows if r["min_distinct"] is not None]
        assert known == sorted(known)
    with pytest.raises(ValueError, match="sort by"):
        _doc("nosuch")


def test_summary_command_text_and_json(tmp_path) -> None:
    path = tmp_path / "triage.hlo"
    path.write_text(MODULE)
    run = CliRunner().invoke(cli, ["summary", str(path), "--format", "json"])
    assert run.exit_code == 0, run.output
    doc = json.loads(run.output)
    assert doc["schema_version"] == 1
    assert doc["rows"] == _doc()["rows"]
    run = CliRunner().invoke(cli, ["summary", str(path), "--sort", "name"])
    assert run.exit_code == 0, run.output
    assert "tile 1x256" in run.output
    assert "without a rule: custom-call mystery (2 operands UNDEFINED)" in run.output
    # the same table ends `hloidx maps`
    run = CliRunner().invoke(cli, ["maps", str(path)])
    assert "without a rule: custom-call mystery" in run.output.splitlines()[-1]


LAYERS = """HloModule layers

layer_one {
  p = f32[4,8] parameter(0)
  ROOT e = f32[4,8] exponential(p)
}

layer_two {
  q = f32[4,8] parameter(0)
  ROOT f = f32[4,8] exponential(q)
}

other {
  r = f32[4,8] parameter(0)
  ROOT g = f32[4,8] negate(r)
}

sum_one {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

sum_two {
  c = f32[] parameter(0)
  d = f32[] parameter(1)
  ROOT t = f32[] add(c, d)
}

ENTRY main {
  x = f32[4,8] parameter(0)
  w = f32[8,8] parameter(1)
  zero = f32[] constant(0)
  f1 = f32[4,8] fusion(x), kind=kLoop, calls=layer_one
  d1 = f32[4,8] dot(f1, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  f2 = f32[4,8] fusion(d1), kind=kLoop, calls=layer_two
  d2 = f32[4,8] dot(f2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  f3 = f32[4,8] fusion(d2), kind=kLoop, calls=other
  r1 = f32[4] reduce(f3, zero), dimensions={1}, to_apply=sum_one
  r2 = f32[4] reduce(d2, zero), dimensions={1}, to_apply=sum_two
  ROOT out = (f32[4], f32[4]) tuple(r1, r2)
}
"""


def _layers(group: bool = True, **options) -> dict:
    return summarize(hloidx.analyze(hloidx.parse_hlo(LAYERS)), group=group, **options)


def test_repeats_of_a_layer_share_one_row_with_their_count() -> None:
    rows = {r["name"]: r for r in _layers()["rows"]}
    # the fusions call equal bodies under other names, the reduces equal reducers
    assert rows["f1"]["count"] == 2
    assert rows["f1"]["members"] == ["f1", "f2"]
    assert rows["d1"]["count"] == 2
    assert rows["d1"]["members"] == ["d1", "d2"]
    assert rows["r1"]["count"] == 2
    assert rows["r1"]["members"] == ["r1", "r2"]
    assert rows["f3"]["count"] == 1  # another body: its own row
    assert sorted(rows) == ["d1", "f1", "f3", "r1"]
    ungrouped = _layers(group=False)["rows"]
    assert sorted(r["name"] for r in ungrouped) == ["d1", "d2", "f1", "f2", "f3", "r1", "r2"]
    assert all(r["count"] == 1 for r in ungrouped)
    # a group's members have the same figures as the row shows
    by_name = {r["name"]: r for r in ungrouped}
    for row in rows.values():
        for member in row["members"]:
            figures = [{**o, "name": ""} for o in by_name[member]["operands"]]
            assert figures == [{**o, "name": ""} for o in row["operands"]]
            assert by_name[member]["total_reads"] == row["total_reads"]


def test_different_attributes_are_never_grouped() -> None:
    text = LAYERS.replace(
        "d2 = f32[4,8] dot(f2, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        "d2 = f32[4,8] dot(f2, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
    )
    analysis = hloidx.analyze(hloidx.parse_hlo(text))
    rows = {r["name"]: r for r in summarize(analysis, group=True)["rows"]}
    assert rows["d1"]["count"] == 1
    assert rows["d2"]["count"] == 1


def test_total_reads_is_every_element_read_and_sorts_the_groups() -> None:
    module = hloidx.parse_hlo(LAYERS)
    doc = summarize(hloidx.analyze(module), group=True)
    rows = {r["name"]: r for r in doc["rows"]}
    d1 = next(i for i in module.entry.instructions if i.name == "d1")
    expected = sum(len(oracle_relation(d1, k)) for k in range(2))
    assert rows["d1"]["total_reads"] == expected  # 4*8 outputs each read 8 + 8 elements
    totals = [r["total_reads"] * r["count"] for r in doc["rows"]]
    assert totals == sorted(totals, reverse=True)
    assert doc["rows"][0]["name"] == "d1"
    assert doc["row_instructions"] == 7
    assert doc["grouped"] is True


def test_summary_command_groups_unless_asked_not_to(tmp_path) -> None:
    path = tmp_path / "layers.hlo"
    path.write_text(LAYERS)
    run = CliRunner().invoke(cli, ["summary", str(path)])
    assert run.exit_code == 0, run.output
    assert "the 7 instructions that read memory in the entry computation, in 4 rows" in run.output
    assert any(line.startswith("d1") and " x2 " in line for line in run.output.splitlines())
    run = CliRunner().invoke(cli, ["summary", str(path), "--no-group", "--format", "json"])
    doc = json.loads(run.output)
    assert doc["grouped"] is False
    assert len(doc["rows"]) == 7
    assert doc["rows"] == _layers(group=False)["rows"]
