"""cuDNN convolution custom-calls against the provenance interpreter, which enumerates the
forward convolution's (input, kernel, output) triples from the definition.

Each case is a custom-call as XLA:GPU's convolution rewriter writes it: ``window`` and
``dim_labels`` describe the forward convolution; backward input computes the input's gradient
from (output gradient, kernel), backward filter the kernel's gradient from (input, output
gradient). The maps in both directions must equal the oracle's reads as relations.
"""

from __future__ import annotations

import pytest

import hloidx
from hloidx.check.oracle import check_instruction, oracle_relation
from hloidx.hlo.op_rules import input_to_output, output_to_input
from hloidx.maps.domain import relation

# target, x (forward input), w (kernel), y (forward output), window, dim_labels, groups
CASES = [
    ("f32[1,5,4,2]", "f32[3,3,2,3]", "f32[1,5,4,3]", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", 1),
    ("f32[2,2,7]", "f32[3,2,3]", "f32[2,3,3]", "size=3 stride=2", "bf0_oi0->bf0", 1),
    ("f32[1,2,9]", "f32[2,2,2]", "f32[1,2,4]", "size=2 stride=2 rhs_dilate=2", "bf0_oi0->bf0", 1),
    ("f32[1,4,6]", "f32[4,2,3]", "f32[1,4,6]", "size=3 pad=1_1", "bf0_oi0->bf0", 2),
    ("f32[2,6,3]", "f32[3,3,2]", "f32[2,2,2]", "size=3 stride=2 pad=0_-1", "b0f_0io->b0f", 1),
    (
        "f32[1,3,5]",
        "f32[3,3,2]",
        "f32[1,2,2]",
        "size=3 pad=1_1 stride=3 rhs_reversal=1",
        "bf0_0io->bf0",
        1,
    ),
]


def _module(target: str, x: str, w: str, y: str, window: str, labels: str, groups: int):
    if target == "__cudnn$convBackwardInput":
        params, result = (y, w), x
    elif target == "__cudnn$convBackwardFilter":
        params, result = (x, y), w
    else:
        params, result = (x, w), y
    group = f", feature_group_count={groups}" if groups > 1 else ""
    text = f"""HloModule m
ENTRY e {{
  a = {params[0]} parameter(0)
  b = {params[1]} parameter(1)
  ROOT c = ({result}, u8[0]) custom-call(a, b), window={{{window}}}, dim_labels={labels}{group}, custom_call_target="{target}"
}}
"""
    return hloidx.parse_hlo(text)


TARGETS = ["__cudnn$convForward", "__cudnn$convBackwardInput", "__cudnn$convBackwardFilter"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=[f"{c[3]} {c[4]} g{c[5]}" for c in CASES])
def test_output_to_input_maps_equal_the_reads(target, case) -> None:
    root = _module(target, *case).entry.root
    assert check_instruction(root) == []
    operands = hloidx.analyze(_module(target, *case)).instructions[-1]
    assert [op.status for op in operands.operands] == ["exact", "exact"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=[f"{c[3]} {c[4]} g{c[5]}" for c in CASES])
def test_input_to_output_maps_are_the_inverse_reads(target, case) -> None:
    root = _module(target, *case).entry.root
    table = input_to_output(root)
    for j in range(2):
        claimed = set()
        for m in table[j][0].maps:
            claimed |= relation(m)
        truth = {(src, out) for out, src in oracle_relation(root, j)}
        assert claimed == truth
        assert table[j][0].exact


def test_the_workspace_reads_nothing() -> None:
    root = _module(TARGETS[1], *CASES[0]).entry.root
    row = output_to_input(root)[1]
    assert all(cell.maps[0].is_known_empty for cell in row)


def test_a_gradient_reads_at_least_one_element_per_input_position() -> None:
    """Backward input with stride 1 and full padding: every dx element reads some dy."""
    root = _module(TARGETS[1], *CASES[0]).entry.root
    reads = oracle_relation(root, 0)
    assert {out for out, _ in reads} == {
        (a, b, c, d) for a in range(1) for b in range(5) for c in range(4) for d in range(2)
    }


BIAS_ACTIVATION = """HloModule m
ENTRY e {
  x = f32[1,2,5] parameter(0)
  w = f32[3,2,3] parameter(1)
  bias = f32[3] parameter(2)
  side = f32[1,3,5] parameter(3)
  ROOT c = (f32[1,3,5], u8[0]) custom-call(x, w, bias, side), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0, custom_call_target="__cudnn$convBiasActivationForward"
}
"""


def test_fused_bias_runs_along_the_output_features_not_the_last_dimension() -> None:
    root = hloidx.parse_hlo(BIAS_ACTIVATION).entry.root
    assert check_instruction(root) == []
    table = input_to_output(root)
    for j in (2, 3):
        claimed = set()
        for m in table[j][0].maps:
            claimed |= relation(m)
        assert claimed == {(src, out) for out, src in oracle_relation(root, j)}
