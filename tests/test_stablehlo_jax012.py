"""The StableHLO jax 0.12 (and 0.10) prints for the issue-35 programs and the corpus programs.

`tests/data/stablehlo_jax012/` holds each program's `.as_text()` (`NAME.mlir`) and XLA's own
HLO of the same lowering (`NAME.hlo`); see its README. Every text analyses; the maps hloidx
reads from the StableHLO are those it reads from XLA's HLO (per instruction, and composed from
the entry's root to each parameter); `chlo.top_k`'s maps are checked against a NumPy
enumeration; malformed multi-result forms are located errors.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import paths
import pytest
from click.testing import CliRunner
from test_stablehlo import _paired_instructions, _relation, _root_reads

from hloidx.cli.main import cli
from hloidx.errors import EnumerationLimitError
from hloidx.hlo.analysis import analyze
from hloidx.hlo.syntax import parse_hlo
from hloidx.maps.domain import relation
from hloidx.stablehlo import parse_stablehlo, parse_stablehlo_lenient

DATA = paths.ROOT / "tests" / "data" / "stablehlo_jax012"
TEXTS = sorted(p.relative_to(DATA).with_suffix("").as_posix() for p in DATA.rglob("*.mlir"))
# the gradient of the transformer block: large; its instructions are compared, its root reads
# (every path composed) are left to the forward block
_HEAVY = {"transformer_grad"}
# relations of more points are not enumerated (the test stays fast; the rest are counted)
_LIMIT = 5_000


def _pair(name: str):
    return (
        parse_stablehlo((DATA / f"{name}.mlir").read_text(), f"{name}.mlir"),
        parse_hlo((DATA / f"{name}.hlo").read_text(), f"{name}.hlo"),
    )


def test_the_programs_are_there() -> None:
    names = {Path(t).name for t in TEXTS}
    wanted = {
        "scan",
        "fori_loop",
        "cond",
        "argmax",
        "top_k",
        "sort_multi",
        "multi_output",
        "transformer_block",
        "mlp_layernorm_gelu",
        "cnn_pool_batchnorm",
        "rnn_scan",
        "cumsum_sort_argmax_topk",
        "einsum_heavy",
        "embedding_gather_scatter",
    }
    assert wanted <= names, sorted(wanted - names)
    assert all((DATA / f"{t}.hlo").exists() for t in TEXTS)


def _limited(relation_of, *args):
    """The relation, or None where it has more points than the test enumerates."""
    try:
        return relation_of(*args)
    except EnumerationLimitError:
        return None


def _relation_small(maps) -> frozenset | str:
    if any(m.is_undefined for m in maps):
        return "UNDEFINED"
    out: set = set()
    for m in maps:
        out |= relation(m, limit=_LIMIT, with_runtime=bool(m.rt_vars))
    return frozenset(out)


def test_root_reads_each_parameter_as_from_xla_hlo() -> None:
    """What the entry's root reads of each parameter, composed through every instruction on
    every path: the same relations from the StableHLO as from XLA's HLO."""
    compared = []
    for name in TEXTS:
        if Path(name).name in _HEAVY:
            continue
        stablehlo, hlo = _pair(name)
        mine = _limited(_root_reads, stablehlo)
        if mine is None:
            continue
        assert mine == _root_reads(hlo), name
        compared.append(name)
    assert len(compared) >= 15, compared


def test_instructions_read_as_in_xla_hlo() -> None:
    """Every instruction whose opcode and shapes occur once in each module: the same maps for
    every operand, as relations (those of up to _LIMIT points)."""
    compared: Counter = Counter()
    for name in TEXTS:
        stablehlo, hlo = _pair(name)
        for sig, ins, other in _paired_instructions(stablehlo, hlo):
            pairs = []
            for a, b in zip(ins.operands, other.operands, strict=True):
                for mine_maps, xla_maps in (
                    (a.output_to_input, b.output_to_input),
                    (a.input_to_output, b.input_to_output),
                ):
                    ours = _limited(_relation_small, mine_maps)
                    if ours is None:
                        break
                    pairs.append((ours, _relation_small(xla_maps)))
                else:
                    continue
                break
            else:
                for ours, theirs in pairs:
                    assert ours == theirs, (name, sig)
                compared[sig[0]] += 1
    # the multi-result ops of the issue are among them
    assert {"topk", "sort", "reduce", "while", "conditional", "dot"} <= set(compared), compared
    assert compared["topk"] >= 3, compared
    assert compared["sort"] >= 3, compared
    assert sum(compared.values()) >= 180, compared


def test_every_text_analyses_with_exit_0() -> None:
    runner = CliRunner()
    for name in TEXTS:
        for suffix in (".mlir", ".hlo"):
            result = runner.invoke(cli, ["maps", str(DATA / f"{name}{suffix}"), "--format", "json"])
            assert result.exit_code == 0, (name, suffix, result.output[-400:])


# ---------------------------------------------------------------------------
# chlo.top_k against NumPy
# ---------------------------------------------------------------------------


def _top_k(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """lax.top_k: the k largest of each row (minor dimension), largest first; ties by index."""
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order


def _top_k_dependencies(shape: tuple[int, ...], k: int) -> set:
    """(output index, input index) pairs where changing that input changes that output (value
    or index), found by moving each input element to every rank of its row."""
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    base_v, base_i = _top_k(x, k)
    out: set = set()
    for src in np.ndindex(*shape):
        row = x[src[:-1]]
        for probe in [-1e9, 1e9, *(row - 0.5), *(row + 0.5)]:
            y = x.copy()
            y[src] = probe
            v, i = _top_k(y, k)
            changed = (v != base_v) | (i != base_i)
            out |= {(tuple(o), tuple(src)) for o in np.argwhere(changed).tolist()}
    return out


@pytest.mark.parametrize(
    ("name", "shape", "k"), [("top_k", (4, 50), 5), ("top_k_3d", (2, 3, 7), 2)]
)
def test_top_k_maps_are_what_numpy_enumerates(name: str, shape: tuple, k: int) -> None:
    module = parse_stablehlo((DATA / f"{name}.mlir").read_text(), f"{name}.mlir")
    (topk,) = [
        i for i in analyze(module, verify=False).instructions if i.instruction.opcode == "topk"
    ]
    (operand,) = topk.operands
    assert topk.instruction.attributes.get("k") == str(k)
    expected = _top_k_dependencies(shape, k)
    assert _relation(operand.output_to_input) == expected
    # input -> output: the same pairs turned around
    assert _relation(operand.input_to_output) == {(i, o) for o, i in expected}


# ---------------------------------------------------------------------------
# Multi-result forms, and their errors
# ---------------------------------------------------------------------------

NAMED = """module @m {
  func.func public @main(%arg0: tensor<4x9xf32>, %arg1: tensor<4x9xi32>) -> (tensor<4x2xf32>, tensor<4x2xi32>, tensor<4x9xi32>) {
    %values, %indices = chlo.top_k(%arg0, k = 2) : tensor<4x9xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
    %0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %1 = stablehlo.compare  LT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    }) : (tensor<4x9xf32>, tensor<4x9xi32>) -> (tensor<4x9xf32>, tensor<4x9xi32>)
    return %values, %indices, %0#1 : tensor<4x2xf32>, tensor<4x2xi32>, tensor<4x9xi32>
  }
}
"""


def test_named_results_and_numbered_results_are_read() -> None:
    module = parse_stablehlo(NAMED, "m.mlir")
    root = module.entry.root
    assert root.opcode == "tuple"
    # each returned value is the element of the op's tuple its position says
    elements = [(o.opcode, o.attributes.get("index"), o.operands[0].opcode) for o in root.operands]
    assert elements == [
        ("get-tuple-element", "0", "topk"),
        ("get-tuple-element", "1", "topk"),
        ("get-tuple-element", "1", "sort"),
    ]
    names = [o.name for o in root.operands[:2]]
    assert names == ["values", "indices"]


GROUPS = """module @m {
  func.func public @main(%arg0: tensor<4x9xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>) {
    %0:2 = "chlo.top_k"(%arg0) <{k = 2 : i64}> : (tensor<4x9xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
    %a:1, %b = chlo.top_k(%arg0, k = 2) : tensor<4x9xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
    %c = stablehlo.add %0#0, %a#0 : tensor<4x2xf32>
    return %c, %b#0 : tensor<4x2xf32>, tensor<4x2xi32>
  }
}
"""


def test_generic_top_k_and_result_groups() -> None:
    """The generic form `"chlo.top_k"(%x) <{k = 2 : i64}>`, and MLIR's result groups
    (`%a:1, %b =`, used as `%a#0`; `%b#0` is `%b`)."""
    module = parse_stablehlo(GROUPS, "m.mlir")
    root = module.entry.root
    add, indices = root.operands
    assert [(o.opcode, o.attributes.get("index")) for o in add.operands] == [
        ("get-tuple-element", "0"),
        ("get-tuple-element", "0"),
    ]
    assert (indices.opcode, indices.attributes.get("index")) == ("get-tuple-element", "1")
    tops = [i for i in module.entry.instructions if i.opcode == "topk"]
    assert [t.attributes.get("k") for t in tops] == ["2", "2"]
    _, errors = parse_stablehlo_lenient(GROUPS.replace("k = 2 : i64", "k = 3 : i64"), "m.mlir")
    assert errors
    assert errors[0].render().startswith("m.mlir:3:5: error: chlo.top_k: k = 3")


def test_while_bindings_are_not_named_results() -> None:
    """`(%iterArg = %c, %iterArg_1 = %arg0)`: the `%c, %iterArg_1 =` in it is no result list."""
    module = parse_stablehlo((DATA / "fori_loop.mlir").read_text(), "fori_loop.mlir")
    assert any(i.opcode == "while" for c in module.computations.values() for i in c.instructions)


@pytest.mark.parametrize(
    ("old", "new", "where", "message"),
    [
        (
            "%0#1 : tensor<4x2xf32>",
            "%0#5 : tensor<4x2xf32>",
            ":9:31:",
            "%0#5: result 5 of %0, which has 2 results",
        ),
        (
            "%values, %indices = chlo",
            "%values, %indices, %extra = chlo",
            ":3:5:",
            "names 3 results but the op has 2",
        ),
        ('%0:2 = "stablehlo.sort"', '%0:3 = "stablehlo.sort"', ":4:5:", "names 3 results"),
        (
            "%values, %indices, %0#1 :",
            "%values#1, %indices, %0#1 :",
            ":9:12:",
            "%values has 1 result",
        ),
    ],
)
def test_malformed_multi_results_are_located(old: str, new: str, where: str, message: str) -> None:
    text = NAMED.replace(
        "return %values, %indices, %0#1 : tensor<4x2xf32>",
        "return %values, %indices, %0#1 : tensor<4x2xf32>",
    )
    assert old in text
    _, errors = parse_stablehlo_lenient(text.replace(old, new), "m.mlir")
    assert errors
    rendered = errors[0].render()
    assert rendered.startswith("m.mlir" + where), rendered
    assert message in rendered, rendered
    assert "^" in rendered.splitlines()[-1]


def test_cli_exit_2_for_a_result_past_the_count(tmp_path: Path) -> None:
    path = tmp_path / "m.mlir"
    path.write_text(NAMED.replace("%0#1 :", "%0#2 :"))
    result = CliRunner().invoke(cli, ["maps", str(path)])
    assert result.exit_code == 2, result.output
    assert "m.mlir:9:" in result.output
    assert "%0#2" in result.output
    assert "Traceback" not in result.output


def test_fast_reader_reads_named_results_as_the_grammar_does() -> None:
    from test_stablehlo import _same_items

    from hloidx.stablehlo import syntax

    texts = [NAMED] + [(DATA / f"{t}.mlir").read_text() for t in TEXTS]
    heads = []
    for text in texts:
        fast = syntax._fast_items(text)
        assert fast is not None
        assert _same_items(fast, syntax._convert(syntax._parser().parse(text)))
        heads += [s.head.value for s in _statements(fast)]
    assert "%values, %indices =" in heads
    # a while loop's bindings stay bindings, one name each
    assert not [h for h in heads if "iterArg" in h and "," in h]


def _statements(items):
    from hloidx.stablehlo.syntax import Group, Stmt

    for item in items:
        if isinstance(item, Stmt):
            yield item
            yield from _statements(item.pieces)
        elif isinstance(item, Group):
            yield from _statements(item.items)
