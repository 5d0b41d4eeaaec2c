"""The expectation file format (NAME.expected): XLA's operand id = N records, one map per
line in XLA's text format, read with located errors and written in a stable sorted order."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HloidxError
from ..maps.indexing_map import IndexingMap
from ..source import Source

EXPECTATION_SUFFIX = ".expected"


FORMAT_VERSION = 1


DIRECTIONS = ("output_to_input", "input_to_output")


UNDEFINED_TEXT = "UNDEFINED"


KNOWN_EMPTY_TEXT = "KNOWN EMPTY"


class ExpectationSyntaxError(HloidxError):
    """A malformed expectation file (located at the offending line)."""


@dataclass(frozen=True)
class ExpectedMap:
    """One record: a map of one operand of one instruction, in one direction."""

    instruction: str
    computation: str | None
    direction: str
    operand: int
    text: str
    map: IndexingMap
    line: int = 0


@dataclass
class Expectation:
    path: str
    comments: list[str]
    #: (instruction, computation) in file order; an instruction may have no maps (no operands)
    instructions: list[tuple[str, str | None]]
    maps: list[ExpectedMap]
    #: line of each instruction header, for located errors
    lines: dict[tuple[str, str | None], int] = field(default_factory=dict)
    source: Source | None = None


_INSTRUCTION = re.compile(r"instruction\s+%?([\w.\-]+)(?:\s+in\s+%?([\w.\-]+))?\s*:?\s*$")


_RECORD = re.compile(r"(output_to_input|input_to_output)\s+operand\s+id\s*=\s*(\d+)\s*:\s*")


def _parse_map_text(text: str, where: str) -> IndexingMap:
    stripped = text.strip()
    if stripped == UNDEFINED_TEXT:
        return IndexingMap.undefined()
    if stripped == KNOWN_EMPTY_TEXT:
        return IndexingMap.known_empty()
    from ..maps.syntax import parse_map

    return parse_map(text, where)


def parse_expectation(text: str, name: str = "<expected>") -> Expectation:
    """Read an expectation file; a malformed line raises :class:`ExpectationSyntaxError`."""
    source = Source(name, text)
    comments: list[str] = []
    instructions: list[tuple[str, str | None]] = []
    lines: dict[tuple[str, str | None], int] = {}
    maps: list[ExpectedMap] = []
    current: tuple[str, str | None] | None = None
    offset = 0
    for number, raw in enumerate(text.splitlines(keepends=True), 1):
        start = offset
        offset += len(raw)
        line = raw.rstrip("\r\n")
        body = line.strip()
        indent = len(line) - len(line.lstrip())
        if not body:
            continue
        if body.startswith("//"):
            if not instructions:
                comments.append(body)
            continue
        header = _INSTRUCTION.match(body)
        if header:
            current = (header.group(1), header.group(2))
            if current in lines:
                raise ExpectationSyntaxError(
                    f"instruction {current[0]} is listed twice (first on line {lines[current]})",
                    source.span(start + indent, start + len(line)),
                )
            instructions.append(current)
            lines[current] = number
            continue
        record = _RECORD.match(body)
        if record is None:
            raise ExpectationSyntaxError(
                "expected 'instruction NAME [in COMPUTATION]', "
                "'output_to_input operand id = N: MAP', 'input_to_output operand id = N: MAP' "
                "or a // comment",
                source.span(start + indent, start + len(line)),
            )
        if current is None:
            raise ExpectationSyntaxError(
                "a map record before any 'instruction NAME' line",
                source.span(start + indent, start + len(line)),
            )
        map_start = start + indent + record.end()
        map_text = body[record.end() :]
        try:
            parsed = _parse_map_text(map_text, name)
        except HloidxError as error:
            # Re-locate the map parser's error in the expectation file.
            at = map_start + (error.span.start if error.span is not None else 0)
            raise ExpectationSyntaxError(
                f"bad map: {error.message}", source.span(at, at + 1)
            ) from None
        maps.append(
            ExpectedMap(
                current[0],
                current[1],
                record.group(1),
                int(record.group(2)),
                map_text.strip(),
                parsed,
                number,
            )
        )
    return Expectation(name, comments, instructions, maps, lines, source)


def _record_key(m: ExpectedMap) -> tuple[Any, ...]:
    return (DIRECTIONS.index(m.direction), m.operand, m.text)


def format_expectation(
    comments: Sequence[str],
    instructions: Sequence[tuple[str, str | None]],
    maps: Iterable[ExpectedMap],
) -> str:
    """The file text: comments, then instructions sorted by name, each with sorted records."""
    by_instruction: dict[tuple[str, str | None], list[ExpectedMap]] = {k: [] for k in instructions}
    for m in maps:
        by_instruction.setdefault((m.instruction, m.computation), []).append(m)
    out = [c if c.startswith("//") else f"// {c}" for c in comments]
    for key in sorted(by_instruction, key=lambda k: (k[0], k[1] or "")):
        if out:
            out.append("")
        name, comp = key
        out.append(f"instruction {name}" + (f" in {comp}" if comp else ""))
        for m in sorted(by_instruction[key], key=_record_key):
            out.append(f"  {m.direction} operand id = {m.operand}: {m.text}")
    return "\n".join(out) + "\n"


def expectation_path(hlo_path: str | os.PathLike[str]) -> Path:
    path = Path(hlo_path)
    return path.with_suffix(EXPECTATION_SUFFIX)


def normalize_text(text: str) -> str:
    """Whitespace means nothing in XLA's format; runs of it compare equal."""
    return " ".join(text.split())
