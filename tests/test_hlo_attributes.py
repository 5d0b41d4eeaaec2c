"""Typed HLO attribute values (hloidx.hlo.attributes), checked on hand-worked examples.

Each expected value below was worked out by hand from the attribute's text and XLA's meaning
of it (hlo_parser.cc), not printed by the code under test.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hloidx.errors import HloSemanticError, HloSyntaxError
from hloidx.hlo import attributes as A
from hloidx.hlo.ir import (
    ConvDimensionNumbers,
    DotDimensionNumbers,
    GatherDimensionNumbers,
    PaddingDim,
    ScatterDimensionNumbers,
    SliceDim,
    WindowDim,
)
from hloidx.hlo.syntax import parse_hlo


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5", 5),
        ("-1", -1),
        (" 12 ", 12),
    ],
)
def test_parse_int(text: str, expected: int) -> None:
    assert A.parse_int(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{1,0}", (1, 0)),
        ("{}", ()),
        ("{ 3, 1 , 2 }", (3, 1, 2)),
        ("{-1}", (-1,)),
    ],
)
def test_parse_int_list(text: str, expected: tuple[int, ...]) -> None:
    assert A.parse_int_list(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{[0:10:1], [2:5]}", (SliceDim(0, 10, 1), SliceDim(2, 5, 1))),
        (
            "{[5:10:1], [3:20:7], [0:50:2]}",
            (SliceDim(5, 10), SliceDim(3, 20, 7), SliceDim(0, 50, 2)),
        ),
        ("{}", ()),
        ("{[ 1 : 4 : 3 ]}", (SliceDim(1, 4, 3),)),
    ],
)
def test_parse_slice(text: str, expected: tuple[SliceDim, ...]) -> None:
    assert A.parse_slice(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1_4_1x4_8_0", (PaddingDim(1, 4, 1), PaddingDim(4, 8, 0))),
        ("0_0x1_2_1", (PaddingDim(0, 0), PaddingDim(1, 2, 1))),
        ("-1_-2", (PaddingDim(-1, -2),)),
        ("3_-1_0x0_0_2", (PaddingDim(3, -1, 0), PaddingDim(0, 0, 2))),
    ],
)
def test_parse_padding(text: str, expected: tuple[PaddingDim, ...]) -> None:
    assert A.parse_padding(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=2x2 rhs_reversal=0x1}",
            (WindowDim(3, 2, 1, 1, 1, 2, False), WindowDim(3, 2, 1, 1, 1, 2, True)),
        ),
        ("{size=1x512 pad=0_0x0_0}", (WindowDim(1), WindowDim(512))),
        (
            "{size=1x2x2x1 stride=1x2x2x1}",
            (WindowDim(1), WindowDim(2, 2), WindowDim(2, 2), WindowDim(1)),
        ),
        (
            "{size=4 pad=-1_2 lhs_dilate=3}",
            (WindowDim(4, pad_low=-1, pad_high=2, base_dilation=3),),
        ),
        ("{}", ()),
    ],
)
def test_parse_window(text: str, expected: tuple[WindowDim, ...]) -> None:
    assert A.parse_window(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("b01f_01io->b01f", ConvDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))),
        ("bf01_oi01->bf01", ConvDimensionNumbers(0, 1, (2, 3), 1, 0, (2, 3), 0, 1, (2, 3))),
        (
            "b012f_012io->b012f",
            ConvDimensionNumbers(0, 4, (1, 2, 3), 3, 4, (0, 1, 2), 0, 4, (1, 2, 3)),
        ),
        ("b0f_0io->b0f", ConvDimensionNumbers(0, 2, (1,), 1, 2, (0,), 0, 2, (1,))),
        # spatial order follows the digits, not the position
        ("b10f_10io->f01b", ConvDimensionNumbers(0, 3, (2, 1), 2, 3, (1, 0), 3, 0, (1, 2))),
        ("bf_io->bf", ConvDimensionNumbers(0, 1, (), 0, 1, (), 0, 1, ())),
    ],
)
def test_parse_dim_labels(text: str, expected: ConvDimensionNumbers) -> None:
    assert A.parse_dim_labels(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("%comp", ["comp"]),
        ("fused_computation.3", ["fused_computation.3"]),
        ("{%a, %b-1}", ["a", "b-1"]),
        ("{}", []),
    ],
)
def test_parse_name_list(text: str, expected: list[str]) -> None:
    assert A.parse_name_list(text) == expected


@pytest.mark.parametrize(
    ("parser", "text", "words"),
    [
        (A.parse_int, "x", "expected an integer"),
        (A.parse_int_list, "1,0", "expected a list of integers"),
        (A.parse_int_list, "{1,,0}", "expected an integer"),
        (A.parse_slice, "{[0:10:1:2]}", "expected [start:limit]"),
        (A.parse_slice, "[0:10]", "expected a slice"),
        (A.parse_padding, "1_2_3_4", "low_high"),
        (A.parse_padding, "a_b", "expected an integer"),
        (A.parse_padding, "", "expected a padding"),
        (A.parse_window, "{stride=2}", "needs size"),
        (A.parse_window, "{size=3x3 stride=2}", "stride has 1 dimensions but size has 2"),
        (A.parse_window, "{size=3 wobble=1}", "unknown window field"),
        (A.parse_window, "{size=3 pad=1_1_1}", "low_high per dimension"),
        (A.parse_dim_labels, "b01f_01io", "expected dimension labels"),
        (A.parse_dim_labels, "b01_01io->b01f", "lack f"),
        (A.parse_dim_labels, "b02f_01io->b01f", "must be 0..N-1"),
        (A.parse_dim_labels, "bb1f_01io->b01f", "repeated label"),
        (A.parse_dim_labels, "b0f_01io->b01f", "as many spatial"),
        (A.parse_name_list, "{%a, 3x}", "expected a computation name"),
    ],
)
def test_malformed_values_raise_syntax_errors(parser, text: str, words: str) -> None:
    with pytest.raises(HloSyntaxError) as caught:
        parser(text)
    assert words in caught.value.message


# ---------------------------------------------------------------------------------------------
# Through the IR: typed properties of parsed instructions
# ---------------------------------------------------------------------------------------------


def root_of(text: str):
    return parse_hlo(text, "a.hlo", verify=False).entry.root  # attribute parsing alone


def test_dot_dimension_numbers() -> None:
    root = root_of(
        "p0 = f32[4,128,256] parameter(0)\np1 = f32[4,256,64] parameter(1)\n"
        "ROOT dot = f32[4,128,64] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, "
        "lhs_contracting_dims={2}, rhs_contracting_dims={1}"
    )
    assert root.dot_dimension_numbers == DotDimensionNumbers((0,), (0,), (2,), (1,))


def test_dot_dimension_numbers_absent_are_empty() -> None:
    root = root_of("p0 = f32[4] parameter(0)\nROOT d = f32[4,4] dot(p0, p0)")
    assert root.dot_dimension_numbers == DotDimensionNumbers()


def test_gather_dimension_numbers() -> None:
    root = root_of(
        "operand = f32[33,76,70] parameter(0)\nindices = s32[1806,2] parameter(1)\n"
        "ROOT gather = f32[1806,7,8,4] gather(operand, indices), offset_dims={1,2,3}, "
        "collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, "
        "slice_sizes={7,8,4}"
    )
    assert root.gather_dimension_numbers == GatherDimensionNumbers((1, 2, 3), (), (0, 1), 1)
    assert root.gather_slice_sizes == (7, 8, 4)


def test_gather_batching_dims() -> None:
    root = root_of(
        "o = f32[2,9] parameter(0)\ni = s32[2,3,1] parameter(1)\n"
        "ROOT g = f32[2,3] gather(o, i), offset_dims={}, collapsed_slice_dims={1}, "
        "start_index_map={1}, index_vector_dim=2, operand_batching_dims={0}, "
        "start_indices_batching_dims={0}, slice_sizes={1,1}"
    )
    assert root.gather_dimension_numbers == GatherDimensionNumbers((), (1,), (1,), 2, (0,), (0,))


def test_scatter_dimension_numbers() -> None:
    root = root_of(
        "HloModule m\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
        " ROOT s = f32[] add(a, b) }\nENTRY e {\n o = f32[10,5] parameter(0)\n"
        " i = s32[3,1] parameter(1)\n u = f32[3,5] parameter(2)\n"
        " ROOT sc = f32[10,5] scatter(o, i, u), update_window_dims={1}, "
        "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
        "to_apply=add\n}"
    )
    assert root.scatter_dimension_numbers == ScatterDimensionNumbers((1,), (0,), (0,), 1)
    assert root.called_computations["to_apply"][0].name == "add"


def test_missing_index_vector_dim_is_a_located_semantic_error() -> None:
    root = root_of(
        "o = f32[9] parameter(0)\ni = s32[3,1] parameter(1)\n"
        "ROOT g = f32[3] gather(o, i), offset_dims={}, collapsed_slice_dims={0}, "
        "start_index_map={0}, slice_sizes={1}"
    )
    with pytest.raises(HloSemanticError) as caught:
        _ = root.gather_dimension_numbers
    assert caught.value.span is not None
    assert caught.value.span.line == 3


def test_instruction_properties() -> None:
    module = parse_hlo("""HloModule m
    ENTRY e {
      p0 = f32[1,17,9,9] parameter(0)
      rev = f32[1,17,9,9] reverse(p0), dimensions={1, 2}
      sl = f32[1,5,3,9] slice(rev), slice={[0:1], [2:17:3], [0:9:3], [0:9]}
      pd = f32[3,7,3,9] pad(sl, c), padding=1_1x1_1_0x0_0x0_0
      c = f32[] constant(0)
      io = s32[4,3] iota(), iota_dimension=1
      cv = f32[1,17,9,9] convolution(p0, p0), window={size=3x3 pad=1_1x1_1},
        dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1
      ds = f32[1,2,3,4] dynamic-slice(p0, c, c, c, c), dynamic_slice_sizes={1,2,3,4}
      t = (f32[1,17,9,9], s32[4,3]) tuple(rev, io)
      ROOT g = s32[4,3] get-tuple-element(t), index=1
    }""")
    by = module.entry.by_name
    assert by["rev"].dimensions == (1, 2)
    assert by["sl"].slice == (SliceDim(0, 1), SliceDim(2, 17, 3), SliceDim(0, 9, 3), SliceDim(0, 9))
    assert by["pd"].padding == (
        PaddingDim(1, 1),
        PaddingDim(1, 1, 0),
        PaddingDim(0, 0),
        PaddingDim(0, 0),
    )
    assert by["io"].iota_dimension == 1
    assert by["cv"].window == (
        WindowDim(3, pad_low=1, pad_high=1),
        WindowDim(3, pad_low=1, pad_high=1),
    )
    assert by["cv"].convolution_dimension_numbers.input_spatial == (1, 2)
    assert (by["cv"].feature_group_count, by["cv"].batch_group_count) == (1, 1)
    assert by["ds"].dynamic_slice_sizes == (1, 2, 3, 4)
    assert by["g"].tuple_index == 1
    assert by["p0"].parameter_number == 0
    assert by["rev"].slice is None
    assert by["rev"].window is None


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-20, 20), st.integers(-20, 20), st.integers(0, 5)),
        min_size=1,
        max_size=5,
    )
)
def test_padding_text_round_trip(dims: list[tuple[int, int, int]]) -> None:
    text = "x".join(f"{lo}_{hi}_{interior}" for lo, hi, interior in dims)
    assert A.parse_padding(text) == tuple(PaddingDim(*d) for d in dims)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 9),
            st.integers(1, 4),
            st.integers(0, 3),
            st.integers(0, 3),
            st.integers(1, 3),
            st.integers(1, 3),
            st.booleans(),
        ),
        min_size=1,
        max_size=4,
    ),
    st.data(),
)
def test_window_text_round_trip(dims: list[tuple], data: st.DataObject) -> None:
    fields = {
        "size": "x".join(str(d[0]) for d in dims),
        "stride": "x".join(str(d[1]) for d in dims),
        "pad": "x".join(f"{d[2]}_{d[3]}" for d in dims),
        "lhs_dilate": "x".join(str(d[4]) for d in dims),
        "rhs_dilate": "x".join(str(d[5]) for d in dims),
        "rhs_reversal": "x".join(str(int(d[6])) for d in dims),
    }
    keys = ["size", *data.draw(st.permutations(list(fields)[1:]))]
    text = "{" + " ".join(f"{k}={fields[k]}" for k in keys) + "}"
    assert A.parse_window(text) == tuple(WindowDim(*d) for d in dims)
