"""The HLO text parser (hloidx.hlo.syntax) and its printer (hloidx.hlo.printer).

Oracles: instruction and computation counts from line regexes over the raw text, the structure
a hypothesis strategy intended when it wrote a module, and hand-written tables of inputs with
the expected location of their error.
"""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path

import paths
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ir_data import ir_as_data

from hloidx.errors import HloidxError, HloSemanticError, HloSyntaxError
from hloidx.hlo.ir import HloModule, Layout, Shape
from hloidx.hlo.printer import format_module, format_shape
from hloidx.hlo.shape_text import MAX_TUPLE_DEPTH, literal_element_count
from hloidx.hlo.syntax import build_grammar, parse_hlo, parse_hlo_lenient

CORPUS = sorted(paths.CORPUS.glob("*.hlo"))
SEED_000 = next(paths.SEEDS.glob("000_*.txt"))
XLA_CASES = paths.XLA_TESTS / "analysis_cases.json"


def structure(module: HloModule) -> tuple:
    """Everything the round trip must keep, as plain data."""
    return ir_as_data(module)


# ---------------------------------------------------------------------------------------------
# The grammar
# ---------------------------------------------------------------------------------------------


def test_grammar_builds_strict() -> None:
    pytest.importorskip("interegular")  # lark's strict mode needs it (lark[interegular])
    build_grammar(strict=True)


# ---------------------------------------------------------------------------------------------
# Real HLO: the corpus, XLA's test modules, the seed document
# ---------------------------------------------------------------------------------------------

INSTRUCTION_LINE = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+)\s*=\s", re.MULTILINE)
COMPUTATION_LINE = re.compile(
    r"^(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$|^(ENTRY\s+)?%?([\w.\-]+)\s*\{\s*$", re.MULTILINE
)
OPCODE_AFTER_SHAPE = re.compile(r"\s([a-z][\w\-]*)\(")


def independent_instructions(text: str) -> list[tuple[str, str]]:
    """(name, opcode) of every instruction line, by regular expression alone."""
    out = []
    for match in INSTRUCTION_LINE.finditer(text):
        rest = text[match.end() - 1 : text.find("\n", match.end())]
        opcode = OPCODE_AFTER_SHAPE.search(rest)
        out.append((match.group(2), opcode.group(1) if opcode else ""))
    return out


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_parses_with_independent_count(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    module = parse_hlo(text, str(path))
    parsed = [(i.name, i.opcode) for i in module.instructions()]
    assert len(parsed) == len(independent_instructions(text))
    assert sorted(parsed) == sorted(independent_instructions(text))
    assert len(module.computations) == len(COMPUTATION_LINE.findall(text))
    assert module.entry is not None
    assert module.entry.root is not None
    entry_line = re.search(r"^ENTRY\s+%?([\w.\-]+)", text, re.MULTILINE)
    assert entry_line is not None
    assert module.entry.name == entry_line.group(1)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_round_trips(path: Path) -> None:
    module = parse_hlo(path.read_text(encoding="utf-8"), str(path))
    again = parse_hlo(format_module(module), "printed")
    assert structure(again) == structure(module)


def _xla_parser():
    try:
        from jaxlib import _hlo  # XLA's own C++ parser, when jaxlib is installed
    except ImportError:
        return None
    return getattr(_hlo, "hlo_module_from_text", None)


XLA_LINE = re.compile(r"^(?:ROOT )?%?(\S+) = (.*?) ([a-z][\w\-]*)\(")
LAYOUT = re.compile(r"\{[^{}]*\}")


def _profile(opcode: str, shape_text: str, operands: tuple[str, ...]) -> tuple:
    return opcode, LAYOUT.sub("", re.sub(r"/\*.*?\*/", "", shape_text)), operands


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_corpus_agrees_with_xla_parser(path: Path) -> None:
    """Opcodes, shapes and operand edges as XLA itself reads the same text.

    XLA renames instructions to make names unique across the module, so instructions are
    compared by (opcode, shape, operand opcodes) profiles; layouts are dropped because XLA
    fills in default ones.
    """
    from_text = _xla_parser()
    if from_text is None:
        pytest.skip("jaxlib is not installed")
    text = path.read_text(encoding="utf-8")
    theirs = []
    for computation in from_text(text).computations():
        for instruction in computation.instructions():
            match = XLA_LINE.match(instruction.to_string())
            assert match, instruction.to_string()[:120]
            operand_opcodes = tuple(
                XLA_LINE.match(o.to_string()).group(3) for o in instruction.operands()
            )
            theirs.append(_profile(match.group(3), match.group(2), operand_opcodes))
    ours = [
        _profile(i.opcode, format_shape(i.shape), tuple(o.opcode for o in i.operands))
        for i in parse_hlo(text, str(path)).instructions()
    ]
    assert sorted(ours) == sorted(theirs)


def _xla_cases() -> list[dict]:
    return json.loads(XLA_CASES.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", _xla_cases(), ids=lambda c: c["test"])
def test_xla_test_modules_parse(case: dict) -> None:
    module = parse_hlo(case["hlo"], case["test"])
    assert len(module.instructions()) == len(INSTRUCTION_LINE.findall(case["hlo"]))
    assert module.entry is not None


def _seed_snippets() -> list[str]:
    if SEED_000 is None:
        return []
    text = SEED_000.read_text(encoding="utf-8", errors="replace")
    return [b for b in re.findall(r"```c[^\n]*\n(.*?)```", text, re.S) if "parameter(" in b]


def test_seed_snippets_parse_except_the_shapeless_dynamic_slice() -> None:
    snippets = _seed_snippets()
    assert len(snippets) >= 20
    rejected = []
    for snippet in snippets:
        try:
            module = parse_hlo(snippet, "seed")
        except HloSyntaxError as error:
            rejected.append((snippet, error))
            continue
        assert len(module.instructions()) == len(INSTRUCTION_LINE.findall(snippet))
    # The document's dynamic-slice line `ds = dynamic-slice(...)` has no result shape: XLA's
    # parser rejects it too. It must be the only rejection, located at the opcode.
    assert len(rejected) == 1
    snippet, error = rejected[0]
    assert "ds = dynamic-slice(" in snippet
    line = next(n for n, text in enumerate(snippet.splitlines(), 1) if text.startswith("ds ="))
    assert (error.span.line, error.span.column) == (line, 6)
    assert "expected a shape such as f32[10,20]" in error.message


# ---------------------------------------------------------------------------------------------
# What XLA prints: shapes, names, literals, attributes, module forms
# ---------------------------------------------------------------------------------------------

ELEMENT_TYPES = [
    "pred",
    "s2",
    "s4",
    "s8",
    "s16",
    "s32",
    "s64",
    "u2",
    "u4",
    "u8",
    "u16",
    "u32",
    "u64",
    "f8e4m3fn",
    "f8e5m2",
    "f8e4m3b11fnuz",
    "f8e4m3fnuz",
    "f8e5m2fnuz",
    "f8e3m4",
    "f8e4m3",
    "f8e8m0fnu",
    "f4e2m1fn",
    "bf16",
    "f16",
    "f32",
    "f64",
    "c64",
    "c128",
]


def only_shape(shape_text: str) -> Shape:
    return parse_hlo(f"p = {shape_text} parameter(0)").entry.root.shape


@pytest.mark.parametrize("element_type", ELEMENT_TYPES)
def test_shape_every_element_type(element_type: str) -> None:
    assert only_shape(f"{element_type}[3,4]{{1,0}}") == Shape(
        element_type, (3, 4), (), Layout((1, 0))
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("f32[]", Shape("f32")),
        ("f32[10, 20, 30]", Shape("f32", (10, 20, 30))),
        ("f32[2,3]{0,1}", Shape("f32", (2, 3), (), Layout((0, 1)))),
        ("f32[2,3] {0, 1}", Shape("f32", (2, 3), (), Layout((0, 1)))),
        (
            "bf16[8,128]{1,0:T(8,128)S(1)}",
            Shape("bf16", (8, 128), (), Layout((1, 0), "T(8,128)S(1)")),
        ),
        ("f32[<=10]", Shape("f32", (10,), (True,))),
        ("f32[?,4]", Shape("f32", (-1, 4), (True, False))),
        ("s32[<=5,3]{1,0}", Shape("s32", (5, 3), (True, False), Layout((1, 0)))),
        ("token[]", Shape("token")),
        ("()", Shape("tuple", tuple_shapes=())),
        (
            "(f32[2]{0}, (s32[], pred[3]))",
            Shape(
                "tuple",
                tuple_shapes=(
                    Shape("f32", (2,), (), Layout((0,))),
                    Shape("tuple", tuple_shapes=(Shape("s32"), Shape("pred", (3,)))),
                ),
            ),
        ),
    ],
)
def test_shape_forms(text: str, expected: Shape) -> None:
    assert only_shape(text) == expected
    assert only_shape(format_shape(expected)) == expected


@pytest.mark.parametrize(
    ("literal", "shape", "count"),
    [
        ("{ {1, 2}, {3, 4} }", "f32[2,2]", 4),
        ("-inf", "f32[]", 1),
        ("inf", "f32[]", 1),
        ("nan", "f32[]", 1),
        ("-nan(0x400001)", "f32[]", 1),  # a payload fits the mantissa (XLA refuses wider)
        ("true", "pred[]", 1),
        ("{true, false, true}", "pred[3]", 3),
        ("0x1F", "s32[]", 1),
        ("1.5e-3", "f64[]", 1),
        ("{(1, 2), (3, 4)}", "c64[2]", 2),
        ("{}", "f32[0]", 0),
        ("{...}", "f32[100]", None),
        ("7", "bf16[17,22]", 1),  # XLA broadcasts a lone scalar literal
    ],
)
def test_constant_literal_kept_raw(literal: str, shape: str, count: int | None) -> None:
    module = parse_hlo(f"c = {shape} constant({literal})")
    assert module.entry.root.literal == literal
    if count is not None:
        assert literal_element_count(literal) == count


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("dimensions", "{1,0}"),
        ("slice", "{[0:10:1], [2:5]}"),
        ("padding", "1_4_1x4_8_0"),
        ("padding", "-1_-2x0_0_1"),
        (
            "window",
            "{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=0x1}",
        ),
        ("dim_labels", "b01f_01io->b01f"),
        ("to_apply", "%add.1"),
        ("calls", "fused_computation.12"),
        ("branch_computations", "{%a, %b}"),
        ("metadata", '{op_name="jit(f)/add" source_file="models.py" source_line=12}'),
        ("backend_config", '"{\\"x\\": {\\"y\\": [1, 2]}}"'),
        (
            "backend_config",
            '{"fusion_config":{"kind":"__ynn_fusion"},"outer_dimension_partitions":[]}',
        ),
        ("backend_config", '{name = "x", flag = true, n = 4 : i64}'),
        ("frontend_attributes", '{_xla_attr="{\\"a\\": \\"}{\\"}", b="x,y"}'),
        ("sharding", "{devices=[1,2]<=[2]}"),
        ("sharding", "{replicated}"),
        ("sharding", "{{replicated}, {maximal device=0}, {devices=[2,1]0,1}}"),
        ("replica_groups", "{{0,1},{2,3}}"),
        ("replica_groups", "[2,2]<=[4]"),
        ("replica_groups", "[2,2]<=[2,2]T(1,0)"),
        ("output_to_operand_aliasing", "{{0}: (0, {})}"),
        ("custom_call_target", '"TopK"'),
        ("api_version", "API_VERSION_STATUS_RETURNING"),
        ("kind", "kLoop"),
        ("index_vector_dim", "-1"),
        ("deep", "{a={b={c={d={e={f=1}}}}}}"),
    ],
)
def test_attribute_value_kept_raw_with_offset(key: str, value: str) -> None:
    text = f"p0 = f32[4] parameter(0)\nROOT x = f32[4] custom-call(p0), {key}={value}, after=1"
    root = parse_hlo(text).entry.root
    assert root.attributes[key] == value
    assert root.attributes["after"] == "1"
    offset = root.attribute_offsets[key]
    assert text[offset : offset + len(value)] == value


def test_module_header_and_debug_tables() -> None:
    header = (
        "HloModule jit_f, is_scheduled=true, "
        "entry_computation_layout={(f32[2]{0}, /*index=1*/s32[])->f32[2]{0}}, "
        "allow_spmd_sharding_propagation_to_output={true}, num_partitions=2, replica_count=1, "
        "input_output_alias={ {0}: (0, {}, may-alias) }"
    )
    text = (
        header
        + """

FileNames
1 "models.py"

FunctionNames
1 "<module>"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

%add.2 (a.1: f32[], b-2: f32[]) -> f32[] {
  %a.1 = f32[] parameter(0)
  %b-2 = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a.1, f32[] %b-2) // a line comment
}

ENTRY %main.3 (p: f32[2], q: s32[]) -> (f32[2], s32[]) {
  %p = f32[2]{0} parameter(0), metadata={op_name="p" stack_frame_id=1}
  %q = s32[] parameter(1)
  %r = f32[] reduce(%p, /*index=1*/ f32[] %c), dimensions={0}, to_apply=%add.2
  %c = f32[] constant(0)
  ROOT %t = (f32[2]{0}, s32[]) tuple(%p, %q)
}
"""
    )
    module = parse_hlo(text, "m.hlo")
    assert module.name == "jit_f"
    assert module.attributes["num_partitions"] == "2"
    assert module.attributes["input_output_alias"] == "{ {0}: (0, {}, may-alias) }"
    assert list(module.computations) == ["add.2", "main.3"]
    assert module.entry is module.computations["main.3"]
    assert [o.name for o in module.computations["add.2"].root.operands] == ["a.1", "b-2"]
    reduce = module.entry.by_name["r"]
    assert [o.name for o in reduce.operands] == ["p", "c"]  # used before its definition
    assert reduce.called_computations["to_apply"] == [module.computations["add.2"]]
    assert module.entry.root.name == "t"
    assert module.entry.root.shape.is_tuple


def test_single_computation_and_multiline_instruction() -> None:
    module = parse_hlo(
        """f {
      p0 = f32[20] parameter(0)
      ROOT reduce = (f32[20]{0}, f32[20]{0})
        reduce(p0, p0,
               p0, p0),
        dimensions={}, to_apply=f
    }""",
        verify=False,
    )
    assert module.entry.name == "f"
    assert len(module.entry.root.operands) == 4


def test_snippet_without_root_takes_last_instruction() -> None:
    module = parse_hlo("p0 = f32[3] parameter(0)\nn = f32[3] negate(p0)")
    assert module.entry.root.name == "n"
    assert module.entry.root.is_root


def test_snippet_may_call_undefined_computations() -> None:
    # The seed document writes `to_apply=max` without defining max.
    module = parse_hlo(
        "p0 = f32[8] parameter(0)\nc = f32[] constant(0)\n"
        "ROOT r = f32[] reduce(p0, c), dimensions={0}, to_apply=max"
    )
    assert module.entry.root.called_computations.get("to_apply") == []


def test_unknown_opcode_and_attribute_are_kept_by_the_syntax() -> None:
    text = "p = f32[2] parameter(0)\nROOT z = f32[2] zorble-op(p), zz=q_q"
    root = parse_hlo(text, verify=False).entry.root
    assert (root.opcode, root.attributes) == ("zorble-op", {"zz": "q_q"})


def test_unknown_opcode_is_an_error_at_its_location() -> None:
    text = "p = f32[2] parameter(0)\nROOT z = f32[2] zorble-op(p), zz=q_q"
    with pytest.raises(HloSemanticError) as caught:
        parse_hlo(text, "z.hlo")
    assert (caught.value.span.line, caught.value.span.column) == (2, 17)
    assert "zorble-op" in caught.value.message


def test_crlf_line_ends_and_computation_attributes() -> None:
    text = (
        "HloModule m\r\n\r\nENTRY e {\r\n  p = f32[2] parameter(0)\r\n"
        '  ROOT n = f32[2] negate(p)\r\n}, execution_thread="main"\r\n'
    )
    module = parse_hlo(text)
    assert [i.name for i in module.entry.instructions] == ["p", "n"]
    lenient, errors = parse_hlo_lenient(text.replace("negate(p)", "negate(p"))
    assert lenient is not None
    assert [i.name for i in lenient.entry.instructions] == ["p"]
    assert len(errors) == 1


def test_first_error_in_the_text_is_raised() -> None:
    # the unknown operand (line 2) is found after the bad literal (line 3) is built
    text = "p = f32[2] parameter(0)\nn = f32[2] negate(q)\nc = f32[3] constant({1,2})"
    with pytest.raises(HloSemanticError) as caught:
        parse_hlo(text)
    assert caught.value.span.line == 2


def test_gc_state_is_restored() -> None:
    assert gc.isenabled()
    parse_hlo("p = f32[] parameter(0)")
    assert gc.isenabled()
    with pytest.raises(HloSyntaxError):
        parse_hlo("p = f32[ parameter(0)")
    assert gc.isenabled()


# ---------------------------------------------------------------------------------------------
# Errors: located, in words
# ---------------------------------------------------------------------------------------------

MALFORMED = [
    # (text, error class, line, column, words the message must contain)
    (
        "p0 = f32[10] parameter(0)\nROOT x = f32[10] negate(p1)",
        HloSemanticError,
        2,
        25,
        "operand p1 of x names no instruction",
    ),
    (
        "p0 = f32[2] parameter(0)\nROOT x = f32[2] negate(p0)\nROOT y = f32[2] negate(p0)",
        HloSemanticError,
        3,
        1,
        "second ROOT",
    ),
    (
        "p0 = f32[2] parameter(0)\np1 = f32[2] parameter(0)",
        HloSemanticError,
        2,
        23,
        "parameter number 0 is used twice",
    ),
    (
        "HloModule m\nENTRY e {\n p = f32[] parameter(0)\n"
        " ROOT r = f32[] call(p), to_apply=nothere\n}",
        HloSemanticError,
        4,
        35,
        "computation nothere",
    ),
    (
        "c = f32[3] constant({1, 2})",
        HloSemanticError,
        1,
        21,
        "2 elements but its shape f32[3] has 3",
    ),
    (
        "c = f32[3] constant(  {1, 2})",
        HloSemanticError,
        1,
        23,
        "2 elements but its shape f32[3] has 3",
    ),
    (
        "HloModule m\nf {\n p = f32[] parameter(0)\n}\nf {\n q = f32[] parameter(0)\n}",
        HloSemanticError,
        5,
        1,
        "computation f is defined twice",
    ),
    ("p0 = f32[2] parameter(0)\np0 = f32[2] parameter(1)", HloSemanticError, 2, 1, "defined twice"),
    (
        "HloModule m\nENTRY e {\n p = f32[] parameter(0)\n}\nENTRY f {\n p = f32[] parameter(0)\n}",
        HloSemanticError,
        5,
        7,
        "second ENTRY",
    ),
    ("p0 = f32[10 parameter(0)", HloSyntaxError, 1, 6, "malformed shape"),
    ("p = f32[2, ] parameter(0)", HloSyntaxError, 1, 5, "malformed shape"),
    ("p0 = f33[10] parameter(0)", HloSyntaxError, 1, 6, "unknown element type 'f33'"),
    (
        "p0 = f32[2] parameter(0), dimensions={1",
        HloSyntaxError,
        1,
        27,
        "malformed value of attribute dimensions",
    ),
    (
        "p0 = f32[2] parameter(0)\nx = f32[2] negate(p0",
        HloSyntaxError,
        2,
        21,
        "unexpected end of the input; expected ')', ','",
    ),
    ("p0 = f32[2] parameter(0)\nx = f32[2] negate(p0))", HloSyntaxError, 2, 22, "unexpected ')'"),
    ("p0 = f32[2] parameter(a)", HloSyntaxError, 1, 23, "parameter number must be a non-negative"),
    (
        "p0 = f32[2] parameter(0)\nx = f32[2] negate(1.5)",
        HloSyntaxError,
        2,
        19,
        "expected an operand name",
    ),
    ("p0 = f32[2] parameter(0)\x00", HloSyntaxError, 1, 25, "NUL byte"),
    ("p0 = f32[2] parameter(0)\n\ufffd\ufffd", HloSyntaxError, 2, 1, "unexpected character"),
    ("", HloSyntaxError, 1, 1, "empty input"),
    (
        "HloModule m\nENTRY e {\n p = f32[] parameter(0)\n",
        HloSyntaxError,
        3,
        24,
        "unexpected end of the input",
    ),
    ("x = add(p0, p1)", HloSyntaxError, 1, 5, "expected a shape such as f32[10,20]"),
    # `, p1 = f32[2]` reads as an attribute; the opcode after it is what cannot be read
    (
        "p0 = f32[2] parameter(0), p1 = f32[2] parameter(1)",
        HloSyntaxError,
        1,
        39,
        "unexpected 'parameter('",
    ),
    (
        "HloModule m\nENTRY e {\n p = f32[] parameter(0)\n ROOT r = f32[] parameter(1)\n}}",
        HloSyntaxError,
        5,
        2,
        "unexpected '}'",
    ),
]


@pytest.mark.parametrize(
    ("text", "kind", "line", "column", "words"), MALFORMED, ids=[m[4][:30] for m in MALFORMED]
)
def test_malformed_input_is_located(
    text: str, kind: type, line: int, column: int, words: str
) -> None:
    with pytest.raises(kind) as caught:
        parse_hlo(text, "bad.hlo")
    error = caught.value
    assert words in error.message
    assert (error.span.line, error.span.column) == (line, column), error.render()
    rendered = error.render()
    assert rendered.startswith(f"bad.hlo:{line}:{column}: error: ")
    for lark_word in ("Token(", "ARRAY_SHAPE", "DEFINED_NAME", "__ANON", "$END", "LPAR", "RPAR"):
        assert lark_word not in rendered


def test_bad_attribute_value_is_located_when_used() -> None:
    text = "p0 = f32[4] parameter(0)\nROOT t = f32[4] transpose(p0), dimensions={0,x}"
    root = parse_hlo(text, "t.hlo", verify=False).entry.root
    with pytest.raises(HloSyntaxError) as caught:
        _ = root.dimensions
    assert (caught.value.span.line, caught.value.span.column) == (2, 43)
    # verified as XLA would, the same error stops the parse, at the same place
    with pytest.raises(HloSemanticError) as at_parse:
        parse_hlo(text, "t.hlo")
    assert (at_parse.value.span.line, at_parse.value.span.column) == (2, 43)


# ---------------------------------------------------------------------------------------------
# Lenient parsing
# ---------------------------------------------------------------------------------------------

BROKEN_MODULE = """HloModule m, is_scheduled=true

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p0 = f32[10] parameter(0)
  bad = f32[10 negate(p0)
  n = f32[10] negate(p0)
  m = f32[10] negate(bad)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(n, z), dimensions={0}, to_apply=add
}
"""


def test_lenient_recovers_around_a_broken_instruction() -> None:
    module, errors = parse_hlo_lenient(BROKEN_MODULE, "b.hlo")
    assert module is not None
    assert module.attributes == {"is_scheduled": "true"}
    assert [i.name for i in module.computations["add"].instructions] == ["a", "b", "s"]
    assert [i.name for i in module.entry.instructions] == ["p0", "n", "z", "r"]
    assert module.entry.root.called_computations["to_apply"] == [module.computations["add"]]
    located = [(type(e), e.span.line, e.span.column) for e in errors]
    # `m` reads `bad`, whose text did not parse: dropped with it, and no second error for it
    assert located == [(HloSyntaxError, 11, 9)]


def test_lenient_keeps_attribute_continuation_lines_with_their_instruction() -> None:
    text = """HloModule m
    fused {
      p0 = f32[4,4] parameter(0)
      lhs = f32[4,4] triangular-solve(p0, p0),
        left_side=true,
        lower=true
      ROOT add = f32[4,4] add(lhs, p0)
    }
    ENTRY e {
      p0 = f32[4,4] parameter(0)
      bad = f32[4 negate(p0)
      ROOT fusion = f32[4,4] fusion(p0), kind=kLoop, calls=fused
    }"""
    module, errors = parse_hlo_lenient(text)
    assert [i.name for i in module.computations["fused"].instructions] == ["p0", "lhs", "add"]
    assert module.computations["fused"].by_name["lhs"].attributes["lower"] == "true"
    assert [i.name for i in module.entry.instructions] == ["p0", "fusion"]
    assert [e.span.line for e in errors] == [11]


def test_lenient_drops_callers_of_a_computation_that_lost_its_root() -> None:
    text = """HloModule m
    fused {
      p0 = f32[4] parameter(0)
      ROOT n = f32[4 negate(p0)
    }
    ENTRY e {
      p0 = f32[4] parameter(0)
      f = f32[4] fusion(p0), kind=kLoop, calls=fused
      ROOT other = f32[4] negate(p0)
    }"""
    module, errors = parse_hlo_lenient(text)
    assert [i.name for i in module.entry.instructions] == ["p0", "other"]
    assert [e.span.line for e in errors] == [4]


def test_lenient_without_errors_equals_strict() -> None:
    text = "p0 = f32[2] parameter(0)\nROOT n = f32[2] negate(p0)"
    module, errors = parse_hlo_lenient(text)
    assert errors == []
    assert structure(module) == structure(parse_hlo(text))


def test_lenient_collects_semantic_errors_and_drops_readers() -> None:
    module, errors = parse_hlo_lenient(
        "p0 = f32[2] parameter(0)\nx = f32[2] negate(q)\n"
        "y = f32[2] negate(x)\nROOT z = f32[2] negate(p0)"
    )
    assert [i.name for i in module.entry.instructions] == ["p0", "z"]
    assert len(errors) == 1
    assert isinstance(errors[0], HloSemanticError)


def test_lenient_on_nothing_returns_none() -> None:
    module, errors = parse_hlo_lenient("  \n")
    assert module is None
    assert len(errors) == 1


# ---------------------------------------------------------------------------------------------
# Property tests
# ---------------------------------------------------------------------------------------------

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,5}(\.[0-9]{1,2})?(-[a-z]{1,3})?", fullmatch=True)
ARRAY = st.builds(
    lambda et, dims, with_layout: Shape(
        et, tuple(dims), (), Layout(tuple(reversed(range(len(dims))))) if with_layout else None
    ),
    st.sampled_from(["f32", "s32", "pred", "bf16", "u8", "f8e4m3fn"]),
    st.lists(st.integers(0, 9), max_size=3),
    st.booleans(),
)
SHAPES = st.recursive(
    ARRAY,
    lambda inner: st.builds(
        lambda parts: Shape("tuple", tuple_shapes=tuple(parts)), st.lists(inner, max_size=3)
    ),
    max_leaves=5,
)
ATTRIBUTE_VALUES = st.sampled_from(
    [
        "{1,0}",
        "{}",
        "kLoop",
        "3",
        "-1",
        '"a,b{"',
        "1_2_0x0_0",
        "{size=2 stride=1}",
        "[2,2]<=[4]",
        "{{0}: (0, {})}",
        "b01f_01io->b01f",
        '{op_name="x" source_line=3}',
    ]
)


@st.composite
def modules(draw: st.DrawFn) -> tuple[str, list[tuple]]:
    """HLO text and the instructions it was written from: (name, shape, opcode, operands, attrs)."""
    names = draw(st.lists(NAMES, min_size=1, max_size=8, unique=True))
    written = []
    lines = []
    for index, name in enumerate(names):
        shape = draw(SHAPES)
        if index < 2 or (draw(st.booleans()) and index < 4):
            opcode, operands, inside = "parameter", [], str(index)
            if index >= 2:
                opcode, inside = "parameter", str(index)
        else:
            opcode = draw(st.sampled_from(["add", "negate", "tuple", "custom-thing", "reduce"]))
            operands = draw(st.lists(st.sampled_from(names[:index]), min_size=1, max_size=3))
            inside = ", ".join(
                (f"{format_shape(draw(SHAPES))} %{o}" if draw(st.booleans()) else o)
                for o in operands
            )
        attributes = draw(
            st.dictionaries(
                st.from_regex(r"[a-z_]{1,8}", fullmatch=True), ATTRIBUTE_VALUES, max_size=3
            )
        )
        root = "ROOT " if index == len(names) - 1 else ""
        attr_text = "".join(f", {k}={v}" for k, v in attributes.items())
        spacing = draw(st.sampled_from([" ", "\n    ", " /*c*/ "]))
        lines.append(
            f"  {root}{name} ={spacing}{format_shape(shape)} {opcode}({inside}){attr_text}"
        )
        written.append((name, shape, opcode, operands, attributes))
    text = "HloModule gen\n\nENTRY main {\n" + "\n".join(lines) + "\n}\n"
    return text, written


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules())
def test_generated_modules_parse_as_written_and_round_trip(case: tuple[str, list[tuple]]) -> None:
    text, written = case
    module = parse_hlo(text, "gen.hlo", verify=False)  # generated ops need not be valid XLA
    got = [
        (i.name, i.shape, i.opcode, [o.name for o in i.operands], i.attributes)
        for i in module.entry.instructions
    ]
    assert got == written
    assert structure(parse_hlo(format_module(module), verify=False)) == structure(module)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_text_never_escapes_as_a_bare_exception(data: st.DataObject) -> None:
    text = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[4,2]{1,0} parameter(0), metadata={op_name="p" source_line=1}
  c = f32[] constant({1})
  ROOT r = f32[2] reduce(f32[4,2] p0, c), dimensions={0}, to_apply=add
}
"""
    position = data.draw(st.integers(0, len(text)))
    action = data.draw(st.sampled_from(["delete", "insert", "replace"]))
    char = data.draw(st.sampled_from(list('{}()[],=%"\n x0\x00\ufffd')))
    if action == "delete":
        mutated = text[:position] + text[position + 1 :]
    elif action == "insert":
        mutated = text[:position] + char + text[position:]
    else:
        mutated = text[:position] + char + text[position + 1 :]
    failure = None
    try:
        parse_hlo(mutated, "m.hlo")
    except HloidxError as error:
        failure = error
    if failure is not None:
        assert failure.span is not None
        failure.render()
    _, errors = parse_hlo_lenient(mutated, "m.hlo")
    assert all(e.span is not None for e in errors)


# ---------------------------------------------------------------------------------------------
# The fast path (one master regex driving lark's LALR tables) against lark's own parse
# ---------------------------------------------------------------------------------------------
# Oracle: the same text parsed by lark's contextual lexer and LALR parser (the fast path
# switched off). Both must give the same IR, or the same error at the same place.

from contextlib import contextmanager  # noqa: E402

from hloidx.hlo import hlo_builder, syntax  # noqa: E402
from hloidx.source import Source  # noqa: E402


@contextmanager
def _lark_only():
    """lark alone: neither the line parser nor the fast path over lark's tables."""
    saved = syntax._fast_parser, syntax._whole_lines
    syntax._fast_parser = lambda: None
    syntax._whole_lines = lambda text, source: None
    try:
        yield
    finally:
        syntax._fast_parser, syntax._whole_lines = saved


def _outcome(text: str) -> tuple:
    """What parse_hlo and parse_hlo_lenient make of ``text``, as comparable plain data."""
    try:
        module = parse_hlo(text, "t.hlo")
        strict: tuple = ("ok", structure(module), format_module(module))
    except HloidxError as error:
        strict = ("error", type(error).__name__, error.render())
    module, errors = parse_hlo_lenient(text, "t.hlo")
    lenient = (
        format_module(module) if module is not None else None,
        [(type(e).__name__, e.render()) for e in errors],
    )
    return strict, lenient


def _fast_and_lark(text: str) -> tuple[tuple, tuple]:
    fast = _outcome(text)
    with _lark_only():
        exact = _outcome(text)
    return fast, exact


def test_fast_path_is_built() -> None:
    assert syntax._fast_parser() is not None  # lark's internals are where the fast path reads


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_fast_path_reads_the_corpus_alone_and_as_lark_does(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    hlo_builder._parser()[1].reset(Source("t.hlo", text), 0)
    syntax._fast_parser().parse(text, "start")  # no _Fallback: the speed is really had
    fast, exact = _fast_and_lark(text)
    assert fast == exact


def test_fast_path_equals_lark_on_the_xla_test_modules() -> None:
    for case in _xla_cases():
        fast, exact = _fast_and_lark(case["hlo"])
        assert fast == exact, case["test"]


_PIECES = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    "=",
    "%",
    '"',
    "\n",
    " ",
    "x",
    "0",
    ":",
    "->",
    "ROOT ",
    "ENTRY ",
    "HloModule ",
    'FileNames\n1 "a.py"\n',
    "/*c*/",
    "// c\n",
    "f32[2]",
    "{1,0}",
    ", k=v",
    "-1.5e3",
    "\x00",
]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_fast_path_equals_lark_on_mutated_text(data: st.DataObject) -> None:
    text = """HloModule m, is_scheduled=true
FileNames
1 "a.py"
add (a: f32[], b: f32[]) -> f32[] {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[4,2]{1,0} parameter(0), metadata={op_name="p" source_line=1}
  c = f32[] constant({1})
  t = (f32[4,2], f32[]) tuple(p0, c) /*x*/
  ROOT r = f32[2] reduce(f32[4,2] p0, c), dimensions={0}, to_apply=add
}
"""
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(text)))
        action = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        piece = data.draw(st.sampled_from(_PIECES))
        if action == "delete":
            text = text[:position] + text[position + data.draw(st.integers(1, 4)) :]
        elif action == "insert":
            text = text[:position] + piece + text[position:]
        else:
            text = text[:position] + piece + text[position + len(piece) :]
    fast, exact = _fast_and_lark(text)
    assert fast == exact


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules())
def test_fast_path_equals_lark_on_generated_modules(case: tuple[str, list[tuple]]) -> None:
    fast, exact = _fast_and_lark(case[0])
    assert fast == exact


def test_absurd_tuple_nesting_is_a_located_error_and_the_rest_survives():

    depth = MAX_TUPLE_DEPTH + 1
    line = "  deep = " + "(" * depth + "f32[2]" + ")" * depth + " parameter(1)"
    text = (
        "HloModule m\nENTRY e {\n  p0 = f32[4] parameter(0)\n"
        + line
        + "\n  ROOT n = f32[4] negate(p0)\n}\n"
    )
    module, errors = parse_hlo_lenient(text, "deep.hlo")
    assert [e.span.line for e in errors] == [4]
    assert "nested more than" in errors[0].message
    assert [i.name for i in module.instructions()] == ["p0", "n"]
    ok = "  ok = " + "(" * MAX_TUPLE_DEPTH + "f32[2]" + ")" * MAX_TUPLE_DEPTH + " parameter(1)"
    module, errors = parse_hlo_lenient(text.replace(line, ok), "ok.hlo")
    assert not errors
