"""Rows of an indexing table in which most cells are one default cell, and the walks over
tables that never pay for those cells one by one.

A tuple of N elements has N outputs and N operands, but output j reads only operand j: a full
table would hold N² cells, N² - N of them "reads nothing". A :class:`SparseRow` stores the cells
that differ from its default and stands for the rest, so building, re-pointing and reading a
table costs what its stored cells cost. It is a ``Sequence``: ``row[k]``, ``len(row)`` and
iteration behave as the full list would (iteration yields every cell, so code that needs to
stay linear uses :func:`row_cells`, :func:`table_columns` and :func:`stored_items`).

The union of an operand's maps over a row or a column is what the analysis prints; a union is
idempotent, so a default cell counts once, at the place where it first occurs (the maps keep
their order of first occurrence).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

from .rule_registry import IndexingTable, OperandIndexing

#: the cell of an operand an output does not read at all (an empty union of maps)
NO_READS = OperandIndexing(())


class SparseRow(Sequence[OperandIndexing]):
    """``length`` cells: ``cells[k]`` where given, ``default`` everywhere else."""

    __slots__ = ("_cells", "_length", "default")

    def __init__(
        self,
        length: int,
        cells: Mapping[int, OperandIndexing],
        default: OperandIndexing = NO_READS,
    ) -> None:
        if any(not 0 <= k < length for k in cells):
            raise IndexError(f"a cell outside a row of {length}")
        self._length = length
        # ascending positions: the walks below rely on the order
        self._cells = dict(sorted(cells.items())) if _unsorted(cells) else dict(cells)
        self.default = default

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, k: int) -> OperandIndexing: ...

    @overload
    def __getitem__(self, k: slice) -> list[OperandIndexing]: ...

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self._length))]
        k = operator.index(k)
        if k < 0:
            k += self._length
        if not 0 <= k < self._length:
            raise IndexError("row index out of range")
        return self._cells.get(k, self.default)

    def __iter__(self) -> Iterator[OperandIndexing]:
        get, default = self._cells.get, self.default
        for k in range(self._length):
            yield get(k, default)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SparseRow) and other.default == self.default:
            return self._length == other._length and self._cells == other._cells
        if not isinstance(other, (SparseRow, list, tuple)):
            return NotImplemented
        return len(other) == self._length and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SparseRow({self._length}, {self._cells!r}, default={self.default!r})"

    def stored(self) -> Iterator[tuple[int, OperandIndexing]]:
        """(position, cell) of the stored cells, in ascending position."""
        return iter(self._cells.items())

    def first_default(self) -> int | None:
        """The first position that holds the default cell, or None when every one is stored."""
        k = 0
        for position in self._cells:
            if position != k:
                return k
            k += 1
        return k if k < self._length else None

    def with_cells(self, change: Callable[[OperandIndexing], OperandIndexing]) -> SparseRow:
        """The same row with ``change`` applied to every cell (the default once)."""
        return SparseRow(
            self._length, {k: change(c) for k, c in self._cells.items()}, change(self.default)
        )


def _unsorted(cells: Mapping[int, OperandIndexing]) -> bool:
    previous = -1
    for k in cells:
        if k <= previous:
            return True
        previous = k
    return False


def one_hot(length: int, position: int, cell: OperandIndexing) -> SparseRow:
    """A row that reads only at ``position`` (a tuple's output j reads only operand j)."""
    return SparseRow(length, {position: cell})


def reads_nothing(cell: OperandIndexing) -> bool:
    """Whether a cell adds nothing to a walk through it: no map, or only KNOWN EMPTY maps
    (the empty relation), whose compositions every walk drops."""
    return all(m.is_known_empty for m in cell.maps)


def stored_items(row: Sequence[OperandIndexing]) -> Iterator[tuple[int, OperandIndexing]]:
    """(position, cell) of every cell of ``row`` a walk through it must follow: all cells of a
    list; the stored cells of a sparse row, and its default cells only when they read."""
    if isinstance(row, SparseRow):
        if reads_nothing(row.default):
            return row.stored()
        return enumerate(row)
    return enumerate(row)


def distinct_cells(row: Sequence[OperandIndexing]) -> Iterator[OperandIndexing]:
    """Every cell of ``row`` that can differ from the others: a sparse row's stored cells and
    its default (once). For scans such as "does any cell name a runtime producer"."""
    if isinstance(row, SparseRow):
        for _, cell in row.stored():
            yield cell
        yield row.default
    else:
        yield from row


def map_cells(
    table: IndexingTable, change: Callable[[OperandIndexing], OperandIndexing]
) -> IndexingTable:
    """``table`` with ``change`` applied to every cell, sparse rows kept sparse."""
    return [
        row.with_cells(change) if isinstance(row, SparseRow) else [change(c) for c in row]
        for row in table
    ]


def row_cells(row: Sequence[OperandIndexing]) -> list[OperandIndexing]:
    """Cells whose union is the row's union, in order of first occurrence: a list row as it
    is; a sparse row's stored cells with its default once, where it first occurs."""
    if not isinstance(row, SparseRow):
        return list(row)
    first = row.first_default()
    out = []
    for k, cell in row.stored():
        if first is not None and first < k:
            out.append(row.default)
            first = None
        out.append(cell)
    if first is not None:
        out.append(row.default)
    return out


def table_columns(table: IndexingTable, count: int) -> list[list[OperandIndexing]]:
    """For each of ``count`` operands, the cells of its column whose union is the column's, in
    order of first occurrence (``[row[i] for row in table]`` without visiting a default cell
    more than once). A row object that appears twice in the table (``[row] * n``) is read once:
    its second copy adds nothing to a union."""
    placed: list[list[tuple[int, OperandIndexing]]] = [[] for _ in range(count)]
    seen_rows: set[int] = set()
    # sparse rows grouped by default cell: (default, [(row index, row)])
    by_default: list[tuple[OperandIndexing, list[tuple[int, SparseRow]]]] = []
    for r, row in enumerate(table):
        if id(row) in seen_rows:
            continue
        seen_rows.add(id(row))
        if isinstance(row, SparseRow):
            for k, cell in row.stored():
                if k < count:
                    placed[k].append((r, cell))
            for default, rows in by_default:
                if default is row.default or default == row.default:
                    rows.append((r, row))
                    break
            else:
                by_default.append((row.default, [(r, row)]))
        else:
            for k in range(min(len(row), count)):
                placed[k].append((r, row[k]))
    if by_default:
        for default, rows in by_default:
            _place_default(placed, default, rows, count)
        for column in placed:
            column.sort(key=lambda entry: entry[0])
    return [[cell for _, cell in column] for column in placed]


def _place_default(
    placed: list[list[tuple[int, OperandIndexing]]],
    default: OperandIndexing,
    rows: list[tuple[int, SparseRow]],
    count: int,
) -> None:
    """Put ``default`` once in each column, at the first of ``rows`` that does not store it."""
    uniform = len({len(row) for _, row in rows}) == 1
    # which of these rows store a cell in each column, ascending (rows are in table order)
    stored_in: list[list[int]] = [[] for _ in range(count)]
    for r, row in rows:
        for k, _ in row.stored():
            if k < count:
                stored_in[k].append(r)
    for k in range(count):
        mine = stored_in[k]
        first: int | None = None
        if uniform:
            if k < len(rows[0][1]):
                # the rows storing column k are a prefix of ``rows`` up to the first gap
                j = 0
                while j < len(mine) and j < len(rows) and rows[j][0] == mine[j]:
                    j += 1
                first = rows[j][0] if j < len(rows) else None
        else:
            stored = set(mine)
            first = next((r for r, row in rows if k < len(row) and r not in stored), None)
        if first is not None:
            placed[k].append((first, default))
