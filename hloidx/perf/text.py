"""The text table of a cost report (plain text, no markup: names and numbers only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import CostReport


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


def report_text(report: CostReport, sort: str = "time", limit: int | None = None) -> str:
    rows = report.sorted(sort)
    shown = rows if limit is None else rows[:limit]
    total = report.kernels_time_ns
    header = (
        "kernel",
        "emitter",
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
                f"{k.blocks}x{k.threads_per_block}"
                + (f" ({k.launches} launches)" if k.launches != 1 else ""),
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
    widths = [max(len(str(r[i])) for r in table) for i in range(len(header) - 1)]
    lines = [
        f"{report.module} on {report.device.name}, model {report.model} "
        "(an estimate from XLA's cost model formulas, not a measurement)"
    ]
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
        f"({human_time(total)} in kernels + {report.launches} x 1 us launch overhead)"
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
        lines.append(f"no row: {s.name} ({s.opcode}): {s.reason}")
    return "\n".join(lines)
