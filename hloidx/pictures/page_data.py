"""What the ``maps --format html`` page draws, as compact JSON that its script expands on demand
(issue 44: the page stays a small multiple of its module).

Every string (names, shapes, maps text, verdicts, statuses, notes) is written once, in a table
``s``, and referred to by its position: a real module prints the same few thousand maps many
thousands of times. Each part of the page is an array of such positions:

- ``rows``: the summary table, a row per operand; a cell is a string's position, or ``[text,
  value]`` (the text's position and the number a column sorts by, ``null`` where unknown);
- ``ins``: an instruction as ``[name, shape, opcode, computation, [note...], [operand...]]``;
  an operand as ``[name, shape, status, utilization or -1, o2i, i2o, picture]``, where ``o2i``
  and ``i2o`` are flat ``[map, verdict, map, verdict, ...]`` (verdict -1: none) and the picture
  is ``null`` (left out: a page holds ``MAX_PICTURES``), a note's position (no picture, and
  why), or a picture (an array, see ``picture_spec``).
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from typing import Any

from . import operand_picture
from .grid import Picture, buckets
from .svg import run_lengths

MAX_PICTURES = 120
PICTURE_BUDGET = 200_000


class Strings:
    """Each distinct string once, in the order first seen; ``strings(text)`` is its position."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.table)
            self.table.append(text)
        return found


def page_data(analysis: Any, summary: dict[str, Any], spelling: str = "floordiv") -> dict:
    """The page's JSON document: the string table, the summary's rows and every analysed
    instruction that has operands (its maps, verdicts, status, utilization, pictures)."""
    from ..hlo.report import format_map, verdict_label

    strings = Strings()
    rows, header = _rows(summary, strings)
    instructions = []
    pictures = 0
    for ins in analysis.instructions:
        if not ins.operands:
            continue
        operands = []
        for k, op in enumerate(ins.operands):
            lines = []
            for maps, verdicts in (
                (op.output_to_input, op.output_to_input_verdicts),
                (op.input_to_output, op.input_to_output_verdicts),
            ):
                flat: list[int] = []
                for j, m in enumerate(maps):
                    verdict = verdicts[j] if j < len(verdicts) else None
                    flat.append(strings(format_map(m, spelling)))
                    flat.append(-1 if verdict is None else strings(verdict_label(verdict)))
                lines.append(flat)
            picture: Any = None
            if pictures < MAX_PICTURES:
                pic, counts = operand_picture(ins, k, budget=PICTURE_BUDGET, max_cols=48)
                if pic is None:
                    picture = strings(counts.note)
                else:
                    picture = picture_spec(pic, strings)
                    pictures += 1
            operands.append(
                [
                    strings(op.name),
                    strings(op.shape),
                    strings(op.status or ""),
                    _utilization(op, strings),
                    *lines,
                    picture,
                ]
            )
        instructions.append(
            [
                strings(ins.name),
                strings(ins.shape),
                strings(ins.opcode),
                strings(ins.computation),
                [strings(n) for n in ins.notes],
                operands,
            ]
        )
    return {
        "s": strings.table,
        "header": header,
        "rows": rows,
        "ins": instructions,
        "pictures": pictures,
    }


def page_json(data: dict) -> str:
    """``data`` as JSON that may sit inside a ``<script>`` element (no ``<`` to end it)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def pack(script: str, data: dict) -> str:
    """The page's script and data as one base64 text of their deflated bytes (zlib format), the
    script first, then a NUL, then the data as JSON: what its loader unpacks in the browser
    (``DecompressionStream``). Real modules' maps and tables repeat so much that this is a
    tenth or less of the JSON."""
    payload = (script + "\0" + page_json(data)).encode("utf-8")
    return base64.b64encode(zlib.compress(payload, 9)).decode("ascii")


def unpack(page: str) -> tuple[str, dict]:
    """The script and data a page (``report``'s HTML) carries: ``pack`` undone."""
    blob = page.split('id="hloidx-data">', 1)[1].split("</script>", 1)[0]
    script, _, data = zlib.decompress(base64.b64decode(blob)).decode("utf-8").partition("\0")
    return script, json.loads(data)


def picture_spec(pic: Picture, strings: Strings) -> list[Any]:
    """What the page's script needs to draw ``pic`` as ``svg.svg(pic)`` does:
    ``[kind, shape, rows dim, cols dim, block rows, block cols, aggregation, note, cells,
    grid rows, grid cols, cell rows, cell cols, [legend label...]]`` (strings by position), the
    cells' counts run-length encoded; the script works out the colour levels' edges from the
    largest count as ``grid.buckets`` does (the same floating-point steps)."""
    edges = buckets(pic.max_count)
    whole_steps = all(float(e).is_integer() for e in edges) and edges == [
        float(k) for k in range(len(edges))
    ]
    labels = [f"{e:g}" if k == 0 or whole_steps else f"≤{e:.3g}" for k, e in enumerate(edges)]
    last = pic.cells[-1][-1] if pic.cells and pic.cells[-1] else None
    return [
        strings(pic.kind),
        strings(",".join(map(str, pic.shape))),
        *pic.dims,
        *pic.block,
        strings(pic.aggregation),
        strings(pic.note),
        run_lengths(pic),
        *([last.rows[1] + 1, last.cols[1] + 1] if last else [0, 0]),
        len(pic.cells),
        len(pic.cells[0]) if pic.cells else 0,
        [strings(label) for label in labels],
    ]


def _compact(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _utilization(op: Any, strings: Strings) -> int:
    u = op.utilization
    if u is None or u.is_unknown:
        return -1
    return strings(f" utilization: distinct {u.distinct:.4g}, reads {u.reads:.4g} ({u.kind})")


def _rows(summary: dict[str, Any], strings: Strings) -> tuple[list[list[Any]], list[str]]:
    """The summary table's rows (a row per operand) and its header."""
    header = ["instruction", "op / kind", "shape", "operand", "distinct", "reads", "status", "maps"]
    timed = "device" in summary and any("estimated_time_ns" in r for r in summary["rows"])
    if timed:
        header.append(f"est. time ns ({summary['device']}, an estimate)")
    rows = []
    for row in summary["rows"]:
        kind = " ".join(x for x in (row["opcode"], row["kind"]) if x)
        for o in row["operands"]:
            cells = [
                strings(str(row["name"])),
                strings(kind),
                strings(str(row["shape"])),
                strings(f"{o['name']} {o['shape']}"),
                [strings(_num(o["distinct"])), _value(o["distinct"])],
                [strings(_num(o["reads"])), _value(o["reads"])],
                strings(str(o["status"])),
                [strings(str(o["maps"])), _value(o["maps"])],
            ]
            if timed:
                estimate = row.get("estimated_time_ns")
                text = "-" if estimate is None else f"{estimate:.0f}"
                cells.append([strings(text), _value(estimate)])
            rows.append(cells)
    return rows, header


def _num(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}"


def _value(value: Any) -> Any:
    """The number a column sorts by, as short JSON (``None``: unknown)."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value):
        return None
    return _compact(value) if abs(value) < 2**53 else value


__all__ = [
    "MAX_PICTURES",
    "PICTURE_BUDGET",
    "Strings",
    "pack",
    "page_data",
    "page_json",
    "picture_spec",
    "unpack",
]
