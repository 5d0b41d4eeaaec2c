"""``hloidx lsp`` end to end: a real LSP client (pytest-lsp) speaking to the server process.

One server for the whole module; each test opens its own document. Expected ranges are found
in the test's own text (``_where``), expected maps come from XLA's test expectations
(``tests/data/xla/analysis_cases.json``), never from hloidx's output.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys

import paths
import pytest

pytest.importorskip("pygls")
pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

from hloidx.lsp.document import content_hash  # noqa: E402

pytestmark = pytest.mark.asyncio(loop_scope="module")

DUMP = paths.CORPUS / "cnn_pool_batchnorm.xla_dump.after_optimizations.hlo"
CASES = {c["test"]: c for c in json.loads((paths.XLA_TESTS / "analysis_cases.json").read_text())}


@pytest_lsp.fixture(
    scope="module",
    config=ClientServerConfig(server_command=[sys.executable, "-m", "hloidx", "lsp"]),
)
async def client(lsp_client: LanguageClient):
    # the server asks for lenses and hints again once a file is fully analysed, and says so
    for method in (types.WORKSPACE_CODE_LENS_REFRESH, types.WORKSPACE_INLAY_HINT_REFRESH):
        lsp_client.feature(method)(lambda *args: None)
    lsp_client.feature("hloidx/analysed")(_analysed)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            initialization_options={"hloidx": {"device": "h100"}},
        )
    )
    yield
    await lsp_client.shutdown_session()


_opened = 0
ANALYSED: list[tuple[str, str]] = []  # (name, content hash) of each text fully analysed


def _analysed(*args) -> None:
    ANALYSED.append((args[-1].name, args[-1].digest))


async def _open(client: LanguageClient, text: str, suffix: str = ".hlo") -> str:
    """Open ``text`` as a new document and wait for its diagnostics."""
    global _opened
    _opened += 1
    uri = f"untitled:doc{_opened}{suffix}"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "hlo", 1, text))
    )
    for _ in range(200):
        if uri in client.diagnostics:
            break
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    else:
        raise AssertionError("no diagnostics")
    # the parse's errors come first, the index's warnings after: a request answers once both
    # are in (the server's messages arrive in order)
    await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
    )
    return uri


def _where(text: str, needle: str, after: str = "", nth: int = 0) -> types.Position:
    """The position of ``needle`` (its ``nth`` occurrence after ``after``) in ``text``."""
    offset = text.index(after) if after else 0
    for _ in range(nth + 1):
        offset = text.index(needle, offset)
        found, offset = offset, offset + 1
    line = text.count("\n", 0, found)
    return types.Position(line, found - (text.rfind("\n", 0, found) + 1))


def _span(text: str, needle: str, after: str = "") -> types.Range:
    start = _where(text, needle, after)
    return types.Range(start, types.Position(start.line, start.character + len(needle)))


DAMAGED = """HloModule damaged
ENTRY e {
  p0 = f32[2] parameter(0)
  a = f32[2] add(p0, p9)
  b = f32[3] negate(p0)
  c = f32[2] frobnicate(p0)
  ROOT d = f32[2] multiply(p0, p0), zzz=1
}
"""


async def test_diagnostics_of_a_damaged_file(client: LanguageClient):
    uri = await _open(client, DAMAGED)
    got = {(d.range.start.line, d.range.start.character): d for d in client.diagnostics[uri]}
    error, warning = types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning
    expected = [
        (_span(DAMAGED, "p9"), error, "p9"),  # an operand naming nothing
        (_span(DAMAGED, "b = f32[3] negate(p0)"), error, "negate"),  # the verifier's shape rule
        (_span(DAMAGED, "frobnicate"), warning, "unknown opcode"),
        (_span(DAMAGED, "zzz"), warning, "unknown attribute"),
    ]
    assert len(got) == len(expected)
    for where, severity, words in expected:
        d = got[(where.start.line, where.start.character)]
        assert d.range == where
        assert d.severity == severity
        assert words in d.message


async def test_a_cut_off_file_and_garbage_still_answer(client: LanguageClient):
    cut = DAMAGED[: DAMAGED.index("multiply(p0") + 10]
    uri = await _open(client, cut)
    last = client.diagnostics[uri][-1]
    end = _where(cut + "\0", "\0")  # the error is at the end of the text
    assert last.range.start == end
    assert last.severity == types.DiagnosticSeverity.Error
    garbage = bytes(range(256)).decode("latin-1") * 40
    uri = await _open(client, garbage)
    assert client.diagnostics[uri]
    assert client.diagnostics[uri][0].severity == types.DiagnosticSeverity.Error
    # the server is still there and answers
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 3))
    )
    assert hover is None


def _maps_after(text: str, heading: str) -> list[str]:
    """The maps of the hover section that opens with ``heading``."""
    section = text[text.index(heading) :]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block is not None
    return [line for line in block.group(1).splitlines() if line]


def _normal(map_text: str) -> str:
    return " ".join(map_text.split())


@pytest.mark.parametrize(
    ("case", "needle", "after"),
    [
        ("FusionOpWithReducedSlice", "p0)", "p0_slice ="),
        ("FusionOpWithTransposeOfTranspose", "p0)", "rhs_transpose_1 ="),
    ],
)
async def test_hover_on_a_fused_parameter_use_shows_xla_map(client, case, needle, after):
    text = CASES[case]["hlo"]
    (entry,) = [e for e in CASES[case]["expected"] if e["kind"] == "output_to_input"]
    expected = [o["map"] for o in entry["operands"] if o["operand_id"] == 0]
    uri = await _open(client, text)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), _where(text, needle, after))
    )
    assert hover is not None
    body = hover.contents.value
    maps = _maps_after(body, "fed by `%fusion`")
    assert [_normal(m) for m in maps] == [_normal(m) for m in expected]
    assert "status: exact" in body[body.index("fed by") :]


async def test_definition_of_a_called_computation_is_its_header(client: LanguageClient):
    text = DUMP.read_text()
    uri = await _open(client, text)
    position = _where(text, "fused_computation.3,", "calls=%fused_computation.3")
    got = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), position)
    )
    header = next(
        i for i, line in enumerate(text.splitlines()) if line.startswith("%fused_computation.3 ")
    )
    assert [g.range.start.line for g in got] == [header]
    assert got[0].range.start.character == 0  # `%fused_computation.3` opens the line
    # hover on the computation name: who calls it (found here by hand)
    callers = re.findall(
        r"^  (?:ROOT )?%([\w.\-]+) = .*calls=%fused_computation\.3[,\s]", text, re.M
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), position)
    )
    assert f"called by {len(callers)}:" in hover.contents.value
    for name in callers:
        assert f"`%{name}` (fusion, `calls=`)" in hover.contents.value
    # hover on the fusion: its cost row on the device the client's settings name
    hover = await client.text_document_hover_async(
        types.HoverParams(
            types.TextDocumentIdentifier(uri), _where(text, callers[0] + " =", "ENTRY")
        )
    )
    assert "**cost** (estimate, h100, hloidx model)" in hover.contents.value


async def test_references_of_a_parameter(client: LanguageClient):
    text = DUMP.read_text()
    uri = await _open(client, text)
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("%fused_computation.3 "))
    end = next(i for i in range(header, len(lines)) if lines[i] == "}")
    # every mention of the parameter in its computation: signature, definition, uses
    expected = sorted(
        (i, m.start()) for i in range(header, end) for m in re.finditer(r"%?param_0\.5\b", lines[i])
    )
    assert len(expected) >= 3
    position = types.Position(expected[1][0], expected[1][1] + 2)
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            context=types.ReferenceContext(include_declaration=True),
            text_document=types.TextDocumentIdentifier(uri),
            position=position,
        )
    )
    assert sorted((r.range.start.line, r.range.start.character) for r in refs) == expected
    # and the parameter's definition leads to the fusion operand that feeds it
    definition_line = next(i for i in range(header, end) if "%param_0.5 = " in lines[i])
    got = await client.text_document_definition_async(
        types.DefinitionParams(
            types.TextDocumentIdentifier(uri),
            _where(text, "param_0.5 =", lines[definition_line]),
        )
    )
    caller = next(i for i, line in enumerate(lines) if "calls=%fused_computation.3," in line)
    operand = lines[caller][lines[caller].index("fusion(") + 7 :].split(",")[0]
    assert [
        (g.range.start.line, lines[caller][g.range.start.character :][: len(operand)]) for g in got
    ] == [(caller, operand)]


async def test_outline_of_a_dump(client: LanguageClient):
    text = DUMP.read_text()
    uri = await _open(client, text)
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
    )
    headers = re.findall(r"^(ENTRY )?%([\w.\-]+) .*\{$", text, re.M)
    entry = next(name for is_entry, name in headers if is_entry)
    others = [name for is_entry, name in headers if not is_entry]
    assert [s.name for s in symbols] == [entry, *others]
    for symbol in symbols:
        block = text[text.index(f"%{symbol.name} ") :]
        block = block[: block.index("\n}")]
        names = re.findall(r"^  (?:ROOT )?%([\w.\-]+) = ", block, re.M)
        assert [c.name for c in symbol.children or []] == names
    # and the workspace knows them
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams("fused_computation.3"))
    assert "fused_computation.3" in {s.name for s in found}


TUPLE_ELEMENTS = """HloModule elements
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = s32[] parameter(1)
  t = (f32[4], s32[]) tuple(p0, p1)
  ROOT n = f32[4] negate(%t#0)
}
"""


async def test_a_tuple_element_operand(client: LanguageClient):
    uri = await _open(client, TUPLE_ELEMENTS)
    use = _where(TUPLE_ELEMENTS, "t#0")
    got = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), use)
    )
    assert [g.range for g in got] == [_span(TUPLE_ELEMENTS, "t", "  t =")]
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            context=types.ReferenceContext(include_declaration=True),
            text_document=types.TextDocumentIdentifier(uri),
            position=use,
        )
    )
    assert len(refs) == 2
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), use)
    )
    assert "tuple element `#0` of `%t`: `f32[4]`" in hover.contents.value
    if not client.diagnostics[uri]:  # a parser that reads `#` (XLA's newest dumps write it)
        # negate reads element 0 of t elementwise: the identity on its 4 elements
        assert "(d0) -> (d0), domain: d0 in [0, 3]" in hover.contents.value


async def test_hover_on_metadata_and_lenses(client: LanguageClient):
    text = DUMP.read_text()
    uri = await _open(client, text)
    line = next(i for i, s in enumerate(text.splitlines()) if "calls=%fused_computation.3," in s)
    row = text.splitlines()[line]
    frame = int(re.search(r"stack_frame_id=(\d+)", row).group(1))
    hover = await client.text_document_hover_async(
        types.HoverParams(
            types.TextDocumentIdentifier(uri),
            types.Position(line, row.index("stack_frame_id") + 3),
        )
    )
    # the frame's location, found here from the tables by hand
    frames = dict(re.findall(r"^(\d+) \{file_location_id=(\d+)", text, re.M))
    locations = re.findall(
        r"^(\d+) \{file_name_id=(\d+) function_name_id=(\d+) line=(\d+)", text, re.M
    )
    location = next(loc for loc in locations if loc[0] == frames[str(frame)])
    assert f":{location[3]}`" in hover.contents.value
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(uri))
    )
    assert lenses
    lens = await client.code_lens_resolve_async(lenses[0])
    assert "(estimate, h100)" in lens.command.title or "cost:" in lens.command.title


async def test_inlay_hints_show_operands_not_read_exactly_once(client: LanguageClient):
    text = CASES["FusionOpWithReducedSlice"]["hlo"]
    uri = await _open(client, text)
    end = types.Position(text.count("\n") + 1, 0)
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), end)
        )
    )
    got = {(h.position.line, h.position.character): h.label for h in hints}
    # by hand: the slice reads 16*32*128 of the 150*64*1024 elements (0.67%), each once; the
    # reduce reads its init value once per output element (32); p0_slice is read exactly once
    share = f"{16 * 32 * 128 / (150 * 64 * 1024) * 100:.2g}% read"
    expected = {}
    for name, after, label in [
        ("p0)", "p0_slice =", share),
        ("p0_init)", "reduce(", "×32"),
        ("p0,", "fusion(", share),
        ("p0_init)", "fusion(", "×32"),
    ]:
        at = _where(text, name, after)
        expected[(at.line, at.character + len(name) - 1)] = label  # just after the name
    assert got == expected


async def test_a_change_is_analysed_again(client: LanguageClient):
    uri = await _open(client, DAMAGED)
    assert client.diagnostics[uri]
    fixed = DAMAGED.replace("p9", "p0").replace("f32[3]", "f32[2]")
    fixed = fixed.replace("frobnicate", "negate").replace(", zzz=1", "")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(2, uri),
            [types.TextDocumentContentChangeWholeDocument(fixed)],
        )
    )
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
    )
    assert [c.name for c in symbols[0].children] == ["p0", "a", "b", "c", "d"]
    assert not client.diagnostics[uri]
    # the background analysis runs again for the new text, and says when it is done
    done = (uri, content_hash(fixed))
    for _ in range(100):
        if done in ANALYSED:
            break
        await asyncio.wait_for(client.wait_for_notification("hloidx/analysed"), 60)
    assert done in ANALYSED


MLIR = """func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %arg0, %arg9 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


async def test_stablehlo_diagnostics(client: LanguageClient):
    uri = await _open(client, MLIR, suffix=".mlir")
    (d,) = client.diagnostics[uri]
    assert d.range == _span(MLIR, "%arg9")
    assert "%arg9" in d.message
    uri = await _open(client, MLIR.replace("%arg9", "%arg0"), suffix=".mlir")
    assert not client.diagnostics[uri]


MLIR_ERRORS = """func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %nope : tensor<4xf32>
  %1 = stablehlo.broadcast_in_dim %arg1, sizes = [] : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.multiply %arg0, %arg1 : tensor<5xf32>
  %3 = stablehlo.negate %0 : tensor<4xf32>
  %4 = stablehlo.negate %arg1 : tensor<4xf32>
  return %4 : tensor<4xf32>
}
"""


async def test_stablehlo_independent_errors_are_each_diagnosed_once(client: LanguageClient):
    # an unknown value (line 1, 0-based; character 28), a broadcast without `dims` (line 2)
    # and a result of 5 elements for a multiply of 4 (line 3), each at its op; the negate of
    # line 4 reads the failed %0: no diagnostic of its own
    uri = await _open(client, MLIR_ERRORS, suffix=".mlir")
    got = sorted(client.diagnostics[uri], key=lambda d: d.range.start.line)
    assert [(d.range.start.line, d.range.start.character) for d in got] == [
        (1, 28),
        (2, 2),
        (3, 2),
    ]
    assert got[0].range.end == types.Position(1, 33)  # the whole of `%nope`
    assert "%nope" in got[0].message
    assert "missing attribute dims" in got[1].message
    assert "[5]" in got[2].message
    # the valid negate of line 5 still lowers: its hover shows the element-for-element map
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(5, 10))
    )
    assert "negate(" in hover.contents.value
    assert "(d0) -> (d0), domain: d0 in [0, 3]" in hover.contents.value
    # two errors: the broadcast repaired
    two = MLIR_ERRORS.replace("sizes = []", "dims = [0]")
    uri = await _open(client, two, suffix=".mlir")
    got = sorted(client.diagnostics[uri], key=lambda d: d.range.start.line)
    assert [(d.range.start.line, d.range.start.character) for d in got] == [(1, 28), (3, 2)]


TWO_ERRORS = """HloModule two_errors
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] add(p, q)
  b = f32[4] frobnicate(a)
  ROOT d = f32[4] negate(p)
}
"""


async def test_two_independent_errors_are_both_diagnosed(client: LanguageClient):
    # an unknown operand on one line, an unknown opcode on the next (in an instruction that
    # reads the broken one): two diagnostics, each on its own mistake
    uri = await _open(client, TWO_ERRORS)
    got = sorted(client.diagnostics[uri], key=lambda d: d.range.start.line)
    assert [d.range for d in got] == [
        _span(TWO_ERRORS, "q", "add("),
        _span(TWO_ERRORS, "frobnicate"),
    ]
    assert "operand q" in got[0].message
    assert "unknown opcode 'frobnicate'" in got[1].message


CALL_MLIR = (paths.DATA / "stablehlo" / "call.mlir").read_text()


async def test_stablehlo_hover_shows_the_maps_of_the_hlo_it_lowers_to(client: LanguageClient):
    uri = await _open(client, CALL_MLIR, suffix=".mlir")
    assert not client.diagnostics[uri]
    # %1 broadcasts the scalar %cst to 4 elements: XLA's broadcast map (d0) -> () over
    # d0 in [0, 3], each of the 4 outputs reading the one element (reads 4 of 1)
    where = _where(CALL_MLIR, "%1 = stablehlo.broadcast_in_dim")
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), where)
    )
    text = hover.contents.value
    assert "stablehlo.broadcast_in_dim" in text
    assert "broadcast(" in text  # the HLO instruction it lowers to
    assert "(d0) -> (), domain: d0 in [0, 3]" in text
    assert "distinct 1, reads 4" in text
    assert hover.range == _span(CALL_MLIR, "%1", "%cst = ")
    # on the op name of the called function's multiply: both operands read element for element
    where = _where(CALL_MLIR, "stablehlo.multiply")
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), where)
    )
    text = hover.contents.value
    assert "multiply(" in text
    assert text.count("(d0) -> (d0), domain: d0 in [0, 3]") == 2


async def test_stablehlo_definition_references_and_outline(client: LanguageClient):
    uri = await _open(client, CALL_MLIR, suffix=".mlir")
    doc = types.TextDocumentIdentifier(uri)
    # %0 read by the add of @main is the result of the call on its first line
    use = _where(CALL_MLIR, "%0", "stablehlo.add")
    (location,) = await client.text_document_definition_async(types.DefinitionParams(doc, use))
    assert location.range == _span(CALL_MLIR, "%0", "%0 = call")
    assert location.range.start == _where(CALL_MLIR, "%0 = call")
    # `call @"<lambda>"` goes to the function's own name
    (location,) = await client.text_document_definition_async(
        types.DefinitionParams(doc, _where(CALL_MLIR, '@"<lambda>"'))
    )
    assert location.range.start == _where(CALL_MLIR, '@"<lambda>"', "func.func private")
    # %cst of @main: defined once, read once (by the broadcast); @"<lambda>"'s own %cst is
    # another value
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            context=types.ReferenceContext(include_declaration=True),
            text_document=doc,
            position=_where(CALL_MLIR, "%cst"),
        )
    )
    assert sorted((r.range.start.line, r.range.start.character) for r in refs) == sorted(
        [
            (p.line, p.character)
            for p in (_where(CALL_MLIR, "%cst"), _where(CALL_MLIR, "%cst", "broadcast_in_dim"))
        ]
    )
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(doc))
    outline = [(s.name, [c.name for c in s.children or []]) for s in symbols]
    assert outline == [
        ("main", ["%0", "%cst", "%1", "%2"]),
        ('"<lambda>"', ["%cst", "%0", "%1"]),
    ]
