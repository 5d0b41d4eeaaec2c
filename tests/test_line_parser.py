"""The line parser against the grammar: where it accepts a text, the module is the same down to
every span and attribute offset; where the text is not XLA's printed layout, it declines."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ir_data import ir_as_data

from hloidx.errors import HloidxError
from hloidx.hlo import line_parser, syntax
from hloidx.hlo.hlo_builder import _attribute_regex
from hloidx.hlo.ir import HloModule
from hloidx.hlo.syntax import parse_hlo, parse_hlo_lenient
from hloidx.source import Source

CORPUS = sorted(paths.CORPUS.glob("*.hlo"))
SAMPLES = sorted(paths.SAMPLES.rglob("*.hlo"))


def _xla_cases() -> list[dict]:
    return json.loads((paths.XLA_TESTS / "analysis_cases.json").read_text(encoding="utf-8"))


def everything(module: HloModule) -> tuple:
    """The whole IR as plain data, spans and offsets included."""
    return ir_as_data(module, positions=True)


def _outcome(text: str) -> tuple:
    try:
        strict: tuple = ("ok", everything(parse_hlo(text, "t.hlo")))
    except HloidxError as error:
        strict = ("error", type(error).__name__, error.render())
    module, errors = parse_hlo_lenient(text, "t.hlo")
    lenient = (
        everything(module) if module is not None else None,
        [(type(e).__name__, e.render()) for e in errors],
    )
    return strict, lenient


@contextmanager
def _grammar_only():
    saved = syntax._whole_lines
    syntax._whole_lines = lambda text, source: None
    try:
        yield
    finally:
        syntax._whole_lines = saved


def _same_as_grammar(text: str) -> None:
    ours = _outcome(text)
    with _grammar_only():
        theirs = _outcome(text)
    assert ours == theirs


def _accepts(text: str) -> bool:
    return line_parser.parse_lines(text, Source("t.hlo", text)) is not None


def test_attribute_is_the_grammars_own_pattern() -> None:
    assert _attribute_regex().pattern == line_parser.ATTRIBUTE


@pytest.mark.parametrize("path", CORPUS + SAMPLES, ids=lambda p: p.name)
def test_corpus_and_samples_read_by_lines_as_by_the_grammar(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path in CORPUS:
        assert _accepts(text)  # XLA's printed modules: the speed is really had
    _same_as_grammar(text)


def test_xla_test_modules_read_as_by_the_grammar() -> None:
    accepted = 0
    for case in _xla_cases():
        accepted += _accepts(case["hlo"])
        _same_as_grammar(case["hlo"])
    assert accepted > 0


_MODULE = """HloModule m, is_scheduled=true, entry_computation_layout={(f32[4,2]{1,0})->f32[2]{0}}

FileNames
1 "a.py"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3}

// a comment line
add (a: f32[], b: f32[]) -> f32[] {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}, execution_thread="main"

ENTRY %e (p: f32[4,2], /*index=1*/q: (f32[], s32[])) -> f32[2] {
  %p0 = f32[4,2]{1,0} parameter(0), metadata={op_name="p" source_file="model/layers.py" source_line=1}
  %c = f32[] constant(-inf)
  %k = s32[2]{0} constant({1, 2})
  %t = (f32[4,2]{1,0}, /*index=1*/f32[]) tuple(%p0, /*index=1*/%c)
  %g = f32[] get-tuple-element(%t), index=1 // trailing
  ROOT %r = f32[2]{0} reduce(f32[4,2]{1,0} %p0, %g), dimensions={0}, to_apply=%add
}
"""


def test_a_module_with_every_printed_form_is_read_by_lines() -> None:
    assert _accepts(_MODULE)
    _same_as_grammar(_MODULE)


@pytest.mark.parametrize(
    "change",
    [
        ("dimensions={0}", "dimensions={0}, dimensions={0}"),  # duplicate attribute
        ("constant({1, 2})", "constant({1, 2, 3})"),  # wrong element count
        ("parameter(0)", "parameter(x)"),  # a parameter number that is not one
        ("get-tuple-element(%t)", "get-tuple-element(1)"),  # a literal where an operand goes
        ("f32[4,2]{1,0} parameter(0)", "f32[4,2] {1,0} parameter(0)"),  # a spaced layout
        ("/*index=1*/%c", "/* other */%c"),  # a comment XLA does not print
        ("index=1 // trailing", "index=1,\n  foo=bar"),  # an instruction split over lines
        ("tuple(%p0, /*index=1*/%c)", "tuple(%p0, %c,)"),  # a trailing comma
        ("  ROOT s = f32[] add(a, b)\n", ""),  # a computation without a ROOT: fine
        ("ENTRY %e", "ENTRY"),  # no computation name
        ("%r = f32[2]{0}", "%r = f32[2]{0}{0}"),  # a broken shape
    ],
)
def test_what_the_lines_do_not_settle_reads_as_by_the_grammar(change: tuple[str, str]) -> None:
    old, new = change
    assert old in _MODULE
    _same_as_grammar(_MODULE.replace(old, new, 1))


_PIECES = ["{", "}", "(", ")", "[", "]", ",", "=", "%", '"', "\n", " ", "x", "0", ":", "->"]
_PIECES += ["ROOT ", "ENTRY ", "/*index=2*/", "// c\n", "f32[2]", "{1,0}", ", k=v", "-1.5e3"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_text_reads_as_by_the_grammar(data: st.DataObject) -> None:
    text = _MODULE
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(text)))
        action = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        piece = data.draw(st.sampled_from(_PIECES))
        if action == "delete":
            text = text[:position] + text[position + data.draw(st.integers(1, 4)) :]
        elif action == "insert":
            text = text[:position] + piece + text[position:]
        else:
            text = text[:position] + piece + text[position + len(piece) :]
    _same_as_grammar(text)


def test_a_printed_module_is_parsed_without_importing_lark() -> None:
    path = next(p for p in CORPUS if p.name.startswith("cnn_pool_batchnorm.opt"))
    script = (
        "import sys\n"
        "from hloidx.hlo.syntax import parse_hlo\n"
        f"parse_hlo(open({str(path)!r}).read())\n"
        "print('lark' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=paths.ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False"]


def test_instruction_lines_match_what_the_parser_reads() -> None:
    """Every instruction line of the corpus is one instruction of the parsed module."""
    for path in CORPUS:
        text = path.read_text(encoding="utf-8")
        lines = re.findall(r"^\s*(?:ROOT\s+)?%?[\w.\-]+ = ", text, re.MULTILINE)
        assert len(parse_hlo(text).instructions()) == len(lines)
