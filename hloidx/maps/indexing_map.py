"""IndexingMap: results over dimension, range and runtime variables, with a domain.

A map ``(d...)[s...]{rt...} -> (results)`` holds for every point whose variables lie in
their bounds and whose constraints ``expr in [lo, hi]`` all hold. It denotes the relation
``{(d, f(d, s, rt)) : (d, s, rt) in domain}``: range variables enumerate, runtime variables
stand for values only known at run time (offsets read from other tensors).

Maps are immutable; every operation returns a new map. Construction only *normalises*
(constraints on the same expression are intersected and kept in a canonical order; an empty
bound or constraint interval makes the map known-empty); it never simplifies expressions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

from ..caches import memo
from .expr import (
    Const,
    Expr,
    Var,
    VarKind,
    as_expr,
    dim,
    range_var,
    replace_vars,
    rt_var,
    sort_key,
    variables,
)
from .interval import Interval


class MapState(Enum):
    NORMAL = "normal"
    UNDEFINED = "undefined"  # no map exists (XLA's "UNDEFINED")
    KNOWN_EMPTY = "known_empty"  # the domain has been shown to contain no point


# Enum member lookups through the class are slow in hot properties; bind them once.
_UNDEFINED = MapState.UNDEFINED
_KNOWN_EMPTY = MapState.KNOWN_EMPTY


@dataclass(frozen=True, slots=True)
class Variable:
    """A variable's inclusive bounds and optional display name (``th_x``, ``vector_elem``)."""

    bounds: Interval
    name: str = ""

    @staticmethod
    def of_size(size: int, name: str = "") -> Variable:
        return Variable(Interval(0, size - 1), name)


class OpenVariable(Variable):
    """A Variable being filled in (by the fast map reader): plain slot stores, then sealed by
    taking the class Variable, whose frozen dataclass makes each store a call (as
    nodes._OpenBinary does for nodes)."""

    __slots__ = ()
    __setattr__ = object.__setattr__  # both: they share one type slot
    __delattr__ = object.__delattr__


Constraint = tuple[Expr, Interval]


def _normalise_constraints(items: Iterable[Constraint]) -> tuple[tuple[Constraint, ...], bool]:
    if type(items) is not tuple:
        items = tuple(items)
    count = len(items)
    if count > 1:
        # The usual case: no two constraints on one expression (equal expressions have equal
        # hashes), so nothing merges: the pairs sorted by their expressions' keys, without a
        # dict of the expressions (whose hash is a Python-level call). One pass checks the
        # pairs, collects the hashes and the keys (a key kept on its node without a call) and
        # finds an empty interval.
        hashes = set()
        keys = []
        empty = False
        for pair in items:
            if type(pair) is not tuple:
                break
            expr = pair[0]
            hashes.add(expr._hash)
            keys.append(expr.order or sort_key(expr))
            interval = pair[1]
            if interval.lower > interval.upper:
                empty = True
        else:
            if len(hashes) == count:
                order = sorted(range(count), key=keys.__getitem__)
                return tuple(map(items.__getitem__, order)), empty
    merged: dict[Expr, Interval] = {}
    for expr, interval in items:
        previous = merged.get(expr)
        merged[expr] = interval if previous is None else previous.intersect(interval)
    empty = False
    for interval in merged.values():
        if interval.lower > interval.upper:
            empty = True
    if len(merged) == 1:
        return tuple(merged.items()), empty
    return tuple((e, merged[e]) for e in sorted(merged, key=sort_key)), empty


#: how a map is drawn as HTML in a notebook (``IndexingMap._repr_html_``): set by the display
#: layer (:func:`hloidx.notebook.maps.install_map_display`); None until then
html_display: Callable[[IndexingMap], str] | None = None


@dataclass(frozen=True, eq=True)
class IndexingMap:
    results: tuple[Expr, ...]
    dim_vars: tuple[Variable, ...]
    range_vars: tuple[Variable, ...] = ()
    rt_vars: tuple[Variable, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    state: MapState = MapState.NORMAL
    _hash: int | None = field(default=None, init=False, compare=False, repr=False)
    #: ``bounds()``, computed once (a copy is handed out: callers may change theirs).
    _bounds: dict[Var, Interval] | None = field(default=None, init=False, compare=False, repr=False)
    #: ``remove_unused_symbols()``, computed once (maps are immutable).
    _trimmed: IndexingMap | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Maps are built very often (every composition step): skip conversions that the
        # arguments do not need.
        results = self.results
        if type(results) is tuple:
            for r in results:
                if not isinstance(r, Expr):
                    results = None
                    break
        else:
            results = None
        if results is None:
            object.__setattr__(self, "results", tuple(as_expr(r) for r in self.results))
        if type(self.dim_vars) is not tuple:
            object.__setattr__(self, "dim_vars", tuple(self.dim_vars))
        if type(self.range_vars) is not tuple:
            object.__setattr__(self, "range_vars", tuple(self.range_vars))
        if type(self.rt_vars) is not tuple:
            object.__setattr__(self, "rt_vars", tuple(self.rt_vars))
        empty = False
        if self.constraints:
            constraints, empty = _normalise_constraints(self.constraints)
            object.__setattr__(self, "constraints", constraints)
        elif type(self.constraints) is not tuple:
            object.__setattr__(self, "constraints", ())
        if self.state is MapState.NORMAL:
            if not empty:
                for group in (self.dim_vars, self.range_vars, self.rt_vars):
                    for v in group:
                        if v.bounds.lower > v.bounds.upper:
                            empty = True
            if empty:
                object.__setattr__(self, "state", MapState.KNOWN_EMPTY)

    def __hash__(self) -> int:
        # Computed when first asked: many maps are read, printed or composed, never hashed.
        value = self._hash
        if value is None:
            value = hash(
                (
                    self.results,
                    self.dim_vars,
                    self.range_vars,
                    self.rt_vars,
                    self.constraints,
                    self.state,
                )
            )
            object.__setattr__(self, "_hash", value)
        return value

    # -- construction ---------------------------------------------------------
    @staticmethod
    def undefined() -> IndexingMap:
        return IndexingMap((), (), state=MapState.UNDEFINED)

    @staticmethod
    def known_empty(num_dims: int = 0, num_results: int = 0) -> IndexingMap:
        return IndexingMap(
            tuple(Const(0) for _ in range(num_results)),
            tuple(Variable(Interval.EMPTY) for _ in range(num_dims)),
            state=MapState.KNOWN_EMPTY,
        )

    @staticmethod
    def identity(shape: Sequence[int]) -> IndexingMap:
        if type(shape) is not tuple:
            shape = tuple(int(s) for s in shape)
        return _identity(shape)

    @staticmethod
    def build(
        results: Sequence[Expr | int],
        dim_sizes: Sequence[int],
        range_sizes: Sequence[int] = (),
        rt_bounds: Sequence[Interval] = (),
        constraints: Iterable[Constraint] = (),
    ) -> IndexingMap:
        """A map from sizes: dims ``[0, size-1]``, range vars likewise, rt vars given."""
        return IndexingMap(
            tuple(as_expr(r) for r in results),
            dims_of(dim_sizes),
            dims_of(range_sizes),
            tuple(Variable(b) for b in rt_bounds),
            tuple(constraints),
        )

    # -- queries ---------------------------------------------------------------
    @property
    def is_undefined(self) -> bool:
        return self.state is _UNDEFINED

    @property
    def is_known_empty(self) -> bool:
        return self.state is _KNOWN_EMPTY

    @property
    def num_dims(self) -> int:
        return len(self.dim_vars)

    @property
    def num_range_vars(self) -> int:
        return len(self.range_vars)

    @property
    def num_rt_vars(self) -> int:
        return len(self.rt_vars)

    @property
    def num_results(self) -> int:
        return len(self.results)

    def all_vars(self) -> tuple[Variable, ...]:
        return self.dim_vars + self.range_vars + self.rt_vars

    def var_list(self) -> list[Var]:
        """Every variable of the map as an expression node: dims, range vars, rt vars."""
        return (
            [dim(i) for i in range(self.num_dims)]
            + [range_var(i) for i in range(self.num_range_vars)]
            + [rt_var(i) for i in range(self.num_rt_vars)]
        )

    def bounds(self) -> dict[Var, Interval]:
        """The bounds of every variable, keyed by its expression node (a fresh dict)."""
        cached = self._bounds
        if cached is None:
            cached = {}
            for vars_of, group in (
                (dim, self.dim_vars),
                (range_var, self.range_vars),
                (rt_var, self.rt_vars),
            ):
                for i, v in enumerate(group):
                    cached[vars_of(i)] = v.bounds
            object.__setattr__(self, "_bounds", cached)
        return dict(cached)

    def variable(self, var: Var) -> Variable:
        return (self.dim_vars, self.range_vars, self.rt_vars)[var.kind][var.index]

    def box_size(self) -> int:
        """Points of the variables' box, ignoring constraints (an exact Python int)."""
        total = 1
        for v in self.all_vars():
            total *= v.bounds.size()
        return total

    def used_vars(self) -> frozenset[Var]:
        out: frozenset[Var] = frozenset()
        for r in self.results:
            out |= variables(r)
        return out

    def __str__(self) -> str:
        from .printer import format_map

        return format_map(self)

    def __repr__(self) -> str:
        return f"IndexingMap({self})"

    def _repr_html_(self) -> str | None:
        """The map in a notebook: its text and its domain as a table, drawn by the display
        layer once it has set :data:`html_display` (``hloidx.parse_map`` does); None (the text
        then) before that. This module never imports the display layer."""
        draw = html_display
        return None if draw is None else draw(self)

    # -- building new maps ------------------------------------------------------
    def with_results(self, results: Sequence[Expr]) -> IndexingMap:
        return replace(self, results=tuple(results))

    def with_constraints(self, constraints: Iterable[Constraint]) -> IndexingMap:
        return replace(self, constraints=tuple(constraints))

    def add_constraints(self, constraints: Iterable[Constraint]) -> IndexingMap:
        """Add ``expr in interval`` constraints.

        A constraint on a single variable tightens its bounds instead; a constant
        constraint is checked at once (the map becomes known-empty when it fails).
        """
        if self.state is not MapState.NORMAL:
            return self
        groups = [list(self.dim_vars), list(self.range_vars), list(self.rt_vars)]
        extra: list[Constraint] = list(self.constraints)
        empty = False
        for expr, interval in constraints:
            if type(expr) is Var:
                group = groups[expr.kind]
                old = group[expr.index]
                group[expr.index] = Variable(old.bounds.intersect(interval), old.name)
            elif type(expr) is Const:
                empty = empty or not interval.contains(expr.value)
            else:
                extra.append((expr, interval))
        result = IndexingMap(
            self.results, tuple(groups[0]), tuple(groups[1]), tuple(groups[2]), tuple(extra)
        )
        if empty:
            return replace(result, state=MapState.KNOWN_EMPTY)
        return result

    def restrict_dims(self, bounds: Sequence[Interval]) -> IndexingMap:
        """The map on a box of its dimensions: each dim's bounds intersected with ``bounds``
        (one output element, a tile, a warp's thread ids); known empty when one is empty."""
        if len(bounds) != len(self.dim_vars):
            raise ValueError(f"the map has {len(self.dim_vars)} dimensions, not {len(bounds)}")
        dims = tuple(
            Variable(v.bounds.intersect(b), v.name)
            for v, b in zip(self.dim_vars, bounds, strict=True)
        )
        return replace(self, dim_vars=dims)

    def substitute(self, replacements: Mapping[Var, Expr]) -> IndexingMap:
        """Replace variables in results and constraints (variables and bounds unchanged)."""
        return replace(
            self,
            results=tuple(replace_vars(r, replacements) for r in self.results),
            constraints=tuple((replace_vars(e, replacements), i) for e, i in self.constraints),
        )

    def remove_unused_symbols(self, *, runtime: bool = True) -> IndexingMap:
        """Drop range and runtime variables that neither the results nor a live constraint use.

        A constraint that mentions only unused symbols is dropped with them, but only when
        it is certainly satisfiable over their bounds (dropping an unsatisfiable one would
        turn an empty map into a non-empty one); otherwise its symbols are kept. With
        ``runtime=False`` runtime variables are all kept (their numbering is shared with
        descriptions kept outside the map).
        """
        if self.state is not MapState.NORMAL or not (self.range_vars or self.rt_vars):
            # Without symbols every constraint mentions a dimension: nothing to drop.
            return self
        if not runtime:
            if not self.range_vars:
                return self
            return self._remove_unused_symbols(keep={rt_var(i) for i in range(self.num_rt_vars)})
        trimmed = self._trimmed
        if trimmed is None:
            trimmed = self._remove_unused_symbols()
            object.__setattr__(self, "_trimmed", trimmed)
        return trimmed

    def _remove_unused_symbols(self, keep: frozenset[Var] | set[Var] = frozenset()) -> IndexingMap:
        from .domain import constraint_group_is_satisfiable

        used = {v for v in self.used_vars() if v.kind != VarKind.DIM} | set(keep)
        live: list[Constraint] = []
        pending = list(self.constraints)
        changed = True
        while changed:
            changed = False
            rest = []
            for expr, interval in pending:
                vs = variables(expr)
                if any(v.kind == VarKind.DIM or v in used for v in vs):
                    used |= {v for v in vs if v.kind != VarKind.DIM}
                    live.append((expr, interval))
                    changed = True
                else:
                    rest.append((expr, interval))
            pending = rest
        # Whatever is pending mentions unused symbols only.
        if pending and not constraint_group_is_satisfiable(self, pending):
            for expr, interval in pending:
                used |= variables(expr)
                live.append((expr, interval))
        return self._keep_symbols(used, live)

    def _keep_symbols(self, keep: set[Var], constraints: list[Constraint]) -> IndexingMap:
        renumber: dict[Var, Expr] = {}
        new_ranges, new_rts = [], []
        for i, v in enumerate(self.range_vars):
            if range_var(i) in keep:
                renumber[range_var(i)] = range_var(len(new_ranges))
                new_ranges.append(v)
        for i, v in enumerate(self.rt_vars):
            if rt_var(i) in keep:
                renumber[rt_var(i)] = rt_var(len(new_rts))
                new_rts.append(v)
        if len(new_ranges) == self.num_range_vars and len(new_rts) == self.num_rt_vars:
            if len(constraints) == len(self.constraints):
                return self
            return replace(self, constraints=tuple(constraints))
        renumber = {k: v for k, v in renumber.items() if k != v}
        return IndexingMap(
            tuple(replace_vars(r, renumber) for r in self.results),
            self.dim_vars,
            tuple(new_ranges),
            tuple(new_rts),
            tuple((replace_vars(e, renumber), i) for e, i in constraints),
        )

    def remove_unused_dims(self) -> tuple[IndexingMap, list[int]]:
        """Drop dimensions used by neither results nor constraints; also return their indices."""
        used: frozenset[Var] = self.used_vars()
        for expr, _ in self.constraints:
            used |= variables(expr)
        removed = [i for i in range(self.num_dims) if dim(i) not in used]
        if not removed:
            return self, []
        renumber: dict[Var, Expr] = {}
        new_dims = []
        for i, v in enumerate(self.dim_vars):
            if i not in removed:
                if len(new_dims) != i:
                    renumber[dim(i)] = dim(len(new_dims))
                new_dims.append(v)
        return (
            IndexingMap(
                tuple(replace_vars(r, renumber) for r in self.results),
                tuple(new_dims),
                self.range_vars,
                self.rt_vars,
                tuple((replace_vars(e, renumber), i) for e, i in self.constraints),
                self.state,
            ),
            removed,
        )

    def compose(self, producer: IndexingMap) -> IndexingMap:
        """``producer`` applied after ``self``: see :func:`compose`."""
        return compose(self, producer)


def dims_of(sizes: Sequence[int]) -> tuple[Variable, ...]:
    return _dims_of(tuple(int(s) for s in sizes))


@memo(4096)
def _dims_of(sizes: tuple[int, ...]) -> tuple[Variable, ...]:
    return tuple(Variable(Interval(0, s - 1)) for s in sizes)


@memo(4096)
def _identity(shape: tuple[int, ...]) -> IndexingMap:
    # Maps are immutable, so every identity of one shape can be the same object (rules
    # ask for identities of the same few shapes thousands of times).
    return IndexingMap(tuple(dim(i) for i in range(len(shape))), dims_of(shape))


def compose(first: IndexingMap, second: IndexingMap) -> IndexingMap:
    """The map ``second ∘ first``: first maps A→B, second maps B→C; the result maps A→C.

    For fusions, ``first`` is the consumer's map (consumer output → its operand, the
    producer's output) and ``second`` the producer's (producer output → producer operand).
    Symbols of the result follow XLA's order: range variables of ``second``, then of
    ``first``; runtime variables of ``second``, then of ``first``. Each of ``first``'s
    results must lie within ``second``'s bound for that dimension: that is added as a
    constraint (a single-variable one tightens that variable's bounds instead).
    """
    if first.is_undefined or second.is_undefined:
        return IndexingMap.undefined()
    if first.num_results != second.num_dims:
        raise ValueError(
            f"cannot compose: the first map has {first.num_results} results, "
            f"the second {second.num_dims} dimensions"
        )
    if first.is_known_empty or second.is_known_empty:
        return IndexingMap.known_empty(first.num_dims, second.num_results)
    shift: dict[Var, Expr] = {}
    for i in range(first.num_range_vars):
        shift[range_var(i)] = range_var(i + second.num_range_vars)
    for i in range(first.num_rt_vars):
        shift[rt_var(i)] = rt_var(i + second.num_rt_vars)
    first_results = [replace_vars(r, shift) for r in first.results]
    into_second: dict[Var, Expr] = {dim(i): r for i, r in enumerate(first_results)}
    results = tuple(replace_vars(r, into_second) for r in second.results)
    constraints: list[Constraint] = [(replace_vars(e, shift), i) for e, i in first.constraints]
    constraints += [(replace_vars(e, into_second), i) for e, i in second.constraints]
    composed = IndexingMap(
        results,
        first.dim_vars,
        second.range_vars + first.range_vars,
        second.rt_vars + first.rt_vars,
    )
    bound_constraints = [
        (r, v.bounds)
        for r, v in zip(first_results, second.dim_vars, strict=True)
        if not _trivially_within(r, v.bounds, composed)
    ]
    return composed.add_constraints(constraints + bound_constraints)


def _trivially_within(expr: Expr, bounds: Interval, indexing_map: IndexingMap) -> bool:
    """Cheap check that ``expr`` never leaves ``bounds`` (so no constraint is needed)."""
    if type(expr) is Const:
        return bounds.contains(expr.value)
    if type(expr) is Var:
        return bounds.contains(indexing_map.variable(expr).bounds)
    return False


__all__ = [
    "Constraint",
    "IndexingMap",
    "MapState",
    "Variable",
    "compose",
    "dims_of",
]
