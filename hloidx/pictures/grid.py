"""An operand's read counts as a 2-D picture: two dimensions shown (the others summed over), and
blocks of elements per cell when the operand is larger than the picture may be."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .counts import ReadCounts


@dataclass(frozen=True)
class Cell:
    rows: tuple[int, int]  # inclusive element range along the row dimension
    cols: tuple[int, int]  # ... along the column dimension
    count: float  # the largest count among the cell's elements (see Picture.aggregation)
    total: float  # the sum of the cell's counts
    highlight: bool = False

    @property
    def index(self) -> str:
        """``"i,j"`` for one element, ``"i0-i1,j0-j1"`` for a block."""

        def span(r: tuple[int, int]) -> str:
            return str(r[0]) if r[0] == r[1] else f"{r[0]}-{r[1]}"

        return f"{span(self.rows)},{span(self.cols)}"


@dataclass
class Picture:
    shape: tuple[int, ...]  # the operand's shape
    dims: tuple[int, int]  # the operand dimensions shown as rows and columns (-1: none)
    cells: list[list[Cell]]
    block: tuple[int, int]  # elements per cell along rows, columns
    kind: str  # of the counts: exact, estimate, sampled
    note: str
    summed: tuple[int, ...]  # operand dimensions summed over

    @property
    def aggregation(self) -> str:
        parts = []
        if self.summed:
            dims = ", ".join(str(d) for d in self.summed)
            parts.append(
                f"counts summed over dimension{'s' if len(self.summed) > 1 else ''} {dims}"
            )
        if self.block != (1, 1):
            parts.append(
                f"each cell is a block of {self.block[0]}x{self.block[1]} elements, "
                "coloured by its largest count"
            )
        return "; ".join(parts)

    @property
    def max_count(self) -> float:
        return max((c.count for row in self.cells for c in row), default=0.0)


def picture(
    counts: ReadCounts,
    shape: tuple[int, ...],
    *,
    dims: tuple[int, int] | None = None,
    max_rows: int = 32,
    max_cols: int = 64,
    highlight: ReadCounts | None = None,
) -> Picture:
    """The picture of ``counts`` (not unknown); ``highlight`` marks the elements it counts."""
    assert counts.counts is not None
    grid = counts.counts
    marks = highlight.counts if highlight is not None else None
    rank = len(shape)
    if rank == 0:
        grid = grid.reshape(1, 1)
        marks = marks.reshape(1, 1) if marks is not None else None
        shown, summed = (-1, -1), ()
    elif rank == 1:
        grid = grid.reshape(1, shape[0])
        marks = marks.reshape(1, shape[0]) if marks is not None else None
        shown, summed = (-1, 0), ()
    else:
        rows_dim, cols_dim = dims if dims is not None else (rank - 2, rank - 1)
        if rows_dim == cols_dim or not (0 <= rows_dim < rank and 0 <= cols_dim < rank):
            raise ValueError(f"--dims must name two different dimensions of 0..{rank - 1}")
        summed = tuple(d for d in range(rank) if d not in (rows_dim, cols_dim))
        grid = (
            np.moveaxis(grid, (rows_dim, cols_dim), (0, 1))
            .reshape(shape[rows_dim], shape[cols_dim], -1)
            .sum(axis=2)
        )
        if marks is not None:
            marks = (
                np.moveaxis(marks, (rows_dim, cols_dim), (0, 1))
                .reshape(shape[rows_dim], shape[cols_dim], -1)
                .sum(axis=2)
            )
        shown = (rows_dim, cols_dim)
    n_rows, n_cols = grid.shape
    block = (max(1, -(-n_rows // max_rows)), max(1, -(-n_cols // max_cols)))
    cells: list[list[Cell]] = []
    for r0 in range(0, n_rows, block[0]):
        row: list[Cell] = []
        for c0 in range(0, n_cols, block[1]):
            r1, c1 = min(r0 + block[0], n_rows) - 1, min(c0 + block[1], n_cols) - 1
            part = grid[r0 : r1 + 1, c0 : c1 + 1]
            marked = marks is not None and bool(marks[r0 : r1 + 1, c0 : c1 + 1].any())
            row.append(Cell((r0, r1), (c0, c1), float(part.max()), float(part.sum()), marked))
        cells.append(row)
    return Picture(tuple(shape), shown, cells, block, counts.kind, counts.note, summed)


def buckets(max_count: float, levels: int = 6) -> list[float]:
    """Upper edges of the colour levels: 0 alone, then equal steps up to the largest count."""
    if max_count <= 0:
        return [0.0]
    if max_count <= levels - 1 and float(max_count).is_integer():
        return [float(k) for k in range(int(max_count) + 1)]
    step = max_count / (levels - 1)
    return [0.0, *[step * k for k in range(1, levels)]]


def level(count: float, edges: list[float]) -> int:
    if count <= 0:
        return 0
    for k, edge in enumerate(edges[1:], 1):
        if count <= edge + 1e-9:
            return k
    return len(edges) - 1
