"""XLA's GPU spec files (``xla/tools/hlo_opt/gpu_specs/*.txtpb``, the files XLA users pass as
``--xla_gpu_target_config_filename``): a reader of the text-format ``GpuTargetConfigProto`` and
the ten files XLA ships, kept as package data (``data/xla_gpu_specs.json``, converted by
``bench/convert_xla_tables.py`` from zml/xla at 1e203b53, Apache-2.0).

A spec becomes a :class:`~hloidx.perf.devices.CostDevice` with :func:`cost_device_from_spec`.
XLA gives a device read from a spec file an empty name, so XLA's per-device network defaults
(:mod:`.ring_latency`) fall to ``<unknown>`` for it; :attr:`GpuSpec.network_name` says so.
``hloidx cost --device`` takes these names beside hloidx's own (:func:`resolve_device`), and
``--device-spec FILE`` a user's file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ..errors import HloidxError
from ..gpu.devices import DeviceProfile
from ..source import Source
from .devices import COST_DEVICES, CostDevice, cost_device
from .ring_latency import UNKNOWN

_TOKEN = re.compile(
    r'\s*(?:#[^\n]*\n?)*\s*(?:([A-Za-z_]\w*)|(\{)|(\})|(:)|("(?:[^"\\]|\\.)*"|[-+]?[\d.eE+-]+))'
)


class GpuSpecError(HloidxError):
    """A spec file that cannot be read (with its ``file:line:col``)."""


def parse_text_proto(text: str, name: str = "<string>") -> dict[str, list[Any]]:
    """A text-format protobuf message as nested dicts; every field a list of values (strings
    for scalars, dicts for messages). Comments (``#``) are skipped."""
    source = Source(name, text)
    stack: list[dict[str, list[Any]]] = [{}]
    pos = 0
    field: str | None = None
    colon = False
    while True:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip():
                start = len(text) - len(text[pos:].lstrip())
                raise GpuSpecError("cannot read this text-format protobuf", source.span(start))
            break
        ident, open_, close, col, value = m.groups()
        at = m.start(m.lastindex or 0)
        pos = m.end()
        if ident is not None and field is None:
            field, colon = ident, False
        elif col is not None and field is not None and not colon:
            colon = True
        elif open_ is not None and field is not None:
            child: dict[str, list[Any]] = {}
            stack[-1].setdefault(field, []).append(child)
            stack.append(child)
            field = None
        elif close is not None and field is None and len(stack) > 1:
            stack.pop()
        elif field is not None and colon and (value is not None or ident is not None):
            raw = value if value is not None else ident
            stack[-1].setdefault(field, []).append(raw.strip('"') if raw.startswith('"') else raw)
            field = None
        else:
            raise GpuSpecError(f"unexpected {m.group(0).strip()!r}", source.span(at, m.end()))
    if field is not None or len(stack) != 1:
        raise GpuSpecError("the message ends early", source.span(len(text)))
    return stack[0]


@dataclass(frozen=True)
class GpuSpec:
    """The figures of one spec file that hloidx's cost model reads."""

    name: str
    description: str
    platform: str
    #: ``sm_XY`` (CUDA) or the ROCm ``gcn_arch_name``
    compute_capability: str
    core_count: int
    fpus_per_core: int
    clock_rate_ghz: float
    memory_bandwidth: int
    l2_cache_size: int
    threads_per_warp: int
    threads_per_block_limit: int
    threads_per_core_limit: int
    shared_memory_per_block: int
    shared_memory_per_core: int
    registers_per_block_limit: int
    source: str

    @property
    def network_name(self) -> str:
        """The device name XLA keys its network defaults by: empty for a spec file, so
        ``<unknown>``."""
        return UNKNOWN


def _one(message: dict[str, list[Any]], key: str, default: Any = None) -> Any:
    values = message.get(key)
    return values[0] if values else default


def spec_from_message(message: dict[str, list[Any]], name: str, source: str) -> GpuSpec:
    info = _one(message, "gpu_device_info")
    if not isinstance(info, dict):
        raise GpuSpecError(f"{name}: no gpu_device_info {{...}}")
    cuda = _one(info, "cuda_compute_capability")
    rocm = _one(info, "rocm_compute_capability")
    if isinstance(cuda, dict):
        capability = f"sm_{_one(cuda, 'major', '0')}{_one(cuda, 'minor', '0')}"
    elif isinstance(rocm, dict):
        capability = str(_one(rocm, "gcn_arch_name", "rocm"))
    else:
        capability = "unknown"

    def number(key: str, default: int = 0) -> int:
        return int(_one(info, key, default))

    return GpuSpec(
        name=name,
        description=str(_one(message, "device_description_str", "")),
        platform=str(_one(message, "platform_name", "")),
        compute_capability=capability,
        core_count=number("core_count"),
        fpus_per_core=number("fpus_per_core"),
        clock_rate_ghz=float(_one(info, "clock_rate_ghz", 0.0)),
        memory_bandwidth=number("memory_bandwidth"),
        l2_cache_size=number("l2_cache_size"),
        threads_per_warp=number("threads_per_warp", 32),
        threads_per_block_limit=number("threads_per_block_limit"),
        threads_per_core_limit=number("threads_per_core_limit"),
        shared_memory_per_block=number("shared_memory_per_block"),
        shared_memory_per_core=number("shared_memory_per_core"),
        registers_per_block_limit=number("registers_per_block_limit", 65536),
        source=source,
    )


def read_spec(text: str, name: str = "<string>") -> GpuSpec:
    """A user's spec file (``--xla_gpu_target_config_filename``)."""
    stem = re.sub(r"\.txtpb$", "", name.rsplit("/", 1)[-1])
    return spec_from_message(parse_text_proto(text, name), stem, f"spec file {name}")


@cache
def xla_specs() -> dict[str, GpuSpec]:
    """XLA's shipped spec files by file stem (``h100_sxm``, ``b200``, ...)."""
    data = json.loads(
        resources.files("hloidx.perf").joinpath("data/xla_gpu_specs.json").read_text()
    )
    origin = data["source"]
    return {
        stem: GpuSpec(
            **fields,
            source=f"XLA {origin['path']}/{stem}.txtpb ({origin['repository']} "
            f"{origin['commit'][:8]}, {origin['licence']})",
        )
        for stem, fields in data["specs"].items()
    }


def cost_device_from_spec(spec: GpuSpec) -> CostDevice:
    """The cost model's device for a spec (the launch profile is not derived from it)."""
    return CostDevice(
        spec.name,
        spec.source,
        compute_capability=spec.compute_capability,
        core_count=spec.core_count,
        fpus_per_core=spec.fpus_per_core,
        clock_rate_ghz=spec.clock_rate_ghz,
        memory_bandwidth=spec.memory_bandwidth,
        l2_cache_size=spec.l2_cache_size,
        registers_per_block_limit=spec.registers_per_block_limit,
        warp_size=spec.threads_per_warp,
        profile=DeviceProfile(
            spec.name,
            f"{spec.description or spec.name} ({spec.compute_capability}), {spec.source}",
            sm_count=spec.core_count,
            threads_per_sm=spec.threads_per_core_limit or 2048,
            threads_per_block_limit=spec.threads_per_block_limit or 1024,
            warp_size=spec.threads_per_warp,
            shared_memory_per_block=spec.shared_memory_per_block or 48 * 1024,
            shared_memory_per_block_optin=spec.shared_memory_per_core
            or spec.shared_memory_per_block
            or 48 * 1024,
        ),
    )


def resolve_device(device: str | CostDevice) -> CostDevice:
    """A cost device by hloidx's name (``h100``, ``a100``, ``rtx-a6000`` and their aliases) or
    by the stem of one of XLA's spec files (``h100_sxm``, ``b200``, ...)."""
    if isinstance(device, CostDevice):
        return device
    if device in xla_specs():
        return cost_device_from_spec(xla_specs()[device])
    try:
        return cost_device(device)
    except HloidxError:
        names = ", ".join([*sorted(COST_DEVICES), *sorted(xla_specs())])
        raise HloidxError(f"unknown device {device!r}; known devices: {names}") from None


def device_list() -> list[dict[str, str]]:
    """Every device ``--device`` takes, with its compute capability and the source of its
    figures (``hloidx cost --list-devices`` adds how GEMMs are timed: ``step_costs``)."""
    rows = [
        {
            "name": d.name,
            "compute_capability": d.compute_capability,
            "source": d.source,
        }
        for d in COST_DEVICES.values()
    ]
    rows += [
        {
            "name": name,
            "compute_capability": spec.compute_capability,
            "source": f"{spec.description}: {spec.source}",
        }
        for name, spec in xla_specs().items()
    ]
    return rows
