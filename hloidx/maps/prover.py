"""The case-split prover: floordiv/mod/min/max split into their few cases over the ranges,
the identity left in every closed case judged by SymPy (unless both sides have the same
canonical terms); and the Verdict it returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .expr import (
    Add,
    CeilDiv,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    Var,
    VarKind,
    add,
    const,
    mul,
    replace_vars,
)
from .indexing_map import IndexingMap
from .polynomial import (
    Poly,
    Range,
    _Atoms,
    _nodes,
    _normalize_domain,
    _Normalizer,
    _padd,
    _pkey,
    _sympy_identity,
    _Unprovable,
    to_sympy,
)

VerdictKind = Literal["proved", "exhaustive", "sampled", "refuted", "skipped"]


class _Checker(Protocol):
    """What a proof needs of the verdict ladder (.equivalence) that runs it: its clock."""

    def check_time(self) -> None:
        """Raise when the check is out of time."""


_MAX_CASES = 512  # leaf cases the proof may examine before giving up


_MAX_SPLIT = 64  # values one atom may take for it to be worth a case split


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
    #: both domains are empty: the maps agree because neither has a point (nothing more)
    vacuous: bool = False

    @property
    def is_refuted(self) -> bool:
        return self.kind == "refuted"

    @property
    def is_certain(self) -> bool:
        """Proved or exhaustively checked: equality holds at every point."""
        return self.kind in ("proved", "exhaustive")

    @property
    def label(self) -> str:
        if self.vacuous:
            return f"{self.kind}, vacuously: no point to compare (the domain is empty)"
        if self.kind in ("exhaustive", "sampled"):
            return f"{self.kind} ({self.points} points)"
        return self.kind

    def to_json(self) -> dict[str, Any]:
        doc = {"kind": self.kind, "points": self.points, "counterexample": self.counterexample}
        if self.vacuous:
            doc["vacuous"] = True
        return doc


class _Prover:
    """Shows that result pairs agree at every point of a domain, splitting cases as needed."""

    def __init__(self, atoms: _Atoms, checker: _Checker) -> None:
        self.atoms = atoms
        self.checker = checker
        self.cases = 0
        self.identical = 0
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
            # polynomial (usually linear) forms over variables and quotient atoms. Two sides
            # with the same canonical terms (sorted monomials and coefficients) are the same
            # polynomial: that needs no judge, and it spares importing SymPy (a third of a
            # second) in most runs. Any other pair goes to SymPy, independently of our own
            # arithmetic.
            for px, py in polys:
                kx, ky = _pkey(px), _pkey(py)
                if kx == ky:
                    self.identical += 1
                    continue
                self.sympy_checks += 1
                if not _sympy_identity(kx, ky):
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


def _prove(a: IndexingMap, b: IndexingMap, checker: _Checker) -> Verdict | None:
    """``proved`` when the algebra shows the maps equal pointwise, else None."""
    atoms = _Atoms()
    try:
        da = _normalize_domain(a, atoms)
        db = _normalize_domain(b, atoms)
        if da is None and db is None:
            return Verdict("proved", detail="both domains are empty", vacuous=True)
        if da is None or db is None or da.bounds != db.bounds or da.keys != db.keys:
            return None
        prover = _Prover(atoms, checker)
        # The feasible sets are the same, so an equality a's constraints pin holds at every
        # point compared: the variable it pins can be replaced by its value on both sides.
        pinned = _pinned_variables(a)
        pairs = [
            (replace_vars(x, pinned), replace_vars(y, pinned))
            for x, y in zip(a.results, b.results, strict=True)
        ]
        norm = _Normalizer(atoms, da.bounds, {})
        conditions = [(norm.poly(e), r) for e, r in da.constraints]
        if prover.equal(pairs, a, da.bounds, {}, conditions):
            detail = "equal as polynomials" if prover.cases == 0 else f"{prover.cases} cases"
            return Verdict(
                "proved",
                detail=f"{detail}; {prover.identical} identities with the same terms on both "
                f"sides, {prover.sympy_checks} confirmed by SymPy",
            )
    except (_Unprovable, RecursionError):
        return None
    return None


_PIN_ORDER = {VarKind.RUNTIME: 0, VarKind.RANGE: 1, VarKind.DIM: 2}


def _pinned_variables(m: IndexingMap) -> dict[Var, Expr]:
    """Variables that the equality constraints of ``m`` pin (``d0 - rt0 in [0, 0]`` pins
    ``rt0`` to ``d0``), each with its value in the other variables: a constraint
    ``linear in [c, c]`` where a variable has coefficient 1 or -1 (a runtime variable
    first, then a range variable, then a dimension). Valid at every feasible point."""
    pinned: dict[Var, Expr] = {}
    for expr, interval in m.constraints:
        if interval.lower != interval.upper:
            continue
        coefficients = _linear_coefficients(replace_vars(expr, pinned))
        if coefficients is None:
            continue
        units = [v for v, c in coefficients.items() if v is not None and c in (1, -1)]
        if not units:
            continue
        var = min(units, key=lambda v: (_PIN_ORDER.get(v.kind, 3), v.index))
        sign = coefficients[var]
        # sign * var + rest = c, so var = sign * (c - rest)
        terms = [const(sign * (interval.lower - coefficients.get(None, 0)))]
        terms += [mul(v, const(-sign * c)) for v, c in coefficients.items() if v not in (None, var)]
        value = add(*terms) if len(terms) > 1 else terms[0]
        pinned = {v: replace_vars(e, {var: value}) for v, e in pinned.items()}
        pinned[var] = value
    return pinned


def _prove_with_sympy(a: IndexingMap, b: IndexingMap, checker: _Checker) -> Verdict | None:
    """``proved`` when SymPy reduces every result difference to zero on the same domain.

    SymPy knows nothing of the bounds, so this only catches bound-free identities; it is
    tried only when the domain is too large to enumerate.
    """
    try:
        atoms = _Atoms()
        da, db = _normalize_domain(a, atoms), _normalize_domain(b, atoms)
    except _Unprovable:
        return None
    if da is None or db is None or da.bounds != db.bounds or da.keys != db.keys:
        return None
    # Linear results need no SymPy (whose import alone costs 0.4 s and 34 MB in a run that
    # proves nothing else): two linear forms are identically equal exactly when their
    # coefficients are, which is what ``expand`` of their difference would say.
    nonlinear = []
    for x, y in zip(a.results, b.results, strict=True):
        cx, cy = _linear_coefficients(x), _linear_coefficients(y)
        if cx is None or cy is None:
            nonlinear.append((x, y))
        elif cx != cy:
            return None
    if not nonlinear:
        return Verdict("proved", detail="equal linear forms")
    import sympy

    for x, y in nonlinear:
        checker.check_time()
        if any(
            type(n) in (FloorDiv, CeilDiv, Mod) and type(n.rhs) is not Const for n in _nodes(x, y)
        ):
            return None  # a variable divisor might be zero somewhere
        if sympy.expand(to_sympy(x) - to_sympy(y)) != 0:
            return None
    return Verdict("proved", detail="sympy")


def _linear_coefficients(expr: Expr) -> dict[Var | None, int] | None:
    """``expr`` as ``{variable: coefficient, None: constant}`` (no zero entries), or None when
    it is not a sum of variables times constants plus a constant."""
    out: dict[Var | None, int] = {}
    stack: list[tuple[Expr, int]] = [(expr, 1)]
    while stack:
        node, factor = stack.pop()
        kind = type(node)
        if kind is Const:
            out[None] = out.get(None, 0) + factor * node.value
        elif kind is Var:
            out[node] = out.get(node, 0) + factor
        elif kind is Add:
            stack.extend((term, factor) for term in node.terms)
        elif kind is Mul and type(node.rhs) is Const:
            stack.append((node.lhs, factor * node.rhs.value))
        elif kind is Mul and type(node.lhs) is Const:
            stack.append((node.rhs, factor * node.lhs.value))
        else:
            return None
    return {k: v for k, v in out.items() if v}
