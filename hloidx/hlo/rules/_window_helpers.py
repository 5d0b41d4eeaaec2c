"""Shared machinery of the windowed and data-dependent rules: building maps piece by piece.

:class:`MapBuilder` collects a map's variables and constraints while a rule walks the
dimensions of an op. It keeps maps in their simplest direct form: a size-1 range variable is
the constant 0, a constraint that the bounds already imply is dropped, a constraint on one
variable tightens that variable's bounds, and a constraint the bounds contradict marks the map
known-empty. These are decisions over intervals only, so they are sound whatever the rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ...errors import HloSemanticError
from ...maps.expr import (
    Add,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    Var,
    VarKind,
    as_expr,
    const,
    dim,
    floordiv,
    mod,
    range_var,
    rt_var,
)
from ...maps.indexing_map import IndexingMap, MapState, Variable
from ...maps.interval import Interval
from ..ir import Instruction, Shape

#: A bound wide enough to mean "no limit" without overflowing saturating arithmetic.
UNBOUNDED = Interval(-(2**62), 2**62)


def interval_of(expr: Expr, bounds: dict[Var, Interval]) -> Interval:
    """A sound interval for ``expr`` (wide where this cheap evaluation cannot tell)."""
    t = type(expr)
    if t is Const:
        return Interval(expr.value, expr.value)
    if t is Var:
        return bounds[expr]
    if t is Add:
        total = Interval(0, 0)
        for term in expr.terms:
            total = total + interval_of(term, bounds)
        return total
    if t is Mul and type(expr.rhs) is Const:
        return interval_of(expr.lhs, bounds) * expr.rhs.value
    if t is FloorDiv and type(expr.rhs) is Const:
        return interval_of(expr.lhs, bounds).floordiv(expr.rhs.value)
    if t is Mod and type(expr.rhs) is Const:
        return interval_of(expr.lhs, bounds).mod(expr.rhs.value)
    return UNBOUNDED


def _split_constant(expr: Expr) -> tuple[Expr, int]:
    """``e + c`` as ``(e, c)`` so that constraints keep the constant on the interval side."""
    if type(expr) is Add and type(expr.terms[-1]) is Const:
        rest = expr.terms[:-1]
        body = rest[0] if len(rest) == 1 else Add(rest)
        return body, expr.terms[-1].value
    return expr, 0


class MapBuilder:
    """Variables, constraints and emptiness of one map under construction."""

    def __init__(self, dim_sizes: Sequence[int]) -> None:
        self.dims = [Interval(0, int(s) - 1) for s in dim_sizes]
        self.ranges: list[Interval] = []
        self.rts: list[Interval] = []
        self.constraints: list[tuple[Expr, Interval]] = []
        self.empty = any(b.is_empty for b in self.dims)

    # -- variables ----------------------------------------------------------------
    def dim(self, index: int) -> Expr:
        return dim(index)

    def new_range(self, size: int) -> Expr:
        """A range variable over ``[0, size-1]``; the constant 0 when ``size`` is 1."""
        if size == 1:
            return const(0)
        if size < 1:
            self.empty = True
            return const(0)
        self.ranges.append(Interval(0, size - 1))
        return range_var(len(self.ranges) - 1)

    def new_rt(self, bounds: Interval) -> Var:
        self.rts.append(bounds)
        if bounds.is_empty:
            self.empty = True
        return rt_var(len(self.rts) - 1)

    def bounds(self) -> dict[Var, Interval]:
        out: dict[Var, Interval] = {}
        for kind, group in (
            (VarKind.DIM, self.dims),
            (VarKind.RANGE, self.ranges),
            (VarKind.RUNTIME, self.rts),
        ):
            for i, b in enumerate(group):
                out[Var(kind, i)] = b
        return out

    # -- constraints --------------------------------------------------------------
    def constrain(self, expr: Expr | int, lower: int, upper: int) -> None:
        """Require ``lower <= expr <= upper`` (dropped if implied, empties the map if refuted)."""
        body, constant = _split_constant(as_expr(expr))
        wanted = Interval(lower - constant, upper - constant)
        if wanted.is_empty:
            self.empty = True
            return
        if type(body) is Const:
            self.empty = self.empty or not wanted.contains(body.value)
            return
        if type(body) is Mul and type(body.rhs) is Const and type(body.lhs) is Var:
            # c * v in [lo, hi]  <=>  v in [ceil(lo / c), floor(hi / c)] for c > 0
            c = body.rhs.value
            if c > 0:
                body, wanted = body.lhs, Interval(-(-wanted.lower // c), wanted.upper // c)
        if type(body) is Var:
            group = (self.dims, self.ranges, self.rts)[body.kind]
            group[body.index] = group[body.index].intersect(wanted)
            self.empty = self.empty or group[body.index].is_empty
            return
        have = interval_of(body, self.bounds())
        if wanted.contains(have):
            return
        if have.intersect(wanted).is_empty:
            self.empty = True
            return
        # Only the part of the interval the expression can reach matters (no "infinite" ends).
        self.constraints.append((body, wanted.intersect(have)))

    def undilate(self, position: Expr, dilation: int, size: int) -> Expr:
        """Index ``i`` of an axis of ``size`` elements, stretched by ``dilation``, at ``position``.

        Element ``i`` sits at ``i * dilation``; positions between elements and outside the
        axis hold nothing, so they are constrained away.
        """
        if dilation == 1:
            self.constrain(position, 0, size - 1)
            return position
        self.constrain(mod(position, dilation), 0, 0)
        self.constrain(position, 0, (size - 1) * dilation)
        return floordiv(position, dilation)

    # -- result -------------------------------------------------------------------
    def build(self, results: Sequence[Expr | int]) -> IndexingMap:
        indexing_map = IndexingMap(
            tuple(as_expr(r) for r in results),
            tuple(Variable(b) for b in self.dims),
            tuple(Variable(b) for b in self.ranges),
            tuple(Variable(b) for b in self.rts),
            tuple(self.constraints),
        )
        if self.empty and indexing_map.state is MapState.NORMAL:
            indexing_map = replace(indexing_map, state=MapState.KNOWN_EMPTY)
        return indexing_map

    def side_map(self, results: Sequence[Expr | int]) -> IndexingMap:
        """A map over this builder's dimensions and range variables only (no constraints):
        the index at which a runtime variable's value is read."""
        return IndexingMap(
            tuple(as_expr(r) for r in results),
            tuple(Variable(b) for b in self.dims),
            tuple(Variable(b) for b in self.ranges),
        )


def scalar_read(shape: Shape) -> IndexingMap:
    """``(d...) -> ()``: an output element reads the scalar."""
    return IndexingMap.build((), shape.dims)


def whole_output(shape: Shape) -> IndexingMap:
    """``()[s...] -> (s...)``: a scalar read by every output element."""
    builder = MapBuilder(())
    return builder.build([builder.new_range(size) for size in shape.dims])


def output_shapes(instr: Instruction, count: int) -> list[Shape]:
    """The ``count`` array outputs of a (possibly variadic, tuple-shaped) instruction."""
    leaves = instr.shape.leaves() if instr.shape.is_tuple else [instr.shape]
    if len(leaves) != count:
        raise HloSemanticError(
            f"{instr.opcode} {instr.name}: expected {count} outputs, the shape {instr.shape} "
            f"has {len(leaves)}",
            instr.span,
        )
    return leaves


def require(condition: bool, instr: Instruction, message: str) -> None:
    """Raise a located :class:`HloSemanticError` unless ``condition`` holds."""
    if not condition:
        raise HloSemanticError(f"{instr.opcode} {instr.name}: {message}", instr.span)


def require_operands(instr: Instruction, count: int | None = None, at_least: int = 0) -> None:
    n = len(instr.operands)
    if count is not None:
        require(n == count, instr, f"expected {count} operands, got {n}")
    require(n >= at_least, instr, f"expected at least {at_least} operands, got {n}")
    for operand in instr.operands:
        require(
            operand.shape.is_array,
            instr,
            f"operand {operand.name} must be an array, got {operand.shape}",
        )


def known_scalar_int(instr: Instruction) -> int | None:
    """The value of an integer scalar ``constant``, or None when it is not one."""
    if instr.opcode != "constant" or instr.shape.dims or instr.literal is None:
        return None
    if not instr.shape.element_type.startswith(("s", "u")):
        return None
    text = instr.literal.strip()
    try:
        return int(text)
    except ValueError:
        return None


def clamp(value: int, lower: int, upper: int) -> int:
    return max(lower, min(value, upper))
