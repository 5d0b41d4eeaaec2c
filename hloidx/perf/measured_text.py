"""The measured profile in the cost table's text: a measured column beside the estimate, the
ratio, the achieved TFLOP/s and GB/s (hloidx's own flops and bytes over the measured time),
and the lines after the table (executions, step, accuracy, the largest mispredictions, the
collectives apart, what could not be joined)."""

from __future__ import annotations

from typing import Any

HEADER = ("measured", "est/meas", "TFLOP/s", "GB/s")


def _time(ns: float | None) -> str:
    if ns is None:
        return "-"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} us"
    return f"{ns:.0f} ns"


def cells(join: Any, kernel: Any) -> tuple[str, str, str, str]:
    """The measured cells of one kernel row ("-" where it was not measured)."""
    op = join.rows.get(kernel.name)
    if op is None or op.mean_ns <= 0:
        return ("-", "-", "-", "-")
    ratio = "-" if kernel.exec_time_ns is None else f"{kernel.exec_time_ns / op.mean_ns:.2f}x"
    tflops = kernel.flops / op.mean_ns / 1e3
    gbps = (kernel.bytes_read + kernel.bytes_written) / op.mean_ns
    return (_time(op.mean_ns), ratio, f"{tflops:.2f}", f"{gbps:.0f}")


def with_columns(table: list[tuple[Any, ...]], kernels: list[Any], join: Any) -> list[tuple]:
    """The table (header first, one row per kernel, ``why`` last) with the measured cells
    inserted before ``why``."""
    out = [(*table[0][:-1], *HEADER, table[0][-1])]
    for row, kernel in zip(table[1:], kernels, strict=True):
        out.append((*row[:-1], *cells(join, kernel), row[-1]))
    return out


def _figure(value: Any, percent: bool = False) -> str:
    if value is None:
        return "unknown"
    return f"{value:.1%}" if percent else f"{value:.3g}"


def lines(join: Any, estimated_step_ns: float | None) -> list[str]:
    p = join.program
    a = join.accuracy
    out = [
        "",
        f"measured: {join.source} {join.path}: {p.key}, {p.executions} steady executions on "
        f"{len(p.devices)} GPU(s), {p.warmup} warm-up executions dropped; times are steady "
        "means per launch (all kernels of an instruction together)",
    ]
    if p.step_ns is not None:
        step = f"measured step: {_time(p.step_ns)}"
        if estimated_step_ns:
            step += f" (estimated {_time(estimated_step_ns)}, {estimated_step_ns / p.step_ns:.2f}x)"
        out.append(step)
    out.append(
        f"accuracy over {a.get('kernels', 0)} measured kernels (collectives apart): "
        f"{_figure(a.get('within_2x'), True)} of the measured time within 2x, Spearman "
        f"{_figure(a.get('spearman'))}, median |log2(est/meas)| "
        f"{_figure(a.get('median_abs_log2'))}"
    )
    if join.mispredictions:
        out.append("largest mispredictions (by |estimate - measured| x launches per step):")
        for m in join.mispredictions:
            out.append(
                f"  {m['name']}: estimated {_time(m['estimate_ns'])}, measured "
                f"{_time(m['measured_ns'])} ({m['ratio']:.2f}x)"
            )
    if join.collectives:
        total = sum(join.rows[n].mean_ns * join.rows[n].per_step for n in join.collectives)
        out.append(
            f"collectives (apart: their span includes waiting for peers): {len(join.collectives)}"
            f", {_time(total)} per step measured"
        )
    out.extend(f"measured note: {n}" for n in join.notes)
    return out
