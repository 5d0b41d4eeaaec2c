"""StableHLO input: the same maps as the HLO path.

`tests/data/stablehlo/` holds, for 51 JAX programs, the StableHLO JAX prints (`NAME.mlir`) and
XLA's own conversion of the same lowering to HLO (`NAME.hlo`; regenerate both with
`generate.py`, which needs jax). hloidx reads the StableHLO through the HLO it lowers it to;
these tests compare that with what it reads from XLA's HLO:

* the whole computation: what the entry's root reads of each parameter, composed through
  every instruction on every path, as relations (enumerated);
* instruction by instruction: every instruction whose opcode and shapes occur once in each
  module has the same maps for every operand, as relations.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import paths
import pytest
from click.testing import CliRunner

from hloidx.cli.main import cli
from hloidx.hlo.analysis import analyze, shape_text
from hloidx.hlo.fusion import grouped_output_to_input
from hloidx.hlo.syntax import parse_hlo
from hloidx.maps.domain import relation
from hloidx.stablehlo import (
    StableHloSyntaxError,
    detect_language,
    parse_stablehlo,
    parse_stablehlo_lenient,
    stablehlo_to_hlo,
)

DATA = paths.ROOT / "tests" / "data" / "stablehlo"
PROGRAMS = sorted(p.stem for p in DATA.glob("*.mlir"))


def _pair(name: str):
    return (
        parse_stablehlo((DATA / f"{name}.mlir").read_text(), f"{name}.mlir"),
        parse_hlo((DATA / f"{name}.hlo").read_text(), f"{name}.hlo"),
    )


def _relation(maps) -> frozenset | str:
    if not maps:
        return frozenset()
    if any(m.is_undefined for m in maps):
        return "UNDEFINED"
    out: set = set()
    for m in maps:
        out |= relation(m, with_runtime=bool(m.rt_vars))
    return frozenset(out)


def _root_reads(module) -> list:
    entry = module.entry
    reached = grouped_output_to_input(entry.root)
    out = []
    for p in sorted(entry.parameters, key=lambda p: p.parameter_number):
        r = reached.get(p)
        if r is None:
            out.append(frozenset())
        elif r.unknown:
            out.append("UNDEFINED")
        else:
            out.append(_relation([t.map for t in r.maps]))
    return out


def test_there_are_enough_programs() -> None:
    assert len(PROGRAMS) >= 40
    assert all((DATA / f"{name}.hlo").exists() for name in PROGRAMS)


@pytest.mark.parametrize("name", PROGRAMS)
def test_root_reads_each_parameter_the_same(name: str) -> None:
    stablehlo, hlo = _pair(name)
    assert _root_reads(stablehlo) == _root_reads(hlo)


def test_most_programs_compare_as_relations() -> None:
    exact = [n for n in PROGRAMS if all(r != "UNDEFINED" for r in _root_reads(_pair(n)[0]))]
    # while loops that update a value are UNDEFINED on both sides (hloidx has no loop rule)
    assert len(exact) >= 44, sorted(set(PROGRAMS) - set(exact))


def _shape(shape) -> str:
    return re.sub(r"\{[^}]*\}", "", shape_text(shape))  # layouts aside


def _signature(ins) -> tuple:
    instr = ins.instruction
    return (instr.opcode, _shape(instr.shape), tuple(_shape(o.shape) for o in instr.operands))


def _paired_instructions(stablehlo: str, hlo: str):
    """``(signature, ours, xla's)`` for every instruction (of every computation: calls, loop
    bodies and branches hold many of the ops) whose opcode and shapes occur once in each
    module; tuples and get-tuple-elements are left out (their names differ by design)."""
    mine = [i for i in analyze(stablehlo, verify=False).instructions if i.operands]
    xla = [i for i in analyze(hlo, verify=False).instructions if i.operands]
    counts_a = Counter(_signature(i) for i in mine)
    counts_b = Counter(_signature(i) for i in xla)
    by_sig = {_signature(i): i for i in xla}
    for ins in mine:
        sig = _signature(ins)
        if counts_a[sig] != 1 or counts_b[sig] != 1 or sig[0] in ("tuple", "get-tuple-element"):
            continue
        yield sig, ins, by_sig[sig]


def test_instructions_read_the_same() -> None:
    compared = Counter()
    for name in PROGRAMS:
        stablehlo, hlo = _pair(name)
        for sig, ins, other in _paired_instructions(stablehlo, hlo):
            for a, b in zip(ins.operands, other.operands, strict=True):
                assert _relation(a.output_to_input) == _relation(b.output_to_input), (name, sig)
                assert _relation(a.input_to_output) == _relation(b.input_to_output), (name, sig)
            compared[sig[0]] += 1
    families = {
        "add",
        "broadcast",
        "reshape",
        "transpose",
        "slice",
        "pad",
        "concatenate",
        "reduce",
        "reduce-window",
        "dot",
        "convolution",
        "gather",
        "scatter",
        "dynamic-slice",
        "dynamic-update-slice",
        "sort",
        "while",
        "conditional",
        "call",
        "compare",
        "select",
        "reverse",
    }
    assert families <= set(compared), sorted(families - set(compared))
    assert sum(compared.values()) >= 150, compared


# ---------------------------------------------------------------------------
# Language detection, errors, unknown ops
# ---------------------------------------------------------------------------


def test_detect_language() -> None:
    assert detect_language((DATA / "softmax.mlir").read_text()) == "stablehlo"
    assert detect_language((DATA / "softmax.hlo").read_text()) == "hlo"
    assert (
        detect_language("func.func @f(%a: tensor<f32>) -> tensor<f32> { return %a : tensor<f32> }")
        == "stablehlo"
    )
    assert detect_language("ENTRY e {\n p = f32[4] parameter(0)\n}") == "hlo"


BROKEN = """module @m {
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %a, %b : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (BROKEN, ":3:28:", "%b is used but never defined"),
        (BROKEN.replace("}\n}\n", "}\n"), ":6:1:", "unexpected end of text"),
        (
            BROKEN.replace("%b", "%a").replace(
                "tensor<4xf32>\n    return", "tensor<4xf32> ]\n    return"
            ),
            ":3:",
            "unexpected",
        ),
        (
            BROKEN.replace("%b", "%a").replace(
                "stablehlo.add %a, %a : tensor<4xf32>",
                "stablehlo.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xf32>",
            ),
            ":3:5:",
            "in the HLO this op lowers to",
        ),
    ],
)
def test_errors_are_located_in_the_mlir_text(text: str, where: str, message: str) -> None:
    _, errors = parse_stablehlo_lenient(text, "m.mlir")
    assert errors
    rendered = errors[0].render()
    assert rendered.startswith("m.mlir" + where), rendered
    assert message in rendered
    assert "^" in rendered.splitlines()[-1]


def test_cli_reports_a_stablehlo_error_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "m.mlir"
    path.write_text(BROKEN)
    result = CliRunner().invoke(cli, ["maps", str(path)])
    assert result.exit_code == 2
    assert "m.mlir:3:28: error: %b is used but never defined" in result.output
    assert "Traceback" not in result.output


def test_unknown_ops_are_undefined_not_errors(tmp_path: Path) -> None:
    text = """module @m {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = chlo.lgamma %arg0 : tensor<4xf32> -> tensor<4xf32>
    %1 = "my.op"(%0) {alpha = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
"""
    path = tmp_path / "m.mlir"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["maps", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    statuses = [o["status"] for i in doc["instructions"] for o in i["operands"]]
    assert statuses == ["unknown", "unknown"]
    targets = {i["name"]: i["notes"] for i in doc["instructions"] if i["operands"]}
    assert any("chlo.lgamma" in " ".join(n) for n in targets.values())


def test_language_option(tmp_path: Path) -> None:
    path = tmp_path / "softmax.txt"
    path.write_text((DATA / "softmax.mlir").read_text())
    assert CliRunner().invoke(cli, ["maps", str(path)]).exit_code == 0
    assert CliRunner().invoke(cli, ["maps", str(path), "--language", "stablehlo"]).exit_code == 0
    as_hlo = CliRunner().invoke(cli, ["maps", str(path), "--language", "hlo"])
    assert as_hlo.exit_code == 2


def test_the_hlo_it_lowers_to_is_printed_hlo() -> None:
    hlo, _, _ = stablehlo_to_hlo((DATA / "while_capture.mlir").read_text())
    module = parse_hlo(hlo)  # verified like any HLO module
    names = {getattr(c, "name", c) for c in module.computations}
    assert names >= {"main", "while_body", "while_cond"}


def test_syntax_error_type() -> None:
    with pytest.raises(StableHloSyntaxError):
        parse_stablehlo("module @m { func.func @main( }", "x.mlir")


# ---------------------------------------------------------------------------
# Syntax the JAX programs above do not all use
# ---------------------------------------------------------------------------

SYNTAX = """#loc1 = loc("x")
module @syntax attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<4x?xf32> loc("x"), %arg1: tensor<4xcomplex<f32>>,
                         %arg2: tensor<4x!quant.uniform<i8:f32, 1.000000e-01:3>>) -> (tensor<4xf32>) {
    %c = stablehlo.constant dense<"0x0000803F000000400000404000008040"> : tensor<4xf32>
    %h = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %r = stablehlo.real %arg1 : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    %0 = "stablehlo.add"(%c, %r) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(#loc1)
    %1 = stablehlo.composite "my.double" %0 {decomposition = @my.double.impl} : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  } loc(#loc1)
  func.func private @my.double.impl(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
#loc2 = loc(unknown)
"""


def test_syntax_forms() -> None:
    hlo, _, _ = stablehlo_to_hlo(SYNTAX, "syntax.mlir")
    assert "f32[4,?] parameter(0)" in hlo
    assert "c64[4] parameter(1)" in hlo
    assert "s8[4] parameter(2)" in hlo  # a quantized type is its storage type
    assert "constant(-inf)" in hlo
    assert " call(" in hlo
    assert "to_apply=my.double.impl" in hlo
    module = parse_stablehlo(SYNTAX, "syntax.mlir")
    analysis = analyze(module)
    call = next(i for i in analysis.instructions if i.opcode == "call")
    (operand,) = call.operands
    assert [str(m) for m in operand.output_to_input] == ["(d0) -> (d0), domain: d0 in [0, 3]"]
    assert operand.status == "exact"


def test_readme_jax_example_runs() -> None:
    pytest.importorskip("jax", reason="the README's JAX example needs jax (the [jax] extra)")
    text = (paths.ROOT / "README.md").read_text()
    start = text.index("## StableHLO and JAX")
    block = text[
        text.index("```python", start) + len("```python") : text.index(
            "```", text.index("```python", start) + 9
        )
    ]
    exec(compile(block, "README.md", "exec"), {})


def _same_items(a, b) -> bool:
    from hloidx.stablehlo.syntax import Group, Stmt, Tok

    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_items(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Tok):
        return (a.type, a.value, a.start) == (b.type, b.value, b.start)
    if isinstance(a, Group):
        return a.kind == b.kind and a.start == b.start and _same_items(a.items, b.items)
    if isinstance(a, Stmt):
        return a.kind == b.kind and _same_items(a.head, b.head) and _same_items(a.pieces, b.pieces)
    return a == b


def test_fast_reader_reads_what_the_grammar_reads() -> None:
    from hloidx.stablehlo import syntax

    texts = [p.read_text() for p in sorted(DATA.glob("*.mlir"))] + [SYNTAX, BROKEN]
    translations = json.loads((paths.XLA_TESTS / "stablehlo_cases.json").read_text())
    texts += list(translations["translations"].values())
    for text in texts:
        fast = syntax._fast_items(text)
        assert fast is not None
        assert _same_items(fast, syntax._convert(syntax._parser().parse(text)))
    assert syntax._fast_items(BROKEN.replace("}\n}\n", "}\n")) is None  # unbalanced: Lark words it
