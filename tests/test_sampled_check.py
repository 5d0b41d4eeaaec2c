"""The sampled oracle check on the seed modules too large for the whole-tensor oracle: it agrees
with the analysis's maps, and it catches maps made wrong on purpose."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import paths
import pytest

from hloidx import parse_hlo
from hloidx.check import sampled_check
from hloidx.check.point_oracle import PointOracle
from hloidx.check.sampled_check import sample_points, sampled_oracle_check
from hloidx.hlo.analysis import analyze
from hloidx.maps.printer import format_map
from hloidx.maps.syntax import parse_map

LARGE = ["dot", "fusion_add_transpose", "fusion_softmax", "gather", "reduce_window", "transpose"]
#: fewer points than check --update's 64 keep the tests fast; corners are always included
POINTS = 24


@cache
def _analysed(sample: str):
    module = parse_hlo((paths.SAMPLES / "seed000" / f"{sample}.hlo").read_text())
    (ins,) = [i for i in analyze(module).instructions if i.instruction is module.entry.root]
    return ins, PointOracle(ins.instruction)


@pytest.mark.parametrize("sample", LARGE)
def test_sampled_check_agrees_on_large_seed_modules(sample: str) -> None:
    ins, oracle = _analysed(sample)
    outcome = sampled_oracle_check(ins.instruction, ins, points=POINTS, oracle=oracle)
    assert outcome.status == "agrees", outcome
    assert outcome.points == POINTS
    assert outcome.checked_points == POINTS


def _mutated(ins, operand: int, direction: str, old: str, new: str | None):
    """``ins`` with the maps of one operand changed: ``old`` replaced by ``new`` in the printed
    map that contains it, or that map dropped when ``new`` is None."""
    ops = []
    hits = 0
    for op in ins.operands:
        if op.index != operand:
            ops.append(op)
            continue
        maps = []
        for m in getattr(op, direction):
            text = format_map(m)
            if old in text:
                hits += 1
                if new is not None:
                    maps.append(parse_map(text.replace(old, new)))
            else:
                maps.append(m)
        ops.append(replace(op, **{direction: maps}))
    assert hits == 1, f"{old!r} is not in exactly one map"
    return replace(ins, operands=ops)


O2I, I2O = "output_to_input", "input_to_output"

MUTATIONS = [
    # (sample, operand, direction, old, new or None to drop the map, what it breaks)
    ("transpose", 0, O2I, "-> (d0, d3, d1, d2)", "-> (d0, d3, d2, d1)", "swap two results"),
    ("transpose", 0, I2O, "-> (d0, d2, d3, d1)", "-> (d0, d3, d2, d1)", "swap two results"),
    ("dot", 1, O2I, "-> (d0, s0, d2)", "-> (d0, s0, d2 + 1)", "change an offset"),
    ("dot", 0, O2I, "s0 in [0, 255]", "s0 in [0, 256]", "widen a range (exact)"),
    ("dot", 1, I2O, "s0 in [0, 127]", "s0 in [0, 126]", "narrow a range"),
    ("reduce_window", 0, O2I, "s0 in [0, 511]", "s0 in [0, 510]", "narrow a range"),
    ("reduce_window", 0, I2O, "-> (d0, -s0 + d1)", "-> (d0, -s0 + d1 + 1)", "change an offset"),
    ("fusion_add_transpose", 0, O2I, "-> (d1, d0)", None, "drop a map"),
    ("fusion_add_transpose", 0, I2O, "-> (d1, d0)", None, "drop a map"),
    ("fusion_softmax", 0, O2I, "[s0] -> (d0, d1, s0)", None, "drop the row map"),
    ("fusion_softmax", 0, I2O, "-> (d0, d1, d2),", "-> (d0, d2, d1),", "swap two results"),
    ("gather", 0, O2I, "-> (d1 + rt0, d2 + rt1, d3)", "-> (d1 + rt1, d2 + rt0, d3)", "swap rts"),
    ("gather", 0, I2O, "-> (s0, -rt0 + d0,", "-> (s0, -rt0 + d0 + 1,", "change an offset"),
    ("gather", 1, O2I, "s0 in [0, 1]", "s0 in [0, 2]", "widen a range (exact)"),
]


@pytest.mark.parametrize(
    ("sample", "operand", "direction", "old", "new", "what"),
    MUTATIONS,
    ids=[f"{m[0]}-{m[2][:1]}{m[1]}-{m[5].replace(' ', '_')}" for m in MUTATIONS],
)
def test_sampled_check_catches_wrong_maps(sample, operand, direction, old, new, what) -> None:
    ins, oracle = _analysed(sample)
    wrong = _mutated(ins, operand, direction, old, new)
    outcome = sampled_oracle_check(ins.instruction, wrong, points=POINTS, oracle=oracle)
    assert outcome.status == "disagrees", (what, outcome)
    assert any(p.startswith(f"operand {operand} {direction}") for p in outcome.problems), (
        outcome.problems[:3]
    )
    if new is None:  # a dropped map loses reads: never only "extra"
        assert any("miss" in p or "do not give" in p for p in outcome.problems)


def _entry_root(text: str):
    module = parse_hlo(text)
    (ins,) = [i for i in analyze(module).instructions if i.instruction is module.entry.root]
    return ins


def _with_maps(ins, operand: int, o2i: str | None = None, i2o: str | None = None):
    ops = []
    for op in ins.operands:
        if op.index == operand:
            if o2i is not None:
                op = replace(op, output_to_input=[parse_map(o2i)])
            if i2o is not None:
                op = replace(op, input_to_output=[parse_map(i2o)])
        ops.append(op)
    return replace(ins, operands=ops)


SLICE = """HloModule m
ENTRY e {
  a = f32[3000000] parameter(0)
  ROOT r = f32[1500000] slice(a), slice={[0:1500000]}
}"""

CONCAT = """HloModule m
ENTRY e {
  a = f32[1500000] parameter(0)
  b = f32[1] parameter(1)
  c = f32[1500000] parameter(2)
  ROOT r = f32[3000001] concatenate(a, b, c), dimensions={0}
}"""


def test_input_to_output_maps_are_checked_on_elements_no_output_reads() -> None:
    """Exact maps that claim outputs for the sliced-off half: no sampled output reads those
    elements, the operand's own sampled elements find it."""
    ins = _entry_root(SLICE)
    assert sampled_oracle_check(ins.instruction, ins, points=8).status == "agrees"
    wrong = _with_maps(ins, 0, i2o="(d0) -> (d0), domain: d0 in [0, 2999999]")
    outcome = sampled_oracle_check(ins.instruction, wrong, points=8)
    assert outcome.status == "disagrees", outcome
    assert any("does not read" in p for p in outcome.problems)


def test_an_operand_no_sampled_output_reads_is_still_checked() -> None:
    ins = _entry_root(CONCAT)
    assert sampled_oracle_check(ins.instruction, ins, points=8).status == "agrees"
    both_wrong = _with_maps(
        ins,
        1,
        o2i="(d0) -> (d0 - 1499999), domain: d0 in [1499999, 1499999]",
        i2o="(d0) -> (d0 + 7), domain: d0 in [0, 0]",
    )
    assert sampled_oracle_check(ins.instruction, both_wrong, points=8).status == "disagrees"
    # the input-to-output map right, the output-to-input one wrong: the output the element is
    # given to reads it, and the maps there must say so
    o2i_wrong = _with_maps(ins, 1, o2i="(d0) -> (d0 - 1499999), domain: d0 in [1499999, 1499999]")
    outcome = sampled_oracle_check(ins.instruction, o2i_wrong, points=8)
    assert outcome.status == "disagrees", outcome
    assert any(p.startswith("operand 1 output_to_input") for p in outcome.problems)


def test_an_output_without_elements_confirms_nothing() -> None:
    ins = _entry_root(
        SLICE.replace(
            "f32[1500000] slice(a), slice={[0:1500000]}", "f32[0] slice(a), slice={[0:0]}"
        )
    )
    outcome = sampled_oracle_check(ins.instruction, ins, points=8)
    assert outcome.points == 0
    assert outcome.status == "unchecked"


def test_an_operand_the_analysis_lost_confirms_nothing() -> None:
    ins = _entry_root(
        SLICE.replace("f32[1500000] slice(a), slice={[0:1500000]}", "f32[3000000] add(a, a)")
    )
    for kept in ([op for op in ins.operands if op.index != 1], []):
        outcome = sampled_oracle_check(ins.instruction, replace(ins, operands=kept), points=8)
        assert outcome.status == "unchecked", outcome
        assert any("has no maps" in u for u in outcome.unchecked)


def test_runtime_variables_it_cannot_fix_leave_the_check_unconfirmed(monkeypatch) -> None:
    ins, _ = _analysed("gather")

    def undescribed(instr, direction):
        raise RuntimeError("no rule tables")

    monkeypatch.setattr(sampled_check, "runtime_descriptions", undescribed)
    outcome = sampled_oracle_check(ins.instruction, ins, points=8)
    assert outcome.status == "unchecked"
    assert outcome.checked_points == 0
    assert any("not described" in u for u in outcome.unchecked)


def test_points_are_deterministic_corners_first() -> None:
    points = sample_points((3, 6, 128, 12288), 24, seed=0)
    assert points == sample_points((3, 6, 128, 12288), 24, seed=0)
    assert len(set(points)) == 24
    assert points[:2] == [(0, 0, 0, 0), (0, 0, 0, 12287)]
    assert (2, 5, 127, 12287) in points[:16]
    assert sample_points((2, 3), 64) == [(i, j) for i in range(2) for j in range(3)]
    assert sample_points((0, 5), 8) == []
