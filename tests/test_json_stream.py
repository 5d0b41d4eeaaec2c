"""The JSON document written piece by piece is the document built whole, byte for byte."""

from __future__ import annotations

import json

import paths
import pytest
from click.testing import CliRunner

from hloidx import parse_hlo
from hloidx.cli.main import cli
from hloidx.cli.maps_command import MapsOptions, analyse_text
from hloidx.hlo.analysis import analyze, analyze_each
from hloidx.hlo.report import module_json_text, module_to_json
from hloidx.hlo.syntax import parse_hlo_lenient


@pytest.mark.parametrize(
    "name", ["large_resnet12_fwd_bwd.opt.hlo", "rnn_scan.opt.hlo", "einsum_heavy.pre.hlo"]
)
@pytest.mark.parametrize("every", [1, 7, 256])
def test_pieces_make_the_whole_document(name: str, every: int) -> None:
    module = parse_hlo((paths.CORPUS / name).read_text(encoding="utf-8"))
    whole = json.dumps(module_to_json(analyze(module)))
    pieces = module_json_text(module.name, "both", analyze_each(module), [], every=every)
    assert "".join(pieces) == whole


def test_errors_and_an_empty_selection_are_written_as_before() -> None:
    text = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(q)\n}\n"
    module, errors = parse_hlo_lenient(text, "m.hlo")
    analysis = analyze(module)
    analysis.errors.extend(errors)
    whole = json.dumps(module_to_json(analysis))
    assert "".join(module_json_text(module.name, "both", analyze_each(module), errors)) == whole
    assert "".join(module_json_text("m", "o2i", [], [])) == json.dumps(
        {"schema_version": 1, "module": "m", "direction": "o2i", "instructions": [], "errors": []}
    )


@pytest.mark.parametrize("extra", [[], ["--direction", "i2o"], ["--kind", "fusion"]])
def test_the_command_writes_the_document_it_used_to_build(extra: list[str]) -> None:
    path = paths.CORPUS / "transformer_block.opt.hlo"
    result = CliRunner().invoke(cli, ["maps", str(path), "--format", "json", *extra])
    assert result.exit_code == 0
    options = MapsOptions(
        instructions=(),
        computations=(),
        opcodes=(),
        kind="fusion" if "--kind" in extra else None,
        all_computations=False,
        hide_trivial=False,
        direction="i2o" if "i2o" in extra else "both",
        verify=True,
        simplify=True,
        fmt="json",
        spelling="floordiv",
        tree=False,
        language="auto",
    )
    whole = analyse_text(path.read_text(encoding="utf-8"), str(path), options)  # no stream
    assert result.output == json.dumps(whole.doc) + "\n"
