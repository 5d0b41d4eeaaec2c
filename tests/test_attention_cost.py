"""Fused attention calls costed as the kernels compute them (hloidx/perf/attention_cost.py),
and the AMD figures of the default model's calibration, each against a hand derivation.

Attention flops, by hand: the forward kernel does two GEMMs per kept score, S = Q K^T and
O = P V: 2 * (Dqk + Dv) flops per score; the backward kernel five (S again, dV, dP, dQ, dK):
2 * (3 Dqk + 2 Dv). A causal mask over S x S keeps S (S + 1) / 2 scores (the diagonal and below).
"""

from pathlib import Path

import numpy as np
import pytest

from hloidx.hlo.syntax import parse_hlo
from hloidx.perf.attention_cost import allowed_pairs, attention_work
from hloidx.perf.devices import CostDevice, cost_device
from hloidx.perf.report import estimate_module

ROOT = Path(__file__).resolve().parent.parent
#: the module of the MI355X profile (934987a2fc2f.xplane.pb), as jaxlib prints its HloProto
TE_MODULE = ROOT / "tests/data/binary_hlo/xplane_embedded/jit_loss_fn.17.jaxlib.txt"
CUDNN_MODULE = ROOT / "tests/data/gpu/attention/bhsd_softmax_fwd_bwd.hlo"


def _instruction(module, name):
    return next(i for i in module.instructions() if i.name == name)


def test_te_attention_flops_from_its_backend_config():
    # te_fused_attn_forward_ffi.10's backend_config: input_batch = 2, attn_heads = 16,
    # q_max_seqlen = kv_max_seqlen = 2048, qk_head_dim = v_head_dim = 128, mask_type = 2
    # (causal), qkv_layout = 5 (BS3HD: Q, K, V packed in one operand)
    module = parse_hlo(TE_MODULE.read_text())
    b, h, s, d = 2, 16, 2048, 128
    kept = s * (s + 1) // 2
    forward = attention_work(_instruction(module, "te_fused_attn_forward_ffi.10"))
    assert forward is not None
    assert not forward.backward
    assert forward.flops == 4 * b * h * d * kept  # half of 4 B H Sq Skv D, plus the diagonal
    assert forward.flops == 16_384 * 2_098_176  # 4*2*16*128 x 2048*2049/2
    backward = attention_work(_instruction(module, "te_fused_attn_backward_ffi.12"))
    assert backward is not None
    assert backward.backward
    assert backward.flops == 10 * b * h * d * kept  # 2.5x the forward's
    assert attention_work(_instruction(module, "custom-call.1")) is None  # a GEMM


def test_cudnn_attention_flops_from_its_dot_dimension_numbers():
    # Q, K, V bf16[2,6,1024,64] (batch, heads, positions, features), mask CAUSAL
    module = parse_hlo(CUDNN_MODULE.read_text())
    b, h, s, d = 2, 6, 1024, 64
    kept = s * (s + 1) // 2
    forward = attention_work(_instruction(module, "fmha-bmm-softmax-bmm"))
    assert forward is not None
    assert forward.flops == 4 * b * h * d * kept
    backward = attention_work(_instruction(module, "fmha-bmm-softmax-bmm-backward"))
    assert backward is not None
    assert backward.flops == 10 * b * h * d * kept


@pytest.mark.parametrize(
    ("sq", "skv", "lower", "upper"),
    [(7, 7, None, None), (7, 7, None, 0), (5, 9, None, 4), (9, 9, -2, 1), (4, 6, 1, None)],
)
def test_kept_scores_against_a_mask_matrix(sq, skv, lower, upper):
    s = np.arange(sq)[:, None]
    t = np.arange(skv)[None, :]
    ok = np.ones((sq, skv), dtype=bool)
    if lower is not None:
        ok &= t - s >= lower
    if upper is not None:
        ok &= t - s <= upper
    assert allowed_pairs(sq, skv, lower, upper) == int(ok.sum())


def test_attention_runs_at_the_measured_tensor_core_rate_and_xla_counts_no_flops():
    b, h, s, d = 2, 6, 1024, 64
    flops = 4 * b * h * d * s * (s + 1) // 2
    # A100: 312 TFLOP/s dense bf16 (datasheet) x the measured GEMM efficiency 0.763
    rate_per_ns = 312e12 * 0.763 / 1e9
    report = estimate_module(CUDNN_MODULE.read_text(), "a100", "hloidx")
    row = next(k for k in report.kernels if k.name == "fmha-bmm-softmax-bmm")
    assert row.flops == flops
    assert row.compute_time_ns == pytest.approx(flops / rate_per_ns, abs=0.5)  # ns, rounded
    # Q, K, V read once; O (bf16) and the statistics (f32) written; the u8 workspace is not
    assert row.bytes_written == 2 * 6 * 1024 * 64 * 2 + 2 * 6 * 1024 * 4
    xla = estimate_module(CUDNN_MODULE.read_text(), "a100", "xla")
    assert next(k for k in xla.kernels if k.name == "fmha-bmm-softmax-bmm").flops == 0


def _amd(name: str, cc: str) -> CostDevice:
    base = cost_device("a100")
    from dataclasses import replace

    return replace(base, name=name, compute_capability=cc, warp_size=64)


def test_an_amd_gpu_takes_the_amd_floor_and_the_matrix_core_efficiency():
    from hloidx.perf.calibration import gemm_efficiency, kernel_floor

    # measured on the MI355X step: its 3 kernels under 1 KiB took 3.73, 4.05, 4.22 us
    mi355x = _amd("AMD GPU with 256 cores, compute capability 9.5", "compute capability 9.5")
    assert kernel_floor(mi355x).value == 4050.0
    mi300x = _amd("AMD GPU with 304 cores, compute capability 9.4", "compute capability 9.4")
    floor = kernel_floor(mi300x)
    assert floor.value == 4050.0
    assert "an AMD GPU's" in floor.source
    assert kernel_floor(cost_device("h100")).value == 1874.0  # NVIDIA: the A100's, as before
    # the 6 MI355X GEMMs reached 0.249, 0.266, 0.267, 0.350, 0.353, 0.426 of 2,500 TFLOP/s
    assert gemm_efficiency("matrix-core").value == pytest.approx((0.267 + 0.350) / 2, abs=1e-3)
    assert gemm_efficiency("tensor-core").value == 0.763


def test_an_amd_profile_device_takes_the_datasheet_memory():
    pytest.importorskip("google.protobuf")
    from hloidx.perf.measured_source import profile_device
    from hloidx.profiles import read_profile

    # the profile says 2.6624 TB/s (1.3 GHz x 8192 bits x 2 / 8) and no L2; the MI300X
    # datasheet 5.3 TB/s HBM3, 4 MB of L2 per XCD; its big transpose measured 3.2 TB/s
    profile = read_profile(str(ROOT / "tests/data/measured/xplane/tw003.xplane.pb"))
    device = profile_device(profile)
    assert device.memory_bandwidth == 5.3e12
    assert device.l2_cache_size == 4 * 1024 * 1024
