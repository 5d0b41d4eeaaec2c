"""The prover's algebra: integer polynomials over atoms (variables and floordiv/mod/min/max
terms), their ranges, the domain's linear facts, and SymPy's judgement of identities."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..caches import memo
from .enumeration import (
    _box_of,
    _name,
)
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
)
from .indexing_map import IndexingMap

_INF = 2**200  # an "unbounded" end of a Python-int interval


def _tightened_box(m: IndexingMap) -> dict[Var, tuple[int, int]]:
    """The bounds of ``m`` tightened by its linear constraints (never looser than the box)."""
    box = _box_of(m)
    try:
        domain = _normalize_domain(m, _Atoms())
    except _Unprovable:
        return box
    return box if domain is None else domain.bounds


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


def _nodes(*exprs: Expr) -> Iterator[Expr]:
    from .expr import children

    stack = list(exprs)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))
