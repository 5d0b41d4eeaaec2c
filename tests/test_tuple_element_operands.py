"""Tuple-element operands, ``%t#1`` (``%t#1#0``): XLA's dumps (jax 0.12) elide
get-tuple-elements and write the element as the operand. hloidx reads them as XLA's parser
does: one get-tuple-element per element of a computation, made by the parser, named as the
text writes the operand.

Oracles: the same module written with explicit get-tuple-elements (every corpus module that has
them, rewritten to the ``#`` form by a text transform here), the grammar against the line
parser, and XLA's own parser (jaxlib ≥ 0.12, where installed) on what it accepts and rejects.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import paths
import pytest

from hloidx.errors import HloidxError, HloSemanticError, HloSyntaxError
from hloidx.hlo import syntax
from hloidx.hlo.analysis import analyze
from hloidx.hlo.report import instruction_to_json
from hloidx.hlo.syntax import parse_hlo

CORPUS = paths.CORPUS

MODULE = """HloModule m
ENTRY e {
  p = (f32[2], (s32[], f32[3])) parameter(0)
  q = f32[2] parameter(1)
  a = f32[2] add(%s, q)
  ROOT r = (f32[2]) tuple(a)
}
"""


def _xla_reads() -> object | None:
    """jaxlib's HLO text parser, if it reads ``#`` operands (jaxlib ≥ 0.12)."""
    try:
        from jaxlib._hlo import hlo_module_from_text
    except ImportError:
        return None
    try:
        hlo_module_from_text(MODULE % "p#0")
    except Exception:
        return None
    return hlo_module_from_text


# -- reading --------------------------------------------------------------------------------


@pytest.mark.parametrize("written", ["p#0", "%p#0", "p #0", "p# 0", "p#00", "f32[2] %p#0"])
def test_an_element_operand_is_one_get_tuple_element_named_as_written(written: str) -> None:
    module = parse_hlo(MODULE % written)
    add = module.instruction("a")
    element = add.operands[0]
    assert element.name == "p#0"
    assert element.opcode == "get-tuple-element"
    assert element.tuple_index == 0
    assert element.operands == [module.instruction("p")]
    assert str(element.shape) == "f32[2]"
    assert element.implied_element == 0
    # placed just before its first user, in its computation
    names = [i.name for i in module.entry.instructions]
    assert names.index("p#0") == names.index("a") - 1
    assert element.computation is module.entry


def test_nested_elements_and_shared_uses() -> None:
    module = parse_hlo(
        "HloModule m\nENTRY e {\n"
        "  p = (f32[2], (s32[], f32[3])) parameter(0)\n"
        "  n = s32[] negate(p#1#0)\n"
        "  m = s32[] multiply(p#1#0, %p#1#0)\n"
        "  c = f32[3] negate(p#1#1)\n"
        "  ROOT r = (s32[], s32[], f32[3]) tuple(n, m, c)\n}\n"
    )
    names = [i.name for i in module.entry.instructions]
    # XLA's parser makes one get-tuple-element per element (p_1, p_1_0, p_1_1)
    assert names == ["p", "p#1", "p#1#0", "n", "m", "p#1#1", "c", "r"]
    inner = module.instruction("p#1#0")
    assert inner.operands == [module.instruction("p#1")]
    assert module.instruction("m").operands == [inner, inner]
    assert str(module.instruction("p#1").shape) == "(s32[], f32[3])"
    assert module.instruction("p#1#1").implied_element == 1
    assert module.instruction("n").implied_element is None


def test_grammar_and_line_parser_agree_on_element_operands() -> None:
    text = (CORPUS / "rnn_scan.opt.hlo").read_text()
    rewritten, _ = to_element_operands(text, parse_hlo(text))
    fast = parse_hlo(rewritten)
    assert syntax.parse_lines(rewritten, fast.source) is not None  # the line parser read it
    previous = syntax._whole_lines, syntax._fast_parser
    syntax._whole_lines = lambda text, source: None
    try:
        grammar = parse_hlo(rewritten)  # lark's tables driven by the fast path
        syntax._fast_parser = lambda: None
        lark = parse_hlo(rewritten)  # lark alone
    finally:
        syntax._whole_lines, syntax._fast_parser = previous
    for computation in fast.computations.values():
        for other in (grammar, lark):
            assert [_described(i) for i in computation.instructions] == [
                _described(i) for i in other.computations[computation.name].instructions
            ]


def _described(instruction) -> tuple:
    span = instruction.span
    return (
        instruction.name,
        instruction.opcode,
        str(instruction.shape),
        [o.name for o in instruction.operands],
        instruction.attributes,
        (span.start, span.end),
    )


# -- errors ---------------------------------------------------------------------------------

ERRORS = [
    # (operand, error class, column of the caret, caret width, words in the message)
    ("p#9", HloSemanticError, 18, 3, "a tuple of 2 elements"),
    ("p#1#5", HloSemanticError, 18, 5, "p#1 is a tuple of 2 elements"),
    ("q#0", HloSemanticError, 18, 3, "not a tuple"),
    ("p#0#0", HloSemanticError, 18, 5, "not a tuple"),
    ("p#", HloSyntaxError, 19, 1, "element index after '#'"),
    ("p#, q#1", HloSyntaxError, 19, 1, "element index after '#'"),
    ("zz#0", HloSemanticError, 18, 4, "zz names no instruction"),
]


@pytest.mark.parametrize(("operand", "kind", "column", "width", "words"), ERRORS)
def test_malformed_element_operands_are_located(
    operand: str, kind: type, column: int, width: int, words: str
) -> None:
    text = MODULE % operand
    with pytest.raises(HloidxError) as caught:
        parse_hlo(text, "m.hlo")
    error = caught.value
    assert type(error) is kind
    assert words in error.message
    assert (error.span.line, error.span.column) == (5, column)
    assert error.span.end - error.span.start == width
    rendered = error.render()
    assert rendered.startswith(f"m.hlo:5:{column}: error:")
    assert "^" * width in rendered
    reads = _xla_reads()
    if reads is not None:  # XLA's parser rejects it too
        with pytest.raises(Exception, match=r"5:\d+"):
            reads(text)


def test_cli_exits_2_with_one_located_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.hlo"
    path.write_text(MODULE % "p#7")
    result = subprocess.run(
        [sys.executable, "-m", "hloidx", "maps", str(path), "--format", "json"],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert f"{path}:5:18: error: operand p#7 of a: p is a tuple of 2 elements" in result.stderr
    assert "\n    a = f32[2] add(p#7, q)\n" in result.stderr
    assert "\n                   ^^^\n" in result.stderr
    assert "Traceback" not in result.stderr


def test_xla_reads_the_same_element_operands() -> None:
    reads = _xla_reads()
    if reads is None:
        pytest.skip("jaxlib's parser here does not read `%t#i` operands (jaxlib < 0.12)")
    for written in ["p#0", "%p#0", "p #0", "p#00", "f32[2] %p#0"]:
        reads(MODULE % written)  # accepted by XLA, as by hloidx above


# -- the same maps as with explicit get-tuple-elements ----------------------------------------

_INSTRUCTION = re.compile(r"^(\s*(?:ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=\s*)", re.MULTILINE)


def to_element_operands(text: str, module) -> tuple[str, dict[str, str]]:
    """``text`` with every get-tuple-element that is not a ROOT (nor a control predecessor)
    removed and its uses written as XLA's dumps write them, ``%t#i``; and each removed name
    -> the operand written for it."""
    written: dict[str, str] = {}
    removed: set[str] = set()
    names = [i.name for c in module.computations.values() for i in c.instructions]
    assert len(names) == len(set(names)), "the transform needs names unique in the module"
    predecessors = set(re.findall(r"control-predecessors=\{([^}]*)\}", text))
    held = {n.strip().lstrip("%") for group in predecessors for n in group.split(",")}

    def form(instruction) -> str:
        if instruction.name in written:
            return written[instruction.name]
        return instruction.name

    for computation in module.computations.values():
        for instruction in computation.instructions:  # operands come first in XLA's order
            if (
                instruction.opcode == "get-tuple-element"
                and not instruction.is_root
                and instruction.name not in held
            ):
                written[instruction.name] = (
                    f"{form(instruction.operands[0])}#{instruction.tuple_index}"
                )
                removed.add(instruction.name)
    out = []
    for line in text.splitlines(keepends=True):
        head = _INSTRUCTION.match(line)
        if head is None:
            out.append(line)
            continue
        name = head.group(1).split("=")[0].strip().removeprefix("ROOT").strip().lstrip("%")
        if name in removed:
            continue
        start, end = _operand_list(line, head.end())
        operands = re.sub(
            r"(?<![\w.\-%#])(%?)([A-Za-z_][\w.\-]*)(?![\w.\-#])",
            lambda m: m.group(1) + written.get(m.group(2), m.group(2)),
            line[start:end],
        )
        out.append(line[:start] + operands + line[end:])
    return "".join(out), written


def _operand_list(line: str, at: int) -> tuple[int, int]:
    """The offsets of the text inside ``opcode( ... )`` after the shape at ``at``."""
    depth = 0
    position = at
    while True:  # past the shape: a tuple's parentheses balance
        char = line[position]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == " " and depth == 0 and position > at:
            break
        position += 1
    opened = line.index("(", position) + 1
    depth = 1
    position = opened
    while depth:
        depth += {"(": 1, ")": -1}.get(line[position], 0)
        position += 1
    return opened, position - 1


def _corpus_with_tuples() -> Iterator[Path]:
    for path in sorted(CORPUS.glob("*.hlo")):
        if "get-tuple-element(" in path.read_text():
            yield path


def _bodies(analysis) -> dict[str, dict]:
    out = {}
    for ins in analysis.instructions:
        document = instruction_to_json(ins)
        out[document["name"]] = document
    return out


@pytest.mark.parametrize("path", list(_corpus_with_tuples()), ids=lambda p: p.name)
def test_element_operands_give_the_maps_of_explicit_get_tuple_elements(path: Path) -> None:
    text = path.read_text()
    original = parse_hlo(text, path.name)
    rewritten_text, written = to_element_operands(text, original)
    assert written, "the module has get-tuple-elements to rewrite"
    assert (
        "get-tuple-element(" not in rewritten_text
        or any(i.opcode == "get-tuple-element" and i.is_root for i in original.instructions())
        or "control-predecessors" in text
    )
    rewritten = parse_hlo(rewritten_text, path.name)
    before = _bodies(analyze(original))
    after = _bodies(analyze(rewritten))
    compared = 0
    for name, document in before.items():
        # a removed get-tuple-element is now the one named as its operand is written
        if name in written and written[name] not in after:
            # read by nothing: XLA's printer elides it, and no operand brings it back
            assert not any(name in (o["name"] for o in d["operands"]) for d in before.values())
            continue
        other = after[written.get(name, name)]
        assert other["opcode"] == document["opcode"]
        assert other["shape"] == document["shape"]
        assert other["notes"] == document["notes"]
        assert len(other["operands"]) == len(document["operands"])
        for mine, theirs in zip(document["operands"], other["operands"], strict=True):
            assert theirs["name"] == written.get(mine["name"], mine["name"])
            if mine["name"] in written:  # the operand's element, as its `#i` says
                assert theirs["tuple_element"] == int(written[mine["name"]].rsplit("#", 1)[1])
            else:
                assert theirs["tuple_element"] == mine["tuple_element"]
            for key in mine:
                if key not in ("name", "tuple_element"):
                    assert theirs[key] == mine[key], (name, mine["name"], key)
            compared += 1
    assert compared
    # nothing more than the originals: as many get-tuple-elements or fewer (shared ones)
    assert len(after) <= len(before)


def test_element_operands_give_the_same_summary_cost_threads_and_tiles() -> None:
    import hloidx

    text = (CORPUS / "rnn_scan.opt.hlo").read_text()
    original = parse_hlo(text)
    rewritten_text, written = to_element_operands(text, original)
    rewritten = parse_hlo(rewritten_text)
    mine, theirs = (hloidx.analyze(m).summary() for m in (original, rewritten))
    assert _without_names(mine.as_dict()) == _without_names(theirs.as_dict())
    fusion = "bitcast_dynamic-update-slice_fusion"  # reads arg_tuple.1#2 in the `#` form
    views = [
        lambda m: {"kernels": hloidx.cost(m, "h100").as_dict()["kernels"]},
        lambda m: hloidx.threads(m, fusion).as_dict(),
        lambda m: hloidx.tile(m, fusion, "auto").as_dict(),
        lambda m: hloidx.tile(m, fusion, (2, 3, 4)).as_dict(),
    ]
    for view in views:
        explicit, elided = view(original), view(rewritten)
        renamed = re.sub(
            r"(?<![\w.\-#])([A-Za-z_][\w.\-]*)(?![\w.\-#])",
            lambda m: written.get(m.group(1), m.group(1)),
            json.dumps(explicit),
        )
        assert json.loads(renamed) == elided


def _without_names(document):
    if isinstance(document, dict):
        return {k: _without_names(v) for k, v in document.items() if k not in ("name", "operand")}
    if isinstance(document, list):
        return sorted((_without_names(v) for v in document), key=repr)
    return document
