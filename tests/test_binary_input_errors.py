"""A file that is neither HLO text nor anything hloidx reads: its error line never sends raw
control bytes to the terminal (issue 44)."""

from __future__ import annotations

from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.errors import HloSyntaxError
from hloidx.source import Source

# An escape sequence (ESC [ 3 1 m would turn a terminal red), a NUL, bell, DEL, a C1 control
# and bytes that are not UTF-8 at all.
GARBAGE = b"\x08\x96\x01\x12\x07\x1b[31mHLO\x00\x01\x02garbage\x7f\xc2\x9b\xff\xfe\n"


def _controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0]


def test_the_error_line_of_binary_input_escapes_control_bytes(tmp_path) -> None:
    path = tmp_path / "weights.hlo"
    path.write_bytes(GARBAGE)
    result = CliRunner().invoke(cli, ["maps", str(path)])
    assert result.exit_code == 2
    output = result.output
    assert _controls(output) == []
    assert "Traceback" not in output
    # The escape sequence, NUL and the C1 control are there, readable.
    assert "\\x1b[31mHLO\\x00" in output
    assert "\\x7f\\x9b" in output
    assert "looks binary" in output


def test_the_caret_stays_under_the_offending_character() -> None:
    # "ab" then ESC then "cd": the error at "c" (offset 3) is after the 4 columns of "\x1b".
    source = Source("x.hlo", "ab\x1bcd\n")
    rendered = HloSyntaxError("unexpected 'c'", source.span(3, 4)).render()
    line, caret = rendered.splitlines()[1:3]
    assert line == "  ab\\x1bcd"
    assert caret.index("^") == line.index("cd")
    assert "looks binary" not in rendered  # one control byte in text is not a binary file


def test_a_message_quoting_control_bytes_is_escaped_too() -> None:
    rendered = HloSyntaxError("unknown opcode 'x\x1b[2J'").render()
    assert rendered == "error: unknown opcode 'x\\x1b[2J'"
