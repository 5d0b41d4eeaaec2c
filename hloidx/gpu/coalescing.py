"""Are a fusion's reads coalesced? XLA's coalescing analysis, and the figures behind it.

The verdict follows XLA's ``IsIndexingCoalesced`` (``xla/service/gpu/model/
coalescing_analysis.cc``): take the thread → linear-address map of an operand, fix runtime
variables at the midpoints of their ranges, keep the first warp (``th_x`` in [0, 31], every
other thread id 0), fix every loop symbol but the innermost at its first value, split the
address into ``f(th_x) + g(s)``, turn that into intervals of addresses, and call the reads
coalesced when the ideal number of 128-byte transactions exceeds 90% of the counted one. An
undefined map is not coalesced; an operand that is never read, or a scalar, is.

The *figures* are measured separately, by evaluating the first warp's map at every point of
its domain (bounded): transactions of the device's transaction size touched against the
ideal for the bytes read, and bytes fetched per byte used.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EnumerationLimitError
from ..hlo.element_types import element_bytes
from ..hlo.rules.shape_ops import minor_to_major
from ..maps.domain import evaluate_results, feasible_points
from ..maps.expr import Add, Const, Mul, dim, range_var, rt_var
from ..maps.indexing_map import IndexingMap, MapState, Variable, compose
from ..maps.interval import Interval
from ..maps.traversal import evaluate, variables
from ..maps.variables import rescale_symbols
from .thread_maps import simplify_thread_map

if TYPE_CHECKING:
    from ..hlo.ir import Shape
    from .devices import DeviceProfile

#: XLA's constants (kBytesPerMemoryTransaction, kIsCoalescedThreshold, warp size)
BYTES_PER_TRANSACTION = 128
COALESCED_THRESHOLD = 0.9
WARP = 32
#: the most points the figures evaluate for one warp
FIGURES_BUDGET = 1 << 20


def fix_runtime_vars(m: IndexingMap) -> IndexingMap:
    """Runtime variables replaced by the midpoints of their ranges (XLA does the same)."""
    if not m.rt_vars:
        return m
    values = {
        rt_var(i): Const((v.bounds.lower + v.bounds.upper) // 2) for i, v in enumerate(m.rt_vars)
    }
    return simplify_thread_map(replace(m.substitute(values), rt_vars=()))


def first_warp(m: IndexingMap) -> IndexingMap:
    """``m`` (over the six thread dimensions) restricted to threads 0..31 of block 0."""
    warp = IndexingMap(
        (dim(0),) + (Const(0),) * (m.num_dims - 1), (Variable(Interval(0, WARP - 1), "th_x"),)
    )
    sample = simplify_thread_map(compose(warp, m))
    if sample.state is not MapState.NORMAL:
        return sample
    return simplify_thread_map(rescale_symbols(sample)).remove_unused_symbols()


def _innermost_loop_only(m: IndexingMap) -> IndexingMap:
    """Every range variable but the last fixed at its lower bound (XLA assumes the last one
    is the innermost loop)."""
    if m.num_range_vars <= 1:
        return m
    last = m.num_range_vars - 1
    values = {range_var(i): Const(m.range_vars[i].bounds.lower) for i in range(last)}
    values[range_var(last)] = range_var(0)
    reduced = replace(m.substitute(values), range_vars=(m.range_vars[-1],))
    return simplify_thread_map(reduced).remove_unused_symbols()


def _partition(expr: Any) -> tuple[list[Any], list[Any]] | None:
    """Summands of ``expr`` that depend on th_x, and those that depend on the loop symbol;
    None when a summand depends on both. Constant summands are dropped (as XLA does)."""
    terms = expr.terms if type(expr) is Add else (expr,)
    of_thread, of_loop = [], []
    for term in terms:
        used = variables(term)
        t, s = dim(0) in used, range_var(0) in used
        if t and s:
            return None
        if t:
            of_thread.append(term)
        elif s:
            of_loop.append(term)
    return of_thread, of_loop


def _intervals_of(values: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for v in sorted(set(values)):
        if out and v == out[-1][1] + 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return out


def _extend(intervals: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    i = 0
    while i < len(intervals):
        lower, upper = intervals[i][0], intervals[i][1] + length
        i += 1
        while i < len(intervals) and upper >= intervals[i][0] - 1:
            upper = max(upper, intervals[i][1] + length)
            i += 1
        merged.append((lower, upper))
    return merged


def contiguous_intervals(
    of_thread: list[Any], of_loop: list[Any], m: IndexingMap
) -> list[tuple[int, int]]:
    """XLA's ``FindContiguousIntervals`` for ``f(th_x) + g(s)``."""
    f = of_thread[0] if len(of_thread) == 1 else (Add(tuple(of_thread)) if of_thread else Const(0))
    g_is_symbol = len(of_loop) == 1 and of_loop[0] == range_var(0)
    if f == dim(0):
        return [(0, WARP - 1)]
    if type(f) is Mul and f.lhs == dim(0) and type(f.rhs) is Const:
        c = f.rhs.value
        if c == -1:
            return [(0, WARP - 1)]
        if g_is_symbol:
            bounds = m.range_vars[0].bounds
            n = bounds.upper - bounds.lower + 1
            if n >= abs(c):
                return [(0, c * (WARP - 1) + n - 1)]
            return [(bounds.lower + c * i, bounds.upper + c * i) for i in range(WARP)]
        return [(c * i, c * i) for i in range(WARP)]
    thread_bounds = m.dim_vars[0].bounds
    values = [
        int(evaluate(f, {dim(0): t})) for t in range(thread_bounds.lower, thread_bounds.upper + 1)
    ]
    intervals = _intervals_of(values)
    if not g_is_symbol:
        return intervals
    bounds = m.range_vars[0].bounds
    return _extend(intervals, bounds.upper - bounds.lower)


def transactions_estimate_says_coalesced(
    intervals: list[tuple[int, int]], element_bytes: int
) -> bool:
    transactions = 0
    total = 0
    for lower, upper in intervals:
        n = upper - lower + 1
        transactions += -(-(n * element_bytes) // BYTES_PER_TRANSACTION)
        total += n
    if transactions == 0:
        return True
    ideal = -(-(total * element_bytes) // BYTES_PER_TRANSACTION)
    return ideal > transactions * COALESCED_THRESHOLD


@dataclass(frozen=True)
class Verdict:
    coalesced: bool
    reason: str


def is_coalesced(physical_map: IndexingMap, element_bytes: int) -> Verdict:
    """XLA's verdict for one thread → linear-address map."""
    if physical_map.is_undefined:
        return Verdict(False, "undefined map: counted as not coalesced")
    if physical_map.num_results == 0 or physical_map.is_known_empty:
        return Verdict(True, "scalar or never read")
    sample = first_warp(fix_runtime_vars(physical_map))
    if sample.is_known_empty:
        return Verdict(True, "the first warp reads nothing of it")
    sample = _innermost_loop_only(sample)
    address = sample.results[0]
    split = _partition(address)
    if split is None:
        return Verdict(False, "the address mixes th_x and the loop symbol in one term")
    if len(sample.constraints) > 1:
        return Verdict(False, "more than one constraint on the first warp")
    if len(sample.constraints) == 1 and sample.constraints[0][0] != address:
        return Verdict(False, "a constraint other than on the address itself")
    intervals = contiguous_intervals(*split, sample)
    ok = transactions_estimate_says_coalesced(intervals, element_bytes)
    return Verdict(ok, f"{len(intervals)} contiguous address range(s) per warp")


@dataclass(frozen=True)
class Figures:
    """What the first warp reads, measured: distinct elements, transactions touched of
    ``transaction_size`` bytes, the ideal count, and bytes fetched per byte used."""

    elements: int
    transactions: int
    ideal_transactions: int
    transaction_size: int
    element_bytes: int

    @property
    def bytes_fetched_per_byte_used(self) -> float:
        used = self.elements * self.element_bytes
        return self.transactions * self.transaction_size / used if used else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "first_warp_elements": self.elements,
            "transactions": self.transactions,
            "ideal_transactions": self.ideal_transactions,
            "transaction_size_bytes": self.transaction_size,
            "bytes_fetched_per_byte_used": round(self.bytes_fetched_per_byte_used, 3),
        }


def warp_addresses(physical_map: IndexingMap, budget: int = FIGURES_BUDGET) -> np.ndarray:
    """Every distinct linear address the first warp reads (runtime variables at midpoints)."""
    sample = first_warp(fix_runtime_vars(physical_map))
    if sample.state is not MapState.NORMAL or sample.num_results == 0:
        return np.zeros(0, dtype=np.int64)
    columns, n = feasible_points(sample, budget)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.asarray(evaluate_results(sample, columns, n)[0], dtype=np.int64))


def measure(
    physical_maps: list[IndexingMap], element_bytes: int, device: DeviceProfile
) -> Figures | None:
    """Figures for the first warp over all of an operand's maps; None when the warp's domain
    is larger than the budget or a map is undefined."""
    parts = []
    for m in physical_maps:
        if m.is_undefined:
            return None
        try:
            parts.append(warp_addresses(m))
        except EnumerationLimitError:
            return None
    addresses = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
    size = device.transaction_size
    segments = np.unique((addresses * element_bytes) // size)
    ideal = -(-(len(addresses) * element_bytes) // size)
    return Figures(len(addresses), len(segments), ideal, size, element_bytes)


def tile_bandwidth_utilization(
    shape: Shape,
    tile_sizes: tuple[int, ...],
    tile_strides: tuple[int, ...] | None = None,
    transaction_size: int = 64,
) -> float:
    """The share of memory bandwidth a tiled (block-level) load of ``shape`` uses: the
    contiguous bytes of one tile over the whole transactions they occupy (XLA's
    ``BandwidthUtilizationRateHeuristicForTiledMemoryAccess``)."""
    strides = tile_strides or (1,) * shape.rank
    contiguous = 1
    for d in minor_to_major(shape):
        if strides[d] != 1:
            break
        contiguous *= min(tile_sizes[d], shape.dims[d])
        if tile_sizes[d] < shape.dims[d]:
            break
    used = contiguous * element_bytes(shape.element_type)
    fetched = transaction_size * -(-used // transaction_size)
    return used / fetched
