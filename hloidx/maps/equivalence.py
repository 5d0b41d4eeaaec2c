"""Is a simplified map the same as the original? A verdict ladder: proved, exhaustive, sampled.

Two maps are equal when they denote the same relation: for every dimension point (and every
runtime-variable value, when both maps have the same runtime variables) the set of result
tuples reached over the range variables is the same. When both maps have the same variables
this follows from the stronger *pointwise* statement — the same feasible set and equal
results at every feasible point — which is what the cheaper stages check.

The ladder, cheapest certainty first:

* ``proved`` — an algebraic argument (section "The proof" below): each
  ``floordiv``/``mod``/``min``/``max`` becomes an atom whose value range comes from the
  variables' bounds (``x floordiv c`` is first split as ``L + (R floordiv c)`` with ``R``'s
  range small); results become exact integer polynomials over atoms — the normal form
  ``sympy.expand`` would give; where a difference is not identically zero, the few values of
  one atom are enumerated as cases, each tightening the bounds. In every case that closes,
  SymPy then judges the remaining identity between the two polynomial forms (cached by
  structure, so recurring forms cost one ``expand``). Claimed only when every case is covered,
  SymPy agrees in each, and the two feasible sets are shown equal (same tightened box, same
  non-redundant constraints).
  SymPy itself is a last resort for domains too large to enumerate.
* ``exhaustive (N points)`` — exact evaluation (NumPy int64, or Python ints when a
  magnitude bound says int64 could overflow) at every point of a domain of at most
  ``exhaustive_limit`` points.
* ``sampled (N points)`` — corners, boundaries and seeded random points; never a proof.
* ``refuted`` — a counterexample: the point and what each map gives there.

Floating point never enters: ``sympy.lambdify`` evaluates ``floor`` of rational sums in
float64 and reports false mismatches, so all evaluation here is integer-exact.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..caches import memo
from ..errors import DomainError
from .enumeration import (
    _FEASIBLE,
    _INFEASIBLE,
    _SYMBOL_SET_LIMIT,
    _box_chunks,
    _box_of,
    _describe_at,
    _evaluate_map,
    _exact_eval,
    _first_difference,
    _hull,
    _name,
    _relation_counterexample,
    _relation_rows,
    _result_set_at,
    _same_rows,
    _sample_columns,
    _unique_rows,
)
from .expr import (
    Expr,
    Var,
    VarKind,
    const,
    dim,
    range_var,
    replace_vars,
    rt_var,
    variables,
)
from .indexing_map import IndexingMap
from .point_loops import is_small, small_comparison
from .polynomial import _domain_is_provably_empty, _tightened_box, _Unprovable, to_sympy
from .prover import Verdict, _prove, _prove_with_sympy

if TYPE_CHECKING:
    import numpy as np


def verify(
    original: IndexingMap,
    simplified: IndexingMap,
    *,
    exhaustive_limit: int = 10**6,
    samples: int = 2000,
    seed: int = 0,
    timeout_s: float = 2.0,
) -> Verdict:
    """Whether ``simplified`` denotes the same relation as ``original`` (see module doc).

    Never raises on a well-formed map: division by a variable that may be zero, values that
    overflow int64 and empty domains are all handled. After ``timeout_s`` seconds the best
    verdict reached so far is returned (a quick sample runs before any long enumeration).
    Verdicts are cached by the pair of maps and the options.
    """
    return _verify_cached(original, simplified, exhaustive_limit, samples, seed, timeout_s)


@memo(4096)
def _verify_cached(
    original: IndexingMap,
    simplified: IndexingMap,
    exhaustive_limit: int,
    samples: int,
    seed: int,
    timeout_s: float,
) -> Verdict:
    checker = _Checker(original, simplified, exhaustive_limit, samples, seed, timeout_s)
    try:
        return checker.run()
    except (RecursionError, MemoryError) as error:  # absurdly deep or huge maps
        return Verdict("skipped", detail=f"cannot check: {type(error).__name__}")


# ---------------------------------------------------------------------------
# The ladder
# ---------------------------------------------------------------------------


def _malformed(m: IndexingMap) -> str | None:
    """Why ``m`` cannot be evaluated (a variable it uses does not exist), or None."""
    counts = (m.num_dims, m.num_range_vars, m.num_rt_vars)
    exprs = list(m.results) + [e for e, _ in m.constraints]
    for e in exprs:
        for v in variables(e):
            if v.index >= counts[v.kind]:
                return f"the map uses {_name(v)}, which it does not declare"
    return None


def _is_empty_box(m: IndexingMap) -> bool:
    return m.is_known_empty or m.box_size() == 0


def _drop_unused_symbols(m: IndexingMap, runtime_too: bool) -> tuple[IndexingMap, dict[Var, Var]]:
    """``m`` without range variables (and runtime ones, if asked) that nothing mentions.

    An unmentioned symbol with non-empty bounds changes no result and no feasibility, so
    dropping it keeps the relation. A symbol with a one-point range is a constant, so it is
    substituted first. Also returns each kept symbol's original name.
    """
    kinds = (VarKind.RANGE, VarKind.RUNTIME) if runtime_too else (VarKind.RANGE,)
    constants = {v: const(b.lower) for v, b in m.bounds().items() if v.kind in kinds and b.is_point}
    if constants:
        # A constant zero divisor would be a DomainError: then keep the symbol.
        with contextlib.suppress(DomainError):
            m = m.substitute(constants)
    used: set[Var] = set(m.used_vars())
    for e, _ in m.constraints:
        used |= variables(e)
    keep_ranges = [i for i in range(m.num_range_vars) if range_var(i) in used]
    keep_rts = (
        [i for i in range(m.num_rt_vars) if rt_var(i) in used]
        if runtime_too
        else list(range(m.num_rt_vars))
    )
    back: dict[Var, Var] = {}
    for new, old in enumerate(keep_ranges):
        back[range_var(new)] = range_var(old)
    for new, old in enumerate(keep_rts):
        back[rt_var(new)] = rt_var(old)
    if len(keep_ranges) == m.num_range_vars and len(keep_rts) == m.num_rt_vars:
        return m, back
    renumber: dict[Var, Expr] = {old: new for new, old in back.items() if old != new}
    reduced = IndexingMap(
        tuple(replace_vars(r, renumber) for r in m.results),
        m.dim_vars,
        tuple(m.range_vars[i] for i in keep_ranges),
        tuple(m.rt_vars[i] for i in keep_rts),
        tuple((replace_vars(e, renumber), iv) for e, iv in m.constraints),
    )
    return reduced, back


class _Timeout(Exception):
    pass


class _Checker:
    def __init__(
        self,
        original: IndexingMap,
        simplified: IndexingMap,
        limit: int,
        samples: int,
        seed: int,
        timeout_s: float,
    ) -> None:
        self.original = original
        self.simplified = simplified
        self.limit = limit
        self.samples = max(0, samples)
        self.seed = seed
        self.deadline = time.perf_counter() + timeout_s

    def check_time(self) -> None:
        if time.perf_counter() > self.deadline:
            raise _Timeout

    # -- entry -------------------------------------------------------------
    def run(self) -> Verdict:
        a, b = self.original, self.simplified
        if a == b:
            if not a.is_undefined and _is_empty_box(a):
                return Verdict("proved", detail="both maps are empty", vacuous=True)
            return Verdict("proved", detail="the maps are identical")
        if a.is_undefined or b.is_undefined:
            if a.is_undefined and b.is_undefined:
                return Verdict("proved", detail="both maps are undefined")
            which = "original" if a.is_undefined else "simplified"
            return Verdict("refuted", detail=f"only the {which} map is undefined")
        for which, m in (("original", a), ("simplified", b)):
            why = _malformed(m)
            if why is not None:
                return Verdict("skipped", detail=f"{which}: {why}")
        if _is_empty_box(a) or _is_empty_box(b):
            return self.compare_with_empty(a, b)
        if a.num_dims != b.num_dims or a.num_results != b.num_results:
            return self.compare_shapes(a, b)
        same_rts = a.num_rt_vars == b.num_rt_vars
        self.same_rts = same_rts
        raw_pointwise = a.num_range_vars == b.num_range_vars and same_rts
        raw = (a, b)
        a, back_a = _drop_unused_symbols(a, runtime_too=not same_rts)
        b, back_b = _drop_unused_symbols(b, runtime_too=not same_rts)
        self.back = (back_a, back_b)
        pointwise = a.num_range_vars == b.num_range_vars and a.num_rt_vars == b.num_rt_vars
        best: Verdict = Verdict("skipped", detail="out of time before any check ran")
        try:
            # Pointwise equality of either form implies equal relations.
            candidates = [raw] if raw_pointwise else []
            if pointwise and (a, b) != raw:
                candidates.append((a, b))
            for x, y in candidates:
                proof = _prove(x, y, self)
                if proof is not None:
                    return proof
            self.check_time()
            if pointwise:
                return self.pointwise_checks(a, b)
            return self.relation_checks(a, b, same_rts)
        except _Timeout:
            return getattr(self, "best", best)

    def compare_shapes(self, a: IndexingMap, b: IndexingMap) -> Verdict:
        what = "dimensions" if a.num_dims != b.num_dims else "results"
        counts = (
            (a.num_dims, b.num_dims) if what == "dimensions" else (a.num_results, b.num_results)
        )
        # Maps of different shapes are still equal if both are empty.
        if self.is_certainly_empty(a) and self.is_certainly_empty(b):
            return Verdict("proved", detail="both maps have empty domains", vacuous=True)
        return Verdict("refuted", detail=f"different numbers of {what}: {counts[0]} vs {counts[1]}")

    # -- empty domains -------------------------------------------------------
    def is_certainly_empty(self, m: IndexingMap) -> bool:
        if _is_empty_box(m):
            return True
        try:
            return _domain_is_provably_empty(m)
        except _Unprovable:
            return False

    def find_feasible_point(self, m: IndexingMap) -> dict[Var, int] | None:
        """A feasible point of ``m`` from enumeration (small) or sampling (large), else None."""
        import numpy as np

        if _is_empty_box(m):
            return None
        vars_ = m.var_list()
        boxes = [_box_of(m)]
        if m.box_size() <= self.limit:
            chunks: Iterator[dict[Var, np.ndarray]] = _box_chunks(boxes[0], vars_)
        else:
            chunks = iter(
                [_sample_columns([*boxes, _tightened_box(m)], vars_, self.samples, self.seed)]
            )
        for columns in chunks:
            self.check_time()
            n = len(next(iter(columns.values()))) if columns else 1
            state, _ = _evaluate_map(m, columns, n)
            hits = np.flatnonzero(state == _FEASIBLE)
            if hits.size:
                i = int(hits[0])
                return {v: int(columns[v][i]) if columns else 0 for v in vars_}
        return None

    def compare_with_empty(self, a: IndexingMap, b: IndexingMap) -> Verdict:
        if _is_empty_box(a) and _is_empty_box(b):
            return Verdict("proved", detail="both maps are empty", vacuous=True)
        other = b if _is_empty_box(a) else a
        which = "simplified" if other is b else "original"
        if self.is_certainly_empty(other):
            return Verdict("proved", detail="both maps have empty domains", vacuous=True)
        try:
            point = self.find_feasible_point(other)
        except _Timeout:
            return Verdict("skipped", detail="out of time looking for a feasible point")
        if point is not None:
            results = [int(_exact_eval(r, point)) for r in other.results]
            return Verdict(
                "refuted",
                counterexample={
                    "point": {_name(v): x for v, x in point.items()},
                    which: results,
                    ("original" if which == "simplified" else "simplified"): None,
                },
                detail=f"the {which} map has a feasible point, the other map none",
            )
        if other.box_size() <= self.limit:
            return Verdict(
                "exhaustive", points=other.box_size(), detail="both maps are empty", vacuous=True
            )
        return Verdict("sampled", points=self.samples, detail="no feasible point found")

    # -- pointwise comparison (same variables) -----------------------------------
    def pointwise_checks(self, a: IndexingMap, b: IndexingMap) -> Verdict:
        vars_ = a.var_list()
        hull = _hull(_box_of(a), _box_of(b))
        size = math.prod(hi - lo + 1 for lo, hi in hull.values()) if hull else 1
        if size <= self.limit:
            if size > 20_000:  # long enumeration: have a sampled verdict ready first
                self.best = self.pointwise_sampled(a, b, vars_, hull)
                if self.best.is_refuted:
                    return self.best
            return self.pointwise_exhaustive(a, b, vars_, hull)
        verdict = self.pointwise_sampled(a, b, vars_, hull)
        if verdict.is_refuted:
            return verdict
        self.best = verdict
        proof = _prove_with_sympy(a, b, self)
        return proof if proof is not None else verdict

    def pointwise_exhaustive(
        self, a: IndexingMap, b: IndexingMap, vars_: list[Var], hull: dict[Var, tuple[int, int]]
    ) -> Verdict:
        size = math.prod(hi - lo + 1 for lo, hi in hull.values()) if hull else 1
        if is_small(size):
            # a small box in Python loops: the same verdict without importing NumPy
            compared = small_comparison(
                a.bounds(),
                list(a.constraints),
                list(a.results),
                b.bounds(),
                list(b.constraints),
                list(b.results),
                vars_,
                hull,
            )
            if compared is not None:
                used, differs = compared
                if differs is not None:
                    return self.refute_at_point(a, b, differs)
                return Verdict("exhaustive", points=used)
        feasible = 0
        for columns in _box_chunks(hull, vars_):
            self.check_time()
            verdict, count = self.compare_at(a, b, columns, vars_)
            if verdict is not None:
                return verdict
            feasible += count
        return Verdict("exhaustive", points=feasible)

    def pointwise_sampled(
        self, a: IndexingMap, b: IndexingMap, vars_: list[Var], hull: dict[Var, tuple[int, int]]
    ) -> Verdict:
        boxes = [hull, _tightened_box(a), _tightened_box(b)]
        columns = _sample_columns(boxes, vars_, self.samples, self.seed)
        verdict, _ = self.compare_at(a, b, columns, vars_)
        if verdict is not None:
            return verdict
        n = len(next(iter(columns.values()))) if columns else 1
        return Verdict("sampled", points=n)

    def compare_at(
        self, a: IndexingMap, b: IndexingMap, columns: dict[Var, np.ndarray], vars_: list[Var]
    ) -> tuple[Verdict | None, int]:
        """Compare both maps at the given points: a refutation, or None and the points used."""
        import numpy as np

        n = len(next(iter(columns.values()))) if columns else 1
        state_a, values_a = _evaluate_map(a, columns, n)
        state_b, values_b = _evaluate_map(b, columns, n)
        mismatch = state_a != state_b
        both = (state_a == _FEASIBLE) & (state_b == _FEASIBLE)
        for va, vb in zip(values_a, values_b, strict=True):
            mismatch |= both & (va != vb)
        used = int(((state_a != _INFEASIBLE) | (state_b != _INFEASIBLE)).sum())
        bad = np.flatnonzero(mismatch)
        if bad.size == 0:
            return None, used
        i = int(bad[0])
        point = {v: int(columns[v][i]) for v in vars_} if columns else {}
        return self.refute_at_point(a, b, point), used

    def refute_at_point(self, a: IndexingMap, b: IndexingMap, point: dict[Var, int]) -> Verdict:
        """A pointwise mismatch; with symbols in play, confirm it on the relation first."""
        existential = {VarKind.RANGE} if self.same_rts else {VarKind.RANGE, VarKind.RUNTIME}
        symbols = [v for v in point if v.kind in existential]
        key_vars = [v for v in point if v.kind not in existential]
        described = {
            "point": {_name(v): point[v] for v in key_vars},
            "original": _describe_at(a, point),
            "simplified": _describe_at(b, point),
        }
        if not symbols:
            return Verdict("refuted", counterexample=described)
        # Symbols are named as in the maps given (unused ones were dropped and renumbered).
        for side, back in zip(("symbols_original", "symbols_simplified"), self.back, strict=True):
            described[side] = {_name(back.get(v, v)): point[v] for v in symbols}
        key = {v: point[v] for v in key_vars}
        sets = [_result_set_at(m, key, key_vars) for m in (a, b)]
        if sets[0] is None or sets[1] is None:
            return Verdict(
                "refuted",
                counterexample=described,
                detail="pointwise mismatch; too many symbol values to compare the relation there",
            )
        if not _same_rows(sets[0], sets[1]):
            return Verdict(
                "refuted", counterexample=_relation_counterexample(key, sets[0], sets[1])
            )
        # Same relation at this point although pointwise values differ (e.g. symbols
        # permuted): fall back to comparing relations everywhere.
        return self.relation_checks(a, b, self.same_rts)

    # -- relation comparison (variables differ) -----------------------------------
    def relation_checks(self, a: IndexingMap, b: IndexingMap, same_rts: bool) -> Verdict:
        key_vars = [dim(i) for i in range(a.num_dims)]
        if same_rts:
            key_vars += [rt_var(i) for i in range(a.num_rt_vars)]
        if a.box_size() <= self.limit and b.box_size() <= self.limit:
            return self.relation_exhaustive(a, b, key_vars)
        return self.relation_sampled(a, b, key_vars)

    def relation_exhaustive(self, a: IndexingMap, b: IndexingMap, key_vars: list[Var]) -> Verdict:
        rows = []
        for m in (a, b):
            parts = []
            for columns in _box_chunks(_box_of(m), m.var_list()):
                self.check_time()
                parts.append(_relation_rows(m, columns, key_vars))
            rows.append(_unique_rows(parts))
        if _same_rows(rows[0], rows[1]):
            return Verdict("exhaustive", points=a.box_size() + b.box_size())
        return Verdict("refuted", counterexample=_first_difference(rows[0], rows[1], key_vars))

    def relation_sampled(self, a: IndexingMap, b: IndexingMap, key_vars: list[Var]) -> Verdict:
        key_hull = {
            v: bounds for v, bounds in _hull(_box_of(a), _box_of(b)).items() if v in key_vars
        }
        symbol_sizes = [
            math.prod(hi - lo + 1 for v, (lo, hi) in _box_of(m).items() if v not in key_vars)
            for m in (a, b)
        ]
        per_key = max(1, sum(symbol_sizes))
        if max(symbol_sizes) > _SYMBOL_SET_LIMIT:
            return Verdict(
                "skipped", detail="too many symbol values to compare relations by sampling"
            )
        n_keys = max(1, min(self.samples, (self.samples * 50) // per_key))
        boxes = [key_hull, {v: r for v, r in _tightened_box(a).items() if v in key_vars}]
        keys = _sample_columns(boxes, key_vars, n_keys, self.seed)
        count = len(next(iter(keys.values()))) if keys else 1
        checked = 0
        for i in range(count):
            self.check_time()
            key = {v: int(keys[v][i]) for v in key_vars}
            sets = [_result_set_at(m, key, key_vars) for m in (a, b)]
            checked += 1
            if sets[0] is None or sets[1] is None:
                break
            if not _same_rows(sets[0], sets[1]):
                return Verdict(
                    "refuted", counterexample=_relation_counterexample(key, sets[0], sets[1])
                )
            self.best = Verdict("sampled", points=checked, detail="dimension points sampled")
        return Verdict("sampled", points=checked, detail="dimension points sampled")


# ---------------------------------------------------------------------------
# Exact evaluation over many points
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Sampling helpers: bounds tightened by linear constraints
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The proof: exact polynomials over atoms, with case splits
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# SymPy: a last resort for domains too large to enumerate
# ---------------------------------------------------------------------------


__all__ = ["Verdict", "to_sympy", "verify"]
