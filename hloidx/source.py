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
        """The source line and a caret under the span's start (long lines are windowed).

        Control characters are shown escaped (``\\x1b``), never sent to the terminal; a line
        with several of them, or with bytes that are not UTF-8, is said to look binary.
        """
        line, col = self.source.line_col(self.start)
        raw = self.source.line_text(line).expandtabs(1)
        pieces = [_shown(char) for char in raw]
        caret_col = sum(len(piece) for piece in pieces[: col - 1])
        span_chars = pieces[col - 1 : col - 1 + max(1, self.end - self.start)]
        span_width = sum(len(piece) for piece in span_chars) or 1
        text = "".join(pieces)
        if len(text) > max_width:
            first = max(0, caret_col - max_width // 2)
            text = ("…" if first else "") + text[first : first + max_width]
            caret_col = caret_col - first + (1 if first else 0)
        width = max(1, min(span_width, len(text) - caret_col))
        excerpt = f"  {text}\n  {' ' * caret_col}{'^' * width if width < 40 else '^'}"
        if _looks_binary(raw):
            excerpt += "\n  (the input looks binary, not text: control bytes are shown escaped)"
        return excerpt


def _shown(char: str) -> str:
    """One character as an excerpt shows it: itself, or escaped when it is a control one."""
    code = ord(char)
    if code < 0x20 or 0x7F <= code < 0xA0:
        return f"\\x{code:02x}"
    if code > 0xFF and char != "\ufffd" and not char.isprintable():
        return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    return char


def escape_controls(text: str) -> str:
    """``text`` with its control characters escaped, line breaks and tabs kept."""
    if text.isprintable():
        return text
    return "".join(char if char in "\n\t" else _shown(char) for char in text)


def _looks_binary(text: str) -> bool:
    """Several control characters or undecodable bytes (U+FFFD) in one line."""
    strange = sum(1 for char in text if _shown(char) != char or char == "\ufffd")
    return strange >= 3 or (strange > 0 and "\x00" in text)
