"""What every emitter model offers: its launch configuration and its thread-id maps.

XLA's emitters share one interface too (``KernelFusionInterface``: ``launch_dimensions()``,
``ComputeThreadIdToOutputIndexing(root)``, ``ComputeThreadIdToInputIndexing(root, operand)``).
Each emitter module of this package (``loops``, ``reductions``, ``transposes``, ``scatters``)
implements ``Emitter`` for the emitter kinds it models; ``emitters.emitter_for`` is the one
place that picks the implementation for a fusion's ``EmitterChoice``. The launch
arithmetic the emitters share lives below them (``launch_config``, ``grid``,
``thread_reads``), so no emitter module imports another or the modules that dispatch to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .launch_config import NO_OVERRIDES, Overrides

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from ..maps.indexing_map import IndexingMap
    from .devices import DeviceProfile
    from .emitter_choice import EmitterChoice
    from .launch_config import LaunchConfig
    from .thread_reads import ThreadMaps


@runtime_checkable
class Emitter(Protocol):
    """One of XLA:GPU's emitters as hloidx models it."""

    #: the ``EmitterChoice.kind`` values this model handles
    kinds: tuple[str, ...]

    def launch(
        self,
        fusion: Instruction,
        choice: EmitterChoice,
        device: DeviceProfile,
        overrides: Overrides = NO_OVERRIDES,
    ) -> LaunchConfig | None:
        """The launch configuration of ``fusion``, or None where the emitter's parameters
        are not modelled for this fusion (``why_not`` says why)."""
        ...

    def why_not(self, fusion: Instruction, choice: EmitterChoice, device: DeviceProfile) -> str:
        """Why ``launch`` gives None for ``fusion`` ("" when it does not, or no reason)."""
        ...

    def fill_thread_maps(self, result: ThreadMaps) -> None:
        """Fill in ``result.outputs``, ``result.operands`` and ``result.notes`` (the maps from
        thread ids to each fusion output and operand) under ``result.launch`` (not None)."""
        ...

    def hero_input_map(
        self, fusion: Instruction, launch: LaunchConfig, hero: Instruction, operand: int
    ) -> IndexingMap | None:
        """Thread ids -> the element of ``hero``'s operand ``operand`` a thread reads (XLA's
        ``ComputeThreadIdToInputIndexing``), unsimplified; None where not modelled."""
        ...

    def root_output_map(
        self, fusion: Instruction, launch: LaunchConfig, root: Instruction
    ) -> IndexingMap | None:
        """Thread ids -> the element of fusion output ``root`` a thread writes (XLA's
        ``ComputeThreadIdToOutputIndexing``), unsimplified; None where not modelled."""
        ...
