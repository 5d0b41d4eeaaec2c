"""XLA's emitter tests (``tests/data/gpu/emitters/``) as hloidx reads them.

Each file holds just a fused computation; hloidx analyses it as a fusion of that body
(``hloidx.hlo.lone_fusion``), as XLA's test tools do. Where a RUN line asks
``gpu_test_correctness`` for ``--bijection_inputs=HERO:IDS`` or ``--bijection_outputs=HERO``,
hloidx's thread-id map onto that tensor (XLA's ``ComputeThreadIdToInputIndexing`` /
``ComputeThreadIdToOutputIndexing``, here ``Emitter.hero_input_map`` / ``root_output_map``)
must be a bijection between the threads (and their loop symbols) that satisfy its constraints
and the tensor's elements: checked by enumerating the map over its whole domain, as XLA's
``VerifyBijection`` does.
"""

from __future__ import annotations

import json
import shlex
from functools import cache
from math import prod

import numpy as np
import paths
import pytest
from click.testing import CliRunner

import hloidx
from hloidx.cli.main import cli
from hloidx.errors import EnumerationLimitError
from hloidx.gpu.analysis import analyze_fusion
from hloidx.gpu.devices import device_profile
from hloidx.gpu.emitters import emitter_for, find_hero
from hloidx.hlo.fusion import body_of, computation_outputs
from hloidx.hlo.lone_fusion import GENERATED_ENTRY, lone_fusion_note, wrap_lone_fusion
from hloidx.hlo.syntax import parse_hlo
from hloidx.maps.domain import evaluate_results, feasible_points
from hloidx.stablehlo import parse_module_lenient

EMITTER_TESTS = paths.DATA / "gpu" / "emitters"
FILES = sorted(EMITTER_TESTS.rglob("*.hlo"))
A6000 = device_profile("rtx-a6000")
#: domain points (threads x loop symbols) enumerated at most per map
BUDGET = 1 << 21
C64 = "c64 constant, fixed on parser branch"

#: files whose emitter's thread maps hloidx does not model, and the note that says why
#: (none left: every vendored test that parses gets thread maps)
NOT_MODELLED: dict[str, str] = {}


def _name(path) -> str:
    return path.relative_to(EMITTER_TESTS).as_posix()


def _gpu_test_correctness_args(text: str) -> list[str]:
    """The arguments of the ``gpu_test_correctness`` RUN command (continued lines joined)."""
    commands: list[str] = []
    continued = False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("// RUN:"):
            continued = False
            continue
        part = stripped.removeprefix("// RUN:").strip()
        if continued:
            commands[-1] += " " + part.rstrip("\\").strip()
        else:
            commands.append(part.rstrip("\\").strip())
        continued = part.endswith("\\")
    for command in commands:
        words = shlex.split(command)
        if words and words[0] == "gpu_test_correctness":
            return words[1:]
    return []


def _requests(path) -> list[tuple[str, str, int | None]]:
    """(``input``, hero, operand) and (``output``, hero, None) bijections the RUN line asks
    for. A hero without ids (``--bijection_inputs=reduce``) is read as operand 0."""
    found: list[tuple[str, str, int | None]] = []
    for arg in _gpu_test_correctness_args(path.read_text()):
        flag, _, value = arg.partition("=")
        if flag == "--bijection_inputs":
            hero, _, ids = value.partition(":")
            found.extend(("input", hero.strip(), int(i)) for i in (ids or "0").split(","))
        elif flag == "--bijection_outputs":
            found.append(("output", value.strip(), None))
    return found


REQUESTS = [(path, r) for path in FILES for r in _requests(path)]


@cache
def _fusion(path):
    text = path.read_text()
    module, errors = parse_module_lenient(text, str(path), "hlo")
    if errors:
        return None, errors
    module = wrap_lone_fusion(module)
    fusions = [i for i in module.entry.instructions if i.opcode == "fusion"]
    assert len(fusions) == 1, [f.name for f in fusions]
    return fusions[0], analyze_fusion(fusions[0], A6000)


def _loaded(path):
    fusion, view = _fusion(path)
    if fusion is None:
        if "constant((" in path.read_text():
            pytest.xfail(C64)
        raise view[0]
    return fusion, view


def test_the_vendored_tests_are_all_there() -> None:
    assert len(FILES) == 113
    assert len(REQUESTS) == 81


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_emitter_test_is_a_fusion_of_its_body(path) -> None:
    fusion, view = _loaded(path)
    text = path.read_text()
    if "ENTRY" in text:  # the file calls its fused computation itself
        assert lone_fusion_note(fusion) is None
        return
    assert fusion.computation.name == GENERATED_ENTRY
    body = body_of(fusion)
    assert body is fusion.computation.module.computations[body.name]
    assert [p.shape for p in fusion.operands] == [p.shape for p in body.parameters]
    assert view.wrapped is not None
    assert body.name in view.wrapped
    assert view.threads.notes[0] == view.wrapped
    reduces = _name(path).startswith("gpu/reduce_")
    assert fusion.fusion_kind == ("kInput" if reduces else fusion.fusion_kind)
    if _name(path).startswith(("gpu/transpose/", "gpu/scatter/", "codegen/concatenate/")):
        assert fusion.fusion_kind == "kLoop"


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_emitter_test_gets_thread_maps(path) -> None:
    _, view = _loaded(path)
    why = NOT_MODELLED.get(_name(path))
    if why is None:
        assert view.launch is not None, view.threads.notes
        assert view.threads.outputs
        return
    assert view.launch is None
    assert any(why in note for note in view.threads.notes), view.threads.notes


def _map_for(path, kind: str, hero_name: str, operand: int | None):
    fusion, view = _loaded(path)
    assert view.launch is not None, view.threads.notes
    emitter = emitter_for(view.choice)
    body = body_of(fusion)
    hero = body.by_name[hero_name]
    if kind == "input":
        assert operand is not None
        return (
            emitter.hero_input_map(fusion, view.launch, hero, operand),
            hero.operands[operand].shape.dims,
        )
    # XLA's GetHeroIndex: the root whose hero is named so
    root = next(r for r in computation_outputs(body) if find_hero(r) is hero or r is hero)
    return emitter.root_output_map(fusion, view.launch, root), root.shape.leaves()[0].dims


def _bijection_failure(m, dims) -> str:
    """Why ``m`` is no bijection onto the elements of ``dims`` ("" when it is one)."""
    columns, n = feasible_points(m, BUDGET)
    results = evaluate_results(m, columns, n)
    if len(results) != len(dims):
        return f"{len(results)} results for a rank-{len(dims)} tensor"
    if n != prod(dims):
        return f"{n} threads and loop points for {prod(dims)} elements"
    linear = np.zeros(n, dtype=np.int64)
    for values, size in zip(results, dims, strict=True):
        values = np.asarray(values, dtype=np.int64)
        if n and (values.min() < 0 or values.max() >= size):
            return "an index outside the tensor"
        linear = linear * size + values
    if len(np.unique(linear)) != n:
        return "an element reached twice"
    return ""


@pytest.mark.parametrize(
    ("path", "request_"),
    REQUESTS,
    ids=[f"{_name(p)}:{k}:{h}" + ("" if i is None else f":{i}") for p, (k, h, i) in REQUESTS],
)
def test_thread_id_map_is_the_bijection_xla_asks_for(path, request_) -> None:
    kind, hero, operand = request_
    m, dims = _map_for(path, kind, hero, operand)
    assert m is not None, f"no thread-id map onto {kind} {hero}"
    try:
        why = _bijection_failure(m, tuple(dims))
    except EnumerationLimitError as error:
        pytest.skip(f"too large to enumerate within {BUDGET} points: {error}")
    assert not why, f"{why} in {hloidx.format_map(m)}"


#: XLA's transpose tests with several roots: tiled transposes and side outputs
SEVERAL_ROOTS = [
    "gpu/transpose/multiple_roots.hlo",
    "gpu/transpose/packed_transpose_multiple_heroes.hlo",
    "gpu/transpose/packed_transpose_multiple_roots.hlo",
    "gpu/transpose/packed_transpose_side_output.hlo",
    "gpu/transpose/side_output_and_hero_indexing_match.hlo",
    "gpu/transpose/side_outputs.hlo",
    "gpu/transpose/side_outputs_inplace.hlo",
]


@pytest.mark.parametrize("name", SEVERAL_ROOTS)
def test_every_root_of_a_transpose_fusion_is_written_once(name) -> None:
    # the shared-memory heroes through the write phase, side outputs through the read phase
    # (XLA's TransposeFusion / PackedTranspose): each output element exactly once
    fusion, view = _loaded(EMITTER_TESTS / name)
    plan = view.launch.transpose
    roots = computation_outputs(body_of(fusion))
    assert len(roots) > 1
    assert len(view.threads.outputs) == len(roots)
    assert {r.name for r in plan.side_outputs} < {r.name for r in roots}
    for root, m in zip(roots, view.threads.outputs, strict=True):
        assert not _bijection_failure(m, tuple(root.shape.dims)), root.name


def test_the_bijection_check_can_fail() -> None:
    # the check itself must catch a map that reads an element twice or misses one
    twice = hloidx.parse_map("(d0) -> (d0 floordiv 2), domain: d0 in [0, 7]")
    missing = hloidx.parse_map("(d0) -> (d0 * 2), domain: d0 in [0, 3]")
    exact = hloidx.parse_map("(d0)[s0] -> (s0, d0), domain: d0 in [0, 3], s0 in [0, 1]")
    assert _bijection_failure(twice, (4,)) == "8 threads and loop points for 4 elements"
    assert _bijection_failure(twice, (8,)) == "an element reached twice"
    assert _bijection_failure(missing, (4,)) == "an index outside the tensor"
    assert _bijection_failure(exact, (2, 4)) == ""


# ---------------------------------------------------------------------------
# The emitter interface
# ---------------------------------------------------------------------------


def test_every_emitter_model_implements_the_interface() -> None:
    from hloidx.gpu.emitter_interface import Emitter
    from hloidx.gpu.emitters import EMITTERS

    assert set(EMITTERS) == {
        "loop",
        "concatenate",
        "input-slices",
        "dynamic-update-slice",
        "reduction",
        "transpose",
        "scatter",
    }
    for kind, emitter in EMITTERS.items():
        assert isinstance(emitter, Emitter)
        assert kind in emitter.kinds
    assert emitter_for("triton") is None


def _gpu_imports() -> dict[str, set[str]]:
    """hloidx/gpu's modules and the gpu modules each imports (lazily or not, for type
    checking or not)."""
    import ast

    package = paths.ROOT / "hloidx" / "gpu"
    names = {p.stem for p in package.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level == 1 and module:
                    found.add(module.split(".")[0])
                elif node.level == 1:  # from . import transposes
                    found.update(a.name for a in node.names)
                elif module.startswith("hloidx.gpu"):
                    parts = module.split(".")
                    found.update(parts[2:3] or [a.name for a in node.names])
            elif isinstance(node, ast.Import):
                found.update(
                    a.name.split(".")[2] for a in node.names if a.name.startswith("hloidx.gpu.")
                )
        graph[path.stem] = (found & names) - {path.stem}
    return graph


def test_the_gpu_package_has_no_import_cycle() -> None:
    graph = _gpu_imports()
    assert graph["launch"] >= {"emitters"}  # the graph is read at all
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for other in sorted(graph[name]):
            assert state.get(other) != 1, " -> ".join([*trail, name, other])
            if other not in state:
                visit(other, [*trail, name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    for emitter_module in ("loops", "reductions", "transposes", "scatters"):
        assert not graph[emitter_module] & {"launch", "thread_maps", "emitters", "analysis"}


# ---------------------------------------------------------------------------
# wrap_lone_fusion
# ---------------------------------------------------------------------------

_DUMPED = """%fused_computation.7 (param_0.1: f32[64,32]) -> f32[32,64] {
  %param_0.1 = f32[64,32]{1,0} parameter(0)
  ROOT %transpose.2 = f32[32,64]{1,0} transpose(%param_0.1), dimensions={1,0}
}
"""

_BESIDE_AN_ENTRY = """HloModule m
%fused_reduce (p0: f32[8,256]) -> f32[8] {
  %p0 = f32[8,256] parameter(0)
  %c = f32[] constant(0)
  ROOT %r = f32[8] reduce(%p0, %c), dimensions={1}, to_apply=%add
}
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%x)
}
"""

_PLAIN = """HloModule m
ENTRY e {
  p0 = f32[4,6] parameter(0)
  ROOT t = f32[6,4] transpose(p0), dimensions={1,0}
}
"""


def _parse(text: str):
    module, errors = parse_module_lenient(text, "<test>", "hlo")
    assert not errors
    return module


def test_a_dumped_fused_computation_is_wrapped_as_a_loop_fusion() -> None:
    module = wrap_lone_fusion(_parse(_DUMPED))
    fusion = module.entry.root
    assert (module.entry.name, fusion.opcode, fusion.fusion_kind) == (
        GENERATED_ENTRY,
        "fusion",
        "kLoop",
    )
    assert fusion.name == "fused_computation.7"
    assert not module.computations["fused_computation.7"].is_entry
    view = analyze_fusion(fusion, A6000)
    assert view.choice.kind == "transpose"
    assert "kLoop" in view.wrapped
    assert "no root is a reduction" in view.wrapped


def test_a_fused_computation_beside_an_entry_is_wrapped_as_an_input_fusion() -> None:
    module = wrap_lone_fusion(_parse(_BESIDE_AN_ENTRY))
    fusion = module.entry.root
    assert (fusion.name, fusion.fusion_kind) == ("fused_reduce", "kInput")
    assert "the reduction r" in lone_fusion_note(fusion)
    assert analyze_fusion(fusion, A6000).choice.kind == "reduction"


@pytest.mark.parametrize(
    "text",
    [
        _PLAIN,
        "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n",
        "p = f32[4] parameter(0)\nROOT n = f32[4] negate(p)\n",  # a snippet
        (paths.DATA / "gpu" / "view" / "seed001.hlo").read_text(),  # has its fusions
    ],
    ids=["entry-transpose", "entry-negate", "snippet", "with-fusions"],
)
def test_a_module_that_is_no_lone_fused_computation_is_left_alone(text) -> None:
    module = _parse(text)
    entry, names = module.entry, list(module.computations)
    assert wrap_lone_fusion(module) is module
    assert (module.entry, list(module.computations)) == (entry, names)


# ---------------------------------------------------------------------------
# The commands
# ---------------------------------------------------------------------------


def _run(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output
    return result


def test_threads_analyses_a_lone_fused_computation_without_naming_it() -> None:
    path = EMITTER_TESTS / "gpu" / "reduce_row" / "side_output.hlo"
    result = _run("threads", str(path), "--no-verify")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("fusion (generated_main): reduction (row) emitter")
    assert "synthetic entry generated_main" in result.output
    assert "kind kInput" in result.output


def test_threads_prefers_the_fusion_to_a_body_instruction_of_its_name() -> None:
    # the computation `neg` and its root `neg`: --instruction neg names the fusion
    path = EMITTER_TESTS / "codegen" / "loop" / "vectorize_x4.hlo"
    result = _run("threads", str(path), "--instruction", "neg", "--no-verify", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert (doc["name"], doc["emitter"]) == ("neg", "loop")


def test_threads_without_instruction_needs_a_single_fusion() -> None:
    path = paths.DATA / "gpu" / "view" / "coalescing.hlo"
    result = _run("threads", str(path))
    assert result.exit_code == 2
    assert "name one with --instruction" in result.output


def test_coalescing_says_it_wrapped_the_fused_computation() -> None:
    path = EMITTER_TESTS / "gpu" / "transpose" / "transpose_10.hlo"
    text = _run("coalescing", str(path))
    assert text.exit_code == 0, text.output
    assert "note: the file holds the fused computation fusion on its own" in text.output
    doc = json.loads(_run("coalescing", str(path), "--format", "json").output)
    ((fusion,), (note,)) = doc["fusions"], doc["notes"]
    assert fusion["emitter"] == "transpose"
    assert "kind kLoop" in note


def test_tile_reads_a_lone_fused_computation() -> None:
    path = EMITTER_TESTS / "gpu" / "transpose" / "transpose_10.hlo"
    result = _run("tile", str(path), "--instruction", "fusion", "--tile", "32,32")
    assert result.exit_code == 0, result.output
    assert "fusion" in result.output


@pytest.mark.parametrize(
    "tile_args",
    [("--tile", "32,32"), ("--tile", "auto"), ("--tile", "auto", "--device", "rtx-a6000")],
)
def test_tile_says_it_wrapped_the_fused_computation(tile_args) -> None:
    path = EMITTER_TESTS / "gpu" / "transpose" / "transpose_10.hlo"
    text = _run("tile", str(path), "--instruction", "fusion", *tile_args)
    assert text.exit_code == 0, text.output
    assert "note: the file holds the fused computation fusion on its own" in text.output
    doc = json.loads(
        _run("tile", str(path), "--instruction", "fusion", *tile_args, "--format", "json").output
    )
    assert any("synthetic entry generated_main" in n for n in doc["notes"])


def test_tile_of_an_ordinary_module_has_no_wrapping_note() -> None:
    path = paths.DATA / "gpu" / "view" / "coalescing.hlo"
    fusion = next(
        i.name
        for i in parse_hlo(path.read_text(), str(path)).instructions()
        if i.opcode == "fusion"
    )
    result = _run("tile", str(path), "--instruction", fusion, "--tile", "auto")
    assert result.exit_code == 0, result.output
    assert "synthetic entry" not in result.output
