"""``hloidx tile --device``: the tiled (Triton) cost model's estimate of a tiling, and the
tilings ranked by it (thin over hloidx.perf.tiled)."""

from __future__ import annotations

import json
from typing import Any


def _fusion(module: Any, instr: Any) -> Any:
    if instr.opcode == "fusion":
        return instr
    from ..perf.kernels import wrap_as_fusion

    return wrap_as_fusion(instr, module)


def _row(estimate: Any) -> dict[str, Any]:
    cost = estimate.cost
    return {
        "tile_sizes": cost.tile_sizes,
        "num_warps": cost.num_warps,
        "blocks": cost.blocks,
        "fits": cost.fits,
        "exec_time_ns": None if cost.exec_time_ns is None else round(cost.exec_time_ns, 3),
        "read_time_ns": round(cost.read_time_ns, 3),
        "write_time_ns": round(cost.write_time_ns, 3),
        "compute_time_ns": round(cost.compute_time_ns, 3),
        "bytes_read": cost.bytes_read,
        "flops": cost.flops,
        "why": cost.why,
    }


def estimate_document(module: Any, instr: Any, device: str, sizes: tuple[int, ...]) -> dict:
    """The estimate of one tiling (``not_tileable`` says why there is none)."""
    from ..perf.devices import cost_device
    from ..perf.tiled import NotTileable, estimate_tiled
    from ..perf.why import explain

    profile = cost_device(device)
    try:
        estimate = estimate_tiled(_fusion(module, instr), profile, sizes)
    except NotTileable as e:
        return {"device": profile.name, "not_tileable": str(e)}
    estimate.cost.why = explain(estimate.cost)
    return {"device": profile.name, **_row(estimate)}


def _time(ns: float | None) -> str:
    from ..perf.text import human_time

    return human_time(ns)


def estimate_lines(doc: dict[str, Any]) -> list[str]:
    if "not_tileable" in doc:
        return [f"estimate on {doc['device']}: none ({doc['not_tileable']})"]
    if not doc["fits"]:
        return [f"estimate on {doc['device']}: none, the tiling does not fit ({doc['why']})"]
    return [
        f"estimate on {doc['device']} (XLA's tiled cost model; an estimate, not a measurement): "
        f"{_time(doc['exec_time_ns'])} with {doc['blocks']} blocks of {doc['num_warps']} "
        f"warps; read {_time(doc['read_time_ns'])}, write {_time(doc['write_time_ns'])}, "
        f"compute {_time(doc['compute_time_ns'])}; {doc['why']}"
    ]


def ranking_output(
    module: Any, instr: Any, device: str, limit: int, fmt: str, notes: list[str] = ()
) -> str:
    """Every tiling XLA's search would try, fastest first (does-not-fit last), as ``fmt``
    (``json`` or text); ``notes`` are said before the table (and kept in the JSON)."""
    from ..perf.devices import cost_device
    from ..perf.tiled import search_tilings
    from ..perf.why import explain

    profile = cost_device(device)
    ranked = search_tilings(_fusion(module, instr), profile)
    for e in ranked:
        e.cost.why = explain(e.cost)
    rows = [_row(e) for e in ranked]
    doc = {
        "schema_version": 1,
        "instruction": instr.name,
        "tile": "auto",
        "device": profile.name,
        "ranked_by": "estimated time (XLA's tiled cost model)",
        "candidates": rows[:limit],
    }
    if notes:
        doc["notes"] = list(notes)
    if fmt == "json":
        return json.dumps(doc, indent=2)
    lines = [
        f"{instr.name}: {len(rows)} tilings XLA's search tries, fastest first on "
        f"{profile.name} (estimates, not measurements)"
    ]
    lines.extend(f"  note: {note}" for note in notes)
    lines.append(f"  {'tile':<24} {'warps':>5} {'blocks':>8} {'time':>12} {'read':>12}  why")
    for r in rows[:limit]:
        lines.append(
            f"  {r['tile_sizes']!s:<24} {r['num_warps']:>5} {r['blocks']:>8} "
            f"{_time(r['exec_time_ns']):>12} {r['bytes_read']:>12,}  {r['why']}"
        )
    if not rows:
        lines.append("  no tiling: the fusion cannot be tiled (see hloidx tile --tile symbolic)")
    return "\n".join(lines)
