"""Typed values of HLO attributes, parsed from their raw text on first use.

:mod:`hloidx.hlo.ir` keeps every attribute value as the text XLA printed and calls these
parsers lazily (``instruction.window``, ``instruction.slice``, ...). Each parser takes the raw
value text and returns the typed value, or raises :class:`HloSyntaxError` naming what it
expected; ``ir.py`` attaches the span of the value. The instruction-level helpers
(:func:`dot_dimension_numbers` and friends) gather several attributes into one record.

The formats follow openxla/xla ``xla/hlo/parser/hlo_parser.cc``: ``{1,0}`` integer lists,
``{[0:10:1], [2:5]}`` slices, ``0_0x1_2_1`` padding, ``{size=3x3 stride=2x2 pad=1_1x1_1
lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=0x1}`` windows and ``b01f_01io->b01f`` convolution
dimension labels.
"""

from __future__ import annotations

import re

from ..errors import HloSyntaxError
from .attribute_types import (
    AttributeOwner,
    ConvDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    PaddingDim,
    ScatterDimensionNumbers,
    SliceDim,
    WindowDim,
)

__all__ = [
    "dot_dimension_numbers",
    "gather_dimension_numbers",
    "parse_dim_labels",
    "parse_int",
    "parse_int_list",
    "parse_name_list",
    "parse_padding",
    "parse_slice",
    "parse_window",
    "scatter_dimension_numbers",
]

_INT = re.compile(r"[-+]?\d+")


def _int(text: str, what: str, whole: str) -> int:
    text = text.strip()
    if not _INT.fullmatch(text):
        raise HloSyntaxError(f"expected an integer for {what}, got {text!r} in {whole!r}")
    return int(text)


# ---------------------------------------------------------------------------------------------
# Scalars and lists
# ---------------------------------------------------------------------------------------------


def parse_int(text: str) -> int:
    """``5`` or ``-1``."""
    return _int(text, "the value", text)


def parse_int_list(text: str) -> tuple[int, ...]:
    """``{1,0}``, ``{ 1, 0 }`` or ``{}`` (braces required, as XLA prints them)."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise HloSyntaxError(f"expected a list of integers such as {{1,0}}, got {text!r}")
    body = body[1:-1].strip()
    if not body:
        return ()
    return tuple(_int(part, "a list element", text) for part in body.split(","))


def parse_name_list(text: str) -> list[str]:
    """``%comp``, ``comp`` or ``{%a, %b}`` -> names without ``%``."""
    body = text.strip()
    if body.startswith("{"):
        if not body.endswith("}"):
            raise HloSyntaxError(
                f"expected a list of computation names such as {{%a, %b}}, got {text!r}"
            )
        parts = [p.strip() for p in body[1:-1].split(",")]
        parts = [p for p in parts if p]
    else:
        parts = [body]
    names = []
    for part in parts:
        name = part[1:] if part.startswith("%") else part
        if not re.fullmatch(r"[A-Za-z_][\w.\-]*", name):
            raise HloSyntaxError(f"expected a computation name, got {part!r} in {text!r}")
        names.append(name)
    return names


# ---------------------------------------------------------------------------------------------
# Slices, padding, windows
# ---------------------------------------------------------------------------------------------

_SLICE_DIM = re.compile(r"\s*\[\s*([-+]?\d+)\s*:\s*([-+]?\d+)\s*(?::\s*([-+]?\d+)\s*)?\]\s*")


def parse_slice(text: str) -> tuple[SliceDim, ...]:
    """``{[0:10:1], [2:5]}`` -> one :class:`SliceDim` per dimension (stride defaults to 1)."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise HloSyntaxError(f"expected a slice such as {{[0:10:1], [2:5]}}, got {text!r}")
    body = body[1:-1].strip()
    if not body:
        return ()
    dims = []
    for part in body.split(","):
        match = _SLICE_DIM.fullmatch(part)
        if match is None:
            raise HloSyntaxError(
                f"expected [start:limit] or [start:limit:stride], got {part.strip()!r} in {text!r}"
            )
        start, limit, stride = match.groups()
        dims.append(SliceDim(int(start), int(limit), int(stride) if stride is not None else 1))
    return tuple(dims)


def parse_padding(text: str) -> tuple[PaddingDim, ...]:
    """``0_0x1_2_1`` -> per dimension ``low_high[_interior]`` (negative values allowed)."""
    body = text.strip()
    if not body:
        raise HloSyntaxError("expected a padding such as 0_0x1_2_1, got nothing")
    dims = []
    for part in body.split("x"):
        pieces = part.split("_")
        if len(pieces) not in (2, 3):
            raise HloSyntaxError(
                f"expected low_high or low_high_interior, got {part!r} in {text!r}"
            )
        values = [_int(p, "a padding", text) for p in pieces]
        dims.append(PaddingDim(*values))
    return tuple(dims)


def _x_list(value: str, key: str, whole: str) -> list[int]:
    return [_int(p, key, whole) for p in value.split("x")]


def parse_window(text: str) -> tuple[WindowDim, ...]:
    """``{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=0x1}``.

    ``size`` is required; every other field defaults per dimension (stride 1, no padding,
    dilation 1, no reversal). ``{}`` is the window of a rank-0 operand.
    """
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise HloSyntaxError(f"expected a window such as {{size=3x3 stride=2x2}}, got {text!r}")
    body = body[1:-1].strip()
    if not body:
        return ()
    fields: dict[str, str] = {}
    for item in body.split():
        key, eq, value = item.partition("=")
        if not eq or not value:
            raise HloSyntaxError(f"expected key=value in a window, got {item!r} in {text!r}")
        if key not in ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"):
            raise HloSyntaxError(f"unknown window field {key!r} in {text!r}")
        fields[key] = value
    if "size" not in fields:
        raise HloSyntaxError(f"a window needs size=..., got {text!r}")
    sizes = _x_list(fields["size"], "size", text)
    rank = len(sizes)

    def per_dim(key: str, default: int) -> list[int]:
        if key not in fields:
            return [default] * rank
        values = _x_list(fields[key], key, text)
        if len(values) != rank:
            raise HloSyntaxError(
                f"window {key} has {len(values)} dimensions but size has {rank} in {text!r}"
            )
        return values

    strides = per_dim("stride", 1)
    lhs = per_dim("lhs_dilate", 1)
    rhs = per_dim("rhs_dilate", 1)
    reversal = per_dim("rhs_reversal", 0)
    if "pad" in fields:
        pads = parse_padding(fields["pad"])
        if len(pads) != rank or any(p.interior for p in pads):
            raise HloSyntaxError(f"window pad must be low_high per dimension ({rank}) in {text!r}")
    else:
        pads = tuple(PaddingDim(0, 0) for _ in range(rank))
    return tuple(
        WindowDim(
            size=sizes[i],
            stride=strides[i],
            pad_low=pads[i].low,
            pad_high=pads[i].high,
            base_dilation=lhs[i],
            window_dilation=rhs[i],
            reversal=bool(reversal[i]),
        )
        for i in range(rank)
    )


# ---------------------------------------------------------------------------------------------
# Convolution dimension labels
# ---------------------------------------------------------------------------------------------

_DIM_LABELS = re.compile(r"([^_\s]+)_([^_\s]+)->([^_\s]+)")


def parse_dim_labels(text: str) -> ConvDimensionNumbers:
    """``b01f_01io->b01f``: the role of each dimension of input, kernel and output.

    Input and output use ``b`` (batch), ``f`` (feature) and digits (spatial dimension N);
    the kernel uses ``i``/``o`` (input/output feature) and digits. Spatial dimensions are
    listed in the order of their digit, as XLA does.
    """
    match = _DIM_LABELS.fullmatch(text.strip())
    if match is None:
        raise HloSyntaxError(f"expected dimension labels such as b01f_01io->b01f, got {text!r}")
    lhs, rhs, out = match.groups()

    def roles(labels: str, letters: str, what: str) -> tuple[dict[str, int], tuple[int, ...]]:
        found: dict[str, int] = {}
        spatial: dict[int, int] = {}
        for position, char in enumerate(labels):
            if char in letters and char not in found:
                found[char] = position
            elif char.isdigit() and int(char) not in spatial:
                spatial[int(char)] = position
            else:
                raise HloSyntaxError(
                    f"unexpected or repeated label {char!r} in the {what} labels "
                    f"{labels!r} of {text!r}"
                )
        missing = [c for c in letters if c not in found]
        if missing:
            raise HloSyntaxError(
                f"the {what} labels {labels!r} lack {'/'.join(missing)} in {text!r}"
            )
        if sorted(spatial) != list(range(len(spatial))):
            raise HloSyntaxError(
                f"the {what} spatial labels of {labels!r} must be 0..N-1 in {text!r}"
            )
        return found, tuple(spatial[k] for k in range(len(spatial)))

    lhs_roles, lhs_spatial = roles(lhs, "bf", "input")
    rhs_roles, rhs_spatial = roles(rhs, "io", "kernel")
    out_roles, out_spatial = roles(out, "bf", "output")
    if not len(lhs_spatial) == len(rhs_spatial) == len(out_spatial):
        raise HloSyntaxError(
            f"input, kernel and output must have as many spatial dimensions in {text!r}"
        )
    return ConvDimensionNumbers(
        input_batch=lhs_roles["b"],
        input_feature=lhs_roles["f"],
        input_spatial=lhs_spatial,
        kernel_input_feature=rhs_roles["i"],
        kernel_output_feature=rhs_roles["o"],
        kernel_spatial=rhs_spatial,
        output_batch=out_roles["b"],
        output_feature=out_roles["f"],
        output_spatial=out_spatial,
    )


# ---------------------------------------------------------------------------------------------
# Instruction-level records
# ---------------------------------------------------------------------------------------------


def _list_attribute(
    instruction: AttributeOwner, key: str, required: bool = False
) -> tuple[int, ...]:
    if key not in instruction.attributes:
        if required:
            from ..errors import HloSemanticError

            raise HloSemanticError(
                f"{instruction.opcode} {instruction.name} lacks {key}=", instruction.span
            )
        return ()
    return instruction._typed(key, "parse_int_list")


def _int_attribute(instruction: AttributeOwner, key: str) -> int:
    value = instruction._typed(key, "parse_int")
    if value is None:
        from ..errors import HloSemanticError

        raise HloSemanticError(
            f"{instruction.opcode} {instruction.name} lacks {key}=", instruction.span
        )
    return value


def dot_dimension_numbers(instruction: AttributeOwner) -> DotDimensionNumbers:
    """From ``lhs_batch_dims``, ``rhs_batch_dims``, ``lhs_contracting_dims``,
    ``rhs_contracting_dims`` (each absent one is empty)."""
    return DotDimensionNumbers(
        lhs_batch=_list_attribute(instruction, "lhs_batch_dims"),
        rhs_batch=_list_attribute(instruction, "rhs_batch_dims"),
        lhs_contracting=_list_attribute(instruction, "lhs_contracting_dims"),
        rhs_contracting=_list_attribute(instruction, "rhs_contracting_dims"),
    )


def gather_dimension_numbers(instruction: AttributeOwner) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(
        offset_dims=_list_attribute(instruction, "offset_dims"),
        collapsed_slice_dims=_list_attribute(instruction, "collapsed_slice_dims"),
        start_index_map=_list_attribute(instruction, "start_index_map"),
        index_vector_dim=_int_attribute(instruction, "index_vector_dim"),
        operand_batching_dims=_list_attribute(instruction, "operand_batching_dims"),
        start_indices_batching_dims=_list_attribute(instruction, "start_indices_batching_dims"),
    )


def scatter_dimension_numbers(instruction: AttributeOwner) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        update_window_dims=_list_attribute(instruction, "update_window_dims"),
        inserted_window_dims=_list_attribute(instruction, "inserted_window_dims"),
        scatter_dims_to_operand_dims=_list_attribute(instruction, "scatter_dims_to_operand_dims"),
        index_vector_dim=_int_attribute(instruction, "index_vector_dim"),
        input_batching_dims=_list_attribute(instruction, "input_batching_dims"),
        scatter_indices_batching_dims=_list_attribute(instruction, "scatter_indices_batching_dims"),
    )
