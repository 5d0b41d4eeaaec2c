"""Thread-id maps as every emitter builds them: from ``(th_x, th_y, th_z, bl_x, bl_y,
bl_z)[chunk_id, unroll_id]`` to an element, and the reads of a fusion's operands through them.

The thread → output map is XLA's default work-item map (``GetDefaultWorkItemIndexingMap``):
the thread's linear id over the grid, times the unroll factor, plus the chunk and unroll
offsets, delinearized in the indexing shape's physical (minor-to-major) order. Composed with
the fusion's output-to-input maps it gives what each thread reads. ``ThreadMaps`` holds what
one emitter fills in for one fusion (``emitter_interface.Emitter.fill_thread_maps``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING

from ..maps.expr import Const, add, dim, floordiv, mod, mul, range_var
from ..maps.indexing_map import IndexingMap, MapState, Variable, compose
from ..maps.interval import Interval
from ..maps.map_simplify import SimplifyOptions, simplify
from .grid import THREAD_DIM_NAMES

if TYPE_CHECKING:
    from ..hlo.ir import Instruction
    from ..hlo.op_rules import OperandIndexing
    from .emitter_choice import EmitterChoice
    from .launch_config import LaunchConfig

SYMBOL_NAMES = ("chunk_id", "unroll_id")
#: XLA folds single-valued thread dimensions (th_y in [0, 0]) out of thread-id maps
THREAD_SIMPLIFY = SimplifyOptions(preserve_point_dims=False)


def simplify_thread_map(m: IndexingMap) -> IndexingMap:
    return simplify(m, options=THREAD_SIMPLIFY)


def linear_thread_index(launch: LaunchConfig):
    """The first element a thread handles, as an expression of the six thread dimensions and
    the two symbols (chunk_id, unroll_id)."""
    threads, blocks = launch.threads_per_block, launch.blocks
    totals = [t * b for t, b in zip(threads, blocks, strict=True)]
    linear = Const(0)
    stride = 1
    for axis in range(3):
        coordinate = add(dim(axis), mul(dim(3 + axis), threads[axis]))
        linear = add(linear, mul(coordinate, stride))
        stride *= totals[axis]
    u = launch.unroll_factor
    return add(mul(linear, u), mul(range_var(0), u * prod(totals)), range_var(1))


def thread_variables(
    launch: LaunchConfig, num_elements: int
) -> tuple[list[Variable], list[Variable]]:
    sizes = list(launch.threads_per_block) + list(launch.blocks)
    dims = [Variable(Interval(0, s - 1), n) for s, n in zip(sizes, THREAD_DIM_NAMES, strict=True)]
    per_chunk = launch.total_threads * launch.unroll_factor
    chunks = max(1, -(-num_elements // per_chunk))
    symbols = [
        Variable(Interval(0, chunks - 1), SYMBOL_NAMES[0]),
        Variable(Interval(0, launch.unroll_factor - 1), SYMBOL_NAMES[1]),
    ]
    return dims, symbols


def default_thread_map(launch: LaunchConfig) -> IndexingMap:
    """Thread ids → element of the indexing shape (XLA's default work-item map), simplified."""
    return simplify_thread_map(raw_thread_map(launch))


def raw_thread_map(launch: LaunchConfig) -> IndexingMap:
    """XLA's default work-item map as built, before simplification."""
    shape = launch.indexing_shape
    n = prod(shape)
    linear = linear_thread_index(launch)
    results: list = [Const(0)] * len(shape)
    divisor = 1
    for d in launch.minor_to_major:
        results[d] = mod(floordiv(linear, divisor), shape[d])
        divisor *= shape[d]
    dims, symbols = thread_variables(launch, n)
    raw = IndexingMap(
        tuple(results), tuple(dims), tuple(symbols), (), ((linear, Interval(0, n - 1)),)
    )
    return simplify_thread_map(raw)


@dataclass
class ThreadRead:
    """The maps from thread ids to one operand's elements (through one fusion output)."""

    output: int
    maps: list[IndexingMap] = field(default_factory=list)
    exact: bool = True
    notes: list[str] = field(default_factory=list)
    #: each map before simplification (the composition as built), for verification
    raw: list[IndexingMap] = field(default_factory=list)
    #: the fusion's map each one was composed from (``--names roles`` names its symbols)
    sources: list[IndexingMap] = field(default_factory=list)

    @property
    def undefined(self) -> bool:
        return any(m.is_undefined for m in self.maps)


@dataclass
class ThreadMaps:
    """Everything ``hloidx threads`` shows for one fusion."""

    fusion: Instruction
    choice: EmitterChoice
    launch: LaunchConfig | None
    #: per fusion output: the thread → output element map (None: the emitter has none)
    outputs: list[IndexingMap | None] = field(default_factory=list)
    #: per fusion operand: the reads through each output
    operands: list[list[ThreadRead]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def compose_cell(thread_map: IndexingMap, cell: OperandIndexing, output: int) -> ThreadRead:
    read = ThreadRead(output, exact=cell.exact, notes=list(cell.notes))
    for i, rv in enumerate(cell.runtime_vars):
        read.notes.append(f"rt{i} is {rv.producer_text()} read at {rv.map} (of the output index)")
    seen: set[IndexingMap] = set()
    for m in cell.maps:
        if m.is_undefined:
            read.maps = [IndexingMap.undefined()]
            return read
        if m.state is MapState.KNOWN_EMPTY:
            continue
        built = compose(thread_map, m)
        composed = simplify_thread_map(built)
        if composed.state is MapState.KNOWN_EMPTY or composed in seen:
            continue
        seen.add(composed)
        read.maps.append(composed)
        read.raw.append(built)
        read.sources.append(m)
    return read


def add_reads(
    result: ThreadMaps, thread_map: IndexingMap, cells: list[OperandIndexing], output: int
) -> None:
    """Every fusion operand's reads through ``thread_map`` and the maps in ``cells``."""
    for k, reads in enumerate(result.operands):
        read = compose_cell(thread_map, cells[k], output)
        if read.maps or read.undefined:
            reads.append(read)


def every_thread(dims: tuple[Variable, ...], symbols: tuple[Variable, ...] = ()) -> IndexingMap:
    """A scalar (an init value, a start index) read by every thread of a grid."""
    return IndexingMap((), dims, symbols)


def add_undefined(result: ThreadMaps, cells: list[OperandIndexing], note: str) -> None:
    """An UNDEFINED read for every fusion operand that ``cells`` reach (runtime positions)."""
    for k, reads in enumerate(result.operands):
        if any(not m.is_known_empty for m in cells[k].maps):
            reads.append(ThreadRead(0, [IndexingMap.undefined()], False, [note]))


def add_not_modelled(result: ThreadMaps) -> None:
    """Unknown, not "never read": every operand of a fusion whose maps are not modelled is
    UNDEFINED."""
    for reads in result.operands:
        reads.append(ThreadRead(0, [IndexingMap.undefined()], False, ["not modelled"]))
