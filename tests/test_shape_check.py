"""XLA's shape rules: the invalid modules of issue 12 are located errors, valid ones are not.

Each case is checked against what XLA's shape inference says (written out in the comment);
`tests/test_mutations.py` covers hundreds of generated ones, cross-checked with XLA itself.
"""

from __future__ import annotations

import json

import paths
import pytest
from click.testing import CliRunner

import hloidx
from hloidx.cli import cli
from hloidx.errors import HloSemanticError
from hloidx.hlo.syntax import parse_hlo_lenient

TEMPLATE = """HloModule m
add {{
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}}
ENTRY e {{
  p0 = f32[4,6] parameter(0)
  ok = f32[4,6] negate(p0)
  {bad}
  ROOT r = f32[4,6] add(p0, ok)
}}
"""

INVALID = [
    # transpose dimensions={0,1} keeps [4,6]; the result says [6,4]
    ("t = f32[6,4] transpose(p0), dimensions={0,1}", "does not match [4,6]"),
    # a slice cannot run past the 4 rows of p0
    ("s = f32[8,6] slice(p0), slice={[0:8], [0:6]}", "does not fit dimension 0"),
    # 24 elements cannot become 25
    ("x = f32[25] reshape(p0)", "changes the number of elements"),
    # p0 has 2 dimensions; dimension 5 does not exist in a rank-3 result
    ("b = f32[4,6,3] broadcast(p0), dimensions={0,5}", "out of range"),
    # a 2x1 window with stride 1 over [4,6] gives [3,6], not [2,6]
    (
        "c = f32[] constant(0)\n  rw = f32[2,6] reduce-window(p0, c), window={size=2x1}, "
        "to_apply=add",
        "what the window gives",
    ),
    # XLA has no opcode `multipy`
    ("m = f32[4,6] multipy(p0, p0)", "unknown opcode"),
    # add takes two operands
    ("a1 = f32[4,6] add(p0)", "takes 2 operands"),
]


@pytest.mark.parametrize(("bad", "message"), INVALID, ids=[m for _, m in INVALID])
def test_invalid_instruction_is_a_located_error_and_the_rest_is_analysed(
    tmp_path, bad: str, message: str
) -> None:
    path = tmp_path / "bad.hlo"
    text = TEMPLATE.format(bad=bad)
    path.write_text(text)
    bad_line = text.splitlines().index("  " + bad.splitlines()[-1].strip()) + 1
    result = CliRunner().invoke(cli, ["maps", str(path), "--format", "json"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    (error,) = doc["errors"]
    assert error["line"] == bad_line
    assert message in error["message"]
    assert error["location"].startswith(str(path))
    assert {i["name"] for i in doc["instructions"]} >= {"p0", "ok", "r"}
    text_run = CliRunner().invoke(cli, ["maps", str(path)])
    assert text_run.exit_code == 2
    assert text_run.stderr.count(error["message"]) == 1  # said once, with its location
    assert f"bad.hlo:{bad_line}:" in text_run.stderr
    assert "Traceback" not in text_run.output


def test_strict_parse_raises_at_the_first_violation() -> None:
    with pytest.raises(HloSemanticError) as caught:
        hloidx.parse_hlo(TEMPLATE.format(bad="t = f32[6,4] transpose(p0), dimensions={0,1}"))
    assert caught.value.span.line == 10


def test_opcode_xla_has_without_a_rule_is_valid() -> None:
    text = TEMPLATE.format(bad='cc = f32[4,6] custom-call(p0), custom_call_target="foo"')
    module, errors = parse_hlo_lenient(text)
    assert errors == []
    assert "cc" in {i.name for i in module.instructions()}


def _valid_modules() -> list[tuple[str, str]]:
    files = sorted(paths.CORPUS.glob("*.hlo")) + sorted(paths.SAMPLES.rglob("*.hlo"))
    out = [(p.name, p.read_text(encoding="utf-8")) for p in files]
    cases = json.loads((paths.XLA_TESTS / "analysis_cases.json").read_text(encoding="utf-8"))
    out += [(c["test"], c["hlo"]) for c in cases if c.get("hlo")]
    return out


def test_no_valid_module_is_rejected() -> None:
    # False positives are as bad as misses: every module XLA printed or tests is accepted.
    modules = _valid_modules()
    assert len(modules) >= 140
    for name, text in modules:
        _, errors = parse_hlo_lenient(text, name)
        assert errors == [], (name, [e.render() for e in errors][:2])


@pytest.mark.parametrize(
    "text",
    [
        # white space between the element type and the dimensions (XLA's coalescing tests)
        "p = s32 [5696,10,4] parameter(0)\nROOT n = s32[5696,10,4] negate(p)",
        # replica groups as a device mesh, an iota list with a transpose, nested brackets
        "p = f32[8] parameter(0)\nROOT n = f32[8] negate(p), replica_groups=[2,4]<=[8], "
        "mesh=[2,4]<=[4,2]T(1,0), groups=[[0,1],[2,3]], odd=f(g(1),2)",
    ],
)
def test_syntax_xla_accepts_is_accepted(text: str) -> None:
    module = hloidx.parse_hlo(text)
    assert module.entry.root.opcode == "negate"
