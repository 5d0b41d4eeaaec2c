"""The text table of a cost report (plain text, no markup: names and numbers only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .costs import KernelCost


class TableSource(Protocol):
    """What the table reads of a cost report (``report.CostReport`` is one; the report calls
    this module to print itself, so this module names no type of it)."""

    module: str
    device: Any
    model: str
    kernels: Sequence[KernelCost]
    skipped: Sequence[Any]

    @property
    def total_time_ns(self) -> float: ...

    @property
    def launches(self) -> int: ...

    @property
    def kernels_time_ns(self) -> float: ...

    def sorted(self, key: str = "time") -> list[KernelCost]: ...

    # the loops, the step and the stage (``report.CostReport`` has them; None or empty: none)
    loops: Sequence[Any]
    step: Any
    stage: Any
    launch_ns: float

    def collective_rows(self) -> list[Any]: ...


def human_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def human_count(n: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(int(n))


def human_time(ns: float | None) -> str:
    if ns is None:
        return "does not fit"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} us"
    return f"{ns:.0f} ns"


def report_text(report: TableSource, sort: str = "time", limit: int | None = None) -> str:
    rows = report.sorted(sort)
    shown = rows if limit is None else rows[:limit]
    total = report.kernels_time_ns
    header = (
        "kernel",
        "emitter",
        "count",
        "launch",
        "flops",
        "read",
        "written",
        "read t",
        "write t",
        "compute t",
        "est. time",
        "bound",
        "share",
        "why",
    )
    table = [header]
    for k in shown:
        share = f"{k.time_ns / total:.1%}" if total and k.exec_time_ns is not None else "-"
        table.append(
            (
                k.name,
                k.emitter,
                str(k.launches),
                f"{k.blocks}x{k.threads_per_block}",
                human_count(k.flops),
                human_bytes(k.bytes_read),
                human_bytes(k.bytes_written),
                human_time(k.read_time_ns),
                human_time(k.write_time_ns),
                human_time(k.compute_time_ns),
                human_time(k.exec_time_ns),
                k.bound,
                share,
                k.why,
            )
        )
    measured = getattr(report, "measured", None)
    if measured is not None:
        from .measured_text import with_columns

        table = with_columns(table, shown, measured)
    widths = [max(len(str(r[i])) for r in table) for i in range(len(table[0]) - 1)]
    lines = [
        f"{report.module} on {report.device.name}, model {report.model} "
        "(an estimate from XLA's cost model formulas, not a measurement)"
    ]
    lines.extend(stage_lines(report.stage))
    for r in table:
        cells = [str(c).ljust(w) for c, w in zip(r[:-1], widths, strict=True)]
        lines.append("  ".join(cells) + "  " + str(r[-1]))
    if limit is not None and len(rows) > limit:
        rest = sum(k.time_ns for k in rows[limit:])
        lines.append(f"... {len(rows) - limit} more kernels, {human_time(rest)} together")
    kernels = len(report.kernels)
    lines.append("")
    lines.append(
        f"kernels: {kernels}   estimated module time: {human_time(report.total_time_ns)} "
        f"({human_time(total)} in kernels + {report.launches} x {report.launch_ns / 1e3:g} us "
        f"{'launch overhead' if report.model == 'xla' else 'measured gap between kernels'})"
    )
    lines.append(
        f"bytes read: {human_bytes(sum(k.bytes_read for k in report.kernels))}   "
        f"bytes written: {human_bytes(sum(k.bytes_written for k in report.kernels))}   "
        f"flops: {human_count(sum(k.flops for k in report.kernels))}"
    )
    unfit = [k.name for k in report.kernels if k.exec_time_ns is None]
    if unfit:
        lines.append(f"does not fit in registers (no estimate): {', '.join(unfit)}")
    others = [s for s in report.skipped if not s.reason.startswith("launches no kernel")]
    for s in others:
        if s.reason.startswith(_STEP_REASONS):
            continue
        lines.append(f"no row: {s.name} ({s.opcode}): {s.reason}")
    lines.extend(step_lines(report))
    if measured is not None:
        from .measured_text import lines as measured_lines

        step = None if report.step is None else report.step.time_ns
        lines.extend(measured_lines(measured, step))
    return "\n".join(lines)


#: instructions the step lines account for (loops, calls, conditionals, collectives)
_STEP_REASONS = ("a while loop", "a call (XLA", "a conditional of", "a collective", "an async done")


def stage_lines(stage: Any) -> list[str]:
    """What the module's stage means for its estimate (nothing for an optimized module)."""
    if stage is None:
        return []
    out = [f"stage: {stage.name}; {stage.order}"]
    out.extend(f"  {m}" for m in stage.meanings)
    return out


def step_lines(report: TableSource) -> list[str]:
    """The loops, the conditionals, the collectives and the step: the text's closing lines."""
    step = report.step
    if step is None:
        return []
    lines = [""]
    for loop in report.loops:
        trips = loop.trip_count
        what = (
            f"{trips.value} trips, {trips.describe()}"
            if trips.value is not None
            else f"trip count {trips.describe()}; counted as one trip"
        )
        runs = f", runs {loop.count} times per step" if loop.count != 1 else ""
        lines.append(f"loop {loop.name}: {what}{runs}")
    for choice in step.conditionals:
        branches = ", ".join(
            f"{b['computation']} {human_time(b['time_ns'])}" for b in choice["branches"]
        )
        lines.append(
            f"conditional {choice['name']}: branches {branches}; counted: {choice['counted']} "
            "(the most expensive; which runs is decided at run time)"
        )
    rows = report.collective_rows()
    estimated = [r for r in rows if r.estimate is not None]
    order = "XLA's schedule" if step.scheduled else "the text's order, as it is not scheduled"
    lines.append(f"step (the entry computation in {order}):")
    if not rows:
        lines.append(
            f"  step time {human_time(step.time_ns)} = compute {human_time(step.compute_ns)}; "
            "no collectives"
        )
        return lines
    if not estimated:
        lines.append(
            f"  step time {human_time(step.time_ns)} = compute {human_time(step.compute_ns)}; "
            f"communication: not estimated ({len(rows)} "
            + ("collective)" if len(rows) == 1 else "collectives)")
        )
        lines += _why_not_lines(rows)
        return lines
    lines.append(
        f"  step time {human_time(step.time_ns)} = compute {human_time(step.compute_ns)} "
        f"+ exposed communication {human_time(step.exposed_ns)}"
    )
    lines.append(
        f"  communication {human_time(step.communication_ns)} in {len(estimated)} "
        + ("collective" if len(estimated) == 1 else "collectives")
        + (
            f" ({len(rows) - len(estimated)} more not estimated)"
            if len(estimated) < len(rows)
            else ""
        )
        + "; exposed: the time the compute stream waits for it"
    )
    top = step.top_exposed()
    if top:
        lines.append(
            "  top exposed collectives: "
            + ", ".join(
                f"{r.name} {human_time(r.total_exposed_ns)}"
                + (f" ({r.count} runs)" if r.count != 1 else "")
                for r in top
            )
        )
    return lines + _why_not_lines(rows)


def _why_not_lines(rows: list[Any]) -> list[str]:
    """The reasons the collective model gave for the collectives it did not estimate."""
    reasons: dict[str, list[str]] = {}
    for row in rows:
        if row.estimate is None and row.why_not:
            reasons.setdefault(row.why_not, []).append(row.name)
    return [
        f"  not estimated: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}: {why}"
        for why, names in reasons.items()
    ]
