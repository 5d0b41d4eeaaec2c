"""Which of XLA:GPU's emitters would generate a fusion's kernel, decided as XLA decides it.

The facts come from XLA's ``HloFusionAnalysis::GetEmitterFusionKind`` and
``reduction_utils.cc`` (``IsReductionFromOrToContiguousDimensions``,
``IsUnnestedReductionFasterThanElemental``, ``GetReductionKindAndContiguousComponents``);
the tiled-transpose test is a simplified form of ``GetDescriptionForTiledTransposeEmitter``
(the minor-most dimension moves and both minor sizes are at least 16).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import TYPE_CHECKING

from ..hlo.copy_insertion import base_copy_reason
from ..hlo.fusion import body_of, computation_outputs
from ..hlo.rules.basic import ELEMENTWISE
from ..hlo.rules.shape_ops import minor_to_major

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape

WARP_SIZE = 32
#: XLA's kMinDimensionToTransposeTiled
MIN_TILED_TRANSPOSE_DIMENSION = 16

#: ops a hero is looked through (XLA's FindNonTrivialHero walks unary elementwise ops and
#: bitcasts from a root to the op that decides the emitter)
_UNARY_PASS_THROUGH = frozenset(op for op in ELEMENTWISE if op not in ("copy",)) | {
    "bitcast",
    "reshape",
}


@dataclass(frozen=True)
class ReductionDimensions:
    """A reduction seen as ``[a, b, c]``: row (``a`` and ``c`` reduced, ``b`` kept) or column
    (``b`` reduced, ``a`` and ``c`` kept), XLA's ``ReductionDimensions``."""

    is_row_reduction: bool
    dimensions: tuple[int, int, int]

    @property
    def kind(self) -> str:
        if not self.is_row_reduction:
            return "column"
        reduced = self.dimensions[2]
        return "multi-row" if reduced < WARP_SIZE and WARP_SIZE % reduced == 0 else "row"


@dataclass(frozen=True)
class EmitterChoice:
    """The emitter of one fusion: ``kind`` is loop, reduction, transpose, concatenate,
    scatter, input-slices, triton, custom or library; ``detail`` refines it (row, column)."""

    kind: str
    hero: Instruction | None
    roots: tuple[Instruction, ...]
    detail: str = ""

    @property
    def label(self) -> str:
        return f"{self.kind} ({self.detail})" if self.detail else self.kind


def find_hero(root: Instruction) -> Instruction:
    """The op behind ``root`` that decides the emitter: ``root`` itself, or what a chain of
    unary elementwise ops and bitcasts above it starts from."""
    hero = root
    while hero.opcode in _UNARY_PASS_THROUGH and len(hero.operands) == 1:
        hero = hero.operands[0]
    if hero.opcode in ("reduce", "transpose", "concatenate", "scatter", "copy"):
        return hero
    return root


def _dims_are_consecutive(shape: Shape, dims: list[int]) -> bool:
    """Whether ``dims`` are adjacent in the physical (minor-to-major) order."""
    if not dims:
        return True
    positions = sorted(minor_to_major(shape).index(d) for d in dims)
    return positions[-1] - positions[0] + 1 == len(positions)


def _partition(shape: Shape, middle: list[int]) -> tuple[int, int, int]:
    """Sizes of the physically major dims before ``middle``, ``middle``, and the minor rest."""
    order = list(reversed(minor_to_major(shape)))  # major to minor
    positions = [order.index(d) for d in middle]
    first, last = min(positions), max(positions)
    sizes = [shape.dims[d] for d in order]
    return prod(sizes[:first]), prod(sizes[first : last + 1]), prod(sizes[last + 1 :])


def reduction_dimensions(reduce: Instruction) -> ReductionDimensions | None:
    """The row/column view of a reduce, or None when neither the reduced nor the kept
    dimensions are physically contiguous (then XLA does not use its reduction emitter)."""
    operand_shape = reduce.operands[0].shape
    reduced = sorted(reduce.dimensions or ())
    kept = [d for d in range(operand_shape.rank) if d not in reduced]
    if not (
        _dims_are_consecutive(operand_shape, reduced) or _dims_are_consecutive(operand_shape, kept)
    ):
        return None
    if not kept:
        return ReductionDimensions(True, (1, 1, operand_shape.num_elements()))
    if _dims_are_consecutive(operand_shape, kept):
        a, b, c = _partition(operand_shape, kept)
        if b == 1:
            return ReductionDimensions(True, (1, 1, a * c))
        if c == 1:
            return ReductionDimensions(False, (1, a, b))
        return ReductionDimensions(True, (a, b, c))
    a, b, c = _partition(operand_shape, reduced)
    if c == 1:
        return ReductionDimensions(True, (1, a, b))
    return ReductionDimensions(False, (a, b, c))


def reduction_emitter_is_faster(dims: ReductionDimensions) -> bool:
    """XLA's ``IsUnnestedReductionFasterThanElemental``."""
    if dims.is_row_reduction:
        return dims.dimensions[2] >= WARP_SIZE or WARP_SIZE % dims.dimensions[2] == 0
    major, minor = dims.dimensions[1], dims.dimensions[2]
    prefer_loop = (
        major < WARP_SIZE
        or (major < 2 * WARP_SIZE and minor < WARP_SIZE)
        or (major < 4 * WARP_SIZE and minor < 8)
        or (major < 8 * WARP_SIZE and minor < 3)
    )
    return not prefer_loop


def is_tiled_transpose(hero: Instruction) -> bool:
    """Whether XLA's shared-memory transpose emitter takes ``hero``: a ``transpose`` (current
    XLA tiles transposes only; layout normalization turns layout-changing copies into
    transposes before fusion) that moves the minor dimension, both minor sizes large enough."""
    if hero.opcode != "transpose" or not hero.operands:
        return False
    out, src = hero.shape, hero.operands[0].shape
    if out.rank < 2 or out.rank != src.rank:
        return False
    perm = hero.dimensions or tuple(range(out.rank))
    # output dimension i is operand dimension perm[i]
    out_minor = minor_to_major(out)[0]
    src_minor = minor_to_major(src)[0]
    if perm[out_minor] == src_minor:
        return False
    return (
        src.dims[src_minor] >= MIN_TILED_TRANSPOSE_DIMENSION
        and out.dims[out_minor] >= MIN_TILED_TRANSPOSE_DIMENSION
    )


def _in_place_update(root: Instruction) -> bool:
    """A dynamic-update-slice root (possibly under bitcasts) whose base is a parameter: XLA
    emits it in place (``CanEmitFusedDynamicUpdateSliceInPlaceForGpu``): copy insertion makes
    the output share that parameter's buffer, copying it first where it cannot be written."""
    while root.opcode == "bitcast" and root.operands:
        root = root.operands[0]
    if root.opcode != "dynamic-update-slice":
        return False
    base = root.operands[0]
    while base.opcode == "bitcast" and base.operands:
        base = base.operands[0]
    return base.opcode == "parameter"


def choose_emitter(fusion: Instruction) -> EmitterChoice:
    """The emitter XLA:GPU would use for ``fusion`` (a ``fusion`` instruction)."""
    roots = tuple(computation_outputs(body_of(fusion)))
    kind = (fusion.fusion_kind or "").lower()
    if kind in ("kcustom", "custom"):
        config = fusion.attributes.get("backend_config", "")
        if "triton" in config:
            return EmitterChoice("triton", None, roots, detail="block-level, Triton")
        return EmitterChoice("custom", None, roots)
    heroes = [find_hero(r) for r in roots]
    for hero in heroes:
        if hero.opcode == "reduce":
            dims = reduction_dimensions(hero)
            if dims is not None and reduction_emitter_is_faster(dims):
                return EmitterChoice("reduction", hero, roots, dims.kind)
    for hero in heroes:
        if is_tiled_transpose(hero):
            return EmitterChoice("transpose", hero, roots)
    if roots and all(_in_place_update(r) for r in roots):
        copied = any(base_copy_reason(fusion, r) for r in roots)
        detail = "in place, on a copy of the base" if copied else "in place"
        return EmitterChoice("dynamic-update-slice", roots[0], roots, detail=detail)
    if len(roots) == 1 and heroes[0].opcode == "scatter":
        return EmitterChoice("scatter", heroes[0], roots)
    if (
        len(roots) == 1
        and heroes[0].opcode == "concatenate"
        and all(o.shape.rank == heroes[0].shape.rank for o in heroes[0].operands)
    ):
        return EmitterChoice("concatenate", heroes[0], roots)
    if kind in ("kinput", "input") and roots and all(r.opcode == "slice" for r in roots):
        return EmitterChoice("input-slices", roots[0], roots)
    return EmitterChoice("loop", roots[0] if roots else None, roots)


_is_tiled_transpose = is_tiled_transpose  # its name before it was shared
