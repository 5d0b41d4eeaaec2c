"""The first hover on a file, asked before its name index is built, answers from the one
instruction under the cursor (and what it reads) with what the whole index gives; what needs
the whole index (a parameter's callers, a computation) waits for it."""

from __future__ import annotations

import paths

from hloidx.lsp.document import FileAnalysis

DUMP = paths.CORPUS / "cnn_pool_batchnorm.xla_dump.after_optimizations.hlo"


def _parsed(text: str) -> FileAnalysis:
    analysis = FileAnalysis("m.hlo", text)
    analysis.parse()
    return analysis


def test_an_early_hover_is_the_hover_the_whole_index_gives() -> None:
    text = DUMP.read_text()
    early, whole = _parsed(text), _parsed(text)
    whole.finish()
    assert not early.indexed
    assert whole.indexed
    checked = 0
    for line_start in range(0, len(text), 211):  # cursor positions spread over the text
        at = text.find(" = ", line_start)
        if at < 0:
            break
        name_at = text.rfind(" ", 0, at - 1) + 1
        for offset in (name_at, text.find("(", at) + 2):
            answer = early.hover_early(offset, "h100")
            if answer is None:  # a parameter, a computation, no instruction: waits
                continue
            assert answer == whole.hover(offset, "h100")
            checked += 1
    assert checked >= 10
    assert not early.indexed  # answered without building the index


def test_a_parameter_and_a_computation_wait_for_the_whole_index() -> None:
    text = DUMP.read_text()
    analysis = _parsed(text)
    parameter = text.index("parameter(0)")
    assert analysis.hover_early(text.rfind("\n", 0, parameter) + 4, "h100") is None
    assert analysis.hover_early(text.index("ENTRY ") + 7, "h100") is None


def test_the_index_built_in_steps_is_the_index_built_at_once() -> None:
    from hloidx.lsp.index import HloIndex, scan, scan_steps

    text = DUMP.read_text()
    stepped = HloIndex(text)
    steps = sum(1 for _ in scan_steps(stepped))
    assert steps >= 3
    whole = scan(text)
    assert [(o.key, o.start, o.end) for o in stepped.occurrences] == [
        (o.key, o.start, o.end) for o in whole.occurrences
    ]
