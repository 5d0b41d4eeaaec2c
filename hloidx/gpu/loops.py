"""XLA:GPU's emitters that walk one shape with the default work-item map: the loop emitter,
the concatenate emitter, the input-slices emitter and the in-place dynamic-update-slice
emitter (XLA's ``LoopFusion``, ``ConcatenateFusion``, ``InputSlicesFusion``,
``InPlaceDynamicUpdateSliceFusion``): their launch configurations and thread-id maps.
"""

from __future__ import annotations

from math import gcd
from typing import TYPE_CHECKING

from ..errors import HloidxError
from ..hlo.copy_insertion import base_copy_reason
from ..hlo.fusion import body_of, output_to_input, parameter_cells
from ..hlo.op_rules import input_to_output as op_input_to_output
from ..hlo.op_rules import output_to_input as op_output_to_input
from ..hlo.rules.shape_ops import minor_to_major
from ..maps.expr import add
from ..maps.indexing_map import IndexingMap, compose
from .grid import within
from .launch_config import (
    NO_OVERRIDES,
    LaunchConfig,
    Overrides,
    apply_overrides,
    launch_dimensions,
    loop_unroll_factor,
    smallest_output_bits,
)
from .thread_reads import (
    ThreadRead,
    add_reads,
    add_undefined,
    compose_cell,
    default_thread_map,
    every_thread,
    simplify_thread_map,
)

if TYPE_CHECKING:
    from ..hlo.ir import Instruction, Shape
    from .devices import DeviceProfile
    from .emitter_choice import EmitterChoice
    from .thread_reads import ThreadMaps


def _walk(
    fusion: Instruction, shape: Shape, unroll: int, device: DeviceProfile, overrides: Overrides
) -> LaunchConfig:
    """The launch of threads that walk ``shape`` (XLA's ``CalculateLaunchDimensions``)."""
    unroll, set_by_hand = apply_overrides(unroll, overrides, device)
    threads, blocks = launch_dimensions(
        shape.num_elements(), unroll, device, overrides.threads_per_block
    )
    return LaunchConfig(
        threads,
        blocks,
        unroll,
        unroll,  # the loop over unroll_id reads consecutive elements: one vector load
        shape.dims,
        minor_to_major(shape),
        tuple(set_by_hand),
    )


def _single_map(instr: Instruction, operand: int) -> IndexingMap | None:
    """The one output-to-input map of ``instr``'s operand ``operand`` (None if not one)."""
    try:
        cell = op_output_to_input(instr)[0][operand]
    except (HloidxError, IndexError):
        return None
    if len(cell.maps) != 1 or cell.runtime_vars or cell.maps[0].is_undefined:
        return None
    return cell.maps[0]


class LoopEmitter:
    """XLA's ``LoopFusion``: every thread handles ``unroll`` consecutive output elements."""

    kinds = ("loop",)

    def launch(
        self,
        fusion: Instruction,
        choice: EmitterChoice,
        device: DeviceProfile,
        overrides: Overrides = NO_OVERRIDES,
    ) -> LaunchConfig | None:
        shape = (choice.roots[0] if choice.roots else fusion).shape.leaves()[0]
        return _walk(fusion, shape, loop_unroll_factor(fusion, shape, device), device, overrides)

    def why_not(self, fusion: Instruction, choice: EmitterChoice, device: DeviceProfile) -> str:
        return ""

    def fill_thread_maps(self, result: ThreadMaps) -> None:
        launch, fusion = result.launch, result.fusion
        assert launch is not None
        thread_map = default_thread_map(launch)
        table = output_to_input(fusion)
        for out_id, root in enumerate(result.choice.roots):
            leaf = root.shape.leaves()[0]
            if tuple(leaf.dims) != tuple(launch.indexing_shape):
                result.outputs.append(None)
                result.notes.append(
                    f"output {out_id} ({root.name}) has another shape than the indexing shape: "
                    "its thread maps are not modelled"
                )
                for reads in result.operands:
                    reads.append(
                        ThreadRead(out_id, [IndexingMap.undefined()], False, ["not modelled"])
                    )
                continue
            result.outputs.append(thread_map)
            for k, reads in enumerate(result.operands):
                reads.append(compose_cell(thread_map, table[out_id][k], out_id))

    def root_output_map(
        self, fusion: Instruction, launch: LaunchConfig, root: Instruction
    ) -> IndexingMap | None:
        if tuple(root.shape.leaves()[0].dims) != tuple(launch.indexing_shape):
            return None
        return default_thread_map(launch)

    def hero_input_map(
        self, fusion: Instruction, launch: LaunchConfig, hero: Instruction, operand: int
    ) -> IndexingMap | None:
        output = self.root_output_map(fusion, launch, hero)
        to_operand = _single_map(hero, operand)
        if output is None or to_operand is None:
            return None
        return compose(output, to_operand)


class ConcatenateEmitter:
    """XLA's ``ConcatenateFusion``: threads walk the largest operand's shape, once for each
    operand."""

    kinds = ("concatenate",)

    def launch(
        self,
        fusion: Instruction,
        choice: EmitterChoice,
        device: DeviceProfile,
        overrides: Overrides = NO_OVERRIDES,
    ) -> LaunchConfig | None:
        hero = choice.hero
        if hero is None:
            return None
        # the largest operand (XLA's GetLargestConcatOperandShape)
        shape = max(hero.operands, key=lambda o: o.shape.num_elements()).shape
        unroll = loop_unroll_factor(fusion, shape, device)
        axis = (hero.dimensions or (0,))[0]
        for operand in hero.operands:  # every operand must split into whole vectors
            unroll = gcd(unroll, operand.shape.dims[axis])
        return _walk(fusion, shape, unroll, device, overrides)

    def why_not(self, fusion: Instruction, choice: EmitterChoice, device: DeviceProfile) -> str:
        return ""

    def _part_maps(self, launch: LaunchConfig, hero: Instruction) -> list[IndexingMap]:
        # every thread walks the largest operand's shape; it handles element i of operand
        # j only where i is inside operand j (the emitter's bounds check)
        thread_map = default_thread_map(launch)
        return [simplify_thread_map(within(thread_map, part.shape.dims)) for part in hero.operands]

    def fill_thread_maps(self, result: ThreadMaps) -> None:
        launch, hero = result.launch, result.choice.hero
        assert launch is not None
        assert hero is not None
        body = body_of(result.fusion)
        axis = (hero.dimensions or (0,))[0]
        offset = 0
        per_output: list[IndexingMap] = []
        for j, (part, part_map) in enumerate(
            zip(hero.operands, self._part_maps(launch, hero), strict=True)
        ):
            shifted = list(part_map.results)
            shifted[axis] = add(shifted[axis], offset)
            per_output.append(part_map.with_results(shifted))
            offset += part.shape.dims[axis]
            cells = parameter_cells(part, body, len(result.fusion.operands))
            add_reads(result, part_map, cells, j)
        result.outputs = list(per_output)
        result.notes.append(
            "the concatenate emitter walks its largest operand's shape once per operand; "
            "outputs are listed per concatenate operand"
        )

    def root_output_map(
        self, fusion: Instruction, launch: LaunchConfig, root: Instruction
    ) -> IndexingMap | None:
        return None  # one map per concatenate operand, not one per root

    def hero_input_map(
        self, fusion: Instruction, launch: LaunchConfig, hero: Instruction, operand: int
    ) -> IndexingMap | None:
        if hero.opcode != "concatenate" or not 0 <= operand < len(hero.operands):
            return None
        return self._part_maps(launch, hero)[operand]


def _update_of(root: Instruction) -> Instruction:
    dus = root
    while dus.opcode == "bitcast":
        dus = dus.operands[0]
    return dus


class InPlaceUpdateEmitter:
    """XLA's ``InPlaceDynamicUpdateSliceFusion``: threads walk the update, unroll 1, and write
    it at the start indices."""

    kinds = ("dynamic-update-slice",)

    def launch(
        self,
        fusion: Instruction,
        choice: EmitterChoice,
        device: DeviceProfile,
        overrides: Overrides = NO_OVERRIDES,
    ) -> LaunchConfig | None:
        if choice.hero is None:
            return None
        return _walk(fusion, _update_of(choice.hero).operands[1].shape, 1, device, overrides)

    def why_not(self, fusion: Instruction, choice: EmitterChoice, device: DeviceProfile) -> str:
        return ""

    def fill_thread_maps(self, result: ThreadMaps) -> None:
        launch, fusion = result.launch, result.fusion
        assert launch is not None
        thread_map = default_thread_map(launch)
        body, n = body_of(fusion), len(fusion.operands)
        scalar = every_thread(thread_map.dim_vars, thread_map.range_vars)
        for root in result.choice.roots:
            dus = _update_of(root)
            result.outputs.append(None)
            base_cells = parameter_cells(dus.operands[0], body, n)
            sources = [(dus.operands[1], thread_map)] + [(o, scalar) for o in dus.operands[2:]]
            for operand, m in sources:
                add_reads(result, m, parameter_cells(operand, body, n), 0)
            copied = base_copy_reason(fusion, root)
            note = "the base is updated in place and not read" + (
                f" (XLA copies it first: {copied})" if copied else ""
            )
            add_undefined(result, base_cells, note)
        result.notes.append(
            "XLA's in-place dynamic-update-slice emitter (copy insertion and buffer assignment "
            "make the output share the base's buffer, copying the base first where it cannot "
            "be written): threads walk the update and write it at the start indices, so where "
            "they write is UNDEFINED here"
        )

    def root_output_map(
        self, fusion: Instruction, launch: LaunchConfig, root: Instruction
    ) -> IndexingMap | None:
        return None  # where a thread writes depends on the start indices

    def hero_input_map(
        self, fusion: Instruction, launch: LaunchConfig, hero: Instruction, operand: int
    ) -> IndexingMap | None:
        if hero.opcode != "dynamic-update-slice" or operand != 1:
            return None
        if tuple(hero.operands[1].shape.dims) != tuple(launch.indexing_shape):
            return None
        return default_thread_map(launch)


class InputSlicesEmitter:
    """XLA's ``InputSlicesFusion``: a loop over the slices' common input, unrolled only to
    fill a byte with sub-byte outputs."""

    kinds = ("input-slices",)

    def launch(
        self,
        fusion: Instruction,
        choice: EmitterChoice,
        device: DeviceProfile,
        overrides: Overrides = NO_OVERRIDES,
    ) -> LaunchConfig | None:
        if not choice.roots:
            return None
        shape = choice.roots[0].operands[0].shape
        return _walk(fusion, shape, -(-8 // smallest_output_bits(fusion)), device, overrides)

    def why_not(self, fusion: Instruction, choice: EmitterChoice, device: DeviceProfile) -> str:
        return ""

    def _slice_map(self, thread_map: IndexingMap, root: Instruction) -> IndexingMap:
        # a thread writes element i of slice j only where i lies inside slice j
        slice_map = op_input_to_output(root)[0][0].maps[0]
        return simplify_thread_map(compose(thread_map, slice_map))

    def fill_thread_maps(self, result: ThreadMaps) -> None:
        launch, fusion = result.launch, result.fusion
        assert launch is not None
        thread_map = default_thread_map(launch)
        body, n = body_of(fusion), len(fusion.operands)
        inputs: list[Instruction] = []
        for out_id, root in enumerate(result.choice.roots):
            result.outputs.append(self._slice_map(thread_map, root))
            if root.operands[0] not in inputs:
                inputs.append(root.operands[0])
                cells = parameter_cells(root.operands[0], body, n)
                add_reads(result, thread_map, cells, out_id)
        result.notes.append(
            "XLA's input-slices emitter walks the slices' common input once; each thread writes "
            "its element to every slice that contains it"
        )

    def root_output_map(
        self, fusion: Instruction, launch: LaunchConfig, root: Instruction
    ) -> IndexingMap | None:
        if root.opcode != "slice":
            return None
        return self._slice_map(default_thread_map(launch), root)

    def hero_input_map(
        self, fusion: Instruction, launch: LaunchConfig, hero: Instruction, operand: int
    ) -> IndexingMap | None:
        if hero.opcode != "slice" or operand != 0:
            return None
        return default_thread_map(launch)
