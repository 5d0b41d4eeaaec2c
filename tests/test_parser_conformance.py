"""XLA's own parser tests as a conformance suite (``tests/data/xla/parser/``).

Every module XLA's parser accepts parses (verified as XLA's test verifies it) and comes back
from hloidx's printer as a module with the same computations, instructions, opcodes, shapes
and operands. Every module XLA's test expects rejected is rejected with a located error,
except the ones listed below with the reason hloidx accepts them.
"""

from __future__ import annotations

import json

import paths
import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.errors import HloidxError
from hloidx.hlo.ir import HloModule
from hloidx.hlo.printer import format_module
from hloidx.hlo.syntax import parse_hlo

SUITE = json.loads((paths.XLA_TESTS / "parser" / "modules.json").read_text(encoding="utf-8"))
MODULES = {entry["name"]: entry for entry in SUITE["modules"]}

#: Rejected by XLA, accepted by hloidx, with the reason; the README of the data lists them too.
#: (Attributes hloidx keeps as raw text are still checked as XLA checks them:
#: ``hloidx/hlo/attribute_checks.py``.)
ACCEPTED_THOUGH_XLA_REJECTS = {
    # XLA's single-instruction entry point: two instructions given where one is expected
    "HloParserSingleOpTest_MultipleOpsProducesError": "a list of instructions is a module here",
}


def _accepted() -> list[str]:
    return sorted(n for n, e in MODULES.items() if e["expect"] == "accept")


def _rejected() -> list[str]:
    return sorted(
        n
        for n, e in MODULES.items()
        if e["expect"] == "reject" and n not in ACCEPTED_THOUGH_XLA_REJECTS
    )


def _outline(module: HloModule) -> list[tuple]:
    """What the round trip must keep: per computation, each instruction's name, opcode,
    shape, operands, literal and ROOT mark."""
    return [
        (
            computation.name,
            computation.is_entry,
            [
                (i.name, i.opcode, i.shape, [o.name for o in i.operands], i.literal, i.is_root)
                for i in computation.instructions
            ],
        )
        for computation in module.computations.values()
    ]


def test_suite_holds_xla_s_modules() -> None:
    assert SUITE["commit"] == "1e203b533f9702298d8b17ef1281e880132614bf"
    accepted = [e for e in MODULES.values() if e["expect"] == "accept"]
    assert len(accepted) >= 240
    assert len(MODULES) - len(accepted) >= 80
    # every name listed as an exception is in the suite, with the outcome the list assumes
    assert set(ACCEPTED_THOUGH_XLA_REJECTS) <= {
        n for n, e in MODULES.items() if e["expect"] == "reject"
    }


@pytest.mark.parametrize("name", _accepted())
def test_xla_accepted_module_parses_and_round_trips(name: str) -> None:
    entry = MODULES[name]
    module = parse_hlo(entry["text"], name, verify=entry["verified"])
    printed = format_module(module)
    again = parse_hlo(printed, name + ".printed", verify=entry["verified"])
    assert _outline(again) == _outline(module)
    assert format_module(again) == printed


@pytest.mark.parametrize("name", _rejected())
def test_xla_rejected_module_is_rejected_with_a_location(name: str) -> None:
    with pytest.raises(HloidxError) as caught:
        parse_hlo(MODULES[name]["text"], name)
    assert caught.value.span is not None, caught.value


@pytest.mark.parametrize("name", sorted(ACCEPTED_THOUGH_XLA_REJECTS))
def test_listed_exceptions_are_still_accepted(name: str) -> None:
    # When one starts to be rejected, it leaves the list (the list must stay true).
    parse_hlo(MODULES[name]["text"], name)


@pytest.mark.parametrize(
    "name",
    [
        "OperandNotFound",
        "MultipleRoots",
        "LiteralDimensionsError",
        "UnterminatedComment",
        "ComputationExists",
        "CheckIndexedConditionalDimension",
    ],
)
def test_rejected_module_exits_2_with_file_line_column(name: str, tmp_path) -> None:
    path = tmp_path / f"{name}.hlo"
    path.write_text(MODULES[name]["text"], encoding="utf-8")
    result = CliRunner().invoke(cli, ["maps", str(path), "--format", "json"])
    assert result.exit_code == 2, result.output
    assert f"{path.name}:" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_nested_instructions_become_instructions_named_as_xla_names_them() -> None:
    module = parse_hlo(MODULES["SimpleNesting"]["text"])
    entry = module.entry
    assert [i.name for i in entry.instructions] == [
        "parameter.anon",
        "parameter.anon.1",
        "parameter.anon.2",
        "multiply.anon",
        "root",
    ]
    assert str(entry.root.shape) == "f32[10]"
    assert [o.name for o in entry.root.operands] == ["parameter.anon", "multiply.anon"]


def test_inferred_shapes_are_xla_s() -> None:
    # XLA's expected output for these is in its tests: the shapes it infers
    dot = parse_hlo(MODULES["InferDotShape"]["text"]).entry.root
    assert str(dot.shape) == "f32[2]"
    select = parse_hlo(MODULES["InferTernaryShape"]["text"]).entry.root
    assert str(select.shape) == "s32[]"
    get = parse_hlo(MODULES["InferTupleShape"]["text"]).entry.root
    assert str(get.shape) == "s32[2,3]{1,0}"
    conditional = parse_hlo(MODULES["InferShapeMixedExplicitShape"]["text"]).entry.root
    assert str(conditional.shape) == "f32[]"


# A module as a current XLA prints it (jax.jit over a 2-device mesh): every line in XLA's
# layout, so the line parser must read it, and the grammar must read it the same way.
SHARDED = """HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[8]{0}}

region_0.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main.2 {
  p = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}
  z = c64[] constant((0, 0))
  k = f32[2,1,1,1]{3,2,1,0} constant({ { /*i0=0*/ { /*i1=0*/ {1} } }, { /*i0=1*/ { /*i1=0*/ {2} } } })
  e = f32[2,0,4,3]{3,2,1,0} constant({ { /*i0=0*/ }, { /*i0=1*/ } })
  t = (f32[2,1]{1,0}, f32[2]{0}) constant(( { {1}, {2} }, {2, 42} ))
  c = f32[1,2,3]{2,1,0} custom-call(p), custom_call_target="foo", literal=s32[2]{0} {1, 2}
  ROOT ar = f32[8]{0} all-reduce(p), channel_id=1, replica_groups=mesh['axis_0'=2,'axis_1'=1] {'axis_0'}, use_global_device_ids=true, to_apply=region_0.1
}
"""


def test_current_xla_output_is_read_by_the_line_parser_as_by_the_grammar(monkeypatch) -> None:
    from hloidx.hlo import syntax
    from hloidx.hlo.line_parser import parse_lines
    from hloidx.source import Source

    assert parse_lines(SHARDED, Source("sharded.hlo", SHARDED)) is not None
    by_lines = parse_hlo(SHARDED, "sharded.hlo")
    monkeypatch.setattr(syntax, "_whole_lines", lambda text, source: None)
    by_grammar = parse_hlo(SHARDED, "sharded.hlo")
    assert _outline(by_lines) == _outline(by_grammar)
    root = by_lines.entry.root
    assert root.attributes["replica_groups"] == "mesh['axis_0'=2,'axis_1'=1] {'axis_0'}"
    assert root.attributes["to_apply"] == "region_0.1"  # the next attribute is still its own
    call = next(i for i in by_lines.instructions() if i.name == "c")
    assert call.attributes["literal"] == "s32[2]{0} {1, 2}"


@pytest.mark.parametrize(
    ("literal", "shape"),
    [
        ("{1,{2}}", "f32[2]"),  # XLA's LiteralDimensionsMismatch_1
        ("{1, 2, 3, 4, 5, 6}", "f32[2,3]"),  # _2: flat where two levels are due
        ("{ { /*i0=0*/ {1, 2} }, { /*i0=1*/ {3, 4} } }", "f32[2,1,3]"),  # counts differ
    ],
)
def test_a_literal_nested_unlike_its_shape_is_located(literal: str, shape: str) -> None:
    text = f"ENTRY e {{\n  ROOT c = {shape} constant({literal})\n}}\n"
    with pytest.raises(HloidxError) as caught:
        parse_hlo(text, "c.hlo", verify=False)
    # at the literal: after `  ROOT c = `, the shape and ` constant(`
    assert (caught.value.span.line, caught.value.span.column) == (2, 22 + len(shape))


def test_lenient_parse_infers_shapes_around_a_broken_instruction() -> None:
    from hloidx.hlo.syntax import parse_hlo_lenient

    text = (
        "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = add(a, a)\n"
        "  c = f32[2] bad-op((\n  ROOT d = multiply(b, b)\n}\n"
    )
    module, errors = parse_hlo_lenient(text, "x.hlo")
    assert [(i.name, str(i.shape)) for i in module.instructions()] == [
        ("a", "f32[2]"),
        ("b", "f32[2]"),
        ("d", "f32[2]"),
    ]
    assert [(e.span.line, e.span.column) for e in errors] == [(5, 22)]
    # a shape that cannot be inferred drops the instruction (and what reads it), located
    module, errors = parse_hlo_lenient(text.replace("add(a, a)", "reshape(a)"), "x.hlo")
    assert [i.name for i in module.instructions()] == ["a"]
    assert (errors[0].span.line, errors[0].span.column) == (4, 7)


def test_lenient_recovery_names_anonymous_instructions_once() -> None:
    from hloidx.hlo.syntax import parse_hlo_lenient

    text = (
        "HloModule m\nENTRY e {\n  a = add(f32[2] parameter(0), f32[2] parameter(1))\n"
        "  c = f32[2] bad-op((\n  ROOT d = add(a, multiply(f32[2] parameter(2), a))\n}\n"
    )
    module, errors = parse_hlo_lenient(text, "x.hlo")
    assert [i.name for i in module.instructions()] == [
        "parameter.anon",
        "parameter.anon.1",
        "a",
        "parameter.anon.2",
        "multiply.anon",
        "d",
    ]
    assert len(errors) == 1


@pytest.mark.parametrize(
    ("literal", "shape", "accepted"),
    [
        ("-nan(0x400001)", "f32[]", True),
        ("-nan(0x7fc00001)", "f32[]", False),  # wider than f32's 23 mantissa bits
        ("{-nan(0x7f), nan}", "bf16[2]", True),
        ("{nan(0x1)}", "f8e4m3fn[1]", False),  # no payloads at all
        ("4294967295", "u32[]", True),
        ("-1", "u64[]", True),  # XLA reads u64 literals as int64 too
        ("-65505", "bf16[]", True),
        ("65519", "f16[]", True),  # rounds to 65504
        ("65520", "f16[]", False),  # rounds to infinity
    ],
)
def test_literal_values_must_fit_the_element_type(literal: str, shape: str, accepted: bool) -> None:
    text = f"ENTRY e {{\n  ROOT c = {shape} constant({literal})\n}}\n"
    if accepted:
        parse_hlo(text, verify=False)
    else:
        with pytest.raises(HloidxError, match="constant literal") as caught:
            parse_hlo(text, verify=False)
        assert caught.value.span.line == 2


def test_a_lone_instruction_s_written_operands_become_parameters() -> None:
    module = parse_hlo(MODULES["HloParserSingleOpTest_SingleOp"]["text"], verify=False)
    parameters = [i for i in module.instructions() if i.opcode == "parameter"]
    assert [(p.name, p.literal, str(p.shape)) for p in parameters] == [
        ("broadcast", "0", "f32[2,4]{1,0}"),
        ("x", "1", "f32[2,4]{1,0}"),
    ]
    assert [o.name for o in module.entry.root.operands] == ["broadcast", "x"]
    # two instructions: an undefined operand stays an error, located
    with pytest.raises(HloidxError, match="names no instruction"):
        parse_hlo("p = f32[2] parameter(0)\nm = f32[2] multiply(f32[2] p, f32[2] q)\n")
