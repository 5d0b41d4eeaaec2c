"""The ``maps --format html`` page's style and script. The script reads the page's JSON (see
:mod:`.page_data`), fills the summary table (sortable by any column), lists every instruction
as a closed ``<details>`` and writes an instruction's operands (maps, verdicts, status,
utilization, picture) when it is opened. A picture's cells are drawn when it comes into view.
Nothing is fetched: the page works offline, from a file."""

from __future__ import annotations

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
code, pre, #summary td { font-family: ui-monospace, monospace; font-size: 12px; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; cursor: pointer; user-select: none; }
th[data-order="asc"]::after { content: " ▲"; } th[data-order="desc"]::after { content: " ▼"; }
details.instruction { border-top: 1px solid #ddd; padding: 0.2em 0; }
details.instruction > summary { cursor: pointer; }
details.instruction > summary h3 { display: inline; font-size: 1em; font-weight: normal; }
div.operand { margin: 0.3em 0 0.8em 1em; }
.exact { color: #2a7d2a; } .unknown { color: #b36b00; font-weight: bold; }
.over-approximation { color: #b36b00; } .note { color: #777; }
pre { margin: 0.2em 0; white-space: pre-wrap; }
"""

_SCRIPT = """
var D = window.hloidxData, S = D.s;
var NS = "http://www.w3.org/2000/svg", CELL = 14;
var PALETTE = ["#ffffff", "#deebf7", "#9ecae1", "#6baed6", "#3182bd", "#08519c", "#08306b"];
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) { e.className = cls; }
  if (text !== undefined) { e.textContent = text; }
  return e;
}
function sv(tag, attrs, text) {
  var e = document.createElementNS(NS, tag);
  for (var a in attrs) { e.setAttribute(a, attrs[a]); }
  if (text !== undefined) { e.textContent = text; }
  return e;
}
function small(x, y, extra) {
  var a = {x: x, y: y, "font-family": "monospace", "font-size": 10};
  for (var k in extra || {}) { a[k] = extra[k]; }
  return a;
}
// The summary table, a row per operand: a cell is a string, or [text, value to sort by].
var tbody = document.querySelector("#summary tbody"), rows = document.createDocumentFragment();
D.rows.forEach(function (row) {
  var tr = document.createElement("tr");
  row.forEach(function (cell, i) {
    var td = document.createElement("td");
    if (Array.isArray(cell)) {
      td.textContent = S[cell[0]];
      if (cell[1] !== null) { td.setAttribute("data-value", cell[1]); }
    } else if (i === 0) {
      var a = el("a", null, S[cell]); a.href = "#ins-" + S[cell]; td.appendChild(a);
    } else { td.textContent = S[cell]; }
    tr.appendChild(td);
  });
  rows.appendChild(tr);
});
tbody.appendChild(rows);
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
// A picture's cells, written compactly (data-cells, run-length), drawn when it comes into view.
function drawCells(svg) {
  var spec = svg.getAttribute("data-cells");
  if (spec === null) { return; }
  svg.removeAttribute("data-cells");
  var counts = [];
  spec.split(",").forEach(function (run) {
    var part = run.split("*"), value = parseFloat(part[0]);
    var n = part.length > 1 ? parseInt(part[1], 10) : 1;
    for (var i = 0; i < n; i++) { counts.push(value); }
  });
  function ints(name) { return svg.getAttribute(name).split(",").map(Number); }
  var grid = ints("data-grid"), cells = ints("data-cell-grid"), block = ints("data-block");
  var edges = ints("data-edges"), origin = ints("data-origin");
  function level(count) {
    if (count <= 0) { return 0; }
    for (var k = 1; k < edges.length; k++) { if (count <= edges[k] + 1e-9) { return k; } }
    return edges.length - 1;
  }
  function span(a, b) { return a === b ? String(a) : a + "-" + b; }
  var group = sv("g", {});
  for (var r = 0; r < cells[0]; r++) {
    for (var c = 0; c < cells[1]; c++) {
      var count = counts[r * cells[1] + c];
      var r0 = r * block[0], r1 = Math.min(r0 + block[0], grid[0]) - 1;
      var c0 = c * block[1], c1 = Math.min(c0 + block[1], grid[1]) - 1;
      var index = span(r0, r1) + "," + span(c0, c1);
      var rect = sv("rect", {x: origin[0] + c * CELL, y: origin[1] + r * CELL, width: CELL,
        height: CELL, fill: PALETTE[Math.min(level(count), PALETTE.length - 1)],
        stroke: "#cccccc", "stroke-width": "0.5", "data-index": index, "data-count": count});
      rect.appendChild(sv("title", {}, "[" + index + "] read " + count + "\\u00d7"));
      group.appendChild(rect);
    }
  }
  svg.insertBefore(group, svg.querySelector(".sampled-mark"));
}
var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (seen) {
  seen.forEach(function (e) {
    if (e.isIntersecting) { drawCells(e.target); observer.unobserve(e.target); }
  });
}) : null;
// A picture as the SVG hloidx show writes (its cells left to drawCells); see page_data.
function buckets(counts) {
  var most = Math.max.apply(null, counts.concat([0])), edges = [0], k;
  if (most <= 0) { return edges; }
  if (most <= 5 && most % 1 === 0) { for (k = 1; k <= most; k++) { edges.push(k); } }
  else { for (k = 1; k < 6; k++) { edges.push(most / 5 * k); } }
  return edges;
}
function picture(p) {
  var rows = p[11], cols = p[12], left = 40, top = 18, agg = S[p[6]], note = S[p[7]];
  var counts = p[8].split(",").map(function (run) { return parseFloat(run.split("*")[0]); });
  var edges = buckets(counts), kind = S[p[0]];
  var width = Math.max(left + cols * CELL + 20, 360), legend = top + rows * CELL + 16;
  var height = legend + 30 + (agg ? 14 : 0) + (note ? 14 : 0);
  var s = sv("svg", {width: width, height: height, viewBox: "0 0 " + width + " " + height,
    "class": "hloidx-picture", "data-kind": kind, "data-shape": S[p[1]],
    "data-rows-dim": p[2], "data-cols-dim": p[3], "data-block": p[4] + "," + p[5],
    "data-aggregation": agg || "none", "data-cells": p[8], "data-grid": p[9] + "," + p[10],
    "data-cell-grid": rows + "," + cols, "data-edges": edges.join(","),
    "data-origin": left + "," + top, "data-palette": PALETTE.join(",")});
  if (p[2] >= 0) {
    s.appendChild(sv("text", small(4, top + 10, {"font-size": 9}), "d" + p[2]));
  }
  if (kind === "sampled" && rows && cols) {
    var mid = top + Math.floor(rows * CELL / 2), g = sv("g", {"class": "sampled-mark"});
    g.appendChild(sv("rect", {x: left, y: mid - 9, width: cols * CELL, height: 14,
      fill: "#ffffff", opacity: "0.85"}));
    g.appendChild(sv("text", small(left + 4, mid + 2, {"font-weight": "bold", fill: "#b30000"}),
      "SAMPLED: estimated counts, not exact"));
    s.appendChild(g);
  }
  edges.forEach(function (edge, k) {
    var x = left + k * 48;
    s.appendChild(sv("rect", {x: x, y: legend, width: CELL, height: CELL,
      fill: PALETTE[Math.min(k, 6)], stroke: "#999", "stroke-width": "0.5", "class": "legend",
      "data-level": k, "data-upto": edge}));
    s.appendChild(sv("text", small(x + CELL + 3, legend + 11), S[p[13][k]]));
  });
  var y = legend + 30;
  if (agg) { s.appendChild(sv("text", small(4, y), agg)); y += 14; }
  if (note) { s.appendChild(sv("text", small(4, y), kind + ": " + note)); }
  if (observer) { observer.observe(s); } else { drawCells(s); }
  return s;
}
// An instruction's operands, written when it is first opened.
function fill(details) {
  var ins = details.hloidx;
  if (!ins || details.getAttribute("data-filled")) { return; }
  details.setAttribute("data-filled", "1");
  ins[4].forEach(function (n) { details.appendChild(el("p", "note", S[n])); });
  ins[5].forEach(function (op, k) {
    var div = el("div", "operand"), h = el("h4"), status = S[op[2]], lines = "";
    h.appendChild(el("code", null, "operand " + k + ": " + S[op[0]] + " " + S[op[1]]));
    h.appendChild(document.createTextNode(" "));
    h.appendChild(el("span", status, status));
    if (op[3] >= 0) { h.appendChild(document.createTextNode(S[op[3]])); }
    [["output\\u2192input", op[4]], ["input\\u2192output", op[5]]].forEach(function (d) {
      for (var j = 0; j < d[1].length; j += 2) {
        var v = d[1][j + 1];
        lines += d[0] + ": " + S[d[1][j]] + (v >= 0 ? "   verified: " + S[v] : "") + "\\n";
      }
    });
    div.appendChild(h);
    div.appendChild(el("pre", null, lines));
    var p = op[6];
    if (typeof p === "number") { div.appendChild(el("p", "note", "no picture: " + S[p])); }
    else if (p) { div.appendChild(picture(p)); }
    details.appendChild(div);
  });
}
var list = document.getElementById("instructions"), all = document.createDocumentFragment();
D.ins.forEach(function (ins) {
  var d = el("details", "instruction"), sm = el("summary"), h = el("h3");
  d.id = "ins-" + S[ins[0]];
  h.appendChild(el("code", null, S[ins[0]] + " = " + S[ins[1]] + " " + S[ins[2]]));
  h.appendChild(document.createTextNode(" "));
  h.appendChild(el("span", "note", "(" + S[ins[3]] + ")"));
  sm.appendChild(h);
  d.appendChild(sm);
  d.hloidx = ins;
  sm.addEventListener("click", function () { fill(d); });
  d.addEventListener("toggle", function () { if (d.open) { fill(d); } });
  all.appendChild(d);
});
list.appendChild(all);
function openAll(open) {
  list.querySelectorAll("details.instruction").forEach(function (d) {
    if (open) { fill(d); }
    d.open = open;
  });
}
document.getElementById("open-all").addEventListener("click", function () { openAll(true); });
document.getElementById("close-all").addEventListener("click", function () { openAll(false); });
function openLinked() {
  var d = location.hash.indexOf("#ins-") === 0 &&
    document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (d) { fill(d); d.open = true; d.scrollIntoView(); }
}
window.addEventListener("hashchange", openLinked);
openLinked();
"""

#: unpacks the page's script and data (``page_data.pack``) and runs the script; says so on the
#: page where the browser cannot
LOADER = """
(function () {
  var say = document.getElementById("loading");
  function fail(why) { say.textContent = why; console.error(why); }
  if (!("DecompressionStream" in window)) {
    fail("This browser cannot unpack the page: it needs DecompressionStream (Chrome 80, " +
      "Firefox 113, Safari 16.4 or later). hloidx maps FILE --format json has the same maps.");
    return;
  }
  var text = atob(document.getElementById("hloidx-data").textContent.trim());
  var bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) { bytes[i] = text.charCodeAt(i); }
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  new Response(stream).text().then(function (page) {
    var cut = page.indexOf("\\u0000");
    window.hloidxData = JSON.parse(page.slice(cut + 1));
    var script = document.createElement("script");
    script.textContent = page.slice(0, cut);
    document.body.appendChild(script);
    say.remove();
    document.body.setAttribute("data-ready", "1");
  }, function (error) { fail("could not unpack the page: " + error); });
})();
"""


#: the script with its indentation and comment lines left out (the page carries it whole)
def _compact(script: str) -> str:
    return "\n".join(
        line.strip()
        for line in script.splitlines()
        if line.strip() and not line.strip().startswith("//")
    )


SCRIPT = _compact(_SCRIPT)
LOADER = _compact(LOADER)
