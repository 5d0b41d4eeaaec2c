"""Attributes hloidx keeps as raw text are still read as XLA's parser reads them
(``hloidx/hlo/attribute_checks.py``): each check accepts what XLA accepts and rejects, located
at the offending text, what XLA rejects. Both parsers (the line parser and the grammar) are
run on every case."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.errors import HloidxError
from hloidx.hlo import syntax
from hloidx.hlo.syntax import parse_hlo


def _module(header: str = "", body: str = "") -> str:
    return f"HloModule m{header}\n\nENTRY e {{\n{body}}}\n"


_TWO = (
    "  a = f32[2]{0} parameter(0)\n  b = f32[] parameter(1)\n"
    "  ROOT t = (f32[2]{0}, f32[]) tuple(a, b)\n"
)


def _fill(template: str, **values: str) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


_CALL = (
    "  a = f32[2,3]{1,0} parameter(0)\n  b = s32[4]{0} parameter(1)\n"
    '  ROOT c = f32[1]{0} custom-call(a, b), custom_call_target="foo"{attrs}\n'
)
_EXP = "  x = f32[4]{0} parameter(0)\n  ROOT y = f32[4]{0} {op}(x){attrs}\n"
_PARAM = "  ROOT p = {shape} parameter(0){attrs}\n"

#: (case, module text, the offending text or None when XLA accepts it)
CASES = [
    # input_output_alias
    (
        "alias ok",
        _module(", input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}) }", _TWO),
        None,
    ),
    ("alias empty", _module(", input_output_alias={}", _TWO), None),
    ("alias no index", _module(", input_output_alias={ {0}: (0), {1}: (1, {}) }", _TWO), "), {1}"),
    ("alias kind", _module(", input_output_alias={ {0}: (0, {}, maybe) }", _TWO), "maybe"),
    # buffer_donor
    ("donor ok", _module(", buffer_donor={ (0, {}), (1, {}) }", _TWO), None),
    ("donor no comma", _module(", buffer_donor={ (0, {}) (1, {}) }", _TWO), "(1, {}) }"),
    # api_version
    ("api ok", _module(body=_fill(_CALL, attrs=", api_version=API_VERSION_TYPED_FFI")), None),
    (
        "api unknown",
        _module(body=_fill(_CALL, attrs=", api_version=API_VERSION_TYPED")),
        "API_VERSION_TYPED",
    ),
    # operand_layout_constraints (the layouts may differ from the operands'; the shapes not)
    (
        "constraints ok",
        _module(body=_fill(_CALL, attrs=", operand_layout_constraints={f32[2,3]{0,1}, s32[4]{0}}")),
        None,
    ),
    (
        "constraints count",
        _module(body=_fill(_CALL, attrs=", operand_layout_constraints={f32[2,3]{0,1}}")),
        "{f32[2,3]{0,1}}",
    ),
    (
        "constraints shape",
        _module(body=_fill(_CALL, attrs=", operand_layout_constraints={f32[2,3]{0,1}, s32[5]{0}}")),
        "s32[5]{0}",
    ),
    # parameter_replication: one flag per leaf buffer of the parameter
    (
        "replication ok",
        _module(
            body=_fill(
                _PARAM,
                shape="(f32[2], (f32[], s32[]))",
                attrs=", parameter_replication={true,false,true}",
            )
        ),
        None,
    ),
    (
        "replication empty tuple",
        _module(body=_fill(_PARAM, shape="()", attrs=", parameter_replication={}")),
        None,
    ),
    (
        "replication count",
        _module(body=_fill(_PARAM, shape="f32[2]", attrs=", parameter_replication={true,true}")),
        "{true,true}",
    ),
    (
        "replication word",
        _module(body=_fill(_PARAM, shape="f32[2]", attrs=", parameter_replication={yes}")),
        "yes",
    ),
    # result_accuracy: on transcendental unary ops, a mode or a tolerance
    (
        "accuracy mode",
        _module(body=_fill(_EXP, op="exponential", attrs=", result_accuracy={mode=highest}")),
        None,
    ),
    (
        "accuracy tolerance",
        _module(
            body=_fill(
                _EXP, op="tanh", attrs=", result_accuracy={tolerance={rtol=0.5, atol=1e-3, ulps=2}}"
            )
        ),
        None,
    ),
    (
        "accuracy number",
        _module(body=_fill(_EXP, op="log", attrs=", result_accuracy={tolerance={rtol=x}}")),
        "x}",
    ),
    (
        "accuracy op",
        _module(body=_fill(_EXP, op="negate", attrs=", result_accuracy={mode=highest}")),
        "{mode=highest}",
    ),
    # dimension level types in a layout
    ("levels ok", _module(body=_fill(_PARAM, shape="f32[4,4]{1,0:D(D,C+~)}", attrs="")), None),
    ("levels bad", _module(body=_fill(_PARAM, shape="f32[4,4]{1,0:D(D,Q)}", attrs="")), "D(D,Q)"),
    # a physical shape only in a sparse layout
    (
        "physical sparse",
        _module(body=_fill(_PARAM, shape="f32[4,4]{1,0:D(D,C)P(f32[16])}", attrs="")),
        None,
    ),
    (
        "physical dense",
        _module(body=_fill(_PARAM, shape="f32[4,4]{1,0:D(D,D)P(f32[16])}", attrs="")),
        "P(f32[16])",
    ),
]


@pytest.fixture(params=["lines", "grammar"])
def parser(request, monkeypatch):
    if request.param == "grammar":
        monkeypatch.setattr(syntax, "_whole_lines", lambda text, source: None)
    return request.param


@pytest.mark.parametrize(("case", "text", "offending"), CASES, ids=[c[0] for c in CASES])
def test_attribute_is_read_as_xla_reads_it(case: str, text: str, offending, parser) -> None:
    if offending is None:
        parse_hlo(text, "m.hlo")
        return
    with pytest.raises(HloidxError) as caught:
        parse_hlo(text, "m.hlo")
    span = caught.value.span
    assert span is not None, caught.value
    # the caret is at the offending text (the last place it occurs: attributes come last)
    assert span.start == text.rindex(offending), (case, caught.value.render())


def test_a_bad_attribute_exits_2_with_a_location(tmp_path) -> None:
    path = tmp_path / "bad.hlo"
    path.write_text(
        _module(body=_fill(_EXP, op="exponential", attrs=", result_accuracy={mode=high}")),
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["maps", str(path), "--format", "json"])
    assert result.exit_code == 2, result.output
    assert "bad.hlo:5:" in result.stderr
    assert "Traceback" not in result.output + result.stderr


#: XLA's parser tests these checks answer, with the text each error must point into.
XLA_CASES = {
    "AliasingShapeIndexNotNumerical": "input_output_alias=",
    "AliasingWrongFormatNoColon": "input_output_alias=",
    "AliasingWrongFormatTwoColons": "input_output_alias=",
    "AliasingWrongFormatAlphaParam": "input_output_alias=",
    "BufferDonorShapeIndexNotNumerical": "buffer_donor=",
    "BufferDonorWrongFormatAlphaParam": "buffer_donor=",
    "CustomCallWrongNumberofOperandConstraints": "operand_layout_constraints=",
    "CustomCallIncompatibleOperandConstraints": "operand_layout_constraints=",
    "CustomCallWithNonexistentVersion": "api_version=",
    "CustomCallWithUnspecifiedVersion": "api_version=",
    "WrongNumberOfParameterLeafBuffersInReplication": "parameter_replication=",
    "TranscendentalAccuracyModeError": "result_accuracy=",
    "TranscendentalResultAccuracyInvalidName": "result_accuracy=",
    "TranscendentalAccuracyInvalidField": "result_accuracy=",
    "TranscendentalAccuracyInvalidOp": "result_accuracy=",
    "InvalidDimLevelType": ":D(",
    "RejectDensePhysicalShape": ")P(",
}


@pytest.mark.parametrize("name", sorted(XLA_CASES))
def test_xla_s_rejected_attribute_is_located_in_its_value(name: str) -> None:
    import json

    import paths

    suite = json.loads((paths.XLA_TESTS / "parser" / "modules.json").read_text(encoding="utf-8"))
    text = next(e["text"] for e in suite["modules"] if e["name"] == name)
    with pytest.raises(HloidxError) as caught:
        parse_hlo(text, name)
    key = text.index(XLA_CASES[name])
    line_end = text.find("\n", key) % (len(text) + 1)  # -1 (no newline): the end
    assert key < caught.value.span.start < line_end, caught.value.render()
