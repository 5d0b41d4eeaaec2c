"""How deep an expression tree is, and the deepest one the map readers accept.

Shared by the fast reader (:mod:`hloidx.maps.syntax`) and the Lark reader
(:mod:`hloidx.maps.map_grammar`), which each check a parsed expression against it."""

from __future__ import annotations

from .expr import Expr, children

#: Deepest expression tree accepted (XLA's maps stay far below; recursion elsewhere relies on it).
MAX_EXPR_DEPTH = 128


def expression_depth(expr: Expr) -> int:
    """Levels of the expression tree (a leaf is 1), computed without recursion."""
    depth: dict[int, int] = {}
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        kids = children(node)
        if not kids:
            depth[id(node)] = 1
        elif expanded:
            depth[id(node)] = 1 + max(depth[id(k)] for k in kids)
        elif id(node) not in depth:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in depth)
    return depth[id(expr)]


def too_deep(expr: Expr) -> bool:
    """Whether ``expr`` has more than ``MAX_EXPR_DEPTH`` levels (one look: every node carries
    its depth from when it was built, ``Expr.depth``)."""
    return expr.depth > MAX_EXPR_DEPTH
