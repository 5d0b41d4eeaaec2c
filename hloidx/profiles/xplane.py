"""JAX / xprof profiles (``<host>.xplane.pb``: tsl's ``XSpace`` protobuf, read with the
modules generated from its schema in ``hloidx.protos``).

Each GPU kernel event on a ``/device:GPU:N`` plane carries XLA's ``hlo_module``,
``program_id`` and ``hlo_op``; the file has no module range, so the executions of one program
on one GPU are its kernels cut where they pause: a gap longer than both ``MIN_GAP_NS`` and
``GAP_FACTOR`` times the median gap between its kernels. Consecutive kernels of one
instruction are one launch (all its kernels together: their durations add). The optimized
HLO of each program is embedded (``/host:metadata``, ``<module>(<id>)``, stat ``Hlo Proto``)
and the device planes carry the GPU's figures.
"""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path
from typing import Any

from .device_text import target_config_text
from .records import Execution, Launch, Profile, ProfileError, summarize

MIN_GAP_NS = 1e6
GAP_FACTOR = 20.0
#: NVIDIA's FP32 lanes per SM by compute capability (XLA's GetFpusPerCore); AMD: XLA's 128
_FPUS = {(6, 0): 64, (7, 0): 64, (7, 5): 64, (8, 0): 64}


def _stats(plane: Any, holder: Any) -> dict[str, Any]:
    names = plane.stat_metadata
    out = {}
    for s in holder.stats:
        kind = s.WhichOneof("value")
        if kind is None:
            continue
        value = getattr(s, kind)
        if kind == "ref_value":
            value = names[value].name if value in names else None
        meta = names.get(s.metadata_id)
        if meta is not None:
            out[meta.name] = value
    return out


def _split(kernels: list[tuple[float, float, str]]) -> list[list[tuple[float, float, str]]]:
    """One program's kernels on one GPU (start, duration, instruction), cut into executions."""
    kernels.sort()
    gaps = [max(0.0, b[0] - (a[0] + a[1])) for a, b in itertools.pairwise(kernels)]
    limit = max(MIN_GAP_NS, GAP_FACTOR * statistics.median(gaps)) if gaps else 0.0
    runs = [[kernels[0]]] if kernels else []
    for gap, kernel in zip(gaps, kernels[1:], strict=True):
        if gap > limit:
            runs.append([])
        runs[-1].append(kernel)
    return runs


def _periodic(
    runs: list[list[tuple[float, float, str]]], expected: int
) -> list[list[tuple[float, float, str]]]:
    """The runs cut into ``expected`` executions when the gaps found fewer and the kernels are
    ``expected`` repetitions of one sequence of instructions (back-to-back executions)."""
    if expected <= len(runs):
        return runs
    kernels = [k for run in runs for k in run]
    if len(kernels) % expected:
        return runs
    period = len(kernels) // expected
    ops = [k[2] for k in kernels]
    if any(ops[i] != ops[i % period] for i in range(len(ops))):
        return runs
    return [kernels[i : i + period] for i in range(0, len(kernels), period)]


def _host_executions(space: Any) -> dict[str, int]:
    """Module name -> executions the host launched (``<module>:XLA GPU module`` events)."""
    counts: dict[str, int] = {}
    for plane in space.planes:
        if not plane.name.startswith("/host:"):
            continue
        names = {k: m.name for k, m in plane.event_metadata.items()}
        for line in plane.lines:
            for event in line.events:
                name = names.get(event.metadata_id, "")
                if name.endswith(":XLA GPU module"):
                    module = name.removesuffix(":XLA GPU module")
                    counts[module] = counts.get(module, 0) + 1
    return counts


def _execution(module: str, program_id: int | None, device: str, run: list[Any]) -> Execution:
    launches: list[Launch] = []
    for start, duration, op in run:
        last = launches[-1] if launches else None
        if last is not None and last.instruction == op:
            launches[-1] = Launch(op, last.start_ns, last.duration_ns + duration, last.kernels + 1)
        else:
            launches.append(Launch(op, start, duration))
    begin = run[0][0]
    end = max(s + d for s, d, _ in run)
    return Execution(module, program_id, device, begin, end - begin, tuple(launches))


def _device_text(stats: dict[str, Any]) -> str | None:
    if "core_count" not in stats:
        return None
    vendor = str(stats.get("device_vendor", ""))
    major, minor = stats.get("compute_cap_major"), stats.get("compute_cap_minor")
    amd = vendor.upper().startswith("AMD")
    clock_khz = stats.get("clock_rate")
    name = f"{vendor or 'a'} GPU with {stats['core_count']} cores"
    if major is not None:
        name += f", compute capability {major}.{minor or 0}"
    fpus = 128 if amd else _FPUS.get((int(major or 0), int(minor or 0)), 128)
    return target_config_text(
        name=name,
        core_count=stats["core_count"],
        clock_hz=None if clock_khz is None else float(clock_khz) * 1e3,
        memory_bandwidth=stats.get("memory_bandwidth"),
        compute_capability=None if amd else (major, minor),
        rocm_arch=f"compute capability {major}.{minor}" if amd else None,
        fpus_per_core=fpus,
        threads_per_warp=64 if amd else 32,
    )


def read_xplane(path: str, warmup: int | None = None) -> Profile:
    from google.protobuf.message import DecodeError

    from ..protos import xplane_pb2

    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ProfileError(f"{path}: cannot read ({e.strerror or e})") from None
    space = xplane_pb2.XSpace()
    try:
        space.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise ProfileError(f"{path}: not a readable XSpace protobuf ({e})") from None
    kernels: dict[tuple[str, int | None, str], list[tuple[float, float, str]]] = {}
    hlo: dict[tuple[str, int | None], bytes] = {}
    device = None
    outside = 0
    for plane in space.planes:
        if plane.name == "/host:metadata":
            for meta in plane.event_metadata.values():
                proto = _stats(plane, meta).get("Hlo Proto")
                module, _, rest = meta.name.rpartition("(")
                if isinstance(proto, bytes) and module and rest.rstrip(")").isdigit():
                    hlo[(module, int(rest.rstrip(")")))] = proto
            continue
        if not plane.name.startswith("/device:GPU:"):
            continue
        if device is None:
            device = _device_text(_stats(plane, plane))
        for line in plane.lines:
            base = line.timestamp_ns * 1000
            for event in line.events:
                stats = _stats(plane, event)
                op, module = stats.get("hlo_op"), stats.get("hlo_module")
                if not op or not module:
                    if "correlation_id" in stats:
                        outside += 1
                    continue
                program = stats.get("program_id")
                key = (str(module), None if program is None else int(program), plane.name)
                start = (base + event.offset_ps) / 1000
                kernels.setdefault(key, []).append((start, event.duration_ps / 1000, str(op)))
    if not kernels:
        raise ProfileError(f"{path}: no GPU kernel of an XLA program in this profile")
    launched = _host_executions(space)
    devices: dict[str, set[str]] = {}
    for module, _, plane in kernels:
        devices.setdefault(module, set()).add(plane)
    executions = []
    for (module, program_id, plane), found in kernels.items():
        expected = launched.get(module, 0) // max(len(devices[module]), 1)
        for run in _periodic(_split(found), expected):
            executions.append(_execution(module, program_id, plane, run))
    notes = [
        "executions cut at pauses between kernels, or as the host's launches of the module "
        "when they run back to back (the file keeps no module range on the GPU)"
    ]
    if outside:
        notes.append(f"{outside} GPU kernels or copies carry no hlo_op (not counted)")
    return Profile(
        path, "xplane", summarize(executions, tuple(notes), warmup), device, hlo, tuple(notes)
    )
