"""``hloidx threads --names roles``: thread-id maps whose op symbols are named by role.

A thread → operand map is ``compose(thread map, fusion map)``: its first range and runtime
variables are the fusion map's (XLA's order), the emitter's symbols follow. The fusion map's
named twin (:mod:`hloidx.hlo.role_names`) gives those first variables their names; the named
composition is simplified as the plain one was and used only when, renamed back by position,
it is the very map shown. Thread and block ids keep XLA's GPU names; the emitter's own symbols
stay as they are.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..hlo.role_names import Namer
from ..maps.indexing_map import IndexingMap, Variable
from ..maps.var_names import VarNames, plain, variables_json
from .thread_reads import ThreadRead, simplify_thread_map


def _twins(namer: Namer, fusion: Any, operand: int) -> tuple[dict[IndexingMap, IndexingMap], dict]:
    candidates, roles = namer.candidates(fusion)
    return {plain(c): c for _, c, _ in candidates.get(operand, ())}, roles


def _named_raw(raw: IndexingMap, twin: IndexingMap) -> IndexingMap:
    n, r = twin.num_range_vars, twin.num_rt_vars
    if raw.num_range_vars < n or raw.num_rt_vars < r:
        return raw
    ranges = tuple(
        Variable(v.bounds, twin.range_vars[i].name) if i < n else v
        for i, v in enumerate(raw.range_vars)
    )
    rts = tuple(
        Variable(v.bounds, twin.rt_vars[i].name) if i < r else v for i, v in enumerate(raw.rt_vars)
    )
    return replace(raw, range_vars=ranges, rt_vars=rts)


def _named_read(read: ThreadRead, twins: dict[IndexingMap, IndexingMap]) -> ThreadRead:
    maps = list(read.maps)
    for j, (raw, source) in enumerate(zip(read.raw, read.sources, strict=False)):
        twin = twins.get(source)
        if twin is None or j >= len(maps):
            continue
        named = simplify_thread_map(_named_raw(raw, twin))
        if plain(named, keep_gpu_names=True) == plain(maps[j], keep_gpu_names=True):
            maps[j] = named
    return replace(read, maps=maps)


def name_thread_view(view: Any) -> tuple[Any, list[list[list[dict[str, Any]]]]]:
    """A copy of a fusion's GPU view whose thread → operand maps name the fusion's symbols, and
    per operand, per shown map, its variables (name, kind, role)."""
    namer = Namer()
    threads = view.threads
    operands = []
    variables = []
    for k, reads in enumerate(threads.operands):
        try:
            twins, roles = _twins(namer, view.fusion, k)
        except Exception:  # a reading aid never stops a report: plain then
            twins, roles = {}, {}
        named = [_named_read(read, twins) for read in reads]
        operands.append(named)
        variables.append([_variables(m, roles) for read in named for m in read.maps])
    return replace(view, threads=replace(threads, operands=operands)), variables


def _variables(m: IndexingMap, roles: dict[str, str]) -> list[dict[str, Any]]:
    names = VarNames(
        dim_roles=tuple(GPU_ROLES.get(v.name, "") for v in m.dim_vars),
        range_roles=tuple(roles.get(v.name, GPU_ROLES.get(v.name, "")) for v in m.range_vars),
        rt_roles=tuple(roles.get(v.name, "") for v in m.rt_vars),
    )
    return variables_json(m, names)


def add_variables(doc: dict[str, Any], view: Any, variables: list) -> None:
    """``threads`` JSON with each map's variables (``--names roles``)."""
    for entry, m in zip(doc.get("outputs", ()), view.threads.outputs, strict=False):
        if m is not None:
            entry["variables"] = _variables(m, {})
    for k, operand in enumerate(doc.get("operands", ())):
        for item, found in zip(operand.get("maps", ()), variables[k], strict=False):
            item["variables"] = found


#: what XLA's GPU variables stand for
GPU_ROLES = {
    "th_x": "thread id x",
    "th_y": "thread id y",
    "th_z": "thread id z",
    "bl_x": "block id x",
    "bl_y": "block id y",
    "bl_z": "block id z",
    "chunk_id": "chunk of the loop",
    "unroll_id": "unrolled iteration",
    "vector_elem": "vector element",
}


__all__ = ["GPU_ROLES", "add_variables", "name_thread_view"]
