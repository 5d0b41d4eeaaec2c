"""Never a false statement: unknown stays unknown, never-read is proved, verdicts belong to maps.

Regression tests for issue 12's defects 1, 2 and 7, and a walk over the corpus that checks,
independently of the composition code, that no operand is called exact while a path from it to
the output passes through an op without a rule.
"""

from __future__ import annotations

import json

import paths
import pytest
from click.testing import CliRunner

import hloidx
from hloidx.check.oracle import oracle_relation
from hloidx.cli import cli
from hloidx.hlo import op_rules
from hloidx.hlo.ir import Instruction

THROUGH_CUSTOM_CALL = """HloModule m
fused {
  p0 = f32[8,16] parameter(0)
  p1 = f32[16] parameter(1)
  b = f32[8,16] broadcast(p1), dimensions={1}
  cc = f32[8,16] custom-call(p0, b), custom_call_target="foo"
  ROOT n = f32[8,16] negate(cc)
}
ENTRY main {
  a = f32[8,16] parameter(0)
  c = f32[16] parameter(1)
  ROOT f = f32[8,16] fusion(a, c), kind=kLoop, calls=fused
}
"""

SLICE_OF_CONCAT = """HloModule m
f {
  p0 = f32[2,5,7] parameter(0)
  p1 = f32[2,11,7] parameter(1)
  p2 = f32[2,17,7] parameter(2)
  concat = f32[2,33,7] concatenate(p0, p1, p2), dimensions={1}
  ROOT slice = f32[2,3,7] slice(concat), slice={[0:2:1], [0:5:2], [0:7:1]}
}
ENTRY e {
  p0 = f32[2,5,7] parameter(0)
  p1 = f32[2,11,7] parameter(1)
  p2 = f32[2,17,7] parameter(2)
  ROOT fusion = f32[2,3,7] fusion(p0, p1, p2), kind=kLoop, calls=f
}
"""


def _json(tmp_path, text: str, *args: str) -> dict:
    path = tmp_path / "m.hlo"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["maps", str(path), "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _operand(doc: dict, instruction: str, index: int) -> dict:
    (ins,) = [i for i in doc["instructions"] if i["name"] == instruction]
    return ins["operands"][index]


@pytest.mark.parametrize("index", [0, 1])
def test_operand_read_through_an_op_without_a_rule_is_undefined(tmp_path, index: int) -> None:
    operand = _operand(_json(tmp_path, THROUGH_CUSTOM_CALL, "--instruction", "f"), "f", index)
    assert operand["output_to_input"] == ["UNDEFINED"]
    assert operand["input_to_output"] == ["UNDEFINED"]
    assert operand["exact"] is False
    assert operand["status"] == "unknown"
    assert operand["utilization"] == {"distinct": None, "reads": None, "kind": "unknown"}
    assert any("custom-call" in note for note in operand["notes"])


def test_undefined_operand_is_never_called_exact_in_text(tmp_path) -> None:
    path = tmp_path / "m.hlo"
    path.write_text(THROUGH_CUSTOM_CALL)
    result = CliRunner().invoke(cli, ["maps", str(path), "--instruction", "f"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "operand 1:" in line]
    assert lines
    assert "unknown" in lines[0]
    assert "exact" not in lines[0]
    assert "distinct 0" not in result.output


def test_path_through_an_op_without_a_rule_is_reported_undefined(tmp_path) -> None:
    path = tmp_path / "m.hlo"
    path.write_text(THROUGH_CUSTOM_CALL)
    result = CliRunner().invoke(
        cli, ["maps", str(path), "--from", "n", "--to", "p1", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["maps"] == ["UNDEFINED"]
    assert doc["exact"] is False
    assert doc["status"] == "unknown"


def test_top_level_op_without_a_rule_makes_its_operands_undefined(tmp_path) -> None:
    text = """HloModule m
ENTRY e {
  p0 = f32[4,4] parameter(0)
  ROOT cc = f32[4,4] custom-call(p0), custom_call_target="foo"
}
"""
    operand = _operand(_json(tmp_path, text), "cc", 0)
    assert operand["output_to_input"] == ["UNDEFINED"]
    assert operand["status"] == "unknown"
    assert operand["exact"] is False


def test_operand_a_fusion_provably_never_reads_is_known_empty(tmp_path) -> None:
    doc = _json(tmp_path, SLICE_OF_CONCAT, "--instruction", "fusion")
    for index in (1, 2):
        operand = _operand(doc, "fusion", index)
        assert operand["output_to_input"] == ["KNOWN EMPTY"]
        assert operand["input_to_output"] == ["KNOWN EMPTY"]
        assert operand["status"] == "never read"
        assert operand["exact"] is True
        assert operand["utilization"] == {"distinct": 0.0, "reads": 0.0, "kind": "exact"}
    # and the interpreter agrees: running the fusion reads nothing of p1 and p2
    root = hloidx.parse_hlo(SLICE_OF_CONCAT).entry.root
    assert oracle_relation(root, 1) == set()
    assert oracle_relation(root, 2) == set()
    assert oracle_relation(root, 0)


def test_undefined_maps_carry_no_verdict(tmp_path) -> None:
    operand = _operand(_json(tmp_path, THROUGH_CUSTOM_CALL, "--instruction", "f"), "f", 1)
    assert operand["verdicts"] == []
    assert operand["output_to_input_verdicts"] == [None]
    path = tmp_path / "m.hlo"
    result = CliRunner().invoke(cli, ["maps", str(path), "--instruction", "f"])
    for line in result.output.splitlines():
        if "UNDEFINED" in line:
            assert "verified" not in line


def test_each_verdict_is_printed_beside_its_map(tmp_path) -> None:
    operand = _operand(_json(tmp_path, SLICE_OF_CONCAT, "--instruction", "fusion"), "fusion", 0)
    assert len(operand["output_to_input_verdicts"]) == len(operand["output_to_input"])
    assert operand["output_to_input_verdicts"] == ["proved"]


# ---------------------------------------------------------------------------
# The corpus: no operand is exact while a path to it passes through an op without a rule
# ---------------------------------------------------------------------------

_PLUMBING = {"parameter", "tuple", "get-tuple-element", "fusion", "call"}


def _without_rule(instr: Instruction) -> bool:
    if instr.opcode == "custom-call":  # only the registered targets have a rule
        from hloidx.hlo.rules.custom_calls import known_targets

        target = instr.attributes.get("custom_call_target", "").strip('"')
        return target not in known_targets()
    return instr.opcode not in _PLUMBING and not op_rules.has_output_to_input_rule(instr.opcode)


def _parameters_behind_unknown(instr: Instruction) -> set[int]:
    """Parameter numbers of ``instr``'s called computation that some path from its root
    reaches through an op without a rule (walked from the IR, not from the maps)."""
    called = instr.called_computations.get("calls") or []
    if not called:
        return set()
    comp = called[0]
    tainted: set[int] = set()
    stack: list[tuple[Instruction, bool]] = [(comp.root, False)]
    seen: set[tuple[int, bool]] = set()
    while stack:
        node, lost = stack.pop()
        if (id(node), lost) in seen:
            continue
        seen.add((id(node), lost))
        if node.opcode == "parameter":
            if lost:
                tainted.add(node.parameter_number)
            continue
        lost = lost or _without_rule(node) or bool(_parameters_behind_unknown(node))
        stack.extend((o, lost) for o in node.operands)
    return tainted


def _corpus_files() -> list:
    return sorted(paths.CORPUS.glob("*.hlo")) + sorted(paths.SAMPLES.rglob("*.hlo"))


def _operands_behind_unknown_ops(module) -> list[tuple[str, int, object]]:
    analysis = hloidx.analyze(module, verify=False)
    found = []
    for ins in analysis.instructions:
        instr = ins.instruction
        if instr is None:
            continue
        behind = set(range(len(instr.operands))) if _without_rule(instr) else set()
        if instr.opcode in ("fusion", "call"):
            behind = _parameters_behind_unknown(instr)
        found.extend((ins.name, k, ins.operands[k]) for k in sorted(behind))
    return found


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name)
def test_corpus_never_calls_an_operand_behind_an_unknown_op_exact(path) -> None:
    module = hloidx.parse_hlo(path.read_text(), path.name)
    for name, k, operand in _operands_behind_unknown_ops(module):
        assert operand.exact is not True, f"{name} operand {k} is behind an unknown op"
        assert operand.status == "unknown", (name, k, operand.status)


def test_corpus_walk_finds_operands_behind_unknown_ops() -> None:
    # The walk above must have something to check: the corpus's TopK custom-call under a
    # target hloidx does not know, and the fusion, which puts two operands behind one.
    text = (paths.CORPUS / "cumsum_sort_argmax_topk.opt.hlo").read_text()
    assert _operands_behind_unknown_ops(hloidx.parse_hlo(text)) == []  # TopK has a rule
    corpus = hloidx.parse_hlo(text.replace('target="TopK"', 'target="NotTopK"'))
    assert _operands_behind_unknown_ops(corpus)
    found = _operands_behind_unknown_ops(hloidx.parse_hlo(THROUGH_CUSTOM_CALL))
    # cc itself, inside the fused computation, and the fusion's two operands
    assert [(name, k) for name, k, _ in found] == [("cc", 0), ("cc", 1), ("f", 0), ("f", 1)]
    assert all(operand.status == "unknown" for _, _, operand in found)


# ---------------------------------------------------------------------------
# Tuple-shaped values: a path uses exactly the element it reads
# ---------------------------------------------------------------------------

ASYNC_ALL_GATHER = """HloModule m, replica_count=8
ENTRY e {
  arg0 = f32[8,16] parameter(0)
  ags = (f32[8,16], f32[64,16]) all-gather-start(arg0), dimensions={0}, replica_groups={{0,1,2,3,4,5,6,7}}
  ROOT r = f32[64,16] all-gather-done(ags)
}
"""


def test_done_reads_the_gathered_element_of_its_start(tmp_path) -> None:
    path = tmp_path / "m.hlo"
    path.write_text(ASYNC_ALL_GATHER)
    result = CliRunner().invoke(
        cli, ["maps", str(path), "--from", "r", "--to", "arg0", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["maps"] == ["(d0, d1) -> (d0 mod 8, d1), domain: d0 in [0, 63], d1 in [0, 15]"]
    assert doc["replica_id_maps"] == [
        "(d0, d1) -> (d0 floordiv 8), domain: d0 in [0, 63], d1 in [0, 15]"
    ]
    # the synchronous all-gather reads the same
    sync = hloidx.parse_hlo(
        ASYNC_ALL_GATHER.replace(
            "ags = (f32[8,16], f32[64,16]) all-gather-start(arg0)",
            "ags = f32[64,16] all-gather(arg0)",
        ).replace("ROOT r = f32[64,16] all-gather-done(ags)", "ROOT r = f32[64,16] negate(ags)")
    )
    (cell,) = op_rules.output_to_input(sync.entry.by_name["ags"])[0]
    assert [str(m) for m in cell.maps] == [
        "(d0, d1) -> (d0 mod 8, d1), domain: d0 in [0, 63], d1 in [0, 15]"
    ]


def _leaf_dims(shape) -> list[tuple[int, ...]]:
    return [s.dims for s in shape.leaves()]


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name)
def test_every_map_lives_in_the_shape_of_its_value(path) -> None:
    """An output-to-input map's domain lies in the shape of an output of its instruction (XLA
    narrows it where only part of the output reads the operand, e.g. concatenate); an
    input-to-output map's lies in the shape of the operand, or of the element it reads."""
    module = hloidx.parse_hlo(path.read_text(), path.name)
    for ins in hloidx.analyze(module, verify=False).instructions:
        instr = ins.instruction
        outputs = _leaf_dims(instr.shape)
        for op in ins.operands:
            operand = instr.operands[op.index]
            leaves = _leaf_dims(operand.shape)
            inputs = [leaves[op.element]] if op.element is not None else leaves
            for direction, maps, allowed in (
                ("output_to_input", op.output_to_input, outputs),
                ("input_to_output", op.input_to_output, inputs),
            ):
                for m in maps:
                    if m.is_undefined or m.is_known_empty:
                        continue
                    assert any(_inside(m, dims) for dims in allowed), (
                        ins.name,
                        op.index,
                        direction,
                        str(m),
                        allowed,
                    )


def _inside(m, dims: tuple[int, ...]) -> bool:
    return len(m.dim_vars) == len(dims) and all(
        v.bounds.lower >= 0 and v.bounds.upper < n for v, n in zip(m.dim_vars, dims, strict=True)
    )


def test_domain_check_catches_a_map_outside_its_value() -> None:
    # the check above must be able to fail
    wrong = hloidx.parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 63], d1 in [0, 15]")
    assert not _inside(wrong, (8, 16))
    assert _inside(wrong, (64, 16))


def test_async_pair_agrees_with_the_interpreter() -> None:
    # what the composed maps say r reads of arg0 is what running the pair reads (the pair
    # wrapped in a call, so that the interpreter runs it from the call's operand)
    from hloidx.hlo.chains import chain_maps
    from hloidx.maps.domain import relation

    body = ASYNC_ALL_GATHER.replace("HloModule m, replica_count=8\nENTRY e {", "pair {")
    wrapped = hloidx.parse_hlo(
        "HloModule m, replica_count=8\n" + body + "ENTRY e {\n  x = f32[8,16] parameter(0)\n"
        "  ROOT c = f32[64,16] call(x), to_apply=pair\n}\n"
    )
    _, _, reached = chain_maps(hloidx.parse_hlo(ASYNC_ALL_GATHER), "r", "arg0")
    composed = set()
    for t in reached.maps:
        composed |= relation(t.map)
    assert composed == oracle_relation(wrapped.entry.root, 0)
