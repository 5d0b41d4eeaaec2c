"""One self-contained HTML page for a module (``hloidx maps FILE --format html``): the triage
table (sortable), each instruction's maps, verdicts and utilization, and the picture of each
operand as inline SVG. No network, no external script. Pictures are bounded: a fixed number
per page, counts from at most a fixed budget of domain points per map (sampled beyond, and
labelled so)."""

from __future__ import annotations

from html import escape
from typing import Any

from . import operand_picture
from .svg import svg

MAX_PICTURES = 120
PICTURE_BUDGET = 200_000

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
code, pre, #summary td { font-family: ui-monospace, monospace; font-size: 12px; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; cursor: pointer; user-select: none; }
th[data-order="asc"]::after { content: " ▲"; } th[data-order="desc"]::after { content: " ▼"; }
section.instruction { border-top: 1px solid #ddd; padding-top: 0.4em; }
div.operand { margin: 0.3em 0 0.8em 1em; }
.exact { color: #2a7d2a; } .unknown { color: #b36b00; font-weight: bold; }
.over-approximation { color: #b36b00; } .note { color: #777; }
pre { margin: 0.2em 0; white-space: pre-wrap; }
"""

# Sorting the summary table by a column: numbers as numbers, the rest as text.
_SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th, column) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var order = th.getAttribute("data-order") === "asc" ? "desc" : "asc";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("data-order"); });
    th.setAttribute("data-order", order);
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[column].getAttribute("data-value") || a.cells[column].textContent;
      var y = b.cells[column].getAttribute("data-value") || b.cells[column].textContent;
      var nx = parseFloat(x), ny = parseFloat(y), c;
      if (!isNaN(nx) && !isNaN(ny)) { c = nx - ny; } else { c = x.localeCompare(y); }
      return order === "asc" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
// A picture's cells are written compactly (data-cells, run-length) and drawn here when the
// picture comes into view: the page stays small however many pictures it holds.
function drawCells(svg) {
  var spec = svg.getAttribute("data-cells");
  if (spec === null) { return; }
  svg.removeAttribute("data-cells");
  var ns = "http://www.w3.org/2000/svg", counts = [];
  spec.split(",").forEach(function (run) {
    var part = run.split("*"), value = parseFloat(part[0]);
    var n = part.length > 1 ? parseInt(part[1], 10) : 1;
    for (var i = 0; i < n; i++) { counts.push(value); }
  });
  function ints(name) { return svg.getAttribute(name).split(",").map(Number); }
  var grid = ints("data-grid"), cells = ints("data-cell-grid"), block = ints("data-block");
  var edges = ints("data-edges"), origin = ints("data-origin");
  var palette = svg.getAttribute("data-palette").split(",");
  function level(count) {
    if (count <= 0) { return 0; }
    for (var k = 1; k < edges.length; k++) { if (count <= edges[k] + 1e-9) { return k; } }
    return edges.length - 1;
  }
  function span(a, b) { return a === b ? String(a) : a + "-" + b; }
  var group = document.createElementNS(ns, "g");
  for (var r = 0; r < cells[0]; r++) {
    for (var c = 0; c < cells[1]; c++) {
      var count = counts[r * cells[1] + c];
      var r0 = r * block[0], r1 = Math.min(r0 + block[0], grid[0]) - 1;
      var c0 = c * block[1], c1 = Math.min(c0 + block[1], grid[1]) - 1;
      var index = span(r0, r1) + "," + span(c0, c1);
      var rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", origin[0] + c * 14); rect.setAttribute("y", origin[1] + r * 14);
      rect.setAttribute("width", 14); rect.setAttribute("height", 14);
      rect.setAttribute("fill", palette[Math.min(level(count), palette.length - 1)]);
      rect.setAttribute("stroke", "#cccccc"); rect.setAttribute("stroke-width", "0.5");
      rect.setAttribute("data-index", index); rect.setAttribute("data-count", count);
      var title = document.createElementNS(ns, "title");
      title.textContent = "[" + index + "] read " + count + "\u00d7";
      rect.appendChild(title);
      group.appendChild(rect);
    }
  }
  var mark = svg.querySelector(".sampled-mark");
  svg.insertBefore(group, mark || null);
}
var lazy = document.querySelectorAll("svg[data-cells]");
if ("IntersectionObserver" in window) {
  var observer = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) { drawCells(entry.target); observer.unobserve(entry.target); }
    });
  });
  lazy.forEach(function (svg) { observer.observe(svg); });
} else {
  lazy.forEach(drawCells);
}
"""


def report(analysis: Any, summary: dict[str, Any], spelling: str = "floordiv") -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>hloidx: {escape(analysis.module)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>module {escape(analysis.module)}</h1>",
        f"<p>{len(analysis.instructions)} instructions analysed. Each picture colours an "
        "operand's elements by how many times they are read when the whole output is "
        "computed (white: never).</p>",
        "<h2>Summary</h2>",
        _summary_table(summary),
        "<h2>Instructions</h2>",
        f'<p class="note">The first {MAX_PICTURES} operands have a picture (drawn when it '
        "comes into view); <code>hloidx show FILE --instruction NAME --operand N</code> "
        "draws any other.</p>",
    ]
    pictures = 0
    for ins in analysis.instructions:
        if not ins.operands:
            continue
        section, drawn = instruction_section(ins, spelling, MAX_PICTURES - pictures, lazy=True)
        parts.extend(section)
        pictures += drawn
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts)


def instruction_section(
    ins: Any, spelling: str = "floordiv", pictures_left: int = MAX_PICTURES, lazy: bool = False
) -> tuple[list[str], int]:
    """The HTML of one analysed instruction (its maps, verdicts, utilization and, while
    ``pictures_left``, each operand's picture as inline SVG), and the number of pictures drawn.
    The report shows each instruction so (``lazy``: the cells drawn by its script, see
    ``svg``); a notebook shows one instruction so, every cell written out."""
    from ..hlo.report import format_map, verdict_label

    parts: list[str] = []
    pictures = 0
    parts.append(
        f'<section class="instruction" id="ins-{escape(ins.name)}"><h3><code>'
        f"{escape(ins.name)} = {escape(ins.shape)} {escape(ins.opcode)}</code>"
        f' <span class="note">({escape(ins.computation)})</span></h3>'
    )
    for note in ins.notes:
        parts.append(f'<p class="note">{escape(note)}</p>')
    for k, op in enumerate(ins.operands):
        status = op.status or ""
        util = ""
        if op.utilization is not None and not op.utilization.is_unknown:
            u = op.utilization
            util = f" utilization: distinct {u.distinct:.4g}, reads {u.reads:.4g} ({u.kind})"
        parts.append(
            f'<div class="operand"><h4><code>operand {k}: {escape(op.name)} '
            f'{escape(op.shape)}</code> <span class="{escape(status)}">{escape(status)}</span>'
            f"{escape(util)}</h4><pre>"
        )
        for label, maps, verdicts in (
            ("output→input", op.output_to_input, op.output_to_input_verdicts),
            ("input→output", op.input_to_output, op.input_to_output_verdicts),
        ):
            for j, m in enumerate(maps):
                verdict = verdicts[j] if j < len(verdicts) else None
                tail = f"   verified: {verdict_label(verdict)}" if verdict is not None else ""
                parts.append(escape(f"{label}: {format_map(m, spelling)}{tail}") + "\n")
        parts.append("</pre>")
        if pictures >= pictures_left:
            if not lazy:  # the report says it once, above its instructions
                parts.append(
                    f'<p class="note">picture left out: a page holds {MAX_PICTURES}; '
                    f"<code>hloidx show FILE --instruction {escape(ins.name)} --operand {k}"
                    "</code> draws it</p>"
                )
        else:
            pic, counts = operand_picture(ins, k, budget=PICTURE_BUDGET, max_cols=48)
            if pic is None:
                parts.append(f'<p class="note">no picture: {escape(counts.note)}</p>')
            else:
                parts.append(svg(pic, lazy=lazy))
                pictures += 1
        parts.append("</div>")
    parts.append("</section>")
    return parts, pictures


def _summary_table(summary: dict[str, Any]) -> str:
    header = ["instruction", "op / kind", "shape", "operand", "distinct", "reads", "status", "maps"]
    timed = "device" in summary and any("estimated_time_ns" in r for r in summary["rows"])
    if timed:
        header.append(f"est. time ns ({summary['device']}, an estimate)")
    rows = []
    for row in summary["rows"]:
        kind = " ".join(x for x in (row["opcode"], row["kind"]) if x)
        for o in row["operands"]:
            estimate = row.get("estimated_time_ns")
            extra = [("-" if estimate is None else f"{estimate:.0f}", estimate)] if timed else []
            cells = [
                (row["name"], None),
                (kind, None),
                (row["shape"], None),
                (f"{o['name']} {o['shape']}", None),
                (_num(o["distinct"]), o["distinct"]),
                (_num(o["reads"]), o["reads"]),
                (o["status"], None),
                (str(o["maps"]), o["maps"]),
                *extra,
            ]
            rows.append(
                "<tr>"
                + "".join(f"<td{_value(v)}>{escape(str(t))}</td>" for t, v in cells)
                + "</tr>"
            )
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    return (
        f'<table class="sortable" id="summary"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _num(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}"


def _value(value: float | None) -> str:
    return "" if value is None else f' data-value="{value}"'
