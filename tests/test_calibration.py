"""The default model's measured calibration (hloidx/perf/calibration.py), each rule against a
hand derivation from the figures of data/measured_calibration.json and data/interconnects.json:
kernel floor 1874 ns, launch gap 1152 ns, GEMM efficiency 0.763, collective latency 23434 ns and
bandwidth efficiency 0.405, an L2 round trip of 200 cycles."""

from pathlib import Path

import pytest

from hloidx.hlo.syntax import parse_hlo
from hloidx.perf.devices import CostDevice, cost_device
from hloidx.perf.report import estimate_module

ROOT = Path(__file__).resolve().parent.parent
FLOOR, GAP, GEMM_EFFICIENCY = 1874.0, 1152.0, 0.763
LATENCY, LINK_EFFICIENCY, L2_CYCLES = 23434.0, 0.405, 200.0

_TINY = """HloModule tiny
ENTRY e {
  p = f32[1] parameter(0)
  n = f32[1] negate(p)
  ROOT a = f32[1] abs(n)
}
"""


def test_a_kernel_that_does_nothing_takes_the_floor_and_the_step_the_gap():
    report = estimate_module(_TINY, "a100", "hloidx")
    assert len(report.kernels) == 2
    for k in report.kernels:
        # 4 bytes read and written: a few ns of work at most (one block), plus the floor
        assert k.exec_time_ns == pytest.approx(FLOOR, abs=3.0)
        assert any("kernel floor" in n for n in k.notes)
    assert report.step.time_ns == pytest.approx(2 * (FLOOR + GAP), abs=6.0)
    xla = estimate_module(_TINY, "a100", "xla")
    assert all(k.exec_time_ns < 3.0 for k in xla.kernels)  # XLA's model has no floor
    assert xla.step.time_ns == pytest.approx(2 * 1000.0, abs=6.0)  # XLA's 1 us per launch


def test_the_floor_of_a_device_without_its_own_measurement_says_so():
    report = estimate_module(_TINY, "h100", "hloidx")
    note = next(n for n in report.kernels[0].notes if "kernel floor" in n)
    assert "not measured on this device" in note
    assert report.kernels[0].exec_time_ns == pytest.approx(FLOOR, abs=3.0)


_DOT = """HloModule gemm
ENTRY e {
  x = bf16[4096,512] parameter(0)
  w = bf16[512,512] parameter(1)
  ROOT d = bf16[4096,512] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_a_gemm_without_xla_tables_runs_at_the_measured_efficiency():
    from hloidx.perf.library import estimate_library

    module = parse_hlo(_DOT)
    row = estimate_library(module.entry.root, cost_device("a100"), "hloidx")
    # 2*4096*512*512 flops at 0.763 x the 312 TFLOP/s dense bf16 peak
    compute = 2 * 4096 * 512 * 512 / (GEMM_EFFICIENCY * 312e12) * 1e9
    assert row.compute_time_ns == pytest.approx(compute, abs=0.125)
    memory = (4096 * 512 * 2 + 512 * 512 * 2 + 4096 * 512 * 2) / 2.039e12 * 1e9
    overlapped = max(compute, memory) + 0.05 * min(compute, memory)
    assert row.exec_time_ns == pytest.approx(overlapped, abs=0.125)
    assert "measured share of the datasheet peak" in row.emitter
    # the module's row adds the kernel floor
    report = estimate_module(_DOT, "a100", "hloidx")
    assert report.kernels[0].exec_time_ns == pytest.approx(overlapped + FLOOR, abs=0.25)


def test_a_gemm_from_xla_tables_is_only_raised_to_the_floor():
    from hloidx.perf.matmul_table import estimate_gemm

    report = estimate_module(_DOT, "h100", "hloidx")
    table = estimate_gemm(parse_hlo(_DOT).entry.root, "sm_90").time_ns
    assert table > FLOOR
    assert report.kernels[0].exec_time_ns == pytest.approx(table)


def _gather_row(device: str | CostDevice, model: str = "hloidx"):
    text = (ROOT / "samples" / "step" / "allgather_overlap.hlo").read_text()
    report = estimate_module(text, device, model)
    (row,) = report.collective_rows()
    return row


def test_an_all_gather_on_one_host_is_latency_plus_its_ring_bytes_over_the_link():
    # 8 GPUs gather a bf16[32,512] shard each into bf16[256,512]: 262,144 bytes gathered,
    # 7/8 of them sent by each GPU
    wire = 7 / 8 * 256 * 512 * 2
    a100 = _gather_row("a100")  # NVLink 3: 300 GB/s per direction
    assert a100.exec_time_ns == pytest.approx(LATENCY + wire / (LINK_EFFICIENCY * 300e9) * 1e9)
    assert a100.estimate.communication == "single-host"
    a6000 = _gather_row("rtx-a6000")  # PCIe Gen4 x16: 32 GB/s per direction
    assert a6000.exec_time_ns == pytest.approx(LATENCY + wire / (LINK_EFFICIENCY * 32e9) * 1e9)
    assert "PCIe Gen4" in a6000.estimate.notes[0]
    # XLA's model keeps no estimate where XLA has no table
    assert _gather_row("a100", "xla").estimate is None


def test_a_device_without_interconnect_figures_assumes_pcie_and_says_so():
    base = cost_device("a100")
    custom = CostDevice(
        "my-gpu", "a user's spec", "sm_80", base.core_count, base.fpus_per_core,
        base.clock_rate_ghz, base.memory_bandwidth, base.l2_cache_size,
        profile=base.launch_profile,
    )  # fmt: skip
    row = _gather_row(custom)
    wire = 7 / 8 * 256 * 512 * 2
    assert row.exec_time_ns == pytest.approx(LATENCY + wire / (LINK_EFFICIENCY * 32e9) * 1e9)
    assert "assumed" in row.estimate.notes[0]


_COLLECTIVES = """HloModule c, is_scheduled=true
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[1024] parameter(0)
  ar = f32[1024] all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=add
  rs = f32[256] reduce-scatter(p), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add
  rss = ((f32[1024]), f32[256]) reduce-scatter-start(p), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add
  rsd = f32[256] reduce-scatter-done(rss)
  tiny = f32[1] slice(p), slice={[0:1]}
  one = f32[1] all-reduce(tiny), replica_groups={{0,1,2,3}}, to_apply=add
  ROOT t = (f32[1024], f32[256], f32[256], f32[1]) tuple(ar, rs, rsd, one)
}
"""


def test_all_reduce_and_reduce_scatter_over_four_gpus_by_hand():
    report = estimate_module(_COLLECTIVES, "a100", "hloidx")
    rows = {r.name: r for r in report.collective_rows()}
    rate = LINK_EFFICIENCY * 300e9 / 1e9  # bytes per ns
    # all-reduce of 4 KiB: a ring sends 2 x 3/4 of it
    assert rows["ar"].exec_time_ns == pytest.approx(LATENCY + 2 * 3 / 4 * 4096 / rate)
    # reduce-scatter of a 4 KiB input: 3/4 of it, also in the text's async form
    assert rows["rs"].exec_time_ns == pytest.approx(LATENCY + 3 / 4 * 4096 / rate)
    assert rows["rss"].exec_time_ns == pytest.approx(LATENCY + 3 / 4 * 4096 / rate)
    assert report.step.not_estimated == 0


def test_xla_table_collectives_are_raised_to_the_measured_latency():
    # XLA's H100 table times a 4-byte all-reduce at well under a microsecond
    xla = {r.name: r for r in estimate_module(_COLLECTIVES, "h100", "xla").collective_rows()}
    assert xla["one"].exec_time_ns < LATENCY
    ours = {r.name: r for r in estimate_module(_COLLECTIVES, "h100", "hloidx").collective_rows()}
    assert ours["one"].exec_time_ns == LATENCY
    assert ours["ar"].exec_time_ns == max(LATENCY, xla["ar"].exec_time_ns)


_SCATTER = """HloModule s
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused_scatter {
  operand = f32[40,1500] parameter(0)
  indices = s32[24,1] parameter(1)
  update = f32[24,20,1000] parameter(2)
  ROOT scatter = f32[40,1500] scatter(operand, indices, update), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=UNIQUE, to_apply=add
}
ENTRY e {
  p0 = f32[40,1500] parameter(0)
  p1 = s32[24,1] parameter(1)
  p2 = f32[24,20,1000] parameter(2)
  ROOT f = f32[40,1500] fusion(p0, p1, p2), kind=kInput, calls=fused_scatter
}
"""


def test_a_scatter_whose_rows_may_collide_gets_a_range():
    report = estimate_module(_SCATTER.replace("UNIQUE", "false"), "a100", "hloidx")
    row = next(k for k in report.kernels if k.name == "f")  # (beside the copy of p0)
    low, high = row.exec_time_range_ns
    # no collision: the estimate; every one of the 24 updates on one row: 24 serialized L2
    # round trips of 200 cycles at 1.41 GHz more
    assert low == row.exec_time_ns
    assert high == pytest.approx(low + 24 * L2_CYCLES / 1.41)
    assert "may collide" in row.range_reason
    doc = row.as_json(1.0)
    assert doc["exec_time_range_ns"] == [round(low, 3), round(high, 3)]
    assert low <= doc["exec_time_ns"] <= high


def test_a_scatter_with_unique_indices_and_the_xla_model_get_no_range():
    unique = estimate_module(_SCATTER.replace("UNIQUE", "true"), "a100", "hloidx")
    assert all(k.exec_time_range_ns is None for k in unique.kernels)
    assert all("exec_time_range_ns" not in k.as_json(1.0) for k in unique.kernels)
    xla = estimate_module(_SCATTER.replace("UNIQUE", "false"), "a100", "xla")
    assert all(k.exec_time_range_ns is None for k in xla.kernels)


@pytest.mark.parametrize(
    ("description", "link_gb_per_s", "bf16_tflops"),
    [
        ("NVIDIA A100-SXM4-40GB", 300.0, 312.0),  # nsys-jax's device_description_str
        ("NVIDIA H100 80GB HBM3", 450.0, 989.4),
        ("NVIDIA A100 80GB PCIe", 32.0, 312.0),
        ("AMD Instinct MI300X", 448.0, 1307.4),
    ],
)
def test_a_device_named_as_a_profile_names_it_finds_its_figures(
    description, link_gb_per_s, bf16_tflops
):
    from hloidx.perf.calibration import interconnect
    from hloidx.perf.step_costs import tensor_core_peak

    base = cost_device("a100")
    device = CostDevice(
        description, "a profile", "sm_80", base.core_count, base.fpus_per_core,
        base.clock_rate_ghz, base.memory_bandwidth, base.l2_cache_size,
    )  # fmt: skip
    bandwidth, _, own = interconnect(device)
    assert (bandwidth, own) == (link_gb_per_s * 1e9, True)
    assert tensor_core_peak(description, "bf16")[0] == bf16_tflops * 1e12


def test_a_kernel_beside_an_in_flight_collective_is_slowed_by_the_measured_factor():
    contention = 1.696
    text = (ROOT / "samples" / "step" / "allgather_overlap.hlo").read_text()
    report = estimate_module(text, "a100", "hloidx")
    rows = {k.name: k for k in report.kernels}
    # gemm0 (bf16 [4096,512] x [512,512], as above) runs wholly while the all-gather is in
    # flight (1 us .. 1 + 23.4 + 1.9 us); gemm1 runs after its done
    compute = 2 * 4096 * 512 * 512 / (GEMM_EFFICIENCY * 312e12) * 1e9
    memory = (4096 * 512 * 2 + 512 * 512 * 2 + 4096 * 512 * 2) / 2.039e12 * 1e9
    gemm0 = max(compute, memory) + 0.05 * min(compute, memory) + FLOOR
    assert rows["gemm0"].exec_time_ns == pytest.approx(gemm0 * contention, abs=0.5)
    assert any(n.startswith("100% of it runs while a collective") for n in rows["gemm0"].notes)
    assert not any("collective is in flight" in n for n in rows["gemm1"].notes)
    # the step is timed with the slowed kernel: ag-start 1 us + the gather; gemm0 beside it
    # is shorter than the gather, so the step is start + gather + done + gemm1 + gaps
    gather = report.collective_rows()[0].exec_time_ns
    assert rows["gemm0"].exec_time_ns + GAP < gather
    step = 1000 + gather + 1000 + rows["gemm1"].exec_time_ns + GAP
    assert report.step.time_ns == pytest.approx(step, abs=1.0)


def test_only_the_part_of_a_kernel_beside_a_collective_is_slowed():
    from hloidx.perf.calibration import apply_contention
    from hloidx.perf.costs import KernelCost
    from hloidx.perf.step import Slice

    def kernel(name: str) -> KernelCost:
        return KernelCost(name, "fusion", "kLoop", "loop", 1, 128, 0, 0, 0, 0.0, 0.0, 0.0, 100.0)

    costs = [kernel("a"), kernel("b"), kernel("c")]
    slices = [
        Slice("ar", "communication", 50.0, 250.0, "collective"),
        Slice("a", "compute", 0.0, 100.0, "kernel"),  # half beside it
        Slice("b", "compute", 100.0, 200.0, "kernel"),  # wholly
        Slice("c", "compute", 300.0, 400.0, "kernel"),  # after it
    ]
    assert apply_contention(costs, slices)
    a, b, c = (k.exec_time_ns for k in costs)
    assert a == pytest.approx(50 + 50 * 1.696)
    assert b == pytest.approx(100 * 1.696)
    assert c == 100.0


def test_an_out_of_order_operand_that_fits_in_l2_costs_its_lines_once():
    from hloidx.perf.calibration import apply_l2_lines
    from hloidx.perf.costs import KernelCost, OperandCost

    a100 = cost_device("a100")  # 2,039 GB/s, 40 MiB of L2
    small, large = 2**20, 64 * 2**20
    operands = [
        # 1 MiB read once, 1/8 of each transaction used: 8x the coalesced time
        OperandCost(0, "small", small, small, False, small / (a100.memory_bandwidth / 8) * 1e9,
                    0.125),
        OperandCost(1, "large", large, large, False, large / (a100.memory_bandwidth / 8) * 1e9,
                    0.125),
    ]  # fmt: skip
    write = 2**20 / a100.memory_bandwidth * 1e9
    cost = KernelCost(
        "f", "fusion", "kLoop", "loop", 4096, 128, 0, small + large, 2**20,
        sum(o.read_time_ns for o in operands), write, 0.0, 0.0, operands=operands,
    )  # fmt: skip
    apply_l2_lines(cost, a100)
    # the small operand at the DRAM bandwidth, the large one (beyond L2) keeps its penalty
    assert operands[0].read_time_ns == pytest.approx(small / a100.memory_bandwidth * 1e9)
    assert operands[1].read_time_ns == pytest.approx(8 * large / a100.memory_bandwidth * 1e9)
    assert cost.exec_time_ns == pytest.approx(
        (small + 8 * large + 2**20) / a100.memory_bandwidth * 1e9
    )
    assert "fits in L2" in cost.notes[-1]
