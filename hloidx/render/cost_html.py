"""``hloidx cost --format html``: one self-contained page with the table (sortable by a few
lines of optional inline script), a roofline chart in SVG and a bar of where the time goes."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from math import log10, sqrt
from typing import TYPE_CHECKING

from ..perf.text import human_bytes, human_count, human_time

if TYPE_CHECKING:
    from ..perf.costs import KernelCost
    from ..perf.report import CostReport
    from ..perf.step import Slice

_W, _H, _PAD = 640, 360, 48
_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7")

_SCRIPT = """
<script>
for (const th of document.querySelectorAll('th[data-k]')) {
  th.addEventListener('click', () => {
    const body = th.closest('table').tBodies[0], k = +th.dataset.k;
    const rows = [...body.rows], num = th.dataset.num === '1';
    const dir = th.dataset.dir === 'a' ? -1 : 1; th.dataset.dir = dir === 1 ? 'a' : 'd';
    rows.sort((a, b) => {
      const x = a.cells[k].dataset.v ?? a.cells[k].textContent;
      const y = b.cells[k].dataset.v ?? b.cells[k].textContent;
      return dir * (num ? (+y) - (+x) : String(x).localeCompare(String(y)));
    });
    rows.forEach(r => body.appendChild(r));
  });
}
</script>
"""


def peak_flops_per_s(report: CostReport) -> float:
    d = report.device
    return int(d.clock_rate_ghz * 2) * d.core_count * d.fpus_per_core * 1e9


def dram_bytes(k: KernelCost) -> int:
    """Bytes the kernel moves to and from DRAM: each operand's distinct bytes, its output."""
    return sum(o.bytes_distinct for o in k.operands) + k.bytes_written


def _row_text(k: KernelCost, total: float) -> str:
    share = f"{k.time_ns / total:.1%}" if total and k.exec_time_ns is not None else "-"
    return (
        f"{k.name} ({k.emitter}): {human_time(k.exec_time_ns)}, {share} of the kernels' time, "
        f"{human_count(k.flops)} flops, {human_bytes(k.bytes_read)} read, "
        f"{human_bytes(k.bytes_written)} written, {k.bound}-bound; {k.why}"
    )


def roofline_svg(report: CostReport) -> str:
    """Each kernel at (flops per byte, estimated flops per second) under the device's roofs."""
    total = report.kernels_time_ns
    peak = peak_flops_per_s(report)
    bandwidth = report.device.memory_bandwidth
    points = []
    for k in report.kernels:
        moved = dram_bytes(k)
        if k.exec_time_ns is None or not moved or not k.exec_time_ns or not k.flops:
            continue
        intensity = max(k.flops / moved, 1e-3)
        throughput = max(k.flops / (k.exec_time_ns * 1e-9), 1e6)
        points.append((k, intensity, throughput))
    undrawn = len(report.kernels) - len(points)
    x_lo, x_hi = -3.0, 4.0
    y_lo, y_hi = 6.0, log10(peak) + 0.5

    def px(x: float) -> float:
        return _PAD + (log10(x) - x_lo) / (x_hi - x_lo) * (_W - 2 * _PAD)

    def py(y: float) -> float:
        return _H - _PAD - (log10(y) - y_lo) / (y_hi - y_lo) * (_H - 2 * _PAD)

    ridge = peak / bandwidth
    roof = [
        (10**x_lo, min(bandwidth * 10**x_lo, peak)),
        (ridge, peak),
        (10**x_hi, peak),
    ]
    path = " ".join(f"{px(x):.1f},{py(max(y, 10**y_lo)):.1f}" for x, y in roof)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        'role="img" aria-label="roofline">',
        f'<rect x="0" y="0" width="{_W}" height="{_H}" fill="white"/>',
        f'<polyline points="{path}" fill="none" stroke="#333" stroke-width="2"/>',
        f'<text x="{_PAD}" y="{_PAD - 12}" font-size="12">roofline on '
        f"{escape(report.device.name)}: memory {bandwidth / 1e9:.0f} GB/s, compute "
        f"{peak / 1e12:.1f} Tflop/s (XLA's FPU model)</text>",
        f'<text x="{_W / 2:.0f}" y="{_H - 10}" font-size="12" text-anchor="middle">'
        "arithmetic intensity (flops per DRAM byte: distinct bytes read + written, log)</text>",
        f'<text x="{_W - _PAD}" y="{_PAD + 4}" font-size="10" text-anchor="end">'
        f"not drawn: {undrawn} kernel{'' if undrawn == 1 else 's'} without flops or an "
        "estimate</text>",
        f'<text x="12" y="{_H / 2:.0f}" font-size="12" transform="rotate(-90 12 {_H / 2:.0f})" '
        'text-anchor="middle">estimated flop/s (log)</text>',
    ]
    for e in range(int(x_lo), int(x_hi) + 1):
        parts.append(
            f'<text x="{px(10**e):.1f}" y="{_H - _PAD + 14}" font-size="10" '
            f'text-anchor="middle">1e{e}</text>'
        )
    for k, x, y in points:
        share = k.time_ns / total if total else 0.0
        r = 3 + 20 * sqrt(share)
        parts.append(
            f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="{r:.1f}" fill="#4e79a7" '
            f'fill-opacity="0.6" stroke="#1d3557"><title>{escape(_row_text(k, total))}</title>'
            "</circle>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def time_bar_svg(report: CostReport, top: int = 8) -> str:
    """Where the kernels' time goes: the top kernels, the rest summed."""
    total = report.kernels_time_ns
    ranked = [k for k in report.sorted("time") if k.exec_time_ns is not None]
    pieces = [(k.name, k.time_ns, _row_text(k, total)) for k in ranked[:top]]
    rest = sum(k.time_ns for k in ranked[top:])
    if rest:
        pieces.append((f"{len(ranked) - top} others", rest, "the other kernels together"))
    width = _W - 2 * _PAD
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="70">']
    x = float(_PAD)
    for i, (name, ns, tip) in enumerate(pieces):
        w = width * ns / total if total else 0.0
        colour = _COLOURS[i % len(_COLOURS)] if not name.endswith("others") else "#bab0ac"
        parts.append(
            f'<rect x="{x:.1f}" y="10" width="{w:.1f}" height="28" fill="{colour}">'
            f"<title>{escape(name)}: {human_time(ns)} ({ns / total:.1%}); {escape(tip)}</title>"
            "</rect>"
        )
        if w > 60:
            parts.append(
                f'<text x="{x + 3:.1f}" y="56" font-size="10">{escape(name[:14])} '
                f"{ns / total:.0%}</text>"
            )
        x += w
    parts.append("</svg>")
    legend = []
    for i, (name, ns, _) in enumerate(pieces):
        colour = _COLOURS[i % len(_COLOURS)] if not name.endswith("others") else "#bab0ac"
        legend.append(
            f'<span style="color:{colour}">■</span> {escape(name)} {human_time(ns)} '
            f"({ns / total:.1%})"
        )
    parts.append(f"<p>{' · '.join(legend)}</p>")
    return "\n".join(parts)


def _table(report: CostReport, sort: str) -> str:
    total = report.kernels_time_ns
    heads = [
        ("kernel", False), ("emitter", False), ("count", True), ("launch", False), ("flops", True),
        ("bytes read", True), ("bytes written", True), ("read ns", True), ("write ns", True),
        ("compute ns", True), ("estimated ns", True), ("bound", False), ("share", True),
        ("why", False),
    ]  # fmt: skip
    out = ["<table><thead><tr>"]
    for i, (h, num) in enumerate(heads):
        out.append(f'<th data-k="{i}" data-num="{int(num)}">{h}</th>')
    out.append("</tr></thead><tbody>")
    for k in report.sorted(sort):
        share = k.time_ns / total if total and k.exec_time_ns is not None else 0.0
        exec_v = -1 if k.exec_time_ns is None else k.exec_time_ns
        cells = [
            escape(k.name),
            escape(k.emitter),
            f'<td data-v="{k.launches}">{k.launches}',
            f"{k.blocks}×{k.threads_per_block}",
            f'<td data-v="{k.flops}">{human_count(k.flops)}',
            f'<td data-v="{k.bytes_read}">{human_bytes(k.bytes_read)}',
            f'<td data-v="{k.bytes_written}">{human_bytes(k.bytes_written)}',
            f"{k.read_time_ns:.0f}",
            f"{k.write_time_ns:.0f}",
            f"{k.compute_time_ns:.0f}",
            f'<td data-v="{exec_v}">{escape(human_time(k.exec_time_ns))}',
            k.bound,
            f'<td data-v="{share}">{share:.1%}',
            escape(k.why),
        ]
        row = "".join(c + "</td>" if c.startswith("<td") else f"<td>{c}</td>" for c in cells)
        out.append(f"<tr>{row}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _slice_tooltip(report: CostReport) -> Callable[[Slice], str]:
    total = report.kernels_time_ns
    kernels = {k.name: k for k in report.kernels}
    collectives = {r.name: r for r in report.collective_rows()}

    def tip(s: Slice) -> str:
        if s.name in kernels:
            k = kernels[s.name]
            return f"count {k.launches}; " + _row_text(k, total)
        if s.name in collectives:
            r = collectives[s.name]
            e = r.estimate
            if e is None:
                return f"{r.name} ({r.opcode}): communication not estimated"
            where = f", {e.communication}" if e.communication else ""
            return (
                f"{r.name} ({r.opcode}): {human_time(e.time_ns)}, count {r.count}, "
                f"exposed {human_time(r.exposed_ns)} a run{where}"
            )
        if s.args:
            return s.name + ": " + ", ".join(f"{k} {v}" for k, v in s.args.items())
        return s.name

    return tip


def step_html(report: CostReport) -> str:
    """The stage, the loops and the step's timeline (empty without a step)."""
    from ..perf.text import stage_lines, step_lines
    from .timeline_svg import timeline_svg

    out = []
    stage = stage_lines(report.stage)
    if stage:
        out.append("<h2>Stage</h2><p>" + "<br>".join(escape(x) for x in stage) + "</p>")
    if report.step is not None:
        out.append("<h2>Step timeline</h2>")
        out.append(timeline_svg(report.step, _slice_tooltip(report)))
        lines = [x for x in step_lines(report) if x]
        out.append("<pre>" + escape("\n".join(lines)) + "</pre>")
    return "\n".join(out)


def report_html(report: CostReport, sort: str = "time") -> str:
    from .measured_html import measured_html

    title = f"Cost of {report.module} on {report.device.name} ({report.model} model)"
    n = len(report.kernels)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{escape(title)}</title>",
            "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;"
            "font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}"
            "th{cursor:pointer;background:#f4f4f4}</style></head><body>",
            f"<h1>{escape(title)}</h1>",
            "<p>Estimates from XLA:GPU's cost model formulas, not measurements. "
            f"{n} kernels; estimated module time {human_time(report.total_time_ns)} "
            f"({human_time(report.kernels_time_ns)} in kernels + {report.launches} × "
            f"{report.launch_ns / 1e3:g} µs "
            f"{'launch overhead' if report.model == 'xla' else 'measured gap between kernels'})"
            ".</p>",
            step_html(report),
            measured_html(report),
            "<h2>Where the time goes</h2>",
            time_bar_svg(report),
            "<h2>Roofline</h2>",
            roofline_svg(report),
            "<h2>Kernels</h2>",
            _table(report, sort),
            _SCRIPT,
            "</body></html>",
        ]
    )
