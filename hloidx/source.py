"""Source text and spans: where a piece of input came from, and how to point at it.

Every diagnostic hloidx prints is ``file:line:col: error: message`` followed by the
offending line and a caret. Positions are computed lazily from character offsets so
that parsing large files pays nothing until an error is actually reported.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True, eq=False)
class Source:
    """A named piece of text: a file, ``<stdin>``, ``<string>`` or a command-line argument."""

    name: str
    text: str
    _line_starts: list[int] = field(default_factory=list, init=False, repr=False)

    def _starts(self) -> list[int]:
        if not self._line_starts:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts.extend(starts)
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        starts = self._starts()
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    def line_text(self, line: int) -> str:
        starts = self._starts()
        if not 1 <= line <= len(starts):
            return ""
        begin = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[begin:end].rstrip("\r")

    def span(self, start: int, end: int | None = None) -> Span:
        return Span(self, start, start if end is None else end)


@dataclass(frozen=True, eq=False, slots=True)
class Span:
    """A half-open character range ``[start, end)`` of a :class:`Source`."""

    source: Source
    start: int
    end: int

    @property
    def line(self) -> int:
        return self.source.line_col(self.start)[0]

    @property
    def column(self) -> int:
        return self.source.line_col(self.start)[1]

    def location(self) -> str:
        line, col = self.source.line_col(self.start)
        return f"{self.source.name}:{line}:{col}"

    def excerpt(self, max_width: int = 160) -> str:
        """The source line and a caret under the span's start (long lines are windowed)."""
        line, col = self.source.line_col(self.start)
        text = self.source.line_text(line).expandtabs(1)
        caret_col = col - 1
        if len(text) > max_width:
            first = max(0, caret_col - max_width // 2)
            text = ("…" if first else "") + text[first : first + max_width]
            caret_col = caret_col - first + (1 if first else 0)
        width = max(1, min(self.end - self.start, len(text) - caret_col))
        return f"  {text}\n  {' ' * caret_col}{'^' * width if width < 40 else '^'}"
