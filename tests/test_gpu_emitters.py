"""XLA:GPU's reduction and transpose emitters: the parameters XLA's own emitter tests imply,
the thread maps checked as XLA's tests check them (bijections onto the input and the output),
and every input element handled inside the block that writes the output element it goes to."""

from __future__ import annotations

import json
from math import prod

import numpy as np
import paths
import pytest

import hloidx
from hloidx.errors import HloidxError
from hloidx.gpu.analysis import analyze_fusion
from hloidx.gpu.devices import device_profile
from hloidx.gpu.launch import Overrides
from hloidx.gpu.reductions import input_map, output_map
from hloidx.maps.domain import evaluate_results, feasible_points
from hloidx.maps.expr import dim

CASES = json.loads((paths.XLA_TESTS / "reduction_emitter_cases.json").read_text())["cases"]
A6000 = device_profile("rtx-a6000")
#: elements enumerated at most per map
LIMIT = 400_000


def _view(case):
    return analyze_fusion(hloidx.parse_hlo(case["hlo"]).entry.root, A6000)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_emitter_parameters_match_xlas_tests(case) -> None:
    plan = _view(case).launch.reduction
    expect = case["expect"]
    assert plan.detail == expect["detail"]
    if "vector_size" in expect:
        assert plan.vector_size == expect["vector_size"]
    if "shared_rows" in expect:
        assert plan.shared_rows == expect["shared_rows"]
    if "reduced_threads" in expect:
        assert plan.num_threads[1] == expect["reduced_threads"]


def _points(m, limit: int = LIMIT):
    columns, n = feasible_points(m, limit)
    results = np.stack(evaluate_results(m, columns, n), axis=1) if m.results else None
    return columns, n, results


def _distinct_rows(points) -> int:
    """How many distinct rows (index tuples) ``points`` holds: numbered in one mixed radix and
    counted with NumPy (a set of Python tuples took seconds on the million-point cases)."""
    points = np.asarray(points)
    if points.ndim == 1:
        points = points[:, None]
    if len(points) == 0:
        return 0
    low = points.min(axis=0)
    extents = points.max(axis=0) - low + 1
    return int(np.unique(np.ravel_multi_index(tuple((points - low).T), tuple(extents))).size)


def _check_reduction(view) -> None:
    """XLA's bijection checks, and every input element read in the block that writes the
    output element it is reduced into."""
    plan = view.launch.reduction
    for hero in plan.heroes:
        _check_hero(plan, hero)


def _check_hero(plan, hero) -> None:
    in_shape = tuple(hero.operands[0].shape.dims)
    out_shape = tuple(hero.shape.leaves()[0].dims)
    columns, n, targets = _points(input_map(plan, hero, 0))
    # every input element read exactly once (XLA's --bijection_inputs)
    assert n == prod(in_shape)
    assert _distinct_rows(targets) == n
    assert (targets >= 0).all()
    assert (targets < np.array(in_shape)).all()
    # every output element written exactly once (XLA's --bijection_outputs)
    out_columns, m, written = _points(output_map(plan, hero))
    assert m == prod(out_shape)
    assert _distinct_rows(written) == m
    writer_block = {
        tuple(o): (bx, by)
        for o, bx, by in zip(
            written.tolist(),
            out_columns[dim(3)].tolist(),
            out_columns[dim(4)].tolist(),
            strict=True,
        )
    }
    reduced = set(hero.dimensions or ())
    kept = [k for k in range(len(in_shape)) if k not in reduced]
    for t, bx, by in zip(
        targets.tolist(), columns[dim(3)].tolist(), columns[dim(4)].tolist(), strict=True
    ):
        assert writer_block[tuple(t[k] for k in kept)] == (bx, by)


def _small(case) -> bool:
    instr = hloidx.parse_hlo(case["hlo"]).entry.root
    return prod(instr.operands[0].shape.dims) <= LIMIT


@pytest.mark.parametrize("case", [c for c in CASES if c["bijection"]], ids=lambda c: c["name"])
def test_thread_maps_are_bijections_and_blocks_own_their_outputs(case) -> None:
    if not _small(case):
        pytest.skip("too many input elements to enumerate here")
    _check_reduction(_view(case))


#: values set by hand: the emitters' formulas must stay consistent (or refuse the value)
KNOB_SETTINGS = [
    Overrides(vector=1),
    Overrides(vector=2),
    Overrides(vector=4),
    Overrides(threads_per_block=64),
    Overrides(threads_per_block=512),
    Overrides(threads_per_block=128, vector=2),
]


@pytest.mark.parametrize("knobs", KNOB_SETTINGS, ids=repr)
@pytest.mark.parametrize(
    "case", [c for c in CASES if c["bijection"] and _small(c)], ids=lambda c: c["name"]
)
def test_reduction_overrides_keep_the_maps_consistent(case, knobs) -> None:
    view = _with_knobs(case, knobs)
    if view is None:
        return  # refused, with its reason
    if knobs.vector is not None:
        assert view.launch.reduction.vector_size == knobs.vector
    _check_reduction(view)


#: the reasons an emitter gives for a value its formulas cannot take
REFUSAL_REASONS = (
    "--threads-per-block must",
    "--threads-per-block does not apply",
    "--vector",
    "vectors fill a 32-bit shared-memory bank",
    "to be a multiple of its",
)


def _with_knobs(case, knobs):
    """The view under ``knobs``, or None when the emitter refuses them (a value its formulas
    cannot take, said in words)."""
    fusion = hloidx.parse_hlo(case["hlo"]).entry.root
    refusal = ""
    try:
        view = analyze_fusion(fusion, A6000, knobs)
    except HloidxError as error:
        refusal = str(error)
    if refusal:
        assert any(reason in refusal for reason in REFUSAL_REASONS), refusal
        return None
    assert view.launch.overridden
    return view


def test_settings_are_refused_only_where_the_emitter_lacks_them() -> None:
    """Which settings each emitter takes, from the shapes alone: a row of 127 takes no vector
    but 1; a packed transpose's vectors fill 32 bits (4 of s8, 2 of f16); a column
    reduction's threads are fixed by its 32x32 tile; the scatter emitter takes them all."""
    cases = {c["name"]: c for c in CASES + TRANSPOSE_CASES + SCATTER_CASES}

    def accepted(name: str) -> list[bool]:
        fusion = hloidx.parse_hlo(cases[name]["hlo"]).entry.root
        taken = []
        for knobs in KNOB_SETTINGS:
            try:
                analyze_fusion(fusion, A6000, knobs)
                taken.append(True)
            except HloidxError:
                taken.append(False)
        return taken

    # KNOB_SETTINGS: vector 1, 2, 4; threads 64, 512; threads 128 with vector 2
    assert accepted("reduce_row/layout") == [True, False, False, True, True, False]
    assert accepted("reduce_column/odd_sizes") == [True, True, True, False, False, False]
    assert accepted("transpose/packed_transpose_s8") == [False, False, True, True, True, False]
    assert accepted("transpose/packed_transpose_f16") == [False, True, False, True, True, True]
    for name in ("reduce_row/small_f64", "transpose/transpose_021", "scatter/sorted_indices"):
        assert all(accepted(name)), name


def test_tiled_emitters_refuse_what_they_do_not_have() -> None:
    def fails(case_list, name, overrides) -> str:
        case = next(c for c in case_list if c["name"] == name)
        with pytest.raises(HloidxError) as error:
            analyze_fusion(hloidx.parse_hlo(case["hlo"]).entry.root, A6000, overrides)
        return str(error.value)

    assert "does not unroll" in fails(CASES, "reduce_row/small_f64", Overrides(unroll=2))
    assert "32x32" in fails(
        CASES, "reduce_column/vectorize_x4_s16", Overrides(threads_per_block=64)
    )
    assert "multiple of 32" in fails(CASES, "reduce_row/small_f64", Overrides(threads_per_block=48))


def test_scatter_with_distributed_updates_takes_overrides() -> None:
    from hloidx.gpu.launch import Overrides

    case = next(c for c in SCATTER_CASES if c["name"] == "scatter/add")
    fusion = hloidx.parse_hlo(case["hlo"]).entry.root
    view = analyze_fusion(fusion, A6000, Overrides(threads_per_block=32, vector=2))
    assert view.launch.threads_per_block[0] == 32
    assert view.launch.scatter.vector_size == 2
    assert set(view.launch.overridden) == {"vector", "threads_per_block"}
    (update_read,) = [m for r in view.threads.operands[2] for m in r.maps]
    _, n, targets = _points(update_read)
    assert n == 24 * 2 * 3  # still every update element once
    assert _distinct_rows(targets) == n


RESHAPED_TRANSPOSE = """HloModule m
f {
  p0 = f32[64,96] parameter(0)
  t0 = f32[96,64] transpose(p0), dimensions={1,0}
  ROOT b = f32[6144] bitcast(t0)
}
ENTRY e {
  p0 = f32[64,96] parameter(0)
  ROOT reshaped = f32[6144] fusion(p0), kind=kInput, calls=f
}"""


def test_a_fusion_not_modelled_reads_undefined_not_nothing() -> None:
    from hloidx.gpu.report import threads_document

    view = analyze_fusion(hloidx.parse_hlo(RESHAPED_TRANSPOSE).entry.root, A6000)
    assert view.choice.kind == "transpose"
    assert view.launch is None
    assert any("reshapes the transpose" in n for n in view.threads.notes)
    doc = threads_document("m", view, A6000)
    (operand,) = doc["operands"]
    assert operand["undefined"] is True
    assert view.operands[0].method == "heuristic"


SIDE_OUTPUT = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
f {
  p0 = f32[8,2048] parameter(0)
  c = f32[] constant(0)
  e = f32[8,2048] exponential(p0)
  r = f32[8] reduce(e, c), dimensions={1}, to_apply=add
  ROOT t = (f32[8], f32[8,2048]) tuple(r, e)
}
ENTRY e {
  p0 = f32[8,2048] parameter(0)
  ROOT side = (f32[8], f32[8,2048]) fusion(p0), kind=kInput, calls=f
}"""


TWO_GROUPS = """HloModule m
or {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT o = pred[] or(a, b)
}
f {
  p0 = f32[7680,16] parameter(0)
  c = f32[] constant(-1.70141173e+38)
  cb = f32[7680,16] broadcast(c), dimensions={}
  g0 = pred[7680,16] compare(p0, cb), direction=GT
  no = pred[] constant(false)
  r0 = pred[7680] reduce(g0, no), dimensions={1}, to_apply=or
  p1 = f32[7680,16] parameter(1)
  g1 = pred[7680,16] compare(p1, cb), direction=GT
  r1 = pred[7680] reduce(g1, no), dimensions={1}, to_apply=or
  ROOT t = (pred[7680], pred[7680]) tuple(r0, r1)
}
ENTRY e {
  p0 = f32[7680,16] parameter(0)
  p1 = f32[7680,16] parameter(1)
  ROOT two = (pred[7680], pred[7680]) fusion(p0, p1), kind=kInput, calls=f
}"""


def test_independent_reduction_groups_run_on_their_own_block_y() -> None:
    # XLA's reduce_multirow/pred_mof_x2_v4.hlo: the reductions share only a broadcasted
    # constant, so XLA's GroupDisjointReductions gives two groups, one per blockIdx.y
    view = analyze_fusion(hloidx.parse_hlo(TWO_GROUPS).entry.root, A6000)
    plan = view.launch.reduction
    assert (plan.num_groups, plan.hero_groups) == (2, (0, 1))
    assert view.launch.blocks[1] == 2
    _check_reduction(view)  # each hero: bijections, and its blocks own its outputs
    for hero, group in zip(plan.heroes, plan.hero_groups, strict=True):
        columns, n, _ = _points(input_map(plan, hero, 0))
        assert n > 0
        assert set(columns[dim(4)].tolist()) == {group}


def test_side_outputs_are_written_where_the_reduction_reads() -> None:
    # XLA writes a side output with the reduction's input indexing: the thread that reads
    # input element i writes side output element i, each exactly once
    view = analyze_fusion(hloidx.parse_hlo(SIDE_OUTPUT).entry.root, A6000)
    plan = view.launch.reduction
    (hero,) = plan.heroes
    (side,) = plan.side_outputs
    assert side.name == "e"
    reads = _points(input_map(plan, hero, 0))
    writes = _points(view.threads.outputs[1])
    assert writes[1] == prod(side.shape.dims)
    assert _distinct_rows(writes[2]) == writes[1]

    def by_thread(points):
        columns, _, targets = points
        keys = zip(*(columns[dim(k)].tolist() for k in (0, 3)), strict=True)
        return sorted(zip(keys, map(tuple, targets.tolist()), strict=True))

    assert by_thread(reads) == by_thread(writes)


TRANSPOSE_CASES = json.loads((paths.XLA_TESTS / "transpose_emitter_cases.json").read_text())[
    "cases"
]


def _check_transpose(view, expect=None) -> None:
    from hloidx.gpu import transposes

    plan = view.launch.transpose
    packed = isinstance(plan, transposes.PackedPlan)
    if packed:
        reads, writes = transposes.packed_input_map(plan), transposes.packed_output_map(plan)
        # the maps' thread range is the kernel's (XLA's CHECK on th_x)
        assert view.launch.threads_per_block[0] == plan.threads
    else:
        reads, writes = transposes.input_map(plan), transposes.output_map(plan)
    if expect is not None:
        assert packed == expect["packed"]
        if packed:
            shmem = transposes.SHMEM_BANKS * plan.vector_size
            assert [shmem, shmem] == expect["shared_tile"]
        elif "shared_tile" in expect:
            # XLA pads the tile's last dim by one against bank conflicts
            assert [*plan.block_sizes[:-1], plan.block_sizes[-1] + 1] == expect["shared_tile"]
    hero = plan.hero
    in_shape = tuple(hero.operands[0].shape.dims)
    columns, n, targets = _points(reads, 2_000_000)
    assert n == prod(in_shape)  # every input element read once
    assert _distinct_rows(targets) == n
    out_columns, m, written = _points(writes, 2_000_000)
    assert m == prod(in_shape)  # every output element written once
    assert _distinct_rows(written) == m
    # the block that reads input element e writes the output element e moves to
    perm = list(hero.dimensions)
    out_shape = tuple(hero.shape.dims)
    writer = np.full(prod(out_shape), -1, dtype=np.int64)
    writer[np.ravel_multi_index(tuple(written.T), out_shape)] = np.broadcast_to(
        out_columns[dim(3)], (m,)
    )
    moved = np.ravel_multi_index(tuple(targets[:, perm].T), out_shape)
    assert np.array_equal(writer[moved], np.broadcast_to(columns[dim(3)], (n,)))


@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=lambda c: c["name"])
def test_transpose_emitter_on_xlas_tests(case) -> None:
    _check_transpose(_view(case), case["expect"])


@pytest.mark.parametrize("knobs", KNOB_SETTINGS, ids=repr)
@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=lambda c: c["name"])
def test_transpose_overrides_keep_the_maps_consistent(case, knobs) -> None:
    view = _with_knobs(case, knobs)
    if view is not None:
        _check_transpose(view)


SCATTER_CASES = json.loads((paths.XLA_TESTS / "scatter_emitter_cases.json").read_text())["cases"]


@pytest.mark.parametrize("case", SCATTER_CASES, ids=lambda c: c["name"])
def test_scatter_emitter_on_xlas_tests(case) -> None:
    view = _view(case)
    plan = view.launch.scatter
    expect = case["expect"]
    assert plan.variant == expect["variant"]
    if "vector_size" in expect:
        assert plan.vector_size == expect["vector_size"]
    if "indices_vector_size" in expect:
        assert plan.indices_vector_size == expect["indices_vector_size"]
    _check_scatter(view)


@pytest.mark.parametrize("knobs", KNOB_SETTINGS, ids=repr)
@pytest.mark.parametrize("case", SCATTER_CASES, ids=lambda c: c["name"])
def test_scatter_overrides_keep_the_maps_consistent(case, knobs) -> None:
    view = _with_knobs(case, knobs)
    if view is not None:
        _check_scatter(view)


def _check_scatter(view) -> None:
    fusion = view.fusion
    updates = fusion.operands[2].shape
    indices = fusion.operands[1].shape
    (update_read,) = [m for r in view.threads.operands[2] for m in r.maps]
    update_columns, n, targets = _points(update_read, 1_000_000)
    # every update element read exactly once (XLA's --bijection_inputs=scatter:2)
    assert n == prod(updates.dims)
    assert _distinct_rows(targets) == n
    # every index element read
    (index_read,) = [m for r in view.threads.operands[1] for m in r.maps]
    index_columns, _, rows = _points(index_read, 1_000_000)
    assert {tuple(r) for r in rows.tolist()} == set(np.ndindex(*indices.dims))

    def slices_per_thread(columns, results):
        threads = zip(columns[dim(0)].tolist(), columns[dim(3)].tolist(), strict=True)
        out: dict[tuple[int, int], set[int]] = {}
        for thread, row in zip(threads, results[:, 0].tolist(), strict=True):
            out.setdefault(thread, set()).add(row)
        return out

    # a thread reads the index row of every slice whose updates it reads (lanes left
    # without update elements, past the end of a slice, still read the index)
    index_rows = slices_per_thread(index_columns, rows)
    for thread, slices in slices_per_thread(update_columns, targets).items():
        assert slices <= index_rows.get(thread, set()), thread
    # the scattered-into operand and the output depend on index values: UNDEFINED
    assert all(r.undefined for r in view.threads.operands[0])
    assert view.threads.outputs == [None]


#: XLA's in_place_dynamic_update_slice_mlir_test.cc, ThreadIndexing (openxla/xla,
#: xla/service/gpu/fusions/, Apache-2.0): the module and the thread -> update map it expects
IN_PLACE_DUS = """HloModule module
fused_computation {
  in = f32[20,30] parameter(0)
  updates = f32[5,6] parameter(1)
  i0 = s32[] parameter(2)
  i1 = s32[] parameter(3)
  ROOT updated = f32[20,30] dynamic-update-slice(in, updates, i0, i1)
}
ENTRY entry {
  in = f32[20,30] parameter(0)
  updates = f32[5,6] parameter(1)
  i0 = s32[] constant(2)
  i1 = s32[] constant(3)
  ROOT fusion = f32[20,30] fusion(in, updates, i0, i1), kind=kLoop, calls=fused_computation
}"""
IN_PLACE_DUS_UPDATE_MAP = (
    "(th_x, th_y, th_z, bl_x, bl_y, bl_z)[chunk_id, unroll_id] -> (th_x floordiv 6, th_x mod 6), "
    "domain: th_x in [0, 29], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 0], bl_y in [0, 0], "
    "bl_z in [0, 0], chunk_id in [0, 0], unroll_id in [0, 0]"
)


def test_in_place_dynamic_update_slice_matches_xla() -> None:
    from hloidx.maps.domain import relation

    view = _view({"hlo": IN_PLACE_DUS})
    assert view.choice.kind == "dynamic-update-slice"
    (update_read,) = [m for r in view.threads.operands[1] for m in r.maps]
    expected = hloidx.parse_map(IN_PLACE_DUS_UPDATE_MAP)
    assert relation(update_read) == relation(expected)
    # XLA has no map for the base (it is updated in place) nor for where threads write
    assert all(r.undefined for r in view.threads.operands[0])
    assert view.threads.outputs == [None]
    assert any("buffer assignment" in n for n in view.threads.notes)
