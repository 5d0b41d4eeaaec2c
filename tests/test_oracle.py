"""The provenance oracle against reads computed by hand for small cases."""

from __future__ import annotations

import numpy as np
import pytest

from hloidx import parse_hlo
from hloidx.check.oracle import check_instruction, oracle_relation, reads
from hloidx.errors import EnumerationLimitError, UnsupportedOpError


def module(body: str, params: str) -> str:
    return (
        f"HloModule m\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        f"  ROOT s = f32[] add(a, b)\n}}\nENTRY e {{\n{params}\n  ROOT r = {body}\n}}\n"
    )


def rel(text: str, operand: int, values=None, **kw):
    instr = parse_hlo(text).entry.root
    return oracle_relation(instr, operand, runtime_values=values, **kw)


P0_23 = "  p0 = f32[2,3] parameter(0)"
P1_23 = "  p1 = f32[2,3] parameter(1)"
SCALAR = "  z = f32[] parameter(1)"

CASES = [
    (
        "add",
        module("f32[2,3] add(p0, p1)", P0_23 + "\n" + P1_23),
        1,
        {((i, j), (i, j)) for i in range(2) for j in range(3)},
    ),
    (
        "broadcast",
        module("f32[4,3] broadcast(v), dimensions={1}", "  v = f32[3] parameter(0)"),
        0,
        {((i, j), (j,)) for i in range(4) for j in range(3)},
    ),
    (
        "broadcast_permuted",
        module("f32[3,4,2] broadcast(p0), dimensions={2,0}", P0_23),
        0,
        {((i, j, k), (k, i)) for i in range(3) for j in range(4) for k in range(2)},
    ),
    (
        "transpose",
        module("f32[3,2] transpose(p0), dimensions={1,0}", P0_23),
        0,
        {((i, j), (j, i)) for i in range(3) for j in range(2)},
    ),
    (
        "reshape",
        module("f32[3,2] reshape(p0)", P0_23),
        0,
        {((i, j), divmod(2 * i + j, 3)) for i in range(3) for j in range(2)},
    ),
    # column-major source: physical position k holds logical (k mod 2, k floordiv 2)
    (
        "bitcast_layout",
        module("f32[6]{0} bitcast(p0)", "  p0 = f32[2,3]{0,1} parameter(0)"),
        0,
        {((k,), (k % 2, k // 2)) for k in range(6)},
    ),
    (
        "slice",
        module("f32[2,2] slice(p0), slice={[0:2], [0:3:2]}", P0_23),
        0,
        {((i, j), (i, 2 * j)) for i in range(2) for j in range(2)},
    ),
    (
        "reverse",
        module("f32[2,3] reverse(p0), dimensions={1}", P0_23),
        0,
        {((i, j), (i, 2 - j)) for i in range(2) for j in range(3)},
    ),
    (
        "concatenate_second",
        module(
            "f32[2,5] concatenate(p0, q), dimensions={1}", P0_23 + "\n  q = f32[2,2] parameter(1)"
        ),
        1,
        {((i, j), (i, j - 3)) for i in range(2) for j in range(3, 5)},
    ),
    # low 1, interior 1 on a dimension of 3: data at 1, 3, 5 of 7
    (
        "pad_data",
        module("f32[7] pad(v, z), padding=1_1_1", "  v = f32[3] parameter(0)\n" + SCALAR),
        0,
        {((1 + 2 * i,), (i,)) for i in range(3)},
    ),
    (
        "pad_value_only_where_padding_lands",
        module("f32[7] pad(v, z), padding=1_1_1", "  v = f32[3] parameter(0)\n" + SCALAR),
        1,
        {((k,), ()) for k in (0, 2, 4, 6)},
    ),
    (
        "pad_negative",
        module("f32[2] pad(v, z), padding=-1_0", "  v = f32[3] parameter(0)\n" + SCALAR),
        0,
        {((0,), (1,)), ((1,), (2,))},
    ),
    (
        "reduce",
        module("f32[2] reduce(p0, z), dimensions={1}, to_apply=add", P0_23 + "\n" + SCALAR),
        0,
        {((i,), (i, j)) for i in range(2) for j in range(3)},
    ),
    (
        "reduce_init",
        module("f32[2] reduce(p0, z), dimensions={1}, to_apply=add", P0_23 + "\n" + SCALAR),
        1,
        {((0,), ()), ((1,), ())},
    ),
    (
        "dot_rhs",
        module(
            "f32[2,4] dot(p0, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
            P0_23 + "\n  w = f32[3,4] parameter(1)",
        ),
        1,
        {((i, j), (k, j)) for i in range(2) for j in range(4) for k in range(3)},
    ),
    (
        "select_predicate",
        module(
            "f32[2,3] select(c, p0, p1)", "  c = pred[2,3] parameter(2)\n" + P0_23 + "\n" + P1_23
        ),
        0,
        {((i, j), (i, j)) for i in range(2) for j in range(3)},
    ),
    # window 2, stride 2, padding 1 low: output o covers base positions 2o-1, 2o
    (
        "reduce_window",
        module(
            "f32[3] reduce-window(v, z), window={size=2 stride=2 pad=1_1}, to_apply=add",
            "  v = f32[4] parameter(0)\n" + SCALAR,
        ),
        0,
        {((0,), (0,)), ((1,), (1,)), ((1,), (2,)), ((2,), (3,))},
    ),
]


@pytest.mark.parametrize(("name", "text", "operand", "expected"), CASES, ids=[c[0] for c in CASES])
def test_reads_match_hand_computed(name, text, operand, expected):
    assert rel(text, operand) == expected


DS = module(
    "s32[3] dynamic-slice(v, i), dynamic_slice_sizes={3}",
    "  v = s32[6] parameter(0)\n  i = s32[] parameter(1)",
)
DUS = module(
    "s32[6] dynamic-update-slice(v, u, i)",
    "  v = s32[6] parameter(0)\n  u = s32[2] parameter(1)\n  i = s32[] parameter(2)",
)
GATHER = module(
    "f32[2,3] gather(p0, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
    "index_vector_dim=1, slice_sizes={1,3}",
    P0_23.replace("2,3", "4,3") + "\n  idx = s32[2,1] parameter(1)",
)


@pytest.mark.parametrize(("offset", "start"), [(1, 1), (5, 3), (-2, 0)])
def test_dynamic_slice_reads_at_the_clamped_offset(offset, start):
    values = {1: np.array(offset)}
    assert rel(DS, 0, values) == {((k,), (start + k,)) for k in range(3)}
    assert rel(DS, 1, values) == {((k,), ()) for k in range(3)}


def test_dynamic_update_slice_reads_the_base_only_outside_the_window():
    values = {2: np.array(3)}
    assert rel(DUS, 0, values) == {((k,), (k,)) for k in (0, 1, 2, 5)}
    assert rel(DUS, 1, values) == {((3,), (0,)), ((4,), (1,))}


def test_gather_reads_rows_named_by_the_index_values():
    values = {1: np.array([[2], [9]])}  # 9 clamps to the last row, 3
    assert rel(GATHER, 0, values) == {((0, j), (2, j)) for j in range(3)} | {
        ((1, j), (3, j)) for j in range(3)
    }
    assert rel(GATHER, 1, values) == {((b, j), (b, 0)) for b in range(2) for j in range(3)}


def test_values_follow_hlo_integer_semantics():
    text = module(
        "s32[4] divide(a, b)",
        "  a = s32[4] constant({7, -7, 7, -7})\n  b = s32[4] constant({2, 2, -2, -2})",
    )
    result = reads(parse_hlo(text).entry.root)
    assert result.outputs[0].values.tolist() == [3, -3, -3, 3]  # truncation toward zero


def test_constants_and_iotas_read_nothing():
    text = """
HloModule m
f {
  unused = f32[2] parameter(0)
  c = s32[2,3] constant({{1,2,3},{4,5,6}})
  io = s32[2,3] iota(), iota_dimension=1
  ROOT s = s32[2,3] add(c, io)
}
ENTRY e {
  p = f32[2] parameter(0)
  ROOT fusion = s32[2,3] fusion(p), kind=kLoop, calls=f
}
"""
    result = reads(parse_hlo(text), "fusion")
    assert result.outputs[0].values.tolist() == [[1, 3, 5], [4, 6, 8]]
    assert all(s == frozenset() for s in result.outputs[0].provenance.reshape(-1))


def test_operand_that_is_a_constant_uses_its_real_value():
    text = module(
        "s32[3] dynamic-slice(v, i), dynamic_slice_sizes={3}",
        "  v = s32[6] parameter(0)\n  i = s32[] constant(2)",
    )
    assert rel(text, 0) == {((k,), (2 + k,)) for k in range(3)}


def test_fusion_is_interpreted_through_its_body():
    text = """
HloModule m
f {
  a = f32[3] parameter(0)
  r = f32[3] reverse(a), dimensions={0}
  ROOT s = f32[3] add(a, r)
}
ENTRY e {
  p = f32[3] parameter(0)
  ROOT fusion = f32[3] fusion(p), kind=kLoop, calls=f
}
"""
    assert rel(text, 0) == {((k,), (k,)) for k in range(3)} | {((k,), (2 - k,)) for k in range(3)}


def test_tensors_beyond_the_limit_are_refused():
    text = module("f32[1000,1000] negate(p0)", "  p0 = f32[1000,1000] parameter(0)")
    with pytest.raises(EnumerationLimitError):
        reads(parse_hlo(text).entry.root)
    (note,) = check_instruction(parse_hlo(text).entry.root)
    assert note.kind == "unchecked"
    assert not note.is_error


def test_unknown_ops_are_refused_not_guessed():
    text = module('f32[2,3] custom-call(p0), custom_call_target="x"', P0_23)
    with pytest.raises(UnsupportedOpError):
        reads(parse_hlo(text).entry.root)


def test_check_instruction_finds_a_wrong_map():
    from hloidx.check.oracle import check_maps
    from hloidx.hlo.op_rules import OperandIndexing
    from hloidx.maps.indexing_map import IndexingMap

    instr = parse_hlo(module("f32[3,2] transpose(p0), dimensions={1,0}", P0_23)).entry.root
    from hloidx.maps.expr import dim

    wrong = [[OperandIndexing.of(IndexingMap.build([dim(1), 0], [3, 2]))]]  # forgets column d0
    problems = check_maps(instr, wrong)
    assert any(p.kind == "missing" for p in problems)
    assert check_instruction(instr) == []


def test_reads_evaluates_a_constant_operand_without_the_oracle_module_loaded():
    # The interpreter once called a method that only hloidx.check.oracle attached at import
    # time, so reads() failed on a constant operand in a process that had not imported it.
    import subprocess
    import sys

    program = (
        "import sys\n"
        "from hloidx import parse_hlo\n"
        "from hloidx.check.interpreter import reads\n"
        "m = parse_hlo('''HloModule m\n"
        "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
        "ENTRY e { p = f32[4] parameter(0)\n z = f32[] constant(0)\n"
        " ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add }''')\n"
        "assert 'hloidx.check.oracle' not in sys.modules\n"
        "r = reads(m)\n"
        "tags = r.at(0, ())\n"
        "assert {t[0] for t in tags} == {0, 1}, tags\n"
        "assert float(r.operand_data[1].values) == 0.0\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("tuple_shape", "index", "root_shape"),
    [
        ("(f32[2], f32[4])", 0, "f32[2]"),
        ("(f32[2], f32[4])", 1, "f32[4]"),
        ("(f32[2], f32[3], s32[5])", 2, "s32[5]"),
        ("((f32[2], f32[3]), f32[4])", 1, "f32[4]"),
        ("((f32[2], f32[3]), f32[4])", 0, "(f32[2], f32[3])"),
    ],
)
def test_get_tuple_element_is_checked_against_the_element_it_selects(
    tuple_shape, index, root_shape
):
    # the oracle once compared element `index` with the operand's leaf numbered like the
    # output (0): every element after the first looked like a wrong map
    text = f"""HloModule m
ENTRY e {{
  p = {tuple_shape} parameter(0)
  ROOT g = {root_shape} get-tuple-element(p), index={index}
}}
"""
    root = parse_hlo(text).entry.root
    assert check_instruction(root) == []


def test_get_tuple_element_with_a_wrong_map_is_caught():
    from hloidx.check.oracle import check_maps
    from hloidx.maps.syntax import parse_map

    text = """HloModule m
ENTRY e {
  p = (f32[2], f32[4]) parameter(0)
  ROOT g = f32[4] get-tuple-element(p), index=1
}
"""
    root = parse_hlo(text).entry.root
    shifted = parse_map("(d0) -> ((d0 + 1) mod 4), domain: d0 in [0, 3]")
    from hloidx.hlo.op_rules import OperandIndexing

    problems = check_maps(root, [[OperandIndexing.of(shifted)]])
    assert any(p.is_error for p in problems)
    assert check_instruction(root) == []


@pytest.mark.parametrize("name", ["all_gather", "collective_permute"])
def test_an_async_done_is_checked_against_its_whole_start_tuple(name):
    # a tuple operand that is not the result's own shape is compared as a whole, as
    # get-tuple-element's is: the done's output reads the start's output element
    import paths

    path = paths.DATA / "gpu" / "pairs" / f"{name}.gpu.hlo"
    module = parse_hlo(path.read_text(), str(path))
    (done,) = [i for i in module.instructions() if i.opcode.endswith("-done")]
    assert done.operands[0].shape.is_tuple
    assert [m for m in check_instruction(done) if m.is_error] == []
