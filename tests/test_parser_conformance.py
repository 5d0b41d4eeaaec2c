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

#: Accepted by XLA's single-instruction entry point, not as a module: one instruction whose
#: undefined operands become parameters, or with no name, or with computations written inline
#: (``calls=\n{ ... }``). XLA never prints these; hloidx reads modules, computations and lists
#: of instructions, and rejects these with a located error.
SINGLE_INSTRUCTION_FORMS = {
    "HloParserSingleOpTest_SingleOp",
    "HloParserSingleOpTest_SingleOpNoNames",
    "HloParserSingleOpTest_CanonicalOp",
    "HloParserSingleOpTest_CanonicalOpWithNested",
    "HloParserSingleOpTest_CanonicalOpIndexedConditionalInlinedBranches",
    "HloParserSingleOpTest_SingleOpWithNested",
    "HloParserSingleOpTest_ConvolutionTrivialFeatureGroupCount",
}

#: Rejected by XLA, accepted by hloidx: each breaks a rule about something hloidx does not read
#: (it keeps such attributes as raw text, whatever their syntax, and does not model the
#: semantics). Grouped by reason; the README of the data lists them too.
ACCEPTED_THOUGH_XLA_REJECTS = {
    # the contents of attributes hloidx keeps as raw text
    **dict.fromkeys(
        [
            "AliasingShapeIndexNotNumerical",
            "AliasingWrongFormatNoColon",
            "AliasingWrongFormatTwoColons",
            "AliasingWrongFormatAlphaParam",
            "BufferDonorShapeIndexNotNumerical",
            "BufferDonorWrongFormatAlphaParam",
            "CustomCallWrongNumberofOperandConstraints",
            "CustomCallIncompatibleOperandConstraints",
            "CustomCallWithNonexistentVersion",
            "CustomCallWithUnspecifiedVersion",
            "WrongNumberOfParameterLeafBuffersInReplication",
            "TranscendentalAccuracyModeError",
            "TranscendentalResultAccuracyInvalidName",
            "TranscendentalAccuracyInvalidField",
            "TranscendentalAccuracyInvalidOp",
            "InvalidDimLevelType",
            "RejectDensePhysicalShape",
        ],
        "attribute or layout detail kept as raw text",
    ),
    # how async wrappers pair up and what they wrap: not modelled
    **dict.fromkeys(
        [
            "AsyncStartMissingOperandWrapper",
            "AsyncUpdateMissingOperandWrapper",
            "AsyncOpTupleWrongType",
            "AsyncDoneNoAsyncStart",
            "AsyncUpdateAndAsyncDoneNoAsyncStart",
            "AsyncUpdateWithSyntaxSugarWrongOp",
            "AsyncDoneWithSyntaxSugarWrongOp",
            "AsyncOpSharedComputation",
            "AsyncUpdateWrongComputation",
            "AsyncDoneWrongComputation",
            "AsyncUpdateWrongDefaultThread",
            "AsyncDoneWrongDefaultThread",
        ],
        "async wrapper semantics",
    ),
    # the value of a constant's elements (range, NaN payload): hloidx reads no values
    **dict.fromkeys(
        [
            "ConstantF16Overflow",
            "ConstantBf16Overflow",
            "ConstantU4Underflow",
            "ConstantU4Overflow",
            "ConstantS4Underflow",
            "ConstantS4Overflow",
            "ConstantUnsignedOverflow",
            "ConstantF64Overflow",
            "ConstantF64Underflow",
            "ConstantC64Overflow",
            "ConstantC64Underflow",
            "InvalidNanPayloadBf16",
            "InvalidNanPayloadF8e4m3fn",
            "InvalidNanPayloadF8e4m3b11fnuz",
        ],
        "element values",
    ),
    # XLA's single-instruction entry point: two instructions given where one is expected
    "HloParserSingleOpTest_MultipleOpsProducesError": "a list of instructions is a module here",
}


def _accepted() -> list[str]:
    return sorted(
        n
        for n, e in MODULES.items()
        if e["expect"] == "accept" and n not in SINGLE_INSTRUCTION_FORMS
    )


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
    assert {n for n, e in MODULES.items() if e["expect"] == "accept"} >= SINGLE_INSTRUCTION_FORMS
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


@pytest.mark.parametrize("name", sorted(SINGLE_INSTRUCTION_FORMS))
def test_single_instruction_forms_are_rejected_with_a_location(name: str) -> None:
    with pytest.raises(HloidxError) as caught:
        parse_hlo(MODULES[name]["text"], name, verify=MODULES[name]["verified"])
    assert caught.value.span is not None


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
