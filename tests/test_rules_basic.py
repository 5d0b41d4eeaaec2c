"""Oracle tests of the basic op rules (hloidx/hlo/rules/basic.py, shape_ops.py, reductions.py).

For each op and several shapes and attributes, the relation of the rule's maps (enumerated
by :func:`hloidx.maps.domain.relation`) is compared with what the op really reads according to
the provenance interpreter (:mod:`hloidx.check.oracle`): equal when the rule says ``exact``, a
superset otherwise. Input-to-output maps are checked against the inverse relation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import factorizations

import hloidx
from hloidx.check.oracle import oracle_relation
from hloidx.check.oracle import reads as oracle_reads
from hloidx.errors import HloSemanticError, UnsupportedOpError
from hloidx.hlo import op_rules
from hloidx.hlo.ir import Instruction
from hloidx.maps.domain import relation

SETTINGS = settings(max_examples=30, deadline=None)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def shape_text(
    dims: Sequence[int], element: str = "f32", layout: Sequence[int] | None = None
) -> str:
    text = f"{element}[{','.join(map(str, dims))}]"
    return text + ("{" + ",".join(map(str, layout)) + "}" if layout is not None else "")


def build(params: Sequence[str], root: str, extra: str = "", verify: bool = True) -> Instruction:
    """An ENTRY with parameters p0.. of the given shapes and ``ROOT r = <root>``."""
    lines = [f"  p{i} = {s} parameter({i})" for i, s in enumerate(params)]
    text = f"HloModule m\n{extra}\nENTRY e {{\n" + "\n".join(lines) + f"\n  ROOT r = {root}\n}}\n"
    return hloidx.parse_hlo(text, verify=verify).entry.root


def maps_relation(cell: op_rules.OperandIndexing) -> set:
    out: set = set()
    for m in cell.maps:
        out |= relation(m)
    return out


def inverse(pairs: set) -> set:
    return {(b, a) for a, b in pairs}


def check(instr: Instruction, *, input_to_output: bool = True) -> None:
    """Both directions of the rule against what the provenance interpreter sees the op read."""
    o2i = op_rules.output_to_input(instr)
    evaluation = oracle_reads(instr)
    assert len(o2i) == len(evaluation.outputs)
    i2o = op_rules.input_to_output(instr) if input_to_output else None
    if i2o is not None:
        assert len(i2o) == len(instr.operands)
    for j in range(len(o2i)):
        assert len(o2i[j]) == len(instr.operands)
        for i in range(len(instr.operands)):
            expected = oracle_relation(instr, i, j, evaluation=evaluation)
            cell = o2i[j][i]
            got = maps_relation(cell)
            where = f"output {j} operand {i}"
            if cell.exact:
                assert got == expected, (
                    f"{where}: extra {sorted(got - expected)[:4]}, "
                    f"missing {sorted(expected - got)[:4]}"
                )
            else:
                assert got >= expected, f"{where}: missing {sorted(expected - got)[:4]}"
            if i2o is None:
                continue
            back = i2o[i][j]
            got_back = maps_relation(back)
            if back.exact:
                assert got_back == inverse(expected), f"{where} (input to output)"
            else:
                assert got_back >= inverse(expected), f"{where} (input to output)"


# ---------------------------------------------------------------------------
# elementwise
# ---------------------------------------------------------------------------

UNARY = [
    "abs",
    "cbrt",
    "ceil",
    "count-leading-zeros",
    "convert",
    "copy",
    "cosine",
    "erf",
    "exponential",
    "exponential-minus-one",
    "floor",
    "is-finite",
    "log",
    "log-plus-one",
    "logistic",
    "negate",
    "not",
    "popcnt",
    "real",
    "imag",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "sign",
    "sine",
    "sqrt",
    "tan",
    "tanh",
    "reduce-precision",
]
BINARY = [
    "add",
    "and",
    "atan2",
    "complex",
    "divide",
    "maximum",
    "minimum",
    "multiply",
    "or",
    "power",
    "remainder",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "subtract",
    "xor",
    "stochastic-convert",
]


@pytest.mark.parametrize("opcode", UNARY)
def test_elementwise_unary(opcode: str) -> None:
    extra = ", exponent_bits=5, mantissa_bits=10" if opcode == "reduce-precision" else ""
    instr = build(["f32[2,3]"], f"f32[2,3] {opcode}(p0){extra}")
    check(instr)


@pytest.mark.parametrize("opcode", BINARY)
def test_elementwise_binary(opcode: str) -> None:
    instr = build(["f32[3,2]", "f32[3,2]"], f"f32[3,2] {opcode}(p0, p1)")
    check(instr)


@pytest.mark.parametrize(
    ("params", "root"),
    [
        (["pred[]", "f32[2,3]", "f32[2,3]"], "f32[2,3] select(p0, p1, p2)"),
        (["pred[2,3]", "f32[2,3]", "f32[2,3]"], "f32[2,3] select(p0, p1, p2)"),
        (["f32[]", "f32[4]", "f32[]"], "f32[4] clamp(p0, p1, p2)"),
        (["f32[4]", "f32[4]", "f32[4]"], "f32[4] clamp(p0, p1, p2)"),
        (["f32[2,2]", "f32[2,2]"], "pred[2,2] compare(p0, p1), direction=LT"),
        (["f32[]", "f32[]"], "f32[] add(p0, p1)"),
        (["f32[3]", "f32[3]"], "f32[3] map(p0, p1), dimensions={0}, to_apply=add_f32"),
        (["f32[3]"], "f32[3] all-reduce(p0), replica_groups={}, to_apply=add_f32"),
        (
            ["f32[2,3]"],
            'f32[2,3] domain(p0), domain={kind="sharding", '
            "entry={maximal device=0}, exit={maximal device=1}}",
        ),
    ],
)
def test_elementwise_with_scalars_and_calls(params: list[str], root: str) -> None:
    extra = REDUCERS
    instr = build(params, root, extra)
    check(instr)


def test_elementwise_scalar_operand_reads_one_element() -> None:
    instr = build(["pred[]", "f32[4,5]", "f32[4,5]"], "f32[4,5] select(p0, p1, p2)")
    (cell,) = op_rules.output_to_input(instr)[0][:1]
    assert str(cell.maps[0]) == "(d0, d1) -> (), domain: d0 in [0, 3], d1 in [0, 4]"


# ---------------------------------------------------------------------------
# broadcast, transpose, reverse
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("in_dims", "out_dims", "dims"),
    [
        ((), (2, 3), ()),
        ((3,), (2, 3, 4), (1,)),
        ((2, 4), (2, 3, 4), (0, 2)),
        ((4, 2), (2, 3, 4), (2, 0)),
        ((2, 3), (2, 3), (0, 1)),
        ((1,), (3, 1), (1,)),
    ],
)
def test_broadcast(in_dims: tuple, out_dims: tuple, dims: tuple) -> None:
    instr = build(
        [shape_text(in_dims)],
        f"{shape_text(out_dims)} broadcast(p0), dimensions={{{','.join(map(str, dims))}}}",
    )
    check(instr)


@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=4).flatmap(
        lambda dims: st.tuples(st.just(dims), st.permutations(range(len(dims))))
    )
)
@SETTINGS
def test_transpose_random(case: tuple[list[int], list[int]]) -> None:
    dims, perm = case
    out = [dims[p] for p in perm]
    instr = build(
        [shape_text(dims)],
        f"{shape_text(out)} transpose(p0), dimensions={{{','.join(map(str, perm))}}}",
    )
    check(instr)


@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=3).flatmap(
        lambda dims: st.tuples(st.just(dims), st.sets(st.integers(0, len(dims) - 1)))
    )
)
@SETTINGS
def test_reverse_random(case: tuple[list[int], set[int]]) -> None:
    dims, rev = case
    instr = build(
        [shape_text(dims)],
        f"{shape_text(dims)} reverse(p0), dimensions={{{','.join(map(str, sorted(rev)))}}}",
    )
    check(instr)


# ---------------------------------------------------------------------------
# reshape and bitcast
# ---------------------------------------------------------------------------


@given(
    st.sampled_from([1, 6, 8, 12, 16, 24, 30, 32, 36, 48, 60, 64]).flatmap(
        lambda n: st.tuples(factorizations(n), factorizations(n))
    )
)
@settings(max_examples=80, deadline=None)
def test_reshape_random(case: tuple[list[int], list[int]]) -> None:
    src, dst = case
    instr = build([shape_text(src)], f"{shape_text(dst)} reshape(p0)")
    check(instr)


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        ((4, 8), (32,)),
        ((32,), (4, 8)),
        ((4, 8), (2, 4, 4)),
        ((4, 8, 12), (32, 3, 4)),
        ((3, 4), (2, 6)),
        ((2, 3, 4), (4, 3, 2)),
        ((1, 8, 1), (8,)),
        ((8,), (1, 1, 8)),
        ((), (1, 1)),
        ((1, 1), ()),
        ((10, 0), (5, 0, 2)),
    ],
)
def test_reshape_table(src: tuple, dst: tuple) -> None:
    instr = build([shape_text(src)], f"{shape_text(dst)} reshape(p0)")
    check(instr)


@pytest.mark.parametrize(
    ("src", "src_layout", "dst", "dst_layout"),
    [
        ((16, 17, 3), None, (51, 16), (0, 1)),
        ((2, 32, 1), (1, 0, 2), (2, 32), None),
        ((2, 32), None, (2, 32, 1), (1, 0, 2)),
        ((10, 20, 30), None, (10, 20, 30), (1, 0, 2)),
        ((3, 4, 5), (0, 1, 2), (5, 4, 3), (2, 1, 0)),
        ((6, 4), (0, 1), (2, 3, 4), (0, 2, 1)),
        ((3, 4), (0, 1), (2, 6), (0, 1)),
    ],
)
def test_bitcast_layouts(src: tuple, src_layout, dst: tuple, dst_layout) -> None:
    instr = build(
        [shape_text(src, layout=src_layout)], f"{shape_text(dst, layout=dst_layout)} bitcast(p0)"
    )
    check(instr)


@given(
    st.sampled_from([6, 8, 12, 24, 36]).flatmap(
        lambda n: st.tuples(factorizations(n), factorizations(n), st.randoms(use_true_random=False))
    )
)
@settings(max_examples=60, deadline=None)
def test_bitcast_random_layouts(case) -> None:
    src, dst, rnd = case
    src_layout = list(range(len(src)))
    dst_layout = list(range(len(dst)))
    rnd.shuffle(src_layout)
    rnd.shuffle(dst_layout)
    instr = build(
        [shape_text(src, layout=src_layout)], f"{shape_text(dst, layout=dst_layout)} bitcast(p0)"
    )
    check(instr)


# ---------------------------------------------------------------------------
# slice, pad, concatenate
# ---------------------------------------------------------------------------


@st.composite
def _slices(draw) -> tuple[list[int], list[tuple[int, int, int]]]:
    dims = draw(st.lists(st.integers(1, 9), min_size=1, max_size=3))
    config = []
    for n in dims:
        start = draw(st.integers(0, n - 1))
        limit = draw(st.integers(start + 1, n))
        stride = draw(st.integers(1, 4))
        config.append((start, limit, stride))
    return dims, config


@given(_slices())
@settings(max_examples=60, deadline=None)
def test_slice_random(case: tuple[list[int], list[tuple[int, int, int]]]) -> None:
    dims, config = case
    out = [len(range(a, b, s)) for a, b, s in config]
    text = ", ".join(f"[{a}:{b}:{s}]" for a, b, s in config)
    instr = build([shape_text(dims)], f"{shape_text(out)} slice(p0), slice={{{text}}}")
    check(instr)


@st.composite
def _pads(draw) -> tuple[list[int], list[tuple[int, int, int]]]:
    dims = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    config = []
    for n in dims:
        interior = draw(st.integers(0, 2))
        dilated = n + (n - 1) * interior
        low = draw(st.integers(-dilated, 3))
        high = draw(st.integers(max(-dilated - low + 1, -dilated), 3))
        config.append((low, high, interior))
    return dims, config


def _pad_out(dims: Sequence[int], config: Sequence[tuple[int, int, int]]) -> list[int]:
    return [n + (n - 1) * i + lo + hi for n, (lo, hi, i) in zip(dims, config, strict=True)]


@given(_pads())
@settings(max_examples=80, deadline=None)
def test_pad_random(case: tuple[list[int], list[tuple[int, int, int]]]) -> None:
    dims, config = case
    out = _pad_out(dims, config)
    text = "x".join(f"{lo}_{hi}_{i}" for lo, hi, i in config)
    instr = build([shape_text(dims), "f32[]"], f"{shape_text(out)} pad(p0, p1), padding={text}")
    check(instr)


@pytest.mark.parametrize(
    ("dims", "config"),
    [
        ((4, 4), ((1, 4, 1), (4, 8, 0))),
        ((7,), ((-3, -5, 1),)),
        ((3,), ((0, 0, 0),)),
        ((4,), ((-2, -2, 0),)),
        ((3, 2), ((2, -1, 3), (-1, 2, 1))),
        ((2,), ((-3, 2, 2),)),
    ],
)
def test_pad_table(dims: tuple, config: tuple) -> None:
    out = _pad_out(dims, config)
    text = "x".join(f"{lo}_{hi}_{i}" for lo, hi, i in config)
    instr = build([shape_text(dims), "f32[]"], f"{shape_text(out)} pad(p0, p1), padding={text}")
    check(instr)


def test_pad_value_maps_cover_only_padding() -> None:
    instr = build(["f32[4]", "f32[]"], "f32[4] pad(p0, p1), padding=0_0")
    assert op_rules.output_to_input(instr)[0][1].maps == ()


@pytest.mark.parametrize(
    ("sizes", "axis"), [((5, 11, 17), 1), ((1, 2), 0), ((3,), 0), ((2, 0, 3), 1)]
)
def test_concatenate(sizes: tuple, axis: int) -> None:
    def dims(n: int) -> list[int]:
        return [n if k == axis else 2 for k in range(2)] if axis < 2 else [2, 2, n]

    shapes = [dims(n) for n in sizes]
    out = dims(sum(sizes))
    params = ", ".join(f"p{i}" for i in range(len(sizes)))
    instr = build(
        [shape_text(s) for s in shapes],
        f"{shape_text(out)} concatenate({params}), dimensions={{{axis}}}",
    )
    check(instr)


# ---------------------------------------------------------------------------
# reduce, sort, dot
# ---------------------------------------------------------------------------

REDUCERS = """
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  ge = pred[] compare(v0, v1), direction=GE
  v = f32[] select(ge, v0, v1)
  i = s32[] select(ge, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
less_keys {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  x0 = s32[] parameter(2)
  x1 = s32[] parameter(3)
  ROOT lt = pred[] compare(k0, k1), direction=LT
}
less_one {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  ROOT lt = pred[] compare(k0, k1), direction=LT
}
"""


@pytest.mark.parametrize(
    ("dims", "reduced"),
    [((4, 3), (0,)), ((2, 3, 4), (0, 2)), ((3,), (0,)), ((2, 3), ()), ((2, 3, 2), (1,))],
)
def test_reduce(dims: tuple, reduced: tuple) -> None:
    out = [n for k, n in enumerate(dims) if k not in reduced]
    red = ",".join(map(str, reduced))
    instr = build(
        [shape_text(dims), "f32[]"],
        f"{shape_text(out)} reduce(p0, p1), dimensions={{{red}}}, to_apply=add_f32",
        REDUCERS,
    )
    check(instr)


def test_reduce_variadic() -> None:
    instr = build(
        ["f32[5,3]", "s32[5,3]", "f32[]", "s32[]"],
        "(f32[3], s32[3]) reduce(p0, p1, p2, p3), dimensions={0}, to_apply=argmax",
        REDUCERS,
    )
    check(instr)


@pytest.mark.parametrize(("dims", "axis"), [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 2), 1)])
def test_sort_keys_and_values(dims: tuple, axis: int) -> None:
    instr = build(
        [shape_text(dims), shape_text(dims, "s32")],
        f"({shape_text(dims)}, {shape_text(dims, 's32')}) sort(p0, p1), "
        f"dimensions={{{axis}}}, to_apply=less_keys",
        REDUCERS,
    )
    check(instr)
    # the values do not steer the order: output 0 does not read them
    assert op_rules.output_to_input(instr)[0][1].maps == ()


def test_sort_single_operand() -> None:
    instr = build(["f32[3,4]"], "f32[3,4] sort(p0), dimensions={1}, to_apply=less_one", REDUCERS)
    check(instr)


@pytest.mark.parametrize(("dims", "k"), [((4, 5), 2), ((6,), 3), ((2, 3, 4), 1)])
def test_topk(dims: tuple, k: int) -> None:
    out = (*dims[:-1], k)
    instr = build(
        [shape_text(dims)],
        f"({shape_text(out)}, {shape_text(out, 's32')}) topk(p0), k={k}, largest=true",
    )
    # the k largest of a row: each result element depends on the whole row
    check(instr)


DOTS = [
    # lhs, rhs, lhs_batch, rhs_batch, lhs_contracting, rhs_contracting
    ((2, 3), (3, 4), (), (), (1,), (0,)),
    ((2, 3, 4), (2, 4, 5), (0,), (0,), (2,), (1,)),
    ((3, 2), (4, 3), (), (), (0,), (1,)),
    ((2, 3, 4), (4, 3, 5), (), (), (1, 2), (1, 0)),
    ((2, 3), (2, 3), (0,), (0,), (1,), (1,)),
    ((3,), (3,), (), (), (0,), (0,)),
    ((2,), (3,), (), (), (), ()),
    ((2, 2, 3), (3, 2, 2), (1, 0), (2, 1), (2,), (0,)),
]


def _dot_attrs(lb, rb, lc, rc) -> str:
    def attr(name: str, dims: tuple) -> str:
        return f", {name}={{{','.join(map(str, dims))}}}" if dims else ""

    return (
        attr("lhs_batch_dims", lb)
        + attr("rhs_batch_dims", rb)
        + attr("lhs_contracting_dims", lc)
        + attr("rhs_contracting_dims", rc)
    )


@pytest.mark.parametrize(("lhs", "rhs", "lb", "rb", "lc", "rc"), DOTS)
def test_dot(lhs, rhs, lb, rb, lc, rc) -> None:
    lhs_free = [n for d, n in enumerate(lhs) if d not in lb + lc]
    rhs_free = [n for d, n in enumerate(rhs) if d not in rb + rc]
    out = [lhs[d] for d in lb] + lhs_free + rhs_free
    instr = build(
        [shape_text(lhs), shape_text(rhs)],
        f"{shape_text(out)} dot(p0, p1){_dot_attrs(lb, rb, lc, rc)}",
    )
    check(instr)


def test_scaled_dot() -> None:
    lhs, rhs, lhs_scale, rhs_scale = (2, 6), (6, 4), (2, 2), (3, 4)
    instr = build(
        [shape_text(s) for s in (lhs, rhs, lhs_scale, rhs_scale)],
        "f32[2,4] scaled-dot(p0, p1, p2, p3), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    )
    check(instr, input_to_output=False)


# ---------------------------------------------------------------------------
# tuples, pass-through, bitcast-convert, random numbers
# ---------------------------------------------------------------------------


def test_tuple_and_get_tuple_element() -> None:
    instr = build(["f32[2,3]", "s32[4]"], "(f32[2,3], s32[4]) tuple(p0, p1)")
    check(instr)
    gte = build(["(f32[2,3], s32[4])"], "s32[4] get-tuple-element(p0), index=1")
    check(gte)


@pytest.mark.parametrize(
    ("params", "root", "outputs"),
    [
        (["(f32[2,3], s32[4])"], "(f32[2,3], s32[4]) opt-barrier(p0)", [(2, 3), (4,)]),
        (["f32[2,3]", "token[]"], "f32[2,3] add-dependency(p0, p1)", [(2, 3)]),
        (["f32[3,2]"], "(f32[3,2], f32[3,2], u32[]) copy-start(p0)", [(3, 2), (3, 2), None]),
        (["(f32[3,2], f32[3,2], u32[])"], "f32[3,2] copy-done(p0)", [(3, 2)]),
    ],
)
def test_pass_through(params: list[str], root: str, outputs: list) -> None:
    instr = build(params, root)
    check(instr)
    assert [
        s.dims if s.rank or s.element_type != "u32" else None for s in instr.shape.leaves()
    ] == [tuple(d) if d is not None else None for d in outputs]


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        ("f32[3]", "u8[3,4]"),
        ("u8[3,4]", "f32[3]"),
        ("f32[2,3]", "s32[2,3]"),
        ("f64[2]", "f32[2,2]"),
        ("f32[]", "u16[2]"),
    ],
)
def test_bitcast_convert(src: str, dst: str) -> None:
    instr = build([src], f"{dst} bitcast-convert(p0)")
    check(instr)


def test_rng() -> None:
    instr = build(["f32[]", "f32[]"], "f32[3,2] rng(p0, p1), distribution=rng_uniform")
    check(instr)


def test_rng_bit_generator() -> None:
    instr = build(["u64[2]"], "(u64[2], u32[3,4]) rng-bit-generator(p0), algorithm=rng_default")
    check(instr)


@pytest.mark.parametrize("root", ["f32[2,3] iota(), iota_dimension=1", "f32[2] constant({1, 2})"])
def test_no_operands(root: str) -> None:
    instr = build([], root)
    assert op_rules.output_to_input(instr) == [[]]
    assert op_rules.input_to_output(instr) == []


# ---------------------------------------------------------------------------
# collectives: simulated replicas
# ---------------------------------------------------------------------------


# The provenance interpreter runs one replica; these tests need several, to check which
# replica's copy each output element reads (all-gather's replica-id map) and that the maps
# cover every position a replica may have in its group. A replica's operand is tagged by its
# replica number: element index -> {(replica, index)}.


def _replica_operand(replica: int, dims: Sequence[int]) -> np.ndarray:
    prov = np.empty(tuple(dims), dtype=object)
    for index in np.ndindex(*dims):
        prov[index] = frozenset({(replica, index)})
    return prov


def _reads_of(prov: np.ndarray, replica: int) -> set:
    return {
        (tuple(index), source)
        for index in np.ndindex(*prov.shape)
        for r, source in prov[index]
        if r == replica
    }


@pytest.mark.parametrize(("dims", "axis", "groups"), [((4, 3), 1, 2), ((2, 3), 0, 4), ((3,), 0, 1)])
def test_all_gather_reads_each_replica_block(dims: tuple, axis: int, groups: int) -> None:
    out = [n * groups if k == axis else n for k, n in enumerate(dims)]
    group = "{" + ",".join(map(str, range(groups))) + "}"
    instr = build(
        [shape_text(dims)],
        f"{shape_text(out)} all-gather(p0), replica_groups={{{group}}}, dimensions={{{axis}}}",
    )
    gathered = np.concatenate([_replica_operand(r, dims) for r in range(groups)], axis=axis)
    cell = op_rules.output_to_input(instr)[0][0]
    # (output index, operand index, replica) triples, from the maps and from the reference
    got = set()
    for m in cell.maps:
        replica = {k: r for k, r in relation(cell.replica_id_map)}
        got |= {(k, r, replica[k][0]) for k, r in relation(m)}
    expected = {
        (index, source_index, replica)
        for index in np.ndindex(*out)
        for replica, source_index in gathered[index]
    }
    assert got == expected
    # input to output: a superset whatever this replica's position
    back = maps_relation(op_rules.input_to_output(instr)[0][0])
    for r in range(groups):
        assert back >= inverse(_reads_of(gathered, r))


@pytest.mark.parametrize(("dims", "axis", "groups"), [((4, 3), 0, 2), ((2, 6), 1, 3)])
def test_reduce_scatter_and_all_to_all_cover_every_replica_position(
    dims: tuple, axis: int, groups: int
) -> None:
    group = "{" + ",".join(map(str, range(groups))) + "}"
    out = [n // groups if k == axis else n for k, n in enumerate(dims)]
    scatter = build(
        [shape_text(dims)],
        f"{shape_text(out)} reduce-scatter(p0), replica_groups={{{group}}}, "
        f"dimensions={{{axis}}}, to_apply=add_f32",
        REDUCERS,
    )
    to_all = build(
        [shape_text(dims)],
        f"{shape_text(dims)} all-to-all(p0), replica_groups={{{group}}}, dimensions={{{axis}}}",
    )
    piece = dims[axis] // groups
    for me in range(groups):
        x = _replica_operand(0, dims)
        # reduce-scatter: this replica keeps block `me` of the sum over the group
        block = [slice(None)] * len(dims)
        block[axis] = slice(me * piece, (me + 1) * piece)
        mine = _reads_of(x[tuple(block)], 0)
        assert maps_relation(op_rules.output_to_input(scatter)[0][0]) >= mine
        assert maps_relation(op_rules.input_to_output(scatter)[0][0]) >= inverse(mine)
        # all-to-all: output block r is block `me` of replica r's operand
        received = np.concatenate([x[tuple(block)] for _ in range(groups)], axis=axis)
        mine = _reads_of(received, 0)
        assert maps_relation(op_rules.output_to_input(to_all)[0][0]) >= mine
        assert maps_relation(op_rules.input_to_output(to_all)[0][0]) >= inverse(mine)


def test_collective_permute_and_all_reduce_are_identity() -> None:
    instr = build(
        ["f32[2,3]"], "f32[2,3] collective-permute(p0), source_target_pairs={{0,1},{1,0}}"
    )
    check(instr)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_unknown_op_is_unsupported() -> None:
    instr = build(
        ["f32[4,4]", "f32[4,3]"],
        "f32[4,3] triangular-solve(p0, p1), left_side=true, lower=true, "
        "transpose_a=NO_TRANSPOSE, unit_diagonal=true",
    )
    with pytest.raises(UnsupportedOpError, match="triangular-solve"):
        op_rules.output_to_input(instr)


@pytest.mark.parametrize(
    ("params", "root", "error"),
    [
        (["f32[2,3]"], "f32[3,2] transpose(p0), dimensions={0,0}", HloSemanticError),
        (["f32[2,3]"], "f32[3,2] transpose(p0)", HloSemanticError),
        (["f32[2,3]"], "f32[7] reshape(p0)", UnsupportedOpError),
        (["f32[2,3]"], "f32[2,3] reverse(p0), dimensions={5}", HloSemanticError),
        (["f32[3]"], "u8[5,2] bitcast-convert(p0)", UnsupportedOpError),
    ],
)
def test_bad_attributes_raise_located_errors(params: list[str], root: str, error: type) -> None:
    # XLA's shape checks reject these when the module is parsed; the rules, given them
    # anyway (syntax-only parsing), still fail with a located error, never a crash.
    instr = build(params, root, verify=False)
    with pytest.raises(error) as caught:
        op_rules.output_to_input(instr)
    assert caught.value.span is not None
    assert "r" in caught.value.render()


def test_every_listed_opcode_has_both_directions() -> None:
    o2i, i2o = op_rules.supported_opcodes()
    for opcode in [
        "broadcast",
        "reshape",
        "bitcast",
        "transpose",
        "reverse",
        "slice",
        "pad",
        "concatenate",
        "reduce",
        "sort",
        "dot",
        "tuple",
        "get-tuple-element",
        "bitcast-convert",
        "all-gather",
        "all-reduce",
        "all-to-all",
        "collective-permute",
        "reduce-scatter",
        *UNARY,
        *BINARY,
    ]:
        assert opcode in o2i, opcode
        assert opcode in i2o, opcode
