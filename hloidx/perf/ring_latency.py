"""XLA's network model for collectives across hosts: ``SolGPUCostModel::RingLatency``
(``xla/service/gpu/model/sol_gpu_cost_model.cc``) with its per-device defaults.

A ring collective of ``B`` bytes over ``N`` GPUs on ``H`` hosts sends ``B / N`` bytes per GPU:
each piece costs its NIC transfer (+2.5% header overhead), a chunk preparation per started
4 MiB chunk and one round trip, times ``(N - 1) / (N / H)`` (pieces over NICs per host), times 2
for an all-reduce (reduce-scatter then all-gather), plus the NCCL launch. Send/recv is one
piece between 2 GPUs.

Durations are ``absl::Duration`` arithmetic: integer quarter-nanosecond ticks, products with a
double rounded as absl rounds them; the defaults are XLA's figures times 0.45 computed in
float32, as XLA computes them. The option names are those of XLA's
``xla_gpu_analytical_latency_estimator_options``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

TICKS_PER_SECOND = 4_000_000_000
TICKS_PER_US = 4_000
HEADER_OVERHEAD = 0.025
#: XLA's ``kDefaultNcclCostModelCoeff`` (a float)
COEFF = np.float32(0.45)
CHUNK_SIZE_BYTES = 4 * 1024 * 1024
UNKNOWN = "<unknown>"

COLLECTIVE_TYPES = ("all-gather", "all-reduce", "reduce-scatter", "send-recv")


def _round_half_away(x: float) -> int:
    r = math.floor(x)
    return r + 1 if x - r >= 0.5 else r


def scale(ticks: int, r: float) -> int:
    """``absl::Duration * double`` (absl's ``ScaleDouble``), on non-negative ticks."""
    r = float(r)
    hi, lo = divmod(ticks, TICKS_PER_SECOND)
    hi_doub = float(hi) * r
    lo_doub = float(lo) * r
    hi_frac, hi_int = math.modf(hi_doub)
    lo_doub = lo_doub / TICKS_PER_SECOND + hi_frac
    lo_frac, lo_int = math.modf(lo_doub)
    lo64 = _round_half_away(lo_frac * TICKS_PER_SECOND)
    return (int(hi_int) + int(lo_int)) * TICKS_PER_SECOND + lo64


def microseconds(n: float) -> int:
    """``absl::Microseconds(double)`` in ticks."""
    return scale(TICKS_PER_US, n)


def seconds(n: float) -> int:
    """``absl::Seconds(double)`` in ticks (quarter-nanoseconds rounded to nearest)."""
    whole = int(n)
    return whole * TICKS_PER_SECOND + _round_half_away((n - float(whole)) * TICKS_PER_SECOND)


def trunc_us(ticks: int) -> int:
    """``absl::Trunc(d, absl::Microseconds(1))`` in whole microseconds."""
    return ticks // TICKS_PER_US


@dataclass(frozen=True)
class SolConfig:
    """XLA's ``SolGPUCostModel::Config``: durations in ticks (quarter-nanoseconds)."""

    nccl_op_launch_ticks: int
    #: GB/s (10^9 bytes per second), not Gbit/s
    nic_speed_gbps: float
    chunk_prep_ticks: int
    rtt_ticks: int
    gpus_per_node: int
    chunk_size_bytes: int
    device: str = UNKNOWN

    def with_options(self, options: dict[str, str | float | int]) -> SolConfig:
        """XLA's ``GetConfig`` overrides: positive integers (microseconds, counts, bytes),
        a positive float for ``nic_speed_gbps``; other values are ignored as XLA ignores
        them; an unknown name raises ``KeyError``."""
        config = self
        for name, raw in options.items():
            if name not in OPTION_NAMES:
                raise KeyError(name)
            text = str(raw).strip()
            if name == "nic_speed_gbps":
                try:
                    value_d = float(text)
                except ValueError:
                    continue
                if value_d > 0:
                    config = replace(config, nic_speed_gbps=value_d)
                continue
            if not text.lstrip("+-").isdigit() or int(text) <= 0:
                continue
            value = int(text)
            if name == "nccl_op_launch_us":
                config = replace(config, nccl_op_launch_ticks=value * TICKS_PER_US)
            elif name == "chunk_prep_us":
                config = replace(config, chunk_prep_ticks=value * TICKS_PER_US)
            elif name == "rtt_us":
                config = replace(config, rtt_ticks=value * TICKS_PER_US)
            elif name == "gpus_per_node":
                config = replace(config, gpus_per_node=value)
            elif name == "chunk_size_bytes":
                config = replace(config, chunk_size_bytes=value)
        return config


OPTION_NAMES = (
    "nccl_op_launch_us",
    "nic_speed_gbps",
    "chunk_prep_us",
    "rtt_us",
    "gpus_per_node",
    "chunk_size_bytes",
)


def _default(device: str, launch: float, nic: float, prep: float, rtt: float) -> SolConfig:
    def f(x: float) -> float:
        return float(np.float32(x) * COEFF)  # XLA: 100.0f * 0.45f ... in float

    return SolConfig(
        microseconds(f(launch)),
        f(nic),
        microseconds(f(prep)),
        microseconds(f(rtt)),
        8,
        CHUNK_SIZE_BYTES,
        device,
    )


#: XLA's per-device defaults, keyed by the device's description string
DEFAULT_CONFIGS = {
    "NVIDIA H100 80GB HBM3": _default("NVIDIA H100 80GB HBM3", 100.0, 55.56, 13.34, 68.89),
    "NVIDIA B200": _default("NVIDIA B200", 100.0, 111.12, 4.45, 46.67),
    UNKNOWN: _default(UNKNOWN, 100.0, 111.12, 13.34, 68.89),
}


def default_config(device_description: str) -> SolConfig:
    """XLA's ``GetPlatformConfig``: the device's row, else the ``<unknown>`` row."""
    return DEFAULT_CONFIGS.get(device_description, DEFAULT_CONFIGS[UNKNOWN])


class RingLatencyError(ValueError):
    pass


def num_gpus_per_comm(config: SolConfig, num_nodes: int, kind: str, communicators: int) -> int:
    if kind == "send-recv":
        return 2
    if config.gpus_per_node % communicators:
        raise RingLatencyError(
            f"{communicators} communicators do not divide gpus_per_node={config.gpus_per_node}"
        )
    return num_nodes * config.gpus_per_node // communicators


def ring_latency_ticks(
    config: SolConfig, buffer_bytes: int, num_nodes: int, kind: str, communicators: int = 1
) -> int:
    """XLA's ``RingLatency`` in ticks."""
    if kind not in COLLECTIVE_TYPES:
        raise ValueError(kind)
    num_gpus = num_gpus_per_comm(config, num_nodes, kind, communicators)
    per_gpu = buffer_bytes if kind == "send-recv" else buffer_bytes // num_gpus
    gpus_per_node = num_gpus // num_nodes if num_nodes else 0
    if gpus_per_node == 0:
        raise RingLatencyError(f"{num_gpus} GPUs over {num_nodes} nodes")
    # TransferDuration: long double (1e6 * bytes) / (1e9 * nic), times 1.025, as a double
    transfer = (np.longdouble(1e6) * np.longdouble(per_gpu)) / np.longdouble(
        1e9 * config.nic_speed_gbps
    )
    transfer_ticks = microseconds(float(transfer * np.longdouble(1 + HEADER_OVERHEAD)))
    chunks = math.ceil(float(per_gpu) / config.chunk_size_bytes)
    prep_ticks = scale(config.chunk_prep_ticks, float(chunks))
    ticks = transfer_ticks + prep_ticks + config.rtt_ticks
    ticks = scale(ticks, float((num_gpus - 1.0) / np.longdouble(gpus_per_node)))
    ticks *= 2 if kind == "all-reduce" else 1
    return ticks + config.nccl_op_launch_ticks
