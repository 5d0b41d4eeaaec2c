"""Oracle tests of the windowed and data-dependent rules against reference semantics.

Each op is built as HLO text, its rules are run, and every map's relation (enumerated, with
runtime variables fixed to the values the op really uses) is compared with the reads that
the provenance interpreter (``hloidx.check.oracle``) records: equal when the rule says
``exact``, a superset otherwise. Input-to-output maps are compared with the inverse relation.
XLA's own expectations (``tests/data/xla``) are checked semantically too.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import paths
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rule_relations import inverse, realise

import hloidx
from hloidx.check.oracle import oracle_relation
from hloidx.check.oracle import reads as oracle_reads
from hloidx.errors import HloSemanticError
from hloidx.hlo.ir import (
    ConvDimensionNumbers,
    GatherDimensionNumbers,
    ScatterDimensionNumbers,
    WindowDim,
)
from hloidx.hlo.op_rules import input_to_output, output_to_input
from hloidx.maps.domain import relation
from hloidx.maps.indexing_map import IndexingMap, Variable
from hloidx.maps.interval import Interval

FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def root_of(text: str):
    return hloidx.parse_hlo(text).entry.root


def shape_text(dims, element: str = "f32") -> str:
    return f"{element}[{','.join(map(str, dims))}]"


def check_against(
    instr,
    runtime: dict[str, np.ndarray] | None = None,
    data: dict[str, np.ndarray] | None = None,
) -> None:
    """Both directions of ``instr``'s rules against what the provenance interpreter sees the op
    read. ``data`` (by operand name, default ``runtime``) is the operands' content given to the
    interpreter; ``runtime`` (by producer name) fixes the rule's runtime variables to the
    values the op uses (the clamped starts)."""
    given = runtime if data is None else data
    values = {k: given[o.name] for k, o in enumerate(instr.operands) if given and o.name in given}
    evaluation = oracle_reads(instr, operand_values=values)
    reads = {
        (out_id, op_id): oracle_relation(instr, op_id, out_id, evaluation=evaluation)
        for out_id in range(len(evaluation.outputs))
        for op_id in range(len(instr.operands))
    }
    forward = output_to_input(instr)
    for out_id, row in enumerate(forward):
        for op_id, indexing in enumerate(row):
            got = realise(indexing, runtime)
            want = reads.get((out_id, op_id), set())
            where = f"output {out_id} operand {op_id}: {[str(m) for m in indexing.maps]}"
            if indexing.exact:
                assert got == want, (
                    f"{where}\nmissing {sorted(want - got)[:5]}\nextra {sorted(got - want)[:5]}"
                )
            else:
                assert want <= got, f"{where}\nmissing {sorted(want - got)[:5]}"
    backward = input_to_output(instr)
    for op_id, row in enumerate(backward):
        for out_id, indexing in enumerate(row):
            got = realise(indexing, runtime)
            want = inverse(reads.get((out_id, op_id), set()))
            where = f"operand {op_id} -> output {out_id}: {[str(m) for m in indexing.maps]}"
            if indexing.exact:
                assert got == want, (
                    f"{where}\nmissing {sorted(want - got)[:5]}\nextra {sorted(got - want)[:5]}"
                )
            else:
                assert want <= got, f"{where}\nmissing {sorted(want - got)[:5]}"


# ---------------------------------------------------------------------------
# reduce-window
# ---------------------------------------------------------------------------

_COMBINERS = {
    1: "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] add(a, b) }",
    2: (
        "add2 { a0 = f32[] parameter(0)\n a1 = f32[] parameter(1)\n b0 = f32[] parameter(2)\n"
        " b1 = f32[] parameter(3)\n s0 = f32[] add(a0, b0)\n s1 = f32[] add(a1, b1)\n"
        " ROOT t = (f32[], f32[]) tuple(s0, s1) }"
    ),
}


def window_text(window: list[WindowDim]) -> str:
    def join(values) -> str:
        return "x".join(map(str, values))

    parts = [
        f"size={join(w.size for w in window)}",
        f"stride={join(w.stride for w in window)}",
        "pad=" + "x".join(f"{w.pad_low}_{w.pad_high}" for w in window),
        f"lhs_dilate={join(w.base_dilation for w in window)}",
        f"rhs_dilate={join(w.window_dilation for w in window)}",
    ]
    if any(w.reversal for w in window):
        parts.append(f"rhs_reversal={join(int(w.reversal) for w in window)}")
    return "{" + " ".join(parts) + "}"


@st.composite
def windows(draw, rank: int, reversal: bool = False) -> list[WindowDim]:
    return [
        WindowDim(
            size=draw(st.integers(1, 3)),
            stride=draw(st.integers(1, 3)),
            pad_low=draw(st.integers(-1, 2)),
            pad_high=draw(st.integers(-1, 2)),
            base_dilation=draw(st.integers(1, 3)),
            window_dilation=draw(st.integers(1, 2)),
            reversal=draw(st.booleans()) if reversal else False,
        )
        for _ in range(rank)
    ]


def window_out_dims(in_dims, window: list[WindowDim]) -> list[int]:
    """XLA's windowed output shape: the dilated, padded base, then whole windows by stride."""
    out = []
    for n, w in zip(in_dims, window, strict=True):
        base = max((n - 1) * w.base_dilation + 1 if n else 0, 0) + w.pad_low + w.pad_high
        span = (w.size - 1) * w.window_dilation + 1
        out.append(0 if base < span else (base - span) // w.stride + 1)
    return out


def reduce_window_case(in_dims, window: list[WindowDim], n: int):
    out_dims = window_out_dims(in_dims, window)
    if 0 in out_dims:
        return None
    params = "\n".join(f"p{j} = {shape_text(in_dims)} parameter({j})" for j in range(n))
    inits = "\n".join(f"c{j} = f32[] constant(0)" for j in range(n))
    out = shape_text(out_dims) if n == 1 else "(" + ", ".join([shape_text(out_dims)] * n) + ")"
    operands = ", ".join([f"p{j}" for j in range(n)] + [f"c{j}" for j in range(n)])
    text = (
        f"HloModule m\n{_COMBINERS[n]}\nENTRY e {{\n{params}\n{inits}\n"
        f"ROOT rw = {out} reduce-window({operands}), window={window_text(window)}, "
        f"to_apply={'add' if n == 1 else 'add2'}\n}}"
    )
    return root_of(text)


@FAST
@given(st.data())
def test_reduce_window_matches_reference(data) -> None:
    rank = data.draw(st.integers(1, 3))
    in_dims = [data.draw(st.integers(1, 5 if rank < 3 else 3)) for _ in range(rank)]
    window = data.draw(windows(rank))
    n = data.draw(st.sampled_from([1, 1, 2]))
    instr = reduce_window_case(in_dims, window, n)
    assume(instr is not None)
    check_against(instr)


@pytest.mark.parametrize(
    ("in_dims", "window"),
    [
        ([7], [WindowDim(3, 2, 1, 1)]),
        ([4, 5], [WindowDim(2, 1, -1, 2, 2, 1), WindowDim(3, 2, 0, 0, 1, 2)]),
        ([3, 3], [WindowDim(1, 1, 0, 0, 3, 1), WindowDim(2, 3, 2, -1, 2, 2)]),
    ],
)
def test_reduce_window_table(in_dims, window) -> None:
    instr = reduce_window_case(in_dims, window, 1)
    check_against(instr)


# ---------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------


def labels_text(dn: ConvDimensionNumbers, rank: int) -> str:
    def spell(n: int, roles: dict[int, str]) -> str:
        return "".join(roles[i] for i in range(n))

    lhs = {
        dn.input_batch: "b",
        dn.input_feature: "f",
        **{d: str(k) for k, d in enumerate(dn.input_spatial)},
    }
    rhs = {
        dn.kernel_input_feature: "i",
        dn.kernel_output_feature: "o",
        **{d: str(k) for k, d in enumerate(dn.kernel_spatial)},
    }
    out = {
        dn.output_batch: "b",
        dn.output_feature: "f",
        **{d: str(k) for k, d in enumerate(dn.output_spatial)},
    }
    return f"{spell(rank + 2, lhs)}_{spell(rank + 2, rhs)}->{spell(rank + 2, out)}"


@st.composite
def dimension_numbers(draw, rank: int) -> ConvDimensionNumbers:
    def roles() -> list[int]:
        return draw(st.permutations(list(range(rank + 2))))

    a, b, c = roles(), roles(), roles()
    return ConvDimensionNumbers(
        a[0], a[1], tuple(a[2:]), b[0], b[1], tuple(b[2:]), c[0], c[1], tuple(c[2:])
    )


def conv_case(
    dn: ConvDimensionNumbers,
    spatial,
    window,
    batch: int,
    kernel_in: int,
    per_group: int,
    feature_groups: int,
    batch_groups: int,
):
    rank = len(window)
    groups = feature_groups * batch_groups
    lhs = [0] * (rank + 2)
    lhs[dn.input_batch] = batch * batch_groups
    lhs[dn.input_feature] = kernel_in * feature_groups
    rhs = [0] * (rank + 2)
    rhs[dn.kernel_input_feature] = kernel_in
    rhs[dn.kernel_output_feature] = per_group * groups
    for k in range(rank):
        lhs[dn.input_spatial[k]] = spatial[k]
        rhs[dn.kernel_spatial[k]] = window[k].size
    out = [0] * (rank + 2)
    out[dn.output_batch] = batch
    out[dn.output_feature] = per_group * groups
    spatial_out = window_out_dims(spatial, window)
    for k in range(rank):
        out[dn.output_spatial[k]] = spatial_out[k]
    if 0 in out:
        return None
    extra = f", feature_group_count={feature_groups}" if feature_groups > 1 else ""
    extra += f", batch_group_count={batch_groups}" if batch_groups > 1 else ""
    text = (
        f"HloModule m\nENTRY e {{\nl = {shape_text(lhs)} parameter(0)\n"
        f"k = {shape_text(rhs)} parameter(1)\n"
        f"ROOT c = {shape_text(out)} convolution(l, k), window={window_text(window)}, "
        f"dim_labels={labels_text(dn, rank)}{extra}\n}}"
    )
    return root_of(text)


@FAST
@given(st.data())
def test_convolution_matches_reference(data) -> None:
    rank = data.draw(st.sampled_from([1, 1, 2, 2, 3]))
    dn = data.draw(dimension_numbers(rank))
    spatial = [data.draw(st.integers(1, 5 if rank < 3 else 3)) for _ in range(rank)]
    window = data.draw(windows(rank, reversal=True))
    groups = data.draw(st.sampled_from(["none", "none", "feature", "batch"]))
    feature_groups = data.draw(st.integers(2, 3)) if groups == "feature" else 1
    batch_groups = 2 if groups == "batch" else 1
    instr = conv_case(
        dn,
        spatial,
        window,
        batch=data.draw(st.integers(1, 2)),
        kernel_in=data.draw(st.integers(1, 2)),
        per_group=data.draw(st.integers(1, 2)),
        feature_groups=feature_groups,
        batch_groups=batch_groups,
    )
    assume(instr is not None)
    check_against(instr)


_B01F = ConvDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (1, 2))  # b01f_01io->b01f
_BF01 = ConvDimensionNumbers(0, 1, (2, 3), 1, 0, (2, 3), 0, 1, (2, 3))  # bf01_oi01->bf01


@pytest.mark.parametrize(
    ("dn", "window", "groups"),
    [
        (_B01F, [WindowDim(3, 2, 1, 1), WindowDim(2, 1, 0, 1, 1, 2)], (1, 1)),
        (_BF01, [WindowDim(2, 1, -1, 1, 2, 1), WindowDim(3, 2, 2, 2, 1, 1, True)], (2, 1)),
        (_B01F, [WindowDim(2, 1, 1, 0, 2, 2), WindowDim(1, 1, 0, 0)], (1, 2)),
    ],
)
def test_convolution_table(dn, window, groups) -> None:
    instr = conv_case(
        dn,
        [4, 3],
        window,
        batch=2,
        kernel_in=2,
        per_group=2,
        feature_groups=groups[0],
        batch_groups=groups[1],
    )
    check_against(instr)


def test_convolution_kernel_not_read_in_padding() -> None:
    # A 3-wide window over a 1-element input with padding 1 on each side: only the middle
    # kernel tap meets real input.
    text = """HloModule m
    ENTRY e {
      l = f32[1,1,1] parameter(0)
      k = f32[3,1,1] parameter(1)
      ROOT c = f32[1,1,1] convolution(l, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f
    }"""
    kernel = output_to_input(root_of(text))[0][1]
    assert realise(kernel) == {((0, 0, 0), (1, 0, 0))}


# ---------------------------------------------------------------------------
# dynamic-slice, dynamic-update-slice
# ---------------------------------------------------------------------------


def offsets_text(form: str, offsets, first: int) -> tuple[str, list[str], dict[str, np.ndarray]]:
    """Instructions defining the offsets, their names, and their raw runtime values."""
    lines, names, runtime = [], [], {}
    if form == "rank1":
        lines.append(f"off = s32[{len(offsets)}] parameter({first})")
        return "\n".join(lines), ["off"], {"off": np.array(offsets, dtype=np.int64)}
    for k, value in enumerate(offsets):
        name = f"o{k}"
        if form == "constant" or (form == "mixed" and k % 2 == 0):
            lines.append(f"{name} = s32[] constant({value})")
        else:
            lines.append(f"{name} = s32[] parameter({first + k})")
            runtime[name] = np.array(value, dtype=np.int64)
        names.append(name)
    return "\n".join(lines), names, runtime


def clamp_runtime(
    runtime: dict[str, np.ndarray], names: list[str], dims, sizes
) -> dict[str, np.ndarray]:
    """The values the op uses: XLA clamps every start to [0, dim - size]."""
    hi = np.array([d - s for d, s in zip(dims, sizes, strict=True)])
    out = {}
    for name, value in runtime.items():
        if name == "off":
            out[name] = np.clip(value, 0, hi)
        else:
            k = names.index(name)
            out[name] = np.clip(value, 0, hi[k])
    return out


@st.composite
def slicing(draw):
    rank = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 6 if rank < 3 else 4)) for _ in range(rank)]
    sizes = [draw(st.integers(1, d)) for d in dims]
    offsets = [draw(st.integers(-2, d + 2)) for d in dims]
    form = draw(st.sampled_from(["param", "constant", "mixed", "rank1"]))
    return dims, sizes, offsets, form


@FAST
@given(slicing())
def test_dynamic_slice_matches_reference(case) -> None:
    dims, sizes, offsets, form = case
    lines, names, runtime = offsets_text(form, offsets, 1)
    text = (
        f"HloModule m\nENTRY e {{\nsrc = {shape_text(dims)} parameter(0)\n{lines}\n"
        f"ROOT ds = {shape_text(sizes)} dynamic-slice(src, {', '.join(names)}), "
        f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}\n}}"
    )
    check_against(root_of(text), clamp_runtime(runtime, names, dims, sizes), runtime)


@FAST
@given(slicing())
def test_dynamic_update_slice_matches_reference(case) -> None:
    dims, sizes, offsets, form = case
    lines, names, runtime = offsets_text(form, offsets, 2)
    text = (
        f"HloModule m\nENTRY e {{\nsrc = {shape_text(dims)} parameter(0)\n"
        f"upd = {shape_text(sizes)} parameter(1)\n{lines}\n"
        f"ROOT dus = {shape_text(dims)} dynamic-update-slice(src, upd, {', '.join(names)})\n}}"
    )
    check_against(root_of(text), clamp_runtime(runtime, names, dims, sizes), runtime)


def test_constant_offsets_fold_and_clamp() -> None:
    text = """HloModule m
    ENTRY e {
      p0 = s32[100] parameter(0)
      offset = s64[] constant(99)
      ROOT ds = s32[10] dynamic-slice(p0, offset), dynamic_slice_sizes={10}
    }"""
    operand = output_to_input(root_of(text))[0][0]
    assert operand.runtime_vars == ()
    (only,) = operand.maps
    assert only.num_rt_vars == 0
    assert relation(only) == {((d,), (d + 90,)) for d in range(10)}


def test_full_update_never_reads_the_base() -> None:
    text = """HloModule m
    ENTRY e {
      src = f32[4,3] parameter(0)
      upd = f32[4,3] parameter(1)
      i = s32[] parameter(2)
      j = s32[] parameter(3)
      ROOT dus = f32[4,3] dynamic-update-slice(src, upd, i, j)
    }"""
    base = output_to_input(root_of(text))[0][0]
    assert all(m.is_known_empty for m in base.maps)
    assert realise(base, {"i": np.array(0), "j": np.array(0)}) == set()


# ---------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------

GATHERS = {
    # name: operand dims, indices dims, dimension numbers, slice sizes
    "xla_simplified": (
        [5, 6, 4],
        [3, 2],
        GatherDimensionNumbers((1, 2, 3), (), (0, 1), 1),
        [2, 3, 4],
    ),
    "shuffled_start_map": (
        [5, 6, 4],
        [3, 2],
        GatherDimensionNumbers((1, 2, 3), (), (1, 0), 1),
        [2, 3, 4],
    ),
    "embedding": ([7, 3], [4, 1], GatherDimensionNumbers((1,), (0,), (0,), 1), [1, 3]),
    "implicit_vector": ([6, 4], [2, 3], GatherDimensionNumbers((2,), (0,), (0,), 2), [1, 4]),
    "vector_dim_first": (
        [5, 5, 2],
        [2, 3],
        GatherDimensionNumbers((0, 2), (2,), (2, 0), 0),
        [2, 3, 1],
    ),
    "batching": (
        [2, 5, 3],
        [2, 4, 1],
        GatherDimensionNumbers((2,), (1,), (1,), 2, (0,), (0,)),
        [1, 1, 3],
    ),
    "batching_middle_vector": (
        [2, 6, 3],
        [4, 1, 2],
        GatherDimensionNumbers((1, 3), (), (1,), 1, (0,), (2,)),
        [1, 2, 3],
    ),
}


def gather_out_shape(operand, indices, dn: GatherDimensionNumbers, sizes) -> list[int]:
    batch = [n for i, n in enumerate(indices) if i != dn.index_vector_dim]
    window = [
        sizes[j]
        for j in range(len(operand))
        if j not in dn.collapsed_slice_dims and j not in dn.operand_batching_dims
    ]
    out, b, w = [], iter(batch), iter(window)
    for d in range(len(batch) + len(window)):
        out.append(next(w) if d in dn.offset_dims else next(b))
    return out


def gather_text(operand, indices, dn: GatherDimensionNumbers, sizes) -> str:
    def ints(values) -> str:
        return "{" + ",".join(map(str, values)) + "}"

    out = gather_out_shape(operand, indices, dn, sizes)
    batching = (
        f", operand_batching_dims={ints(dn.operand_batching_dims)}, "
        f"start_indices_batching_dims={ints(dn.start_indices_batching_dims)}"
        if dn.operand_batching_dims
        else ""
    )
    return (
        f"HloModule m\nENTRY e {{\nop = {shape_text(operand)} parameter(0)\n"
        f"idx = {shape_text(indices, 's32')} parameter(1)\n"
        f"ROOT g = {shape_text(out)} gather(op, idx), offset_dims={ints(dn.offset_dims)}, "
        f"collapsed_slice_dims={ints(dn.collapsed_slice_dims)}, "
        f"start_index_map={ints(dn.start_index_map)}, "
        f"index_vector_dim={dn.index_vector_dim}, slice_sizes={ints(sizes)}{batching}\n}}"
    )


def clamp_gather_indices(
    values: np.ndarray, operand, dn: GatherDimensionNumbers, sizes
) -> np.ndarray:
    hi = [operand[j] - sizes[j] for j in dn.start_index_map]
    if dn.index_vector_dim == values.ndim:
        return np.clip(values, 0, hi[0])
    moved = np.moveaxis(values, dn.index_vector_dim, -1)
    return np.moveaxis(np.clip(moved, 0, np.array(hi)), -1, dn.index_vector_dim)


@FAST
@given(st.sampled_from(sorted(GATHERS)), st.data())
def test_gather_matches_reference(name, data) -> None:
    operand, indices, dn, sizes = GATHERS[name]
    top = max(operand) + 2
    values = np.array(
        data.draw(
            st.lists(
                st.integers(-2, top), min_size=int(np.prod(indices)), max_size=int(np.prod(indices))
            )
        ),
        dtype=np.int64,
    ).reshape(indices)
    instr = root_of(gather_text(operand, indices, dn, sizes))
    clamped = clamp_gather_indices(values, operand, dn, sizes)
    check_against(instr, {"idx": clamped}, {"idx": values})


# ---------------------------------------------------------------------------
# scatter
# ---------------------------------------------------------------------------

SCATTERS = {
    # name: operand dims, indices dims, update dims, dimension numbers, variadic count
    "embedding_grad": ([6, 3], [4, 1], [4, 3], ScatterDimensionNumbers((1,), (0,), (0,), 1), 1),
    "windows": ([5, 6], [3, 2], [3, 2, 3], ScatterDimensionNumbers((1, 2), (), (0, 1), 1), 1),
    "shuffled": ([5, 6], [3, 2], [3, 2, 3], ScatterDimensionNumbers((1, 2), (), (1, 0), 1), 1),
    "implicit_vector": ([7], [4], [4], ScatterDimensionNumbers((), (0,), (0,), 1), 1),
    "batching": (
        [2, 5, 3],
        [2, 4, 1],
        [2, 4, 3],
        ScatterDimensionNumbers((2,), (1,), (1,), 2, (0,), (0,)),
        1,
    ),
    "variadic": ([6, 3], [4, 1], [4, 3], ScatterDimensionNumbers((1,), (0,), (0,), 1), 2),
}


def scatter_text(operand, indices, updates, dn: ScatterDimensionNumbers, n: int) -> str:
    def ints(values) -> str:
        return "{" + ",".join(map(str, values)) + "}"

    lines = [f"op{j} = {shape_text(operand)} parameter({j})" for j in range(n)]
    lines.append(f"idx = {shape_text(indices, 's32')} parameter({n})")
    lines += [f"up{j} = {shape_text(updates)} parameter({n + 1 + j})" for j in range(n)]
    out = shape_text(operand) if n == 1 else "(" + ", ".join([shape_text(operand)] * n) + ")"
    operands = ", ".join([f"op{j}" for j in range(n)] + ["idx"] + [f"up{j}" for j in range(n)])
    batching = (
        f", input_batching_dims={ints(dn.input_batching_dims)}, "
        f"scatter_indices_batching_dims={ints(dn.scatter_indices_batching_dims)}"
        if dn.input_batching_dims
        else ""
    )
    body = "\n".join(lines)
    return (
        f"HloModule m\n{_COMBINERS[n]}\nENTRY e {{\n{body}\n"
        f"ROOT s = {out} scatter({operands}), update_window_dims={ints(dn.update_window_dims)}, "
        f"inserted_window_dims={ints(dn.inserted_window_dims)}, "
        f"scatter_dims_to_operand_dims={ints(dn.scatter_dims_to_operand_dims)}, "
        f"index_vector_dim={dn.index_vector_dim}{batching}, "
        f"to_apply={'add' if n == 1 else 'add2'}\n}}"
    )


@FAST
@given(st.sampled_from(sorted(SCATTERS)), st.data())
def test_scatter_matches_reference(name, data) -> None:
    operand, indices, updates, dn, n = SCATTERS[name]
    values = np.array(
        data.draw(
            st.lists(
                st.integers(-2, max(operand) + 1),
                min_size=int(np.prod(indices)),
                max_size=int(np.prod(indices)),
            )
        ),
        dtype=np.int64,
    ).reshape(indices)
    instr = root_of(scatter_text(operand, indices, updates, dn, n))
    check_against(instr, {"idx": values})


def test_scatter_reads_are_exact_when_windows_are_in_bounds() -> None:
    # In-bounds starts: the per-element and per-window readings agree, so equality holds.
    operand, indices, updates, dn, n = SCATTERS["windows"]
    values = np.array([[0, 0], [3, 3], [1, 2]])
    instr = root_of(scatter_text(operand, indices, updates, dn, n))
    evaluation = oracle_reads(instr, operand_values={1: values})
    for k in (1, 2):
        want = oracle_relation(instr, k, 0, evaluation=evaluation)
        assert realise(output_to_input(instr)[0][k], {"idx": values}) == want


# ---------------------------------------------------------------------------
# XLA's own expectations
# ---------------------------------------------------------------------------

_OURS_TIGHTER = {
    # (test, operand): XLA over-approximates, we are exact (checked against the oracle above)
    ("DynamicUpdateSliceOp", 0): "the base is read only outside the update window",
    ("DynamicUpdateSliceOp", 1): "the update is read only inside the window",
    ("ConvolutionOp_BatchGroups", 0): "each output feature group reads one batch group",
    ("ConvolutionOp_PaddingAndWindowStride", 1): "the kernel is not read against padding",
    ("ConvolutionOp_LhsDilation", 1): "the kernel is not read against dilation holes",
}


def _cap_dims(m: IndexingMap, cap: int = 4, runtime: bool = False) -> IndexingMap:
    """``m`` on the first ``cap`` values of each dimension (and runtime variable, when the
    comparison is keyed on them): a sub-box both sides are compared on, to keep XLA's
    large test shapes enumerable."""

    def capped(vs):
        return tuple(
            Variable(v.bounds.intersect(Interval(v.bounds.lower, v.bounds.lower + cap - 1)), v.name)
            for v in vs
        )

    return replace(
        m, dim_vars=capped(m.dim_vars), rt_vars=capped(m.rt_vars) if runtime else m.rt_vars
    )


_OPS = (
    "reduce-window",
    "convolution",
    "dynamic-slice",
    "dynamic-update-slice",
    "gather",
    "scatter",
)


def _xla_cases() -> list:
    path = paths.XLA_TESTS / "analysis_cases.json"
    out = []
    for case in json.loads(path.read_text()):
        if not case.get("hlo") or "Fusion" in case["test"]:
            continue
        try:
            root = hloidx.parse_hlo(case["hlo"]).entry.root
        except Exception:
            continue
        if root.opcode not in _OPS:
            continue
        for expected in case["expected"]:
            if expected["kind"] == "output_to_input":
                out_id = expected.get("output_id", 0)
                for operand in expected["operands"]:
                    out.append(
                        pytest.param(
                            case["hlo"],
                            expected.get("output_id", 0),
                            operand["operand_id"],
                            operand["map"],
                            case["test"],
                            id=f"{case['test']}-out{out_id}-op{operand['operand_id']}",
                        )
                    )
    return out


@pytest.mark.parametrize(("hlo", "output_id", "operand_id", "xla_map", "test"), _xla_cases())
def test_xla_expectations(hlo, output_id, operand_id, xla_map, test) -> None:
    ours = output_to_input(hloidx.parse_hlo(hlo).entry.root)[output_id][operand_id]
    xla = hloidx.parse_map(xla_map)
    # Compare for each runtime value when both sides have the same runtime variables;
    # otherwise (XLA dropped them) compare the relations over all runtime values.
    keyed = all(m.num_rt_vars == xla.num_rt_vars for m in ours.maps)
    theirs = relation(_cap_dims(xla, runtime=keyed), with_runtime=keyed)
    got: set = set()
    for m in ours.maps:
        got |= relation(_cap_dims(m, runtime=keyed), with_runtime=keyed)
    if (test, operand_id) in _OURS_TIGHTER:
        assert got <= theirs  # a subset (strict for each fixed runtime value)
    else:
        assert got == theirs


def test_xla_cases_found() -> None:
    assert len(_xla_cases()) >= 30


# ---------------------------------------------------------------------------
# Real modules and bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "embedding_gather_scatter.opt.hlo",
        "embedding_gather_scatter.pre.hlo",
        "cnn_pool_batchnorm.opt.hlo",
        "cnn_pool_batchnorm.pre.hlo",
        "large_resnet12_fwd_bwd.pre.hlo",
    ],
)
def test_corpus_instructions_have_well_formed_maps(name) -> None:
    path = paths.CORPUS / name
    module = hloidx.parse_hlo(path.read_text(), name)
    seen = 0
    for instr in module.instructions():
        if instr.opcode not in _OPS:
            continue
        seen += 1
        outputs = instr.shape.leaves() if instr.shape.is_tuple else [instr.shape]
        for out_id, row in enumerate(output_to_input(instr)):
            for op_id, indexing in enumerate(row):
                for m in indexing.maps:
                    assert m.num_dims == outputs[out_id].rank
                    assert m.num_results == instr.operands[op_id].shape.rank
                    assert m.num_rt_vars == len(indexing.runtime_vars)
        for op_id, row in enumerate(input_to_output(instr)):
            for out_id, indexing in enumerate(row):
                for m in indexing.maps:
                    assert m.num_dims == instr.operands[op_id].shape.rank
                    assert m.num_results == outputs[out_id].rank
    assert seen > 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "l = f32[2,4,4] parameter(0)\nk = f32[2,3,4] parameter(1)\n"
            "ROOT c = f32[1,2,4] convolution(l, k), window={size=2}, dim_labels=b0f_0io->b0f, "
            "feature_group_count=2, batch_group_count=2",
            "not both",
        ),
        (
            "l = f32[1,4,3] parameter(0)\nk = f32[2,2,4] parameter(1)\n"
            "ROOT c = f32[1,3,4] convolution(l, k), window={size=2x2}, dim_labels=b0f_0io->b0f",
            "window has 2",
        ),
        (
            "p = f32[5] parameter(0)\ni = s32[] parameter(1)\n"
            "ROOT d = f32[7] dynamic-slice(p, i), dynamic_slice_sizes={7}",
            "does not fit",
        ),
        (
            "p = f32[5,3] parameter(0)\ni = s32[] parameter(1)\n"
            "ROOT d = f32[2,3] dynamic-slice(p, i), dynamic_slice_sizes={2,3}",
            "offset operands",
        ),
    ],
)
def test_bad_instructions_raise_located_errors(text, message) -> None:
    # Syntax-only parsing: the rules must reject these themselves, with a location.
    instr = hloidx.parse_hlo(f"HloModule m\nENTRY e {{\n{text}\n}}", verify=False).entry.root
    with pytest.raises(HloSemanticError, match=message) as error:
        output_to_input(instr)
    assert error.value.span is not None


@pytest.mark.parametrize("name", sorted(GATHERS))
def test_gather_runtime_bounds_are_the_clamped_starts(name) -> None:
    operand, indices, dn, sizes = GATHERS[name]
    instr = root_of(gather_text(operand, indices, dn, sizes))
    want = [Interval(0, operand[j] - sizes[j]) for j in sorted(dn.start_index_map)]
    (forward,) = output_to_input(instr)[0][:1]
    (backward,) = input_to_output(instr)[0]
    for indexing in (forward, backward):
        for m in indexing.maps:
            assert [v.bounds for v in m.rt_vars] == want
        assert all(rv.producer.name == "idx" for rv in indexing.runtime_vars)


@given(slicing())
@settings(max_examples=30, deadline=None)
def test_dynamic_slice_runtime_bounds_are_the_clamped_offsets(case) -> None:
    dims, sizes, offsets, _ = case
    lines, names, _ = offsets_text("param", offsets, 1)
    text = (
        f"HloModule m\nENTRY e {{\nsrc = {shape_text(dims)} parameter(0)\n{lines}\n"
        f"ROOT ds = {shape_text(sizes)} dynamic-slice(src, {', '.join(names)}), "
        f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}\n}}"
    )
    (m,) = output_to_input(root_of(text))[0][0].maps
    assert [v.bounds for v in m.rt_vars] == [
        Interval(0, d - s) for d, s in zip(dims, sizes, strict=True)
    ]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_select_and_scatter_covers_the_reference(data) -> None:
    rank = data.draw(st.integers(1, 2))
    dims = [data.draw(st.integers(1, 5)) for _ in range(rank)]
    window = [
        WindowDim(
            size=data.draw(st.integers(1, 3)),
            stride=data.draw(st.integers(1, 3)),
            pad_low=data.draw(st.integers(0, 1)),
            pad_high=data.draw(st.integers(0, 1)),
        )
        for _ in range(rank)
    ]
    values = np.array(
        data.draw(
            st.lists(st.integers(0, 3), min_size=int(np.prod(dims)), max_size=int(np.prod(dims)))
        )
    ).reshape(dims)
    source = window_out_dims(dims, window)
    assume(0 not in source)
    text = (
        "HloModule m\nge { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
        " ROOT c = pred[] compare(a, b), direction=GE }\n" + _COMBINERS[1] + "\nENTRY e {\n"
        f"op = {shape_text(dims)} parameter(0)\nsrc = {shape_text(source)} parameter(1)\n"
        "init = f32[] constant(0)\n"
        f"ROOT s = {shape_text(dims)} select-and-scatter(op, src, init), "
        f"window={window_text(window)}, select=ge, scatter=add\n}}"
    )
    check_against(root_of(text), data={"op": values})
