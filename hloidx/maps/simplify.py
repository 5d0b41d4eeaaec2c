"""The simplifier's API: :func:`simplify` and :func:`simplify_with_rules` on maps (the driver
in .map_simplify), :class:`ExprSimplifier` and :func:`simplify_expr` on expressions (the
range-aware rules in .expr_simplify, whose docstring lists them), RemoveUnusedVars and
RescaleSymbols (.variables), and :func:`clear_caches` for cold benchmarks."""

from __future__ import annotations

from .expr_simplify import _SHARED, ExprSimplifier, _shared_simplifier, simplify_expr
from .interning import clear_interned
from .linear_form import _cost
from .map_simplify import (
    AppliedRule,
    SimplifyOptions,
    _simplified,
    _simplify_constraints,
    _simplify_map,
    simplify,
    simplify_with_rules,
)
from .traversal import variables, xla_order_key
from .variables import remove_unused_vars, rescale_symbols


def clear_caches() -> None:
    """Forget every memoised simplification and expression property (for cold benchmarks)."""
    _simplified.cache_clear()
    _SHARED.clear()
    _cost.cache_clear()
    variables.cache_clear()
    xla_order_key.cache_clear()
    # Interned nodes carry no results of their own, but a node built again finds its twin
    # (and that twin's cached interval and simplified form when the domain is the same):
    # a cold call must build its nodes afresh.
    clear_interned()


__all__ = [
    "AppliedRule",
    "ExprSimplifier",
    "SimplifyOptions",
    "_shared_simplifier",
    "_simplified",
    "_simplify_constraints",
    "_simplify_map",
    "clear_caches",
    "remove_unused_vars",
    "rescale_symbols",
    "simplify",
    "simplify_expr",
    "simplify_with_rules",
]
