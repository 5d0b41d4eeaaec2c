"""The triage summary: one row per instruction that reads memory in the computations that run
(the entry, loop bodies and conditions weighted by their trip counts, conditional branches,
called computations: :mod:`.running`), and the totals an engineer reads first (as plain data;
the CLI draws it, JSON prints it as is).

A row gives, per operand, how much of it is read (distinct fraction, reads per element), how
sure hloidx is (exact / over-approximation / unknown / never read), how many distinct maps
and whether a runtime variable (a value read at run time, as by dynamic-slice) is involved.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from .analysis import InstructionAnalysis, ModuleAnalysis
from .ir import CALL_ATTRIBUTES, INDEXING_IRRELEVANT_ATTRIBUTES, Instruction, Shape
from .report import SCHEMA_VERSION
from .running import Place, TripCounts, running_computations
from .sharing import structure_key

#: ops that move no data of their own: parameters, constants, tuple plumbing, annotations
NO_MEMORY_READ = frozenset(
    {
        "parameter",
        "constant",
        "iota",
        "tuple",
        "get-tuple-element",
        "after-all",
        "bitcast",
        "add-dependency",
        "opt-barrier",
        "partition-id",
        "replica-id",
    }
)

SORT_KEYS = ("total", "reads", "distinct", "name", "size")


def _elements(shape: Shape) -> int:
    return (
        sum(leaf.num_elements() for leaf in shape.leaves())
        if shape.is_tuple
        else (shape.num_elements() if shape.is_array else 0)
    )


def _backend_config(instr: Instruction) -> dict[str, Any]:
    raw = instr.attributes.get("backend_config", "").strip()
    try:
        if raw.startswith('"'):
            raw = json.loads(raw)
        config = json.loads(raw) if raw else {}
    except (json.JSONDecodeError, TypeError):
        return {}
    return config if isinstance(config, dict) else {}


def triton_blocks(instr: Instruction) -> str | None:
    """The block sizes of a Triton fusion (``kind=kCustom``) from its backend_config, as text:
    ``tile 1x256`` for a block-level fusion, ``block_m=64 block_n=32 block_k=16 split_k=1`` for
    a Triton gemm; None for any other instruction."""
    if instr.opcode != "fusion":
        return None
    fusion = _backend_config(instr).get("fusion_backend_config", {})
    if not isinstance(fusion, dict):
        return None
    gemm = fusion.get("triton_gemm_config")
    if isinstance(gemm, dict) and gemm:
        keys = ("block_m", "block_n", "block_k", "split_k", "num_stages", "num_warps")
        return " ".join(f"{k}={gemm[k]}" for k in keys if k in gemm)
    block = fusion.get("block_level_fusion_config")
    if isinstance(block, dict):
        tiles = block.get("output_tiles")
        sizes = (
            [t.get("sizes", []) for t in tiles if isinstance(t, dict)]
            if isinstance(tiles, list)
            else [block.get("output_tile_sizes", [])]
        )
        text = ", ".join("x".join(str(s) for s in tile) for tile in sizes if tile)
        warps = block.get("num_warps")
        if text:
            return f"tile {text}" + (f" num_warps={warps}" if warps else "")
    return None


def _kind(instr: Instruction) -> str:
    if instr.opcode == "fusion":
        kind = instr.attributes.get("kind", "")
        fusion = _backend_config(instr).get("fusion_backend_config", {})
        backend = fusion.get("kind", "") if isinstance(fusion, dict) else ""
        return f"{kind} {backend}".strip()
    if instr.opcode == "custom-call":
        return instr.attributes.get("custom_call_target", "").strip().strip('"')
    return ""


def _operand_row(op: Any, status: str) -> dict[str, Any]:
    use = op.utilization
    return {
        "name": op.name,
        "shape": op.shape,
        "distinct": use.distinct if use is not None else None,
        "reads": use.reads if use is not None else None,
        "utilization_kind": use.kind if use is not None else None,
        "status": status,
        "maps": len([m for m in op.output_to_input if not m.is_known_empty]),
        "runtime_variables": bool(op.runtime_vars),
    }


def _row(ins: InstructionAnalysis, statuses: dict[int, str], place: Place) -> dict[str, Any]:
    instr = ins.instruction
    assert instr is not None
    operands = [_operand_row(op, statuses[id(op)]) for op in ins.operands]
    # a scalar read by every output element says nothing about traffic: rank > 0 only
    reads = [
        o["reads"]
        for o, op in zip(operands, instr.operands, strict=True)
        if o["reads"] is not None and op.shape.is_array and op.shape.rank > 0
    ]
    distinct = [o["distinct"] for o in operands if o["distinct"] is not None]
    # element reads of the whole instruction: reads per element times elements, per operand
    totals = [
        o["reads"] * _elements(op.shape)
        for o, op in zip(operands, instr.operands, strict=True)
        if o["reads"] is not None and op.shape.is_array and op.shape.rank > 0
    ]
    per_run = sum(totals) if totals else None
    return {
        "name": ins.name,
        "opcode": ins.opcode,
        "kind": _kind(instr),
        "shape": ins.shape,
        "elements": _elements(instr.shape),
        "blocks": triton_blocks(instr),
        "operands": operands,
        "max_reads": max(reads) if reads else None,
        "min_distinct": min(distinct) if distinct else None,
        # where it lives and how often it runs per run of the entry (None: unknown), and
        # its element reads over all those runs (those of one run when the count is unknown)
        "computation": place.computation.name,
        "where": place.describe(),
        "runs": place.runs,
        "runs_at_most": place.at_most,
        "total_reads_per_run": per_run,
        "total_reads": per_run * place.runs
        if per_run is not None and place.runs is not None
        else per_run,
        "total_reads_estimate": any(
            o["utilization_kind"] in ("estimate", "upper_bound") for o in operands
        ),
        "count": 1,
        "members": [ins.name],
    }


def _group_key(
    instr: Instruction, row: dict[str, Any], structures: dict[int, int], numbers: dict
) -> tuple[Any, ...]:
    """What makes two rows one: the same op on the same shapes with the same attributes (the
    called computations by structure, not by name; channel ids aside), and the same figures.

    A called computation's structure is numbered once (``structures`` by computation,
    ``numbers`` by structure), so a key holds small numbers, not whole computations."""
    called: tuple[Any, ...] = ()
    if not _CALLS.isdisjoint(instr.attributes):
        parts = []
        for k, comps in instr.called_computations.items():
            ids = []
            for c in comps:
                number = structures.get(id(c))
                if number is None:
                    number = numbers.setdefault(structure_key(c), len(numbers))
                    structures[id(c)] = number
                ids.append(number)
            parts.append((k, tuple(ids)))
        called = tuple(parts)
    custom = instr.opcode == "custom-call"
    attributes = tuple(
        sorted(
            (k, v)
            for k, v in instr.attributes.items()
            if k not in _NOT_GROUPING
            and (k not in INDEXING_IRRELEVANT_ATTRIBUTES or (custom and k == "backend_config"))
        )
    )
    figures = tuple(
        (o["shape"], o["distinct"], o["reads"], o["status"], o["maps"], o["runtime_variables"])
        for o in row["operands"]
    )
    # the shape as text: a string caches its hash, a Shape recomputes it
    where = (row["where"], row["runs"], row["runs_at_most"])
    return (instr.opcode, row["shape"], attributes, called, figures, where)


_CALLS = frozenset(CALL_ATTRIBUTES)
_NOT_GROUPING = frozenset({*CALL_ATTRIBUTES, "channel_id"})


def group_rows(rows: list[dict[str, Any]], by_name: dict[str, Instruction]) -> list[dict]:
    """One row per group of structurally equal instructions (the layers of a model), in the
    order of each group's first member: its figures, ``count`` and the ``members``' names."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    structures: dict[int, int] = {}
    numbers: dict[tuple[Any, ...], int] = {}
    for row in rows:
        key = _group_key(by_name[row["name"]], row, structures, numbers)
        first = groups.get(key)
        if first is None:
            groups[key] = row
        else:
            first["count"] += 1
            first["members"].append(row["name"])
    return list(groups.values())


def _sort(rows: list[dict[str, Any]], key: str) -> None:
    if key not in SORT_KEYS:
        raise ValueError(f"sort by one of {', '.join(SORT_KEYS)}, not {key!r}")
    if key == "name":
        rows.sort(key=lambda r: r["name"])
    elif key == "total":  # the most element reads (of all members) first; unknown ones last
        rows.sort(
            key=lambda r: (
                r["total_reads"] is None,
                -(r["total_reads"] or 0) * r["count"],
                r["name"],
            )
        )
    elif key == "size":
        rows.sort(key=lambda r: (-r["elements"], r["name"]))
    elif key == "reads":  # the most re-read operands first; unknown ones after them
        rows.sort(key=lambda r: (r["max_reads"] is None, -(r["max_reads"] or 0), r["name"]))
    else:  # the least utilised operands first
        rows.sort(key=lambda r: (r["min_distinct"] is None, r["min_distinct"] or 0, r["name"]))


def _unknown_sources(ins: InstructionAnalysis) -> str | None:
    """The op (or custom-call target) without a rule that made this instruction's operands
    UNDEFINED, when it is the instruction itself."""
    instr = ins.instruction
    if instr is None or not any(o.is_undefined for o in ins.operands):
        return None
    if not any("no output-to-input rule" in n or "has no rule" in n for n in ins.notes):
        return None
    return f"custom-call {_kind(instr)}" if instr.opcode == "custom-call" else instr.opcode


def summarize(
    analysis: ModuleAnalysis,
    sort: str = "total",
    group: bool = False,
    trip_counts: TripCounts | None = None,
) -> dict[str, Any]:
    """The summary document of an analysis: rows over the instructions that read memory in
    the computations that run (the entry, loop bodies and conditions, branches, calls: each
    row says where it lives, ``where``, and how often it runs, ``runs``, a loop's trip count
    from ``trip_counts``, unknown without), and totals over every analysed instruction.

    With ``group`` (as ``hloidx summary`` does unless told ``--no-group``), structurally equal
    instructions (the repeats of one layer) share one row with their ``count`` and ``members``;
    ``total`` sorts by their element reads together. Without it every row is one instruction
    (``count`` 1), as the HTML report and the end of ``hloidx maps`` list them."""
    module = next(
        (
            ins.instruction.computation.module
            for ins in analysis.instructions
            if ins.instruction is not None and ins.instruction.computation is not None
        ),
        None,
    )
    places = running_computations(module, trip_counts) if module is not None else {}
    entry = [
        (ins, places[id(ins.instruction.computation)])
        for ins in analysis.instructions
        if ins.instruction is not None and id(ins.instruction.computation) in places
    ]
    # each operand's status once: the rows and the totals both need it
    status_of: dict[int, str] = {}
    statuses: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    for ins in analysis.instructions:
        undefined = 0
        for op in ins.operands:
            status = op.status or "unknown"
            status_of[id(op)] = status
            statuses[status] += 1
            if status == "unknown" and op.is_undefined:  # status asked is_undefined first
                undefined += 1
            for v in op.verdicts:
                kind = getattr(v, "kind", v)
                verdicts[str(getattr(kind, "value", kind))] += 1
        if undefined:
            source = _unknown_sources(ins)
            if source is not None:
                unknown[source] += undefined
    rows = [
        _row(ins, status_of, place)
        for ins, place in entry
        if ins.operands and ins.opcode not in NO_MEMORY_READ
    ]
    instructions = len(rows)
    if group:
        by_name = {ins.name: ins.instruction for ins, _ in entry}
        rows = group_rows(rows, by_name)  # type: ignore[arg-type]
    _sort(rows, sort)
    opcodes = Counter(ins.opcode for ins in analysis.instructions)
    return {
        "schema_version": SCHEMA_VERSION,
        "module": analysis.module,
        "sort": sort,
        "grouped": group,
        "row_instructions": instructions,
        "computations": [
            {"name": p.computation.name, "where": p.describe(), "runs": p.runs}
            for p in places.values()
        ],
        "rows": rows,
        "totals": {
            "instructions": len(analysis.instructions),
            "by_opcode": dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0]))),
            "operands_by_status": dict(sorted(statuses.items())),
            "verdicts": {k: verdicts.get(k, 0) for k in ("proved", "exhaustive", "sampled")}
            | {"refuted": verdicts.get("refuted", 0)},
            "without_rule": dict(sorted(unknown.items(), key=lambda kv: (-kv[1], kv[0]))),
        },
    }
