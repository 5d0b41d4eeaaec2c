"""hloidx.perf.step_costs: one GEMM's / one collective's time for the step (issue 36).

Oracles: XLA's matmul_interpolator_test.cc numbers (Trunc to 1 µs), NVIDIA datasheet peaks with
hand arithmetic, and XLA's tables themselves read directly from the data file (properties)."""

from __future__ import annotations

import json
import math
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hloidx import parse_hlo
from hloidx.perf.step_costs import gemm_time_ns, tensor_core_peak


def _dot(b: int, m: int, n: int, k: int, lhs: str, rhs: str, out: str):
    text = f"""HloModule m

ENTRY r {{
  lhs = {lhs}[{b},{m},{k}] parameter(0)
  rhs = {rhs}[{b},{k},{n}] parameter(1)
  ROOT d = {out}[{b},{m},{n}] dot(lhs, rhs), lhs_contracting_dims={{2}}, rhs_contracting_dims={{1}}, lhs_batch_dims={{0}}, rhs_batch_dims={{0}}
}}
"""
    module = parse_hlo(text)
    return module.entry.root, module


@pytest.mark.parametrize(
    ("b", "m", "n", "k", "micros"),
    [(1, 1024, 4096, 512, 12), (4, 256, 1024, 256, 6), (1, 1024, 2048, 512, 8)],
)
def test_h100_answers_with_xlas_table(b, m, n, k, micros):
    """matmul_interpolator_test.cc H100BF16 cases, through the API on an HLO dot."""
    dot, module = _dot(b, m, n, k, "bf16", "bf16", "bf16")
    ns, how = gemm_time_ns(dot, module, "h100", "xla")
    assert int(ns // 1000) == micros
    assert "XLA's measured GEMM table (sm_90" in how


def test_a100_answers_with_the_tensor_core_roofline():
    """No sm_80 table: 2·4096³ flops at the A100 datasheet's dense bf16 312 TFLOP/s."""
    dot, module = _dot(1, 4096, 4096, 4096, "bf16", "bf16", "bf16")
    ns, how = gemm_time_ns(dot, module, "a100")
    assert ns == pytest.approx(2 * 4096**3 / 312e12 * 1e9, abs=0.25)
    assert ns == pytest.approx(440509.4, abs=0.1)
    assert how.startswith("tensor-core roofline, not XLA's model")
    assert "312 TFLOP/s" in how
    assert "datasheet" in how


def test_no_figure_no_answer():
    """Volta and Pascal have no bf16 matrix path: a bf16 GEMM gets no tensor-core answer there
    (the cost row keeps its FPU roofline); f16 has one. A non-GEMM is not a GEMM."""
    dot, module = _dot(1, 256, 256, 256, "bf16", "bf16", "bf16")
    assert gemm_time_ns(dot, module, "v100") is None
    assert gemm_time_ns(dot, module, "p100") is None
    half, half_module = _dot(1, 256, 256, 256, "f16", "f16", "f16")
    ns, how = gemm_time_ns(half, half_module, "v100")
    assert ns == pytest.approx(2 * 256**3 / 125e12 * 1e9, abs=0.25)
    assert "V100" in how
    assert gemm_time_ns(dot.operands[0], module, "h100") is None


def test_every_device_has_its_matrix_peaks():
    """Every name --device takes finds its peaks (XLA's spec names through the aliases), and a
    peak is never below the device's own FPU rate (fpus x cores x 2 x clock, from its spec)."""
    from hloidx.perf.gpu_specs import resolve_device
    from hloidx.perf.step_costs import device_rows

    for row in device_rows():
        device = resolve_device(row["name"])
        table = device.compute_capability in ("sm_90", "sm_100")
        assert ("XLA's measured GEMM table" in row["gemm"]) == table, row
        assert table or "roofline at dense peaks" in row["gemm"], row
        found = {t: tensor_core_peak(device.name, t) for t in ("bf16", "f16", "f32", "s8")}
        assert any(found.values()), row["name"]
        fpu = device.core_count * device.fpus_per_core * 2 * device.clock_rate_ghz * 1e9
        for dtype, peak in found.items():
            if peak is not None:
                assert peak[0] >= fpu * 0.99, (row["name"], dtype)


def test_hloidx_model_reads_f16_from_the_bf16_table():
    """XLA's fallback reads f16 at doubled dims (8x the flops); --model hloidx reads the bf16
    table at the GEMM's own dims, which is the bf16 GEMM's time exactly."""
    f16, module = _dot(1, 1024, 4096, 512, "f16", "f16", "f16")
    bf16, module_b = _dot(1, 1024, 4096, 512, "bf16", "bf16", "bf16")
    xla_ns, xla_how = gemm_time_ns(f16, module, "h100", "xla")
    ours_ns, ours_how = gemm_time_ns(f16, module, "h100", "hloidx")
    assert ours_ns == gemm_time_ns(bf16, module_b, "h100", "xla")[0]
    assert "fallback" in xla_how
    assert "hloidx: f16 read from the bf16 table" in ours_how
    assert xla_ns > 4 * ours_ns


def test_hloidx_model_caps_the_sm90_fp8_table_at_the_h100_peak():
    """XLA's sm_90 fp8 table reaches ~2.6 PFLOP/s, above the H100 SXM datasheet's dense fp8
    1978.9 TFLOP/s: --model xla keeps it, --model hloidx caps it and says so."""
    dot, module = _dot(4, 4096, 4096, 4096, "f8e5m2", "f8e4m3fn", "bf16")
    flops = 2 * 4 * 4096**3
    xla_ns, _ = gemm_time_ns(dot, module, "h100", "xla")
    ours_ns, how = gemm_time_ns(dot, module, "h100", "hloidx")
    assert flops / (xla_ns * 1e-9) > 1978.9e12
    assert ours_ns == pytest.approx(flops / 1978.9e12 * 1e9, abs=0.25)
    assert "capped at the peak" in how


def _table(profile: str):
    text = resources.files("hloidx.perf").joinpath("data/xla_matmul_tables.json").read_text()
    return json.loads(text)["tables"][profile]


def test_xlas_tables_against_the_datasheet_peaks():
    """What is true of XLA's measured rates vs the dense peaks: H100 bf16 and f32 (TF32) under
    the SXM peak; the fp8 tables above it (the quirk --model hloidx caps); B200 all under."""
    for profile, device, over in (("sm_90", "h100", {"f8"}), ("sm_100", "b200", set())):
        table = _table(profile)
        for i, key in enumerate(table["columns"][4:], 4):
            dtype = key.split("x")[0]
            peak, _ = tensor_core_peak(device, dtype)
            top = max(row[i] for row in table["rows"])
            assert (top > peak) == any(dtype.startswith(p) for p in over), (profile, key)


def test_xlas_gemm_tables_are_not_monotone():
    """Doubling one of b, m, n, k can make XLA's measured time drop (so 'more work never
    faster' does not hold on the grid): there is such a pair in both tables, bf16 included."""
    for profile in ("sm_90", "sm_100"):
        table = _table(profile)
        rates = {tuple(r[:4]): r[4] for r in table["rows"]}
        drops = 0
        for (b, m, n, k), rate in rates.items():
            for axis in range(4):
                bigger = [b, m, n, k]
                bigger[axis] *= 2
                other = rates.get(tuple(bigger))
                if other is not None and 2 * math.prod(bigger) / other < 2 * b * m * n * k / rate:
                    drops += 1
        assert drops > 0


@settings(max_examples=40, deadline=None)
@given(
    b=st.sampled_from([1, 2, 4]),
    m=st.integers(4096, 20000),
    n=st.integers(4096, 20000),
    k=st.integers(4096, 20000),
    grow=st.integers(1, 5000),
    axis=st.integers(0, 2),
)
def test_more_work_never_faster_beyond_the_grid(b, m, n, k, grow, axis):
    """Past the grid's top corner XLA clamps to one rate, so time grows with the work there."""
    dims = [m, n, k]
    bigger = list(dims)
    bigger[axis] += grow
    small = gemm_time_ns(_dot(b, *dims, "bf16", "bf16", "bf16")[0], None, "h100")[0]
    large = gemm_time_ns(_dot(b, *bigger, "bf16", "bf16", "bf16")[0], None, "h100")[0]
    assert large >= small


@settings(max_examples=30, deadline=None)
@given(
    b=st.sampled_from([1, 2, 4]),
    m=st.integers(1, 9000),
    n=st.integers(1, 9000),
    k=st.integers(1, 9000),
)
def test_h100_bf16_never_above_the_sxm_peak(b, m, n, k):
    dot, module = _dot(b, m, n, k, "bf16", "bf16", "bf16")
    ns, _ = gemm_time_ns(dot, module, "h100", "xla")
    # the time is rounded to a quarter nanosecond: allow half a tick
    assert 2 * b * m * n * k <= 989.4e12 * (ns + 0.125) * 1e-9


_ALL_REDUCE = """HloModule m, replica_count=8

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY e {{
  p = f32[{n}] parameter(0)
  ROOT ar = f32[{n}] all-reduce(p), replica_groups={{{{0,1,2,3,4,5,6,7}}}}, to_apply=add
}}
"""


def test_a100_cost_row_is_the_tensor_core_roofline_with_its_bytes():
    # a bf16 [4096,512] x [512,512] dot on the A100: 2*4096*512*512 flops at the 312 TFLOP/s
    # dense bf16 peak; 8 MiB read (x and w) + 4 MiB written at 2.039 TB/s, overlapped 95%
    from hloidx.perf.devices import cost_device
    from hloidx.perf.library import estimate_library

    module = parse_hlo(
        "ENTRY e {\n  x = bf16[4096,512] parameter(0)\n  w = bf16[512,512] parameter(1)\n"
        "  ROOT d = bf16[4096,512] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}"
    )
    row = estimate_library(module.entry.root, cost_device("a100"), "xla")
    compute = 2 * 4096 * 512 * 512 / 312e12 * 1e9
    memory = (4096 * 512 * 2 + 512 * 512 * 2 + 4096 * 512 * 2) / 2.039e12 * 1e9
    # durations are whole quarter-nanoseconds, as absl::Duration keeps them
    assert row.compute_time_ns == pytest.approx(compute, abs=0.125)
    overlapped = max(compute, memory) + 0.05 * min(compute, memory)
    assert row.exec_time_ns == pytest.approx(overlapped, abs=0.125)
    assert "tensor-core roofline (datasheet peak)" in row.emitter
