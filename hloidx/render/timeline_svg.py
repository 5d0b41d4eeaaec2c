"""The step as an SVG Gantt chart: a compute lane and a communication lane, a slice per
kernel or collective with a tooltip, the compute stream's waits for communication in red.

Self-contained (no script): ``timeline_svg(step, tooltip)`` returns the ``<svg>`` element.
Slices narrower than half a pixel are drawn merged with their neighbours (the tooltip says
how many), so a step of tens of thousands of kernels stays a small picture.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..perf.step import Slice, StepResult

WIDTH, PAD_LEFT, PAD_RIGHT = 960, 110, 20
LANE_HEIGHT, LANE_GAP, TOP = 34, 12, 30
MIN_PX = 0.5
COLOURS = {
    "kernel": "#4e79a7",
    "start": "#9c9c9c",
    "done": "#9c9c9c",
    "wait": "#e15759",
    "collective": "#f28e2b",
    "loop": "#59a14f",
    "call": "#b07aa1",
    "conditional": "#76b7b2",
    "merged": "#7f9cc0",
    "repeat": "#8fbf85",
}
#: slices the drawing of every trip may add; beyond, the trips after the first are one
#: "repeat" slice each (still no gap: the bar shows where every trip runs)
MAX_TRIP_SLICES = 20_000
LANES = ("compute", "communication")


def _fmt(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} us"
    return f"{ns:.0f} ns"


def _merged(slices: list[Slice], scale: float) -> list[tuple[Slice, int]]:
    """Consecutive sub-pixel slices of one kind merged (each with how many it stands for)."""
    out: list[tuple[Slice, int]] = []
    group: list[Slice] = []

    def flush() -> None:
        if not group:
            return
        if len(group) == 1:
            out.append((group[0], 1))
        else:
            first, last = group[0], group[-1]
            out.append((_span(first, last), len(group)))
        group.clear()

    for s in sorted(slices, key=lambda s: s.start_ns):
        if (s.end_ns - s.start_ns) * scale >= MIN_PX:
            flush()
            out.append((s, 1))
            continue
        group.append(s)
        if (group[-1].end_ns - group[0].start_ns) * scale >= MIN_PX:
            flush()
    flush()
    return out


def _span(first: Slice, last: Slice) -> Slice:
    from ..perf.step import Slice

    return Slice(first.name, first.lane, first.start_ns, last.end_ns, "merged", {}, first.depth)


def every_trip(slices: list[Slice]) -> list[Slice]:
    """``slices`` with every trip of each loop drawn: the step model keeps one trip's slices
    under a loop (its condition and body, then the last condition run); the later trips are
    copies of the first, shifted by the iteration time. Past ``MAX_TRIP_SLICES`` a loop's
    later trips are one ``repeat`` slice (marked with the trip count) instead."""
    out = list(slices)
    budget = MAX_TRIP_SLICES
    k = 0
    while k < len(out):  # copies of an outer loop's body include its inner loops: seen later
        loop = out[k]
        k += 1
        trips, iteration = loop.args.get("counted_trips"), loop.args.get("iteration_ns")
        if loop.kind != "loop" or not trips or not iteration or trips < 2:
            continue
        first_end = loop.start_ns + iteration + 1e-3
        first = [
            s
            for s in out
            if s.depth > loop.depth and loop.start_ns - 1e-9 <= s.start_ns and s.end_ns <= first_end
        ]
        # the condition's last run, after the last trip: the condition's slices again
        last_cond = (loop.end_ns - loop.start_ns) - trips * iteration
        # (iteration_ns is rounded to a thousandth of a ns: allow for it, once per trip)
        slack = 1e-3 * (trips + 1)
        cond = [s for s in first if s.end_ns <= loop.start_ns + last_cond + slack]
        needed = len(first) * (trips - 1) + len(cond)
        if needed > budget:
            from ..perf.step import Slice

            out.append(
                Slice(
                    f"{loop.name}: trips 2 to {trips}, each like the first",
                    loop.lane,
                    loop.start_ns + iteration,
                    loop.start_ns + trips * iteration,
                    "repeat",
                    {"trips": trips - 1},
                    loop.depth + 1,
                )
            )
            copies = [s.shifted(trips * iteration) for s in cond]
        else:
            copies = [s.shifted(t * iteration) for t in range(1, trips) for s in first]
            copies += [s.shifted(trips * iteration) for s in cond]
        budget -= len(copies)
        out.extend(copies)
    return out


def _lanes(
    parts: list[str],
    slices: list[Slice],
    lanes: tuple[str, ...],
    scale: float,
    tooltip: Callable[[Slice], str] | None,
) -> None:
    """Each lane's background and its slices (sub-pixel neighbours merged)."""
    span_px = WIDTH - PAD_LEFT - PAD_RIGHT
    for i, lane in enumerate(lanes):
        y = TOP + i * (LANE_HEIGHT + LANE_GAP)
        parts.append(
            f'<text x="{PAD_LEFT - 8}" y="{y + LANE_HEIGHT / 2 + 4:.0f}" font-size="12" '
            f'text-anchor="end">{lane}</text>'
        )
        parts.append(
            f'<rect x="{PAD_LEFT}" y="{y}" width="{span_px}" height="{LANE_HEIGHT}" '
            'fill="#f6f6f6"/>'
        )
        by_depth: dict[int, list[Slice]] = {}
        for s in slices:
            if s.lane == lane:
                by_depth.setdefault(s.depth, []).append(s)
        for depth in sorted(by_depth):
            inset = min(depth * 5, LANE_HEIGHT // 2 - 2)
            for s, n in _merged(by_depth[depth], scale):
                x = PAD_LEFT + s.start_ns * scale
                w = max((s.end_ns - s.start_ns) * scale, MIN_PX)
                colour = COLOURS.get(s.kind, "#bab0ac")
                fill = "none" if s.kind in ("loop", "call", "conditional") else colour
                if n > 1:
                    tip = f"{n} slices from {s.name}, {_fmt(s.end_ns - s.start_ns)} together"
                else:
                    tip = tooltip(s) if tooltip else s.name
                    tip = f"{tip} [{_fmt(s.start_ns)} .. {_fmt(s.end_ns)}]"
                parts.append(
                    f'<rect x="{x:.2f}" y="{y + inset}" width="{w:.2f}" '
                    f'height="{LANE_HEIGHT - 2 * inset}" fill="{fill}" stroke="{colour}" '
                    f'stroke-width="0.5"><title>{escape(tip)}</title></rect>'
                )
                if s.kind == "repeat" and w >= 40:
                    parts.append(
                        f'<text x="{x + 3:.2f}" y="{y + LANE_HEIGHT / 2 + 4:.0f}" '
                        f'font-size="11">x{s.args["trips"]} more trips</text>'
                    )
                if n == 1 and depth == 0 and w >= 7 * len(s.name) and s.kind != "loop":
                    parts.append(
                        f'<text x="{x + 3:.2f}" y="{y + LANE_HEIGHT / 2 + 4:.0f}" '
                        f'font-size="11" fill="white">{escape(s.name)}</text>'
                    )


def timeline_svg(step: StepResult, tooltip: Callable[[Slice], str] | None = None) -> str:
    """The Gantt chart of ``step``; ``tooltip(slice)`` gives a slice's row text. Every trip of
    a loop is drawn (:func:`every_trip`)."""
    slices = every_trip(step.slices)
    total = max(step.time_ns, max((s.end_ns for s in slices), default=0.0), 1.0)
    span_px = WIDTH - PAD_LEFT - PAD_RIGHT
    scale = span_px / total
    height = TOP + len(LANES) * (LANE_HEIGHT + LANE_GAP) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        'role="img" aria-label="step timeline">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{PAD_LEFT}" y="16" font-size="12">step {_fmt(step.time_ns)} (estimated): '
        f"compute {_fmt(step.compute_ns)}, exposed communication {_fmt(step.exposed_ns)}; "
        f"order: {'XLA schedule' if step.scheduled else 'the text (not scheduled)'}</text>",
    ]
    _lanes(parts, slices, LANES, scale, tooltip)
    _axis(parts, total, scale, len(LANES))
    parts.append("</svg>")
    return "\n".join(parts)


def _axis(parts: list[str], total: float, scale: float, lanes: int) -> None:
    axis_y = TOP + lanes * (LANE_HEIGHT + LANE_GAP) + 4
    for k in range(5):
        t = total * k / 4
        x = PAD_LEFT + t * scale
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{axis_y}" stroke="#ddd"/>'
            f'<text x="{x:.1f}" y="{axis_y + 14}" font-size="10" text-anchor="middle">'
            f"{_fmt(t)}</text>"
        )


MEASURED_LANES = LANES


def measured_timeline_svg(
    slices: list[Slice], total_ns: float, title: str, tooltip: Callable[[Slice], str] | None = None
) -> str:
    """The measured execution as the same Gantt chart (its own time axis, the title says it
    is measured): ``slices`` on the lanes ``compute`` and ``communication``."""
    total = max(total_ns, max((s.end_ns for s in slices), default=0.0), 1.0)
    scale = (WIDTH - PAD_LEFT - PAD_RIGHT) / total
    height = TOP + len(MEASURED_LANES) * (LANE_HEIGHT + LANE_GAP) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        'role="img" aria-label="measured timeline">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="{PAD_LEFT}" y="16" font-size="12">{escape(title)}</text>',
    ]
    _lanes(parts, slices, MEASURED_LANES, scale, tooltip)
    _axis(parts, total, scale, len(MEASURED_LANES))
    parts.append("</svg>")
    return "\n".join(parts)
