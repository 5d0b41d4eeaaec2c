"""The typed IR of an HLO module: shapes, instructions, computations, modules.

Attributes are kept as the raw text of their values (``attributes["dimensions"] == "{1,0}"``)
and parsed into typed values on first use by the properties below, so that parsing a large
module pays only for the attributes the analysis reads. The typed parsers live in
:mod:`hloidx.hlo.attributes`; a malformed value raises ``HloSyntaxError`` located at the
attribute's value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from math import prod
from typing import TYPE_CHECKING, Any

from .attribute_types import (
    ConvDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    PaddingDim,
    ScatterDimensionNumbers,
    SliceDim,
    WindowDim,
)

if TYPE_CHECKING:
    from ..source import Source, Span

__all__ = [
    "CALL_ATTRIBUTES",
    "Computation",
    "ConvDimensionNumbers",
    "DotDimensionNumbers",
    "GatherDimensionNumbers",
    "HloModule",
    "Instruction",
    "Layout",
    "PaddingDim",
    "ScatterDimensionNumbers",
    "Shape",
    "SliceDim",
    "WindowDim",
]


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Layout:
    """``{1,0}`` or ``{1,0:T(8,128)S(1)}``: minor-to-major order plus the raw tiling suffix."""

    minor_to_major: tuple[int, ...]
    tiling: str = ""  # everything after ':' verbatim (tiles, memory space, ...)

    def __str__(self) -> str:
        body = ",".join(map(str, self.minor_to_major))
        return "{" + body + (":" + self.tiling if self.tiling else "") + "}"


@dataclass(frozen=True, slots=True)
class Shape:
    """An array shape (``f32[10,20]{1,0}``), a tuple shape, or ``token``/``opaque``.

    ``dims`` holds each dimension's size (its bound for ``<=N``; ``-1`` for ``?``);
    ``dynamic[i]`` is True for ``<=N`` and ``?`` dimensions.
    """

    element_type: str
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple[Shape, ...] | None = None
    #: the hash, computed once: a train state's tuple shape has thousands of elements and is
    #: hashed by every get-tuple-element that reads it (never pickled: hashes differ by process)
    _hash: int | None = field(default=None, init=False, repr=False, compare=False)

    def __hash__(self) -> int:
        value = self._hash
        if value is None:
            value = hash(
                (self.element_type, self.dims, self.dynamic, self.layout, self.tuple_shapes)
            )
            object.__setattr__(self, "_hash", value)
        return value

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.element_type, self.dims, self.dynamic, self.layout, self.tuple_shapes)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(_SHAPE_FIELDS, state, strict=True):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_hash", None)

    @property
    def is_tuple(self) -> bool:
        return self.tuple_shapes is not None

    @property
    def is_array(self) -> bool:
        return self.tuple_shapes is None and self.element_type not in ("token", "opaque")

    @property
    def rank(self) -> int:
        return len(self.dims)

    def num_elements(self) -> int:
        return prod(self.dims)

    def leaves(self) -> list[Shape]:
        """The array shapes of a (nested) tuple in order; ``[self]`` for an array."""
        if self.tuple_shapes is None:
            return [self]
        out: list[Shape] = []
        for s in self.tuple_shapes:
            out.extend(s.leaves())
        return out

    def without_layout(self) -> Shape:
        if self.tuple_shapes is not None:
            return Shape("tuple", tuple_shapes=tuple(s.without_layout() for s in self.tuple_shapes))
        return Shape(self.element_type, self.dims, self.dynamic)

    def __str__(self) -> str:
        if self.tuple_shapes is not None:
            return "(" + ", ".join(str(s) for s in self.tuple_shapes) + ")"
        if self.element_type in ("token", "opaque") and not self.dims:
            return self.element_type
        parts = []
        for size, dyn in zip(self.dims, self.dynamic or (False,) * len(self.dims), strict=True):
            parts.append("?" if size < 0 else (f"<={size}" if dyn else str(size)))
        text = f"{self.element_type}[{','.join(parts)}]"
        if self.layout is not None:
            text += str(self.layout)
        return text


_SHAPE_FIELDS = ("element_type", "dims", "dynamic", "layout", "tuple_shapes")


# ---------------------------------------------------------------------------
# Typed attribute values
# ---------------------------------------------------------------------------


#: Attributes naming called computations, in the order they are resolved.
CALL_ATTRIBUTES = (
    "calls",
    "to_apply",
    "body",
    "condition",
    "branch_computations",
    "true_computation",
    "false_computation",
    "select",  # select-and-scatter's selector and combiner
    "scatter",
)

#: Attributes that never change indexing (left out of structural cache keys).
INDEXING_IRRELEVANT_ATTRIBUTES = frozenset(
    {
        "metadata",
        "backend_config",
        "frontend_attributes",
        "sharding",
        "statistics",
        "control-predecessors",
        "origin",
        "schedule",
        "result_accuracy",
    }
)


# ---------------------------------------------------------------------------
# Instructions, computations, modules
# ---------------------------------------------------------------------------


class _typed_attribute:
    """``functools.cached_property`` for :class:`Instruction`, which has ``__slots__`` and so
    no instance dict: the value is kept in the instance's ``_cache`` dict, made on first use
    (most instructions never read a typed attribute, and a module holds tens of thousands)."""

    def __init__(self, compute: Any) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        cache = instance._cache
        if cache is None:
            cache = instance._cache = {}
        try:
            return cache[self.name]
        except KeyError:
            value = cache[self.name] = self.compute(instance)
            return value


@dataclass(eq=False, slots=True)
class Instruction:
    """One HLO instruction. ``operands`` are resolved to the producing instructions.

    Slotted: a large module holds tens of thousands, and an instance dict (grown further by
    each cached typed attribute) was a third of the parsed module's memory.
    """

    name: str
    opcode: str
    shape: Shape
    operands: list[Instruction] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    #: character offset of each attribute's value in the source (for located errors)
    attribute_offsets: dict[str, int] = field(default_factory=dict)
    span: Span | None = None
    is_root: bool = False
    #: the raw text inside the parentheses of ``parameter(N)``, ``constant(...)``, etc. when
    #: the opcode takes a literal instead of operands (``parameter`` number, constant literal)
    literal: str | None = None
    computation: Computation | None = field(default=None, repr=False)
    #: the typed attributes read so far (see :class:`_typed_attribute`)
    _cache: dict[str, Any] | None = field(default=None, init=False, repr=False)

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"Instruction({self.name} = {self.shape} {self.opcode})"

    # -- attribute helpers ------------------------------------------------------
    def attribute_span(self, key: str) -> Span | None:
        if self.span is None:
            return None
        offset = self.attribute_offsets.get(key)
        if offset is None:
            return self.span
        return self.span.source.span(offset, offset + len(self.attributes.get(key, "")))

    def _typed(self, key: str, parser_name: str):
        if key not in self.attributes:
            return None
        from . import attributes as parsers

        try:
            return getattr(parsers, parser_name)(self.attributes[key])
        except Exception as error:
            from ..errors import HloidxError, HloSyntaxError

            span = self.attribute_span(key)
            if isinstance(error, HloidxError):
                raise error.with_span(span) if span else error from None
            raise HloSyntaxError(
                f"malformed attribute {key}={self.attributes[key]!r}", span
            ) from None

    # -- typed attributes (parsed lazily, once) ------------------------------------
    @_typed_attribute
    def dimensions(self) -> tuple[int, ...] | None:
        """``dimensions={...}`` of broadcast, transpose, reverse, reduce, concatenate, sort."""
        return self._typed("dimensions", "parse_int_list")

    @_typed_attribute
    def slice(self) -> tuple[SliceDim, ...] | None:
        return self._typed("slice", "parse_slice")

    @_typed_attribute
    def padding(self) -> tuple[PaddingDim, ...] | None:
        return self._typed("padding", "parse_padding")

    @_typed_attribute
    def window(self) -> tuple[WindowDim, ...] | None:
        return self._typed("window", "parse_window")

    @_typed_attribute
    def dot_dimension_numbers(self) -> DotDimensionNumbers:
        from . import attributes as parsers

        return parsers.dot_dimension_numbers(self)

    @_typed_attribute
    def convolution_dimension_numbers(self) -> ConvDimensionNumbers | None:
        return self._typed("dim_labels", "parse_dim_labels")

    @_typed_attribute
    def feature_group_count(self) -> int:
        value = self._typed("feature_group_count", "parse_int")
        return 1 if value is None else value

    @_typed_attribute
    def batch_group_count(self) -> int:
        value = self._typed("batch_group_count", "parse_int")
        return 1 if value is None else value

    @_typed_attribute
    def gather_dimension_numbers(self) -> GatherDimensionNumbers:
        from . import attributes as parsers

        return parsers.gather_dimension_numbers(self)

    @_typed_attribute
    def gather_slice_sizes(self) -> tuple[int, ...] | None:
        return self._typed("slice_sizes", "parse_int_list")

    @_typed_attribute
    def scatter_dimension_numbers(self) -> ScatterDimensionNumbers:
        from . import attributes as parsers

        return parsers.scatter_dimension_numbers(self)

    @_typed_attribute
    def dynamic_slice_sizes(self) -> tuple[int, ...] | None:
        return self._typed("dynamic_slice_sizes", "parse_int_list")

    @_typed_attribute
    def iota_dimension(self) -> int | None:
        return self._typed("iota_dimension", "parse_int")

    @_typed_attribute
    def tuple_index(self) -> int | None:
        """``index=N`` of get-tuple-element."""
        return self._typed("index", "parse_int")

    @property
    def implied_element(self) -> int | None:
        """For a get-tuple-element the text writes as an operand (``%t#1``, XLA's dumps elide
        the instruction): the element it selects; None for every instruction the text defines.
        Such an instruction is named as the text writes the operand (``t#1``, ``t#1#0``), which
        no defined name can be (``#`` is not a name character)."""
        if "#" not in self.name or self.opcode != "get-tuple-element":
            return None
        return int(self.attributes["index"])

    @_typed_attribute
    def fusion_kind(self) -> str | None:
        return self.attributes.get("kind")

    @_typed_attribute
    def parameter_number(self) -> int | None:
        if self.opcode != "parameter" or self.literal is None:
            return None
        try:
            return int(self.literal.strip(), 0)
        except ValueError:
            return None  # malformed; the parser reports it with its span

    @_typed_attribute
    def called_computations(self) -> dict[str, list[Computation]]:
        """``calls``, ``to_apply``, ``body``, ``condition``, ``branch_computations`` resolved."""
        out: dict[str, list[Computation]] = {}
        module = self.computation.module if self.computation else None
        for key in CALL_ATTRIBUTES:
            if key in self.attributes and module is not None:
                from . import attributes as parsers

                names = parsers.parse_name_list(self.attributes[key])
                out[key] = [module.computations[n] for n in names if n in module.computations]
        return out


@dataclass(eq=False)
class Computation:
    name: str
    instructions: list[Instruction] = field(default_factory=list)
    is_entry: bool = False
    span: Span | None = None
    module: HloModule | None = field(default=None, repr=False)
    #: the result shape its signature declares (`... -> f32[2]`), when it has one
    result_shape: Shape | None = field(default=None, repr=False)

    def __hash__(self) -> int:
        return id(self)

    @cached_property
    def by_name(self) -> dict[str, Instruction]:
        return {i.name: i for i in self.instructions}

    @property
    def root(self) -> Instruction | None:
        for instruction in self.instructions:
            if instruction.is_root:
                return instruction
        return self.instructions[-1] if self.instructions else None

    @property
    def parameters(self) -> list[Instruction]:
        """Parameters ordered by their parameter number."""
        params = [i for i in self.instructions if i.opcode == "parameter"]
        return sorted(
            params, key=lambda p: p.parameter_number if p.parameter_number is not None else 0
        )


@dataclass(eq=False)
class HloModule:
    name: str
    attributes: dict[str, str] = field(default_factory=dict)
    computations: dict[str, Computation] = field(default_factory=dict)
    entry: Computation | None = None
    source: Source | None = None

    def instructions(self) -> list[Instruction]:
        return [i for c in self.computations.values() for i in c.instructions]

    def instruction(self, name: str) -> Instruction | None:
        """The instruction called ``name`` (a leading ``%`` ignored) in any computation."""
        name = name.lstrip("%")
        return next((i for i in self.instructions() if i.name == name), None)
