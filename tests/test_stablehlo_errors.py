"""Every independent error of a StableHLO function is reported, each once and located in the
MLIR; an op reading a value whose defining op failed is skipped without an error of its own.

The expected lines and columns are written here by hand from the texts (columns are 1-based:
``  %0 = stablehlo.add %arg0, %nope`` puts ``%nope`` at column 29). Errors of the lowering
(an unknown value, a missing attribute) point at the value or at the op's first character;
an error the HLO stage finds (a type mismatch) points at the op it comes from.
"""

from __future__ import annotations

import subprocess
import sys

import paths
import pytest

from hloidx.stablehlo import parse_stablehlo_lenient, stablehlo_to_hlo
from hloidx.stablehlo.syntax import StableHloSyntaxError

# line 2: an unknown value (%nope, column 29); line 3: broadcast_in_dim without its `dims`
# (column 3); line 4: a result type of 5 elements for an elementwise op of 4 (column 3);
# lines 5 and 6 read %0 (through %3): they follow from line 2's error, and add none
THREE_ERRORS = """func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %nope : tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %arg1, sizes = [] : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.multiply %arg0, %arg1 : tensor<5xf32>
  %3 = stablehlo.negate %0 : tensor<4xf32>
  %4 = stablehlo.add %3, %arg1 : tensor<4xf32>
  return %4 : tensor<4xf32>
}
"""

# an unknown value (line 2, column 29) and a type mismatch two lines on (line 4, column 3)
TWO_ERRORS = """func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %nope : tensor<4xf32>
  %1 = stablehlo.negate %arg1 : tensor<4xf32>
  %2 = stablehlo.multiply %arg0, %1 : tensor<5xf32>
  return %1 : tensor<4xf32>
}
"""


def _located(text: str) -> list[tuple[int, int, str]]:
    _, errors = parse_stablehlo_lenient(text, "t.mlir")
    return [(e.span.line, e.span.column, e.message) for e in errors]


def test_an_unknown_value_and_a_type_mismatch_are_both_reported() -> None:
    found = _located(TWO_ERRORS)
    assert [(line, column) for line, column, _ in found] == [(2, 29), (4, 3)]
    assert "%nope is used but never defined" in found[0][2]
    assert "multiply" in found[1][2]
    assert "[5]" in found[1][2]


def test_three_errors_each_once_and_no_error_for_their_users() -> None:
    found = _located(THREE_ERRORS)
    assert [(line, column) for line, column, _ in found] == [(2, 29), (3, 3), (4, 3)]
    assert "%nope" in found[0][2]
    assert "missing attribute dims" in found[1][2]
    assert "[5]" in found[2][2]


def test_a_use_of_a_failed_value_adds_no_error() -> None:
    # only line 2 is wrong; lines 3 and 4 read its result (directly, then through %1)
    text = TWO_ERRORS.replace("negate %arg1", "negate %0").replace("tensor<5xf32>", "tensor<4xf32>")
    assert [(line, column) for line, column, _ in _located(text)] == [(2, 29)]


def test_the_ops_that_lowered_are_kept() -> None:
    # the valid negate of line 3 is in the module, with its HLO instruction
    module, _ = parse_stablehlo_lenient(TWO_ERRORS, "t.mlir")
    assert module is not None
    assert [i.opcode for i in module.entry.instructions] == ["parameter", "parameter", "negate"]


def test_an_error_in_a_called_function_is_reported_once() -> None:
    # @f's line 8 reads an unknown value; @main calls @f twice (lines 2 and 3): neither call
    # nor the add reading them adds an error; line 4's own type mismatch is independent
    text = """func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @f(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = call @f(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.negate %arg0 : tensor<3xf32>
  %3 = stablehlo.add %1, %0 : tensor<4xf32>
  return %3 : tensor<4xf32>
}
func.func private @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %q : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
    found = _located(text)
    # `  %0 = stablehlo.negate ` is 24 characters: %q at column 25 of line 9
    assert [(line, column) for line, column, _ in found] == [(4, 3), (9, 25)]
    assert "%q is used but never defined" in found[1][2]


def test_an_error_in_a_loop_body_skips_the_loop_and_its_users_quietly() -> None:
    # line 8 reads an unknown value inside the while's body: the loop (line 3) and the add
    # reading its result (line 11) follow from it; line 12's result count is its own mistake
    text = """func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c, %x = %arg0) : tensor<i32>, tensor<4xf32>
   cond {
    %1 = stablehlo.compare  LT, %i, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.add %x, %zz : tensor<4xf32>
    stablehlo.return %i, %1 : tensor<i32>, tensor<4xf32>
  }
  %2 = stablehlo.add %0#1, %arg0 : tensor<4xf32>
  %3:2 = stablehlo.negate %arg0 : tensor<4xf32>
  return %arg0 : tensor<4xf32>
}
"""
    found = _located(text)
    # `    %1 = stablehlo.add %x, ` is 27 characters: %zz at column 28
    assert [(line, column) for line, column, _ in found] == [(8, 28), (12, 3)]
    assert "names 2 results" in found[1][2]


def test_a_syntax_error_still_stops_the_reading() -> None:
    # line 3 cannot be read (a lone `%`): the statements after it are not known, so only the
    # syntax error is reported, not also line 2's unknown value
    text = TWO_ERRORS.replace("negate %arg1", "negate (%")
    found = _located(text)
    assert [(line, column) for line, column, _ in found] == [(3, 26)]


def test_the_strict_lowering_raises_the_first_error() -> None:
    with pytest.raises(StableHloSyntaxError) as raised:
        stablehlo_to_hlo(THREE_ERRORS, "t.mlir")
    assert (raised.value.span.line, raised.value.span.column) == (2, 29)


def test_the_cli_reports_each_with_a_caret_and_exits_2(tmp_path) -> None:
    path = tmp_path / "three.mlir"
    path.write_text(THREE_ERRORS)
    run = subprocess.run(
        [sys.executable, "-m", "hloidx", "maps", str(path)],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    lines = run.stderr.splitlines()
    heads = [line for line in lines if line.startswith(str(path))]
    assert [h.split(": ")[0] for h in heads] == [f"{path}:2:29", f"{path}:3:3", f"{path}:4:3"]
    for head, mistake in zip(heads, ["%nope", "%1 = stablehlo.broadcast", "%2 = "], strict=True):
        at = lines.index(head)
        shown, caret = lines[at + 1], lines[at + 2]
        assert caret.strip().startswith("^")
        assert shown[caret.index("^") :].startswith(mistake)


def test_two_unknown_operands_of_one_op_are_two_errors() -> None:
    # `  %0 = stablehlo.add ` is 21 characters: %x at column 22, %y (after `%x, `) at 26; on
    # line 3, %0 failed (no error for it) but %z (column 31) is its own mistake, and
    # chlo.square reads %w twice (column 20): one error
    text = """func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %y : tensor<4xf32>
  %1 = stablehlo.multiply %0, %z : tensor<4xf32>
  %2 = chlo.square %w : tensor<4xf32>
  return %arg0 : tensor<4xf32>
}
"""
    found = _located(text)
    assert [(line, column) for line, column, _ in found] == [(2, 22), (2, 26), (3, 31), (4, 20)]
