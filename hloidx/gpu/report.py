"""The JSON documents of ``hloidx threads`` and ``hloidx coalescing`` (schema version 1), and
the verification of each simplified thread-id map against the map as XLA builds it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..hlo.analysis import verify_maps
from ..maps.printer import format_map
from .thread_maps import raw_thread_map, to_physical

if TYPE_CHECKING:
    from .analysis import FusionGpuView
    from .devices import DeviceProfile

SCHEMA_VERSION = 1


def _verdict(raw, simplified, verify: bool) -> str | None:
    if not verify or raw is None or raw.is_undefined:
        return None
    return str(verify_maps(raw, simplified).kind)


def threads_document(
    module_name: str,
    view: FusionGpuView,
    device: DeviceProfile,
    *,
    physical: bool = False,
    verify: bool = True,
) -> dict[str, Any]:
    """Everything ``hloidx threads`` prints for one fusion."""
    launch = view.launch
    # the loop emitter's outputs all use the default map; the concatenate emitter's per-operand
    # output maps are restrictions of it (not verified separately)
    raw = raw_thread_map(launch) if launch is not None and view.choice.kind == "loop" else None
    outputs = []
    for i, m in enumerate(view.threads.outputs):
        entry: dict[str, Any] = {"index": i, "map": None if m is None else format_map(m)}
        if m is not None and raw is not None:
            entry["verification"] = _verdict(raw, m, verify)
        outputs.append(entry)
    operands = []
    for k, operand in enumerate(view.fusion.operands):
        maps = []
        for read in view.threads.operands[k]:
            for j, m in enumerate(read.maps):
                item: dict[str, Any] = {"output": read.output, "map": format_map(m)}
                if j < len(read.raw):
                    item["verification"] = _verdict(read.raw[j], m, verify)
                if physical and operand.shape.is_array:
                    item["physical"] = format_map(to_physical(m, operand.shape))
                maps.append(item)
        reads = view.threads.operands[k]
        operands.append(
            {
                "index": k,
                "name": operand.name,
                "shape": str(operand.shape),
                "maps": maps,
                "exact": all(r.exact for r in reads),
                "undefined": any(r.undefined for r in reads),
                "notes": sorted({n for r in reads for n in r.notes}),
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "module": module_name,
        "device": device.as_json(),
        "computation": view.computation,
        "name": view.name,
        "emitter": view.choice.label,
        "launch": None if launch is None else launch.as_json(),
        "outputs": outputs,
        "operands": operands,
        "notes": view.threads.notes,
    }


def coalescing_document(
    module_name: str, views: list[FusionGpuView], device: DeviceProfile
) -> dict[str, Any]:
    """Everything ``hloidx coalescing`` prints: every fusion of the entry computation."""
    fusions = []
    for view in views:
        fusions.append(
            {
                "computation": view.computation,
                "name": view.name,
                "emitter": view.choice.label,
                "launch": None if view.launch is None else view.launch.as_json(),
                "operands": [
                    {
                        "index": o.index,
                        "name": o.name,
                        "shape": o.shape,
                        "coalesced": o.coalesced,
                        "method": o.method,
                        "reason": o.reason,
                        "figures": None if o.figures is None else o.figures.as_json(),
                    }
                    for o in view.operands
                ],
            }
        )
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "module": module_name,
        "device": device.as_json(),
        "fusions": fusions,
    }
    notes = [view.wrapped for view in views if view.wrapped is not None]
    if notes:  # only for a fused computation on its own (wrap_lone_fusion)
        doc["notes"] = notes
    return doc
