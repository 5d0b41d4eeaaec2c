"""StableHLO ops jax 0.12 writes that XLA turns into custom-calls: Shardy's
`sdy.sharding_constraint` (an identity, XLA's `Sharding` custom-call) and `chlo.erf_inv`
(elementwise). Their maps are checked against the provenance interpreter on shapes from
hypothesis, and by hand: output element i reads operand element i, nothing else (issue 44)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rules_basic import check

from hloidx.hlo import op_rules
from hloidx.hlo.analysis import analyze
from hloidx.maps.domain import relation
from hloidx.stablehlo import parse_stablehlo

SHAPES = st.lists(st.integers(1, 4), min_size=0, max_size=3)


def _tensor(dims: list[int], element: str = "f32") -> str:
    return "tensor<" + "".join(f"{d}x" for d in dims) + f"{element}>"


def _module(dims: list[int], body: str) -> str:
    t = _tensor(dims)
    return (
        "module @jit_f {\n"
        '  sdy.mesh @mesh = <["x"=1]>\n'
        f"  func.func public @main(%arg0: {t}) -> ({t}) {{\n"
        f"    {body.format(t=t)}\n"
        f"    return %0 : {t}\n"
        "  }\n"
        "}\n"
    )


SHARDING = "%0 = sdy.sharding_constraint %arg0 <@mesh, []> : {t}"
ERF_INV = "%0 = chlo.erf_inv %arg0 : {t} -> {t}"


def _root(dims: list[int], body: str):
    return parse_stablehlo(_module(dims, body), "f.mlir").entry.root


@settings(max_examples=25, deadline=None)
@given(dims=SHAPES, body=st.sampled_from([SHARDING, ERF_INV]))
def test_the_maps_are_what_the_interpreter_reads(dims: list[int], body: str) -> None:
    root = _root(dims, body)
    assert root.opcode == "custom-call"
    check(root)


def test_each_output_element_reads_its_own_operand_element() -> None:
    dims = [2, 3]
    points = set(itertools.product(range(2), range(3)))
    for body, target in ((SHARDING, '"Sharding"'), (ERF_INV, '"chlo.erf_inv"')):
        root = _root(dims, body)
        assert root.attributes["custom_call_target"] == target
        (cell,) = op_rules.output_to_input(root)[0]
        assert cell.exact
        got = set().union(*(relation(m) for m in cell.maps))
        assert got == {(p, p) for p in points}


def test_a_module_with_both_has_no_unknown_operand() -> None:
    text = _module([8, 4], SHARDING.replace("%0", "%1") + "\n    " + ERF_INV.replace("%arg0", "%1"))
    analysis = analyze(parse_stablehlo(text, "f.mlir"))
    statuses = [operand.status for ins in analysis.instructions for operand in ins.operands]
    assert statuses == ["exact", "exact"], statuses


@settings(max_examples=10, deadline=None)
@given(dims=SHAPES, body=st.sampled_from([SHARDING, ERF_INV]))
def test_the_point_oracle_agrees_with_the_interpreter(dims: list[int], body: str) -> None:
    from test_point_oracle import compare_everywhere

    root = _root(dims, body)
    agreed, unchecked, problems = compare_everywhere(root)
    assert unchecked is None
    assert problems == []
    assert agreed == max(1, int(np.prod(dims)))
