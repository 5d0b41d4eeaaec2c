"""Pictures of access patterns: where in an operand an instruction reads, and how often.

``operand_picture`` draws one operand of one analysed instruction (read counts from its
output-to-input maps, see :mod:`.counts`); :mod:`.svg` writes it as SVG, :mod:`.html` a whole
module as one self-contained page.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .counts import ReadCounts, read_counts
from .grid import Picture, picture


def operand_picture(
    ins: Any,
    operand: int,
    *,
    dims: tuple[int, int] | None = None,
    output_element: tuple[int, ...] | None = None,
    output_region: tuple[tuple[int, int], ...] | None = None,
    operand_points: list[tuple[int, ...]] | None = None,
    max_rows: int = 32,
    max_cols: int = 64,
    budget: int | None = None,
) -> tuple[Picture | None, ReadCounts]:
    """The picture of operand ``operand`` of ``ins`` (an ``InstructionAnalysis``), or None with
    the reason in the counts' note (unknown indexing, a tuple or token operand).

    The elements read by one output element (``output_element``) or by a box of output
    elements such as a tile (``output_region``, inclusive bounds) are marked; or
    ``operand_points``, operand elements given directly (what one warp of a GPU kernel
    reads)."""
    op = ins.operands[operand]
    instr = ins.instruction
    shape_of = instr.operands[operand].shape if instr is not None else None
    if shape_of is None or not shape_of.is_array:
        return None, ReadCounts(None, "unknown", _not_an_array(instr, operand))
    shape = tuple(shape_of.dims)
    options = {} if budget is None else {"budget": budget}
    counts = read_counts(list(op.output_to_input), shape, **options)
    if counts.is_unknown:
        return None, counts
    maps = list(op.output_to_input)
    highlight = None
    if output_element is not None:
        highlight = read_counts(maps, shape, point=output_element, **options)
    elif output_region is not None:
        highlight = read_counts(maps, shape, region=output_region, **options)
    elif operand_points is not None:
        marks = np.zeros(shape, dtype=np.float64)
        for point in operand_points:
            marks[point] = 1.0
        highlight = ReadCounts(marks, "exact")
    pic = picture(
        counts, shape, dims=dims, max_rows=max_rows, max_cols=max_cols, highlight=highlight
    )
    return pic, counts


def _not_an_array(instr: Any, operand: int) -> str:
    """Why an operand has no picture when it is not an array, and what to show instead."""
    if instr is None:
        return "the instruction was not analysed"
    source = instr.operands[operand]
    shape = source.shape
    if not shape.is_tuple:
        return f"operand {operand} is a {shape} value, which holds no elements to draw"
    readers = [
        user.name
        for user in (source.computation.instructions if source.computation else [])
        if user.opcode == "get-tuple-element" and user.operands and user.operands[0] is source
    ]
    text = (
        f"operand {operand} is a tuple of {len(shape.tuple_shapes or ())} elements, not an "
        "array: a picture draws the elements of one array (a tuple's elements are arrays of "
        "different shapes); show an instruction that reads one of its arrays"
    )
    if readers:
        text += f", such as {', '.join(readers[:4])}" + (", ..." if len(readers) > 4 else "")
    return text


__all__ = ["Picture", "ReadCounts", "operand_picture", "picture", "read_counts"]
