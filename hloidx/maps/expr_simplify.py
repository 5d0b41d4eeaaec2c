"""Range-aware simplification of expressions (the map-level driver is .map_simplify;
.simplify is the simplifier's API).

The rule families follow XLA's ``IndexingMap::Simplify`` (``indexing_map.cc``); the code is
our own and several rules are generalised. Every rewrite is an identity on the map's domain:
it may use the bounds of the variables and the constraints, never anything else.

Expressions (:class:`ExprSimplifier`, bottom-up, memoised per distinct sub-expression):

* ``point-range``: a sub-expression whose interval is a single value becomes that constant;
* ``mod``: summands that are multiples of the modulus are dropped, a mod that cannot wrap
  becomes a shift, and ``(g * H + L) mod m`` with ``g | m`` and ``L`` in ``[0, g-1]`` becomes
  ``(H mod (m / g)) * g + L`` (this extracts gcds and separates digits);
  ``(x mod a) mod b`` with ``b | a`` is ``x mod b``;
* ``floordiv``: summands divisible by the divisor (and whole multiples of it in the constant)
  move out, ``(g * H + L) floordiv d`` with ``g | d`` and ``L`` in ``[0, g-1]`` becomes
  ``H floordiv (d / g)`` (summands that cannot carry are dropped), nested floordivs fold,
  ``(x mod (a * b)) floordiv a`` becomes ``(x floordiv a) mod b`` and a single inner
  ``floordiv`` summand is absorbed: ``(a floordiv c + r) floordiv e = (a + r * c) floordiv (c*e)``;
* ``sum``: digit recombination ``(x mod c) * k + (x floordiv c) * (c * k) -> x * k`` and
  ``(x mod c) * k + ((x floordiv c) mod b) * (c * k) -> (x mod (c * b)) * k`` (also when
  ``x floordiv c`` has itself been simplified into a sum), and ``x - (x floordiv c) * c ->
  x mod c`` when that does not make the sum larger;
* ``min-max``: ``min``/``max`` of operands whose intervals do not overlap.

Constraints (the phase lives in .map_simplify): expressions are simplified (against the
bounds only: a constraint must not prove itself), constants, multipliers and divisors move
into the interval, a sum
``g * H + L`` whose low part ``L`` cannot change the outcome becomes a constraint on ``H``,
implied constraints are dropped, one-variable constraints tighten the bounds, mod
constraints on one expression merge (Chinese remainder theorem, which covers XLA's lcm
merge) and tighten the bounds of their variable; a constraint whose interval cannot be met
makes the map known-empty.

Summands come in the canonical order of ``sort_summands``; :func:`simplify` is idempotent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from math import gcd

from ..caches import register
from .expr import (
    BUILDERS,
    EVERY_DOMAIN,
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
    _set_simplified_memo,
    add,
    ceildiv,
    const,
    floordiv,
    mod,
    mul,
)
from .indexing_map import Constraint
from .interning import INTERNED, remember
from .interval import INT64_MAX, INT64_MIN, Interval, saturate
from .linear_form import Terms, _combine, _cost, _linear, _sorted_sum
from .range_eval import RangeEvaluator

# ---------------------------------------------------------------------------
# Expression simplifier
# ---------------------------------------------------------------------------

#: Interval ends that may be saturated values rather than exact ones.
_SATURATED = frozenset((INT64_MIN, INT64_MAX))

#: Upper limit on rewrites of one node before giving up (a safety net; never reached in tests).
_MAX_REWRITES = 64


class ExprSimplifier:
    """Simplifies expressions over one domain; results are memoised per sub-expression.

    The simplified form of a node is kept on the node (``Expr._simplified_memo``), owned by
    this simplifier's token, as range_eval keeps intervals: nodes are interned, so the equal
    sub-expressions that rewrites rebuild find the result without a table look-up.

    ``on_rule(family, before, after)`` is called for every rewrite (for ``--explain``).
    """

    __slots__ = ("_constraints_may_pin", "_lookahead", "_on_rule", "_token", "evaluator", "range")

    def __init__(
        self,
        evaluator: RangeEvaluator,
        on_rule: Callable[[str, Expr, Expr], None] | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.range = evaluator.range
        self._constraints_may_pin = evaluator.has_constraints
        self._on_rule = on_rule
        self._token = object()
        # Rules may take the driver's next steps themselves (same result, fewer nodes), but
        # not with constraints (they could narrow the node skipped) nor when rules are
        # recorded (--explain shows each step).
        self._lookahead = on_rule is None and not self._constraints_may_pin

    def _fired(self, family: str, before: Expr, after: Expr) -> Expr:
        if self._on_rule is not None and after != before:
            self._on_rule(family, before, after)
        return after

    # -- driver ------------------------------------------------------------------
    def simplify(self, expr: Expr) -> Expr:
        """The simplified form of ``expr`` (a fixed point of every rule)."""
        token = self._token
        owner, done = expr._simplified_memo
        if owner is token or owner is EVERY_DOMAIN:
            return expr if done is None else done
        range_token = self.evaluator._token
        if type(expr) is Var:
            # A leaf: its bound, unless that is a single value.
            owner, interval = expr._range_memo
            if owner is not range_token:
                interval = self.range(expr)
            result = expr
            if interval.lower == interval.upper and interval.lower not in _SATURATED:
                result = self._fired("point-range", expr, const(interval.lower))
            _set_simplified_memo(expr, (token, None if result is expr else result))
            return result
        if type(expr) is Mul and type(expr.lhs) is Var and type(expr.rhs) is Const:
            # The commonest node, ``d * c``: a fixed point unless it or its variable is one
            # value (the steps of the loop below, without its bookkeeping).
            owner, interval = expr._range_memo
            if owner is not range_token:
                interval = self.range(expr)
            if interval.lower != interval.upper or interval.lower in _SATURATED:
                lhs = expr.lhs
                owner, done = lhs._simplified_memo
                if owner is not token and owner is not EVERY_DOMAIN:
                    done = self.simplify(lhs)
                elif done is None:
                    done = lhs
                if done is lhs:
                    key = (Mul, id(lhs), id(expr.rhs))  # adopted, as _simplify_children does
                    if key not in INTERNED:
                        remember(key, expr)
                    _set_simplified_memo(expr, (token, None))
                    return expr
        current = expr
        # Every form passed on the way is memoised to the result too: simplifying it afresh
        # would run exactly the remaining steps (children are memoised fixed points), and
        # other expressions that simplify through the same forms then stop early.
        passed = []
        for _ in range(_MAX_REWRITES):
            owner, interval = current._range_memo
            if owner is not range_token:
                interval = self.range(current)
            if interval.lower == interval.upper and interval.lower not in _SATURATED:
                result = self._fired("point-range", current, const(interval.lower))
                break
            t = type(current)
            if t is Var:
                result = current
                break
            node = self._simplify_children(current)
            t = type(node)
            if t is Const:
                result = node
                break
            if node is not current:
                owner, done = node._simplified_memo
                if owner is token:
                    result = node if done is None else done
                    break
                passed.append(node)
                # Simpler children can give a tighter interval for the node itself.
                owner, interval = node._range_memo
                if owner is not range_token:
                    interval = self.range(node)
                if interval.lower == interval.upper and interval.lower not in _SATURATED:
                    result = self._fired("point-range", node, const(interval.lower))
                    break
            rule = _RULES.get(t)
            rewritten = None if rule is None else rule(self, node)
            if rewritten is None:
                if t is not Add:
                    result = node
                    break
                result = _sorted_sum(node)
                if result is not node and self._constraints_may_pin:
                    # A constraint is stored on the canonical (sorted) sum: its interval
                    # may pin the sorted form where it did not pin the one written.
                    interval = self.range(result)
                    if self._point(interval, result):
                        result = self._fired("point-range", result, const(interval.lower))
                break
            current = rewritten
            owner, done = current._simplified_memo
            if owner is token or owner is EVERY_DOMAIN:
                result = current if done is None else done
                break
            passed.append(current)
        else:  # pragma: no cover - a rule cycle would be a bug; stop safely
            result = current
        # A fixed point caches None ("itself"), not a reference to itself: no cycles.
        memo = (token, result)
        _set_simplified_memo(expr, memo)
        for form in passed:
            _set_simplified_memo(form, memo)
        if result._simplified_memo[0] is not EVERY_DOMAIN:
            _set_simplified_memo(result, (token, None))
        return result

    @staticmethod
    def _point(interval: Interval, expr: Expr) -> bool:
        """Whether ``point-range`` folds ``expr`` (its interval is one exact value)."""
        return interval.lower == interval.upper and interval.lower not in _SATURATED

    def _simplify_children(self, node: Expr) -> Expr:
        token = self._token
        t = type(node)
        if t is Add:
            terms = node.terms  # type: ignore[attr-defined]
            new = []
            changed = False
            for k in terms:
                owner, done = k._simplified_memo
                if owner is not token and owner is not EVERY_DOMAIN:
                    done = self.simplify(k)
                elif done is None:
                    done = k
                if done is not k:
                    changed = True
                new.append(done)
            if changed:
                return add(*new)
            # The node may predate the intern table (built before it was cleared): adopt it,
            # so that rules rebuilding it from these children find it and its memo.
            key = (Add, *map(id, terms))
            if key not in INTERNED:
                remember(key, node)
            return node
        lhs, rhs = node.lhs, node.rhs  # type: ignore[attr-defined]
        owner, new_lhs = lhs._simplified_memo
        if owner is not token and owner is not EVERY_DOMAIN:
            new_lhs = self.simplify(lhs)
        elif new_lhs is None:
            new_lhs = lhs
        owner, new_rhs = rhs._simplified_memo
        if owner is not token and owner is not EVERY_DOMAIN:
            new_rhs = self.simplify(rhs)
        elif new_rhs is None:
            new_rhs = rhs
        if new_lhs is lhs and new_rhs is rhs:
            key = (t, id(lhs), id(rhs))  # adopted, as above
            if key not in INTERNED:
                remember(key, node)
            return node
        if (t is FloorDiv or t is CeilDiv or t is Mod) and (
            type(new_rhs) is Const and new_rhs.value <= 0
        ):
            # A variable divisor pinned to zero or below: evaluation is undefined (or the
            # builders would refuse the constant); keep the divisor as written.
            return node if new_lhs is lhs else t(new_lhs, rhs)
        return BUILDERS[t](new_lhs, new_rhs)

    def _positive_divisor(self, node: Expr) -> int | None:
        rhs = node.rhs  # type: ignore[attr-defined]
        if type(rhs) is Const and rhs.value > 0:
            return rhs.value
        return None

    # -- min / max -------------------------------------------------------------------
    def _rewrite_min_max(self, node: Expr) -> Expr | None:
        lhs, rhs = node.lhs, node.rhs  # type: ignore[attr-defined]
        # The sign of the difference decides; it is at least as precise as comparing the
        # operands' intervals and also sees that min(d0, d0 + 1) is d0.
        a, b = self.range(lhs), self.range(rhs)
        difference = self.range(_sorted_sum(add(lhs, mul(rhs, -1))))
        lhs_smaller = a.upper <= b.lower or difference.upper <= 0
        rhs_smaller = b.upper <= a.lower or difference.lower >= 0
        if type(node) is Min:
            pick = lhs if lhs_smaller else rhs if rhs_smaller else None
        else:
            pick = rhs if lhs_smaller else lhs if rhs_smaller else None
        return None if pick is None else self._fired("min-max", node, pick)

    # -- splitting a sum into g * high + low ------------------------------------------
    def _split(self, terms: Terms, constant: int, g: int) -> tuple[Expr, Expr]:
        """``Σ terms + constant`` as ``g * high + low``: high takes what ``g`` divides."""
        high: Terms = []
        low: Terms = []
        for m, c in terms:
            (high if c % g == 0 else low).append((m, c // g if c % g == 0 else c))
        return _combine(high, constant // g), _combine(low, constant % g)

    def _low_split(self, terms: Terms, constant: int, modulus: int) -> int | None:
        """The largest ``g > 1`` dividing ``modulus`` with ``Σ = g * high + low``, low < g."""
        factors = set()
        for _, c in terms:
            g = gcd(c, modulus)
            if g != 1:
                factors.add(g)
        if not factors:
            return None
        candidates = sorted(factors, reverse=True) if len(factors) > 1 else factors
        # The interval of each summand as int ends (None when empty), saturated as
        # Interval arithmetic saturates: most candidates fail, so no Interval is built.
        range_of = self.range
        token = self.evaluator._token
        ranges: list[tuple[int, int] | None] = []
        for m, c in terms:
            owner, r = m._range_memo  # (the evaluator's memo, looked up without a call)
            if owner is not token and owner is not EVERY_DOMAIN:
                r = range_of(m)
            if r.lower > r.upper:
                ranges.append(None)
                continue
            a, b = r.lower * c, r.upper * c
            if a > b:
                a, b = b, a
            if not INT64_MIN <= a <= INT64_MAX:
                a = saturate(a)
            if not INT64_MIN <= b <= INT64_MAX:
                b = saturate(b)
            ranges.append((a, b))
        for g in candidates:
            # The interval of the low part, without building it.
            lower = upper = constant % g
            empty = False
            for (_, c), rc in zip(terms, ranges, strict=True):
                if c % g:
                    if rc is None:
                        empty = True
                        break
                    lower += rc[0]
                    upper += rc[1]
                    if not INT64_MIN <= lower <= INT64_MAX:
                        lower = saturate(lower)
                    if not INT64_MIN <= upper <= INT64_MAX:
                        upper = saturate(upper)
            # An empty low part passes, as the empty interval [1, 0] always did.
            if empty or (lower >= 0 and upper < g):
                return g
        return None

    def _high_part(self, terms: Terms, constant: int, g: int) -> Expr:
        """``high`` of ``Σ terms + constant = g * high + low`` (see :meth:`_split`)."""
        return _combine([(m, c // g) for m, c in terms if c % g == 0], constant // g)

    # -- mod ------------------------------------------------------------------------
    def _rewrite_mod(self, node: Expr) -> Expr | None:
        m = self._positive_divisor(node)
        if m is None:
            return None
        x = node.lhs  # type: ignore[attr-defined]
        # (y mod a) mod m with m | a is y mod m.
        if type(x) is Mod and type(x.rhs) is Const and x.rhs.value % m == 0:
            return self._fired("mod", node, mod(x.lhs, m))
        terms, constant = _linear(x)
        kept = terms  # (usually every summand stays: no list is built)
        for _, c in terms:
            if c % m == 0:
                kept = [(t, c) for t, c in terms if c % m != 0]
                break
        if len(kept) != len(terms) or (constant and constant % m == 0) or constant >= m:
            # Multiples of the modulus go; a negative constant stays as written (`(x - 3)
            # mod 7`, not `(x + 4) mod 7`): the same length, and the form the reader gave.
            left = constant % m if constant >= m or constant % m == 0 else constant
            inner = _combine(kept, left)
            if self._lookahead and type(inner) is not Mod and type(inner) is not Const:
                # When `inner` (a fixed point) stays within one period of m, the driver's next
                # steps would simplify `inner mod m` to a shift of inner: build it at once.
                r = self.range(inner)
                within = r.lower <= r.upper and r.lower // m == r.upper // m
                if within and self.simplify(inner) is inner:
                    return _combine(kept, left - (r.lower // m) * m)
            return self._fired("mod", node, mod(inner, m))
        r = self.range(x)
        if r.lower // m == r.upper // m:
            return self._fired("mod", node, _combine(terms, constant - (r.lower // m) * m))
        g = self._low_split(terms, constant, m)
        if g is not None:
            high, low = self._split(terms, constant, g)
            return self._fired("mod", node, add(mul(mod(high, m // g), g), low))
        return None

    # -- floordiv -----------------------------------------------------------------------
    def _rewrite_floordiv(self, node: Expr) -> Expr | None:
        d = self._positive_divisor(node)
        if d is None:
            return None
        x = node.lhs  # type: ignore[attr-defined]
        if type(x) is FloorDiv and type(x.rhs) is Const and x.rhs.value > 0:
            return self._fired("floordiv", node, floordiv(x.lhs, x.rhs.value * d))
        if type(x) is Mod and type(x.rhs) is Const and x.rhs.value % d == 0:
            return self._fired("floordiv", node, mod(floordiv(x.lhs, d), x.rhs.value // d))
        terms, constant = _linear(x)
        extracted = []
        rest = []
        for t, c in terms:
            if c % d:
                rest.append((t, c))
            else:
                extracted.append((t, c // d))
        if extracted or (constant and constant % d == 0):
            # A constant moves out only whole: `(x - 3) floordiv 7` as `(x + 4) floordiv 7 - 1`
            # would be longer than what was written (as XLA: only multiples of the divisor).
            whole = constant - constant % d if constant % d == 0 or not rest else 0
            inside = _combine(rest, constant - whole)
            if self._lookahead and type(inside) is not Const:
                # When `inside floordiv d` takes one value k, the driver's next steps would
                # fold it (point-range) and add k to the rest: build that sum at once.
                r = self.range(inside)
                if r.lower <= r.upper:
                    k = r.lower // d
                    if k == r.upper // d and k not in _SATURATED:
                        return _combine(extracted, whole // d + k)
            outside = _combine(extracted, whole // d)
            return self._fired("floordiv", node, add(floordiv(inside, d), outside))
        g = self._low_split(terms, constant, d)
        if g is not None:
            high = self._high_part(terms, constant, g)
            return self._fired("floordiv", node, floordiv(high, d // g))
        # A single inner floordiv summand: (a floordiv c + r) floordiv d = (a + r*c) floordiv (c*d).
        inner = [
            i
            for i, (t, c) in enumerate(terms)
            if type(t) is FloorDiv and type(t.rhs) is Const and t.rhs.value > 0
        ]
        if len(inner) == 1 and terms[inner[0]][1] == 1:
            t = terms[inner[0]][0]
            c = t.rhs.value  # type: ignore[attr-defined]
            others = [(u, k * c) for j, (u, k) in enumerate(terms) if j != inner[0]]
            new = add(t.lhs, _combine(others, constant * c))  # type: ignore[attr-defined]
            return self._fired("floordiv", node, floordiv(new, c * d))
        return None

    def _rewrite_ceildiv(self, node: Expr) -> Expr | None:
        d = self._positive_divisor(node)
        if d is None:
            return None
        terms, constant = _linear(node.lhs)  # type: ignore[attr-defined]
        extracted = [(t, c // d) for t, c in terms if c % d == 0]
        if not extracted and 0 <= constant < d:
            return None
        rest = [(t, c) for t, c in terms if c % d != 0]
        outside = _combine(extracted, constant // d)
        return self._fired("floordiv", node, add(ceildiv(_combine(rest, constant % d), d), outside))

    # -- sums ---------------------------------------------------------------------------
    def _rewrite_sum(self, node: Expr) -> Expr | None:
        # Both rules below start from a mod or floordiv summand (maybe scaled): most sums
        # have none.
        for term in node.terms:  # type: ignore[attr-defined]
            if type(term) is Mul and type(term.rhs) is Const:  # type: ignore[attr-defined]
                term = term.lhs  # type: ignore[attr-defined]
            if (type(term) is Mod or type(term) is FloorDiv) and type(term.rhs) is Const:  # type: ignore[attr-defined]
                break
        else:
            return None
        terms, constant = _linear(node)
        coefficient: dict[Expr, int] = dict(terms)
        # (x mod c) * k + (x floordiv c) * (c * k) -> x * k, where `x floordiv c` may itself
        # have been simplified into a sum whose summands appear scaled by c * k.
        digits = []  # the mod summands, with the quotient their x leaves
        for monomial, k in terms:
            if type(monomial) is not Mod or type(monomial.rhs) is not Const:
                continue
            x, c = monomial.lhs, monomial.rhs.value
            quotient = self.simplify(floordiv(x, c))
            digits.append((monomial, k, x, c, quotient))
            quotient_terms, quotient_constant = _linear(quotient)
            if not quotient_terms:
                continue
            if all(coefficient.get(q, 0) == qc * c * k for q, qc in quotient_terms):
                rest = {t: v for t, v in coefficient.items() if t != monomial}
                for q, _ in quotient_terms:
                    rest.pop(q)
                new = add(_combine(rest.items(), constant - quotient_constant * c * k), mul(x, k))
                return self._fired("sum", node, new)
        # (x mod c) * k + ((x floordiv c) mod b) * (c * k) -> (x mod (c * b)) * k: adjacent
        # digits of one x merge (a reshape chain putting a linear index together again).
        for monomial, k, x, c, quotient in digits if len(digits) > 1 else ():
            for high, kh, _, _, _ in digits:
                if kh == c * k and high.lhs == quotient:
                    rest = [(t, v) for t, v in terms if t != monomial and t != high]
                    merged = self.simplify(mod(x, c * high.rhs.value))
                    new = add(_combine(rest, constant), mul(merged, k))
                    if _cost(new) < _cost(node):
                        return self._fired("sum", node, new)
        # x - (x floordiv c) * c -> x mod c (and multiples), when the sum does not grow.
        for monomial, k in terms:
            if type(monomial) is not FloorDiv or type(monomial.rhs) is not Const:
                continue
            c = monomial.rhs.value
            if k >= 0 or k % c != 0 or c <= 1:
                continue
            b = k // c
            x = monomial.lhs
            rest = [(t, v) for t, v in terms if t != monomial]
            new = add(_combine(rest, constant), mul(x, b), mul(mod(x, c), -b))
            new = self._simplify_shallow(new)
            if _cost(new) <= _cost(node):
                return self._fired("sum", node, new)
        return None

    def _simplify_shallow(self, expr: Expr) -> Expr:
        return _sorted_sum(expr)


#: The rule family of each node kind (children already simplified); kinds without one
#: (variables, products) are fixed points once their children are.
_RULES: dict[type, Callable[[ExprSimplifier, Expr], Expr | None]] = {
    Add: ExprSimplifier._rewrite_sum,
    Mod: ExprSimplifier._rewrite_mod,
    FloorDiv: ExprSimplifier._rewrite_floordiv,
    CeilDiv: ExprSimplifier._rewrite_ceildiv,
    Min: ExprSimplifier._rewrite_min_max,
    Max: ExprSimplifier._rewrite_min_max,
}


# ---------------------------------------------------------------------------
# Simplifiers shared across maps
# ---------------------------------------------------------------------------

#: One simplifier (with its range evaluator) per domain: variable bounds plus constraints.
#: Simplification is a function of the expression and the domain alone, so maps with the
#: same domain (a reshape chain and its round trip, the constraint and result phases of one
#: map) reuse each other's sub-results.
_SHARED: dict[tuple, ExprSimplifier] = {}
register(_SHARED.clear)

#: Domains kept before the table is dropped (a bound on memory for long runs; dropping only
#: costs recomputation). Sub-results live on the nodes, as long as the nodes do.
_MAX_SHARED_DOMAINS = 512


def _shared_simplifier(
    bounds: Mapping[Var, Interval], constraints: tuple[Constraint, ...] = ()
) -> ExprSimplifier:
    """The simplifier of the domain ``bounds`` + ``constraints``, shared by every caller."""
    # Keyed by the variables' identities and the bounds' ends: ints hash and compare in C
    # (a variable's and an interval's own hash and equality are Python calls). The
    # simplifier keeps ``bounds``, so the variables named by id stay alive with their key.
    ends = []
    for v, interval in bounds.items():
        ends += (id(v), interval.lower, interval.upper)
    key = (tuple(ends), constraints)
    simplifier = _SHARED.get(key)
    if simplifier is None:
        if len(_SHARED) >= _MAX_SHARED_DOMAINS:
            _SHARED.clear()
        simplifier = ExprSimplifier(RangeEvaluator(bounds, constraints))
        _SHARED[key] = simplifier
    return simplifier


def simplify_expr(
    expr: Expr,
    bounds: Mapping[Var, Interval],
    constraints: Iterable[Constraint] | Mapping[Expr, Interval] = (),
) -> Expr:
    """``expr`` simplified over the given bounds and constraints."""
    return ExprSimplifier(RangeEvaluator(bounds, constraints)).simplify(expr)


__all__ = ["ExprSimplifier", "simplify_expr"]
