"""Every printed map starts from the value it claims to start from.

An output-to-input map's dimensions are the indices of the instruction's output (of one of its
elements for a tuple); an input-to-output map's are the operand's. A domain narrower than that
shape is legitimate only where the output elements outside it read some other operand (pad,
concatenate): over the operands, the domains of an array-shaped op cover its output. A map
that went through the wrong element of a tuple fails one of these (issue 19: an all-gather-done
of 64 rows answered with a domain of 8).

Checked over the corpus and the GPU pairs.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

import paths
import pytest

import hloidx
from hloidx.hlo.chains import chain_maps
from hloidx.hlo.ir import Shape
from hloidx.maps.indexing_map import IndexingMap

PAIRS = Path(__file__).parent / "data" / "gpu" / "pairs"
FILES = sorted(paths.CORPUS.glob("*.hlo")) + sorted(PAIRS.glob("*.hlo"))


def _box(m: IndexingMap) -> list[tuple[int, int]]:
    return [(v.bounds.lower, v.bounds.upper) for v in m.dim_vars]


def _within(m: IndexingMap, dims: tuple[int, ...]) -> bool:
    box = _box(m)
    return len(box) == len(dims) and all(
        lo >= 0 and hi <= n - 1 for (lo, hi), n in zip(box, dims, strict=False)
    )


def _leaves(shape: Shape) -> list[tuple[int, ...]]:
    if shape.is_tuple:
        return [leaf for s in shape.tuple_shapes or () for leaf in _leaves(s)]
    return [shape.dims] if shape.is_array else []


def covers(boxes: list[list[tuple[int, int]]], dims: tuple[int, ...]) -> bool:
    """Whether the union of ``boxes`` is the whole ``dims``-shaped box (exact, by cutting every
    axis at the boxes' edges: one representative point per cell of the cut grid)."""
    cuts = []
    for axis, n in enumerate(dims):
        edges = {0, n}
        for box in boxes:
            edges |= {box[axis][0], box[axis][1] + 1}
        cuts.append(sorted(e for e in edges if 0 <= e < n))
    for point in product(*cuts):
        if not any(
            all(lo <= x <= hi for x, (lo, hi) in zip(point, box, strict=False)) for box in boxes
        ):
            return False
    return True


def domain_problems(path: Path) -> list[str]:
    module = hloidx.parse_hlo(path.read_text())
    analysis = hloidx.analyze(module, verify=False)
    problems = []
    for result in analysis.instructions:
        instr = result.instruction
        leaves = _leaves(instr.shape)
        boxes = []
        for operand in result.operands:
            source = instr.operands[operand.index].shape
            for m in operand.output_to_input:
                if m.is_undefined or m.is_known_empty:
                    continue
                if not any(_within(m, leaf) for leaf in leaves):
                    problems.append(f"{result.name} o2i of operand {operand.index}: {m}")
                boxes.append(_box(m))
            for m in operand.input_to_output:
                if m.is_undefined or m.is_known_empty or not source.is_array:
                    continue
                if not _within(m, source.dims):
                    problems.append(f"{result.name} i2o of operand {operand.index}: {m}")
        array_op = instr.shape.is_array and instr.opcode not in ("fusion", "call")
        if array_op and boxes and instr.shape.dims and not covers(boxes, instr.shape.dims):
            problems.append(f"{result.name}: the operands' domains leave output elements out")
    return problems


def test_the_coverage_check_can_fail() -> None:
    assert covers([[(0, 3), (0, 2)], [(4, 7), (0, 2)]], (8, 3))
    assert not covers([[(0, 3), (0, 2)], [(5, 7), (0, 2)]], (8, 3))
    assert not covers([[(0, 7), (0, 1)]], (8, 3))


def test_a_wrong_element_would_be_caught() -> None:
    # the map of element 0 of an all-gather-start (8 rows) printed for its 64-row result
    m = IndexingMap.identity((8, 16))
    assert not covers([_box(m)], (64, 16))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_map_starts_from_the_shape_it_maps_from(path: Path) -> None:
    assert domain_problems(path) == []


ALL_GATHER = """HloModule m, replica_count=8
ENTRY e {
  arg0 = f32[8,16] parameter(0)
  ags = (f32[8,16], f32[64,16]) all-gather-start(arg0), dimensions={0}, replica_groups={{0,1,2,3,4,5,6,7}}
  ROOT r = f32[64,16] all-gather-done(ags)
}
"""


def test_the_issue_example_maps_every_row_of_the_result() -> None:
    _, _, reached = chain_maps(hloidx.parse_hlo(ALL_GATHER), "r", "arg0")
    assert [_box(t.map) for t in reached.maps] == [[(0, 63), (0, 15)]]
