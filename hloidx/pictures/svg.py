"""A picture as a standalone SVG: one ``rect`` per cell carrying its element index and read count
(``data-index="i,j"``, ``data-count="4"``; a block names its ranges and says how it
aggregates), so that scripts and tests can read the picture back; a legend of the counts."""

from __future__ import annotations

from html import escape

from .grid import Picture, buckets, level

#: white (never read) to dark blue (read most), then the highlight colour
PALETTE = ["#ffffff", "#deebf7", "#9ecae1", "#6baed6", "#3182bd", "#08519c", "#08306b"]
HIGHLIGHT = "#e6550d"
CELL = 14
_SMALL = 'font-family="monospace" font-size="10"'


def svg(pic: Picture, title: str = "") -> str:
    """The picture as SVG (the ``maps --format html`` page draws the same from
    ``page_data.picture_spec`` in the browser)."""
    edges = buckets(pic.max_count)
    n_rows = len(pic.cells)
    n_cols = len(pic.cells[0]) if pic.cells else 0
    left, top = 40, 34 if title else 18
    width = left + n_cols * CELL + 20
    legend_top = top + n_rows * CELL + 16
    height = legend_top + 30 + (14 if pic.aggregation else 0) + (14 if pic.note else 0)
    width = max(width, 360)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" class="hloidx-picture" data-kind="{pic.kind}" '
        f'data-shape="{",".join(map(str, pic.shape))}" data-rows-dim="{pic.dims[0]}" '
        f'data-cols-dim="{pic.dims[1]}" data-block="{pic.block[0]},{pic.block[1]}" '
        f'data-aggregation="{escape(pic.aggregation or "none")}">'
    ]
    if title:
        out.append(
            f'<text x="4" y="14" font-family="monospace" font-size="12">{escape(title)}</text>'
        )
    if pic.dims[0] >= 0:
        out.append(
            f'<text x="4" y="{top + 10}" font-family="monospace" font-size="9">'
            f"d{pic.dims[0]}</text>"
        )
    for row in pic.cells:
        for cell in row:
            k = level(cell.count, edges)
            x = left + (cell.cols[0] // pic.block[1]) * CELL
            y = top + (cell.rows[0] // pic.block[0]) * CELL
            if cell.highlight:
                stroke = f' stroke="{HIGHLIGHT}" stroke-width="2" data-highlight="1"'
            else:
                stroke = ' stroke="#cccccc" stroke-width="0.5"'
            block = "" if pic.block == (1, 1) else ' data-aggregate="max"'
            count = f"{cell.count:g}"
            out.append(
                f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{PALETTE[min(k, 6)]}"'
                f'{stroke} data-index="{cell.index}" data-count="{count}"'
                f' data-total="{cell.total:g}"{block}>'
                f"<title>[{cell.index}] read {count}×</title></rect>"
            )
    if pic.kind == "sampled" and n_rows and n_cols:
        # across the cells, not only in the caption: a sampled picture's texture is noise
        mid = top + n_rows * CELL // 2
        out.append(
            f'<g class="sampled-mark"><rect x="{left}" y="{mid - 9}" width="{n_cols * CELL}" '
            f'height="14" fill="#ffffff" opacity="0.85"/>'
            f'<text x="{left + 4}" y="{mid + 2}" {_SMALL} font-weight="bold" fill="#b30000">'
            "SAMPLED: estimated counts, not exact</text></g>"
        )
    # the legend: one swatch per level, with the largest count it stands for
    whole_steps = all(float(e).is_integer() for e in edges) and edges == [
        float(k) for k in range(len(edges))
    ]
    for k, edge in enumerate(edges):
        x = left + k * 48
        label = f"{edge:g}" if k == 0 or whole_steps else f"≤{edge:.3g}"
        out.append(
            f'<rect x="{x}" y="{legend_top}" width="{CELL}" height="{CELL}" '
            f'fill="{PALETTE[min(k, 6)]}" stroke="#999" stroke-width="0.5" class="legend" '
            f'data-level="{k}" data-upto="{edge:g}"/>'
            f'<text x="{x + CELL + 3}" y="{legend_top + 11}" font-family="monospace" '
            f'font-size="10">{escape(label)}</text>'
        )
    y = legend_top + 30
    if pic.aggregation:
        out.append(f'<text x="4" y="{y}" {_SMALL}>{escape(pic.aggregation)}</text>')
        y += 14
    if pic.note:
        out.append(f'<text x="4" y="{y}" {_SMALL}>{escape(pic.kind)}: {escape(pic.note)}</text>')
    out.append("</svg>")
    return "\n".join(line for line in out if line)


def run_lengths(pic: Picture) -> str:
    """The cells' counts, row by row, run-length encoded: ``4*96,0,2`` is 96 fours, a 0, a 2."""
    flat = [cell.count for row in pic.cells for cell in row]
    runs: list[str] = []
    k = 0
    while k < len(flat):
        n = 1
        while k + n < len(flat) and flat[k + n] == flat[k]:
            n += 1
        runs.append(_number(flat[k]) + (f"*{n}" if n > 1 else ""))
        k += n
    return ",".join(runs)


def _number(value: float) -> str:
    """A count as short text that reads back to the same float."""
    return str(int(value)) if float(value).is_integer() else repr(value)
