"""Character offsets of a text and LSP positions, in the negotiated encoding."""

from __future__ import annotations

import bisect

from lsprotocol import types

__all__ = ["LineMap"]


class LineMap:
    """Character offsets of a text to LSP positions and back, in the negotiated encoding
    (UTF-16 code units unless the client offered UTF-32 or UTF-8)."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self.starts = starts

    def _units(self, piece: str) -> int:
        if self.encoding == "utf-32" or piece.isascii():
            return len(piece)
        if self.encoding == "utf-8":
            return len(piece.encode("utf-8", "surrogatepass"))
        return len(piece.encode("utf-16-le", "surrogatepass")) // 2

    def position(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        return types.Position(line, self._units(self.text[self.starts[line] : offset]))

    def range(self, start: int, end: int) -> types.Range:
        return types.Range(self.position(start), self.position(end))

    def offset(self, position: types.Position) -> int:
        if position.line >= len(self.starts):
            return len(self.text)
        begin = self.starts[position.line]
        stop = self.starts[position.line + 1] - 1 if position.line + 1 < len(self.starts) else None
        line = self.text[begin:stop]
        if self.encoding == "utf-32" or line.isascii():
            return begin + min(position.character, len(line))
        units = 0
        for k, char in enumerate(line):
            if units >= position.character:
                return begin + k
            units += self._units(char)
        return begin + len(line)
