"""``--model xla`` against every assertion of XLA's ``gpu_indexing_performance_model_test.cc``
that can be stated as a module (``tests/data/xla/cost/expected.json``), within XLA's tolerance."""

from __future__ import annotations

import json

import paths
import pytest

import hloidx
from hloidx.perf import estimate_module
from hloidx.perf.devices import cost_device
from hloidx.perf.flops import flop_count, flops_per_element
from hloidx.perf.fusion_model import estimate_fusion
from hloidx.perf.kernels import find_kernels
from hloidx.perf.report import estimate_kernel
from hloidx.perf.tiled import (
    NotTileable,
    best_tiling,
    estimate_tiled,
    launch_for_tiles,
    num_output_tiles,
    tile_computation,
)

DATA = paths.ROOT / "tests" / "data" / "xla" / "cost"
CASES = json.loads((DATA / "expected.json").read_text())["cases"]
DEVICE = cost_device("rtx-a6000")
UNITS = {"ns": 1.0, "us": 1e3, "s": 1e9}


def _module(case):
    return hloidx.parse_hlo((DATA / case["file"]).read_text())


def _value(cost, key: str):
    """A field of a KernelCost in the unit the key names (``exec_time_us``)."""
    for unit, scale in UNITS.items():
        if key.endswith("_" + unit):
            field = key[: -len(unit)] + "ns"
            value = getattr(cost, field)
            return None if value is None else value / scale
    return getattr(cost, key)


def _check(cost, case) -> None:
    for key, want in case.get("expect", {}).items():
        assert _value(cost, key) == want, (case["test"], key)
    for key, (want, tolerance, *how) in case.get("near", {}).items():
        got = _value(cost, key)
        assert got is not None, (case["test"], key)
        if how == ["truncate"]:
            got = int(got)
        assert abs(got - want) <= tolerance, (case["test"], key, got)


@pytest.mark.parametrize("case", CASES, ids=[f"{c['test']}-{c.get('tile', '')}" for c in CASES])
def test_xla_model_reproduces_xla_assertion(case) -> None:
    module = _module(case)
    root = module.entry.root
    call = case["call"]
    if call == "fusion":
        kernels, _ = find_kernels(module)
        assert len(kernels) == 1
        _check(estimate_fusion(kernels[0].fusion, DEVICE, "xla"), case)
    elif call == "module":
        report = estimate_module(module, "rtx-a6000", "xla")
        assert len(report.kernels) == case["expect"]["kernels"]
        assert report.kernels_time_ns == case["expect"]["kernels_time_ns"]
    elif call == "triton":
        kernels, _ = find_kernels(module)
        assert kernels[0].kind == "triton"
        _check(estimate_kernel(kernels[0], DEVICE, "xla"), case)
    elif call == "search":
        best = best_tiling(root, DEVICE)
        assert best is not None
        _check(best.cost, case)
    elif call == "tiled":
        cost = estimate_tiled(root, DEVICE, tuple(case["tile"]), tuple(case["launch"])).cost
        _check(cost, case)
        if not cost.fits:
            assert cost.exec_time_ns is None  # a spilling tiling never gets a number
    elif call == "ratio":
        launch = tuple(case["launch"])
        good = estimate_tiled(root, DEVICE, tuple(case["tile"]), launch).cost
        bad = estimate_tiled(root, DEVICE, tuple(case["other_tile"]), launch).cost
        _check(good, case)
        _check(bad, case)
        want, tolerance = case["ratio"]
        field = case["field"]
        assert abs(getattr(bad, field) / getattr(good, field) - want) <= tolerance
    elif call == "launch":
        sizes = tuple(case["tile"])
        tiles = tile_computation(root, sizes)
        blocks, threads = launch_for_tiles(tiles, num_output_tiles(root, sizes), DEVICE)
        assert (blocks, threads) == (
            case["expect"]["blocks"],
            case["expect"]["threads_per_block"],
        )
    else:  # pragma: no cover - a case the table names but the test does not know
        raise AssertionError(call)


def test_tiled_model_refuses_a_concatenate_inside() -> None:
    # EstimateRunTimeForTiledFusion_ConcatenateIsNotSupported: no estimate for the tiling
    module = hloidx.parse_hlo(
        """HloModule m
concatenate_fusion {
  param_0 = f32[32, 128] parameter(0)
  param_1 = f32[64, 128] parameter(1)
  ROOT concatenate = f32[96, 128] concatenate(param_0, param_1), dimensions={0}
}
ENTRY main {
  param_0 = f32[32, 128] parameter(0)
  param_1 = f32[64, 128] parameter(1)
  ROOT fusion = f32[96, 128] fusion(param_0, param_1), kind=kCustom, calls=concatenate_fusion
}"""
    )
    with pytest.raises(NotTileable):
        estimate_tiled(module.entry.root, DEVICE, (1, 128), (96, 128))


# FlopsPerElementTest: XLA checks FlopsPerElement x elements == GpuHloCostAnalysis::flop_count.
# The numbers, by hand from XLA's rules and the sm_86 table of hlo_op_profiles_data.h:
FLOPS_CASES = [
    # reduce f32[32,40] -> f32[32] with add (no sm_86 entry: 3): 32 x 39 x 3
    (
        "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
        "ENTRY e { p = f32[32,40] parameter(0)\n c0 = f32[] constant(0)\n"
        " ROOT r = f32[32] reduce(p, c0), dimensions={1}, to_apply=add }",
        3744,
    ),
    # variadic reduce with add (3) and multiply (sm_86 f32: 3): 32 x 39 x 6
    (
        "am { p0 = f32[] parameter(0)\n p1 = f32[] parameter(1)\n p2 = f32[] parameter(2)\n"
        " p3 = f32[] parameter(3)\n a = f32[] add(p0, p2)\n m = f32[] multiply(p1, p3)\n"
        " ROOT t = (f32[], f32[]) tuple(a, m) }\n"
        "ENTRY e { p = f32[32,40] parameter(0)\n c0 = f32[] constant(0)\n"
        " ROOT r = (f32[32], f32[32]) reduce(p, p, c0, c0), dimensions={1}, to_apply=am }",
        7488,
    ),
    # cosine f32 on sm_86: 662 cycles, x 32 elements
    ("ENTRY e { p = f32[32] parameter(0)\n ROOT c = f32[32] cosine(p) }", 662 * 32),
    # clamp has no entry: 3 x 32
    (
        "ENTRY e { p0 = f32[32] parameter(0)\n p1 = f32[32] parameter(1)\n"
        " p2 = f32[32] parameter(2)\n ROOT c = f32[32] clamp(p0, p1, p2) }",
        96,
    ),
    # gather issues no flops
    (
        "ENTRY e { operand = f32[33,76,70] parameter(0)\n indices = s32[1806,2] parameter(1)\n"
        " ROOT g = f32[1806,7,8,4] gather(operand, indices), offset_dims={1,2,3},"
        " collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1,"
        " slice_sizes={7,8,4} }",
        0,
    ),
    # reduce-window, window 7 on one dim: (7 - 1) x 13*3*8*15 outputs x add 3
    (
        "add { l = f32[] parameter(0)\n r = f32[] parameter(1)\n ROOT a = f32[] add(l, r) }\n"
        "ENTRY e { p = f32[13,12,8,15] parameter(0)\n c0 = f32[] constant(0)\n"
        " ROOT rw = f32[13,3,8,15] reduce-window(p, c0), window={size=1x1x7x1 stride=1x4x1x1"
        " pad=0_0x0_0x3_3x0_0}, to_apply=add }",
        6 * 13 * 3 * 8 * 15 * 3,
    ),
]


@pytest.mark.parametrize(("text", "total"), FLOPS_CASES, ids=lambda v: str(v)[:20])
def test_flops_per_element_matches_xla_flop_count(text: str, total: int) -> None:
    root = hloidx.parse_hlo("HloModule m\n" + text).entry.root
    first = root.shape.leaves()[0] if root.shape.is_tuple else root.shape
    assert flops_per_element(root, "sm_86") * first.num_elements() == total
    assert flop_count(root, "sm_86") == total
