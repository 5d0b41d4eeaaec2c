"""How close estimates are to measured kernel times: the three figures of issue 43.

- ``within_2x``: the share of the measured kernel time (collectives apart: their measured span
  includes waiting for peers) whose estimate is within a factor 2 of the measurement, each kernel
  weighted by its measured time per step (``measured_ns`` per launch times ``launches``). A kernel
  whose time depends on its data carries a range ``[low, high]``; it counts as within 2x when
  its measured time lies in that range (or its point estimate is within a factor 2).
- ``spearman``: the rank correlation of the per-launch times (estimate against measurement),
  ties ranked by their average rank, over the same kernels.
- ``median_abs_log2``: the median over those kernels of ``|log2(estimate / measured)|``.

A kernel without an estimate (``None``) is a miss for ``within_2x`` and is left out of the
other two (counted in ``unestimated``); an estimate of 0 (or less) is an estimate, infinitely far
off: a miss, an infinite |log2|, ranked as it is. Collectives get their own ``within_2x`` under
``collectives``. Rows with no measured time (``measured_ns`` not positive) are left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AccuracyRow:
    #: the estimated time of one launch (None: not estimated)
    estimate_ns: float | None
    #: the measured time of one launch
    measured_ns: float
    is_collective: bool = False
    #: launches per step (weights the row's share of the measured time)
    launches: float = 1.0
    #: the estimate's range when the time depends on the data (None: a point estimate)
    range_ns: tuple[float, float] | None = None


RowLike = AccuracyRow | Sequence[Any]


def as_row(row: RowLike) -> AccuracyRow:
    """A row from an :class:`AccuracyRow` or a tuple ``(estimate, measured, is_collective[,
    launches[, range]])``."""
    if isinstance(row, AccuracyRow):
        return row
    estimate, measured, collective, *rest = row
    launches = rest[0] if rest and rest[0] is not None else 1.0
    range_ns = tuple(rest[1]) if len(rest) > 1 and rest[1] is not None else None
    return AccuracyRow(estimate, measured, bool(collective), launches, range_ns)


def _estimated(row: AccuracyRow) -> bool:
    return row.estimate_ns is not None


def _abs_log2(row: AccuracyRow) -> float:
    assert row.estimate_ns is not None
    if row.estimate_ns <= 0:
        return math.inf
    return abs(math.log2(row.estimate_ns / row.measured_ns))


def is_within_2x(row: AccuracyRow) -> bool:
    """Whether the estimate is within a factor 2 of the measurement (or the measurement lies
    in the estimate's range)."""
    if row.range_ns is not None:
        low, high = row.range_ns
        if low <= row.measured_ns <= high:
            return True
    if row.estimate_ns is None:
        return False
    ratio = row.estimate_ns / row.measured_ns
    return 0.5 <= ratio <= 2.0


def _time_share_within(rows: list[AccuracyRow]) -> float | None:
    total = sum(r.measured_ns * r.launches for r in rows)
    if total <= 0:
        return None
    good = sum(r.measured_ns * r.launches for r in rows if is_within_2x(r))
    return good / total


def average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..n, tied values sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        mean_rank = (start + end) / 2 + 1
        for k in range(start, end + 1):
            ranks[order[k]] = mean_rank
        start = end + 1
    return ranks


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation (Pearson's of the average ranks); None when undefined."""
    return pearson(average_ranks(xs), average_ranks(ys))


def median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def accuracy(rows: Iterable[RowLike]) -> dict[str, Any]:
    """The accuracy figures of estimated against measured kernel times (see the module doc)."""
    all_rows = [as_row(r) for r in rows]
    measured = [r for r in all_rows if r.measured_ns > 0]
    kernels = [r for r in measured if not r.is_collective]
    collectives = [r for r in measured if r.is_collective]
    estimated = [r for r in kernels if _estimated(r)]
    log_errors = [_abs_log2(r) for r in estimated]
    rho = spearman([r.estimate_ns or 0.0 for r in estimated], [r.measured_ns for r in estimated])
    return {
        "within_2x": _time_share_within(kernels),
        "spearman": rho,
        "median_abs_log2": median(log_errors),
        "kernels": len(kernels),
        "unestimated": len(kernels) - len(estimated),
        "collectives": {
            "count": len(collectives),
            "within_2x": _time_share_within(collectives),
        },
    }
