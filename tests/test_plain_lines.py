"""Text for a pipe or a file is kept as plain strings: the same bytes as the styled lines."""

from __future__ import annotations

import io

import paths
from rich.console import Console

from hloidx import parse_hlo
from hloidx.hlo.analysis import analyze
from hloidx.render.lines import LineBuffer, PlainLineBuffer, module_lines


def _written(buffer: LineBuffer) -> str:
    module = parse_hlo((paths.CORPUS / "transformer_block.opt.hlo").read_text(encoding="utf-8"))
    module_lines(buffer, analyze(module), "floordiv", hide_trivial=False)
    out = io.StringIO()
    buffer.write_to(Console(file=out, force_terminal=False, width=80))
    return out.getvalue()


def test_plain_lines_write_what_styled_lines_write_to_a_pipe() -> None:
    styled = _written(LineBuffer())
    assert styled.count("\n") > 100
    assert _written(PlainLineBuffer()) == styled
