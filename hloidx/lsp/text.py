"""The words of the language server: utilization figures, cost rows, one-line excerpts."""

from __future__ import annotations

from typing import Any

__all__ = ["cost_text", "one_line", "utilization_label", "utilization_text"]


def utilization_text(u: Any) -> str:
    if u is None:
        return "not computed"
    if u.is_unknown or u.distinct is None or u.reads is None:
        return "unknown"
    return f"distinct {u.distinct:.4g}, reads {u.reads:.4g} ({u.kind})"


def utilization_label(u: Any) -> str:
    """``22% read``, ``×2.3`` or both; empty when every element is read exactly once."""
    if u is None:
        return ""
    if u.is_unknown or u.distinct is None or u.reads is None:
        return "reads unknown"
    parts = []
    prefix = {"estimate": "≈", "upper_bound": "≤"}.get(u.kind, "")
    if u.distinct < 1 - 1e-9:
        parts.append(f"{prefix}{_percent(u.distinct)} read")
    per_read = u.reads / u.distinct if u.distinct > 0 else 0.0
    if abs(per_read - 1) > 1e-9 and u.distinct > 0:
        parts.append(f"{prefix}×{per_read:.2g}")
    return " ".join(parts)


def _percent(fraction: float) -> str:
    value = fraction * 100
    if value >= 1:
        return f"{value:.0f}%"
    return f"{value:.2g}%"


def cost_text(cost: Any, device: str) -> str:
    if isinstance(cost, str):
        return f"**cost** ({device}): {cost}"
    from ..perf.text import human_bytes, human_count, human_time

    bound = cost.bound
    bound = f"{bound}-bound" if bound in ("memory", "compute") else bound
    return (
        f"**cost** (estimate, {device}, hloidx model): {human_time(cost.exec_time_ns)} per launch, "
        f"{bound} · {cost.kind}, {cost.emitter} · read {human_bytes(cost.bytes_read)} · "
        f"written {human_bytes(cost.bytes_written)} · {human_count(cost.flops)} flops"
    )


def one_line(text: str, start: int, end: int, width: int) -> str:
    """The text of ``[start, end)`` on one line (runs of blanks and newlines become one
    space), cut at ``width`` characters."""
    piece = text[start : min(end, start + width * 4)]
    flat = " ".join(piece.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
