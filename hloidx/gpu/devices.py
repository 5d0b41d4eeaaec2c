"""Device profiles: the figures of a GPU that launch configurations and coalescing depend on.

The values are those XLA's tests use for these devices (``TestGpuDeviceInfo`` in
``xla/service/gpu/gpu_device_info_for_tests.cc``); ``rtx-a6000`` is the device of XLA's GPU
emitter and coalescing tests. Any figure can be overridden with :meth:`DeviceProfile.with_`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from ..errors import HloidxError


@dataclass(frozen=True)
class DeviceProfile:
    name: str
    description: str
    sm_count: int
    threads_per_sm: int
    threads_per_block_limit: int = 1024
    warp_size: int = 32
    shared_memory_per_block: int = 48 * 1024
    shared_memory_per_block_optin: int = 48 * 1024
    block_dim_limit_x: int = 2_147_483_647
    block_dim_limit_y: int = 65_535
    #: bytes of one DRAM -> L2 transaction (XLA's ``dram_to_l2_transaction_size_bytes``)
    transaction_size: int = 64

    @property
    def max_resident_threads(self) -> int:
        """Threads the whole GPU keeps resident at once (SMs × threads per SM)."""
        return self.sm_count * self.threads_per_sm

    def with_(self, **overrides: Any) -> DeviceProfile:
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


DEVICES: dict[str, DeviceProfile] = {
    "rtx-a6000": DeviceProfile(
        "rtx-a6000",
        "NVIDIA RTX A6000 (Ampere, sm_86), the device of XLA's GPU tests",
        sm_count=84,
        threads_per_sm=1536,
        shared_memory_per_block_optin=99 * 1024,
    ),
    "a100": DeviceProfile(
        "a100",
        "NVIDIA A100-SXM4-80GB (Ampere, sm_80)",
        sm_count=108,
        threads_per_sm=2048,
        shared_memory_per_block_optin=163 * 1024,
    ),
    "h100": DeviceProfile(
        "h100",
        "NVIDIA H100 SXM (Hopper, sm_90)",
        sm_count=132,
        threads_per_sm=2048,
        shared_memory_per_block_optin=227 * 1024,
    ),
}

DEFAULT_DEVICE = "rtx-a6000"


def device_profile(name: str) -> DeviceProfile:
    """The profile named ``name`` (``a100``, ``h100``, ``rtx-a6000``); case and ``_`` tolerant."""
    key = name.strip().lower().replace("_", "-")
    aliases = {"a6000": "rtx-a6000", "rtxa6000": "rtx-a6000"}
    key = aliases.get(key, key)
    if key not in DEVICES:
        known = ", ".join(sorted(DEVICES))
        raise HloidxError(f"unknown device {name!r}; known devices: {known}")
    return DEVICES[key]
