"""Which instructions `hloidx maps` shows, and in which order: the entry computation first,
filters by glob, opcode and kind, and a filter that matches nothing is an error naming the
closest names (issue 13, points 2 and 3)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

import hloidx
from hloidx.cli.main import cli
from hloidx.hlo.selection import SelectionError, select_instructions

MODULE = """HloModule sel

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused_exp {
  p = f32[8,4] parameter(0)
  ROOT e = f32[8,4] exponential(p)
}

fused_sum {
  q = f32[8,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(q, z), dimensions={1}, to_apply=add
}

ENTRY main {
  a = f32[8,4] parameter(0)
  n = f32[8,4] negate(a)
  t = f32[4,8] transpose(n), dimensions={1,0}
  f1 = f32[8,4] fusion(n), kind=kLoop, calls=fused_exp
  ROOT f2 = f32[8] fusion(f1), kind=kInput, calls=fused_sum
}
"""


def _run(tmp_path, *args: str):
    path = tmp_path / "sel.hlo"
    path.write_text(MODULE)
    return CliRunner().invoke(cli, ["maps", str(path), "--no-verify", *args])


def _shown(output: str) -> list[str]:
    return re.findall(r"^(\S+) = ", output, flags=re.MULTILINE)


def test_text_shows_the_entry_computation_by_default(tmp_path) -> None:
    run = _run(tmp_path)
    assert run.exit_code == 0, run.output
    assert _shown(run.output) == ["n", "t", "f1", "f2"]
    assert "computation main" in run.output
    assert "no operands: a (parameter)" in run.output


def test_all_computations_puts_the_entry_first(tmp_path) -> None:
    run = _run(tmp_path, "--all-computations")
    headings = re.findall(r"^computation (\S+)", run.output, flags=re.MULTILINE)
    assert headings == ["main", "add", "fused_exp", "fused_sum"]
    assert "e" in _shown(run.output)


def test_json_has_every_computation_entry_first(tmp_path) -> None:
    doc = json.loads(_run(tmp_path, "--format", "json").output)
    computations = [i["computation"] for i in doc["instructions"]]
    assert computations[0] == "main"
    assert set(computations) == {"main", "add", "fused_exp", "fused_sum"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--computation", "%fused_exp"), ["e"]),
        (("--computation", "fused_*"), ["e", "r"]),
        (("--instruction", "f*"), ["f1", "f2"]),
        (("--instruction", "%t"), ["t"]),
        (("--opcode", "transpose", "--opcode", "negate"), ["n", "t"]),
        (("--kind", "fusion"), ["f1", "f2"]),
        (("--kind", "entry", "--opcode", "fusion"), ["f1", "f2"]),
    ],
)
def test_filters(tmp_path, args, expected) -> None:
    run = _run(tmp_path, *args)
    assert run.exit_code == 0, run.output
    assert _shown(run.output) == expected


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (("--computation", "fused_ex"), "did you mean fused_exp"),
        (("--computation", "nosuch"), "no computation matches 'nosuch'"),
        (("--instruction", "f3"), "did you mean f2, f1"),
        (("--opcode", "transpos"), "did you mean transpose"),
        (("--computation", "add", "--kind", "fusion"), "match no instruction"),
    ],
)
def test_a_filter_that_matches_nothing_is_an_error(tmp_path, args, hint) -> None:
    run = _run(tmp_path, *args)
    assert run.exit_code == 2
    assert hint in run.output


def test_hide_trivial_drops_identity_operands(tmp_path) -> None:
    run = _run(tmp_path, "--hide-trivial")
    # n reads a element for element: gone; t (a transpose) and the fusions stay
    assert _shown(run.output) == ["t", "f2"]


def test_selection_is_a_library_function() -> None:
    module = hloidx.parse_hlo(MODULE)
    names = [i.name for i in select_instructions(module, kind="fusion")]
    assert names == ["f1", "f2"]
    with pytest.raises(SelectionError) as caught:
        select_instructions(module, computations=["fused_sun"])
    assert caught.value.close == ["fused_sum", "fused_exp"]
