"""Hash-consing of expression nodes: one object per distinct compound node.

Building a node equal to one that exists gives that node back, so equal trees are usually the
same object: equality, hashing and memo look-ups stop at identity, and what a node caches (its
interval, its simplified form) serves every place the sub-expression is rebuilt. Equality
stays structural: a node built before the table was last cleared still equals its twin, the
two only stop sharing. Constants and variables have their own tables in ``expr``.
"""

from __future__ import annotations

from typing import Any

from ..caches import register

#: Compound nodes by class and the identities of their children. A key names children by
#: ``id``: the node stored under it keeps those children alive, so the ids stay theirs.
INTERNED: dict[tuple, Any] = {}

#: Bound on interned nodes (memory for long runs; clearing only costs sharing).
MAX_INTERNED = 1 << 18


@register
def clear_interned() -> None:
    """Forget the interned nodes (nodes built later no longer share with older ones)."""
    INTERNED.clear()


def remember(key: tuple, node: Any) -> None:
    """Intern ``node`` under ``key`` (its class and its children's ids)."""
    if len(INTERNED) >= MAX_INTERNED:
        INTERNED.clear()
    INTERNED[key] = node


def adopt(node: Any) -> None:
    """Make ``node`` the interned one for its children, unless an equal node already is.

    For nodes built before the table was last cleared: once adopted, rebuilding the same node
    from the same children gives ``node`` back, with whatever it has cached.
    """
    key = node.intern_key()
    if key is not None and key not in INTERNED:
        remember(key, node)
