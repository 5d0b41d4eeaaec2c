"""The heatmap of one operand as text lines (``hloidx show``) and as a JSON document."""

from __future__ import annotations

from typing import Any

#: background colours of the count levels (white: never read), and the ramp used without colour
_COLOURS = [
    "grey93",
    "light_sky_blue1",
    "sky_blue2",
    "steel_blue1",
    "dodger_blue3",
    "blue3",
    "navy_blue",
]

_RAMP = " .:-=+*#"

#: what a picture from sampled counts says above its cells (and the SVG across them)
SAMPLED_WARNING = (
    "SAMPLED, not exact: counts scaled from a sample of domain points; "
    "differences between cells may be sampling noise"
)


def picture_document(name: str, operand: int, op: Any, pic: Any) -> dict[str, Any]:
    """``hloidx show ... --format json``: the picture's cells and what they count."""
    return {
        "schema_version": 1,
        "instruction": name,
        "operand": operand,
        "operand_name": op.name,
        "shape": list(pic.shape),
        "dims": list(pic.dims),
        "block": list(pic.block),
        "kind": pic.kind,
        "note": pic.note,
        "aggregation": pic.aggregation or None,
        "cells": [
            [
                {"index": c.index, "count": c.count, "total": c.total, "highlight": c.highlight}
                for c in row
            ]
            for row in pic.cells
        ],
    }


def picture_lines(
    title: str, pic: Any, marked: str = "the chosen output element", plain: bool = True
) -> list[Any]:
    """The lines `hloidx show` draws (Rich ``Text``): the cells as a ramp of characters when
    ``plain`` (a pipe, a file, NO_COLOR; ``hloidx.show`` in Python), else as coloured blocks."""
    from rich.text import Text

    from ..pictures.grid import buckets, level

    edges = buckets(pic.max_count)
    lines = [Text(title, style="bold")]
    if pic.kind == "sampled":
        # said before the cells, where the eye lands: a sampled picture's texture is noise
        lines.append(Text("  " + SAMPLED_WARNING, style="bold yellow"))
    for row in pic.cells:
        line = Text("  ")
        for cell in row:
            k = min(level(cell.count, edges), len(_COLOURS) - 1)
            if plain:
                line.append(("X" if cell.highlight else _RAMP[min(k, len(_RAMP) - 1)]) * 2)
            else:
                mark = "◆ " if cell.highlight else "  "
                line.append(mark, style=f"bold orange1 on {_COLOURS[k]}")
        lines.append(line)
    legend = Text("  reads: ")
    whole_steps = edges == [float(k) for k in range(len(edges))]
    for k, edge in enumerate(edges):
        label = f"{edge:g}" if k == 0 or whole_steps else f"≤{edge:.3g}"
        if plain:
            legend.append(f"'{_RAMP[min(k, len(_RAMP) - 1)] * 2}' {label}  ")
        else:
            legend.append("  ", style=f"on {_COLOURS[min(k, len(_COLOURS) - 1)]}")
            legend.append(f" {label}  ")
    values = {cell.count for row in pic.cells for cell in row}
    if len(values) == 1 and pic.max_count > 0:
        # one count everywhere: say it, rather than a scale of levels no cell uses
        legend.append(f"(every cell {pic.max_count:,.6g})")
    lines.append(legend)
    if any(c.highlight for row in pic.cells for c in row):
        lines.append(Text("  " + ("XX" if plain else "◆") + f" read by {marked}"))
    if pic.aggregation:
        lines.append(Text("  " + pic.aggregation, style="dim"))
    if pic.kind != "exact":
        lines.append(Text(f"  {pic.kind}: {pic.note}", style="yellow"))
    return lines
