"""Every independent error of a computation is reported, each once and located; an error that
follows from an earlier one (a use of an instruction whose definition failed) is not.

The expected errors are written here by hand from the texts: which line holds which mistake.
"""

from __future__ import annotations

import subprocess
import sys

import paths

from hloidx.hlo.syntax import parse_hlo_lenient

# an unknown operand name (line 5), an unknown opcode on the next line (line 6) in an
# instruction that reads the broken one (its opcode is wrong whatever it reads)
TWO_ERRORS = """HloModule two_errors

ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] add(p, q)
  b = f32[4] frobnicate(a)
  ROOT d = f32[4] negate(p)
}
"""


def _located(text: str) -> list[tuple[int, int, str]]:
    _, errors = parse_hlo_lenient(text, "t.hlo")
    return [(e.span.line, e.span.column, e.message) for e in errors]


def test_an_unknown_operand_and_an_unknown_opcode_are_both_reported() -> None:
    found = _located(TWO_ERRORS)
    assert [(line, column) for line, column, _ in found] == [(5, 21), (6, 14)]
    assert "operand q" in found[0][2]
    assert "unknown opcode 'frobnicate'" in found[1][2]


def test_a_use_of_an_unparsed_instruction_is_no_second_error() -> None:
    # `a` is cut off (a syntax error); `b` reads it: one error, not also "operand a names no
    # instruction"; the unknown opcode of `c`, which reads `b`, is its own mistake
    text = TWO_ERRORS.replace("add(p, q)", "add(p, p").replace(
        "  ROOT d", "  c = f32[4] unknownop(b)\n  ROOT d"
    )
    text = text.replace("frobnicate(a)", "negate(a)")
    found = _located(text)
    assert [(line, column) for line, column, _ in found] == [(5, 22), (7, 14)]
    assert "unknown opcode 'unknownop'" in found[1][2]


def test_a_shape_error_after_a_broken_operand_is_not_repeated() -> None:
    # `b`'s written shape disagrees with `a`, whose operand is unknown: only `a` is reported
    text = TWO_ERRORS.replace("f32[4] frobnicate(a)", "f32[5] negate(a)")
    assert [(line, column) for line, column, _ in _located(text)] == [(5, 21)]


def test_the_cli_reports_both_with_carets_and_exits_2(tmp_path) -> None:
    module = tmp_path / "two.hlo"
    module.write_text(TWO_ERRORS)
    run = subprocess.run(
        [sys.executable, "-m", "hloidx", "maps", str(module)],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    lines = run.stderr.splitlines()
    heads = [line for line in lines if line.startswith(str(module))]
    assert [h.split(": ")[0] for h in heads] == [f"{module}:5:21", f"{module}:6:14"]
    # each followed by its line and a caret under exactly the mistake
    for head, mistake in zip(heads, ["q", "frobnicate"], strict=True):
        at = lines.index(head)
        shown, caret = lines[at + 1], lines[at + 2]
        assert caret.strip() == "^" * len(mistake)
        assert shown[caret.index("^") :].startswith(mistake)
