"""The figures of a GPU that XLA's cost model reads, kept as data with their source.

``rtx-a6000`` and ``h100`` are XLA's test devices (``TestGpuDeviceInfo::RTXA6000DeviceInfo``
and ``RTXH100SXMDeviceInfo`` in ``xla/service/gpu/gpu_device_info_for_tests.cc``); XLA has
no A100 test device, so ``a100`` takes NVIDIA's published A100-SXM4-80GB figures (108 SMs,
64 FP32 lanes per SM, 1.41 GHz boost clock, 2,039 GB/s HBM2e, 40 MiB L2). The figures XLA
does not set per device come from ``se::DeviceDescription``'s CUDA defaults
(``xla/stream_executor/device_description.h``): 2 KiB of L1 per SM counted by the model,
64-byte DRAM-to-L2 transactions, 32 memory transactions per clock per SM. The launch figures
(threads per SM, shared memory) are hloidx's GPU profiles (``hloidx/gpu/devices.py``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..gpu.devices import DeviceProfile, device_profile


@dataclass(frozen=True)
class CostDevice:
    """A device as XLA's ``se::DeviceDescription`` describes it to the cost model."""

    name: str
    source: str
    #: XLA's hlo_op_profiles key (``sm_XY``): clock cycles per op and element type
    compute_capability: str
    core_count: int
    fpus_per_core: int
    clock_rate_ghz: float
    #: bytes per second
    memory_bandwidth: int
    l2_cache_size: int
    registers_per_block_limit: int = 65536
    l1_cache_size_per_sm: int = 2 * 1024
    dram_to_l2_transaction_size_bytes: int = 64
    memory_transactions_per_clock: int = 32
    warp_size: int = 32
    #: the launch profile of a device read from a spec file (else hloidx's profile by name)
    profile: DeviceProfile | None = None

    @property
    def launch_profile(self) -> DeviceProfile:
        """hloidx's GPU profile of the same device (launch dimensions, thread maps)."""
        return self.profile if self.profile is not None else device_profile(self.name)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


_XLA_TESTS = "XLA TestGpuDeviceInfo (xla/service/gpu/gpu_device_info_for_tests.cc)"

COST_DEVICES: dict[str, CostDevice] = {
    "rtx-a6000": CostDevice(
        "rtx-a6000",
        _XLA_TESTS + " RTXA6000DeviceInfo",
        compute_capability="sm_86",
        core_count=84,
        fpus_per_core=128,
        clock_rate_ghz=1.410,
        memory_bandwidth=768_096_000_000,
        l2_cache_size=6 * 1024 * 1024,
    ),
    "h100": CostDevice(
        "h100",
        _XLA_TESTS + " RTXH100SXMDeviceInfo",
        compute_capability="sm_90",
        core_count=132,
        fpus_per_core=128,
        clock_rate_ghz=1.98,
        memory_bandwidth=3_352_320_000_000,
        l2_cache_size=50 * 1024 * 1024,
    ),
    "a100": CostDevice(
        "a100",
        "NVIDIA A100 Tensor Core GPU datasheet and Ampere architecture whitepaper "
        "(A100-SXM4-80GB); not an XLA test device",
        compute_capability="sm_80",
        core_count=108,
        fpus_per_core=64,
        clock_rate_ghz=1.41,
        memory_bandwidth=2_039_000_000_000,
        l2_cache_size=40 * 1024 * 1024,
    ),
}


def cost_device(name: str) -> CostDevice:
    """The cost profile named ``name`` (the names of :func:`hloidx.gpu.devices.device_profile`)."""
    return COST_DEVICES[device_profile(name).name]
