"""Small building blocks shared by the basic op rules: shapes, standard maps, errors."""

from __future__ import annotations

from collections.abc import Sequence

from ...errors import HloSemanticError, UnsupportedOpError
from ...maps.expr import Expr, dim, range_var
from ...maps.indexing_map import IndexingMap
from ...maps.interval import Interval
from ..ir import Instruction, Shape
from ..rule_registry import IndexingTable, OperandIndexing


def output_shapes(instr: Instruction) -> list[Shape]:
    """One shape per output: the tuple's elements for multi-output ops, else the shape."""
    if instr.shape.tuple_shapes is not None:
        return list(instr.shape.tuple_shapes)
    return [instr.shape]


def identity(dims: Sequence[int]) -> IndexingMap:
    return IndexingMap.identity(dims)


def scalar_read(dims: Sequence[int]) -> IndexingMap:
    """``(d...) -> ()``: every index of a ``dims``-shaped tensor reads the one scalar."""
    return IndexingMap.build((), dims)


def all_of(dims: Sequence[int]) -> IndexingMap:
    """``()[s...] -> (s...)``: one scalar feeds every index of a ``dims``-shaped tensor."""
    return IndexingMap.build(tuple(range_var(i) for i in range(len(dims))), (), dims)


def no_reads() -> OperandIndexing:
    """An operand that this output does not read at all (an empty union of maps)."""
    return OperandIndexing(())


def single(indexing_map: IndexingMap) -> OperandIndexing:
    return OperandIndexing((indexing_map,))


def dims_with_bounds(dims: Sequence[int], bounds: dict[int, Interval]) -> list[Interval]:
    """The box of a ``dims``-shaped tensor with some dimensions narrowed."""
    return [bounds.get(i, Interval(0, size - 1)) for i, size in enumerate(dims)]


def map_over_box(
    results: Sequence[Expr | int],
    box: Sequence[Interval],
    range_box: Sequence[Interval] = (),
    constraints: Sequence[tuple[Expr, Interval]] = (),
) -> IndexingMap:
    """A map whose dimension (and range) variables have the given, possibly narrowed, bounds."""
    from ...maps.indexing_map import Variable

    return IndexingMap(
        tuple(results),
        tuple(Variable(b) for b in box),
        tuple(Variable(b) for b in range_box),
        (),
        tuple(constraints),
    )


def dims_exprs(rank: int) -> list[Expr]:
    return [dim(i) for i in range(rank)]


def require(instr: Instruction, value: object, what: str) -> None:
    """Raise a located error when a needed attribute is missing."""
    if value is None:
        raise HloSemanticError(f"{instr.opcode} {instr.name} needs {what}", instr.span)


def unsupported(instr: Instruction, why: str) -> UnsupportedOpError:
    return UnsupportedOpError(f"unknown indexing: {instr.opcode} {instr.name}: {why}", instr.span)


def operand_shape(instr: Instruction, operand_id: int) -> Shape:
    if operand_id >= len(instr.operands):
        raise HloSemanticError(
            f"{instr.opcode} {instr.name} needs at least {operand_id + 1} operands", instr.span
        )
    return instr.operands[operand_id].shape


def check_permutation(instr: Instruction, perm: Sequence[int], rank: int, what: str) -> None:
    if sorted(perm) != list(range(rank)):
        raise HloSemanticError(
            f"{instr.opcode} {instr.name}: {what}={{{','.join(map(str, perm))}}} is not a "
            f"permutation of {rank} dimensions",
            instr.attribute_span("dimensions") or instr.span,
        )


def check_dims_in_range(instr: Instruction, dims: Sequence[int], rank: int, what: str) -> None:
    if any(d < 0 or d >= rank for d in dims) or len(set(dims)) != len(dims):
        raise HloSemanticError(
            f"{instr.opcode} {instr.name}: {what}={{{','.join(map(str, dims))}}} is not a set "
            f"of distinct dimensions of a rank-{rank} shape",
            instr.span,
        )


__all__ = [
    "IndexingTable",
    "OperandIndexing",
    "all_of",
    "check_dims_in_range",
    "check_permutation",
    "dims_exprs",
    "dims_with_bounds",
    "identity",
    "map_over_box",
    "no_reads",
    "operand_shape",
    "output_shapes",
    "require",
    "scalar_read",
    "single",
    "unsupported",
]
