"""The measured profile in ``hloidx cost --format html``: the estimated-vs-measured scatter
plot (per launch, log-log, with the factor-2 band), the measured timeline under the estimated
one, and the accuracy and notes; and the measured lane of ``--format trace``."""

from __future__ import annotations

from html import escape
from math import floor, log10
from typing import TYPE_CHECKING, Any

from ..perf.text import human_time

if TYPE_CHECKING:
    from ..perf.report import CostReport

_W, _H, _PAD = 520, 420, 56
#: the trace's process of the measured lane (the estimate is process 1)
MEASURED_PID = 2


def scatter_svg(report: CostReport) -> str:
    """Each measured kernel at (measured, estimated) time per launch; the diagonal is a perfect
    estimate, the dashed lines a factor 2 either way."""
    join = report.measured
    points = []
    for k in report.kernels:
        op = join.rows.get(k.name)
        if op is not None and op.mean_ns > 0 and k.exec_time_ns is not None and k.exec_time_ns > 0:
            points.append((op.mean_ns, k.exec_time_ns, k.name))
    if not points:
        return "<p>No kernel has both an estimate and a measurement.</p>"
    values = [v for p in points for v in p[:2]]
    # decades from 1 ns (or below the smallest time) to above the largest; smaller estimates
    # sit on the bottom edge (their tooltip gives the value)
    lo = 10.0 ** max(0, floor(log10(min(values))))
    hi = 10.0 ** (floor(log10(max(values))) + 1)
    span = log10(hi) - log10(lo)

    def px(v: float) -> float:
        return _PAD + (log10(max(v, lo)) - log10(lo)) / span * (_W - 2 * _PAD)

    def py(v: float) -> float:
        return _H - _PAD - (log10(max(v, lo)) - log10(lo)) / span * (_H - 2 * _PAD)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" role="img" '
        'aria-label="estimated against measured time per launch">',
        f'<rect x="0" y="0" width="{_W}" height="{_H}" fill="white"/>',
    ]
    for factor in (1.0, 2.0, 0.5):
        # the line estimate = factor x measured, clipped to the plot
        x0, x1 = max(lo, lo / factor), min(hi, hi / factor)
        dash = "" if factor == 1.0 else ' stroke-dasharray="4 3"'
        parts.append(
            f'<line x1="{px(x0):.1f}" y1="{py(x0 * factor):.1f}" x2="{px(x1):.1f}" '
            f'y2="{py(x1 * factor):.1f}" stroke="#999"{dash}/>'
        )
    decade = lo
    while decade <= hi:
        parts.append(
            f'<text x="{px(decade):.1f}" y="{_H - _PAD + 16}" font-size="10" '
            f'text-anchor="middle">{escape(human_time(decade))}</text>'
            f'<text x="{_PAD - 6}" y="{py(decade) + 4:.1f}" font-size="10" '
            f'text-anchor="end">{escape(human_time(decade))}</text>'
        )
        decade *= 10
    parts.append(
        f'<text x="{_W / 2:.0f}" y="{_H - 12}" font-size="12" text-anchor="middle">measured '
        "per launch</text>"
        f'<text x="14" y="{_H / 2:.0f}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {_H / 2:.0f})">estimated per launch</text>'
    )
    for measured, estimated, name in points:
        ratio = estimated / measured
        colour = "#59a14f" if 0.5 <= ratio <= 2 else "#e15759"
        tip = f"{name}: estimated {human_time(estimated)}, measured {human_time(measured)}"
        parts.append(
            f'<circle cx="{px(measured):.1f}" cy="{py(estimated):.1f}" r="3" fill="{colour}" '
            f'fill-opacity="0.6"><title>{escape(tip)} ({ratio:.2f}x)</title></circle>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def measured_html(report: CostReport) -> str:
    """The measured section of the page (empty without a profile)."""
    join = getattr(report, "measured", None)
    if join is None:
        return ""
    from ..perf.measured_text import lines
    from .timeline_svg import measured_timeline_svg

    p = join.program
    step = None if report.step is None else report.step.time_ns
    title = f"measured: the first steady execution of {p.key}" + (
        "" if p.step_ns is None else f" (steady mean {human_time(p.step_ns)})"
    )
    slices = join.slices()
    total = max((s.end_ns for s in slices), default=0.0)
    return "\n".join(
        [
            "<h2>Measured timeline</h2>",
            measured_timeline_svg(slices, total, title),
            "<h2>Estimated against measured</h2>",
            scatter_svg(report),
            "<pre>" + escape("\n".join(x for x in lines(join, step) if x)) + "</pre>",
        ]
    )


def measured_trace_events(report: CostReport) -> list[dict[str, Any]]:
    """The measured lane of ``--format trace``: a process of its own with the first steady
    execution's launches (compute and communication threads), from its first kernel."""
    join = getattr(report, "measured", None)
    if join is None:
        return []
    events: list[dict[str, Any]] = [
        {
            "name": "process_name",
            "ph": "M",
            "pid": MEASURED_PID,
            "tid": 0,
            "args": {"name": f"GPU measured ({join.source}, first steady execution)"},
        }
    ]
    for tid, name in ((1, "measured compute stream"), (2, "measured communication")):
        events.append(
            {
                "name": "thread_name",
                "ph": "M",
                "pid": MEASURED_PID,
                "tid": tid,
                "args": {"name": name},
            }
        )
    for s in join.slices():
        start, end = round(s.start_ns) / 1e3, round(s.end_ns) / 1e3
        op = join.program.ops.get(s.name)
        args = dict(s.args)
        if op is not None:
            args.update(op.as_json())
        events.append(
            {
                "name": s.name,
                "cat": "measured",
                "ph": "X",
                "ts": start,
                "dur": round(end - start, 3),
                "pid": MEASURED_PID,
                "tid": 2 if s.lane.endswith("communication") else 1,
                "args": args,
            }
        )
    return events
