"""Simplifying whole maps: the constraint phase, then the results, then rescaled symbols; and
the promises made to the reader: a simplified map is never longer than the one given,
dimensions of size 1 stay variables (XLA's ``kPreserve``), and ``keep_order`` gives back a sum
that did not change in the order it was written (so a map XLA printed simplified comes back
character for character)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..caches import memo
from .constraints import _known_empty, _merge_mod_constraints, _move_into_interval
from .digits import simplify_digits
from .expr import Const, Expr, Var, children, dim, sort_summands
from .expr_simplify import ExprSimplifier, _shared_simplifier
from .indexing_map import Constraint, IndexingMap, MapState
from .linear_index import is_unfinished, through_linear_index
from .range_eval import RangeEvaluator
from .variables import rescale_symbols


@dataclass(frozen=True)
class AppliedRule:
    """One rule family that changed the map, with an example of its effect."""

    name: str
    before: str
    after: str
    map_after: IndexingMap


@dataclass(frozen=True)
class SimplifyOptions:
    """How far :func:`simplify` goes.

    ``preserve_point_dims``: a result that is a dimension whose range is one value stays that
    variable (XLA's ``SimplifyPointDimensions::kPreserve``; False folds it to its value, as
    XLA's default ``Simplify()`` does). ``rescale``: a range variable pinned to one residue
    (``s mod c in [r, r]``) is renumbered to ``s * c + r`` (XLA's ``RescaleSymbols``; the
    relation is the same), where that does not make the map longer."""

    preserve_point_dims: bool = True
    rescale: bool = True


DEFAULT = SimplifyOptions()


def _point_dims(indexing_map: IndexingMap, options: SimplifyOptions) -> frozenset[Var]:
    if not options.preserve_point_dims:
        return _NO_DIMS
    points = []
    for k, v in enumerate(indexing_map.dim_vars):
        b = v.bounds
        if b.lower == b.upper:
            points.append(dim(k))
    return frozenset(points) if points else _NO_DIMS


_NO_DIMS: frozenset[Var] = frozenset()


#: The depth from which a map may be a chain of reshapes that only its linear index
#: finishes: two steps' digits of digits (over the non-nesting chain family and random
#: chains, every map the linear index shortened had depth 9 or more; a third of the maps
#: it could not shorten are shallower).
_CHAIN_DEPTH = 9


def _simplify_map(
    indexing_map: IndexingMap,
    rules: list[AppliedRule] | None,
    options: SimplifyOptions = DEFAULT,
    linear_index: bool = True,
    keep: frozenset[Var] | None = None,
) -> IndexingMap:
    """The map simplified rule by rule (``keep``: the map's point dimensions, when known)."""
    if indexing_map.state is not MapState.NORMAL:
        return indexing_map
    if keep is None:
        keep = _point_dims(indexing_map, options)
    record = None
    if rules is not None:
        previous = [indexing_map]

        def record(name: str, after: IndexingMap) -> None:
            rules.append(AppliedRule(name, str(previous[0]), str(after), after))
            previous[0] = after

    chained = None
    if (
        linear_index
        and max((r.depth for r in indexing_map.results), default=0) >= _CHAIN_DEPTH
        and is_unfinished(indexing_map.results)
    ):
        # A chain whose radices do not nest: composed over its linear index, without the
        # rule-by-rule pass over the whole chain (the linear index gives the direct form).
        chained = _through_linear_index(indexing_map, keep, options)
        if chained is not None:
            chained = _never_longer(indexing_map, chained)
            # (with rules asked for, the rule-by-rule pass runs too, so that each rule that
            # fires is named; the shorter of the two is taken below all the same)
            if record is None:
                return chained
    # (no constraints: the phase would find nothing to do, after building its simplifier)
    current = (
        _simplify_constraints(indexing_map, record) if indexing_map.constraints else indexing_map
    )
    if current.state is not MapState.NORMAL:
        return current
    fired: dict[str, tuple[Expr, Expr]] = {}
    if rules is None:
        simplifier = _shared_simplifier(current.bounds(), current.constraints)
    else:
        # A private memo: every rule that fires must be seen.
        def on_rule(family: str, before: Expr, after: Expr) -> None:
            fired.setdefault(family, (before, after))

        simplifier = ExprSimplifier(RangeEvaluator.of_map(current), on_rule)
    # A result that is a dimension of size 1 stays that dimension (XLA's kPreserve), so that
    # `(d0, d1) -> (d0, d1)` over f32[1,16] reads as the identity it is; inside a larger
    # expression the dimension is its value, as before (`d0 * 12 + d1` is `d1`).
    if current is not indexing_map:
        keep = _point_dims(current, options)  # (the constraints may have pinned a dimension)
    simplified = simplifier.simplify
    results = tuple([r if keep and r in keep else simplified(r) for r in current.results])
    if results != current.results:
        current = _with(current, results=results)
    if rules is not None:
        for family, (before, after) in fired.items():
            rules.append(AppliedRule(family, str(before), str(after), current))
    current = _never_longer(indexing_map, current)
    if chained is not None and operation_count(chained) < operation_count(current):
        if record:
            record("linear-index", chained)
        current = chained
    if options.rescale and current.range_vars and current.constraints:
        rescaled = rescale_symbols(current)
        if rescaled != current:
            rescaled = _simplify_map(rescaled, None, replace(options, rescale=False))
            # renumbering removes a constraint but can lengthen results (`s0` becoming
            # `s0 * 3 + 1`): it is kept only where the map gets no longer
            if operation_count(rescaled) <= operation_count(current):
                if record:
                    record("rescale-symbols", rescaled)
                current = rescaled
    return current


def _through_linear_index(
    indexing_map: IndexingMap, keep: frozenset[Var], options: SimplifyOptions
) -> IndexingMap | None:
    """The map composed over the linear index of its dimensions (.linear_index), simplified;
    None outside that case."""
    chained = through_linear_index(indexing_map, keep)
    if chained is None or operation_count(chained) >= operation_count(indexing_map):
        return None  # (the direct form, before any simplification, is no shorter: no chain)
    digits = simplify_digits(chained, keep)
    if digits is not None:
        return digits
    return _simplify_map(chained, None, options, linear_index=False)


def _simplify_constraints(
    indexing_map: IndexingMap, record: Callable[[str, IndexingMap], None] | None
) -> IndexingMap:
    """Constraint phase: simplify, move into intervals, drop implied, merge; to a fixed point."""
    current = indexing_map
    bounds = None
    while current.state is MapState.NORMAL:
        new_bounds = current.bounds()
        if new_bounds != bounds:
            # Same bounds, same evaluator: the memo of the previous round stays valid.
            bounds = new_bounds
            simplifier = _shared_simplifier(bounds)
            evaluator = simplifier.evaluator
        new: list[Constraint] = []
        changed = False
        family = "constraint-expressions"
        for expr, interval in current.constraints:
            e = simplifier.simplify(expr)
            while True:
                moved = _move_into_interval(e, interval, evaluator.range)
                if moved is None:
                    break
                e, interval = moved[0], moved[1]
                e = simplifier.simplify(e)
                family = "constraint-ranges"
            r = evaluator.range(e)
            lower, upper = r.lower, r.upper
            if lower > upper:
                # Undefined everywhere (a divisor that can only be zero): leave it alone.
                new.append((e, interval))
                changed = changed or e != expr
                continue
            if max(lower, interval.lower) > min(upper, interval.upper):
                result = _known_empty(current)
                if record:
                    record("known-empty", result)
                return result
            if interval.lower <= lower and upper <= interval.upper:
                changed = True
                family = "drop-implied-constraints" if e == expr else family
                continue
            if e != expr:
                changed = True
            new.append((e, interval))
        if changed:
            base = _with(current, constraints=())
            current = base.add_constraints(new) if new else base
            if record:
                record(family, current)
        merged = _merge_mod_constraints(current)
        if merged is not current and merged != current:
            current = merged
            changed = True
            if record:
                record("merge-mod-constraints", current)
        if not changed:
            break
    return current


def _with(m: IndexingMap, *, results: tuple | None = None, constraints: tuple | None = None):
    """``dataclasses.replace(m, ...)`` for a normal map's results or constraints, without
    replace's field introspection (it runs a few times per simplified map)."""
    return IndexingMap(
        m.results if results is None else results,
        m.dim_vars,
        m.range_vars,
        m.rt_vars,
        m.constraints if constraints is None else constraints,
    )


def operations(expr: Expr) -> int:
    """Binary operations written in ``expr``: a sum of k summands is k - 1 additions."""
    return expr.operations


def operation_count(indexing_map: IndexingMap) -> int:
    """Operations in the results and the constraint expressions: what "longer" means."""
    # (plain loops: generators cost a frame each, and this runs several times per map)
    count = 0
    for r in indexing_map.results:
        count += r.operations
    for e, _ in indexing_map.constraints:
        count += e.operations
    return count


def _never_longer(given: IndexingMap, simplified: IndexingMap) -> IndexingMap:
    """``simplified``, except where it is longer than ``given``: a result that grew is the
    one given (it has the same values on the same points: simplification keeps the set of
    points, only its description changes), and constraints that grew in total are those
    given (with the simplified bounds, which they imply)."""
    if simplified.state is not MapState.NORMAL or given.state is not MapState.NORMAL:
        return simplified
    if simplified.range_vars != given.range_vars or simplified.rt_vars != given.rt_vars:
        return simplified  # renumbered symbols: the given expressions no longer apply
    results = simplified.results
    for g, s in zip(given.results, results, strict=True):
        if s.operations > g.operations:  # (the usual map has none: no tuple is built)
            results = tuple(
                g if s.operations > g.operations else s
                for g, s in zip(given.results, simplified.results, strict=True)
            )
            break
    constraints = simplified.constraints
    if constraints and sum(e.operations for e, _ in constraints) > sum(
        e.operations for e, _ in given.constraints
    ):
        constraints = given.constraints
    if results is simplified.results and constraints is simplified.constraints:
        return simplified  # (either one rebuilt holds a given expression that is not its own)
    out = replace(simplified, results=results)
    if constraints != simplified.constraints:
        out = replace(out, constraints=()).add_constraints(constraints)
    return out


def simplify_with_rules(
    indexing_map: IndexingMap,
    *,
    remove_unused: bool = False,
    options: SimplifyOptions = DEFAULT,
) -> tuple[IndexingMap, list[AppliedRule]]:
    """The simplified map and the rule families that changed it, in order."""
    rules: list[AppliedRule] = []
    result = _simplify_map(indexing_map, rules, options)
    if remove_unused and result.state is MapState.NORMAL:
        trimmed = result.remove_unused_symbols()
        if trimmed != result:
            rules.append(AppliedRule("remove-unused-symbols", str(result), str(trimmed), trimmed))
            result = trimmed
    return result, rules


def simplify(
    indexing_map: IndexingMap,
    *,
    remove_unused: bool = False,
    options: SimplifyOptions = DEFAULT,
    keep_order: bool = False,
) -> IndexingMap:
    """The simplified map (a fixed point: simplifying it again changes nothing).

    Undefined and known-empty maps come back unchanged. Unused symbols are kept unless
    ``remove_unused`` (XLA's ``Simplify`` keeps them too). The result is never longer than
    the input (see :func:`operation_count`). With ``keep_order``, an expression that only
    differs from the given one by the order of its summands is the given one. Results are
    memoised by map and options.
    """
    # (the default options left out of the memo's key: a one-argument look-up costs a third)
    result = _simplified(indexing_map) if options is DEFAULT else _simplified(indexing_map, options)
    if remove_unused and result.state is MapState.NORMAL:
        result = result.remove_unused_symbols()
    if keep_order:
        result = keep_given_order(indexing_map, result)
    return result


def keep_given_order(given: IndexingMap, simplified: IndexingMap) -> IndexingMap:
    """``simplified`` with every result and constraint that equals a given one up to the order
    of summands written as given."""
    if simplified.state is not MapState.NORMAL or given.state is not MapState.NORMAL:
        return simplified
    if len(given.results) != len(simplified.results):
        return simplified
    results = tuple(_as_given(g, s) for g, s in zip(given.results, simplified.results, strict=True))
    written = {sort_summands(e): e for e, _ in given.constraints}
    constraints = tuple((written.get(e, e), b) for e, b in simplified.constraints)
    if results == simplified.results and constraints == simplified.constraints:
        return simplified
    return replace(simplified, results=results, constraints=constraints)


def _as_given(given: Expr, simplified: Expr) -> Expr:
    if given == simplified or type(simplified) in (Const, Var):
        return simplified
    if sort_summands(given) == simplified:
        return given
    # the same node with some children as written: rebuild from the given node's children
    if type(given) is type(simplified):
        pairs = list(zip(children(given), children(simplified), strict=False))
        if len(pairs) == len(children(simplified)) and all(sort_summands(g) == s for g, s in pairs):
            return given
    return simplified


@memo(65536)
def _simplified(indexing_map: IndexingMap, options: SimplifyOptions = DEFAULT) -> IndexingMap:
    if indexing_map.state is not MapState.NORMAL:
        return indexing_map
    keep = _point_dims(indexing_map, options)
    if not indexing_map.constraints:
        trivial = _simplify_trivial(indexing_map, options, keep)
        if trivial is not None:
            return trivial
    # Reshape chains and delinearizations: one pass over digit sums, when it applies.
    digits = simplify_digits(indexing_map, keep)
    if digits is not None:
        return _never_longer(indexing_map, digits)
    return _simplify_map(indexing_map, None, options, keep=keep)


def _simplify_trivial(
    indexing_map: IndexingMap, options: SimplifyOptions, keep: frozenset[Var]
) -> IndexingMap | None:
    """The result for a map without constraints whose results are variables and constants.

    No rule applies to such a map except ``point-range`` (a variable with a one-value
    bound is that value), so the general machinery is skipped; None for any other map.
    """
    changed = False
    for r in indexing_map.results:
        t = type(r)
        if t is Var:
            group = (indexing_map.dim_vars, indexing_map.range_vars, indexing_map.rt_vars)[r.kind]
            if r.index >= len(group) or (group[r.index].bounds.is_point and r not in keep):
                changed = True
        elif t is not Const:
            return None
    if not changed:
        return indexing_map
    return _simplify_map(indexing_map, None, options, keep=keep)


__all__ = [
    "DEFAULT",
    "AppliedRule",
    "SimplifyOptions",
    "keep_given_order",
    "operation_count",
    "simplify",
    "simplify_with_rules",
]
