"""StableHLO input: the MLIR text ``jax.jit(f).lower(x).as_text()`` prints, read into the same
IR as HLO text (through the HLO it lowers to), so that every analysis works on it unchanged."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import HloidxError

if TYPE_CHECKING:
    from ..hlo.ir import HloModule
    from .syntax import StableHloSyntaxError

_MLIR_START = re.compile(r"^\s*(#loc\w*\s*=|module\b|func\.func\b|#\w+\s*=)", re.MULTILINE)
_HLO_START = re.compile(r"^\s*(HloModule\b|ENTRY\b|%?[\w.\-]+\s*=\s*\S+\[)", re.MULTILINE)


def detect_language(text: str) -> str:
    """``"stablehlo"`` for MLIR text (``module @...``, ``func.func``), else ``"hlo"``."""
    hlo = _HLO_START.search(text)
    if hlo is None:
        return "hlo" if _MLIR_START.search(text) is None else "stablehlo"
    # MLIR only when it starts first: looked for before HLO's start alone (a module of
    # megabytes is not scanned to its end for a line that is not there). A match ending by
    # then is one of the whole text (the cut falls at a line start, after a newline); one
    # starting earlier cannot end later, since from its start HLO would have matched.
    return "stablehlo" if _MLIR_START.search(text, 0, hlo.start()) is not None else "hlo"


def stablehlo_to_hlo(text: str, name: str = "<string>") -> tuple[str, list[int], object]:
    """The HLO text StableHLO ``text`` lowers to, the MLIR offset of each of its lines, and the
    MLIR source (for locating errors); the first error (in the MLIR text) is raised."""
    hlo, offsets, source, errors = lower_stablehlo(text, name)
    if errors:
        raise errors[0]
    return hlo, offsets, source


def lower_stablehlo(
    text: str, name: str = "<string>"
) -> tuple[str, list[int], object, list[HloidxError]]:
    """Like :func:`stablehlo_to_hlo`, but every op's error is returned (in text order) instead
    of the first raised: an op that fails is left out of the HLO, and so is every op reading a
    value it defines (without an error of its own). A syntax error that leaves the rest
    unreadable is still raised."""
    from .lowering import Lowering
    from .syntax import StableHloSyntaxError, parse_stablehlo_text

    source, items = parse_stablehlo_text(text, name)
    lowering = Lowering(source, items)
    try:
        hlo, offsets = lowering.run()
    except StableHloSyntaxError as error:  # nothing to lower (no function, no body)
        return "", [], source, _in_order([*lowering.errors, error])
    return hlo, offsets, source, _in_order(lowering.errors)


def parse_stablehlo_lenient(
    text: str, name: str = "<string>"
) -> tuple[HloModule | None, list[HloidxError]]:
    """Like :func:`hloidx.hlo.syntax.parse_hlo_lenient`, for StableHLO text: errors are located
    in the MLIR text."""
    module, errors, _ = parse_stablehlo_mapped(text, name)
    return module, errors


def parse_stablehlo_mapped(
    text: str, name: str = "<string>"
) -> tuple[HloModule | None, list[HloidxError], list[int]]:
    """:func:`parse_stablehlo_lenient` and, per line of the HLO the module was read from, the
    MLIR offset it came from (-1: none)."""
    from ..hlo.syntax import parse_hlo_lenient
    from .syntax import StableHloSyntaxError

    try:
        hlo, offsets, source, errors = lower_stablehlo(text, name)
    except StableHloSyntaxError as error:
        return None, [error], []
    if not hlo:
        return None, errors, offsets
    module, hlo_errors = parse_hlo_lenient(hlo, f"{name} (as HLO)")
    relocated = [(_relocate(e, offsets, source), _mlir_offset(e, offsets)) for e in hlo_errors]
    if not errors:
        return module, [e for e, _ in relocated], offsets
    # the HLO lacks the ops that failed: what it says outside any op (a computation left
    # without instructions) follows from those errors
    found = errors + [e for e, at in relocated if at >= 0]
    return module, _in_order(found), offsets


def _mlir_offset(error: HloidxError, offsets: list[int]) -> int:
    line = error.span.line if error.span is not None else 0
    return offsets[line - 1] if 0 < line <= len(offsets) else -1


def _in_order(errors: list[HloidxError]) -> list[HloidxError]:
    """Errors in the order of the text they point at (a called function's come where it is)."""
    return sorted(errors, key=lambda e: -1 if e.span is None else e.span.start)


def parse_module_lenient(
    text: str, name: str = "<string>", language: str = "auto"
) -> tuple[HloModule | None, list[HloidxError]]:
    """HLO or StableHLO text (``language``: ``auto`` detects it), read leniently."""
    from ..hlo.syntax import parse_hlo_lenient

    if language == "auto":
        language = detect_language(text)
    if language == "stablehlo":
        return parse_stablehlo_lenient(text, name)
    return parse_hlo_lenient(text, name)


def parse_stablehlo(text: str, name: str = "<string>") -> HloModule:
    module, errors = parse_stablehlo_lenient(text, name)
    if errors:
        raise errors[0]
    assert module is not None
    return module


def _relocate(error: HloidxError, offsets: list[int], source: object) -> HloidxError:
    """An error found in the generated HLO, pointed at the MLIR statement it came from."""
    from .syntax import StableHloSyntaxError

    span = error.span
    if span is None:
        return error
    line = span.line
    offset = offsets[line - 1] if 0 < line <= len(offsets) else -1
    if offset < 0:
        return error
    hlo_line = span.source.line_text(line).strip()
    relocated = StableHloSyntaxError(
        f"{error.message} (in the HLO this op lowers to: {hlo_line[:120]})",
        source.span(offset, offset + 1),  # type: ignore[attr-defined]
    )
    return relocated


def __getattr__(name: str) -> object:
    # the StableHLO reader is imported when MLIR is read (or its error class asked for), so
    # that reading HLO text never loads it
    if name == "StableHloSyntaxError":
        from .syntax import StableHloSyntaxError

        return StableHloSyntaxError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "StableHloSyntaxError",
    "detect_language",
    "lower_stablehlo",
    "parse_module_lenient",
    "parse_stablehlo",
    "parse_stablehlo_lenient",
    "parse_stablehlo_mapped",
    "stablehlo_to_hlo",
]
