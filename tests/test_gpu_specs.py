"""XLA's GPU spec files (xla/tools/hlo_opt/gpu_specs/*.txtpb, zml/xla at 1e203b53) as data and
a reader for a user's own spec file."""

from __future__ import annotations

import dataclasses

import pytest

from hloidx import parse_hlo
from hloidx.perf.devices import cost_device
from hloidx.perf.gpu_specs import (
    GpuSpecError,
    cost_device_from_spec,
    parse_text_proto,
    read_spec,
    xla_specs,
)
from hloidx.perf.library import estimate_library
from hloidx.perf.matmul_table import trunc_ns
from hloidx.perf.ring_latency import default_config

# XLA's h100_sxm.txtpb without its licence header
H100_SXM = """# a comment
gpu_device_info {
  threads_per_block_limit: 1024
  threads_per_warp: 32
  shared_memory_per_block: 49152
  shared_memory_per_core: 233472
  threads_per_core_limit: 2048
  core_count: 132
  fpus_per_core: 128
  block_dim_limit_x: 2147483647
  block_dim_limit_y: 65535
  block_dim_limit_z: 65535
  memory_bandwidth: 3352320000000
  l2_cache_size: 52428800
  clock_rate_ghz: 1.98
  device_memory_size: 84978434048
  shared_memory_per_block_optin: 232448
  cuda_compute_capability {
    major: 9
    feature_extension: ACCELERATED_FEATURES
  }
  registers_per_core_limit: 65536
  registers_per_block_limit: 65536
}
platform_name: "CUDA"
dnn_version_info {
  major: 8
  minor: 9
  patch: 4
}
device_description_str: "NVIDIA H100 80GB HBM3"
"""


# the spec files XLA ships in xla/tools/hlo_opt/gpu_specs at 1e203b53
XLA_SPEC_NAMES = [
    "a100_pcie_80",
    "a100_sxm_40",
    "a100_sxm_80",
    "a6000",
    "b200",
    "h100_pcie",
    "h100_sxm",
    "mi200",
    "p100",
    "v100",
]


def test_the_ten_xla_specs():
    specs = xla_specs()
    assert sorted(specs) == XLA_SPEC_NAMES
    assert specs["b200"].compute_capability == "sm_100"
    assert specs["b200"].description == "NVIDIA B200"
    assert specs["mi200"].platform == "ROCM"
    assert specs["mi200"].threads_per_warp == 64
    assert all("1e203b53" in s.source for s in specs.values())


def test_h100_sxm_spec_is_xlas_h100_test_device():
    """The spec file and XLA's RTXH100SXMDeviceInfo (hloidx's ``h100``) agree."""
    spec = xla_specs()["h100_sxm"]
    h100 = cost_device("h100")
    assert (spec.core_count, spec.fpus_per_core, spec.clock_rate_ghz) == (
        h100.core_count,
        h100.fpus_per_core,
        h100.clock_rate_ghz,
    )
    assert (spec.memory_bandwidth, spec.l2_cache_size) == (
        h100.memory_bandwidth,
        h100.l2_cache_size,
    )
    assert spec.compute_capability == h100.compute_capability


def test_a_users_spec_file_reads_as_the_shipped_one():
    shipped = xla_specs()["h100_sxm"]
    mine = read_spec(H100_SXM, "my/h100_sxm.txtpb")
    assert mine == dataclasses.replace(shipped, source="spec file my/h100_sxm.txtpb")


def test_a_spec_files_device_gets_xlas_unknown_network_defaults():
    spec = read_spec(H100_SXM, "h100.txtpb")
    assert spec.network_name == "<unknown>"
    assert default_config(spec.network_name).nic_speed_gbps == pytest.approx(50.004, abs=1e-3)


def test_bad_spec_points_at_the_error():
    with pytest.raises(GpuSpecError) as error:
        parse_text_proto("gpu_device_info {\n  core_count: 132\n  }\n}\n", "bad.txtpb")
    assert str(error.value).startswith("bad.txtpb:4:1")
    with pytest.raises(GpuSpecError):
        parse_text_proto("gpu_device_info {\n  core_count: 1\n", "short.txtpb")


def test_b200_from_its_spec_takes_the_sm_100_gemm_table():
    """End to end: the B200 spec's device costs XLA's B200 exact_match1_bf16 at 9 µs."""
    dot = parse_hlo(
        """HloModule m

ENTRY r {
  lhs = bf16[1,1024,512] parameter(0)
  rhs = bf16[1,512,4096] parameter(1)
  ROOT d = bf16[1,1024,4096] dot(lhs, rhs), lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_batch_dims={0}, rhs_batch_dims={0}
}
"""
    ).entry.root
    cost = estimate_library(dot, cost_device_from_spec(xla_specs()["b200"]))
    assert trunc_ns(cost.exec_time_ns, 1000) == 9000
    assert "sm_100" in cost.emitter
