"""Cut-off and damaged files never crash: every outcome is a module and/or located errors.

A property test draws a file and a cut point (a line end, or just after a separator inside a
line) and parses the prefix leniently, as ``hloidx maps`` does: no exception escapes, every
error has a location, and every instruction written whole before the cut is still in the
module (so it is still analysed). Another draws one token to delete. ``bench/cut_points.py``
runs every cut point of every sample and corpus file; two CLI spot checks confirm exit 2.
"""

from __future__ import annotations

import json
import re
import sys

import paths
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hloidx.cli.main import cli
from hloidx.errors import HloidxError
from hloidx.hlo.syntax import build_grammar
from hloidx.stablehlo import parse_module_lenient

sys.path.insert(0, str(paths.ROOT / "bench"))
from cut_points import (
    SEPARATORS,
    deletions,
    line_end_cuts,
    whole_instructions_before,
)

#: small files of every form (snippets, modules with fusions, XLA dumps, StableHLO)
FILES = sorted(
    [
        *paths.SAMPLES.glob("seed000/*.hlo"),
        *paths.SAMPLES.glob("seed001/*.hlo"),
        *paths.SAMPLES.glob("stablehlo/*.mlir"),
        *(p for p in paths.SAMPLES.glob("corpus/*.hlo") if p.stat().st_size < 40_000),
        *(p for p in paths.CORPUS.glob("rnn_scan*.hlo") if p.stat().st_size < 40_000),
    ]
)
TEXTS = {p.name: p.read_text(encoding="utf-8") for p in FILES}


def _cut_points(text: str) -> list[int]:
    """Every line end and every offset just after a separator."""
    return sorted({*line_end_cuts(text), *(i + 1 for i, c in enumerate(text) if c in SEPARATORS)})


def _check(text: str, name: str) -> tuple[object, list[HloidxError]]:
    module, errors = parse_module_lenient(text, name)  # never raises
    assert all(e.span is not None for e in errors), [str(e) for e in errors]
    return module, errors


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TEXTS)), st.data())
def test_a_cut_off_file_ends_in_located_errors_and_keeps_what_came_before(
    name: str, data: st.DataObject
) -> None:
    text = TEXTS[name]
    cut = data.draw(st.sampled_from(_cut_points(text)), label="cut")
    module, _ = _check(text[:cut], name)
    if name.endswith(".hlo") and "{" in text:
        kept = {i.name for i in module.instructions()} if module is not None else set()
        lost = [n for n in whole_instructions_before(text, cut) if n not in kept]
        assert not lost, f"cut at {cut}: lost {lost}"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TEXTS)), st.data())
def test_a_file_with_a_token_deleted_ends_in_a_module_or_located_errors(
    name: str, data: st.DataObject
) -> None:
    variants = deletions(TEXTS[name])
    _check(data.draw(st.sampled_from(variants), label="deleted"), name)


@pytest.mark.parametrize(
    "tail",
    [
        "rem.1 = s32[] remainder(Arg_0.4,",  # the file: an IndexError before
        "ROOT add = f32[10,20] add(",
        "ROOT t = f32[20,10]{1,0} transpose(p0), dimensions={1",
        'ROOT t = f32[20,10]{1,0} transpose(p0), metadata={op_name="t',
        "%x = f32[10,20]{1,0} parameter(0), sharding={devices=[2,1]",
        "ROOT r = (f32[], s32[]) tuple(",
        "ROOT c = f32[2,2] constant({ {1, 2}, {3,",
    ],
)
def test_a_file_cut_inside_an_instruction_keeps_the_instructions_before(tail: str) -> None:
    text = (
        "HloModule m\n\nENTRY main {\n  Arg_0.4 = s32[] parameter(0)\n  p0 = f32[10,20] parameter(1)\n  "
        + tail
    )
    module, errors = _check(text, "cut.hlo")
    assert errors
    assert errors[-1].span.line == text.count("\n") + 1
    assert {"Arg_0.4", "p0"} <= {i.name for i in module.instructions()}
    # the expected tokens are in words, never the grammar's terminal names
    terminals = {t.name.lower() for t in build_grammar().terminals if "_" in t.name.strip("_")}
    assert not [t for t in terminals if t in errors[-1].message], errors[-1].message


def test_the_command_line_exits_2_on_cut_off_files(tmp_path) -> None:
    source = paths.SAMPLES / "seed000" / "fusion_softmax.hlo"
    text = source.read_text(encoding="utf-8")
    cut = text.index("maximum(") + len("maximum(")
    path = tmp_path / "cut.hlo"
    path.write_text(text[:cut], encoding="utf-8")
    result = CliRunner().invoke(cli, ["maps", str(path), "--format", "json", "--no-verify"])
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    line = text[:cut].count("\n") + 1
    assert any(e.get("line") == line for e in doc["errors"]), doc["errors"]
    assert doc["instructions"], "the instructions before the cut are analysed"
    assert "Traceback" not in result.output
    # and a cut at a line end, in text form
    at_line_end = text[: text.index("\n", cut) + 1]
    path.write_text(at_line_end, encoding="utf-8")
    result = CliRunner().invoke(cli, ["maps", str(path), "--no-verify"])
    assert result.exit_code in (0, 2)
    assert re.search(r"cut\.hlo:\d+:\d+", result.stderr) or result.exit_code == 0
    assert "internal error" not in result.output


def test_every_token_deletion_of_a_stablehlo_sample_ends_in_located_errors() -> None:
    # the StableHLO lowering read attributes it assumed present (`IndexError` on a deleted
    # dimension list); every deletion of this sample is now a located error or a module
    name = "conv_same.mlir"
    for mutated in deletions(TEXTS[name]):
        _check(mutated, name)
