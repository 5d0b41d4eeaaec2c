"""XLA's indexing-analysis expectations, from StableHLO translations of their modules.

XLA runs its indexing-analysis tests on StableHLO too. `tests/data/xla/stablehlo_cases.json`
holds each case's module as XLA's own converter (`hlo_to_stablehlo`, shipped in jaxlib)
translates it (`translate_stablehlo.py` regenerates it, with jax). hloidx reads the
translation, lowers it back to HLO, and the root instruction's maps must equal XLA's expected
maps as relations, exactly as the HLO suite (`test_xla_conformance_ops.py`) checks them.
"""

from __future__ import annotations

import json

import paths
import pytest
from test_xla_conformance_ops import (
    ENTRIES,
    TIGHTER_THAN_XLA,
    _compare,
    _expected_operands,
)

import hloidx
from hloidx.hlo.analysis import analyze
from hloidx.stablehlo import parse_stablehlo

TRANSLATIONS = json.loads((paths.XLA_TESTS / "stablehlo_cases.json").read_text())["translations"]
CASES = [(t, k, e) for t, k, e in ENTRIES if t in TRANSLATIONS and not e.get("physical_layout")]


def _root_like(module, opcode: str):
    """The entry root, or the one instruction whose results a tuple root gathers (XLA's
    converter writes a variadic reduce's results as a tuple of its elements)."""
    root = module.entry.root
    if root.opcode == "tuple" and root.operands:
        sources = {
            id(o.operands[0]): o.operands[0]
            for o in root.operands
            if o.opcode == "get-tuple-element"
        }
        if len(sources) == 1 and len(root.operands) == sum(
            1 for o in root.operands if o.opcode == "get-tuple-element"
        ):
            (inner,) = sources.values()
            if inner.opcode == opcode:
                return inner
    return root


def _maps(ins, kind: str, operand_id: int, output_id: int):
    op = ins.operands[operand_id]
    return op.output_to_input if kind == "output_to_input" else op.input_to_output


@pytest.mark.parametrize(("test", "index", "entry"), CASES, ids=[f"{t}-{i}" for t, i, _ in CASES])
def test_xla_expectation_holds_from_stablehlo(test: str, index: int, entry: dict) -> None:
    original = hloidx.parse_hlo(entry["hlo"]).entry.root
    module = parse_stablehlo(TRANSLATIONS[test], f"{test}.mlir")
    root = _root_like(module, original.opcode)
    if root.opcode != original.opcode:
        pytest.skip(f"XLA's converter writes {original.opcode} as {root.opcode}")
    if root.opcode == "fusion":
        pytest.skip("fusion roots: test_root_reads_as_from_hlo compares them")
    kind = entry["kind"]
    if kind == "input_to_output" and entry.get("input_id", 0) >= len(root.operands):
        pytest.skip("input id beyond the operands")
    analysis = analyze(module, verify=False, only=[root])
    (ins,) = [i for i in analysis.instructions if i.instruction is root]
    expected = _expected_operands(entry)
    for operand_id, items in expected.items():
        if kind == "output_to_input":
            if operand_id >= len(ins.operands):
                pytest.skip("tuple-shaped root")
            ours = list(ins.operands[operand_id].output_to_input)
            target = root.operands[operand_id].shape.dims
        else:
            ours = list(ins.operands[entry["input_id"]].input_to_output)
            outputs = root.shape.tuple_shapes or (root.shape,)
            if operand_id >= len(outputs):
                pytest.skip("output id beyond the outputs")
            target = outputs[operand_id].dims
        theirs = [
            hloidx.parse_map(item["map"]) for item in items if item["map"].strip() != "UNDEFINED"
        ]
        if not theirs:
            assert all(m.is_undefined for m in ours) or not ours
            continue
        if any(m.is_undefined for m in ours):
            pytest.xfail(f"{root.opcode}: UNDEFINED here (an op without a rule on the path)")
        subset = (root.opcode, kind, operand_id) in TIGHTER_THAN_XLA
        _compare(ours, theirs, subset, target)


def _relations(maps) -> object:
    from hloidx.maps.domain import relation

    if any(m.is_undefined for m in maps):
        return "UNDEFINED"
    out: set = set()
    for m in maps:
        if m.box_size() > 200_000:
            return ("too large", len(maps))
        out |= relation(m, with_runtime=bool(m.rt_vars))
    return frozenset(out)


@pytest.mark.parametrize("test", sorted(TRANSLATIONS))
def test_root_reads_as_from_hlo(test: str) -> None:
    """The translated module's root reads its operands as the HLO module's root does (both
    read by hloidx: the same maps whichever language the module came in)."""
    cases = {
        c["test"]: c for c in json.loads((paths.XLA_TESTS / "analysis_cases.json").read_text())
    }
    hlo_module = hloidx.parse_hlo(cases[test]["hlo"])
    module = parse_stablehlo(TRANSLATIONS[test], f"{test}.mlir")
    a_root = hlo_module.entry.root
    b_root = _root_like(module, a_root.opcode)
    if a_root.opcode != b_root.opcode:
        pytest.skip(f"XLA's converter writes {a_root.opcode} as {b_root.opcode}")
    (a,) = [i for i in analyze(hlo_module, verify=False, only=[a_root]).instructions]
    (b,) = [i for i in analyze(module, verify=False, only=[b_root]).instructions]
    undefined_here = False
    for x, y in zip(a.operands, b.operands, strict=True):
        mine = _relations(y.output_to_input)
        if mine == "UNDEFINED" and _relations(x.output_to_input) != "UNDEFINED":
            undefined_here = True  # an op the converter writes in a form without a rule
            continue
        assert mine == _relations(x.output_to_input), (test, x.name)
    if undefined_here:
        pytest.xfail("UNDEFINED from StableHLO where HLO has maps (mhlo.bitcast has no rule)")


def test_most_cases_are_translated() -> None:
    assert len(TRANSLATIONS) >= 80
    assert len(CASES) >= 100
