"""A measured profile (``hloidx.profiles.Profile``, read by duck typing: this layer does not
import the readers) made ready for the cost report: its GPU as a cost device (through the one
reader of XLA's spec files), the HLO module it carries, its program of a module, and its
times joined onto a report (:func:`attach`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import HloidxError

_DUMP_NUMBER = re.compile(r"module_(\d+)\.")


def profile_device(profile: Any) -> Any:
    """The cost device the profile describes (XLA's GpuTargetConfigProto text, read by the
    one reader of spec files), or None."""
    if not profile.device:
        return None
    from dataclasses import replace

    from .gpu_specs import (
        cost_device_from_spec,
        parse_text_proto,
        spec_from_message,
        xla_specs,
    )

    message = parse_text_proto(profile.device, f"{profile.path} (its GPU)")
    description = message.get("device_description_str", [""])[0] or "profiled GPU"
    spec = spec_from_message(message, str(description), f"the profile {profile.path}")
    # the figures are the profile's; the name is that of XLA's spec file of the same GPU
    # (compute capability, cores, bandwidth), which keys its matrix-unit peaks and tables
    same = [
        (stem, known)
        for stem, known in xla_specs().items()
        if known.compute_capability == spec.compute_capability
        and known.core_count == spec.core_count
    ]
    same.sort(key=lambda s: abs(s[1].memory_bandwidth - spec.memory_bandwidth))
    if same:
        spec = replace(spec, name=same[0][0], description=f"{description} (as XLA's {same[0][0]})")
    return cost_device_from_spec(_datasheet_memory(spec))


def _datasheet_memory(spec: Any) -> Any:
    """The datasheet's HBM bandwidth and L2 where the data has them for this GPU (AMD): the
    JAX profiler's ``memory_bandwidth`` of an MI300X / MI355X is half the datasheet's (its
    kernels measure above it: 7.1 TB/s against 4.1 on the MI355X step) and it has no L2 size."""
    from dataclasses import replace

    from .step_costs import datasheet_memory

    memory = datasheet_memory(spec.name)
    if memory is None or memory["bytes_per_s"] <= spec.memory_bandwidth:
        return spec
    return replace(
        spec,
        memory_bandwidth=int(memory["bytes_per_s"]),
        l2_cache_size=spec.l2_cache_size or int(memory["l2_bytes"]),
        source=f"{spec.source}; memory: {memory['source']} (the profile's "
        f"{spec.memory_bandwidth / 1e12:g} TB/s is half of it)",
    )


def _module_proto(data: bytes, where: str) -> Any:
    """The ``HloModuleProto`` of ``HloProto`` (or bare ``HloModuleProto``) bytes."""
    from google.protobuf.message import DecodeError

    from ..protos import hlo_pb2

    try:
        proto = hlo_pb2.HloProto.FromString(data)
        if proto.HasField("hlo_module"):
            return proto.hlo_module
        return hlo_pb2.HloModuleProto.FromString(data)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise HloidxError(f"{where}: the HLO it carries is damaged ({e})") from None


def async_names(module_proto: Any) -> dict[str, str]:
    """The instruction wrapped by each async ``*-start`` -> that start's name (the names the
    profile's thunks carry; the HLO text folds these computations into their start)."""
    roots = {}
    for comp in module_proto.computations:
        by_id = {i.id: i for i in comp.instructions}
        if comp.root_id in by_id:
            roots[comp.id] = by_id[comp.root_id]
    out: dict[str, str] = {}
    for comp in module_proto.computations:
        for ins in comp.instructions:
            if ins.opcode.endswith("-start"):
                for called in ins.called_computation_ids:
                    root = roots.get(called)
                    if root is not None and root.opcode != "parameter":
                        out[root.name] = ins.name
    return out


def carried_proto(profile: Any, program: Any) -> Any | None:
    """The ``HloModuleProto`` the profile carries for ``program``, or None."""
    load = profile.hlo.get((program.module, program.program_id))
    if load is None:
        return None
    data = load() if callable(load) else load
    return _module_proto(data, f"{profile.path} ({program.key})")


def module_of(profile: Any) -> tuple[Any, Any]:
    """The HLO module of the profile's main program (the longest in steady time) and that
    program, from the HLO the profile carries."""
    from ..hlo.proto_text import module_proto_text
    from ..hlo.syntax import parse_hlo

    programs = sorted(
        profile.programs, key=lambda p: (p.step_ns or 0.0) * p.executions, reverse=True
    )
    for program in programs:
        proto = carried_proto(profile, program)
        if proto is None:
            continue
        return parse_hlo(module_proto_text(proto), f"{profile.path}:{program.key}"), program
    raise HloidxError(
        f"{profile.path}: the profile carries no HLO of its programs; give the module: "
        f"hloidx cost MODULE.hlo --profile {profile.path}"
    )


def program_of(profile: Any, module: Any, hlo_path: str | None) -> Any:
    """The profile's program of the module: by its name, and by the program id of an XLA
    dump file name (``module_0040.<name>...``) when the HLO file has one."""
    program_id = None
    if hlo_path is not None:
        m = _DUMP_NUMBER.search(Path(hlo_path).name)
        if m:
            program_id = int(m.group(1))
            if not any(
                p.module == module.name and p.program_id == program_id for p in profile.programs
            ):
                program_id = None
    return profile.program_for(module.name, program_id)


def attach(report: Any, module: Any, profile: Any, program: Any) -> None:
    from .measured import join_measured

    wrapped = {}
    try:
        proto = carried_proto(profile, program)
        if proto is not None:
            wrapped = async_names(proto)
    except HloidxError:
        pass  # the times join without it (async-wrapped ops paired by order)
    report.measured = join_measured(report, module, program, profile.source, profile.path, wrapped)
