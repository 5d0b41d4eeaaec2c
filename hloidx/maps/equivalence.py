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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..caches import memo
from ..errors import DomainError
from .domain import magnitude
from .expr import (
    Add,
    CeilDiv,
    Const,
    Expr,
    FloorDiv,
    Max,
    Min,
    Mod,
    Mul,
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

VerdictKind = Literal["proved", "exhaustive", "sampled", "refuted", "skipped"]

_SAFE = 2**62  # int64 evaluation is used only when every intermediate stays below this
_INF = 2**200  # an "unbounded" end of a Python-int interval
_MAX_CASES = 512  # leaf cases the proof may examine before giving up
_MAX_SPLIT = 64  # values one atom may take for it to be worth a case split
_SYMBOL_SET_LIMIT = 20_000  # symbol points enumerated per dimension point when sampling relations
_CHUNK = 1 << 17


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`verify`.

    ``points`` counts the domain points evaluated (exhaustive and sampled verdicts);
    ``counterexample`` (refuted only) names the point and what each map gives there.
    """

    kind: VerdictKind
    points: int | None = None
    counterexample: dict[str, Any] | None = None
    detail: str = ""

    @property
    def is_refuted(self) -> bool:
        return self.kind == "refuted"

    @property
    def is_certain(self) -> bool:
        """Proved or exhaustively checked: equality holds at every point."""
        return self.kind in ("proved", "exhaustive")

    @property
    def label(self) -> str:
        if self.kind in ("exhaustive", "sampled"):
            return f"{self.kind} ({self.points} points)"
        return self.kind

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "points": self.points, "counterexample": self.counterexample}


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


def _name(v: Var) -> str:
    return f"{v.kind.prefix}{v.index}"


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
            return Verdict("proved", detail="both maps have empty domains")
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
            return Verdict("proved", detail="both maps are empty")
        other = b if _is_empty_box(a) else a
        which = "simplified" if other is b else "original"
        if self.is_certainly_empty(other):
            return Verdict("proved", detail="both maps have empty domains")
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
            return Verdict("exhaustive", points=other.box_size(), detail="both maps are empty")
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

_INFEASIBLE, _UNDEFINED, _FEASIBLE = 0, 1, 2


def _box_of(m: IndexingMap) -> dict[Var, tuple[int, int]]:
    return {v: (iv.lower, iv.upper) for v, iv in m.bounds().items()}


def _hull(
    a: dict[Var, tuple[int, int]], b: dict[Var, tuple[int, int]]
) -> dict[Var, tuple[int, int]]:
    out = dict(a)
    for v, (lo, hi) in b.items():
        if v in out:
            out[v] = (min(out[v][0], lo), max(out[v][1], hi))
        else:
            out[v] = (lo, hi)
    return out


def _box_chunks(
    box: dict[Var, tuple[int, int]], vars_: Sequence[Var]
) -> Iterator[dict[Var, np.ndarray]]:
    """Every point of ``box`` (as int64 columns over ``vars_``), a chunk at a time."""
    sizes = [box[v][1] - box[v][0] + 1 for v in vars_]
    total = math.prod(sizes)
    if total <= 0:
        return
    if not vars_:
        yield {}
        return
    for start in range(0, total, _CHUNK):
        flat = np.arange(start, min(total, start + _CHUNK), dtype=np.int64)
        columns: dict[Var, np.ndarray] = {}
        for v, size in zip(reversed(vars_), reversed(sizes), strict=True):
            columns[v] = flat % size + box[v][0]
            flat = flat // size
        yield columns


def _sample_columns(
    boxes: list[dict[Var, tuple[int, int]]], vars_: Sequence[Var], samples: int, seed: int
) -> dict[Var, np.ndarray]:
    """Deterministic sample points: the corners, boundary values and random points.

    Random points are spread over several boxes (the hull of both maps' bounds and each
    map's bounds tightened by its constraints), so thin feasible regions are still hit.
    """
    rng = np.random.default_rng(seed)
    boxes = [b for b in boxes if all(b[v][0] <= b[v][1] for v in vars_)]
    if not vars_ or not boxes:
        return {v: np.zeros(0, dtype=np.int64) for v in vars_}
    main = boxes[0]
    k = len(vars_)
    rows: list[np.ndarray] = []
    lows = np.array([main[v][0] for v in vars_], dtype=np.int64)
    highs = np.array([main[v][1] for v in vars_], dtype=np.int64)
    if k <= 8:
        corners = ((np.arange(2**k)[:, None] >> np.arange(k)) & 1).astype(bool)
    else:
        corners = rng.integers(0, 2, size=(256, k)).astype(bool)
    rows.append(np.where(corners, highs, lows))

    def uniform(box: dict[Var, tuple[int, int]], n: int) -> np.ndarray:
        cols = [
            rng.integers(box[v][0], box[v][1], size=n, endpoint=True, dtype=np.int64) for v in vars_
        ]
        return np.stack(cols, axis=1)

    # Boundary values of each variable, the other variables random.
    for box in boxes:
        for j, v in enumerate(vars_):
            lo, hi = box[v]
            mid = lo + (hi - lo) // 2
            edge = np.array(sorted({lo, min(lo + 1, hi), mid, max(hi - 1, lo), hi}), dtype=np.int64)
            block = uniform(box, len(edge))
            block[:, j] = edge
            rows.append(block)
    used = sum(len(r) for r in rows)
    remaining = max(0, samples - used)
    for i, box in enumerate(boxes):
        share = remaining // len(boxes) + (1 if i < remaining % len(boxes) else 0)
        if share:
            rows.append(uniform(box, share))
    points = np.concatenate(rows, axis=0)[: max(samples, 1 << k if k <= 8 else 256)]
    return {v: points[:, j].copy() for j, v in enumerate(vars_)}


def _column_magnitudes(columns: dict[Var, np.ndarray]) -> dict[Var, int]:
    out = {}
    for v, c in columns.items():
        if c.size == 0:
            out[v] = 0
        else:
            out[v] = max(abs(int(c.min())), abs(int(c.max())))
    return out


def _eval_vector(
    expr: Expr, columns: dict[Var, np.ndarray], n: int, exact: bool
) -> tuple[Any, np.ndarray]:
    """Values of ``expr`` at ``n`` points and a mask of points where it is undefined.

    With ``exact`` the arithmetic is on Python ints in object arrays (no overflow).
    """
    undefined = np.zeros(n, dtype=bool)
    memo: dict[Expr, Any] = {}
    cols = {v: c.astype(object) for v, c in columns.items()} if exact else columns

    def ev(node: Expr) -> Any:
        nonlocal undefined
        t = type(node)
        if t is Const:
            return node.value
        if t is Var:
            return cols[node]
        got = memo.get(node)
        if got is not None:
            return got
        if t is Add:
            total: Any = 0
            for term in node.terms:
                total = total + ev(term)
            result = total
        else:
            x, y = ev(node.lhs), ev(node.rhs)
            if t is Mul:
                result = x * y
            elif t is Min:
                result = np.minimum(x, y)
            elif t is Max:
                result = np.maximum(x, y)
            else:
                zero = np.equal(y, 0)
                if np.any(zero):
                    undefined = undefined | np.broadcast_to(zero, (n,))
                    y = np.where(zero, 1, y)
                if t is FloorDiv:
                    result = x // y
                elif t is CeilDiv:
                    result = -((-x) // y)
                else:
                    result = x % y
        memo[node] = result
        return result

    value = ev(expr)
    if not isinstance(value, np.ndarray):
        value = np.full(n, value, dtype=object if exact else np.int64)
    return value, undefined


def _evaluate_map(
    m: IndexingMap, columns: dict[Var, np.ndarray], n: int
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per point: infeasible / undefined / feasible, and each result's value."""
    mags = _column_magnitudes(columns)
    inside = np.ones(n, dtype=bool)
    for v, iv in m.bounds().items():
        if v in columns:
            inside &= (columns[v] >= iv.lower) & (columns[v] <= iv.upper)
    violated = np.zeros(n, dtype=bool)
    undefined = np.zeros(n, dtype=bool)
    for expr, iv in m.constraints:
        value, undef = _eval_vector(expr, columns, n, magnitude(expr, mags) >= _SAFE)
        violated |= ~undef & ((value < iv.lower) | (value > iv.upper))
        undefined |= undef
    results = []
    for r in m.results:
        value, undef = _eval_vector(r, columns, n, magnitude(r, mags) >= _SAFE)
        undefined |= undef
        results.append(value)
    state = np.full(n, _FEASIBLE, dtype=np.int8)
    state[undefined] = _UNDEFINED
    state[~inside | violated] = _INFEASIBLE
    return state, results


def _exact_eval(expr: Expr, point: dict[Var, int]) -> int | None:
    """The exact value at one point, or None where a divisor is zero."""
    from .expr import evaluate

    try:
        return int(evaluate(expr, point))
    except DomainError:
        return None


def _describe_at(m: IndexingMap, point: dict[Var, int]) -> list[int | None] | None:
    """The results of ``m`` at ``point``, or None when the point is not in its domain."""
    for v, iv in m.bounds().items():
        if v in point and not iv.contains(point[v]):
            return None
    for expr, iv in m.constraints:
        value = _exact_eval(expr, point)
        if value is not None and not iv.contains(value):
            return None
    return [_exact_eval(r, point) for r in m.results]


RowSet = Any  # sorted unique rows: an int64 array, or a frozenset of tuples (exact ints)


def _relation_rows(
    m: IndexingMap, columns: dict[Var, np.ndarray], key_vars: list[Var]
) -> np.ndarray:
    """One row ``(key..., undefined, results...)`` per point in ``m``'s domain."""
    n = len(next(iter(columns.values()))) if columns else 1
    state, values = _evaluate_map(m, columns, n)
    keep = state != _INFEASIBLE
    count = int(keep.sum())
    keys = [columns[v][keep] if v in columns else np.zeros(count, dtype=np.int64) for v in key_vars]
    undefined = (state[keep] == _UNDEFINED).astype(np.int64)
    vals = [np.where(undefined == 1, 0, v[keep]) for v in values]
    return np.stack([*keys, undefined, *vals], axis=1)


def _unique_rows(parts: list[np.ndarray]) -> RowSet:
    table = np.concatenate(parts, axis=0) if parts else np.zeros((0, 1), dtype=np.int64)
    if table.dtype == object:
        return frozenset(tuple(int(x) for x in row) for row in table.tolist())
    if len(table) == 0:
        return table
    # Lexicographic sort then drop repeats (np.unique(axis=0) is several times slower).
    table = table[np.lexsort(table.T[::-1])]
    fresh = np.ones(len(table), dtype=bool)
    fresh[1:] = np.any(table[1:] != table[:-1], axis=1)
    return table[fresh]


def _as_set(rows: RowSet) -> frozenset[tuple[int, ...]]:
    if isinstance(rows, frozenset):
        return rows
    return frozenset(tuple(int(x) for x in row) for row in rows.tolist())


def _same_rows(a: RowSet, b: RowSet) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and bool(np.array_equal(a, b))
    return _as_set(a) == _as_set(b)


def _result_set_at(m: IndexingMap, key: dict[Var, int], key_vars: list[Var]) -> RowSet | None:
    """Rows ``(undefined, results...)`` of ``m`` at one key point over all its symbols.

    None when there are too many symbol values to enumerate.
    """
    box = _box_of(m)
    for v in key_vars:
        lo, hi = box.get(v, (key[v], key[v]))
        if not lo <= key[v] <= hi:
            return _unique_rows([])
    symbols = [v for v in m.var_list() if v not in key]
    if math.prod(box[v][1] - box[v][0] + 1 for v in symbols) > _SYMBOL_SET_LIMIT:
        return None
    parts = []
    for columns in _box_chunks(box, symbols):
        n = len(next(iter(columns.values()))) if columns else 1
        for v in key_vars:
            if v in box:
                columns[v] = np.full(n, key[v], dtype=np.int64)
        parts.append(_relation_rows(m, columns, []))
    return _unique_rows(parts)


def _shown(rows: frozenset[tuple[int, ...]], limit: int) -> list[list[int] | None]:
    """Result tuples for a report: ``None`` stands for "undefined here"."""
    ordered = sorted(rows)[:limit]
    return [None if row[0] == 1 else list(row[1:]) for row in ordered]


def _relation_counterexample(
    key: dict[Var, int], a: RowSet | None, b: RowSet | None
) -> dict[str, Any]:
    sa = _as_set(a) if a is not None else frozenset()
    sb = _as_set(b) if b is not None else frozenset()
    return {
        "point": {_name(v): x for v, x in key.items()},
        "original": _shown(sa, 16),
        "simplified": _shown(sb, 16),
        "only_original": _shown(sa - sb, 4),
        "only_simplified": _shown(sb - sa, 4),
    }


def _first_difference(rows_a: RowSet, rows_b: RowSet, key_vars: list[Var]) -> dict[str, Any]:
    sa, sb = _as_set(rows_a), _as_set(rows_b)
    k = len(key_vars)
    key_values = min(sa ^ sb)[:k]

    def results_at(rows: frozenset[tuple[int, ...]]) -> frozenset[tuple[int, ...]]:
        return frozenset(r[k:] for r in rows if r[:k] == key_values)

    key = dict(zip(key_vars, key_values, strict=True))
    return _relation_counterexample(key, results_at(sa), results_at(sb))


# ---------------------------------------------------------------------------
# Sampling helpers: bounds tightened by linear constraints
# ---------------------------------------------------------------------------


def _tightened_box(m: IndexingMap) -> dict[Var, tuple[int, int]]:
    """The bounds of ``m`` tightened by its linear constraints (never looser than the box)."""
    box = _box_of(m)
    try:
        domain = _normalize_domain(m, _Atoms())
    except _Unprovable:
        return box
    return box if domain is None else domain.bounds


# ---------------------------------------------------------------------------
# The proof: exact polynomials over atoms, with case splits
# ---------------------------------------------------------------------------

Poly = dict[tuple[int, ...], int]  # monomial (sorted atom ids) -> integer coefficient
Range = tuple[int, int]  # a Python-int interval, no saturation


class _Unprovable(Exception):
    """The argument cannot be completed (the caller falls back to enumeration)."""


def _padd(a: Poly, b: Poly, scale: int = 1) -> Poly:
    out = dict(a)
    for m, c in b.items():
        v = out.get(m, 0) + scale * c
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def _pscale(a: Poly, k: int) -> Poly:
    return {m: c * k for m, c in a.items()} if k else {}


def _pmul(a: Poly, b: Poly) -> Poly:
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            v = out.get(m, 0) + ca * cb
            if v:
                out[m] = v
            else:
                out.pop(m, None)
    return out


def _pconst(k: int) -> Poly:
    return {(): k} if k else {}


def _pkey(p: Poly) -> tuple[tuple[tuple[int, ...], int], ...]:
    return tuple(sorted(p.items()))


def _const_of(p: Poly) -> int | None:
    if not p:
        return 0
    if len(p) == 1 and () in p:
        return p[()]
    return None


def _rmul(a: Range, b: Range) -> Range:
    products = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return min(products), max(products)


class _Atoms:
    """The registry of atoms shared by everything compared in one proof."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.info: list[tuple[Any, ...]] = []

    def atom(self, key: Any, info: tuple[Any, ...]) -> int:
        got = self.ids.get(key)
        if got is None:
            got = len(self.info)
            self.ids[key] = got
            self.info.append(info)
        return got


class _Normalizer:
    """Expressions as polynomials over atoms, for one box of bounds and one case.

    ``fixed`` gives a value to a floordiv atom, or a branch (0 or 1) to a min/max atom.
    """

    def __init__(
        self,
        atoms: _Atoms,
        bounds: dict[Var, Range],
        fixed: dict[int, int],
        facts: Sequence[tuple[Poly, Range]] = (),
    ) -> None:
        self.atoms = atoms
        self.bounds = bounds
        self.fixed = fixed
        self.memo: dict[Expr, Poly] = {}
        self.atom_ranges: dict[int, Range] = {}
        # Known ranges of non-constant polynomials (constraints, case conditions), so that
        # e.g. a case "d0 <= d1" decides max(d0, d1) although the box alone cannot.
        self.facts: dict[Any, Range] = {}
        for p, (lo, hi) in facts:
            k = p.get((), 0)
            body = {m: c for m, c in p.items() if m != ()}
            if body:
                self.learn(_pkey(body), (lo - k, hi - k))
                self.learn(_pkey(_pscale(body, -1)), (k - hi, k - lo))

    def learn(self, key: Any, r: Range) -> None:
        old = self.facts.get(key)
        self.facts[key] = r if old is None else (max(old[0], r[0]), min(old[1], r[1]))

    # -- ranges ------------------------------------------------------------
    def range_of(self, p: Poly) -> Range:
        lo = hi = 0
        for m, c in p.items():
            r: Range = (1, 1)
            for a in m:
                r = _rmul(r, self.atom_range(a))
            r = _rmul(r, (c, c))
            lo, hi = lo + r[0], hi + r[1]
        if self.facts:
            k = p.get((), 0)
            known = self.facts.get(_pkey({m: c for m, c in p.items() if m != ()}))
            if known is not None:
                lo, hi = max(lo, known[0] + k), min(hi, known[1] + k)
        return lo, hi

    def atom_range(self, a: int) -> Range:
        got = self.atom_ranges.get(a)
        if got is not None:
            return got
        info = self.atoms.info[a]
        kind = info[0]
        if kind == "var":
            got = self.bounds.get(info[1])
            if got is None:
                raise _Unprovable(f"no bounds for {info[1]}")
        elif kind == "fd":
            if a in self.fixed:
                got = (self.fixed[a], self.fixed[a])
            else:
                lo, hi = self.range_of(info[1])
                got = (lo // info[2], hi // info[2])
        elif kind in ("min", "max"):
            ra, rb = self.range_of(info[1]), self.range_of(info[2])
            if a in self.fixed:
                got = ra if self.fixed[a] == 0 else rb
            elif kind == "min":
                got = (min(ra[0], rb[0]), min(ra[1], rb[1]))
            else:
                got = (max(ra[0], rb[0]), max(ra[1], rb[1]))
        else:  # division by a variable that is never zero
            rx, ry = self.range_of(info[1]), self.range_of(info[2])
            if kind == "vmod":
                top = max(abs(ry[0]), abs(ry[1])) - 1
                got = (-top, top)
            else:
                sign = 1 if kind == "vfd" else -1
                corners = [sign * ((sign * x) // y) for x in rx for y in ry]
                got = (min(corners), max(corners))
        self.atom_ranges[a] = got
        return got

    # -- conversion ----------------------------------------------------------
    def poly(self, e: Expr) -> Poly:
        got = self.memo.get(e)
        if got is not None:
            return got
        t = type(e)
        if t is Const:
            out = _pconst(e.value)
        elif t is Var:
            b = self.bounds.get(e)
            if b is not None and b[0] == b[1]:
                out = _pconst(b[0])
            else:
                out = {(self.atoms.atom(("var", e), ("var", e)),): 1}
        elif t is Add:
            out = {}
            for term in e.terms:
                out = _padd(out, self.poly(term))
        elif t is Mul:
            out = _pmul(self.poly(e.lhs), self.poly(e.rhs))
        elif t in (FloorDiv, CeilDiv, Mod):
            x, y = self.poly(e.lhs), self.poly(e.rhs)
            c = _const_of(y)
            if c is None:
                out = self.variable_division(t, x, y)
            elif c <= 0:
                raise _Unprovable("a constant divisor that is not positive")
            elif t is FloorDiv:
                out = self.floordiv(x, c)
            elif t is CeilDiv:
                out = _pscale(self.floordiv(_pscale(x, -1), c), -1)
            else:
                out = _padd(x, self.floordiv(x, c), -c)
        elif t in (Min, Max):
            out = self.min_max("min" if t is Min else "max", self.poly(e.lhs), self.poly(e.rhs))
        else:
            raise _Unprovable(f"unknown node {t.__name__}")
        self.memo[e] = out
        return out

    def floordiv(self, x: Poly, c: int) -> Poly:
        """``x floordiv c`` as ``L + FD(R, c)`` with ``x = c*L + R`` and R's range small."""
        if c == 1:
            return x
        whole: Poly = {}
        rest: Poly = {}
        for m, a in x.items():
            if m == ():
                q, r = divmod(a, c)
            else:
                r = a % c
                if 2 * r > c:
                    r -= c
                q = (a - r) // c
            if q:
                whole[m] = q
            if r:
                rest[m] = r
        coefficients = [a for m, a in rest.items() if m != ()]
        if not coefficients:
            return whole  # the rest is a constant in [0, c-1]
        # floor((g*y + k) / (g*c')) == floor((y + k floordiv g) / c') for 0 <= k < g*c'.
        g = math.gcd(c, *coefficients)
        if g > 1:
            k = rest.get((), 0)
            rest = {m: a // g for m, a in rest.items() if m != ()}
            if k // g:
                rest[()] = k // g
            c //= g
            if c == 1:
                return _padd(whole, rest)
        a = self.atoms.atom(("fd", _pkey(rest), c), ("fd", rest, c))
        if a in self.fixed:
            return _padd(whole, _pconst(self.fixed[a]))
        lo, hi = self.atom_range(a)
        if lo == hi:
            return _padd(whole, _pconst(lo))
        return _padd(whole, {(a,): 1})

    def min_max(self, kind: str, x: Poly, y: Poly) -> Poly:
        lo, hi = self.range_of(_padd(x, y, -1))
        if kind == "min":
            if hi <= 0:
                return x
            if lo >= 0:
                return y
        else:
            if lo >= 0:
                return x
            if hi <= 0:
                return y
        first, second = sorted((x, y), key=_pkey)
        a = self.atoms.atom((kind, _pkey(first), _pkey(second)), (kind, first, second))
        if a in self.fixed:
            return first if self.fixed[a] == 0 else second
        return {(a,): 1}

    def variable_division(self, t: type, x: Poly, y: Poly) -> Poly:
        lo, hi = self.range_of(y)
        if lo <= 0 <= hi:
            raise _Unprovable("a divisor that may be zero")
        kind = {FloorDiv: "vfd", CeilDiv: "vcd", Mod: "vmod"}[t]
        a = self.atoms.atom((kind, _pkey(x), _pkey(y)), (kind, x, y))
        return {(a,): 1}

    # -- case conditions -------------------------------------------------------
    def case_conditions(self, a: int, choice: int) -> list[tuple[Poly, Range]]:
        """What holds in the case where atom ``a`` takes ``choice``."""
        info = self.atoms.info[a]
        if info[0] == "fd":
            _, rest, c = info
            return [(rest, (c * choice, c * choice + c - 1))]
        kind, first, second = info
        diff = _padd(first, second, -1)
        takes_first = (-_INF, 0) if kind == "min" else (0, _INF)
        takes_second = (1, _INF) if kind == "min" else (-_INF, -1)
        return [(diff, takes_first if choice == 0 else takes_second)]

    def linear_vars(self, p: Poly) -> list[tuple[Var, int]] | None:
        """``p`` as ``[(var, coefficient)]`` (plus its constant) if linear in variables only."""
        out = []
        for m, c in p.items():
            if m == ():
                continue
            if len(m) != 1 or self.atoms.info[m[0]][0] != "var":
                return None
            out.append((self.atoms.info[m[0]][1], c))
        return out


def _propagate(
    bounds: dict[Var, Range],
    conditions: list[tuple[list[tuple[Var, int]], int, Range]],
    rounds: int = 4,
) -> dict[Var, Range] | None:
    """Tighten ``bounds`` with linear conditions ``sum(c*v) + k in [lo, hi]``; None if empty.

    Ranges computed before a tightening in the same pass are only wider, so using them is
    still sound.
    """
    bounds = dict(bounds)
    for _ in range(rounds):
        changed = False
        for terms, k, (lo, hi) in conditions:
            if any(v not in bounds for v, _ in terms):
                continue
            ranges = [_rmul(bounds[v], (c, c)) for v, c in terms]
            total_lo = k + sum(r[0] for r in ranges)
            total_hi = k + sum(r[1] for r in ranges)
            if total_hi < lo or total_lo > hi:
                return None
            for (v, c), r in zip(terms, ranges, strict=True):
                # c*v lies in [lo - (max of the others), hi - (min of the others)]
                t_lo = lo - (total_hi - r[1])
                t_hi = hi - (total_lo - r[0])
                if c > 0:
                    v_lo, v_hi = -((-t_lo) // c), t_hi // c
                else:
                    v_lo, v_hi = -((-t_hi) // c), t_lo // c
                old = bounds[v]
                new = (max(old[0], v_lo), min(old[1], v_hi))
                if new[0] > new[1]:
                    return None
                if new != old:
                    bounds[v] = new
                    changed = True
        if not changed:
            break
    return bounds


@dataclass
class _Domain:
    """A feasible set as a box plus the constraints the box does not already imply."""

    bounds: dict[Var, Range]
    constraints: list[tuple[Expr, Range]]  # the non-redundant ones, intervals clipped
    keys: frozenset[tuple[Any, Range]]  # the same, as (polynomial, interval): comparable


def _linear_conditions(
    norm: _Normalizer, polys: list[tuple[Poly, Range]]
) -> list[tuple[list[tuple[Var, int]], int, Range]]:
    out = []
    for p, r in polys:
        terms = norm.linear_vars(p)
        if terms is not None and terms:
            out.append((terms, p.get((), 0), r))
    return out


def _normalize_domain(
    m: IndexingMap,
    atoms: _Atoms,
    fixed: dict[int, int] | None = None,
    extra: list[tuple[Poly, Range]] | None = None,
    bounds: dict[Var, Range] | None = None,
) -> _Domain | None:
    """``m``'s feasible set (within a case) as a tightened box and the remaining constraints.

    None when the set is shown empty. Raises :class:`_Unprovable` where a constraint
    may divide by zero.
    """
    fixed = fixed or {}
    bounds = dict(bounds) if bounds is not None else _box_of(m)
    for _ in range(4):
        norm = _Normalizer(atoms, bounds, fixed, extra or ())
        polys = [(norm.poly(e), (iv.lower, iv.upper)) for e, iv in m.constraints]
        polys += list(extra or [])
        tightened = _propagate(bounds, _linear_conditions(norm, polys))
        if tightened is None:
            return None
        for p, (lo, hi) in polys:  # any condition the ranges rule out empties the set
            plo, phi = norm.range_of(p)
            if phi < lo or plo > hi:
                return None
        if tightened == bounds:
            break
        bounds = tightened
    norm = _Normalizer(atoms, bounds, fixed, extra or ())
    kept: list[tuple[Expr, Range]] = []
    keys = set()
    for e, iv in m.constraints:
        p = norm.poly(e)
        plo, phi = norm.range_of(p)
        lo, hi = max(iv.lower, plo), min(iv.upper, phi)
        if lo > hi:
            return None
        if iv.lower <= plo and phi <= iv.upper:
            continue  # implied by the box
        key = _constraint_key(p, lo, hi)
        if key is None:
            return None
        kept.append((e, (lo, hi)))
        keys.add(key)
    return _Domain(bounds, kept, frozenset(keys))


def _constraint_key(p: Poly, lo: int, hi: int) -> tuple[Any, Range] | None:
    """``p in [lo, hi]`` in a canonical form: no constant, coprime coefficients, the first
    one positive (so ``x - 1 in [0, 4]`` and ``-x in [-5, -1]`` compare equal). None if no
    integer satisfies it."""
    k = p.get((), 0)
    terms = {m: c for m, c in p.items() if m != ()}
    g = math.gcd(*terms.values())
    lo, hi = -((k - lo) // g), (hi - k) // g
    terms = {m: c // g for m, c in terms.items()}
    if terms[min(terms)] < 0:
        terms = {m: -c for m, c in terms.items()}
        lo, hi = -hi, -lo
    if lo > hi:
        return None
    return _pkey(terms), (lo, hi)


def _domain_is_provably_empty(m: IndexingMap) -> bool:
    return _normalize_domain(m, _Atoms()) is None


class _Prover:
    """Shows that result pairs agree at every point of a domain, splitting cases as needed."""

    def __init__(self, atoms: _Atoms, checker: _Checker) -> None:
        self.atoms = atoms
        self.checker = checker
        self.cases = 0
        self.sympy_checks = 0

    def equal(
        self,
        pairs: list[tuple[Expr, Expr]],
        m: IndexingMap,
        bounds: dict[Var, Range],
        fixed: dict[int, int],
        conditions: list[tuple[Poly, Range]],
        depth: int = 0,
    ) -> bool:
        self.checker.check_time()
        norm = _Normalizer(self.atoms, bounds, fixed, conditions)
        polys = [(norm.poly(x), norm.poly(y)) for x, y in pairs]
        diffs = [_padd(px, py, -1) for px, py in polys]
        open_pairs = [pair for pair, d in zip(pairs, diffs, strict=True) if d]
        if not open_pairs:
            # The case split has removed every floordiv/mod/min/max: what is left are
            # polynomial (usually linear) forms over variables and quotient atoms. SymPy is
            # the judge of that final identity, independently of our own arithmetic.
            for px, py in polys:
                self.sympy_checks += 1
                if not _sympy_identity(_pkey(px), _pkey(py)):
                    return False
            return True
        if depth >= 8:
            return False
        atom = self.pick_atom(norm, [d for d in diffs if d])
        if atom is None:
            return False
        kind = self.atoms.info[atom][0]
        if kind == "fd":
            lo, hi = norm.atom_range(atom)
            choices = range(lo, hi + 1)
        else:
            choices = range(2)
        for choice in choices:
            self.cases += 1
            if self.cases > _MAX_CASES:
                return False
            case_conditions = conditions + norm.case_conditions(atom, choice)
            domain = _normalize_domain(
                m, self.atoms, {**fixed, atom: choice}, case_conditions, bounds
            )
            if domain is None:
                continue  # no point of the domain falls in this case
            if not self.equal(
                open_pairs, m, domain.bounds, {**fixed, atom: choice}, case_conditions, depth + 1
            ):
                return False
        return True

    def pick_atom(self, norm: _Normalizer, diffs: list[Poly]) -> int | None:
        """The splittable atom of the differences with the fewest possible values."""
        best, best_size = None, _MAX_SPLIT + 1
        seen: set[int] = set()
        for d in diffs:
            for mono in d:
                for a in mono:
                    if a in seen:
                        continue
                    seen.add(a)
                    kind = self.atoms.info[a][0]
                    if kind == "fd":
                        lo, hi = norm.atom_range(a)
                        size = hi - lo + 1
                    elif kind in ("min", "max"):
                        size = 2
                    else:
                        continue
                    if size < best_size:
                        best, best_size = a, size
        return best


@memo(65536)
def _sympy_identity(
    a: tuple[tuple[tuple[int, ...], int], ...], b: tuple[tuple[tuple[int, ...], int], ...]
) -> bool:
    """SymPy's verdict on ``A == B`` for two polynomials over atoms (atom ``i`` is ``a_i``)."""
    import sympy

    def build(poly: tuple[tuple[tuple[int, ...], int], ...]) -> Any:
        terms = []
        for monomial, coefficient in poly:
            factors = [sympy.Symbol(f"a{i}", integer=True) for i in monomial]
            terms.append(sympy.Integer(coefficient) * sympy.Mul(*factors))
        return sympy.Add(*terms)

    return sympy.expand(build(a) - build(b)) == 0


def _prove(a: IndexingMap, b: IndexingMap, checker: _Checker) -> Verdict | None:
    """``proved`` when the algebra shows the maps equal pointwise, else None."""
    atoms = _Atoms()
    try:
        da = _normalize_domain(a, atoms)
        db = _normalize_domain(b, atoms)
        if da is None and db is None:
            return Verdict("proved", detail="both domains are empty")
        if da is None or db is None or da.bounds != db.bounds or da.keys != db.keys:
            return None
        prover = _Prover(atoms, checker)
        pairs = list(zip(a.results, b.results, strict=True))
        norm = _Normalizer(atoms, da.bounds, {})
        conditions = [(norm.poly(e), r) for e, r in da.constraints]
        if prover.equal(pairs, a, da.bounds, {}, conditions):
            detail = "equal as polynomials" if prover.cases == 0 else f"{prover.cases} cases"
            return Verdict(
                "proved", detail=f"{detail}; {prover.sympy_checks} identities confirmed by SymPy"
            )
    except (_Unprovable, RecursionError):
        return None
    return None


# ---------------------------------------------------------------------------
# SymPy: a last resort for domains too large to enumerate
# ---------------------------------------------------------------------------


def to_sympy(expr: Expr) -> Any:
    """``expr`` as a SymPy expression over integer symbols ``d0``, ``s0``, ``rt0``."""
    import sympy

    def visit(node: Expr) -> Any:
        t = type(node)
        if t is Const:
            return sympy.Integer(node.value)
        if t is Var:
            return sympy.Symbol(_name(node), integer=True)
        if t is Add:
            return sympy.Add(*(visit(x) for x in node.terms))
        x, y = visit(node.lhs), visit(node.rhs)
        if t is Mul:
            return x * y
        if t is FloorDiv:
            return sympy.floor(x / y)
        if t is CeilDiv:
            return sympy.ceiling(x / y)
        if t is Mod:
            return sympy.Mod(x, y)
        if t is Min:
            return sympy.Min(x, y)
        return sympy.Max(x, y)

    return visit(expr)


def _prove_with_sympy(a: IndexingMap, b: IndexingMap, checker: _Checker) -> Verdict | None:
    """``proved`` when SymPy reduces every result difference to zero on the same domain.

    SymPy knows nothing of the bounds, so this only catches bound-free identities; it is
    tried only when the domain is too large to enumerate.
    """
    import sympy

    try:
        atoms = _Atoms()
        da, db = _normalize_domain(a, atoms), _normalize_domain(b, atoms)
    except _Unprovable:
        return None
    if da is None or db is None or da.bounds != db.bounds or da.keys != db.keys:
        return None
    for x, y in zip(a.results, b.results, strict=True):
        checker.check_time()
        if any(
            type(n) in (FloorDiv, CeilDiv, Mod) and type(n.rhs) is not Const for n in _nodes(x, y)
        ):
            return None  # a variable divisor might be zero somewhere
        if sympy.expand(to_sympy(x) - to_sympy(y)) != 0:
            return None
    return Verdict("proved", detail="sympy")


def _nodes(*exprs: Expr) -> Iterator[Expr]:
    from .expr import children

    stack = list(exprs)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


__all__ = ["Verdict", "to_sympy", "verify"]
