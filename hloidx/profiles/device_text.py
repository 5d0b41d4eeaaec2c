"""A GPU's figures read from a profile, written as XLA's ``GpuTargetConfigProto`` text (what
``--xla_gpu_target_config_filename`` reads), so that every source of a device (XLA's spec
files, a user's spec, a profile) becomes a cost device by the one reader of that format
(``hloidx.perf.gpu_specs.read_spec``)."""

from __future__ import annotations

from typing import Any


def _number(value: Any) -> str | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return str(int(number)) if number == int(number) else repr(number)


def target_config_text(
    *,
    name: Any,
    core_count: Any,
    clock_hz: Any,
    memory_bandwidth: Any,
    l2_cache_size: Any = None,
    compute_capability: tuple[Any, Any] | None = None,
    rocm_arch: str | None = None,
    fpus_per_core: Any = None,
    shared_memory_per_core: Any = None,
    shared_memory_per_block: Any = None,
    threads_per_warp: Any = None,
    threads_per_block_limit: Any = None,
    threads_per_core_limit: Any = None,
    registers_per_block_limit: Any = None,
) -> str:
    """The figures that are known, as text-format ``GpuTargetConfigProto``."""
    fields = {
        "threads_per_block_limit": threads_per_block_limit,
        "threads_per_warp": threads_per_warp,
        "shared_memory_per_block": shared_memory_per_block,
        "shared_memory_per_core": shared_memory_per_core,
        "threads_per_core_limit": threads_per_core_limit,
        "core_count": core_count,
        "fpus_per_core": fpus_per_core,
        "memory_bandwidth": memory_bandwidth,
        "l2_cache_size": l2_cache_size,
        "clock_rate_ghz": None if clock_hz is None else float(clock_hz) / 1e9,
        "registers_per_block_limit": registers_per_block_limit,
    }
    lines = ["gpu_device_info {"]
    for key, value in fields.items():
        text = _number(value)
        if text is not None:
            lines.append(f"  {key}: {text}")
    if compute_capability is not None and compute_capability[0] is not None:
        major, minor = compute_capability
        minor = int(minor or 0)
        lines.append(f"  cuda_compute_capability {{ major: {int(major)} minor: {minor} }}")
    elif rocm_arch:
        lines.append(f'  rocm_compute_capability {{ gcn_arch_name: "{rocm_arch}" }}')
    lines.append("}")
    if name:
        lines.append(f'device_description_str: "{str(name).replace(chr(34), "")}"')
    return "\n".join(lines) + "\n"
