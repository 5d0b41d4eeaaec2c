"""The triage summary shows what runs: a loop body's matmul weighted by the loop's trip count,
a conditional's branches and a called computation, each row saying where it lives; its header
lines say what they count in words (issue 44)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hloidx.cli.main import cli

# A scan over 6 layers (XLA writes the trip count in the while's backend_config), a
# conditional with two branches and a call, around one entry add.
MODULE = """HloModule scan

body {
  p = (s32[], f32[8,16], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  h = f32[8,16] get-tuple-element(p), index=1
  w = f32[16,16] get-tuple-element(p), index=2
  layer_dot = f32[8,16] dot(h, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[8,16], f32[16,16]) tuple(next, layer_dot, w)
}

cond {
  p = (s32[], f32[8,16], f32[16,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}

yes {
  a = f32[8,16] parameter(0)
  ROOT yes_neg = f32[8,16] negate(a)
}

no {
  a = f32[8,16] parameter(0)
  ROOT no_exp = f32[8,16] exponential(a)
}

helper {
  a = f32[8,16] parameter(0)
  ROOT helper_abs = f32[8,16] abs(a)
}

ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,16] parameter(1)
  flag = pred[] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[8,16], f32[16,16]) tuple(zero, x, w)
  loop = (s32[], f32[8,16], f32[16,16]) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"6"}}
  h = f32[8,16] get-tuple-element(loop), index=1
  branch = f32[8,16] conditional(flag, h, h), true_computation=yes, false_computation=no
  called = f32[8,16] call(branch), to_apply=helper
  ROOT out = f32[8,16] add(called, x)
}
"""


def _summary(tmp_path, *args: str):
    path = tmp_path / "scan.hlo"
    path.write_text(MODULE)
    return CliRunner().invoke(cli, ["summary", str(path), *args])


def test_loop_body_branches_and_calls_are_rows_with_their_place(tmp_path) -> None:
    run = _summary(tmp_path, "--format", "json", "--no-group")
    assert run.exit_code == 0, run.output
    doc = json.loads(run.output)
    rows = {row["name"]: row for row in doc["rows"]}
    # the layer's matmul, in the loop body, runs 6 times
    dot = rows["layer_dot"]
    assert dot["where"] == "body of loop"
    assert dot["runs"] == 6
    # per run: 8x16 outputs each read a row of h (16) and a column of w (16):
    # h's 128 elements are read 16 times each, w's 256 elements 8 times each
    per_run = 128 * 16 + 256 * 8
    assert dot["total_reads_per_run"] == per_run
    assert dot["total_reads"] == 6 * per_run
    # the condition is evaluated once more than the body
    assert rows["lt"]["where"] == "condition of loop"
    assert rows["lt"]["runs"] == 7
    # each branch runs at most once; the call once
    assert rows["yes_neg"]["where"] == "true branch of branch"
    assert rows["no_exp"]["where"] == "false branch of branch"
    assert rows["yes_neg"]["runs_at_most"] is True
    assert rows["helper_abs"]["where"] == "called by called"
    assert rows["helper_abs"]["runs"] == 1
    assert rows["out"]["where"] == "entry"
    # the loop's matmul reads the most over the whole run: first by total
    assert doc["rows"][0]["name"] == "layer_dot"


def test_the_text_says_where_and_explains_its_counts(tmp_path) -> None:
    run = _summary(tmp_path)
    assert run.exit_code == 0, run.output
    lines = run.output.splitlines()
    assert lines[1].startswith(
        "rows: the 10 instructions that read memory in the entry computation, 1 loop body, "
        "1 loop condition, 2 conditional branches and 1 called computation"
    )
    dot = next(line for line in lines if line.startswith("layer_dot"))
    assert " x6 " in dot
    assert "body of loop" in dot
    totals = next(line for line in lines if line.startswith("totals over"))
    assert "each counted once" in totals
