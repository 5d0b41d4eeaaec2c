"""Typed values of HLO attributes: windows, slices, padding, dimension numbers.

Their own module because two others share them: :mod:`.attributes` parses attribute text into
them, and :mod:`.ir` hands them out as the typed attributes of an instruction. The record
builders of :mod:`.attributes` read an instruction only through :class:`AttributeOwner`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..source import Span


class AttributeOwner(Protocol):
    """What the record builders read of an instruction (:class:`.ir.Instruction` is one)."""

    name: str
    opcode: str
    attributes: dict[str, str]
    span: Span | None

    def _typed(self, key: str, parser_name: str) -> Any: ...


@dataclass(frozen=True, slots=True)
class SliceDim:
    start: int
    limit: int
    stride: int = 1


@dataclass(frozen=True, slots=True)
class PaddingDim:
    low: int
    high: int
    interior: int = 0


@dataclass(frozen=True, slots=True)
class WindowDim:
    size: int
    stride: int = 1
    pad_low: int = 0
    pad_high: int = 0
    base_dilation: int = 1  # lhs_dilate
    window_dilation: int = 1  # rhs_dilate
    reversal: bool = False


@dataclass(frozen=True, slots=True)
class DotDimensionNumbers:
    lhs_batch: tuple[int, ...] = ()
    rhs_batch: tuple[int, ...] = ()
    lhs_contracting: tuple[int, ...] = ()
    rhs_contracting: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ConvDimensionNumbers:
    """From ``dim_labels=b01f_01io->b01f``: which dimension of each tensor plays which role."""

    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_input_feature: int
    kernel_output_feature: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GatherDimensionNumbers:
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ScatterDimensionNumbers:
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    index_vector_dim: int
    input_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()
