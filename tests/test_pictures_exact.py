"""Pictures that are what the maps say: exact counts where the maps separate (no sampled
patchwork), a sampled picture says so above and across its cells, and a tuple operand says
why it has no picture (issue 44)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from hloidx import parse_map
from hloidx.cli.main import cli
from hloidx.hlo.analysis import analyze
from hloidx.hlo.syntax import parse_hlo
from hloidx.pictures import operand_picture
from hloidx.pictures.counts import read_counts
from hloidx.pictures.svg import svg
from hloidx.render.pictures import picture_lines

BROADCAST = """HloModule b
ENTRY e {
  p = f32[16,32] parameter(0)
  ROOT b = f32[4000,16,32] broadcast(p), dimensions={1,2}
}
"""

RESHAPE = """HloModule r
ENTRY e {
  p = f32[64,64] parameter(0)
  ROOT r = f32[32,128] reshape(p)
}
"""

TUPLE = """HloModule t
ENTRY e {
  a = f32[4] parameter(0)
  b = s32[2,3] parameter(1)
  t = (f32[4], s32[2,3]) tuple(a, b)
  g = s32[2,3] get-tuple-element(t), index=1
  ROOT n = s32[2,3] negate(g)
}
"""


def test_a_broadcast_operand_is_drawn_exactly(tmp_path) -> None:
    # 4,000 x 16 x 32 = 2,048,000 output points, over the enumeration budget; each of the
    # operand's elements is read once per index of the new dimension: 4,000 times, everywhere.
    path = tmp_path / "b.hlo"
    path.write_text(BROADCAST)
    run = CliRunner().invoke(cli, ["show", str(path), "--instruction", "b", "--format", "json"])
    assert run.exit_code == 0, run.output
    doc = json.loads(run.output)
    assert doc["kind"] == "exact"
    assert {cell["count"] for row in doc["cells"] for cell in row} == {4000.0}


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        # a dot's lhs: (i, j) reads lhs[i, k] for every k
        ("(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 5], d1 in [0, 6], s0 in [0, 4]", (6, 5)),
        # a strided, padded window with a constraint tying a range variable to a dimension
        (
            "(d0, d1)[s0, s1] -> (d0 * 2 + s0 - 1, d1), domain: d0 in [0, 4], d1 in [0, 3], "
            "s0 in [0, 2], s1 in [0, 3], d0 * 2 + s0 - 1 in [0, 8]",
            (9, 4),
        ),
        # a constant index and a variable in no result
        ("(d0, d1) -> (2, d1), domain: d0 in [0, 7], d1 in [0, 5]", (4, 6)),
    ],
)
def test_separated_counts_equal_enumerated_counts(text: str, shape: tuple[int, ...]) -> None:
    m = parse_map(text)
    enumerated = read_counts([m], shape, budget=10**6)
    separated = read_counts([m], shape, budget=16)  # each group is small, the box is not
    assert enumerated.kind == "exact"
    assert separated.kind == "exact"
    np.testing.assert_array_equal(separated.counts, enumerated.counts)


def _reshape_picture():
    analysis = analyze(parse_hlo(RESHAPE, "r.hlo"), verify=False)
    ins = next(i for i in analysis.instructions if i.name == "r")
    # the linear index ties both dimensions together: one group of 4,096 points, over the
    # budget of 1,000, so only a sample can count it
    return operand_picture(ins, 0, budget=1000)


def test_a_sampled_picture_says_so_above_its_cells() -> None:
    pic, counts = _reshape_picture()
    assert counts.kind == "sampled"
    lines = [line.plain for line in picture_lines("r operand 0", pic)]
    assert lines[1].strip().startswith("SAMPLED")
    assert 'class="sampled-mark"' in svg(pic, "r operand 0")


def test_an_exact_picture_has_no_sampled_mark(tmp_path) -> None:
    analysis = analyze(parse_hlo(RESHAPE, "r.hlo"), verify=False)
    ins = next(i for i in analysis.instructions if i.name == "r")
    pic, counts = operand_picture(ins, 0)
    assert counts.kind == "exact"
    assert "sampled-mark" not in svg(pic)
    assert not any("SAMPLED" in line.plain for line in picture_lines("r", pic))


def test_a_tuple_operand_says_why_nothing_is_drawn(tmp_path) -> None:
    path = tmp_path / "t.hlo"
    path.write_text(TUPLE)
    run = CliRunner().invoke(cli, ["show", str(path), "--instruction", "g"])
    assert run.exit_code == 0, run.output
    text = " ".join(run.output.split())
    assert "is a tuple of 2 elements, not an array" in text
    run = CliRunner().invoke(cli, ["show", str(path), "--instruction", "g", "--format", "json"])
    assert "tuple of 2 elements" in json.loads(run.output)["reason"]
