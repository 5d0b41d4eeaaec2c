"""XLA's single-instruction forms (issue 28): operands written as shapes alone, an instruction
without a name, computations written inline after ``calls=``, ``condition=``, ``body=``,
``to_apply=``, ``branch_computations=``.

What XLA's own tests assert of them (``xla/hlo/parser/hlo_parser_test.cc``, the
``HloParserSingleOpTest`` cases in ``tests/data/xla/parser/modules.json``) is checked on the
module hloidx builds; the maps of such modules are checked against the provenance oracle
(``hloidx/check/``), not against themselves; every malformed variant is a located error
(exit 2 through the CLI), every cut-off prefix too.
"""

from __future__ import annotations

import json
import re

import paths
import pytest
from click.testing import CliRunner

from hloidx.check.evidence import oracle_check
from hloidx.check.expectations import FileResult, _analyse
from hloidx.cli.main import cli
from hloidx.errors import HloidxError
from hloidx.hlo.ir import CALL_ATTRIBUTES
from hloidx.hlo.line_parser import parse_lines
from hloidx.hlo.printer import format_module
from hloidx.hlo.syntax import parse_hlo
from hloidx.source import Source
from hloidx.stablehlo import parse_module_lenient

SUITE = json.loads((paths.XLA_TESTS / "parser" / "modules.json").read_text(encoding="utf-8"))
XLA = {e["name"].removeprefix("HloParserSingleOpTest_"): e["text"] for e in SUITE["modules"]}


def _operand_kinds(instruction) -> list[tuple[str, str | None]]:
    return [(o.opcode, o.literal) for o in instruction.operands]


# -- what XLA's tests assert --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["SingleOpNoNames", "CanonicalOp"])
def test_bare_shape_operands_become_parameters_named_by_position(name: str) -> None:
    module = parse_hlo(XLA[name], verify=False)
    root = module.entry.root
    # XLA: GmockMatch(m::Multiply(m::Parameter(0), m::Parameter(1))); its parser names an
    # operand without a name `_` and its parameter number
    assert root.opcode == "multiply"
    assert _operand_kinds(root) == [("parameter", "0"), ("parameter", "1")]
    assert [o.name for o in root.operands] == ["_0", "_1"]
    assert [str(o.shape) for o in root.operands] == ["f32[2,4]{1,0}"] * 2
    assert root.name == "multiply"  # given, or (CanonicalOp) generated from the opcode


def test_named_and_bare_operands_share_the_parameter_numbers() -> None:
    # XLA counts parameters as it creates them: `_1` is the second, whatever the first's name
    module = parse_hlo("f32[2] add(f32[2] x, f32[2])")
    assert [(o.name, o.literal) for o in module.entry.root.operands] == [("x", "0"), ("_1", "1")]
    # a name used twice is one parameter
    module = parse_hlo("f32[2] add(f32[2] x, f32[2] x)")
    assert [(o.name, o.literal) for o in module.entry.root.operands] == [("x", "0"), ("x", "0")]
    # the generated instruction name avoids an operand's name
    module = parse_hlo("f32[2] add(f32[2] add, f32[2])")
    assert module.entry.root.name == "add.1"


def test_anonymous_instructions_inside_the_single_instruction_read_bare_shapes_too() -> None:
    module = parse_hlo("f32[3] add(f32[3] multiply(f32[3], f32[3]), f32[3])")
    assert [(i.name, i.opcode, i.literal) for i in module.entry.instructions] == [
        ("_0", "parameter", "0"),
        ("_1", "parameter", "1"),
        ("_2", "parameter", "2"),
        ("multiply.anon", "multiply", None),
        ("add", "add", None),
    ]
    assert [o.name for o in module.entry.root.operands] == ["multiply.anon", "_2"]


def test_single_op_with_nested_fusion() -> None:
    module = parse_hlo(XLA["SingleOpWithNested"], verify=False)
    fusion = module.entry.root
    assert (fusion.opcode, len(fusion.operands)) == ("fusion", 2)
    assert _operand_kinds(fusion) == [("parameter", "0"), ("parameter", "1")]
    called = module.computations[fusion.attributes["calls"]]
    assert [i.name for i in called.instructions] == ["param_0", "param_1", "broadcast", "subtract"]
    assert called.root.opcode == "subtract"
    assert fusion.called_computations == {"calls": [called]}


def test_canonical_while_with_nested_fusions() -> None:
    module = parse_hlo(XLA["CanonicalOpWithNested"], verify=False)
    loop = module.entry.root
    assert loop.opcode == "while"
    assert _operand_kinds(loop) == [("parameter", "0")]
    for key in ("condition", "body"):
        called = module.computations[loop.attributes[key]]
        assert [i.name for i in called.instructions] == ["tmp_0", "tmp_1", "tmp_2"]
        fusion = called.root
        inner = module.computations[fusion.attributes["calls"]]
        assert [i.opcode for i in inner.instructions] == [
            "parameter",
            "parameter",
            "transpose",
            "dot",
        ]
        # the inner body's names are its own: tmp_2 is its transpose, not the fusion outside
        assert inner.root.operands[1].opcode == "transpose"
    # five computations, the entry last; the inline ones named uniquely
    assert len(module.computations) == 5
    assert module.entry is list(module.computations.values())[-1]


def test_canonical_conditional_with_inline_branches() -> None:
    module = parse_hlo(XLA["CanonicalOpIndexedConditionalInlinedBranches"], verify=False)
    conditional = module.entry.root
    assert [str(o.shape) for o in conditional.operands] == ["s32[]"] + ["f32[5,10]{1,0}"] * 3
    branches = conditional.called_computations["branch_computations"]
    assert [b.root.opcode for b in branches] == ["ceil", "floor", "copy"]


def test_a_list_may_mix_named_and_inline_computations() -> None:
    text = (
        "HloModule m\na {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] copy(p)\n}\n"
        "ENTRY e {\n  s = s32[] parameter(0)\n  x = f32[2] parameter(1)\n"
        "  ROOT c = f32[2] conditional(s, x, x), branch_computations={%a, {\n"
        "    p = f32[2] parameter(0)\n    ROOT n = f32[2] negate(p)\n  }}\n}\n"
    )
    module = parse_hlo(text)
    branches = module.entry.root.called_computations["branch_computations"]
    assert next(b.name for b in branches) == "a"
    assert branches[1].root.opcode == "negate"


def test_inline_computations_in_a_module_take_names_no_other_computation_has() -> None:
    # XLA reads a computation written inline in a whole module too; the name generated for
    # it must not be one the module defines later
    text = (
        "HloModule m\nENTRY e {\n  a = f32[2]{0} parameter(0)\n"
        "  ROOT f = f32[2]{0} fusion(a), kind=kLoop, calls=\n  {\n"
        "    p = f32[2]{0} parameter(0)\n    ROOT n = f32[2]{0} negate(p)\n  }\n}\n"
        "f.calls {\n  q = f32[2]{0} parameter(0)\n  ROOT c = f32[2]{0} copy(q)\n}\n"
    )
    module = parse_hlo(text)
    called = module.computations[module.entry.root.attributes["calls"]]
    assert called.name != "f.calls"
    assert called.root.opcode == "negate"
    assert module.computations["f.calls"].root.opcode == "copy"
    assert module.entry.name == "e"


def test_anonymous_operands_stay_with_their_instruction_around_an_inline_body() -> None:
    text = (
        "f32[4]{0} reduce(f32[4,8]{1,0} negate(f32[4,8]{1,0}), f32[] constant(0)), "
        "dimensions={1}, to_apply=\n{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, multiply(a, b))\n}\n"
    )
    module = parse_hlo(text)
    assert [i.name for i in module.entry.instructions] == [
        "_0",
        "negate.anon",
        "constant.anon",
        "reduce",
    ]
    reducer = module.computations[module.entry.root.attributes["to_apply"]]
    assert [i.name for i in reducer.instructions] == ["a", "b", "multiply.anon", "s"]


def test_the_line_parser_leaves_these_forms_to_the_grammar() -> None:
    for name in ("SingleOpNoNames", "CanonicalOp", "SingleOpWithNested"):
        assert parse_lines(XLA[name], Source("x", XLA[name])) is None
    one_line = (
        "ENTRY e {\n  a = f32[2]{0} parameter(0)\n  ROOT f = f32[2]{0} fusion(a), kind=kLoop, "
        "calls={ p = f32[2]{0} parameter(0) ROOT n = f32[2]{0} negate(p) }\n}\n"
    )
    assert parse_lines(one_line, Source("x", one_line)) is None
    module = parse_hlo(one_line)
    assert module.computations[module.entry.root.attributes["calls"]].root.opcode == "negate"


@pytest.mark.parametrize(
    "name", ["CanonicalOp", "CanonicalOpWithNested", "CanonicalOpIndexedConditionalInlinedBranches"]
)
def test_lark_alone_reads_them_as_the_fast_path_does(name: str, monkeypatch) -> None:
    from hloidx.hlo import syntax

    fast = format_module(parse_hlo(XLA[name], verify=False))
    monkeypatch.setattr(syntax, "_fast_parser", lambda: None)
    assert format_module(parse_hlo(XLA[name], verify=False)) == fast


def test_the_grammar_names_the_call_attributes_of_the_ir() -> None:
    grammar = (paths.ROOT / "grammars" / "hlo.lark").read_text(encoding="utf-8")
    listed = re.findall(r"\(\?:(calls\|[\w|]+)\)", grammar)
    assert listed
    assert all(keys.split("|") == list(CALL_ATTRIBUTES) for keys in listed)


# -- the oracle ---------------------------------------------------------------------------------

ORACLE_MODULES = {
    "multiply": "f32[2,4]{1,0} multiply(f32[2,4]{1,0}, f32[2,4]{1,0})\n",
    "fusion": """f32[3,2]{1,0} fusion(f32[2,3]{1,0}, f32[2]{0}), kind=kLoop, calls=
{
  p0 = f32[2,3]{1,0} parameter(0)
  p1 = f32[2]{0} parameter(1)
  t = f32[3,2]{1,0} transpose(p0), dimensions={1,0}
  b = f32[3,2]{1,0} broadcast(p1), dimensions={1}
  ROOT a = f32[3,2]{1,0} add(t, b)
}
""",
    "reduce": """reduce = f32[4]{0} reduce(f32[4,8]{1,0} x, f32[] init), dimensions={1}, to_apply=
{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
""",
    "while": """(s32[], f32[4]{0}) while((s32[], f32[4]{0})), condition=
{
  p = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}, body=
{
  p = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[4]{0} get-tuple-element(p), index=1
  y = f32[4]{0} fusion(x), kind=kLoop, calls=
  {
    q = f32[4]{0} parameter(0)
    ROOT r = f32[4]{0} reverse(q), dimensions={0}
  }
  ROOT t = (s32[], f32[4]{0}) tuple(j, y)
}
""",
    "conditional": """f32[5,10]{1,0} conditional(s32[], f32[5,10]{1,0}, f32[10,5]{1,0}, f32[5,20]{1,0}), branch_computations={
{
  tmp_0 = f32[5,10]{1,0} parameter(0)
  ROOT tmp_1 = f32[5,10]{1,0} ceil(f32[5,10]{1,0} tmp_0)
},
{
  tmp_0 = f32[10,5]{1,0} parameter(0)
  ROOT tmp_1 = f32[5,10]{1,0} transpose(f32[10,5]{1,0} tmp_0), dimensions={1,0}
},
{
  tmp_0 = f32[5,20]{1,0} parameter(0)
  ROOT tmp_1 = f32[5,10]{1,0} slice(f32[5,20]{1,0} tmp_0), slice={[0:5], [0:20:2]}
}
}
""",
}

#: what the oracle must confirm in each (opcode: how many); while has no indexing rule (as in
#: XLA's indexing analysis): its maps are UNDEFINED, and what runs inside it is checked
CONFIRMED = {
    "multiply": {"multiply": 1},
    "fusion": {"fusion": 1, "transpose": 1, "broadcast": 1, "add": 1},
    "reduce": {"reduce": 1, "add": 1},
    "while": {
        "get-tuple-element": 3,
        "compare": 1,
        "add": 1,
        "fusion": 1,
        "reverse": 1,
        "tuple": 1,
    },
    "conditional": {"conditional": 1, "ceil": 1, "transpose": 1, "slice": 1},
}


@pytest.mark.parametrize("name", sorted(ORACLE_MODULES))
def test_maps_of_single_instruction_modules_agree_with_the_oracle(name: str, tmp_path) -> None:
    path = tmp_path / f"{name}.hlo"
    path.write_text(ORACLE_MODULES[name], encoding="utf-8")
    result = FileResult(str(path))
    analysed = _analyse(str(path), result)
    assert analysed is not None
    assert not result.errors
    assert not result.refuted
    confirmed: dict[str, int] = {}
    for computation in analysed.module.computations.values():
        for instruction in computation.instructions:
            if instruction.opcode in ("parameter", "constant"):
                continue
            outcome = oracle_check(instruction, analysed.by_instruction[id(instruction)])
            if instruction.opcode == "while":
                assert not outcome.agrees
                continue
            assert outcome.agrees, (instruction.name, outcome)
            confirmed[instruction.opcode] = confirmed.get(instruction.opcode, 0) + 1
    assert confirmed == CONFIRMED[name]


@pytest.mark.parametrize("name", ["multiply", "fusion", "conditional"])
def test_hloidx_check_confirms_and_then_matches_the_maps(name: str, tmp_path) -> None:
    path = tmp_path / f"{name}.hlo"
    path.write_text(ORACLE_MODULES[name], encoding="utf-8")
    runner = CliRunner()
    # --update writes an expectation only where the oracle confirms every map
    created = runner.invoke(cli, ["check", "--update", "-q", str(path)])
    assert created.exit_code == 0, created.output
    expected = (tmp_path / f"{name}.expected").read_text(encoding="utf-8")
    assert f"instruction {name}" in expected
    assert "output_to_input" in expected
    checked = runner.invoke(cli, ["check", "-q", "--format", "json", str(path)])
    assert checked.exit_code == 0, checked.output
    summary = json.loads(checked.stdout)["summary"]
    assert summary["problems"] == 0, summary
    assert summary["ok"] == 1, summary
    assert json.loads(checked.stdout)["files"][0]["mismatches"] == []
    maps = runner.invoke(cli, ["maps", str(path), "--format", "json"])
    assert maps.exit_code == 0, maps.output


def test_the_inline_fusion_reads_as_the_same_module_written_with_names() -> None:
    named = (
        "HloModule m\nf {\n  p0 = f32[2,3]{1,0} parameter(0)\n  p1 = f32[2]{0} parameter(1)\n"
        "  t = f32[3,2]{1,0} transpose(p0), dimensions={1,0}\n"
        "  b = f32[3,2]{1,0} broadcast(p1), dimensions={1}\n  ROOT a = f32[3,2]{1,0} add(t, b)\n}\n"
        "ENTRY e {\n  x = f32[2,3]{1,0} parameter(0)\n  y = f32[2]{0} parameter(1)\n"
        "  ROOT fusion = f32[3,2]{1,0} fusion(x, y), kind=kLoop, calls=f\n}\n"
    )
    inline = parse_hlo(ORACLE_MODULES["fusion"])
    written = parse_hlo(named)
    body = format_module(inline).split("ENTRY")[0].replace("fusion.calls", "f")
    assert body == format_module(written).split("ENTRY")[0].replace(
        "HloModule m", "HloModule snippet"
    )


# -- located errors ----------------------------------------------------------------------------

FUSION_HEAD = "f32[2]{0} fusion(f32[2]{0}), kind=kLoop, calls="
BODY = "\n{\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(p)\n}\n"

#: (text, the line:column of the error, a piece of its message)
BAD = {
    "unclosed body": (FUSION_HEAD + BODY[:-3], "4:31", "expected ROOT, '}'"),
    "attribute without value at end of file": (FUSION_HEAD, "1:42", "attribute calls"),
    "body opened at end of file": (FUSION_HEAD + "\n{", "2:2", "end of the input"),
    "list cut after a body": (
        "f32[2]{0} conditional(s32[], f32[2]{0}), branch_computations={" + BODY.rstrip() + ",",
        "5:3",
        "'{'",
    ),
    "empty body": (FUSION_HEAD + "\n{\n}\n", "2:1", "names no computation"),
    "bare shape in a list of instructions": (
        "p = f32[2] parameter(0)\nROOT a = f32[2] add(p, f32[2])\n",
        "2:24",
        "shape without a name",
    ),
    "bare shape in a module": (
        "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, f32[2])\n}\n",
        "4:26",
        "shape without a name",
    ),
    "bare tuple shape in a list of instructions": (
        "p = f32[2] parameter(0)\nROOT a = (f32[2]) tuple((f32[2]))\n",
        "2:19",
        "shape without a name",
    ),
    "bare shape inside an inline body": (
        FUSION_HEAD + BODY.replace("negate(p)", "negate(f32[2]{0})"),
        "4:29",
        "shape without a name",
    ),
    "unnamed instruction inside an inline body": (
        FUSION_HEAD + BODY.replace("ROOT n = ", ""),
        "4:3",
        "expected ROOT",
    ),
    "inline body reads a name from outside": (
        "f32[2]{0} fusion(f32[2]{0} a), kind=kLoop, calls="
        + BODY.replace("negate(p)", "negate(a)"),
        "4:29",
        "operand a of n names no instruction in computation fusion.calls",
    ),
    "unnamed instruction after a module header": (
        "HloModule m\nf32[2] add(f32[2], f32[2])\n",
        "2:4",
        "unexpected",
    ),
    "two unnamed instructions": (
        "f32[2] add(f32[2], f32[2])\nf32[2] add(f32[2], f32[2])\n",
        "2:1",
        "unexpected 'f32[2]'",
    ),
    "attribute given twice, once inline": (
        FUSION_HEAD + "%c, calls=" + BODY,
        "1:52",
        "attribute calls given twice",
    ),
    "a generated name called by another instruction": (
        "HloModule m\nENTRY e {\n  a = f32[2]{0} parameter(0)\n"
        "  f = f32[2]{0} fusion(a), kind=kLoop, calls=\n  {\n    p = f32[2]{0} parameter(0)\n"
        "    ROOT n = f32[2]{0} negate(p)\n  }\n"
        "  ROOT g = f32[2]{0} fusion(f), kind=kLoop, calls=f.calls\n}\n",
        "9:51",
        "which does not exist",
    ),
    "no shape before the opcode": ("multiply(f32[2] a, f32[2] b)\n", "1:13", "unexpected"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_forms_are_located_errors_exit_2(case: str, tmp_path) -> None:
    text, where, message = BAD[case]
    with pytest.raises(HloidxError) as caught:
        parse_hlo(text, "bad.hlo")
    span = caught.value.span
    assert f"{span.line}:{span.column}" == where, caught.value
    assert message in str(caught.value)
    path = tmp_path / "bad.hlo"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["maps", str(path)])
    assert result.exit_code == 2, result.output
    # (the CLI reads leniently: its first error may be another piece's, located all the same)
    assert re.search(r"bad\.hlo:\d+:\d+", result.stderr)
    assert "^" in result.stderr
    assert "Traceback" not in result.output + result.stderr


@pytest.mark.parametrize(
    "name",
    [
        "SingleOpWithNested_DoesNotExist",
        "SingleOpWithNested_NoLhs",
        "SingleOpWithNested_NoOperandName",
        "SingleOpNoShapeProducesError",
        "SingleOpNoOperandShapesProducesError",
    ],
)
def test_what_xla_rejects_exits_2_located(name: str, tmp_path) -> None:
    path = tmp_path / f"{name}.hlo"
    path.write_text(XLA[name], encoding="utf-8")
    result = CliRunner().invoke(cli, ["maps", str(path)])
    assert result.exit_code == 2, result.output
    assert re.search(rf"{re.escape(path.name)}:\d+:\d+", result.stderr)
    assert "Traceback" not in result.output + result.stderr


def _prefixes(text: str) -> list[int]:
    """Every line end and every offset just after a separator or a brace."""
    cuts = {i for i, c in enumerate(text) if c == "\n"} | {len(text)}
    cuts |= {i + 1 for i, c in enumerate(text) if c in ",({})=[] "}
    return sorted(cuts)


CUT_SAMPLES = {
    **{
        n: XLA[n] for n in ("CanonicalOpWithNested", "CanonicalOpIndexedConditionalInlinedBranches")
    },
    "while": ORACLE_MODULES["while"],
}


@pytest.mark.parametrize("name", sorted(CUT_SAMPLES))
def test_every_cut_off_prefix_is_a_module_or_located_errors(name: str) -> None:
    text = CUT_SAMPLES[name]
    for cut in _prefixes(text):
        module, errors = parse_module_lenient(text[:cut], "cut.hlo")  # never raises
        assert all(e.span is not None for e in errors), (cut, [str(e) for e in errors])
        assert module is not None or errors, cut


def test_a_file_cut_inside_an_inline_body_exits_2(tmp_path) -> None:
    text = XLA["CanonicalOpWithNested"]
    runner = CliRunner()
    for marker in ("calls=\n  {\n", "condition=\n{", "}, body="):
        path = tmp_path / "cut.hlo"
        path.write_text(text[: text.index(marker) + len(marker)], encoding="utf-8")
        result = runner.invoke(cli, ["maps", str(path)])
        assert result.exit_code == 2, (marker, result.output)
        assert re.search(r"cut\.hlo:\d+:\d+", result.stderr)
        assert "Traceback" not in result.output + result.stderr
