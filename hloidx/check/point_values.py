"""Values for the point-wise oracle: the operand data the whole-tensor oracle would use, and the
values of the few tensors a data-dependent op needs (start indices of dynamic-slice and gather).

The point-wise oracle (:mod:`hloidx.check.point_oracle`) follows single elements backwards and
never needs values, except where an op's reads depend on them. There it asks this module, which
computes whole tensors with the provenance interpreter (:mod:`hloidx.check.interpreter`), but
only for the index operands and only when they are small. The operand data is drawn exactly as
:func:`hloidx.check.interpreter.reads` draws it (same seed, same order of draws), so that the two
oracles read the same elements and runtime variables can be fixed to the same values.
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING

import numpy as np

from ..errors import HloidxError
from .interpreter import _Interpreter, _run_instruction
from .tensors import (
    DEFAULT_LIMIT,
    Tensor,
    Value,
    _constant_cone,
    _default_data,
    _dtype,
    _empty_provenance,
    _is_float,
    _regroup,
)

if TYPE_CHECKING:
    from ..hlo.ir import Instruction


class PointUnchecked(Exception):
    """The point-wise oracle cannot tell what this element reads (never a failure by itself)."""


#: most elements of one operand leaf drawn at random only to keep the draws in step
DRAW_LIMIT = 4_000_000


def _values_tensor(values: np.ndarray, known: bool = True) -> Tensor:
    """A tensor whose provenance is empty: the point-wise oracle uses only its values."""
    return Tensor(values, _empty_provenance(values.shape), known)


class OperandData:
    """The data of each operand of ``instr``, as :func:`~hloidx.check.interpreter.reads` gives
    it with no ``operand_values``: a constant operand's real value, else seeded random data.

    The random generator is consumed operand by operand and leaf by leaf, in the same order as
    ``interpreter._operand_data``, so operand ``j`` cannot be drawn before the ones before it;
    leaves that need no draw (floats, index-coded) are made only when asked for.
    """

    def __init__(self, instr: Instruction, seed: int = 0, limit: int = DEFAULT_LIMIT) -> None:
        self.instr = instr
        self.limit = limit
        self._rng = np.random.default_rng(seed)
        shapes = [s for o in instr.operands for s in o.shape.leaves()] + instr.shape.leaves()
        self._index_high = max((max(s.dims) for s in shapes if s.is_array and s.dims), default=1)
        #: per operand: per leaf, the drawn array, or None for a leaf made on demand
        self._drawn: list[list[np.ndarray | None]] = []
        self._real: list[np.ndarray | None] = []

    def _draw_next(self) -> None:
        j = len(self._drawn)
        operand = self.instr.operands[j]
        real = None
        if operand.shape.is_array and _constant_cone(operand):
            try:
                value = _run_instruction(_Interpreter(self.limit), operand)
            except HloidxError:
                value = None
            if isinstance(value, Tensor) and value.known:
                real = value.values
        leaves: list[np.ndarray | None] = []
        for leaf in operand.shape.leaves():
            if real is not None or _is_float(leaf.element_type):
                leaves.append(None)  # no random draw: the real value, or index-coded floats
                continue
            if prod(leaf.dims) > DRAW_LIMIT:
                raise PointUnchecked(
                    f"operand {j} ({operand.name}) is too large to draw its data "
                    f"({prod(leaf.dims)} elements)"
                )
            leaves.append(_default_data(operand, leaf, self._rng, self._index_high, self.limit))
        self._drawn.append(leaves)
        self._real.append(real)

    def value(self, j: int) -> Value:
        """Operand ``j``'s data as tensors with empty provenance (a tuple for a tuple operand)."""
        while len(self._drawn) <= j:
            self._draw_next()
        operand = self.instr.operands[j]
        leaves = operand.shape.leaves()
        arrays = []
        for leaf, drawn in zip(leaves, self._drawn[j], strict=True):
            if prod(leaf.dims) > self.limit:
                raise PointUnchecked(
                    f"the values of operand {j} ({operand.name}) are too large to compute "
                    f"({prod(leaf.dims)} elements)"
                )
            data = self._real[j] if self._real[j] is not None else drawn
            if data is None:  # index-coded floats: _default_data draws nothing for them
                data = _default_data(operand, leaf, self._rng, self._index_high, self.limit)
            arrays.append(_values_tensor(np.asarray(data, dtype=_dtype(leaf)).reshape(leaf.dims)))
        if operand.shape.is_tuple:
            return _regroup(operand.shape, iter(arrays))
        return arrays[0]


def evaluate_values(instr: Instruction, operands: list[Value], limit: int) -> Value:
    """The value of ``instr`` computed by the whole-tensor interpreter from its operands' values
    (only used for the small tensors that position a data-dependent read)."""
    for leaf in instr.shape.leaves():
        if prod(leaf.dims) > limit:
            raise PointUnchecked(
                f"the values of {instr.name} are too large to compute ({prod(leaf.dims)} elements)"
            )
    try:
        return _Interpreter(limit).evaluate(instr, list(operands))
    except HloidxError as error:
        raise PointUnchecked(
            f"cannot compute the values of {instr.name}: {error.message}"
        ) from None
